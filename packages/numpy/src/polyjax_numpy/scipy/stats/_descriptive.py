"""Descriptive statistics of samples: `mode`, `rankdata`, `sem`.

`mode` and `rankdata` work on the sorted sample along the last axis: equal
values form runs, and a run's start and end positions come from cumulative
maxima and minima of the positions where runs begin and end, so that nothing
depends on how many distinct values there are (static shapes, as jit needs).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


def _check_nan_policy(name: str, nan_policy: str, supported: tuple[str, ...]) -> None:
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(
            f"{name}: nan_policy must be 'propagate', 'omit' or 'raise', got {nan_policy!r}."
        )
    if nan_policy not in supported:
        raise NotImplementedError(f"{name}: nan_policy={nan_policy!r} is not supported.")


def _runs(s: Any) -> tuple[Any, Any]:
    """For `s` sorted along its last axis: the start and end index of each element's run."""
    n = s.shape[-1]
    idx = jnp.broadcast_to(jnp.arange(n), s.shape)
    first = jnp.ones(s.shape[:-1] + (1,), bool)
    starts = jnp.concatenate([first, s[..., 1:] != s[..., :-1]], axis=-1)
    ends = jnp.concatenate([starts[..., 1:], first], axis=-1)
    start = lax.cummax(jnp.where(starts, idx, 0), axis=s.ndim - 1)
    end = lax.cummin(jnp.where(ends, idx, n - 1), axis=s.ndim - 1, reverse=True)
    return start, end


class ModeResult(NamedTuple):
    """The result of `mode`: the most frequent values and how often they occur."""

    mode: Any
    count: Any


