"""The Cauchy distribution, as `scipy.stats.cauchy`.

With `z = (x - loc) / scale`: density `1 / (pi scale (1 + z^2))`. The
distribution function is `atan2(1, -z) / pi`, which keeps its relative
accuracy in the lower tail (where `1/2 + atan(z) / pi` cancels).

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import cauchy
  >>> cauchy.cdf(np.array([-1.0, 0.0, 1.0]))
  Array([0.25, 0.5 , 0.75], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import inexact_args, standardize, where_invalid_nan

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function, `-log(pi scale) - log1p(z^2)`.

    Args:
      x: where to evaluate.
      loc: the centre (median).
      scale: the half width at half maximum.
    """
    z, scale = standardize("cauchy.logpdf", x, loc, scale)
    return -jnp.log1p(z * z) - jnp.log(scale) - math.log(math.pi)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function, `atan2(1, -z) / pi`."""
    z, _ = standardize("cauchy.cdf", x, loc, scale)
    return jnp.arctan2(jnp.ones_like(z), -z) / math.pi


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function."""
    return jnp.log(cdf(x, loc, scale))


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function, `atan2(1, z) / pi`."""
    z, _ = standardize("cauchy.sf", x, loc, scale)
    return jnp.arctan2(jnp.ones_like(z), z) / math.pi


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    return jnp.log(sf(x, loc, scale))


def _quantile(q: Any, loc: Any, scale: Any, sign: float) -> Any:
    # tan(pi (q - 1/2)), with the poles at q = 0 and 1 exact (pi / 2 rounds to a finite tan).
    z = jnp.tan(math.pi * (q - 0.5))
    z = jnp.where(
        q == 0, jnp.full_like(z, -jnp.inf), jnp.where(q == 1, jnp.full_like(z, jnp.inf), z)
    )
    return where_invalid_nan((q < 0) | (q > 1), loc + sign * scale * z)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function, `loc + scale * tan(pi (q - 1/2))` (NaN outside `[0, 1]`)."""
    return _quantile(*inexact_args("cauchy.ppf", q, loc, scale), 1.0)


def isf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The inverse survival function, `loc - scale * tan(pi (q - 1/2))`."""
    return _quantile(*inexact_args("cauchy.isf", q, loc, scale), -1.0)
