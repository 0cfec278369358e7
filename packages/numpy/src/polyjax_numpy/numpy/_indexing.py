"""Indexing of `jnp` arrays: `x[idx]`, the scatters behind `x.at[idx]`, `take` and friends.

An index means what it means in NumPy: ints, slices, `None`, `...`, integer
arrays (NumPy arrays, polyjax arrays, tracers, lists inside a tuple) and
boolean masks, in any mix. Where the advanced (array) indices' axes go follows
NumPy: in place of the indices when those are adjacent in the index tuple, in
front otherwise. JAX's differences from NumPy are kept:

* Out-of-bound indices do not raise. Reads clamp them into range (the default
  "promise_in_bounds" and "clip" modes) or return a fill value ("fill");
  updates drop them (the default) or clamp them ("clip"). A negative index is
  wrapped once, by adding the axis size, before that.
* A list as the whole index (`x[[0, 1]]`) is a `TypeError`: write
  `x[jnp.array([0, 1])]` or `x[0, 1]` for what you mean.
* A boolean mask must be concrete (the result's shape depends on its values):
  a traced mask raises `NonConcreteBooleanIndexError`.
* Slice bounds must be static: `x[i:i + 2]` with a traced `i` raises
  `IndexError` (use `lax.dynamic_slice`).

How an index becomes lax operations, cheapest first:

    x[1, ::2, None]       static ints and slices: `slice`, `rev`, `squeeze`, `broadcast_in_dim`
    x[i, 1:]  (i traced)  ... and one `dynamic_slice` for the traced ints
    x[idx, :, 0]          advanced indices: static slicing, then one `gather`
    x.at[idx].add(y)      one `scatter-add` (`scatter`, `-sub`, `-mul`, `-min`, `-max`)

`_parse` reads an index into one entry per item of the index tuple (with the
ellipsis expanded); `_indexer` turns entries into the index vectors and
dimension numbers of a gather or a scatter: advanced indices become index
vector components, unit-step slices windows (their start a constant
component), other slices an `iota` component of their own.
"""

from __future__ import annotations

import operator
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import jax_array_error
from polyjax_core.errors import NonConcreteBooleanIndexError
from polyjax_core.tracing import Tracer
from polyjax_interpreters.array import Array
from polyjax_numpy.indexing import Slice
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops, _slicing
from polyjax_numpy.lax._slicing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from polyjax_numpy.numpy import _manipulation, _ufuncs
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray

__all__ = [
    "getitem",
    "put",
    "put_along_axis",
    "scatter_update",
    "take",
    "take_along_axis",
]

_builtin_slice = slice
_BOOL = np.dtype(bool)
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------
# Parsing an index


class _Entry(NamedTuple):
    """One item of an index tuple, placed on the operand's axes.

    kind: "new" (None), "slice", "int" (a scalar, static or traced), "array"
      (integer arrays, one per axis; a boolean mask gives one per mask axis) or
      "bool" (a scalar boolean: an advanced index over no axis).
    pos: the item's position in the index tuple (for NumPy's adjacency rule).
    axes: the operand axes it indexes.
    value: slice: the `slice`; int: an int or a rank-0 tracer; array: a tuple of
      index arrays; bool: the bool.
    shape: for advanced entries, the shape they broadcast with the others.
    """

    kind: str
    pos: int
    axes: tuple[int, ...] = ()
    value: Any = None
    shape: tuple = ()


class _Parsed(NamedTuple):
    entries: list[_Entry]
    advanced: bool  # any array or boolean index: NumPy's advanced indexing
    adjacent: bool  # the advanced entries are next to each other in the index


_ADVANCED_KINDS = ("int", "array", "bool")


def _index_tuple(idx: Any) -> tuple:
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, list):
        # NumPy guesses whether a list is one array index or several indices; JAX
        # (and polyjax) refuse to guess.
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
            "`arr[array(seq)]` instead of `arr[seq]` for an array index, or `arr[tuple(seq)]` "
            "for one index per axis."
        )
    return (idx,)


def _indexer_type_error(item: Any, position: int) -> TypeError:
    dtype = getattr(item, "dtype", None)
    kind = getattr(dtype, "name", None) or type(item).__name__
    return TypeError(
        f"Indexer must have integer or boolean type, got indexer with type {kind} at position "
        f"{position}, indexer value {item!r}"
    )


def _static_bound(v: Any, position: int, s: slice) -> int | None:
    if v is None:
        return None
    if isinstance(v, Tracer):
        raise IndexError(
            "Array slice indices must have static start/stop/step to be used with NumPy "
            f"indexing syntax. Found {s} at position {position}. To index a statically sized "
            "array at a dynamic position, use lax.dynamic_slice or "
            "lax.dynamic_update_slice (a slice of traced length would give a shape that is "
            "not static)."
        )
    if isinstance(v, Array) and v.ndim == 0 and _u.issubdtype_of(v, np.integer):
        return operator.index(v)
    if isinstance(v, int | np.integer):
        return operator.index(v)
    if sd.is_symbolic_dim(v) and v is not s.step:  # `x[: x.shape[0] // 2]` under export
        return v
    if sd.is_symbolic_dim(v):
        raise NotImplementedError(
            f"A slice step that is a symbolic dimension ({s} at position {position}) is not "
            "supported: the step must be an int."
        )
    raise TypeError(
        f"Slice entries must be integers or None, got {v!r} at position {position} of the index."
    )


def _concrete_mask(item: Any) -> np.ndarray:
    if isinstance(item, Tracer):
        value = item.to_concrete_value()
        if value is None:
            raise NonConcreteBooleanIndexError(item)
        return np.asarray(value)
    return np.asarray(item)


