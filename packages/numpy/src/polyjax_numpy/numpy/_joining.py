"""Joining and splitting arrays: `concatenate`, `stack` and its variants, `block`,
`append`, `insert`, `delete`, `split` and its variants, `unstack`.

Joins promote their inputs to one dtype on JAX's lattice (weak Python scalars
adapt) and become one lax `concatenate`; splits become static `slice`s. Where
positions come from data (`insert` and `delete` with index arrays) the result's
size is still static, and the elements are picked with one `gather`: the
positions must be concrete, except for `delete(..., assume_unique_indices=True)`
and `insert` with an index array, whose positions may be traced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _reductions, _shape_ops, _slicing, _sorting
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_to,
    concrete_or_none,
    flat_or_axis,
    moveaxis,
    ravel,
    take_axis,
)


def _as_sequence(arrays: Any, fun_name: str) -> list[Any]:
    """The arrays to join: a sequence, or the rows of an array (as NumPy iterates it)."""
    if isinstance(arrays, (*_u.ARRAY_TYPES, np.ndarray)):
        if _u.ndim(arrays) == 0:
            raise ValueError(f"{fun_name}: zero-dimensional arrays cannot be joined")
        return [_slicing.index_in_dim(arrays, i, 0, False) for i in range(_u.shape(arrays)[0])]
    if not isinstance(arrays, Sequence) or isinstance(arrays, str):
        raise TypeError(f"{fun_name}: expected a sequence of arrays, got {type(arrays).__name__}")
    return list(arrays)


def _promoted(fun_name: str, arrays: list[Any], dtype: Any) -> list[Any]:
    _u.check_arraylike(fun_name, *arrays)
    if dtype is None:
        return [asarray(x) for x in _u.promote_dtypes(*arrays)]
    dtypes.check_user_dtype_supported(dtype, fun_name)
    dtype = dtypes.canonicalize_dtype(dtype)
    return [asarray(x, dtype=dtype) for x in arrays]


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """The arrays joined along an existing axis.

    Args:
      arrays: a sequence of arrays of one rank, equal in shape except along `axis`
        (or an array, whose rows are joined).
      axis: the axis to join along; None joins the flattened arrays.
      dtype: the result's dtype (default: the inputs' promotion on JAX's lattice).

    Raises:
      ValueError: no arrays, rank-0 arrays, or ranks that differ.
      TypeError: shapes that differ off `axis`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.concatenate([jnp.zeros((1, 2)), jnp.ones((2, 2))]).shape
      (3, 2)
    """
    arrays = _u.from_protocol(arrays)  # JAX converts `__jax_array__` here
    arrays = _as_sequence(arrays, "concatenate")
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    arrays = _promoted("concatenate", arrays, dtype)
    if axis is None:
        return concatenate([ravel(x) for x in arrays], 0)
    ranks = {_u.ndim(x) for x in arrays}
    if 0 in ranks:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    if len(ranks) != 1:
        raise ValueError(
            "All input arrays to concatenate must have the same number of dimensions, got "
            f"shapes {[_u.shape(x) for x in arrays]}"
        )
    axis = concrete_int(axis, "'axis' argument of jnp.concatenate")
    axis = _u.canonicalize_axis(axis, ranks.pop())
    return arrays[0] if len(arrays) == 1 else _shape_ops.concatenate(arrays, axis)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The Array API's `concatenate` (same semantics).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.concat([jnp.arange(2), jnp.arange(3)])
      Array([0, 1, 0, 1, 2], dtype=int32)
    """
    return concatenate(arrays, axis=axis)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """The arrays, all of one shape, joined along a new axis `axis`.

    Raises:
      ValueError: no arrays, or arrays of different shapes.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.stack([jnp.zeros(3), jnp.ones(3)], axis=1).shape
      (3, 2)
    """
    arrays = _u.from_protocol(arrays)  # JAX converts `__jax_array__` here
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    arrays = _as_sequence(arrays, "stack")
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    arrays = _promoted("stack", arrays, dtype)
    shapes = {_u.shape(x) for x in arrays}
    if len(shapes) != 1:
        raise ValueError(
            f"All input arrays must have the same shape, got {[_u.shape(x) for x in arrays]}"
        )
    axis = _u.canonicalize_axis(axis, len(shapes.pop()) + 1)
    return _shape_ops.concatenate([_shape_ops.expand_dims(x, (axis,)) for x in arrays], axis)


