"""Spherical harmonics `sph_harm_y(n, m, theta, phi)` (SciPy's >= 1.15 argument order).

`Y_n^m(theta, phi) = Pbar_n^|m|(cos theta) exp(i m phi)`, with `Pbar` the
associated Legendre function normalized over the sphere (Condon-Shortley phase
included), and `Y_n^{-m} = (-1)^m conj(Y_n^m)`. `Pbar` comes from the stable
recurrence in the degree at fixed order,

    Pbar_m^m = (-1)^m sqrt((2m + 1) / (4 pi) prod_{k <= m} (2k - 1) / (2k)) sin(theta)^m,
    Pbar_{m+1}^m = sqrt(2m + 3) cos(theta) Pbar_m^m,
    Pbar_l^m = a_l (cos(theta) Pbar_{l-1}^m - Pbar_{l-2}^m / a_{l-1}),
    a_l = sqrt((4l^2 - 1) / (l^2 - m^2)),

run elementwise (each element has its own `n`, `m`) for degrees up to the static `n_max`.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from polyjax_core.tracing import concrete_or_error
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def _legendre_normalized(n: Any, m: Any, x: Any, s: Any, n_max: int) -> Any:
    """`Pbar_n^m(x)` for integer arrays `0 <= m`, `n <= n_max`; `s = sqrt(1 - x^2)`."""
    mf = m.astype(x.dtype)

    def diagonal(k, p):  # p = Pbar_k^k, for k <= m
        kf = k.astype(x.dtype)
        step = -s * jnp.sqrt((2 * kf + 1) / (2 * kf))
        return jnp.where(k <= m, p * step, p)

    p_mm = lax.fori_loop(1, n_max + 1, diagonal, jnp.full_like(x, np.sqrt(1 / (4 * np.pi))))

    def a(deg):
        lf = deg.astype(x.dtype)
        return jnp.sqrt((4 * lf * lf - 1) / jnp.maximum(lf * lf - mf * mf, 1))

    def degree(deg, carry):  # (Pbar_{deg-1}^m, Pbar_{deg-2}^m, result), for deg > m + 1
        p1, p2, out = carry
        p = a(deg) * (x * p1 - p2 / a(deg - 1))
        active = deg > m + 1
        p1, p2 = jnp.where(active, p, p1), jnp.where(active, p1, p2)
        return p1, p2, jnp.where(active & (deg == n), p, out)

    p_m1 = jnp.sqrt(2 * mf + 3) * x * p_mm
    out = jnp.where(n == m, p_mm, jnp.where(n == m + 1, p_m1, jnp.zeros_like(x)))
    _, _, out = lax.fori_loop(2, n_max + 1, degree, (p_m1, p_mm, out))
    return out


def sph_harm_y(
    n: Any,
    m: Any,
    theta: Any,
    phi: Any,
    diff_n: int | None = None,
    n_max: int | None = None,
) -> Any:
    """Spherical harmonics `Y_n^m(theta, phi)`, with `theta` the polar angle, elementwise.

    Args:
      n: degrees (integers, `n >= 0`).
      m: orders (integers); `|m| > n` gives 0.
      theta: polar angles, in `[0, pi]`.
      phi: azimuthal angles.
      diff_n: derivatives are not supported (as in JAX): only `None` or 0.
      n_max: the largest degree, a static int; defaults to `max(n)` where `n` is concrete.

    Returns:
      The complex harmonics, broadcast over the operands.

    Raises:
      NotImplementedError: `diff_n` is given.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> n, m, theta, phi = np.array([2]), np.array([1]), np.array([0.3]), np.array([0.5])
      >>> special.sph_harm_y(n, m, theta, phi, n_max=2)
      Array([-0.19140679-0.104566j], dtype=complex64)
    """
    if diff_n:
        raise NotImplementedError("The 'diff_n' argument to sph_harm_y is not supported.")
    if n_max is None:
        n_max = int(np.max(concrete_or_error(np.asarray, n, "The n_max argument of sph_harm_y")))
    n_max = operator.index(n_max)
    theta, phi = inexact_args("sph_harm_y", theta, phi)
    return _sph_harm_y(n, m, theta, phi, n_max)


@functools.partial(jit, static_argnums=(4,))
def _sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, n_max: int) -> Any:
    n, m, theta, phi = jnp.broadcast_arrays(jnp.asarray(n), jnp.asarray(m), theta, phi)
    n, m = n.astype(np.int32), m.astype(np.int32)
    am = jnp.abs(m)
    p = _legendre_normalized(n, am, jnp.cos(theta), jnp.sin(theta), n_max)
    p = jnp.where((am <= n) & (n >= 0), p, jnp.zeros_like(p))
    mf = m.astype(theta.dtype)
    y = p * jnp.exp(1j * (mf * phi).astype(jnp.result_type(theta.dtype, np.complex64)))
    # Y_n^{-|m|} = (-1)^|m| conj(Y_n^|m|) = Pbar_n^|m| (-1)^|m| exp(-i |m| phi): the phase
    # exp(i m phi) is already right, leaving the sign.
    sign = jnp.where((m < 0) & (am % 2 == 1), -1.0, 1.0).astype(theta.dtype)
    return y * sign
