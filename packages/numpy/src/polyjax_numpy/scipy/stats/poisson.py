"""The Poisson distribution with mean `mu`, as `scipy.stats.poisson`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import poisson
  >>> poisson.pmf(np.array([0, 1, 2]), 2.0)
  Array([0.13533522, 0.27067056, 0.2706705 ], dtype=float32, weak_type=True)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import gammaincc, xlogy
from polyjax_numpy.scipy.stats._common import discrete_args, is_whole, neg_inf_outside

__all__ = ["cdf", "logpmf", "pmf"]


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Log of the probability mass function, `k log(mu) - mu - log(k!)`.

    Args:
      k: where to evaluate (`-inf` at negative or non-integer `k - loc`).
      mu: the mean (non-negative).
      loc: shifts the support.
    """
    k, mu = discrete_args("poisson.logpmf", k, loc, mu)
    inside = (k >= 0) & is_whole(k)
    safe = jnp.where(inside, k, jnp.zeros_like(k))
    return neg_inf_outside(inside, xlogy(safe, mu) - mu - lax.lgamma(safe + 1))


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, mu, loc))`."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The cumulative distribution function `P(K <= k) = Q(floor(k) + 1, mu)` (0 for `k < 0`)."""
    k, mu = discrete_args("poisson.cdf", k, loc, mu)
    floor = jnp.floor(jnp.maximum(k, 0))
    return jnp.where(k < 0, jnp.zeros_like(k), gammaincc(floor + 1, mu))
