"""Sorting and searching: `sort`, `argsort`, `lexsort`, `sort_complex`, `partition`,
`argpartition`, `searchsorted`, `nonzero`, `flatnonzero`, `argwhere`.

Everything orders values as `lax.sort` does, which is NumPy's order: NaNs (of
either sign) after every number, `-0.0 == 0.0`, and complex numbers by real
part, then imaginary part. Sorts are stable by default.

As in JAX:

- `descending=True` reverses the ascending sort, so NaNs come *first*; `argsort`
  keeps equal elements in their original order in both directions when stable;
- `partition` and `argpartition` take a static `kth`; the `kth + 1` smallest
  entries come first in ascending order, the others after them in descending
  order (`argpartition`: their indices in increasing order);
- `searchsorted` returns int32 insertion indices of `v`'s shape, computed by a
  binary search in a loop ("scan"), the same search unrolled ("scan_unrolled"),
  one sort of `a` and `v` together ("sort") or by comparing every pair
  ("compare_all");
- `nonzero`, `flatnonzero` and `argwhere` have data-dependent sizes: under a
  transformation they need a static `size=` (the found indices first, padded
  with `fill_value`, default 0); without it a traced input raises the
  `ConcretizationTypeError` that names the user's line.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.lax import _complex, _cumulative, _shape_ops, _slicing, _while
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _sorting as lax_sorting
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import moveaxis, ravel, take_axis
from polyjax_numpy.numpy._selection import nonzero_static

_I32 = np.dtype(np.int32)
SEARCH_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def _index_dtype() -> np.dtype:
    """The dtype of `argsort`-like results: int32, or int64 with x64 enabled."""
    return dtypes.default_int_dtype()


def _check_kind_order(name: str, kind: Any, order: Any) -> None:
    if order is not None:
        raise ValueError(f"'order' argument to {name} is not supported.")
    if kind is not None:
        warnings.warn(
            f"The 'kind' argument to {name} is deprecated and ignored; specify the algorithm "
            "with stable=True or stable=False.",
            DeprecationWarning,
            stacklevel=3,
        )


def _along(name: str, a: Any, axis: int | None) -> tuple[Any, int]:
    """`a` as an array (flattened when `axis` is None) and the sort axis, non-negative."""
    _u.check_arraylike(name, a)
    arr = asarray(a)
    if axis is None:
        return ravel(arr), 0
    return arr, _u.canonicalize_axis(axis, _u.ndim(arr))


def _iota(arr: Any, dim: int, dtype: Any = None) -> Any:
    return _shape_ops.broadcasted_iota(dtype or _index_dtype(), _u.shape(arr), dim)


# ---------------------------------------------------------------------------
# Sorting


def sort(
    a: Any,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """A sorted copy of `a` along `axis`.

    Args:
      a: the array to sort.
      axis: the axis to sort along; None sorts the flattened array.
      kind: deprecated and ignored (use `stable`).
      order: not supported.
      stable: whether equal elements keep their relative order.
      descending: sort from the largest to the smallest (NaNs first).

    Returns:
      The sorted array: `a`'s shape, or `(a.size,)` when `axis` is None.

    Raises:
      ValueError: `order` is given, or `axis` is out of range.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.sort(jnp.array([3.0, jnp.nan, 1.0, 2.0]))
      Array([ 1.,  2.,  3., nan], dtype=float32)
    """
    _check_kind_order("sort", kind, order)
    arr, dim = _along("sort", a, axis)
    out = lax_sorting.sort(arr, dimension=dim, is_stable=bool(stable))
    return _shape_ops.rev(out, (dim,)) if descending else out


def argsort(
    a: Any,
    axis: int | None = -1,
    *,
    kind: None = None,
    order: None = None,
    stable: bool = True,
    descending: bool = False,
) -> Any:
    """The indices that sort `a` along `axis`.

    Args:
      a: the array.
      axis: the axis to sort along; None sorts the flattened array.
      kind: deprecated and ignored (use `stable`).
      order: not supported.
      stable: whether equal elements keep their relative order (in both directions).
      descending: sort from the largest to the smallest (NaNs first).

    Returns:
      Integer indices (int32; int64 with x64) of `a`'s shape (`(a.size,)` when `axis`
      is None), such that `take_along_axis(a, indices, axis)` is sorted.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.argsort(jnp.array([3, 1, 2, 1]), descending=True)
      Array([0, 2, 1, 3], dtype=int32)
    """
    _check_kind_order("argsort", kind, order)
    arr, dim = _along("argsort", a, axis)
    iota = _iota(arr, dim)
    if descending and stable:
        # Reversed, equal elements are met last-first; reversing the ascending result
        # then puts them back first-first.
        arr, iota = _shape_ops.rev(arr, (dim,)), _shape_ops.rev(iota, (dim,))
    _, idx = lax_sorting.sort_key_val(arr, iota, dimension=dim, is_stable=bool(stable))
    return _shape_ops.rev(idx, (dim,)) if descending else idx


def lexsort(keys: Sequence[Any], axis: int = -1) -> Any:
    """The indices that sort by several keys: the last key first, ties by the one before...

    Args:
      keys: arrays of one shape (or a 2-D array whose rows are the keys).
      axis: the axis to sort along.

    Returns:
      Integer indices of the keys' shape (a scalar 0 for rank-0 keys).

    Raises:
      TypeError: `keys` is empty.
      ValueError: the keys differ in shape.

    Example:
      >>> import polyjax.numpy as jnp
      >>> first = jnp.array([1, 0, 1, 0])
      >>> second = jnp.array([0, 1, 1, 0])
      >>> jnp.lexsort([second, first])
      Array([3, 1, 0, 2], dtype=int32)
    """
    key_list = tuple(keys)
    if not key_list:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    _u.check_arraylike("lexsort", *key_list)
    arrays = [asarray(k) for k in key_list]
    shapes = {_u.shape(k) for k in arrays}
    if len(shapes) > 1:
        raise ValueError(f"all keys need to be the same shape, got {sorted(shapes)}")
    if not _u.ndim(arrays[0]):
        return asarray(0, dtype=_index_dtype())
    dim = _u.canonicalize_axis(axis, _u.ndim(arrays[0]))
    operands = (*reversed(arrays), _iota(arrays[0], dim))
    return lax_sorting.sort(operands, dimension=dim, is_stable=True, num_keys=len(arrays))[-1]


def sort_complex(a: Any) -> Any:
    """`a` sorted along its last axis by real part, then imaginary part, as complex.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.sort_complex(jnp.array([1 + 2j, 1 - 1j, -3 + 0j]))
      Array([-3.+0.j,  1.-1.j,  1.+2.j], dtype=complex64)
    """
    out = sort(a, axis=-1)
    return _u.convert(out, dtypes.canonicalize_dtype(dtypes.to_complex_dtype(_u.dtype(out))))


def _partition_axis(name: str, a: Any, kth: Any, axis: int) -> tuple[Any, int, int]:
    """`a` with the partition axis last, the non-negative `kth` and that axis."""
    _u.check_arraylike(name, a)
    arr = asarray(a)
    axis = _u.canonicalize_axis(axis, _u.ndim(arr))
    k = concrete_int(kth, f"'kth' argument of jnp.{name}")
    n = _u.shape(arr)[axis]
    if not -n <= k < n:
        raise ValueError(f"kth(={k}) out of bounds ({n}) in jnp.{name}")
    return moveaxis(arr, axis, -1), k % n, axis


def _split_last(x: Any, k: int) -> tuple[Any, Any]:
    """`x[..., :k]` and `x[..., k:]`."""
    *lead, n = _u.shape(x)
    zeros = [0] * len(lead)
    return (
        _shape_ops.slice(x, (*zeros, 0), (*lead, k)),
        _shape_ops.slice(x, (*zeros, k), (*lead, n)),
    )


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """A copy of `a` partially sorted about its `kth` smallest element along `axis`.

    The entry at `kth` is the one a full sort puts there; the `kth` entries before it
    are smaller (in ascending order) and the ones after it are larger (in descending
    order), as JAX's `top_k`-based version gives.

    Args:
      a: the array.
      kth: a static index into `axis` (negative counts from the end).
      axis: the axis to partition along.

    Raises:
      ValueError: `kth` is out of range.
      ConcretizationTypeError: `kth` is traced.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.partition(jnp.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3]), 4)
      Array([1, 2, 3, 3, 4, 9, 8, 7, 6, 5], dtype=int32)
    """
    arr, k, axis = _partition_axis("partition", a, kth, axis)
    last = _u.ndim(arr) - 1
    bottom, top = _split_last(lax_sorting.sort(arr, dimension=last), k + 1)
    out = _shape_ops.concatenate([bottom, _shape_ops.rev(top, (last,))], last)
    return moveaxis(out, -1, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """The indices that partition `a` about its `kth` smallest element along `axis`.

    The first `kth + 1` indices are those of the smallest entries in ascending order
    (the first occurrence first among equal ones), the others follow in increasing
    order, as JAX's `top_k`-based version gives.

    Args:
      a: the array.
      kth: a static index into `axis` (negative counts from the end).
      axis: the axis to partition along.

    Raises:
      ValueError: `kth` is out of range.
      ConcretizationTypeError: `kth` is traced.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.argpartition(jnp.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3]), 4)
      Array([4, 8, 3, 9, 2, 0, 1, 5, 6, 7], dtype=int32)
    """
    arr, k, axis = _partition_axis("argpartition", a, kth, axis)
    last = _u.ndim(arr) - 1
    order = argsort(arr, axis=last)
    bottom, top = _split_last(order, k + 1)
    out = _shape_ops.concatenate([bottom, lax_sorting.sort(top, dimension=last)], last)
    return moveaxis(out, -1, axis)


# ---------------------------------------------------------------------------
# Searching


def _float_lt(x: Any, y: Any) -> Any:
    nan_x, nan_y = lax.ne(x, x), lax.ne(y, y)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(nan_y, lax.bitwise_not(nan_x)))


def _float_eq(x: Any, y: Any) -> Any:
    both_nan = lax.bitwise_and(lax.ne(x, x), lax.ne(y, y))
    return lax.bitwise_or(lax.eq(x, y), both_nan)


def sort_lt(x: Any, y: Any) -> Any:
    """`x < y` in the order of `lax.sort` (NaNs last, complex by real then imaginary part).

    `x` and `y` have one dtype; the result broadcasts as lax's comparisons do.
    """
    if _u.issubdtype_of(x, np.complexfloating):
        xr, xi = _complex.real(x), _complex.imag(x)
        yr, yi = _complex.real(y), _complex.imag(y)
        return lax.bitwise_or(
            _float_lt(xr, yr), lax.bitwise_and(_float_eq(xr, yr), _float_lt(xi, yi))
        )
    if _u.issubdtype_of(x, np.inexact):
        return _float_lt(x, y)
    if _u.is_bool(x):
        return lax.bitwise_and(lax.bitwise_not(x), y)
    return lax.lt(x, y)


def _goes_right(pivot: Any, v: Any, side: str) -> Any:
    """Whether `v` is inserted after `pivot` (`pivot < v`, or `pivot <= v` on the right)."""
    if side == "left":
        return sort_lt(pivot, v)
    return lax.bitwise_not(sort_lt(v, pivot))


def _search_binary(a: Any, v: Any, side: str, unrolled: bool) -> Any:
    """Binary search of every element of `v` in the 1-D `a`: `bit_length(n)` halvings."""
    n = _u.shape(a)[0]
    lo = _shape_ops.full(_u.shape(v), 0, _I32)
    hi = _shape_ops.full(_u.shape(v), n, _I32)
    one = np.int32(1)

    def step(_: Any, bounds: tuple[Any, Any]) -> tuple[Any, Any]:
        lo, hi = bounds
        mid = lax.shift_right_logical(lax.add(lo, hi), one)
        pivot = take_axis(a, lax.min(mid, np.int32(n - 1)), 0)
        right = _goes_right(pivot, v, side)
        # Finished searches (lo == hi) stay where they are.
        active = lax.lt(lo, hi)
        lo = lax.select_n(lax.bitwise_and(active, right), lo, lax.add(mid, one))
        hi = lax.select_n(lax.bitwise_and(active, lax.bitwise_not(right)), hi, mid)
        return lo, hi

    steps = n.bit_length()
    if unrolled:
        bounds = (lo, hi)
        for i in range(steps):
            bounds = step(i, bounds)
        return bounds[0]
    return _while.fori_loop(0, steps, step, (lo, hi))[0]


def _search_compare_all(a: Any, v: Any, side: str) -> Any:
    """Counts, for each element of `v`, the elements of `a` it goes after."""
    n = _u.shape(a)[0]
    shape = (*_u.shape(v), n)
    rank = len(shape)
    a_b = _shape_ops.broadcast_in_dim(a, shape, (rank - 1,))
    v_b = _shape_ops.broadcast_in_dim(v, shape, tuple(range(rank - 1)))
    hits = _u.convert(_goes_right(a_b, v_b, side), _I32)
    return reduce_sum(hits, (rank - 1,))


def _search_sort(a: Any, v: Any, side: str) -> Any:
    """One stable sort of `a` and `v` together: the `a` elements before each `v` element.

    On the left, `v` goes first so it precedes equal elements of `a`; on the right,
    `a` goes first.
    """
    n = _u.shape(a)[0]
    flat = ravel(v)
    m = _u.shape(flat)[0]
    first, second = (flat, a) if side == "left" else (a, flat)
    keys = _shape_ops.concatenate([first, second], 0)
    _, origin = lax_sorting.sort_key_val(keys, _shape_ops.iota(_I32, n + m), dimension=0)
    if side == "left":
        is_v, position = lax.lt(origin, np.int32(m)), origin
    else:
        is_v, position = lax.ge(origin, np.int32(n)), lax.sub(origin, np.int32(n))
    a_before = _cumulative.cumsum(_u.convert(lax.bitwise_not(is_v), _I32), 0)
    # Each sorted `v` element goes back to its place; the `a` elements go nowhere.
    slot = lax.select_n(is_v, _shape_ops.full((n + m,), np.int32(m)), position)
    out = _slicing.scatter(
        _shape_ops.full((m,), np.int32(0)),
        _shape_ops.expand_dims(slot, (1,)),
        a_before,
        _slicing.ScatterDimensionNumbers((), (0,), (0,)),
        mode="drop",
    )
    return _shape_ops.reshape(out, _u.shape(v))


def searchsorted(
    a: Any,
    v: Any,
    side: str = "left",
    sorter: Any = None,
    *,
    method: str = "scan",
) -> Any:
    """Where the elements of `v` go in the sorted 1-D `a` to keep it sorted.

    Index `i` for a value `x` means `a[i - 1] < x <= a[i]` (`side="left"`) or
    `a[i - 1] <= x < a[i]` (`side="right"`), in the order of `jnp.sort` (NaNs last).

    Args:
      a: a 1-D array, sorted (or sorted by `sorter`).
      v: the values to place (any shape).
      side: "left" or "right": which end of a run of equal values.
      sorter: indices that sort `a` (as from `argsort`), or None.
      method: "scan" (a binary search loop; the default), "scan_unrolled" (the same,
        unrolled), "sort" (one sort of `a` and `v`) or "compare_all" (every pair).

    Returns:
      int32 insertion indices of `v`'s shape.

    Raises:
      ValueError: `a` is not 1-D, or `side` or `method` is unknown.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.searchsorted(jnp.array([1, 2, 2, 3]), jnp.array([2, 5]), side="right")
      Array([3, 4], dtype=int32)
    """
    _u.check_arraylike("searchsorted", a, v)
    if _u.ndim(a) != 1:
        raise ValueError(f"searchsorted: a should be 1-dimensional, got shape {_u.shape(a)}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in SEARCH_METHODS:
        raise ValueError(
            f"searchsorted: {method!r} is not a valid method; expected one of {SEARCH_METHODS}"
        )
    a, v = (asarray(x) for x in _u.promote_dtypes(a, v))
    if sorter is not None:
        _u.check_arraylike("searchsorted", sorter)
        a = take_axis(a, asarray(sorter), 0, mode="clip")
    n = _u.shape(a)[0]
    if n == 0 or math.prod(_u.shape(v)) == 0:
        return _shape_ops.full(_u.shape(v), 0, _I32)
    if method == "compare_all":
        return _search_compare_all(a, v, side)
    if method == "sort":
        return _search_sort(a, v, side)
    return _search_binary(a, v, side, unrolled=method == "scan_unrolled")


# ---------------------------------------------------------------------------
# Indices of nonzero elements


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of the nonzero elements of `a`, one int32 array per axis.

    The number of indices depends on the data: under `jit` and other
    transformations, give a static `size`. The first `size` indices are then
    returned, and missing ones are `fill_value` (default 0).

    Args:
      a: an array of rank 1 or more.
      size: the static number of indices per axis.
      fill_value: the index that pads to `size` (a scalar, or one per axis).

    Raises:
      ValueError: `a` is rank 0.
      ConcretizationTypeError: `a` is traced and `size` is None.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nonzero(jnp.array([0, 3, 0, 5]), size=3, fill_value=-1)
      (Array([ 1,  3, -1], dtype=int32),)
    """
    return nonzero_static(a, size=size, fill_value=fill_value, name="nonzero")


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements of the flattened `a` (see `nonzero`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.flatnonzero(jnp.array([[0, 1], [2, 0]]))
      Array([1, 2], dtype=int32)
    """
    _u.check_arraylike("flatnonzero", a)
    (idx,) = nonzero_static(ravel(a), size=size, fill_value=fill_value, name="flatnonzero")
    return idx


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements of `a` as rows: shape `(count, a.ndim)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.argwhere(jnp.array([[0, 1], [2, 0]]))
      Array([[0, 1],
             [1, 0]], dtype=int32)
    """
    _u.check_arraylike("argwhere", a)
    arr = asarray(a)
    rank = _u.ndim(arr)
    columns = nonzero_static(
        _shape_ops.reshape(arr, (1,)) if rank == 0 else arr,
        size=size,
        fill_value=fill_value,
        name="argwhere",
    )
    count = _u.shape(columns[0])[0]
    if rank == 0:
        # NumPy: one row per true scalar, with no columns.
        return _shape_ops.full((count, 0), 0, _I32)
    return _shape_ops.concatenate([_shape_ops.reshape(c, (count, 1)) for c in columns], 1)


__all__ = [
    "argpartition",
    "argsort",
    "argwhere",
    "flatnonzero",
    "lexsort",
    "nonzero",
    "partition",
    "searchsorted",
    "sort",
    "sort_complex",
]