def _sequence_index(seq: Sequence[Any], position: int) -> Any:
    """A list or tuple inside an index tuple: an integer (or boolean) array index."""
    if any(isinstance(e, _u.ARRAY_TYPES) for e in _flat(seq)):
        return asarray(seq)
    host = np.asarray(seq)
    if host.size == 0:
        return host.astype(np.int32)  # `[]` selects nothing (NumPy reads it as integer)
    if host.dtype != _BOOL and not np.issubdtype(host.dtype, np.integer):
        raise _indexer_type_error(host, position)
    return host


def _flat(seq: Any) -> list[Any]:
    if isinstance(seq, list | tuple):
        return [e for s in seq for e in _flat(s)]
    return [seq]


def _classify(item: Any, position: int) -> tuple[str, Any]:
    """(kind, value) of one index item; kinds as `_Entry`, plus "ellipsis" and "mask"."""
    if item is None:
        return "new", None
    if item is Ellipsis:
        return "ellipsis", None
    if isinstance(item, _builtin_slice):
        bounds = (_static_bound(v, position, item) for v in (item.start, item.stop, item.step))
        return "slice", _builtin_slice(*bounds)
    if isinstance(item, Slice):
        return "dslice", _dslice_start(item, position)
    if isinstance(item, bool | np.bool_):
        return "bool", bool(item)
    if isinstance(item, int | np.integer):
        return "int", operator.index(item)
    if sd.is_symbolic_dim(item):  # JAX's error: a dimension is not an index
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and integer or "
            f"boolean arrays are valid indices. Got {item}"
        )
    if isinstance(item, list | tuple):
        item = _sequence_index(item, position)
    elif hasattr(item, "__jax_array__") and not isinstance(item, _u.ARRAY_TYPES):
        raise jax_array_error()  # as in JAX: indexing does not convert it
    if not isinstance(item, _u.ARRAY_TYPES + (np.ndarray, np.generic)):
        raise _indexer_type_error(item, position)
    dtype = _u.dtype(item)
    if dtype == _BOOL:
        mask = _concrete_mask(item)
        return ("bool", bool(mask)) if mask.ndim == 0 else ("mask", mask)
    if not dtypes.issubdtype(dtype, np.integer):
        raise _indexer_type_error(item, position)
    if _u.ndim(item) == 0:
        if isinstance(item, Tracer):
            return "int", item
        # A concrete scalar (host or device): read it, for the static slicing path.
        return "int", operator.index(item[()] if isinstance(item, np.ndarray) else item)
    return "array", item


def _dslice_start(item: Slice, position: int) -> Slice:
    """`item` with its start an int or an integer scalar (checked)."""
    start = item.start
    if isinstance(start, int | np.integer):
        return Slice(operator.index(start), item.size, item.stride)
    if not isinstance(start, _u.ARRAY_TYPES + (np.ndarray,)) or _u.ndim(start) != 0:
        raise TypeError(
            f"ds: the start at position {position} must be an integer scalar, got {start!r}"
        )
    if not dtypes.issubdtype(_u.dtype(start), np.integer):
        raise TypeError(
            f"ds: the start at position {position} must be an integer, got {_u.dtype(start).name}"
        )
    return item


def _n_axes(kind: str, value: Any) -> int:
    if kind in ("slice", "dslice", "int", "array"):
        return 1
    if kind == "mask":
        return value.ndim
    return 0


def _parse(shape: tuple, idx: Any) -> _Parsed:
    items = _index_tuple(idx)
    raw = [(*_classify(item, pos), pos) for pos, item in enumerate(items)]
    ellipses = [pos for kind, _, pos in raw if kind == "ellipsis"]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim = len(shape)
    consumed = sum(_n_axes(kind, value) for kind, value, _ in raw)
    if consumed > ndim:
        raise IndexError(
            f"Too many indices: {ndim}-dimensional array indexed with {consumed} regular indices."
        )
    # Unindexed axes are taken whole, at the ellipsis (else at the end). They keep
    # the ellipsis' position: an ellipsis between advanced indices separates them
    # even where it stands for no axis, as in NumPy.
    at = ellipses[0] if ellipses else len(items)
    fill = [("slice", _builtin_slice(None), at)] * (ndim - consumed)
    raw = raw[:at] + fill + raw[at + 1 :]

    entries: list[_Entry] = []
    axis = 0
    for kind, value, pos in raw:
        if kind == "new":
            entries.append(_Entry("new", pos))
        elif kind == "bool":
            entries.append(_Entry("bool", pos, (), value, (1 if value else 0,)))
        elif kind == "mask":
            k = value.ndim
            _check_mask_shape(value.shape, shape[axis : axis + k], axis)
            nonzero = tuple(i.astype(np.int32) for i in np.nonzero(value))
            axes = tuple(range(axis, axis + k))
            entries.append(_Entry("array", pos, axes, nonzero, (len(nonzero[0]),)))
            axis += k
        elif kind == "array":
            entries.append(_Entry("array", pos, (axis,), (value,), tuple(_u.shape(value))))
            axis += 1
        else:  # slice, dslice or int
            entries.append(_Entry(kind, pos, (axis,), value))
            axis += 1
    # A `ds` slice (its start may be traced) is a window of the gather, as advanced
    # indices are.
    advanced = any(e.kind in ("array", "bool", "dslice") for e in entries)
    positions = [e.pos for e in entries if e.kind in _ADVANCED_KINDS]
    adjacent = not positions or max(positions) - min(positions) + 1 == len(positions)
    return _Parsed(entries, advanced, adjacent)


def _check_mask_shape(mask_shape: tuple, axes_shape: tuple, first_axis: int) -> None:
    for i, (m, d) in enumerate(zip(mask_shape, axes_shape)):
        if not sd.definitely_equal(m, d):
            raise IndexError(
                f"boolean index did not match indexed array along axis {first_axis + i}; size "
                f"of axis is {d} but size of corresponding boolean axis is {m}"
            )


