"""polyjax.interpreters.batching, as in ``jax.interpreters.batching``.

The public names of polyjax's own `polyjax_interpreters.batching`, re-exported.
"""

from polyjax import _runtime  # noqa: F401  (every lax rule registered)
from polyjax_interpreters import batching as _impl
from polyjax_interpreters.batching import *  # noqa: F403

__all__ = list(_impl.__all__)
