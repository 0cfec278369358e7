"""The exponential integrals `exp1`, `expn` and `expi`.

`E_n(x) = integral_1^inf exp(-x t) / t^n dt` (`exp1` is `E_1`), and
`Ei(x) = -PV integral_{-x}^inf exp(-t) / t dt`. Each is evaluated by the
classical pair of expansions, on the side where it converges fast:

- `E_n` for `x <= 1`: the power series
  `(-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)`;
  above, the continued fraction
  `exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))`,
  evaluated from the bottom with a fixed depth (100 levels reach float64
  precision from x = 1 on, 40 float32's);
- `Ei` for `0 < x <= 40` (20 below float64): `gamma + log x + sum_k x^k / (k k!)`,
  whose terms are all positive; above, the asymptotic series
  `exp(x) / x sum_k k! / x^k` up to its smallest term; `Ei(-x) = -E_1(x)`.

The loops are `fori_loop`s of fixed length. Derivatives are custom JVPs from
the closed forms `E_n' = -E_{n-1}`, `E_1'(x) = -exp(-x) / x`, `Ei'(x) = exp(x) / x`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args

_EULER = 0.5772156649015329
_SWITCH = 1.0


def _is_double(x: Any) -> bool:
    return x.dtype == np.float64


def _en_series(n: Any, x: Any) -> Any:
    """`E_n(x)` by its power series (`n >= 1` whole, `0 < x <= 1`)."""

    def body(k, carry):
        term, total = carry  # term = (-x)^k / k!
        skip = k == n - 1
        total = total - jnp.where(skip, 0, term / jnp.where(skip, 1, k - n + 1))
        return term * (-x) / (k + 1), total

    _, total = lax.fori_loop(0, 30, body, (jnp.ones_like(x), jnp.zeros_like(x)))
    # The k = n - 1 term: (-x)^(n-1) / (n-1)! (psi(n) - log x).
    sign = jnp.where(jnp.mod(n - 1, 2) == 1, -1.0, 1.0).astype(x.dtype)
    prefactor = sign * jnp.exp((n - 1) * jnp.log(x) - lax.lgamma(n))
    return total + prefactor * (_digamma_of_whole(n) - jnp.log(x))


def _digamma_of_whole(n: Any) -> Any:
    """`psi(n) = -gamma + sum_{m < n} 1 / m` for whole `n >= 1`, exact up to n = 64.

    (XLA's float32 digamma is a few ulps off, and `E_1` near 1 inherits it.)
    """
    harmonic = lax.fori_loop(
        1, 64, lambda m, h: h + jnp.where(m < n, 1 / m.astype(n.dtype), 0), jnp.zeros_like(n)
    )
    return jnp.where(n <= 64, harmonic - _EULER, lax.digamma(n))


def _en_fraction(n: Any, x: Any) -> Any:
    """`E_n(x)` by its continued fraction (`n >= 1` whole, `x > 1`)."""
    depth = 100 if _is_double(x) else 40

    def body(i, t):
        k = depth - i  # from the bottom up
        return x + n + 2 * (k - 1) - k * (n + k - 1) / t

    t = lax.fori_loop(0, depth, body, x + n + 2 * depth)
    return jnp.exp(-x) / t


@custom_jvp
def _expn(n: Any, x: Any) -> Any:
    n = jnp.trunc(n)
    positive = x > 0
    safe_x = jnp.where(positive, x, jnp.ones_like(x))
    n1 = jnp.maximum(n, 1)
    small = safe_x <= _SWITCH
    x_series = jnp.where(small, safe_x, jnp.ones_like(x))
    x_fraction = jnp.where(small, jnp.full_like(x, 2 * _SWITCH), safe_x)
    out = jnp.where(small, _en_series(n1, x_series), _en_fraction(n1, x_fraction))
    out = jnp.where(n == 0, jnp.exp(-safe_x) / safe_x, out)
    # E_n(0) = 1 / (n - 1), infinite for n <= 1.
    at_zero = jnp.where(n > 1, 1 / jnp.maximum(n - 1, 1), jnp.full_like(x, np.inf))
    out = jnp.where(x == 0, at_zero, out)
    invalid = (x < 0) | (n < 0) | jnp.isnan(x) | jnp.isnan(n)
    return jnp.where(invalid, jnp.full_like(x, np.nan), out)


@_expn.defjvp
def _expn_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (n, x), (_, tx) = primals, tangents
    # d/dx E_n = -E_{n-1} for n >= 1, and E_0 = exp(-x) / x; the order is an
    # integer, with no derivative.
    n0 = jnp.trunc(n) == 0
    d0 = -jnp.exp(-x) * (x + 1) / (x * x)
    dn = -_expn(jnp.where(n0, jnp.ones_like(n), n - 1), x)
    return _expn(n, x), jnp.where(n0, d0, dn) * tx


def expn(n: ArrayLike, x: ArrayLike) -> Any:
    """The generalized exponential integral `E_n(x)`, elementwise.

    Args:
      n: non-negative integer orders (truncated to integers, as SciPy does).
      x: non-negative real arguments.

    Returns:
      `E_n(x)`; `1 / (n - 1)` at `x = 0` (`inf` for `n <= 1`); NaN for negative
      `n` or `x`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.expn(np.array([0, 1, 2]), 1.0)
      Array([0.36787945, 0.21938425, 0.14849555], dtype=float32)
    """
    n, x = inexact_args("expn", n, x)
    return _expn(n, x)


@custom_jvp
def _exp1(x: Any) -> Any:
    return _expn(jnp.ones_like(x), x)


@_exp1.defjvp
def _exp1_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _exp1(x), -jnp.exp(-x) / x * t


def exp1(x: ArrayLike) -> Any:
    """The exponential integral `E_1(x) = integral_x^inf exp(-t) / t dt`, elementwise.

    `inf` at 0, NaN for negative `x` (as SciPy for real arguments).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.exp1(np.array([0.5, 2.0]))
      Array([0.55977356, 0.04890051], dtype=float32)
    """
    (x,) = inexact_args("exp1", x)
    return _exp1(x)


def _ei_positive(x: Any) -> Any:
    """`Ei(x)` for `x > 0`."""
    switch = 40.0 if _is_double(x) else 20.0
    terms = 160 if _is_double(x) else 80
    small = x <= switch
    xs = jnp.where(small, x, jnp.ones_like(x))

    def series_body(k, carry):
        term, total = carry  # term = x^k / k!
        term = term * xs / k
        return term, total + term / k

    _, total = lax.fori_loop(1, terms + 1, series_body, (jnp.ones_like(x), jnp.zeros_like(x)))
    series = _EULER + jnp.log(xs) + total
    xl = jnp.where(small, jnp.full_like(x, 2 * switch), x)

    def asymptotic_body(k, carry):
        term, total = carry  # term = k! / x^k
        term = term * k / xl
        return term, total + term

    n_asymptotic = int(switch)
    _, total = lax.fori_loop(
        1, n_asymptotic + 1, asymptotic_body, (jnp.ones_like(x), jnp.ones_like(x))
    )
    asymptotic = jnp.exp(xl) / xl * total
    return jnp.where(small, series, asymptotic)


@custom_jvp
def _expi(x: Any) -> Any:
    positive = x > 0
    xp = jnp.where(positive, x, jnp.ones_like(x))
    xn = jnp.where(positive, jnp.ones_like(x), -x)
    out = jnp.where(positive, _ei_positive(xp), -_exp1(xn))
    return jnp.where(x == 0, jnp.full_like(x, -np.inf), out)


@_expi.defjvp
def _expi_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _expi(x), jnp.exp(x) / x * t


def expi(x: ArrayLike) -> Any:
    """The exponential integral `Ei(x)`, elementwise (`-E_1(-x)` for negative `x`).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.expi(np.array([-1.0, 1.0]))
      Array([-0.21938425,  1.8951179 ], dtype=float32)
    """
    (x,) = inexact_args("expi", x)
    return _expi(x)
