"""The negative binomial distribution, as `scipy.stats.nbinom`.

The number of failures before the `n`-th success: `P(K = k) = C(k + n - 1, k)
p^n (1 - p)^k` (`n` may be any positive real).

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import nbinom
  >>> nbinom.pmf(np.array([0, 1, 2]), 2, 0.5)
  Array([0.24999988, 0.25000006, 0.18750012], dtype=float32, weak_type=True)
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
    """Log of the probability mass function.

    Args:
      k: the number of failures (`-inf` unless a non-negative integer).
      n: the number of successes (positive).
      p: the probability of success.
      loc: shifts the support.
    """
    k, n, p = discrete_args("nbinom.logpmf", k, loc, n, p)
    inside = (k >= 0) & is_whole(k)
    safe = jnp.where(inside, k, jnp.zeros_like(k))
    log_comb = lax.lgamma(n + safe) - lax.lgamma(safe + 1) - lax.lgamma(n)
    return neg_inf_outside(inside, log_comb + xlogy(n, p) + xlog1py(safe, -p))


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, n, p, loc))`."""
    return jnp.exp(logpmf(k, n, p, loc))