# ---------------------------------------------------------------------------
# Static slices and ints


def _slice_bounds(s: slice, size: Any) -> tuple[Any, Any, int, bool]:
    """(start, limit, stride, reversed) for `lax.slice` (then `rev`) implementing `s`."""
    step = 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if type(size) is not int or _has_symbolic_bound(s):
        if s.start is None and s.stop is None and step in (1, -1):
            return 0, size, 1, step == -1
        return _symbolic_slice_bounds(s, size, step)
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    if n == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (n - 1) * step + 1, step, False
    last = start + (n - 1) * step  # the smallest index taken
    return last, start + 1, -step, True


def _symbolic_slice_bounds(s: slice, size: Any, step: int) -> tuple[Any, Any, int, bool]:
    """`_slice_bounds` for an axis of symbolic size: Python's rules for `slice.indices`,
    written with `dim_min`/`dim_max` where the bounds of `size` do not decide them."""
    for bound in (s.start, s.stop):
        if bound is not None and not isinstance(bound, int | np.integer | sd.DimExpr):
            raise TypeError(f"Slice bounds must be integers, got {s}")
    if step > 0:
        start = _clamped_bound(s.start, size, 0, 0, size)
        stop = _clamped_bound(s.stop, size, size, 0, size)
        return start, sd.dim_max(start, stop), step, False
    # Negative steps walk down from `high - 1` to `low` (both in range): the forward
    # slice starts at the lowest index taken, and is reversed.
    high = _clamped_bound(s.start, size, size - 1, -1, size - 1) + 1
    low = _clamped_bound(s.stop, size, -1, -1, size - 1) + 1
    high = sd.dim_max(low, high)
    k = -step
    first = low if k == 1 else sd.dim_min(low + (high - low - 1) % k, high)
    return first, high, k, True


def _clamped_bound(i: Any, size: Any, default: Any, lo: int, hi: Any) -> Any:
    """A slice bound as `slice.indices` computes it: negative ones count from the end,
    then each is clamped into `[lo, hi]`."""
    if i is None:
        return default
    i = i if sd.is_symbolic_dim(i) else int(i)
    # A symbolic bound's sign must be known (else InconclusiveDimensionOperation, as JAX).
    return sd.dim_max(lo, size + i) if i < 0 else sd.dim_min(i, hi)


def _has_symbolic_bound(s: slice) -> bool:
    return sd.is_symbolic_dim(s.start) or sd.is_symbolic_dim(s.stop)


def _slice_params(s: slice, size: Any) -> tuple[Any, Any, int]:
    """(start, count, step): the slice takes `start + step * k` for `k < count`."""
    if type(size) is not int or _has_symbolic_bound(s):
        step = 1 if s.step is None else s.step
        if s.start is None and s.stop is None and step == 1:
            return 0, size, 1
        if step == 0:
            raise ValueError("slice step cannot be zero")
        first, limit, stride, rev = _symbolic_slice_bounds(s, size, step)
        count = (limit - first + stride - 1) // stride
        return (first + (count - 1) * stride, count, -stride) if rev else (first, count, stride)
    start, stop, step = s.indices(size)
    return start, len(range(start, stop, step)), step


def _static_int(i: int, axis: int, size: Any, clamp: bool, wrap: bool = True) -> int:
    """A static int index wrapped once if negative (if `wrap`), then clamped into range
    if `clamp`."""
    if type(size) is not int:
        if i >= 0 and _known_ge(size, i + 1):
            return i
        raise NotImplementedError(
            f"Integer index {i} into the symbolic axis {axis} of size {size}: only indices that "
            "are provably in range (non-negative, below the size's lower bound) are supported."
        )
    if size == 0:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size 0")
    i = i + size if wrap and i < 0 else i
    return min(max(i, 0), size - 1) if clamp else i


def _symbolic_out_of_range(i: int, size: Any) -> bool:
    """Whether the static index `i` into an axis of symbolic `size` may be out of range."""
    return type(size) is not int and not (i >= 0 and _known_ge(size, i + 1))


def _known_ge(a: Any, b: int) -> bool:
    try:
        return bool(a >= b)
    except sd.InconclusiveDimensionOperation:
        return False


def _apply_slices(
    x: Any, entries: list[_Entry], static_ints: bool = False
) -> tuple[Any, list[_Entry]]:
    """Applies the slice entries with static `slice`/`rev`; they become whole axes.

    With `static_ints`, static int entries (in range) are sliced to size 1 too.
    """
    shape = _u.shape(x)
    ndim = len(shape)
    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_axes = []
    out_entries = []
    for e in entries:
        if e.kind == "slice":
            (axis,) = e.axes
            start, limit, stride, rev = _slice_bounds(e.value, shape[axis])
            starts[axis], limits[axis], strides[axis] = start, limit, stride
            if rev:
                reversed_axes.append(axis)
            e = e._replace(value=_builtin_slice(None))
        elif static_ints and e.kind == "int" and isinstance(e.value, int):
            (axis,) = e.axes
            starts[axis], limits[axis] = e.value, e.value + 1
        out_entries.append(e)
    if not (
        all(type(s) is int and s == 0 for s in starts)
        and sd.definitely_equal_shape(limits, shape)
        and all(s == 1 for s in strides)
    ):
        x = _shape_ops.slice(x, starts, limits, strides)
    if reversed_axes:
        x = _shape_ops.rev(x, reversed_axes)
    return x, out_entries


def _new_axis_positions(entries: list[_Entry]) -> list[int]:
    """Result positions of the None axes, for indices with no advanced entry."""
    positions, out_axis = [], 0
    for e in entries:
        if e.kind == "new":
            positions.append(out_axis)
            out_axis += 1
        elif e.kind == "slice":
            out_axis += 1
    return positions


