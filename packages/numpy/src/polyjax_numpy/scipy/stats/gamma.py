"""The gamma distribution with shape `a`, as `scipy.stats.gamma`.

With `z = (x - loc) / scale`: density `z^(a-1) exp(-z) / (Gamma(a) scale)` for
`z >= 0`; the distribution function is the regularized incomplete gamma
function `P(a, z)`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import gamma
  >>> gamma.cdf(np.array([1.0, 2.0]), 1.0)
  Array([0.6321205 , 0.86466485], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import gammainc, gammaincc, xlogy
from polyjax_numpy.scipy.stats._common import neg_inf_outside, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function (`-inf` below `loc`).

    Args:
      x: where to evaluate.
      a: the shape (positive).
      loc: the start of the support.
      scale: the scale (the mean is `loc + a scale`).
    """
    z, scale, a = standardize("gamma.logpdf", x, loc, scale, a)
    inside = z >= 0
    safe = jnp.where(inside, z, jnp.ones_like(z))
    return neg_inf_outside(inside, xlogy(a - 1, safe) - safe - lax.lgamma(a) - jnp.log(scale))


def pdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, a, loc, scale))`."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function `P(a, z)` (0 below `loc`)."""
    z, _, a = standardize("gamma.cdf", x, loc, scale, a)
    return gammainc(a, jnp.maximum(z, 0))


def logcdf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the cumulative distribution function."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function `Q(a, z) = 1 - P(a, z)`, accurate in the upper tail."""
    z, _, a = standardize("gamma.sf", x, loc, scale, a)
    return gammaincc(a, jnp.maximum(z, 0))


def logsf(x: ArrayLike, a: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the survival function."""
    return jnp.log(sf(x, a, loc, scale))
