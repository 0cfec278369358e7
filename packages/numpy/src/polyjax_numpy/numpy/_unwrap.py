"""`unwrap`: phase angles made continuous by removing jumps larger than half a period.

Each step between neighbours along `axis` is reduced modulo `period` into
`[-period/2, period/2)` (a step of exactly `+period/2` stays positive), and the
correction is accumulated along the axis, as NumPy does. Steps smaller than
`discont` are left alone. Integer inputs are unwrapped as floats.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray
from polyjax_numpy.numpy._cumulative import cumsum, diff
from polyjax_numpy.numpy._ufuncs import remainder


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * math.pi) -> Any:
    """`p` with jumps of more than `max(discont, period / 2)` along `axis` unwrapped.

    Args:
      p: the phases.
      discont: the smallest jump corrected (default `period / 2`; smaller values
        act as `period / 2`).
      axis: the axis along which to unwrap.
      period: the size of the range the phases wrap around.

    Raises:
      ValueError: `p` is complex, or `axis` is out of range.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unwrap(jnp.array([0.0, 3.0, -3.0, -0.5]))
      Array([0.       , 3.       , 3.2831855, 5.7831855], dtype=float32)
    """
    _u.check_arraylike("unwrap", p)
    if _u.issubdtype_of(p, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs")
    (p,) = _u.promote_dtypes_inexact(asarray(p))
    p = asarray(p)
    axis = _u.canonicalize_axis(axis, _u.ndim(p))
    n = _u.shape(p)[axis]
    if n < 2:
        return p
    half = _u.convert(asarray(period), _u.dtype(p))
    half = lax.div(half, _u.scalar_like(2, half))
    period = lax.add(half, half)
    discont = half if discont is None else _u.convert(asarray(discont), _u.dtype(p))
    step = diff(p, axis=axis)
    low = lax.neg(half)
    wrapped = lax.add(remainder(lax.sub(step, low), period), low)
    # A step of exactly +period/2 is ambiguous: it stays positive, as in NumPy.
    ambiguous = lax.bitwise_and(lax.eq(wrapped, low), lax.gt(step, _u.scalar_like(0, step)))
    wrapped = lax.select_n(ambiguous, wrapped, lax.add(_shape_ops.full_like(wrapped, 0), half))
    correction = lax.sub(wrapped, step)
    small = lax.lt(lax.abs(step), discont)
    correction = lax.select_n(small, correction, _shape_ops.full_like(correction, 0))
    rest = lax.add(_shape_ops.slice_in_dim(p, 1, n, axis=axis), cumsum(correction, axis=axis))
    return _shape_ops.concatenate([_shape_ops.slice_in_dim(p, 0, 1, axis=axis), rest], axis)


__all__ = ["unwrap"]
