"""The gamma function and its relatives: logarithms, signs, derivatives, beta, incomplete forms.

Most are one lax primitive (`lgamma`, `digamma`, `polygamma`, `igamma`,
`igammac`, `regularized_incomplete_beta`); the rest combine them:

- `gamma(x) = gammasgn(x) * exp(gammaln(x))`, so it is finite wherever the
  result is representable and never overflows in an intermediate step;
- `betaln(a, b)` avoids the cancellation of `lgamma(a) + lgamma(b) -
  lgamma(a + b)` when `max(a, b)` is large: there the difference of the large
  log-gammas is taken from Stirling's series, where the big terms cancel
  algebraically (`log1p` of the ratio) instead of numerically.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from polyjax_core.tracing import concrete_or_error
from polyjax_core.typing import ArrayLike
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def gammaln(x: ArrayLike) -> Any:
    """Natural logarithm of the absolute value of the gamma function, elementwise.

    Args:
      x: real array-like; integers and bools are promoted to the default float.

    Returns:
      `log|Gamma(x)|` (`inf` at the poles `0, -1, -2, ...`).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.gammaln(np.array([0.5, 4.0]))
      Array([0.5723648, 1.7917603], dtype=float32)
    """
    (x,) = inexact_args("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x: ArrayLike) -> Any:
    """Sign of the gamma function, elementwise: +1 or -1 (NaN at the poles and NaN).

    `Gamma(x) > 0` for `x > 0`; on `(-n - 1, -n)` its sign is `(-1)^(n + 1)`.
    At zero the sign follows the sign of the zero, as `Gamma(+-0) = +-inf`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.gammasgn(np.array([2.5, -0.5, -1.5]))
      Array([ 1., -1.,  1.], dtype=float32)
    """
    (x,) = inexact_args("gammasgn", x)
    one = jnp.ones_like(x)
    floor = jnp.floor(x)
    negative = jnp.where(jnp.mod(floor, 2) == 1, -one, one)
    out = jnp.where(x > 0, one, negative)
    out = jnp.where(x == 0, jnp.where(jnp.signbit(x), -one, one), out)
    # Non-positive integers (poles) and -inf have no sign.
    pole = (x < 0) & (x == floor)
    return jnp.where(pole | jnp.isnan(x), jnp.full_like(x, np.nan), out)


def gamma(x: ArrayLike) -> Any:
    """The gamma function, elementwise: `Gamma(x) = integral_0^inf t^(x-1) e^-t dt`.

    Computed as `gammasgn(x) * exp(gammaln(x))`: `+-inf` at `+-0`, NaN at the
    negative integers, `inf` where the result overflows.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.gamma(np.array([4.0, 0.5]))
      Array([6.0000052, 1.7724535], dtype=float32)
    """
    (x,) = inexact_args("gamma", x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x: ArrayLike) -> Any:
    """Principal branch of the logarithm of the gamma function, for real `x`.

    Equal to `gammaln(x)` for `x >= 0`; NaN for negative `x`, where the
    principal branch is complex (as SciPy does for real input). Complex
    inputs are not supported (TypeError).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.loggamma(np.array([3.0, -0.5]))
      Array([0.6931474,       nan], dtype=float32)
    """
    (x,) = inexact_args("loggamma", x)
    return jnp.where(x < 0, jnp.full_like(x, np.nan), lax.lgamma(x))


def digamma(x: ArrayLike) -> Any:
    """The digamma function `psi(x) = d/dx log Gamma(x)`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.digamma(np.array([1.0]))
      Array([-0.5772154], dtype=float32)
    """
    (x,) = inexact_args("digamma", x)
    return lax.digamma(x)


def polygamma(n: ArrayLike, x: ArrayLike) -> Any:
    """The polygamma function `psi^(n)(x)`, the `n`-th derivative of `digamma`.

    Args:
      n: non-negative integer orders (broadcast against `x`); non-integer
        orders give NaN.
      x: real array-like.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.polygamma(1, np.array([1.0]))  # pi^2 / 6
      Array([1.644934], dtype=float32)
    """
    n, x = inexact_args("polygamma", n, x)
    return lax.polygamma(n, x)


def gammainc(a: ArrayLike, x: ArrayLike) -> Any:
    """Regularized lower incomplete gamma function `P(a, x)`, elementwise.

    `P(a, x) = 1 / Gamma(a) * integral_0^x t^(a-1) e^-t dt` for `a > 0`,
    `x >= 0` (NaN elsewhere). Differentiable in both arguments.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.gammainc(1.0, np.array([1.0]))  # 1 - exp(-1)
      Array([0.6321205], dtype=float32)
    """
    a, x = inexact_args("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a: ArrayLike, x: ArrayLike) -> Any:
    """Regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.gammaincc(1.0, np.array([1.0]))  # exp(-1)
      Array([0.3678795], dtype=float32)
    """
    a, x = inexact_args("gammaincc", a, x)
    return lax.igammac(a, x)


# Stirling's series of log Gamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2): its
# coefficients B_2k / (2k (2k - 1)). From x = 8 on, seven terms leave an error
# below 1e-15.
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
_BETALN_SWITCH = 8.0
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _stirling_correction(x: Any) -> Any:
    inv = 1 / x
    inv2 = inv * inv
    acc = jnp.full_like(x, _STIRLING[-1])
    for c in reversed(_STIRLING[:-1]):
        acc = acc * inv2 + c
    return acc * inv


def betaln(a: ArrayLike, b: ArrayLike) -> Any:
    """Natural logarithm of the absolute value of the beta function, elementwise.

    `log|B(a, b)| = log|Gamma(a) Gamma(b) / Gamma(a + b)|`, accurate also when
    one or both arguments are large.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.betaln(np.array([1.0]), 2.0)  # log(1/2)
      Array([-0.69314694], dtype=float32)
    """
    a, b = inexact_args("betaln", a, b)
    lo, hi = jnp.minimum(a, b), jnp.maximum(a, b)
    naive = lax.lgamma(lo) + lax.lgamma(hi) - lax.lgamma(lo + hi)
    # Stirling's form where hi is large. Its operands are made safe elsewhere
    # so that no NaN enters the derivatives of the branch that is not taken.
    large = (hi >= _BETALN_SWITCH) & (lo > 0)
    lo_s = jnp.where(large, lo, jnp.ones_like(lo))
    hi_s = jnp.where(large, hi, jnp.full_like(hi, _BETALN_SWITCH))
    total = lo_s + hi_s
    # log Gamma(hi) - log Gamma(lo + hi) without the (lo + hi) log(lo + hi) terms.
    tail = (
        _stirling_correction(hi_s)
        - _stirling_correction(total)
        - (hi_s - 0.5) * jnp.log1p(lo_s / hi_s)
    )
    one_large = lax.lgamma(lo_s) + tail - lo_s * jnp.log(total) + lo_s
    both = lo_s >= _BETALN_SWITCH
    lo_b = jnp.where(both, lo_s, jnp.full_like(lo_s, _BETALN_SWITCH))
    both_large = (
        _HALF_LOG_2PI
        - 0.5 * jnp.log(lo_b)
        + _stirling_correction(lo_b)
        - lo_b * jnp.log1p(hi_s / lo_b)
        + tail
    )
    return jnp.where(large, jnp.where(both, both_large, one_large), naive)


def beta(a: ArrayLike, b: ArrayLike) -> Any:
    """The beta function `B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.beta(np.array([2.0]), 3.0)
      Array([0.08333327], dtype=float32)
    """
    a, b = inexact_args("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Regularized incomplete beta function `I_x(a, b)`, elementwise.

    `I_x(a, b) = 1 / B(a, b) * integral_0^x t^(a-1) (1-t)^(b-1) dt` for `a, b > 0`
    and `0 <= x <= 1` (NaN elsewhere). Differentiable in `x` only.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.betainc(1.0, 1.0, np.array([0.25]))
      Array([0.24999976], dtype=float32)
    """
    a, b, x = inexact_args("betainc", a, b, x)
    return lax.betainc(a, b, x)


def multigammaln(a: ArrayLike, d: int) -> Any:
    """Log of the multivariate gamma function of dimension `d`, elementwise in `a`.

    `log Gamma_d(a) = d (d - 1) / 4 log(pi) + sum_{j=0}^{d-1} log Gamma(a - j / 2)`.

    Args:
      a: real array-like (SciPy requires `a > (d - 1) / 2`; not checked here,
        as it would need concrete values).
      d: the dimension, a concrete positive integer.

    Raises:
      TypeError: `d` is not an integer.
      ValueError: `d` is not positive.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.multigammaln(np.array([2.0]), 1)  # gammaln(2)
      Array([0.], dtype=float32)
    """
    d = concrete_or_error(operator.index, d, "multigammaln: d must be a concrete integer.")
    if d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d}.")
    (a,) = inexact_args("multigammaln", a)
    total = lax.lgamma(a)
    for j in range(1, d):
        total = total + lax.lgamma(a - j / 2)
    return total + d * (d - 1) / 4 * math.log(math.pi)


def factorial(n: ArrayLike, exact: bool = False) -> Any:
    """The factorial `n! = Gamma(n + 1)`, elementwise, as floats (0 for negative `n`).

    Args:
      n: real array-like (non-integers give `Gamma(n + 1)`).
      exact: must be False: exact integer factorials are not supported (as in JAX).

    Raises:
      NotImplementedError: `exact=True`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.factorial(np.array([0, 4]))
      Array([ 1.0000005, 24.000023 ], dtype=float32)
    """
    if exact:
        raise NotImplementedError("factorial with exact=True is not supported.")
    (n,) = inexact_args("factorial", n)
    return jnp.where(n < 0, jnp.zeros_like(n), jnp.exp(lax.lgamma(n + 1)))


def poch(z: ArrayLike, m: ArrayLike) -> Any:
    """The Pochhammer symbol (rising factorial) `(z)_m = Gamma(z + m) / Gamma(z)`.

    `(z)_0 = 1` for every `z`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.poch(np.array([3.0]), 2.0)  # 3 * 4
      Array([12.000009], dtype=float32)
    """
    z, m = inexact_args("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    out = sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    return jnp.where(m == 0, jnp.ones_like(out), out)


def comb(N: ArrayLike, k: ArrayLike, *, repetition: bool = False) -> Any:
    """The number of combinations of `N` things taken `k` at a time, elementwise.

    Computed in floating point as `1 / ((N + 1) B(N - k + 1, k + 1))` (SciPy's
    ``exact=False``), so non-integer `N` gives the generalized binomial
    coefficient; 0 where `k > N`, `k < 0` or `N < 0`. With `repetition`, the
    count of multisets: `comb(N + k - 1, k)`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.comb(np.array([5.0, 5.5, 2.0]), 2.0)
      Array([10.000005 , 12.3749895,  1.0000001], dtype=float32)
    """
    N, k = inexact_args("comb", N, k)
    if repetition:
        N = N + k - 1
    return _comb(N, k)


@jit
def _comb(N: Any, k: Any) -> Any:
    valid = (k <= N) & (k >= 0) & (N >= 0)
    n_safe = jnp.where(valid, N, jnp.ones_like(N))
    k_safe = jnp.where(valid, k, jnp.zeros_like(k))
    value = jnp.exp(-jnp.log1p(n_safe) - betaln(n_safe - k_safe + 1, k_safe + 1))
    return jnp.where(valid, value, jnp.zeros_like(value))
