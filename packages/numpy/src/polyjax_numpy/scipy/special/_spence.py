"""Spence's function (SciPy's dilogarithm convention): `spence(x) = Li2(1 - x)`.

`Li2(y) = sum_k y^k / k^2` is summed directly for `0 <= y <= 1/2` and reached
from the rest of `(-inf, 1]` by three identities:

- `Li2(y) = pi^2 / 6 - log(y) log(1 - y) - Li2(1 - y)` (reflection) for `1/2 < y <= 1`;
- `Li2(y) = -Li2(y / (y - 1)) - log(1 - y)^2 / 2` (Landen) for `-1 <= y < 0`;
- `Li2(y) = -pi^2 / 6 - log(-y)^2 / 2 - Li2(1 / y)` (inversion) for `y < -1`.

Negative `x` (complex values) gives NaN, as SciPy's real function.
The derivative is `log(x) / (1 - x)` (-1 at `x = 1`).
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

_PI2_6 = np.pi**2 / 6


def _li2_series(y: Any) -> Any:
    """`Li2(y)` for `0 <= y <= 1/2` (60 terms: 2^-60 / 3600 is below float64's ulp)."""

    def body(k, carry):
        power, total = carry
        power = power * y
        kf = k.astype(y.dtype)
        return power, total + power / (kf * kf)

    _, total = lax.fori_loop(1, 61, body, (jnp.ones_like(y), jnp.zeros_like(y)))
    return total


def _li2_unit(y: Any) -> Any:
    """`Li2(y)` for `0 <= y <= 1`."""
    low = y <= 0.5
    ys = jnp.where(low, y, 1 - y)
    s = _li2_series(ys)
    # log(y) log(1 - y) at y = 1 is 0 * -inf; its limit is 0.
    yr = jnp.where(low | (y == 1), jnp.full_like(y, 0.75), y)
    reflected = _PI2_6 - jnp.log(yr) * jnp.log1p(-yr) - s
    return jnp.where(low, s, jnp.where(y == 1, _PI2_6 - s, reflected))


def _li2(y: Any) -> Any:
    """`Li2(y)` for `y <= 1`."""
    below = y < -1
    y1 = jnp.where(below, 1 / jnp.where(below, y, -2.0), y)  # now in [-1, 1]
    negative = y1 < 0
    landen_arg = jnp.where(negative, y1 / (y1 - 1), y1)  # now in [0, 1]
    value = _li2_unit(landen_arg)
    value = jnp.where(negative, -value - 0.5 * jnp.log1p(-y1) ** 2, value)
    yb = jnp.where(below, -y, jnp.ones_like(y))
    return jnp.where(below, -_PI2_6 - 0.5 * jnp.log(yb) ** 2 - value, value)


@custom_jvp
def _spence(x: Any) -> Any:
    valid = x >= 0
    out = _li2(1 - jnp.where(valid, x, jnp.ones_like(x)))
    return jnp.where(valid, out, jnp.full_like(x, np.nan))


@_spence.defjvp
def _spence_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    one = x == 1
    xs = jnp.where(one, 2.0, x)
    return _spence(x), jnp.where(one, -1.0, jnp.log(xs) / (1 - xs)) * t


def spence(x: ArrayLike) -> Any:
    """Spence's function `spence(x) = int_1^x log(t) / (1 - t) dt = Li2(1 - x)`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.spence(np.array([0.0, 1.0, 2.0]))
      Array([ 1.644934,  0.      , -0.822467], dtype=float32)
    """
    (x,) = inexact_args("spence", x)
    return jit(_spence)(x)
