"""The Bernoulli distribution with success probability `p`, as `scipy.stats.bernoulli`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import bernoulli
  >>> bernoulli.pmf(np.array([0, 1, 2]), 0.25)
  Array([0.75, 0.25, 0.  ], dtype=float32, weak_type=True)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import xlog1py, xlogy
from polyjax_numpy.scipy.stats._common import (
    discrete_args,
    inexact_args,
    neg_inf_outside,
    where_invalid_nan,
)

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """Log of the probability mass function: `log(1 - p)` at 0, `log(p)` at 1, else `-inf`.

    Args:
      k: where to evaluate.
      p: the probability of 1.
      loc: shifts the support.
    """
    k, p = discrete_args("bernoulli.logpmf", k, loc, p)
    inside = (k == 0) | (k == 1)
    return neg_inf_outside(inside, xlogy(k, p) + xlog1py(1 - k, -p))


def pmf(k: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Any:
    """The probability mass function, `exp(logpmf(k, p, loc))`."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: ArrayLike, p: ArrayLike) -> Any:
    """The cumulative distribution function: 0 below 0, `1 - p` on `[0, 1)`, 1 from 1 on."""
    k, p = inexact_args("bernoulli.cdf", k, p)
    out = jnp.where(k < 0, jnp.zeros_like(k), jnp.where(k < 1, 1 - p, jnp.ones_like(k)))
    return where_invalid_nan((p < 0) | (p > 1), out)


def ppf(q: ArrayLike, p: ArrayLike) -> Any:
    """The percent point function: the least `k` with `cdf(k) >= q`.

    As in SciPy: -1 at `q = 0`, 0 up to `q = 1 - p`, then 1; NaN outside `[0, 1]`.
    """
    q, p = inexact_args("bernoulli.ppf", q, p)
    out = jnp.where(q <= 1 - p, jnp.zeros_like(q), jnp.ones_like(q))
    out = jnp.where(q == 0, -jnp.ones_like(q), out)
    return where_invalid_nan((q < 0) | (q > 1) | (p < 0) | (p > 1), out)
