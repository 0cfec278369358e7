"""The binomial distribution of `n` trials with success probability `p`, as `scipy.stats.binom`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import binom
  >>> binom.pmf(np.array([0, 1, 2]), 2, 0.5)
  Array([0.24999988, 0.5000001 , 0.24999988], dtype=float32, weak_type=True)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import xlog1py, xlogy
from polyjax_numpy.scipy.stats._common import discrete_args, is_whole, neg_inf_outside

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Log of the probability mass function, `log C(n, k) + k log(p) + (n - k) log(1 - p)`.

    Args:
      k: the number of successes (`-inf` outside `0, 1, ..., n`).
      n: the number of trials.
      p: the probability of success.
      loc: shifts the support.
    """
    k, n, p = discrete_args("binom.logpmf", k, loc, n, p)
    inside = (k >= 0) & (k <= n) & is_whole(k)
    safe = jnp.where(inside, k, jnp.zeros_like(k))
    log_comb = lax.lgamma(n + 1) - lax.lgamma(safe + 1) - lax.lgamma(n - safe + 1)
    return neg_inf_outside(inside, log_comb + xlogy(safe, p) + xlog1py(n - safe, -p))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, n, p, loc))`."""
    return jnp.exp(logpmf(k, n, p, loc))
