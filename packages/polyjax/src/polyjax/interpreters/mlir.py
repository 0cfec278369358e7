"""polyjax.interpreters.mlir, as in ``jax.interpreters.mlir``.

The public names of polyjax's own `polyjax_interpreters.mlir`, re-exported.
"""

from polyjax import _runtime  # noqa: F401  (every lax rule registered)
from polyjax_interpreters import mlir as _impl
from polyjax_interpreters.mlir import *  # noqa: F403

__all__ = list(_impl.__all__)
