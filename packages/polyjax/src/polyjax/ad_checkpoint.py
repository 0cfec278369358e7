"""Rematerialization: `checkpoint` (alias `remat`), its policies, and `checkpoint_name`.

A policy answers, per equation, True/`Saveable` (keep the value for the
backward pass), False/`Recompute`, or `Offloadable(src, dst)` (keep it in
another memory: on the CPU backend the value is simply saved).
`print_saved_residuals(f, *args)` lists what reverse mode saves.

Example:
  >>> import polyjax
  >>> from polyjax.ad_checkpoint import checkpoint, checkpoint_name
  >>> f = checkpoint(lambda x: polyjax.lax.sin(checkpoint_name(x * 2.0, "h")))
"""

from polyjax import _runtime  # noqa: F401  (operators on traced values)
from polyjax._saved_residuals import print_saved_residuals, saved_residuals
from polyjax_interpreters.remat import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    remat,
)

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
]
