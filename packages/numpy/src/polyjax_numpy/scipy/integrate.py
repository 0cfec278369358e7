"""`polyjax.scipy.integrate`: `trapezoid`, as `jax.scipy.integrate`.

It is `polyjax.numpy.trapezoid`: the trapezoidal rule along an axis, with
sample points `x` or a uniform spacing `dx`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy import integrate
  >>> integrate.trapezoid(np.array([0.0, 1.0, 4.0]), x=np.array([0.0, 1.0, 2.0]))
  Array(3., dtype=float32)
"""

from polyjax_numpy.numpy import trapezoid

__all__ = ["trapezoid"]
