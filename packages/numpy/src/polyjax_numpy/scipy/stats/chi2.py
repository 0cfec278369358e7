"""The chi-squared distribution with `df` degrees of freedom, as `scipy.stats.chi2`.

`chi2(df, loc, scale)` is `gamma(df / 2, loc, 2 scale)`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import chi2
  >>> chi2.cdf(np.array([1.0, 4.0]), 2.0)
  Array([0.39346936, 0.86466485], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy.scipy.stats import gamma
from polyjax_numpy.scipy.stats._common import inexact_args

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _as_gamma(name: str, x: Any, df: Any, loc: Any, scale: Any) -> list[Any]:
    x, df, loc, scale = inexact_args(name, x, df, loc, scale)
    return [x, 0.5 * df, loc, 2 * scale]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function.

    Args:
      x: where to evaluate.
      df: the degrees of freedom (positive).
      loc: the start of the support.
      scale: the scale.
    """
    return gamma.logpdf(*_as_gamma("chi2.logpdf", x, df, loc, scale))


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function."""
    return gamma.pdf(*_as_gamma("chi2.pdf", x, df, loc, scale))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function."""
    return gamma.cdf(*_as_gamma("chi2.cdf", x, df, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function."""
    return gamma.logcdf(*_as_gamma("chi2.logcdf", x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function."""
    return gamma.sf(*_as_gamma("chi2.sf", x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    return gamma.logsf(*_as_gamma("chi2.logsf", x, df, loc, scale))
