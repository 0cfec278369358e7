"""The normal distribution `N(loc, scale^2)`, as `scipy.stats.norm`.

Every function is elementwise over its broadcast arguments and promotes them
to one inexact dtype. The tails keep their relative accuracy: `logcdf` and
`logsf` use `log_ndtr`, and `ppf`/`isf` use `ndtri`, whose value at `q` is
exact in both tails.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import norm
  >>> norm.logpdf(np.array([0.0, 1.0]))
  Array([-0.9189385, -1.4189385], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import log_ndtr, ndtr, ndtri
from polyjax_numpy.scipy.stats._common import inexact_args, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function.

    Args:
      x: where to evaluate.
      loc: the mean.
      scale: the standard deviation.

    Returns:
      `-((x - loc) / scale)^2 / 2 - log(scale) - log(2 pi) / 2`.
    """
    z, scale = standardize("norm.logpdf", x, loc, scale)
    return -0.5 * z * z - jnp.log(scale) - _HALF_LOG_2PI


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function `P(X <= x)`."""
    z, _ = standardize("norm.cdf", x, loc, scale)
    return ndtr(z)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function, accurate far in the lower tail."""
    z, _ = standardize("norm.logcdf", x, loc, scale)
    return log_ndtr(z)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function `P(X > x) = 1 - cdf(x)`, accurate in the upper tail."""
    z, _ = standardize("norm.sf", x, loc, scale)
    return ndtr(-z)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    z, _ = standardize("norm.logsf", x, loc, scale)
    return log_ndtr(-z)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function (quantile), the inverse of `cdf`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy.stats import norm
      >>> norm.ppf(np.array([0.5, 0.975]), 1.0, 2.0)
      Array([1.       , 4.9199286], dtype=float32)
    """
    q, loc, scale = inexact_args("norm.ppf", q, loc, scale)
    return loc + scale * ndtri(q)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The inverse survival function, the `x` with `sf(x) = q`."""
    q, loc, scale = inexact_args("norm.isf", q, loc, scale)
    return loc - scale * ndtri(q)
