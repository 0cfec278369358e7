"""polyjax.scipy.optimize: unconstrained minimization, as ``jax.scipy.optimize``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.optimize``); this
module re-exports that public namespace unchanged.

Example:
  >>> import polyjax.scipy.optimize
  >>> f = lambda x: ((x - 1.0) ** 2).sum()
  >>> polyjax.scipy.optimize.minimize(f, polyjax.numpy.zeros(2), method="BFGS").x
  Array([1., 1.], dtype=float32)
"""

from polyjax_numpy.scipy import optimize as _optimize
from polyjax_numpy.scipy.optimize import *  # noqa: F403

__all__ = list(_optimize.__all__)
