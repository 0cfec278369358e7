"""The left-skewed (minimum) Gumbel distribution, as `scipy.stats.gumbel_l`.

With `z = (x - loc) / scale`: density `exp(z - exp(z)) / scale`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import gumbel_l
  >>> gumbel_l.cdf(np.array([-1.0, 0.0]))
  Array([0.30779937, 0.63212055], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats import _gumbel as _g
from polyjax_numpy.scipy.stats._common import inexact_args, standardize, where_invalid_nan

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function.

    Args:
      x: where to evaluate.
      loc: the mode.
      scale: the scale.
    """
    z, scale = standardize("gumbel_l.logpdf", x, loc, scale)
    return _g.logpdf(-z) - jnp.log(scale)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function."""
    z, _ = standardize("gumbel_l.cdf", x, loc, scale)
    return _g.sf(-z)


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function."""
    z, _ = standardize("gumbel_l.logcdf", x, loc, scale)
    return _g.logsf(-z)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function `1 - cdf(x)`."""
    z, _ = standardize("gumbel_l.sf", x, loc, scale)
    return _g.cdf(-z)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    z, _ = standardize("gumbel_l.logsf", x, loc, scale)
    return _g.logcdf(-z)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function (quantile); NaN outside `[0, 1]`."""
    q, loc, scale = inexact_args("gumbel_l.ppf", q, loc, scale)
    return where_invalid_nan((q < 0) | (q > 1), loc - scale * _g.isf(q))
