"""Rematerialization's policies and `checkpoint_name` (`checkpoint` itself is `polyjax.checkpoint`).

A policy answers, per equation, True/`Saveable` (keep the value for the
backward pass), False/`Recompute`, or `Offloadable(src, dst)` (keep it in
another memory: on the CPU backend the value is simply saved).
`print_saved_residuals(f, *args)` lists what reverse mode saves. JAX 0.10
removed ``ad_checkpoint.checkpoint`` and ``ad_checkpoint.remat``; here they
still work but warn (`DeprecationWarning`), pointing to `polyjax.checkpoint`.

Example:
  >>> import polyjax
  >>> from polyjax.ad_checkpoint import checkpoint_name
  >>> f = polyjax.checkpoint(lambda x: polyjax.lax.sin(checkpoint_name(x * 2.0, "h")))
"""

from polyjax import _runtime  # noqa: F401  (operators on traced values)
from polyjax._saved_residuals import print_saved_residuals, saved_residuals
from polyjax_interpreters.remat import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint_name,
    checkpoint_policies,
)

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",  # noqa: F822  (deprecated: given by __getattr__, with a warning)
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",  # noqa: F822  (deprecated: given by __getattr__, with a warning)
    "saved_residuals",
]

from polyjax._jax_deprecations import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # `checkpoint` and `remat` warn