def _basic_getitem(x: Any, entries: list[_Entry], wrap: bool = True) -> Any:
    """Static ints and slices, None, and traced scalar ints (one `dynamic_slice`).

    Negative ints count from the end once if `wrap`; then ints are clamped.
    """
    shape = _u.shape(x)
    static_entries, dynamic, int_axes = [], {}, []
    for e in entries:
        if e.kind == "int":
            (axis,) = e.axes
            int_axes.append(axis)
            if isinstance(e.value, int) and not _symbolic_out_of_range(e.value, shape[axis]):
                e = e._replace(value=_static_int(e.value, axis, shape[axis], True, wrap))
            else:
                # Traced, or an int that may fall outside a symbolic axis: wrapped and
                # clamped at run time (as JAX does).
                if isinstance(e.value, int):
                    e = e._replace(value=np.int32(e.value))
                dynamic[axis] = e.value
        static_entries.append(e)
    out, _ = _apply_slices(x, static_entries, static_ints=True)
    if dynamic:
        sizes = list(_u.shape(out))
        starts: list[Any] = [0] * len(sizes)
        for axis, i in dynamic.items():
            if sd.definitely_equal(sizes[axis], 0):
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            starts[axis], sizes[axis] = i, 1
        out = _slicing.dynamic_slice(out, starts, sizes, allow_negative_indices=wrap)
    if int_axes:
        out = _shape_ops.squeeze(out, int_axes)
    new_axes = _new_axis_positions(entries)
    return _shape_ops.expand_dims(out, new_axes) if new_axes else out


# ---------------------------------------------------------------------------
# Gather and scatter index vectors


class _Indexer(NamedTuple):
    """A gather (or the matching scatter) computing `x[idx]`.

    indices: the index vectors, of shape `batch_shape + (len(start_index_map),)`.
    start_index_map: the operand axis of each index vector component.
    collapsed: operand axes indexed elementwise (window size 1, dropped).
    slice_sizes: the window size along each operand axis.
    offset_dims: positions of the window axes in the gather's output.
    gather_shape: the gather's output shape (the result without None axes).
    new_axes: positions of the None axes in the result.
    result_shape: the shape of `x[idx]`.
    """

    indices: Any
    start_index_map: tuple[int, ...]
    collapsed: tuple[int, ...]
    slice_sizes: tuple
    offset_dims: tuple[int, ...]
    gather_shape: tuple
    new_axes: tuple[int, ...]
    result_shape: tuple


def _index_dtype(shape: Sequence[Any]) -> np.dtype:
    big = any(type(d) is int and d >= 2**31 - 1 for d in shape)
    return dtypes.canonicalize_dtype(np.int64) if big else np.dtype(np.int32)


def _is_host(x: Any) -> bool:
    return isinstance(x, np.ndarray | np.generic | int)


def _wrap_negative(i: Any, size: Any, dtype: np.dtype, wrap: bool = True) -> Any:
    """Index `i` as `dtype`, negative values wrapped once by adding `size` (if `wrap`)."""
    if _is_host(i) and type(size) is int:
        i = np.asarray(i)
        if wrap and dtypes.issubdtype(i.dtype, np.signedinteger):
            i = np.where(i < 0, i.astype(np.int64) + size, i)
        return i.astype(dtype)
    idx_dtype = _u.dtype(i)
    if wrap and dtypes.issubdtype(idx_dtype, np.signedinteger):
        # Wrap in a type wide enough for `size` (int8 indices into 1000 elements).
        wide = dtypes.promote_types(idx_dtype, dtype)
        i = lax._convert_element_type(i, wide)
        i = lax.select_n(
            lax.lt(i, _u.scalar_like(0, i)), i, lax.add(i, _slicing._dim_as(size, wide))
        )
    return lax._convert_element_type(i, dtype)


