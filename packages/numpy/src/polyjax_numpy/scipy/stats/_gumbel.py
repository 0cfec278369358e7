"""The standard right-skewed Gumbel functions of `z`, shared by `gumbel_r` and `gumbel_l`.

`gumbel_l` at `z` is `gumbel_r` at `-z` with the distribution and survival
functions exchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import inexact_args, standardize, where_invalid_nan


def logpdf(z: Any) -> Any:
    return -z - jnp.exp(-z)


def cdf(z: Any) -> Any:
    return jnp.exp(-jnp.exp(-z))


def logcdf(z: Any) -> Any:
    return -jnp.exp(-z)


def sf(z: Any) -> Any:
    return -jnp.expm1(-jnp.exp(-z))


def logsf(z: Any) -> Any:
    return jnp.log(sf(z))


def isf(q: Any) -> Any:
    """The `z` with `sf(z) = q`."""
    return -jnp.log(-jnp.log1p(-q))


def ppf(q: Any) -> Any:
    """The `z` with `cdf(z) = q`."""
    return -jnp.log(-jnp.log(q))


def side(name: str, *, left: bool) -> tuple[Callable[..., Any], ...]:
    """The public functions of the module ``name`` (``gumbel_r``, or ``gumbel_l``
    when ``left``): ``logpdf, pdf, cdf, logcdf, sf, logsf, ppf``."""
    # gumbel_l's distribution function is gumbel_r's survival function at -z.
    lower, log_lower, upper, log_upper = (
        (sf, logsf, cdf, logcdf) if left else (cdf, logcdf, sf, logsf)
    )

    def standard(fname: str, x: ArrayLike, loc: ArrayLike, scale: ArrayLike) -> tuple[Any, Any]:
        z, scale = standardize(f"{name}.{fname}", x, loc, scale)
        return (-z if left else z), scale

    def _logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """Log of the probability density function.

        Args:
          x: where to evaluate.
          loc: the mode.
          scale: the scale.
        """
        z, scale = standard("logpdf", x, loc, scale)
        return logpdf(z) - jnp.log(scale)

    def _pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """The probability density function, `exp(logpdf(x, loc, scale))`."""
        return jnp.exp(_logpdf(x, loc, scale))

    def _cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """The cumulative distribution function."""
        return lower(standard("cdf", x, loc, scale)[0])

    def _logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """Log of the cumulative distribution function."""
        return log_lower(standard("logcdf", x, loc, scale)[0])

    def _sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """The survival function `1 - cdf(x)`."""
        return upper(standard("sf", x, loc, scale)[0])

    def _logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """Log of the survival function."""
        return log_upper(standard("logsf", x, loc, scale)[0])

    def _ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
        """The percent point function (quantile); NaN outside `[0, 1]`."""
        q, loc, scale = inexact_args(f"{name}.ppf", q, loc, scale)
        invalid = (q < 0) | (q > 1)
        return where_invalid_nan(invalid, loc - scale * isf(q) if left else loc + scale * ppf(q))

    functions = (_logpdf, _pdf, _cdf, _logcdf, _sf, _logsf, _ppf)
    for f in functions:
        f.__name__ = f.__qualname__ = f.__name__[1:]
        f.__module__ = f"polyjax_numpy.scipy.stats.{name}"
    return functions
