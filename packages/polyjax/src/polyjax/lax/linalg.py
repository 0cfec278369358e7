"""polyjax.lax.linalg: the linear-algebra primitives, as in ``jax.lax.linalg``.

Cholesky, QR, LU, eigen- and singular-value decompositions, triangular and
tridiagonal solves, run on CPU by jaxlib's LAPACK kernels. They live in
polyjax-numpy; this module re-exports its ``lax.linalg`` namespace unchanged,
so that ``import polyjax.lax.linalg`` works as ``import jax.lax.linalg`` does.

Example:
  >>> import numpy as np
  >>> import polyjax.lax.linalg as linalg
  >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
  Array([[2., 0.],
         [1., 2.]], dtype=float32)
"""

from polyjax_numpy.lax import linalg as _linalg
from polyjax_numpy.lax.linalg import *  # noqa: F403

__all__ = list(_linalg.__all__)
