"""The exponential distribution on `[loc, inf)` with mean `loc + scale`, as `scipy.stats.expon`.

With `z = (x - loc) / scale`: density `exp(-z) / scale` for `z >= 0`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import expon
  >>> expon.logpdf(np.array([-1.0, 0.0, 2.0]))
  Array([-inf,  -0.,  -2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import (
    inexact_args,
    neg_inf_outside,
    standardize,
    where_invalid_nan,
)

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function: `-z - log(scale)` for `z >= 0`, else `-inf`.

    Args:
      x: where to evaluate.
      loc: the start of the support.
      scale: the mean of `x - loc`.
    """
    z, scale = standardize("expon.logpdf", x, loc, scale)
    return neg_inf_outside(z >= 0, -z - jnp.log(scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function `1 - exp(-z)` (0 below `loc`)."""
    z, _ = standardize("expon.cdf", x, loc, scale)
    return -jnp.expm1(-jnp.maximum(z, 0))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function."""
    z, _ = standardize("expon.logcdf", x, loc, scale)
    safe = jnp.where(z > 0, z, jnp.ones_like(z))
    return neg_inf_outside(z > 0, jnp.log(-jnp.expm1(-safe)))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function `exp(-z)` (1 below `loc`)."""
    z, _ = standardize("expon.sf", x, loc, scale)
    return jnp.exp(-jnp.maximum(z, 0))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function, `-z` (0 below `loc`)."""
    z, _ = standardize("expon.logsf", x, loc, scale)
    return -jnp.maximum(z, 0)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function `loc - scale * log(1 - q)` (NaN outside `[0, 1]`)."""
    q, loc, scale = inexact_args("expon.ppf", q, loc, scale)
    return where_invalid_nan((q < 0) | (q > 1), loc - scale * jnp.log1p(-q))
