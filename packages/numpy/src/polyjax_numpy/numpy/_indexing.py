"""Indexing of `jnp` arrays: `x[idx]`.

Basic indexing (ints, slices with any step, `None`, `...`) becomes static lax
structural ops: `slice`, `rev`, `squeeze` and `broadcast_in_dim` (for `None`).
Integer indices out of range raise `IndexError`, as NumPy does.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from polyjax_core import symbolic_dims as sd
from polyjax_core.tracing import Tracer
from polyjax_interpreters.array import Array
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u


def getitem(x: Any, idx: Any) -> Any:
    """Basic indexing: ints, slices, None and Ellipsis, via slice/rev/squeeze/broadcast."""
    shape = _u.shape(x)
    ndim = len(shape)
    items = idx if isinstance(idx, tuple) else (idx,)
    items = tuple(_normalize_index_item(i, pos) for pos, i in enumerate(items))
    n_ellipsis = sum(1 for i in items if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(
            f"Too many indices: {ndim}-dimensional array indexed with {consumed} regular indices."
        )
    fill = (_builtin_slice(None),) * (ndim - consumed)
    if n_ellipsis:
        at = items.index(Ellipsis)
        items = items[:at] + fill + items[at + 1 :]
    else:
        items = items + fill

    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_axes: list[int] = []
    int_axes: list[int] = []
    new_axes: list[int] = []  # positions in the result
    axis, out_axis = 0, 0
    for item in items:
        if item is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        size = shape[axis]
        if isinstance(item, int):
            i = _normalize_int_index(item, axis, size)
            starts[axis], limits[axis] = i, i + 1
            int_axes.append(axis)
        else:
            start, limit, stride, rev = _slice_bounds(item, size)
            starts[axis], limits[axis], strides[axis] = start, limit, stride
            if rev:
                reversed_axes.append(axis)
            out_axis += 1
        axis += 1

    out = x
    if not (
        all(type(s) is int and s == 0 for s in starts)
        and sd.definitely_equal_shape(limits, shape)
        and all(s == 1 for s in strides)
    ):
        out = _shape_ops.slice(
            out, starts, limits, None if all(s == 1 for s in strides) else strides
        )
    if reversed_axes:
        out = _shape_ops.rev(out, reversed_axes)
    if int_axes:
        out = _shape_ops.squeeze(out, int_axes)
    if new_axes:
        out = _shape_ops.expand_dims(out, new_axes)
    return out


_builtin_slice = slice


def _normalize_index_item(item: Any, position: int) -> Any:
    if item is None or item is Ellipsis or isinstance(item, _builtin_slice):
        if isinstance(item, _builtin_slice):
            return _builtin_slice(
                *(_static_int(v, position) for v in (item.start, item.stop, item.step))
            )
        return item
    if isinstance(item, bool | np.bool_):
        raise NotImplementedError(
            "Boolean scalar indices are not supported yet (advanced indexing comes with the "
            "NumPy API)."
        )
    if isinstance(item, int | np.integer):
        return operator.index(item)
    if isinstance(item, Array) and item.ndim == 0 and _u.issubdtype_of(item, np.integer):
        return operator.index(item)  # a concrete index: read it on the host
    if isinstance(item, (*_u.ARRAY_TYPES, np.ndarray, list, tuple)):
        raise NotImplementedError(
            f"Indexing with {type(item).__name__} indices (advanced or dynamic indexing) is not "
            "supported yet: only ints, slices, None and Ellipsis."
        )
    dtype = getattr(item, "dtype", None)
    raise TypeError(
        f"Indexer must have integer or boolean type, got indexer with type "
        f"{getattr(dtype, 'name', type(item).__name__)} at position {position}, indexer "
        f"value {item!r}"
    )


def _static_int(v: Any, position: int) -> int | None:
    if v is None:
        return None
    if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
        return operator.index(v)
    if isinstance(v, Array) and v.ndim == 0 and _u.issubdtype_of(v, np.integer):
        return operator.index(v)
    if isinstance(v, Tracer):
        raise NotImplementedError(
            "Slices with traced bounds (dynamic slicing) are not supported yet; use static ints."
        )
    raise TypeError(
        f"Slice entries must be integers or None, got {v!r} at position {position} of the index."
    )


def _normalize_int_index(i: int, axis: int, size: Any) -> int:
    if type(size) is not int:
        if i >= 0 and _known_ge(size, i + 1):
            return i
        raise NotImplementedError(
            f"Integer index {i} into the symbolic axis {axis} of size {size}: only indices that "
            "are provably in range (non-negative, below the size's lower bound) are supported."
        )
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
    return i + size if i < 0 else i


def _known_ge(a: Any, b: int) -> bool:
    try:
        return bool(a >= b)
    except sd.InconclusiveDimensionOperation:
        return False


def _slice_bounds(s: slice, size: Any) -> tuple[Any, Any, int, bool]:
    """(start, limit, stride, reversed) for `lax.slice` (and `rev`) implementing `s`."""
    step = 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if type(size) is not int:
        if s.start is None and s.stop is None and step in (1, -1):
            return 0, size, 1, step == -1
        raise NotImplementedError(
            f"Slicing a symbolic axis of size {size} with {s} is not supported yet: only ':' "
            "and '::-1'."
        )
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    if n == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (n - 1) * step + 1, step, False
    last = start + (n - 1) * step  # the smallest index taken
    return last, start + 1, -step, True