def _as_list(tup: Any, fun_name: str) -> list[Any]:
    return [asarray(x) for x in _as_sequence(tup, fun_name)]


def hstack(tup: Any, dtype: Any = None) -> Any:
    """The arrays joined horizontally: along axis 1, or axis 0 for 1-D arrays.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.hstack([jnp.arange(2), jnp.arange(3)])
      Array([0, 1, 0, 1, 2], dtype=int32)
    """
    arrays = [atleast_1d(x) for x in _as_list(tup, "hstack")]
    axis = 0 if arrays and _u.ndim(arrays[0]) == 1 else 1
    return concatenate(arrays, axis, dtype)


def vstack(tup: Any, dtype: Any = None) -> Any:
    """The arrays joined vertically (along axis 0), 1-D arrays taken as rows.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.vstack([jnp.arange(3), jnp.arange(3)]).shape
      (2, 3)
    """
    return concatenate([atleast_2d(x) for x in _as_list(tup, "vstack")], 0, dtype)


def dstack(tup: Any, dtype: Any = None) -> Any:
    """The arrays joined along the third axis (made at least 3-D, as `atleast_3d`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.dstack([jnp.zeros((2, 2)), jnp.ones((2, 2))]).shape
      (2, 2, 2)
    """
    return concatenate([atleast_3d(x) for x in _as_list(tup, "dstack")], 2, dtype)


def column_stack(tup: Any) -> Any:
    """1-D arrays as the columns of a 2-D array (higher ranks joined along axis 1).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.column_stack([jnp.arange(3), jnp.arange(3)]).shape
      (3, 2)
    """
    arrays = []
    for x in _as_list(tup, "column_stack"):
        if _u.ndim(x) < 2:
            x = _shape_ops.reshape(x, (_u.shape(atleast_1d(x))[0], 1))
        arrays.append(x)
    return concatenate(arrays, 1)


def _block_depth(arrays: Any, index: tuple[int, ...]) -> int:
    if isinstance(arrays, tuple):
        raise TypeError(
            f"jnp.block: arrays{''.join(f'[{i}]' for i in index)} is a tuple. Only lists can "
            "be used to arrange blocks, and np.block does not allow implicit conversion "
            "from tuple to ndarray."
        )
    if not isinstance(arrays, list):
        return 0
    if not arrays:
        raise ValueError(f"jnp.block: list arrays{''.join(f'[{i}]' for i in index)} is empty")
    depths = {_block_depth(a, (*index, i)) for i, a in enumerate(arrays)}
    if len(depths) != 1:
        raise ValueError(
            f"jnp.block: list depths are mismatched in arrays{''.join(f'[{i}]' for i in index)}"
        )
    return depths.pop() + 1


