"""polyjax.scipy.special: SciPy's special functions on polyjax arrays, as ``jax.scipy.special``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.special``); this
module re-exports that public namespace unchanged.

Example:
  >>> import polyjax.scipy.special
  >>> polyjax.scipy.special.gammaln(polyjax.numpy.array([0.5, 4.0]))
  Array([0.5723648, 1.7917603], dtype=float32)
"""

from polyjax_numpy.scipy import special as _special
from polyjax_numpy.scipy.special import *  # noqa: F403

__all__ = list(_special.__all__)

from polyjax._jax_deprecations import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # JAX's deprecated names, with JAX's advice
