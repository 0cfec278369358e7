"""The sine and cosine integrals `sici`.

`Si(x) = int_0^x sin(t) / t dt` and `Ci(x) = gamma + log x + int_0^x (cos t - 1) / t dt`.
For `|x| <= 4` both come from their power series (30 terms); above, from the
exponential integral of an imaginary argument, `E_1(i x) = -Ci(x) + i (Si(x) - pi / 2)`,
whose continued fraction `exp(-z) / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...)))` is
evaluated from the bottom at a fixed depth. `Si` is odd; `Ci` is even in its real
part (SciPy returns that part for negative `x`) and `-inf` at 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args

_EULER = 0.5772156649015329
_SWITCH = 4.0


def _series(x: Any) -> tuple[Any, Any]:
    """`(Si(x), Ci(x))` by their power series, for `0 < x <= 4`."""
    x2 = x * x

    def body(k, carry):
        term, si, ci = carry  # term = (-1)^k x^k / k!, k = 2j + 1 odd after each step
        kf = k.astype(x.dtype)
        odd = term * x / (2 * kf + 1)  # (-1)^j x^(2j+1) / (2j+1)!
        si = si + odd / (2 * kf + 1)
        even = -odd * x / (2 * kf + 2)  # (-1)^(j+1) x^(2j+2) / (2j+2)!
        ci = ci + even / (2 * kf + 2)
        return even, si, ci

    zero = jnp.zeros_like(x)
    _, si, ci = lax.fori_loop(0, 30, body, (jnp.ones_like(x), zero, zero))
    del x2
    return si, ci + _EULER + jnp.log(x)


def _fraction(x: Any) -> tuple[Any, Any]:
    """`(Si(x), Ci(x))` from the continued fraction of `E_1(i x)`, for `x > 4`."""
    depth = 120 if x.dtype == np.float64 else 60
    z = (1j * x).astype(jnp.result_type(x.dtype, np.complex64))

    def body(i, t):
        k = (depth - 1 - i).astype(x.dtype)
        return z + 2 * k + 1 - (k + 1) * (k + 1) / t

    t = lax.fori_loop(0, depth, body, z + 2 * depth + 1)
    e1 = jnp.exp(-z) / t
    return np.pi / 2 + jnp.imag(e1), -jnp.real(e1)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    ax = jnp.abs(x)
    small = ax <= _SWITCH
    xs = jnp.where(small & (ax > 0), ax, jnp.ones_like(x))
    xl = jnp.where(small, jnp.full_like(x, 2 * _SWITCH), ax)
    si_s, ci_s = _series(xs)
    si_l, ci_l = _fraction(xl)
    si = jnp.sign(x) * jnp.where(small, si_s, si_l)
    ci = jnp.where(small, ci_s, ci_l)
    ci = jnp.where(x == 0, jnp.full_like(x, -np.inf), ci)
    return jnp.where(x == 0, jnp.zeros_like(x), si), ci


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _sici(x), (jnp.sinc(x / np.pi) * t, jnp.cos(x) / x * t)


def sici(x: ArrayLike) -> tuple[Any, Any]:
    """The sine and cosine integrals `(Si(x), Ci(x))`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> si, ci = special.sici(np.array([1.0, 10.0]))
      >>> si
      Array([0.946083 , 1.6583476], dtype=float32)
      >>> ci
      Array([ 0.33740395, -0.04545643], dtype=float32)
    """
    (x,) = inexact_args("sici", x)
    return jit(_sici)(x)