def _block(arrays: Any, depth: int, ndim: int) -> Any:
    if depth == 0:
        return _shape_ops.broadcast_to_rank(asarray(arrays), ndim)
    parts = [_block(a, depth - 1, ndim) for a in arrays]
    return concatenate(parts, axis=-depth)


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (the innermost lists joined along
    the last axis, the next ones along the axis before it, ...).

    Raises:
      ValueError: lists of different depths, or empty lists.
      TypeError: tuples in place of lists (as NumPy).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.block([[jnp.eye(2), jnp.zeros((2, 1))]]).shape
      (2, 3)
    """
    depth = _block_depth(arrays, ())
    leaves: list[Any] = []

    def collect(a: Any, d: int) -> None:
        if d == 0:
            leaves.append(a)
        else:
            for x in a:
                collect(x, d - 1)

    collect(arrays, depth)
    _u.check_arraylike("block", *leaves)
    to = dtypes.result_type(*leaves)
    ndim = max([depth, *(_u.ndim(x) for x in leaves)])
    return _u.convert(_block(arrays, depth, ndim), to)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """`values` joined to the end of `arr` (both flattened when `axis` is None).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.append(jnp.arange(2), 5)
      Array([0, 1, 5], dtype=int32)
    """
    _u.check_arraylike("append", arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ---------------------------------------------------------------------------
# Splitting


def _split_points(n: int, indices_or_sections: Any, fun_name: str, equal: bool) -> list[int]:
    """The boundaries (including 0 and n) of the pieces along an axis of size `n`."""
    if isinstance(indices_or_sections, Sequence | np.ndarray) or (
        _u.ndim(indices_or_sections) == 1 if _u.is_operand(indices_or_sections) else False
    ):
        points = concrete_or_error(
            np.asarray, indices_or_sections, f"in the indices argument of jnp.{fun_name}"
        )
        if points.ndim != 1 or (points.size and points.dtype.kind not in "iu"):
            raise TypeError(f"jnp.{fun_name}: indices must be a 1-D sequence of integers")
        cuts = [min(max(int(p) + n if p < 0 else int(p), 0), n) for p in points]
        return [0, *cuts, n]
    sections = concrete_int(indices_or_sections, f"sections argument of jnp.{fun_name}")
    if sections <= 0:
        raise ValueError(f"jnp.{fun_name}: number of sections must be larger than 0")
    if equal and n % sections:
        raise ValueError(
            f"jnp.{fun_name}: array split does not result in an equal division: an axis of "
            f"size {n} into {sections} sections"
        )
    size, extra = divmod(n, sections)
    sizes = [size + 1] * extra + [size] * (sections - extra)
    return [0, *np.cumsum(sizes).tolist()]


def _split(ary: Any, indices_or_sections: Any, axis: int, fun_name: str, equal: bool) -> list:
    _u.check_arraylike(fun_name, ary)
    axis = _u.canonicalize_axis(axis, _u.ndim(ary))
    n = _u.shape(ary)[axis]
    if type(n) is not int:
        raise TypeError(f"jnp.{fun_name}: the split axis must have a static size, got {n}")
    points = _split_points(n, indices_or_sections, fun_name, equal)
    return [
        _shape_ops.slice_in_dim(ary, start, max(start, stop), axis=axis)
        for start, stop in zip(points[:-1], points[1:])
    ]


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """`ary` split along `axis` into equal sections, or at the given (static) indices.

    Args:
      ary: the array.
      indices_or_sections: a number of sections (which must divide the axis), or a
        sorted sequence of split points.
      axis: the axis to split.

    Returns:
      A list of arrays.

    Raises:
      ValueError: the sections do not divide the axis.

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.tolist() for x in jnp.split(jnp.arange(5), [2])]
      [[0, 1], [2, 3, 4]]
    """
    return _split(ary, indices_or_sections, axis, "split", equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """As `split`, but a number of sections need not divide the axis (the first pieces
    are one element longer).

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.shape for x in jnp.array_split(jnp.arange(5), 2)]
      [(3,), (2,)]
    """
    return _split(ary, indices_or_sections, axis, "array_split", equal=False)


def hsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 1 (axis 0 for 1-D arrays).

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.shape for x in jnp.hsplit(jnp.zeros((2, 4)), 2)]
      [(2, 2), (2, 2)]
    """
    ndim = _u.ndim(ary)
    if ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if ndim > 1 else 0, "hsplit", equal=True)


def vsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 0 of an array of at least 2 dimensions.

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.shape for x in jnp.vsplit(jnp.zeros((4, 2)), [1])]
      [(1, 2), (3, 2)]
    """
    if _u.ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0, "vsplit", equal=True)


def dsplit(ary: Any, indices_or_sections: Any) -> list[Any]:
    """`split` along axis 2 of an array of at least 3 dimensions.

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.shape for x in jnp.dsplit(jnp.zeros((1, 1, 4)), 2)]
      [(1, 1, 2), (1, 1, 2)]
    """
    if _u.ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2, "dsplit", equal=True)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple (the inverse of `stack`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> len(jnp.unstack(jnp.zeros((3, 2))))
      3
    """
    _u.check_arraylike("unstack", x)
    if _u.ndim(x) == 0:
        raise ValueError(
            "Unstack requires arrays with rank > 0, however a scalar array was passed."
        )
    axis = _u.canonicalize_axis(axis, _u.ndim(x))
    n = _u.shape(x)[axis]
    return tuple(_slicing.index_in_dim(x, i, axis, False) for i in range(n))


# ---------------------------------------------------------------------------
# delete and insert


