"""Modified Bessel functions of the first kind of orders 0 and 1, plain and scaled.

The exponentially scaled forms `i0e(x) = exp(-|x|) I0(x)` and `i1e` are lax
primitives; the plain ones multiply back by `exp(|x|)` (and overflow to inf
where the true value does, near |x| = 89 in float32).
"""

from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def i0e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 0, `exp(-|x|) I0(x)`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i0e(np.array([0.0, 1.0]))
      Array([1.        , 0.46575963], dtype=float32)
    """
    (x,) = inexact_args("i0e", x)
    return lax.bessel_i0e(x)


def i0(x: ArrayLike) -> Any:
    """Modified Bessel function of the first kind of order 0, `I0(x)`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i0(np.array([0.0, 1.0]))
      Array([1.      , 1.266066], dtype=float32)
    """
    (x,) = inexact_args("i0", x)
    return jnp.i0(x)


def i1e(x: ArrayLike) -> Any:
    """Exponentially scaled modified Bessel function of order 1, `exp(-|x|) I1(x)`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i1e(np.array([0.0, 1.0]))
      Array([0.        , 0.20791042], dtype=float32)
    """
    (x,) = inexact_args("i1e", x)
    return lax.bessel_i1e(x)


def i1(x: ArrayLike) -> Any:
    """Modified Bessel function of the first kind of order 1, `I1(x)`, elementwise.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import special
      >>> special.i1(np.array([0.0, 1.0]))
      Array([0.        , 0.5651591], dtype=float32)
    """
    (x,) = inexact_args("i1", x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


def bessel_jn(z: ArrayLike, *, v: int, n_iter: int = 50) -> Any:
    """Bessel functions of the first kind `J_0(z), ..., J_v(z)`, stacked along a new axis 0.

    Miller's backward recurrence `J_{k-1} = 2 k / z J_k - J_{k+1}` runs from order
    `v + n_iter` down to 0 from an arbitrary start, with rescaling against overflow,
    and is normalized by `J_0 + 2 (J_2 + J_4 + ...) = 1`. The start order must
    exceed `|z|` by a margin: `n_iter` of 50 is accurate for `|z|` up to about 25.

    Args:
      z: real arguments.
      v: the largest order, a non-negative Python int.
      n_iter: how many orders above `v` the recurrence starts.

    Returns:
      An array of shape ``(v + 1, *z.shape)``.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.bessel_jn(np.array([1.0]), v=1)
      Array([[0.76519763],
             [0.44005054]], dtype=float32)
    """
    v = operator.index(v)
    n_iter = operator.index(n_iter)
    if v < 0 or n_iter < 1:
        raise ValueError(f"bessel_jn needs v >= 0 and n_iter >= 1, got v={v}, n_iter={n_iter}.")
    (z,) = inexact_args("bessel_jn", z)
    return _bessel_jn(z, v, n_iter)


@functools.partial(jit, static_argnums=(1, 2))
def _bessel_jn(z: Any, v: int, n_iter: int) -> Any:
    ax = jnp.abs(z)
    zero = ax == 0
    x = jnp.where(zero, jnp.ones_like(ax), ax)
    top = v + n_iter + (n_iter % 2)  # even, so the normalization sum ends on J_0
    big = 1e15 if z.dtype == np.float64 else 1e10

    def body(i, carry):
        upper, cur, stored, norm = carry  # J_{k+1}, J_k (unnormalized), with k = top - i
        k = top - i
        keep = jnp.arange(v + 1) == k
        stored = jnp.where(keep.reshape((-1,) + (1,) * x.ndim), cur, stored)
        norm = norm + jnp.where(k % 2 == 0, jnp.where(k == 0, 1.0, 2.0), 0.0) * cur
        lower = 2 * k.astype(x.dtype) / x * cur - upper
        scale = jnp.where(jnp.abs(lower) > big, 1 / big, 1.0).astype(x.dtype)
        return cur * scale, lower * scale, stored * scale, norm * scale

    start = (jnp.zeros_like(x), jnp.full_like(x, 1e-30), jnp.zeros((v + 1, *x.shape), x.dtype))
    _, _, stored, norm = lax.fori_loop(0, top + 1, body, (*start, jnp.zeros_like(x)))
    values = stored / norm
    orders = np.arange(v + 1).reshape((-1,) + (1,) * x.ndim)
    values = jnp.where((z < 0) & (orders % 2 == 1), -values, values)
    at_zero = jnp.asarray((orders == 0).astype(np.float64), x.dtype)
    return jnp.where(zero, at_zero, values)
