"""The geometric distribution (trials up to the first success), as `scipy.stats.geom`.

`P(K = k) = (1 - p)^(k - 1) p` for `k = 1, 2, ...`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import geom
  >>> geom.pmf(np.array([0, 1, 2]), 0.5)
  Array([0.  , 0.5 , 0.25], dtype=float32, weak_type=True)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import xlog1py
from polyjax_numpy.scipy.stats._common import discrete_args, is_whole, neg_inf_outside

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Log of the probability mass function, `(k - 1) log(1 - p) + log(p)` for `k >= 1`.

    Args:
      k: the trial of the first success (`-inf` unless a positive integer).
      p: the probability of success.
      loc: shifts the support.
    """
    k, p = discrete_args("geom.logpmf", k, loc, p)
    inside = (k >= 1) & is_whole(k)
    safe = jnp.where(inside, k, jnp.ones_like(k))
    return neg_inf_outside(inside, xlog1py(safe - 1, -p) + jnp.log(p))


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, p, loc))`."""
    return jnp.exp(logpmf(k, p, loc))