def _indexer(shape: tuple, entries: list[_Entry], adjacent: bool, wrap: bool = True) -> _Indexer:
    dtype = _index_dtype(shape)
    advanced = [e for e in entries if e.kind in _ADVANCED_KINDS]
    adv_shapes = [tuple(e.shape) for e in advanced]
    try:
        adv_shape = tuple(sd.broadcast_shapes(*adv_shapes)) if advanced else ()
    except ValueError as err:
        shown = " ".join(str(s) for s in adv_shapes)
        raise IndexError(
            f"shape mismatch: indexing arrays could not be broadcast together with shapes {shown}"
        ) from err

    # The result's axes, in order: ("new",), ("adv",) for the block of broadcast
    # advanced-index axes, ("window", axis, size) for unit-step slices and
    # ("strided", axis, count) for the other slices.
    layout: list[tuple] = []
    if advanced and not adjacent:
        layout.append(("adv",))
    columns: list[tuple[int, Any]] = []  # (operand axis, a column builder)
    strided = []
    slice_sizes = list(shape)
    for e in entries:
        if e.kind == "new":
            layout.append(("new",))
        elif e.kind in ("slice", "dslice"):
            (axis,) = e.axes
            if e.kind == "slice":
                start, count, step = _slice_params(e.value, shape[axis])
            else:
                start = _wrap_negative(e.value.start, shape[axis], dtype, wrap)
                count, step = e.value.size, e.value.stride
            if step == 1:
                layout.append(("window", axis, count))
                slice_sizes[axis] = count
                if not (type(start) is int and start == 0):
                    columns.append((axis, ("const", start)))
            else:
                layout.append(("strided", axis, count))
                strided.append((axis, start, step, count))
                slice_sizes[axis] = 1
        else:
            if ("adv",) not in layout:
                layout.append(("adv",))
            for axis, value in zip(e.axes, _entry_arrays(e)):
                columns.append((axis, ("adv", _wrap_negative(value, shape[axis], dtype, wrap))))
                slice_sizes[axis] = 1

    result_shape, gather_shape, batch_shape = [], [], []
    offset_dims, new_axes, adv_batch_dims, strided_batch_dim = [], [], [], {}
    for item in layout:
        if item[0] == "new":
            new_axes.append(len(result_shape))
            result_shape.append(1)
            continue
        if item[0] == "adv":
            sizes = adv_shape
            adv_batch_dims = list(range(len(batch_shape), len(batch_shape) + len(sizes)))
            batch_shape.extend(sizes)
        elif item[0] == "window":
            sizes = (item[2],)
            offset_dims.append(len(gather_shape))
        else:
            sizes = (item[2],)
            strided_batch_dim[item[1]] = len(batch_shape)
            batch_shape.append(item[2])
        result_shape.extend(sizes)
        gather_shape.extend(sizes)
    for axis, start, step, count in strided:
        columns.append((axis, ("iota", start, step, count, strided_batch_dim[axis])))

    batch_shape_t = tuple(batch_shape)
    built = [_column(src, batch_shape_t, adv_batch_dims, dtype) for _, src in columns]
    indices = _stack_columns(built, batch_shape_t, dtype)
    collapsed = tuple(sorted(a for e in advanced for a in e.axes) + [a for a, *_ in strided])
    return _Indexer(
        indices=indices,
        start_index_map=tuple(axis for axis, _ in columns),
        collapsed=tuple(sorted(collapsed)),
        slice_sizes=tuple(slice_sizes),
        offset_dims=tuple(offset_dims),
        gather_shape=tuple(gather_shape),
        new_axes=tuple(new_axes),
        result_shape=tuple(result_shape),
    )


def _entry_arrays(e: _Entry) -> tuple:
    if e.kind == "int":
        return (e.value,)
    if e.kind == "array":
        return e.value
    return ()  # a boolean scalar indexes no axis


def _column(src: tuple, batch_shape: tuple, adv_dims: list[int], dtype: np.dtype) -> Any:
    """One index vector component broadcast to `batch_shape` (host values stay NumPy)."""
    kind = src[0]
    if kind == "const":
        if sd.is_symbolic_dim(src[1]):  # a start computed from the axis size
            return _u.convert(_u.from_protocol(src[1]), dtype)
        return np.asarray(src[1], dtype) if type(src[1]) is int else src[1]
    if kind == "iota":
        _, start, step, count, dim = src
        if sd.is_symbolic_dim(count) or sd.is_symbolic_dim(start) or not _is_host(start):
            shape = tuple(count if d == dim else 1 for d in range(len(batch_shape)))
            values = _shape_ops.broadcasted_iota(dtype, shape, dim) * step + start
            return _u.convert(values, dtype)
        values = np.arange(count, dtype=np.int64) * step + start
        return np.reshape(
            values.astype(dtype), [count if d == dim else 1 for d in range(len(batch_shape))]
        )
    value = src[1]
    # An advanced index lives on the last `ndim(value)` axes of the advanced block.
    dims = adv_dims[len(adv_dims) - _u.ndim(value) :]
    if _is_host(value):
        value = np.asarray(value)
        return np.reshape(
            value, [value.shape[dims.index(d)] if d in dims else 1 for d in range(len(batch_shape))]
        )
    shape = [1] * len(batch_shape)
    for d, n in zip(dims, _u.shape(value)):
        shape[d] = n
    return _shape_ops.broadcast_in_dim(value, tuple(shape), tuple(dims))


def _stack_columns(columns: list[Any], batch_shape: tuple, dtype: np.dtype) -> Any:
    """The columns (each broadcastable to `batch_shape`) stacked on a new last axis."""
    if all(_is_host(c) for c in columns) and all(type(d) is int for d in batch_shape):
        out = np.empty((*batch_shape, len(columns)), dtype)
        for k, c in enumerate(columns):
            out[..., k] = c
        return out
    full_shape = (*batch_shape, 1)
    parts = []
    for c in columns:
        rank = np.ndim(c) if _is_host(c) else _u.ndim(c)
        dims = tuple(range(len(batch_shape) - rank, len(batch_shape)))
        parts.append(_shape_ops.broadcast_in_dim(c, full_shape, dims))
    return _shape_ops.concatenate(parts, len(batch_shape))


# ---------------------------------------------------------------------------
# x[idx] and x.at[idx].get()


def _gather_mode(mode: Any) -> GatherScatterMode:
    # Unlike `lax.gather` (whose None means "fill"), indexing clamps by default.
    return GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)


def _size_is_zero(shape: Sequence[Any]) -> bool:
    return any(sd.definitely_equal(d, 0) for d in shape)


def _filled(x: Any, shape: tuple, value: Any) -> Any:
    aval = _u.aval(x)
    return _u.convert(_shape_ops.full(shape, value, aval.dtype), aval.dtype, aval.weak_type)


