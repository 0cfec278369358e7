"""Owen's T function, `T(h, a) = 1 / (2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx`.

`T` is even in `h` and odd in `a`. For `|a| <= 1` the integrand is smooth on
`[0, |a|]` and a 48-point Gauss-Legendre rule integrates it to near float64
precision for moderate `h` (its width is `1 / h`); for `|a| > 1` Owen's identity
`T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - T(a h, 1 / a)` (with
`h >= 0`) brings the second argument back into `[0, 1]`. Derivatives follow the
quadrature and the identity.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args
from polyjax_numpy.scipy.special._error import ndtr

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)


def _t_small(h: Any, a: Any) -> Any:
    """`T(h, a)` for `0 <= a <= 1`, by quadrature on `[0, a]`."""
    x = (0.5 * a)[..., None] * (jnp.asarray(_NODES, h.dtype) + 1)
    one_x2 = 1 + x * x
    f = jnp.exp(-0.5 * (h * h)[..., None] * one_x2) / one_x2
    return (0.5 * a / (2 * np.pi)) * jnp.sum(f * jnp.asarray(_WEIGHTS, h.dtype), axis=-1)


def owens_t(h: ArrayLike, a: ArrayLike) -> Any:
    """Owen's T function `T(h, a)`, elementwise over broadcast operands.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.owens_t(np.array([0.5, 1.0]), 2.0)
      Array([0.14158061, 0.07846822], dtype=float32)
    """
    h, a = inexact_args("owens_t", h, a)
    return _owens_t(h, a)


@jit
def _owens_t(h: Any, a: Any) -> Any:
    h, sign, a = jnp.abs(h), jnp.sign(a), jnp.abs(a)
    small = a <= 1
    a_small = jnp.where(small, a, jnp.zeros_like(a))
    a_big = jnp.where(small, jnp.full_like(a, 2.0), a)
    ah = a_big * h
    phi_h, phi_ah = ndtr(h), ndtr(ah)
    big = 0.5 * (phi_h + phi_ah) - phi_h * phi_ah - _t_small(ah, 1 / a_big)
    return sign * jnp.where(small, _t_small(h, a_small), big)
