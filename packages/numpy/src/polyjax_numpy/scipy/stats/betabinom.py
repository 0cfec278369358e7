"""The beta-binomial distribution, as `scipy.stats.betabinom`.

A binomial distribution of `n` trials whose success probability is drawn from
`beta(a, b)`: `P(K = k) = C(n, k) B(k + a, n - k + b) / B(a, b)`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import betabinom
  >>> betabinom.pmf(np.array([0, 1, 2]), 2, 1.0, 1.0)
  Array([0.3333328, 0.3333328, 0.3333328], dtype=float32, weak_type=True)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import betaln
from polyjax_numpy.scipy.stats._common import discrete_args, is_whole, neg_inf_outside

__all__ = ["logpmf", "pmf"]


def logpmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Log of the probability mass function.

    Args:
      k: the number of successes (`-inf` outside `0, 1, ..., n`).
      n: the number of trials.
      a, b: the shapes of the beta distribution of the success probability.
      loc: shifts the support.
    """
    k, n, a, b = discrete_args("betabinom.logpmf", k, loc, n, a, b)
    inside = (k >= 0) & (k <= n) & is_whole(k)
    safe = jnp.where(inside, k, jnp.zeros_like(k))
    log_comb = lax.lgamma(n + 1) - lax.lgamma(safe + 1) - lax.lgamma(n - safe + 1)
    value = log_comb + betaln(safe + a, n - safe + b) - betaln(a, b)
    return neg_inf_outside(inside, value)


def pmf(k: ArrayLike, n: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, n, a, b, loc))`."""
    return jnp.exp(logpmf(k, n, a, b, loc))
