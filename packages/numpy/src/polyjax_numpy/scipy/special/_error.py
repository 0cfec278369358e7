"""The error function family and the standard normal distribution function.

`erf`, `erfc` and `erfinv` are lax primitives. The rest are built so that the
tails keep their relative accuracy:

- `ndtr(x)` takes `erfc` of `|x| / sqrt(2)` away from zero, so `ndtr(-10)` is a
  tiny number and not `1 - 1`;
- `log_ndtr(x)` is `log1p(-ndtr(-x))` for positive `x` (so that values
  near 0 keep their relative precision), `log(ndtr(x))` down to JAX's lower
  threshold (-20 in float64, -10 otherwise), and below it the asymptotic
  series `log(phi(x) / -x) + log(1 + sum_n (-1)^n (2n-1)!! / x^(2n))`;
- `ndtri(p)` is `sqrt(2) erfinv(2p - 1)` near the median; in the tails it
  starts from the rational approximation 26.2.23 of Abramowitz and Stegun
  (error below 5e-4) and takes Newton steps on `log_ndtr(x) = log(p)`, whose
  slope is the well-scaled ratio `phi(x) / ndtr(x)`;
- `erfcx(x) = exp(x^2) erfc(x)` uses Laplace's continued fraction from `x = 2`
  on, where `erfc` alone would underflow.

`ndtri`, `log_ndtr` and `erfcx` have custom JVPs: their derivatives have
closed forms in terms of their values, valid for every order.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.special._common import inexact_args

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _is_double(x: Any) -> bool:
    return _u.dtype(x) == np.float64


def erf(x: ArrayLike) -> Any:
    """The error function `erf(x) = 2 / sqrt(pi) * integral_0^x exp(-t^2) dt`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.erf(np.array([0.0, 1.0]))
      Array([0.        , 0.84270084], dtype=float32)
    """
    (x,) = inexact_args("erf", x)
    return lax.erf(x)


def erfc(x: ArrayLike) -> Any:
    """The complementary error function `erfc(x) = 1 - erf(x)`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.erfc(np.array([0.0, 1.0]))
      Array([1.        , 0.15729924], dtype=float32)
    """
    (x,) = inexact_args("erfc", x)
    return lax.erfc(x)


def erfinv(x: ArrayLike) -> Any:
    """The inverse of `erf` on `(-1, 1)`, elementwise (`+-inf` at `+-1`, NaN outside).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.erfinv(np.array([0.0, 0.5]))
      Array([0.        , 0.47693628], dtype=float32)
    """
    (x,) = inexact_args("erfinv", x)
    return lax.erf_inv(x)


# ---------------------------------------------------------------------------
# erfcx


_ERFCX_SWITCH = 2.0


@custom_jvp
def _erfcx(x: Any) -> Any:
    near = x < _ERFCX_SWITCH
    xs = jnp.where(near, jnp.full_like(x, _ERFCX_SWITCH), x)
    # Laplace's continued fraction erfcx(x) = 1 / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + ...))),
    # evaluated from the bottom. From x = 2 on, 50 terms reach float64 precision and 20 float32's.
    terms = 50 if _is_double(x) else 20
    t = xs
    for k in range(terms, 0, -1):
        t = xs + (k / 2) / t
    far = 1 / (math.sqrt(math.pi) * t)
    xn = jnp.where(near, x, jnp.zeros_like(x))
    return jnp.where(near, jnp.exp(xn * xn) * lax.erfc(xn), far)


@_erfcx.defjvp
def _erfcx_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    y = _erfcx(x)
    return y, (2 * x * y - 2 / math.sqrt(math.pi)) * t


def erfcx(x: ArrayLike) -> Any:
    """The scaled complementary error function `exp(x^2) erfc(x)`, elementwise.

    Finite for large positive `x` (where `erfc` underflows): it decays like
    `1 / (x sqrt(pi))`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.erfcx(np.array([0.0, 10.0]))
      Array([1.        , 0.05614099], dtype=float32)
    """
    (x,) = inexact_args("erfcx", x)
    return _erfcx(x)


# ---------------------------------------------------------------------------
# The normal distribution function and its logarithm


def ndtr(x: ArrayLike) -> Any:
    """The standard normal cumulative distribution function, elementwise.

    `ndtr(x) = 1 / sqrt(2 pi) * integral_{-inf}^x exp(-t^2 / 2) dt`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.ndtr(np.array([0.0, -10.0]))
      Array([5.000000e-01, 7.619853e-24], dtype=float32)
    """
    (x,) = inexact_args("ndtr", x)
    return _ndtr(x)


def _ndtr(x: Any) -> Any:
    z = x / _SQRT2
    middle = 0.5 + 0.5 * lax.erf(z)
    lower = 0.5 * lax.erfc(-z)
    upper = 1 - 0.5 * lax.erfc(z)
    return jnp.where(jnp.abs(z) < 1 / _SQRT2, middle, jnp.where(z > 0, upper, lower))


def _log_ndtr_lower(x: Any) -> float:
    return -20.0 if _is_double(x) else -10.0


def _asymptotic_sum(x: Any, series_order: int) -> Any:
    """`1 + sum_{n=1}^{N} (-1)^n (2n-1)!! / x^(2n)`: the series of `-x ndtr(x) / phi(x)`."""
    inv_x2 = 1 / (x * x)
    total, term = jnp.ones_like(x), jnp.ones_like(x)
    for n in range(1, series_order + 1):
        term = term * (-(2 * n - 1)) * inv_x2
        total = total + term
    return total


def _log_ndtr_impl(x: Any, series_order: int) -> Any:
    lower = _log_ndtr_lower(x)
    in_lower = x <= lower
    in_upper = x > 0
    x_low = jnp.where(in_lower, x, jnp.full_like(x, lower))
    x_mid = jnp.where(in_lower | in_upper, jnp.zeros_like(x), x)
    x_up = jnp.where(in_upper, x, jnp.zeros_like(x))
    asymptotic = (
        -0.5 * x_low * x_low
        - jnp.log(-x_low)
        - _HALF_LOG_2PI
        + jnp.log(_asymptotic_sum(x_low, series_order))
    )
    middle = jnp.log(_ndtr(x_mid))
    high = jnp.log1p(-_ndtr(-x_up))
    return jnp.where(in_lower, asymptotic, jnp.where(in_upper, high, middle))


def _mills_ratio(x: Any, log_ndtr_x: Any, series_order: int) -> Any:
    """`phi(x) / ndtr(x)`: the derivative of `log_ndtr` at `x`."""
    lower = _log_ndtr_lower(x)
    in_lower = x <= lower
    x_low = jnp.where(in_lower, x, jnp.full_like(x, lower))
    tail = -x_low / _asymptotic_sum(x_low, series_order)
    x_rest = jnp.where(in_lower, jnp.zeros_like(x), x)
    log_rest = jnp.where(in_lower, jnp.zeros_like(x), log_ndtr_x)
    rest = jnp.exp(-0.5 * x_rest * x_rest - _HALF_LOG_2PI - log_rest)
    return jnp.where(in_lower, tail, rest)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _log_ndtr_custom(series_order: int, x: Any) -> Any:
    return _log_ndtr_impl(x, series_order)


@_log_ndtr_custom.defjvp
def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    y = _log_ndtr_custom(series_order, x)
    return y, _mills_ratio(x, y, series_order) * t


def log_ndtr(x: ArrayLike, series_order: int = 3) -> Any:
    """Logarithm of the standard normal distribution function, accurate in both tails.

    Args:
      x: real array-like.
      series_order: how many terms of the asymptotic series to use in the lower
        tail (below -20 in float64, -10 otherwise); a Python int in `[0, 30]`.

    Returns:
      `log(ndtr(x))`, elementwise.

    Raises:
      TypeError: `series_order` is not an integer.
      ValueError: `series_order` is outside `[0, 30]`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.log_ndtr(np.array([0.0, -20.0]))
      Array([  -0.6931472, -203.91716  ], dtype=float32)
    """
    if isinstance(series_order, bool) or not isinstance(series_order, int | np.integer):
        raise TypeError(f"log_ndtr: series_order must be a Python integer, got {series_order!r}.")
    series_order = operator.index(series_order)
    if not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be in [0, 30], got {series_order}.")
    (x,) = inexact_args("log_ndtr", x)
    return _log_ndtr_custom(series_order, x)


# ---------------------------------------------------------------------------
# ndtri

# Abramowitz and Stegun 26.2.23: the upper-tail quantile for probability q is
# t - (c0 + c1 t + c2 t^2) / (1 + d1 t + d2 t^2 + d3 t^3), t = sqrt(-2 log q).
_AS_C = (2.515517, 0.802853, 0.010328)
_AS_D = (1.432788, 0.189269, 0.001308)
# Probabilities within this distance of 1/2 use erfinv directly.
_NDTRI_CENTRAL = 0.4
_NDTRI_SERIES_ORDER = 8


def _tail_quantile(q: Any) -> Any:
    """The quantile of `q` in `(0, 1/2]` (a non-positive number): start, then Newton steps."""
    t = jnp.sqrt(-2 * jnp.log(q))
    c0, c1, c2 = _AS_C
    d1, d2, d3 = _AS_D
    x = -(t - (c0 + t * (c1 + t * c2)) / (1 + t * (d1 + t * (d2 + t * d3))))
    log_q = jnp.log(q)
    # Newton on log_ndtr(x) - log(q): the start is within 5e-4, and each step
    # squares the error. Eight terms of the tail series keep log_ndtr exact to
    # float64 precision beyond x = -20.
    for _ in range(3 if _is_double(q) else 2):
        y = _log_ndtr_impl(x, _NDTRI_SERIES_ORDER)
        x = x - (y - log_q) / _mills_ratio(x, y, _NDTRI_SERIES_ORDER)
    return x


@custom_jvp
def _ndtri(p: Any) -> Any:
    upper_half = p > 0.5
    # 1 - p is exact for p in [1/2, 1]: the smaller tail probability, without rounding.
    q = jnp.where(upper_half, 1 - p, p)
    central = jnp.abs(p - 0.5) <= _NDTRI_CENTRAL
    p_c = jnp.where(central, p, jnp.full_like(p, 0.5))
    x_central = _SQRT2 * lax.erf_inv(2 * p_c - 1)
    q_t = jnp.where(central | (q <= 0), jnp.full_like(q, 0.05), q)
    x_tail = _tail_quantile(q_t)
    x_tail = jnp.where(upper_half, -x_tail, x_tail)
    out = jnp.where(central, x_central, x_tail)
    out = jnp.where(p == 0, jnp.full_like(p, -np.inf), out)
    out = jnp.where(p == 1, jnp.full_like(p, np.inf), out)
    return jnp.where((p < 0) | (p > 1) | jnp.isnan(p), jnp.full_like(p, np.nan), out)


@_ndtri.defjvp
def _ndtri_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # d/dp ndtri(p) = 1 / phi(ndtri(p)) = sqrt(2 pi) exp(x^2 / 2).
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    return x, _SQRT_2PI * jnp.exp(0.5 * x * x) * t


def ndtri(p: ArrayLike) -> Any:
    """The inverse of `ndtr`: the standard normal quantile of `p`, elementwise.

    `-inf` at 0, `inf` at 1, NaN outside `[0, 1]`; accurate in relative terms
    in both tails.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.ndtri(np.array([0.5, 0.975]))
      Array([0.       , 1.9599644], dtype=float32)
    """
    (p,) = inexact_args("ndtri", p)
    return _ndtri(p)
