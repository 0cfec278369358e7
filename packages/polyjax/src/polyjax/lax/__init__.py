"""polyjax.lax: the primitive operations of polyjax, as in ``jax.lax``.

Each function binds one primitive (``lax.sin(x)`` binds ``sin_p``) and accepts
arrays, tracers and Python scalars (weakly typed); the primitives themselves
are exported as ``<name>_p``. They live in polyjax-numpy; this module
re-exports its public ``lax`` namespace unchanged.

Example:
  >>> import numpy as np
  >>> import polyjax.lax as lax
  >>> lax.add(np.float32(1.0), 2.0)
  Array(3., dtype=float32)
"""

from polyjax_numpy import lax as _lax
from polyjax_numpy.lax import *  # noqa: F403

__all__ = list(_lax.__all__)

import importlib as _importlib  # noqa: E402

from polyjax._jax_deprecations import module_getattr as _module_getattr  # noqa: E402

# `lax.linalg` is this package's own submodule (same names), so that
# `polyjax.lax.linalg` is one module however it is reached. (Not `from polyjax.lax
# import linalg`: that would find the implementation's `linalg`, which the star
# import just bound here, and never load the submodule.)
linalg = _importlib.import_module(f"{__name__}.linalg")

__getattr__ = _module_getattr(__name__)  # JAX's deprecated names, with JAX's advice
