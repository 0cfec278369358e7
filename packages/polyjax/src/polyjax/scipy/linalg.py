"""polyjax.scipy.linalg: SciPy's linear algebra on polyjax arrays, as ``jax.scipy.linalg``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.linalg``); this
module re-exports that public namespace unchanged.

Example:
  >>> import polyjax.scipy.linalg
  >>> polyjax.scipy.linalg.toeplitz(polyjax.numpy.array([1, 2]))
  Array([[1, 2],
         [2, 1]], dtype=int32)
"""

from polyjax_numpy.scipy import linalg as _linalg
from polyjax_numpy.scipy.linalg import *  # noqa: F403

__all__ = list(_linalg.__all__)
