"""polyjax.numpy: NumPy's API on polyjax arrays, as in ``jax.numpy``.

The functions live in polyjax-numpy (``polyjax_numpy.numpy``); this module
re-exports that public namespace unchanged.

Example:
  >>> import polyjax.numpy as jnp
  >>> jnp.sum(jnp.array([1.0, 2.0]) * 2)
  Array(6., dtype=float32)
"""

import sys as _sys

from polyjax_numpy import numpy as _jnp
from polyjax_numpy.numpy import *  # noqa: F403

# `import polyjax.numpy.linalg` (and `.fft`) finds the implementation modules, which
# are also `jnp.linalg` and `jnp.fft`.
for _name in ("fft", "linalg"):
    _sys.modules[f"{__name__}.{_name}"] = getattr(_jnp, _name)
del _name

__all__ = list(_jnp.__all__)

from polyjax._jax_deprecations import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # JAX's deprecated names, with JAX's advice