def _static_positions(obj: Any, n: int, fun_name: str) -> np.ndarray:
    """Concrete integer positions along an axis of size `n` (negative ones wrapped)."""
    if isinstance(obj, slice):
        return np.arange(n)[obj]
    idx = concrete_or_error(
        np.asarray,
        obj,
        f"The problem arose with the 'obj' argument of jnp.{fun_name}(): its positions must "
        "be static" + (" (or pass assume_unique_indices=True)." if fun_name == "delete" else "."),
    )
    if idx.dtype == np.bool_:
        if fun_name != "delete" or idx.shape != (n,):
            raise ValueError(
                f"jnp.{fun_name}(): a boolean 'obj' must be a mask of shape ({n},), got "
                f"shape {idx.shape}"
            )
        return np.flatnonzero(idx)
    if idx.size and idx.dtype.kind not in "iu":
        raise IndexError(
            f"jnp.{fun_name}(): arrays used as indices must be of integer (or boolean) type, "
            f"got {idx.dtype}"
        )
    idx = idx.astype(np.int64)
    bad = (idx < -n) | (idx >= n) if fun_name == "delete" else (idx < -n) | (idx > n)
    if bad.any():
        raise IndexError(
            f"jnp.{fun_name}(): index {idx[bad].ravel()[0]} is out of bounds for an axis of "
            f"size {n}"
        )
    return np.where(idx < 0, idx + n, idx)


def delete(
    arr: Any, obj: Any, axis: int | None = None, *, assume_unique_indices: bool = False
) -> Any:
    """`arr` without the entries `obj` along `axis` (of the flattened array if None).

    Args:
      arr: the array.
      obj: an index, a slice, an integer array of indices, or a boolean mask of the
        axis's length. Its values must be static, unless `assume_unique_indices`.
      axis: the axis to delete along.
      assume_unique_indices: promise that an integer-array `obj` has no repeated
        entries; then it may be traced (the result's size is `n - len(obj)`).

    Raises:
      IndexError: an index is out of range.
      ConcretizationTypeError: `obj` is traced (without `assume_unique_indices`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.delete(jnp.arange(5), jnp.array([0, 2]))
      Array([1, 3, 4], dtype=int32)
    """
    _u.check_arraylike("delete", arr)
    arr, axis = flat_or_axis(arr, axis)
    n = _u.shape(arr)[axis]
    if assume_unique_indices and not isinstance(obj, slice):
        idx = asarray(obj)
        if not _u.issubdtype_of(idx, np.integer):
            raise TypeError(
                f"jnp.delete: with assume_unique_indices=True, 'obj' must be integer, got "
                f"{_u.dtype(idx)}"
            )
        idx = ravel(idx)
        return take_axis(arr, _kept_positions(idx, n), axis)
    if isinstance(obj, int | np.integer) and not isinstance(obj, bool):
        i = int(obj)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
        i %= n
        before = _shape_ops.slice_in_dim(arr, 0, i, axis=axis)
        after = _shape_ops.slice_in_dim(arr, i + 1, n, axis=axis)
        return _shape_ops.concatenate([before, after], axis)
    removed = _static_positions(obj, n, "delete")
    kept = np.setdiff1d(np.arange(n), removed)
    if kept.size == n:
        return arr
    return take_axis(arr, kept, axis)


