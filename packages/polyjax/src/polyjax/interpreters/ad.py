"""polyjax.interpreters.ad, as in ``jax.interpreters.ad``.

The public names of polyjax's own `polyjax_interpreters.ad`, re-exported.
"""

from polyjax import _runtime  # noqa: F401  (every lax rule registered)
from polyjax_interpreters import ad as _impl
from polyjax_interpreters.ad import *  # noqa: F403

__all__ = list(_impl.__all__)
