"""`polyjax.scipy.optimize`: unconstrained minimization, as `jax.scipy.optimize`.

`minimize(fun, x0, method="BFGS")` runs BFGS with a strong-Wolfe line search
entirely inside `lax.while_loop`, so it can be jitted (and vmapped over
starting points).

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.optimize import minimize
  >>> minimize(lambda x: (x ** 2).sum(), np.ones(3), method="BFGS").fun
  Array(0., dtype=float32)
"""

from polyjax_numpy.scipy.optimize._minimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