def getitem(
    x: Any,
    idx: Any,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
    normalize_indices: bool = True,
) -> Any:
    """`x[idx]` with NumPy's indexing rules and JAX's out-of-bound behaviour.

    Args:
      x: an array or tracer.
      idx: an index: ints, slices, None, Ellipsis, integer or boolean arrays, or a
        tuple of these.
      indices_are_sorted, unique_indices: promises passed on to the gather.
      mode: out-of-bound indices: None or "promise_in_bounds" (clamped, as XLA
        does), "clip" (clamped), "fill" (read as `fill_value`).
      fill_value: for mode="fill"; by default NaN for inexact types, the minimum
        of signed, the maximum of unsigned integers, True for booleans.
      normalize_indices: whether negative integer indices count from the end
        (once) before `mode` applies; `take`'s "clip" turns it off.

    Returns:
      The indexed array.

    Raises:
      TypeError: a list as the whole index, or an index of a non-integer type.
      IndexError: too many indices, several ellipses, traced slice bounds, or a
        boolean mask whose shape does not match.
      NonConcreteBooleanIndexError: a traced boolean mask.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.arange(12).reshape(3, 4)
      >>> x[jnp.array([2, 0]), 1:3]
      Array([[ 9, 10],
             [ 1,  2]], dtype=int32)
    """
    parsed = _parse(_u.shape(x), idx)
    mode = _gather_mode(mode)
    fill = mode is GatherScatterMode.FILL_OR_DROP
    has_ints = any(e.kind == "int" for e in parsed.entries)
    if not parsed.advanced and not (fill and has_ints):
        return _basic_getitem(x, parsed.entries, normalize_indices)
    x, entries = _apply_slices(x, parsed.entries)
    shape = _u.shape(x)
    ix = _indexer(shape, entries, parsed.adjacent, normalize_indices)
    if _size_is_zero(ix.result_shape):
        return _filled(x, ix.result_shape, 0)
    empty_axes = [a for a in ix.collapsed if sd.definitely_equal(shape[a], 0)]
    if empty_axes:
        if fill:
            fill_value = _slicing._default_fill(_u.dtype(x)) if fill_value is None else fill_value
            return _filled(x, ix.result_shape, fill_value)
        raise IndexError(f"index is out of bounds for axis {empty_axes[0]} with size 0")
    dnums = GatherDimensionNumbers(
        offset_dims=ix.offset_dims,
        collapsed_slice_dims=ix.collapsed,
        start_index_map=ix.start_index_map,
    )
    out = _slicing.gather(
        x,
        ix.indices,
        dnums,
        ix.slice_sizes,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
        fill_value=fill_value,
    )
    return _shape_ops.expand_dims(out, ix.new_axes) if ix.new_axes else out


# ---------------------------------------------------------------------------
# x.at[idx].set(y) and the other updates


_SCATTERS = {
    "set": _slicing.scatter,
    "add": _slicing.scatter_add,
    "sub": _slicing.scatter_sub,
    "mul": _slicing.scatter_mul,
    "min": _slicing.scatter_min,
    "max": _slicing.scatter_max,
}


def update_values(x: Any, values: Any, name: str) -> Any:
    """`values` as `x`'s dtype, warning (as JAX does) when the cast may lose information."""
    if isinstance(values, list | tuple):
        values = asarray(values)
    _u.check_arraylike(name, values)
    to = _u.dtype(x)
    if dtypes.result_type(to, values) != to:
        given = dtypes.dtype(values, canonicalize=True)  # what the value is: int32, not int64
        warnings.warn(
            f"{name}: scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={given.name} to dtype={to.name}. In future releases this "
            "will be an error.",
            FutureWarning,
            stacklevel=_user_stacklevel(),
        )
    return _u.convert(values, to)


