"""The Faddeeva function `wofz` and the real functions built on it: `dawsn`, `fresnel`.

`w(z) = exp(-z^2) erfc(-i z)` is evaluated in the upper half-plane by
Weideman's rational expansion (SIAM J. Numer. Anal. 31, 1994):

    w(z) = 2 p(Z) / (L - i z)^2 + 1 / (sqrt(pi) (L - i z)),   Z = (L + i z) / (L - i z),

with `p` a polynomial of degree `N - 1` whose coefficients are the Fourier
coefficients of `exp(-t^2) (L^2 + t^2)` under the map `t = L tan(theta / 2)`;
they are computed once, in float64, with NumPy's FFT. In the lower half-plane
the reflection `w(z) = 2 exp(-z^2) - w(-z)` applies.

On the real axis `Im w(x) = 2 / sqrt(pi) F(x)` with `F` Dawson's integral, and the
Fresnel integrals follow from `erf` of a complex argument on the diagonal:
`C(x) + i S(x) = (1 + i) / 2 (1 - exp(i pi x^2 / 2) w((1 + i) sqrt(pi) x / 2))`
for `x >= 0` (both are odd).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.special._common import inexact_args

_N = 40  # terms of Weideman's expansion: near float64 precision everywhere


def _weideman_coefficients(n: int) -> tuple[float, np.ndarray]:
    """`L` and the coefficients of `p` (highest degree first) for `n` terms."""
    m = 2 * n
    length = np.sqrt(n / np.sqrt(2.0))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = length * np.tan(theta / 2)
    f = np.concatenate([[0.0], np.exp(-(t**2)) * (length**2 + t**2)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return float(length), a[1 : n + 1][::-1].copy()


_L, _COEFFS = _weideman_coefficients(_N)
_SQRT_PI = float(np.sqrt(np.pi))


def _w_upper(z: Any) -> Any:
    """`w(z)` for `Im z >= 0`."""
    denom = _L - 1j * z
    big_z = (_L + 1j * z) / denom
    p = jnp.zeros_like(z)
    for c in _COEFFS:  # Horner, unrolled: a fixed short polynomial
        p = p * big_z + float(c)
    return 2 * p / (denom * denom) + (1 / _SQRT_PI) / denom


def _w(z: Any) -> Any:
    upper = jnp.imag(z) >= 0
    zu = jnp.where(upper, z, -z)
    w = _w_upper(zu)
    # Where the reflection is used, exp(-z^2) is the dominant term (and may overflow, as w does).
    zl = jnp.where(upper, jnp.zeros_like(z), z)
    return jnp.where(upper, w, 2 * jnp.exp(-zl * zl) - w)


@custom_jvp
def _wofz(z: Any) -> Any:
    return _w(z)


@_wofz.defjvp
def _wofz_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (z,), (t,) = primals, tangents
    w = _wofz(z)
    return w, (-2 * z * w + 2j / _SQRT_PI) * t


def wofz(z: ArrayLike) -> Any:
    """The Faddeeva function `w(z) = exp(-z^2) erfc(-i z)`, elementwise.

    Real inputs are treated as complex: the result is always complex (complex64 for
    float32 and smaller inputs).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.wofz(np.array([1 + 1j]))
      Array([0.30474418+0.20821895j], dtype=complex64)
    """
    (z,) = inexact_args("wofz", z, real=False)
    if not _u.issubdtype_of(z, np.complexfloating):
        z = z.astype(jnp.result_type(z, np.complex64))
    return jit(_wofz)(z)


def _complex_of(x: Any) -> Any:
    return jnp.result_type(x.dtype, np.complex64)


@custom_jvp
def _dawsn(x: Any) -> Any:
    w = _w_upper(x.astype(_complex_of(x)))
    return (_SQRT_PI / 2 * jnp.imag(w)).astype(x.dtype)


@_dawsn.defjvp
def _dawsn_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    f = _dawsn(x)
    return f, (1 - 2 * x * f) * t


def dawsn(x: ArrayLike) -> Any:
    """Dawson's integral `F(x) = exp(-x^2) integral_0^x exp(t^2) dt`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.dawsn(np.array([0.5, 2.0]))
      Array([0.42443636, 0.30134037], dtype=float32)
    """
    (x,) = inexact_args("dawsn", x)
    return jit(_dawsn)(x)


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    ax = jnp.abs(x)
    zeta = ((1 + 1j) * (_SQRT_PI / 2) * ax).astype(_complex_of(x))
    phase = jnp.exp(1j * (np.pi / 2) * (ax * ax)).astype(zeta.dtype)
    cs = (0.5 + 0.5j) * (1 - phase * _w_upper(zeta))
    sign = jnp.sign(x)
    return (sign * jnp.imag(cs)).astype(x.dtype), (sign * jnp.real(cs)).astype(x.dtype)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    s, c = _fresnel(x)
    arg = (np.pi / 2) * x * x
    return (s, c), (jnp.sin(arg) * t, jnp.cos(arg) * t)


def fresnel(x: ArrayLike) -> tuple[Any, Any]:
    """The Fresnel integrals `S(x) = int_0^x sin(pi t^2 / 2) dt` and `C(x)` (with cos).

    Returns:
      The pair `(S(x), C(x))`, in SciPy's order.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> s, c = special.fresnel(np.array([1.0]))
      >>> s, c
      (Array([0.43825918], dtype=float32), Array([0.77989334], dtype=float32))
    """
    (x,) = inexact_args("fresnel", x)
    return jit(_fresnel)(x)
