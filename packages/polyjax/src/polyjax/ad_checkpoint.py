"""Rematerialization: `checkpoint` (alias `remat`), its policies, and `checkpoint_name`.

Example:
  >>> import polyjax
  >>> from polyjax.ad_checkpoint import checkpoint, checkpoint_name
  >>> f = checkpoint(lambda x: polyjax.lax.sin(checkpoint_name(x * 2.0, "h")))
"""

from polyjax import _runtime  # noqa: F401  (operators on traced values)
from polyjax_interpreters.remat import checkpoint, checkpoint_name, checkpoint_policies, remat

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "remat"]
