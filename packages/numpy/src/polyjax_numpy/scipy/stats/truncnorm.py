"""The normal distribution truncated to `[a, b]` (in standard units), as `scipy.stats.truncnorm`.

With `z = (x - loc) / scale`, the density is the standard normal density
divided by the mass `ndtr(b) - ndtr(a)` on `a <= z <= b`. Masses are taken in
log space from the tail where they are largest, so that a truncation far in
either tail (`a = 10`, say) keeps its precision.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import truncnorm
  >>> truncnorm.cdf(np.array([-1.0, 0.0, 1.0]), -1.0, 1.0)
  Array([0. , 0.5, 1. ], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import log_ndtr, ndtr
from polyjax_numpy.scipy.stats._common import neg_inf_outside, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _log1mexp(d: Any) -> Any:
    """`log(1 - exp(d))` for `d <= 0`, accurate near 0 and far below it."""
    near = d > -math.log(2.0)
    d_near = jnp.where(near, d, -jnp.ones_like(d))
    d_far = jnp.where(near, -jnp.ones_like(d), d)
    return jnp.where(near, jnp.log(-jnp.expm1(d_near)), jnp.log1p(-jnp.exp(d_far)))


def _log_mass(lo: Any, hi: Any) -> Any:
    """`log(ndtr(hi) - ndtr(lo))` for `lo <= hi`, from the tail where the mass lies."""
    # Both ends below 0: the lower tail; both above: the mirrored upper tail.
    left = hi <= 0
    right = lo >= 0
    lo_l, hi_l = jnp.where(left, lo, -jnp.ones_like(lo)), jnp.where(left, hi, jnp.zeros_like(hi))
    lo_r, hi_r = jnp.where(right, lo, jnp.zeros_like(lo)), jnp.where(right, hi, jnp.ones_like(hi))
    log_hi, log_lo = log_ndtr(hi_l), log_ndtr(-lo_r)
    tail_left = log_hi + _log1mexp(log_ndtr(lo_l) - log_hi)
    tail_right = log_lo + _log1mexp(log_ndtr(-hi_r) - log_lo)
    # Straddling 0: the mass is at least the part near 0, no cancellation.
    middle = jnp.log1p(-ndtr(lo) - ndtr(-hi))
    return jnp.where(left, tail_left, jnp.where(right, tail_right, middle))


def logpdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the probability density function (`-inf` outside the truncation).

    Args:
      x: where to evaluate.
      a, b: the truncation bounds, in units of `scale` from `loc`.
      loc: the mean of the normal distribution before truncation.
      scale: its standard deviation.
    """
    z, scale, a, b = standardize("truncnorm.logpdf", x, loc, scale, a, b)
    value = -0.5 * z * z - _HALF_LOG_2PI - jnp.log(scale) - _log_mass(a, b)
    return neg_inf_outside((z >= a) & (z <= b), value)


def pdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, a, b, loc, scale))`."""
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the cumulative distribution function (`-inf` below `a`, 0 above `b`)."""
    z, _, a, b = standardize("truncnorm.logcdf", x, loc, scale, a, b)
    value = _log_mass(a, jnp.clip(z, a, b)) - _log_mass(a, b)
    return jnp.where(z >= b, jnp.zeros_like(z), neg_inf_outside(z >= a, value))


def cdf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function, `exp(logcdf(x, a, b, loc, scale))`."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(
    x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1
) -> Any:
    """Log of the survival function (0 below `a`, `-inf` above `b`)."""
    z, _, a, b = standardize("truncnorm.logsf", x, loc, scale, a, b)
    value = _log_mass(jnp.clip(z, a, b), b) - _log_mass(a, b)
    return jnp.where(z <= a, jnp.zeros_like(z), neg_inf_outside(z <= b, value))


def sf(x: ArrayLike, a: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The survival function, `exp(logsf(x, a, b, loc, scale))`."""
    return jnp.exp(logsf(x, a, b, loc, scale))