def _user_stacklevel() -> int:
    """The `stacklevel` that makes a warning point at the first caller outside polyjax_numpy."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def broadcast_values(values: Any, shape: tuple, name: str) -> Any:
    """`values` broadcast to `shape` as NumPy broadcasts (trailing axes aligned).

    Raises:
      ValueError: they do not broadcast, in the words of the indexing operation `name`.
    """
    try:
        return _u.broadcast_to(values, tuple(shape))
    except ValueError:
        raise ValueError(
            f"{name}: values of shape {tuple(_u.shape(values))} cannot be broadcast to the "
            f"indexed shape {tuple(shape)}"
        ) from None


def scatter_update(
    x: Any,
    idx: Any,
    values: Any,
    kind: str,
    *,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
    func: Any = None,
    name: str = "scatter",
) -> Any:
    """`x` with `values` combined into `x[idx]`: one scatter of `kind`.

    Args:
      x: the array updated.
      idx: a NumPy index, as for `getitem`.
      values: broadcast to the shape of `x[idx]` and cast to `x`'s dtype
        (ignored for kind "apply").
      kind: "set", "add", "sub", "mul", "min", "max" or "apply" (with `func`).
      indices_are_sorted, unique_indices: promises passed on to the scatter.
      mode: None or "drop"/"fill"/"promise_in_bounds" drop out-of-bound
        updates; "clip" clamps their indices.
      func: the elementwise function of kind "apply".
      name: the function's name for error messages.

    Returns:
      An array of `x`'s shape and dtype.
    """
    shape = _u.shape(x)
    parsed = _parse(shape, idx)
    ix = _indexer(shape, parsed.entries, parsed.adjacent)
    if kind != "apply":
        values = update_values(x, values, name)
        values = broadcast_values(values, ix.result_shape, name)
        if ix.new_axes:
            values = _shape_ops.reshape(values, ix.gather_shape)
    if _size_is_zero(ix.gather_shape) or any(
        sd.definitely_equal(shape[a], 0) for a in ix.collapsed
    ):
        return x  # nothing to update (or nothing to update into)
    dnums = ScatterDimensionNumbers(
        update_window_dims=ix.offset_dims,
        inserted_window_dims=ix.collapsed,
        scatter_dims_to_operand_dims=ix.start_index_map,
    )
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    flags = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    if kind == "apply":
        return _slicing.scatter_apply(
            x, ix.indices, func, dnums, update_shape=ix.gather_shape, **flags
        )
    return _SCATTERS[kind](x, ix.indices, values, dnums, **flags)


# ---------------------------------------------------------------------------
# take, take_along_axis, put, put_along_axis


def _check_int_indices(name: str, indices: Any) -> None:
    if not _u.issubdtype_of(indices, np.integer):
        raise TypeError(f"{name}: indices must be of integer type, got {_u.dtype(indices).name}")


def _fit_indices(i: Any, size: int) -> Any:
    """Indices in a type that holds `size` (narrow integer indices become int32)."""
    if size > dtypes.iinfo(_u.dtype(i)).max:
        return _u.convert(i, _index_dtype((size,)))
    return i


def _wrap_mod(i: Any, size: int) -> Any:
    """Indices taken modulo `size` (NumPy's mode="wrap")."""
    i = _fit_indices(i, size)
    return _ufuncs.remainder(i, _u.scalar_like(size, i))


_TAKE_MODES = ("fill", "clip", "wrap")


def take(
    a: Any,
    indices: Any,
    axis: int | None = None,
    out: None = None,
    mode: str | None = None,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    fill_value: Any = None,
) -> Any:
    """Elements of `a` at `indices` along `axis` (NumPy's `take`, JAX's bounds).

    Args:
      a: the array.
      indices: an integer array of any shape.
      axis: the axis to take along; None flattens `a` first.
      out: unsupported (must be None).
      mode: out-of-bound indices: "fill" (the default: negative indices count
        from the end once, indices still out of range read `fill_value`),
        "clip" (clamped into `[0, size - 1]`, as NumPy: negative indices read
        the first element) or "wrap" (taken modulo the axis size). "raise" is
        not supported.
      unique_indices, indices_are_sorted: promises passed on to the gather.
      fill_value: the value read for out-of-bound indices with mode="fill".

    Returns:
      An array of shape `a.shape[:axis] + indices.shape + a.shape[axis + 1:]`.

    Raises:
      ValueError: `mode` is not one of the above.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.take(jnp.array([10., 20., 30.]), jnp.array([2, 5, -1]))
      Array([30., nan, 30.], dtype=float32)
      >>> jnp.take(jnp.array([10., 20., 30.]), jnp.array([2, 5, -1]), mode="clip")
      Array([30., 30., 10.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    _u.check_arraylike("take", a, indices)
    a, indices = asarray(a), asarray(indices)
    _check_int_indices("take", indices)
    a, axis = _manipulation.flat_or_axis(a, axis)
    if mode is None:
        mode = "fill"
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    # Only NumPy's names: JAX's take refuses the gather modes ("drop",
    # "promise_in_bounds", GatherScatterMode values).
    if isinstance(mode, GatherScatterMode) or mode not in _TAKE_MODES:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    size = _u.shape(a)[axis]
    if mode in ("wrap", "clip"):
        if sd.definitely_equal(size, 0) and not _size_is_zero(_u.shape(indices)):
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        if mode == "wrap" and not sd.definitely_equal(size, 0):
            indices = _wrap_mod(indices, size)
    return getitem(
        a,
        (_builtin_slice(None),) * axis + (indices,),
        mode={"fill": "fill", "clip": "clip", "wrap": "promise_in_bounds"}[mode],
        fill_value=fill_value,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        # NumPy's "clip" clamps negative indices to 0 (as JAX's take does).
        normalize_indices=mode != "clip",
    )


def _along_axis_shapes(
    name: str, arr_shape: tuple, idx_shape: tuple, axis: int, broadcast_arr: bool
) -> tuple:
    """The shape indices broadcast to (the index axis keeps its own size)."""
    if len(idx_shape) != len(arr_shape):
        raise ValueError(
            f"{name}: indices and arr must have the same number of dimensions; "
            f"{len(idx_shape)} vs. {len(arr_shape)}"
        )
    out = []
    for d, (a, i) in enumerate(zip(arr_shape, idx_shape)):
        if d == axis:
            out.append(i)
        elif sd.definitely_equal(a, i) or sd.definitely_equal(i, 1):
            out.append(a)
        elif broadcast_arr and sd.definitely_equal(a, 1):
            out.append(i)
        else:
            raise ValueError(
                f"{name}: indices of shape {tuple(idx_shape)} do not broadcast with arr of shape "
                f"{tuple(arr_shape)} along axis {d}"
            )
    return tuple(out)


def _along_axis_operands(name: str, arr: Any, indices: Any, axis: Any) -> tuple[Any, int, Any]:
    """Checked `(arr, axis, indices)` of `take/put_along_axis` (`arr` flat when `axis` is None)."""
    _u.check_arraylike(name, arr, indices)
    arr, indices = asarray(arr), asarray(indices)
    _check_int_indices(name, indices)
    if axis is None and _u.ndim(indices) != 1:
        raise ValueError(
            f"{name}: when axis=None, `indices` must have a single dimension, got "
            f"shape {tuple(_u.shape(indices))}"
        )
    return (*_manipulation.flat_or_axis(arr, axis), indices)


def take_along_axis(
    arr: Any,
    indices: Any,
    axis: int | None,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
) -> Any:
    """Elements of `arr` at `indices` along `axis`, matching the other axes.

    `out[..., j, ...] = arr[..., indices[..., j, ...], ...]` along `axis`; the other
    axes of `arr` and `indices` broadcast together.

    Args:
      arr: the array.
      indices: an integer array of `arr`'s rank (1-D when `axis` is None).
      axis: the axis to take along; None flattens `arr` first.
      mode: out-of-bound indices: "fill" (the default; "drop" is a synonym),
        "clip" or "promise_in_bounds", or a `GatherScatterMode`. Negative
        indices count from the end once, except with the string
        "promise_in_bounds" (a promise that indices lie in `[0, size)`; they
        are clamped), as in JAX.
      fill_value: the value read for out-of-bound indices with mode="fill".

    Returns:
      The taken values, of the broadcast shape of `arr` and `indices` (with
      `indices`' size along `axis`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.array([[3., 1., 2.], [6., 5., 4.]])
      >>> jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)
      Array([[1., 2., 3.],
             [4., 5., 6.]], dtype=float32)
    """
    arr, axis, indices = _along_axis_operands("take_along_axis", arr, indices, axis)
    rank = _u.ndim(arr)
    arr_shape = _u.shape(arr)
    out_shape = _along_axis_shapes(
        "take_along_axis", arr_shape, _u.shape(indices), axis, broadcast_arr=True
    )
    # As in JAX, negative indices count from the end, except with the string
    # "promise_in_bounds" (indices promised in [0, size); the enum value wraps).
    wrap = not (isinstance(mode, str) and mode == "promise_in_bounds")
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    if _size_is_zero(out_shape):
        return _filled(arr, out_shape, 0)
    size = arr_shape[axis]
    if sd.definitely_equal(size, 0):
        if mode is GatherScatterMode.FILL_OR_DROP:
            fill = _slicing._default_fill(_u.dtype(arr)) if fill_value is None else fill_value
            return _filled(arr, out_shape, fill)
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")
    arr = _u.broadcast_to(arr, out_shape[:axis] + (size,) + out_shape[axis + 1 :])
    dtype = _index_dtype(arr_shape)
    indices = _wrap_negative(_u.broadcast_to(indices, out_shape), size, dtype, wrap)
    batch = tuple(d for d in range(rank) if d != axis)
    dnums = GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
    )
    return _slicing.gather(
        arr,
        _shape_ops.expand_dims(indices, (rank,)),
        dnums,
        (1,) * rank,
        mode=mode,
        fill_value=fill_value,
    )


def _check_not_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(
            f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )


def put_along_axis(
    arr: Any,
    indices: Any,
    values: Any,
    axis: int | None,
    inplace: bool = True,
    *,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """`arr` with `values` written at `indices` along `axis` (a new array).

    Args:
      arr: the array.
      indices: an integer array of `arr`'s rank whose other axes broadcast to
        `arr`'s (1-D when `axis` is None).
      values: broadcast to the shape of the (broadcast) indices.
      axis: the axis to write along; None works on the flattened `arr`.
      inplace: must be False: arrays are immutable, a new array is returned.
      mode: out-of-bound indices: dropped (None, "drop") or clamped ("clip").

    Returns:
      An array of `arr`'s shape and dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.zeros((2, 3))
      >>> jnp.put_along_axis(x, jnp.array([[2], [0]]), 1.0, axis=1, inplace=False)
      Array([[0., 0., 1.],
             [1., 0., 0.]], dtype=float32)
    """
    _check_not_inplace("put_along_axis", inplace)
    original_shape = np.shape(arr)  # before axis=None flattens it
    arr, axis, indices = _along_axis_operands("put_along_axis", arr, indices, axis)
    rank = _u.ndim(arr)
    arr_shape = _u.shape(arr)
    idx_shape = _along_axis_shapes(
        "put_along_axis", arr_shape, _u.shape(indices), axis, broadcast_arr=False
    )
    values = broadcast_values(
        update_values(arr, values, "put_along_axis"), idx_shape, "put_along_axis"
    )
    size = arr_shape[axis]
    if _size_is_zero(idx_shape) or sd.definitely_equal(size, 0):
        return _manipulation.reshape(arr, original_shape)
    dtype = _index_dtype(arr_shape)
    indices = _wrap_negative(_u.broadcast_to(indices, idx_shape), size, dtype)
    batch = tuple(d for d in range(rank) if d != axis)
    dnums = ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(axis,),
        scatter_dims_to_operand_dims=(axis,),
        operand_batching_dims=batch,
        scatter_indices_batching_dims=batch,
    )
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else GatherScatterMode.from_any(mode)
    out = _slicing.scatter(arr, _shape_ops.expand_dims(indices, (rank,)), values, dnums, mode=mode)
    return _manipulation.reshape(out, original_shape)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """`a` with the values `v` written at the flat indices `ind` (a new array).

    Args:
      a: the array.
      ind: integer indices into the flattened `a`.
      v: the values, repeated cyclically (as NumPy does) when fewer than `ind`.
      mode: out-of-bound indices: "clip" (the default: clamped into range, so
        negative indices write the first element) or "wrap" (modulo the size).
      inplace: must be False: arrays are immutable, a new array is returned.

    Returns:
      An array of `a`'s shape and dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.put(jnp.zeros(5, int), jnp.array([0, 2, 4]), jnp.array([1, 2, 3]), inplace=False)
      Array([1, 0, 2, 0, 3], dtype=int32)
    """
    _check_not_inplace("put", inplace)
    _u.check_arraylike("put", a, ind, v)
    a, ind, v = asarray(a), asarray(ind), asarray(v)
    _check_int_indices("put", ind)
    flat, ind, v = _manipulation.ravel(a), _manipulation.ravel(ind), _manipulation.ravel(v)
    size, n, m = _u.shape(flat)[0], _u.shape(ind)[0], _u.shape(v)[0]
    if 0 in (size, n, m):
        return a
    if mode is None or mode == "clip":
        ind = _fit_indices(ind, size)
        ind = lax.clamp(_u.scalar_like(0, ind), ind, _u.scalar_like(size - 1, ind))
    elif mode == "wrap":
        ind = _wrap_mod(ind, size)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
    if m != n:  # NumPy repeats `v` cyclically to the length of `ind`
        v = _shape_ops.concatenate([v] * -(-n // m), 0) if m < n else v
        v = _shape_ops.slice_in_dim(v, 0, n, 1, 0)
    out = scatter_update(
        flat, (ind,), v, "set", mode=GatherScatterMode.PROMISE_IN_BOUNDS, name="put"
    )
    return _manipulation.reshape(out, _u.shape(a))
