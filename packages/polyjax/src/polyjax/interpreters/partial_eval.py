"""polyjax.interpreters.partial_eval, as in ``jax.interpreters.partial_eval``.

The public names of polyjax's own `polyjax_interpreters.partial_eval`, re-exported.
"""

from polyjax import _runtime  # noqa: F401  (every lax rule registered)
from polyjax_interpreters import partial_eval as _impl
from polyjax_interpreters.partial_eval import *  # noqa: F403

__all__ = list(_impl.__all__)
