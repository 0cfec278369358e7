"""`detrend`: remove a constant or piecewise-linear least-squares fit along an axis."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from polyjax_core.tracing import concrete_or_error
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u

__all__ = ["detrend"]


def _linear_residual(y: Any) -> Any:
    """`y` minus its least-squares line along the last axis."""
    n = y.shape[-1]
    t = jnp.arange(n, dtype=y.dtype) - (n - 1) / 2  # centred: the fit decouples
    y_mean = jnp.mean(y, axis=-1, keepdims=True)
    denom = jnp.sum(t * t)
    slope = jnp.sum(t * (y - y_mean), axis=-1, keepdims=True) / jnp.where(denom > 0, denom, 1)
    return y - y_mean - slope * t


def detrend(
    data: Any,
    axis: int = -1,
    type: str = "linear",
    bp: int | Sequence[int] = 0,
    overwrite_data: None = None,
) -> Any:
    """Removes the trend of `data` along `axis`.

    Args:
      data: the signal.
      axis: the axis along which to detrend.
      type: "linear" (subtract the least-squares line of each piece) or
        "constant" (subtract the mean).
      bp: breakpoints (concrete indices along `axis`): the linear fit is done
        separately on each piece between them.
      overwrite_data: ignored (arrays are immutable).

    Returns:
      The detrended data, of an inexact dtype.

    Raises:
      ValueError: an unknown `type`, or breakpoints outside the axis.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> signal.detrend(np.array([1.0, 2.0, 4.0]))
      Array([ 0.16666675, -0.33333325,  0.16666675], dtype=float32)
    """
    del overwrite_data
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError(f"detrend: type must be 'linear' or 'constant', got {type!r}.")
    _u.check_arraylike("detrend", data)
    (data,) = _u.promote_dtypes_inexact(jnp.asarray(data))
    axis = _u.canonicalize_axis(axis, data.ndim)
    if type in ("constant", "c"):
        return data - jnp.mean(data, axis=axis, keepdims=True)
    n = data.shape[axis]
    bps = [
        concrete_or_error(operator.index, b, "detrend: breakpoints must be concrete integers.")
        for b in (bp if isinstance(bp, Sequence) or _u.ndim(bp) else [bp])
    ]
    if any(b < 0 or b > n for b in bps):
        raise ValueError(f"detrend: breakpoints must be in [0, {n}], got {bps}.")
    edges = sorted(set([0, *bps, n]))
    y = jnp.moveaxis(data, axis, -1)
    pieces = [_linear_residual(y[..., lo:hi]) for lo, hi in zip(edges[:-1], edges[1:])]
    out = jnp.concatenate(pieces, axis=-1) if pieces else y
    return jnp.moveaxis(out, -1, axis)