def _kept_positions(removed: Any, n: int) -> Any:
    """The positions in [0, n) not in `removed` (traced, assumed unique), in order."""
    k = _u.shape(removed)[0]
    i32 = np.dtype(np.int32)
    removed = _u.convert(removed, i32)
    removed = lax.select_n(lax.lt(removed, np.int32(0)), removed, lax.add(removed, np.int32(n)))
    removed = lax.clamp(np.int32(0), removed, np.int32(n))
    # The j-th kept position is j plus the number of removed positions at or before it:
    # with the removed ones sorted, r_i - i counts how many kept positions precede r_i.
    shifted = lax.sub(_sorting.sort(removed), _shape_ops.iota(i32, k))
    kept = _shape_ops.iota(i32, n - k)
    before = lax.ge(
        _shape_ops.broadcast_in_dim(kept, (k, n - k), (1,)),
        _shape_ops.broadcast_in_dim(shifted, (k, n - k), (0,)),
    )
    return lax.add(kept, _reductions.reduce_sum(_u.convert(before, i32), (0,)))


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the positions `obj` along `axis`.

    Args:
      arr: the array (flattened when `axis` is None).
      obj: a position, a slice, or a 1-D integer array of positions (which may be
        traced); several values at one position keep their order.
      values: the values (converted to `arr`'s dtype), broadcast to the inserted
        block: for a scalar position, a block of `values`' length along `axis`.
      axis: the axis to insert along.

    Raises:
      IndexError: a static position is out of range.
      ValueError: `obj` has more than one dimension.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.insert(jnp.arange(3), 1, 9)
      Array([0, 9, 1, 2], dtype=int32)
    """
    _u.check_arraylike("insert", arr)
    arr, axis = flat_or_axis(asarray(arr), axis)
    ndim = _u.ndim(arr)
    n = _u.shape(arr)[axis]
    values = _u.convert(asarray(values), _u.dtype(arr))  # a cast: Python ints wrap
    if isinstance(obj, slice):
        positions: Any = np.arange(n)[obj]
        scalar = False
    else:
        found = concrete_or_none(obj)
        if found is None:
            if not _u.issubdtype_of(obj, np.integer):
                raise ValueError("jnp.insert(): index array must be integer typed")
            positions, scalar = obj, _u.ndim(obj) == 0
        else:
            scalar = found.ndim == 0
            if found.size == 0:
                positions = np.zeros(found.shape, np.int64)
            else:
                if found.dtype.kind not in "iu":
                    raise ValueError("jnp.insert(): index array must be integer typed")
                positions = _static_positions(found, n, "insert")
    if _u.ndim(positions) > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar")
    # The inserted block, aligned as NumPy does: `values` gets the array's rank; for a
    # scalar position its first axis runs along `axis`; one position takes all of it.
    values = _shape_ops.broadcast_to_rank(values, ndim)
    if scalar:
        values = moveaxis(values, 0, axis)
    if int(np.prod(_u.shape(positions))) == 1:
        k = _u.shape(values)[axis]
        if isinstance(positions, np.ndarray):
            positions = np.full(k, positions.ravel()[0])
        else:
            positions = _shape_ops.broadcast_in_dim(_shape_ops.reshape(positions, ()), (k,), ())
    else:
        k = _u.shape(positions)[0]
    block_shape = list(_u.shape(arr))
    block_shape[axis] = k
    values = broadcast_to(values, tuple(block_shape))
    joined = _shape_ops.concatenate([arr, values], axis)
    if isinstance(positions, np.ndarray):
        source = _insert_sources_static(positions, n)
    else:
        source = _insert_sources_traced(positions, n)
    return take_axis(joined, source, axis)


def _insert_sources_static(positions: np.ndarray, n: int) -> np.ndarray:
    """For each output position, its index in `concatenate([arr, values])`."""
    k = positions.size
    order = np.argsort(positions, kind="stable")
    new_pos = np.empty(k, np.int64)
    new_pos[order] = positions[order] + np.arange(k)
    old_pos = np.arange(n) + np.searchsorted(np.sort(positions), np.arange(n), side="right")
    source = np.empty(n + k, np.int64)
    source[old_pos] = np.arange(n)
    source[new_pos] = n + np.arange(k)
    return source


def _insert_sources_traced(positions: Any, n: int) -> Any:
    """`_insert_sources_static` with traced positions (clipped into [0, n])."""
    i32 = np.dtype(np.int32)
    k = _u.shape(positions)[0]
    p = _u.convert(positions, i32)
    p = lax.select_n(lax.lt(p, np.int32(0)), p, lax.add(p, np.int32(n)))
    p = lax.clamp(np.int32(0), p, np.int32(n))
    sorted_p, order = _sorting.sort((p, _shape_ops.iota(i32, k)), num_keys=1)
    new_sorted = lax.add(sorted_p, _shape_ops.iota(i32, k))
    # Each original element moves right by the number of positions at or before it.
    at_or_before = lax.le(
        _shape_ops.broadcast_in_dim(sorted_p, (k, n), (0,)),
        _shape_ops.broadcast_in_dim(_shape_ops.iota(i32, n), (k, n), (1,)),
    )
    old_pos = lax.add(
        _shape_ops.iota(i32, n), _reductions.reduce_sum(_u.convert(at_or_before, i32), (0,))
    )
    dn = _slicing.ScatterDimensionNumbers((), (0,), (0,))
    source = _shape_ops.full((n + k,), np.int32(0))
    source = _slicing.scatter(
        source, _shape_ops.expand_dims(old_pos, (1,)), _shape_ops.iota(i32, n), dn
    )
    inserted = lax.add(order, np.int32(n))
    return _slicing.scatter(source, _shape_ops.expand_dims(new_sorted, (1,)), inserted, dn)
