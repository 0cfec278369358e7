"""The logistic distribution, as `scipy.stats.logistic`.

With `z = (x - loc) / scale`: `cdf = expit(z)`, density `expit(z) expit(-z) / scale`.
Log-probabilities are softplus forms, finite far in both tails.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import logistic
  >>> logistic.cdf(np.array([0.0, 2.0]))
  Array([0.5     , 0.880797], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import nn
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import expit, logit
from polyjax_numpy.scipy.stats._common import inexact_args, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function, `-softplus(z) - softplus(-z) - log(scale)`.

    Args:
      x: where to evaluate.
      loc: the centre (mean and median).
      scale: the scale (the variance is `pi^2 scale^2 / 3`).
    """
    z, scale = standardize("logistic.logpdf", x, loc, scale)
    return -nn.softplus(z) - nn.softplus(-z) - jnp.log(scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function, `expit(z)`."""
    z, _ = standardize("logistic.cdf", x, loc, scale)
    return expit(z)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function, `-softplus(-z)`."""
    z, _ = standardize("logistic.logcdf", x, loc, scale)
    return -nn.softplus(-z)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function, `expit(-z)`."""
    z, _ = standardize("logistic.sf", x, loc, scale)
    return expit(-z)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function, `-softplus(z)`."""
    z, _ = standardize("logistic.logsf", x, loc, scale)
    return -nn.softplus(z)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function, `loc + scale * logit(q)`."""
    q, loc, scale = inexact_args("logistic.ppf", q, loc, scale)
    return loc + scale * logit(q)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The inverse survival function, `loc - scale * logit(q)`."""
    q, loc, scale = inexact_args("logistic.isf", q, loc, scale)
    return loc - scale * logit(q)