def mode(
    a: ArrayLike, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False
) -> ModeResult:
    """The most frequent value along `axis` (the smallest one on ties), and its count.

    Args:
      a: the sample.
      axis: the axis to reduce (the flattened array if None).
      nan_policy: only "propagate" is supported (NaNs are distinct values that sort last).
      keepdims: keep the reduced axis with size 1.

    Returns:
      `ModeResult(mode, count)`: the modes (of `a`'s dtype) and their counts
      (default integer type). An empty axis gives NaN modes with count 0.

    Raises:
      NotImplementedError: `nan_policy` is "omit" or "raise".

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import stats
      >>> stats.mode(np.array([[1, 2, 2], [3, 3, 1]]), axis=1)
      ModeResult(mode=Array([2, 3], dtype=int32), count=Array([2, 2], dtype=int32))
    """
    _check_nan_policy("mode", nan_policy, ("propagate",))
    _u.check_arraylike("mode", a)
    a = jnp.asarray(a)
    kept_shape = None
    if axis is None:
        # keepdims then keeps every axis of `a`, each with size 1.
        kept_shape = (1,) * a.ndim
        a, axis = jnp.ravel(a), 0
    axis = _u.canonicalize_axis(axis, a.ndim)
    x = jnp.moveaxis(a, axis, -1)
    if x.shape[-1] == 0:
        out_mode = jnp.full(x.shape[:-1], np.nan, jnp.result_type(a, float))
        count = jnp.zeros(x.shape[:-1], int)
    else:
        s = jnp.sort(x, axis=-1)
        start, end = _runs(s)
        counts = end - start + 1
        # argmax takes the first maximum: the smallest of the most frequent values.
        best = jnp.argmax(counts, axis=-1, keepdims=True)
        out_mode = jnp.take_along_axis(s, best, axis=-1)[..., 0]
        count = jnp.take_along_axis(counts, best, axis=-1)[..., 0]
    if keepdims and kept_shape is not None:
        out_mode, count = jnp.reshape(out_mode, kept_shape), jnp.reshape(count, kept_shape)
    elif keepdims:
        out_mode, count = jnp.expand_dims(out_mode, axis), jnp.expand_dims(count, axis)
    return ModeResult(out_mode, count)


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(
    a: ArrayLike, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"
) -> Any:
    """Ranks (from 1) of the data along `axis`, with ties resolved by `method`.

    Args:
      a: the data.
      method: "average" (mean rank of the tied values), "min", "max", "dense"
        (consecutive ranks of distinct values) or "ordinal" (ties in order of
        appearance).
      axis: the axis to rank along (the flattened array if None).
      nan_policy: only "propagate" is supported: with "average", a slice that
        holds a NaN is all NaN (as in SciPy); the integer methods rank NaNs last.

    Returns:
      Float ranks for "average", default-integer ranks otherwise.

    Raises:
      ValueError: an unknown `method` or `nan_policy`.
      NotImplementedError: `nan_policy` is "omit" or "raise".

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import stats
      >>> stats.rankdata(np.array([3, 1, 1, 2]))
      Array([4. , 1.5, 1.5, 3. ], dtype=float32)
    """
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: method must be one of {list(_RANK_METHODS)}, got {method!r}.")
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    _u.check_arraylike("rankdata", a)
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _u.canonicalize_axis(axis, a.ndim)
    x = jnp.moveaxis(a, axis, -1)
    n = x.shape[-1]
    order = jnp.argsort(x, axis=-1, stable=True)
    # The inverse permutation: where each element went in the sorted order.
    inverse = jnp.argsort(order, axis=-1)
    if method == "ordinal":
        ranks = inverse + 1
    elif n == 0:
        ranks = inverse.astype(float) if method == "average" else inverse
    else:
        s = jnp.take_along_axis(x, order, axis=-1)
        start, end = _runs(s)
        if method == "dense":
            # Each new value starts a run: the dense rank counts the runs so far.
            first = jnp.ones(s.shape[:-1] + (1,), bool)
            new = jnp.concatenate([first, s[..., 1:] != s[..., :-1]], axis=-1)
            per_sorted = jnp.cumsum(new.astype(int), axis=-1)
        elif method == "min":
            per_sorted = start + 1
        elif method == "max":
            per_sorted = end + 1
        else:
            per_sorted = (start + end) / 2 + 1
        ranks = jnp.take_along_axis(per_sorted, inverse, axis=-1)
        if method == "average" and jnp.issubdtype(x.dtype, jnp.inexact):
            has_nan = jnp.any(jnp.isnan(x), axis=-1, keepdims=True)
            ranks = jnp.where(has_nan, jnp.full_like(ranks, np.nan), ranks)
    return jnp.moveaxis(ranks, -1, axis)


def sem(
    a: ArrayLike,
    axis: int | None = 0,
    ddof: int = 1,
    nan_policy: str = "propagate",
    *,
    keepdims: bool = False,
) -> Any:
    """The standard error of the mean, `std(a, ddof=ddof) / sqrt(n)`, along `axis`.

    Args:
      a: the sample.
      axis: the axis to reduce (all if None).
      ddof: the delta degrees of freedom of the standard deviation.
      nan_policy: "propagate" (NaNs give NaN) or "omit" (NaNs are left out).
      keepdims: keep the reduced axis with size 1.

    Raises:
      NotImplementedError: `nan_policy` is "raise".

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import stats
      >>> stats.sem(np.array([1.0, 2.0, 3.0, 4.0]))
      Array(0.6454972, dtype=float32)
    """
    _check_nan_policy("sem", nan_policy, ("propagate", "omit"))
    _u.check_arraylike("sem", a)
    (a,) = _u.promote_dtypes_inexact(a)
    a = jnp.asarray(a)
    if nan_policy == "omit":
        n = jnp.sum(~jnp.isnan(a), axis=axis, keepdims=keepdims)
        std = jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
        return std / jnp.sqrt(n.astype(std.dtype))
    axes = _u.reduction_axes(axis, a.ndim)
    n = math.prod(a.shape[i] for i in axes)
    std = jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
    return std / math.sqrt(n)
