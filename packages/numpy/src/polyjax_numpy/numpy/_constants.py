"""The constants of `jnp`: `pi`, `e`, `euler_gamma`, `inf`, `nan` and `newaxis`.

They are Python floats (and `None` for `newaxis`), as in JAX and NumPy, so they
are weakly typed in arithmetic: `x * jnp.pi` keeps the dtype of `x`.
"""

from __future__ import annotations

import numpy as np

pi: float = float(np.pi)
e: float = float(np.e)
euler_gamma: float = float(np.euler_gamma)
inf: float = float(np.inf)
nan: float = float(np.nan)
newaxis: None = None
