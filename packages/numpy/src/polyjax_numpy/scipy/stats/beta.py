"""The beta distribution on `[loc, loc + scale]`, as `scipy.stats.beta`.

With `z = (x - loc) / scale`: density `z^(a-1) (1-z)^(b-1) / (B(a, b) scale)`
on `[0, 1]`; the distribution function is `betainc(a, b, z)`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import beta
  >>> beta.pdf(np.array([0.25, 0.5]), 2.0, 2.0)
  Array([1.125001 , 1.5000013], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import betainc, betaln, xlog1py, xlogy
from polyjax_numpy.scipy.stats._common import neg_inf_outside, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the probability density function (`-inf` outside the support).

    Args:
      x: where to evaluate.
      a, b: the shapes (positive).
      loc: the lower end of the support.
      scale: its width.
    """
    z, scale, a, b = standardize("beta.logpdf", x, loc, scale, a, b)
    inside = (z >= 0) & (z <= 1)
    safe = jnp.where(inside, z, jnp.full_like(z, 0.5))
    value = xlogy(a - 1, safe) + xlog1py(b - 1, -safe) - betaln(a, b) - jnp.log(scale)
    return neg_inf_outside(inside, value)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, a, b, loc, scale))`."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function `I_z(a, b)` (0 below, 1 above the support)."""
    z, _, a, b = standardize("beta.cdf", x, loc, scale, a, b)
    return betainc(a, b, jnp.clip(z, 0, 1))


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the cumulative distribution function."""
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function `I_{1-z}(b, a) = 1 - I_z(a, b)`, accurate in the upper tail."""
    z, _, a, b = standardize("beta.sf", x, loc, scale, a, b)
    return betainc(b, a, 1 - jnp.clip(z, 0, 1))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the survival function."""
    return jnp.log(sf(x, a, b, loc, scale))
