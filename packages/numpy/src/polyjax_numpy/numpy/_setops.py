"""Set operations: `unique` (and its Array-API forms), `isin`, `intersect1d`, `union1d`,
`setdiff1d`, `setxor1d`.

Each one sorts, marks the first element of every run of equal values, and
compacts the marked ones to the front. The compaction has a data-dependent
size, so as in JAX the functions take a static `size=`: the result then has
`size` entries, the found ones first (in sorted order) and `fill_value` after
them. `fill_value` defaults to the smallest value of the result (the smallest
candidate when the result is empty). Without `size`, a traced input raises the
`ConcretizationTypeError` that names the user's line.

Equality is NumPy's: `-0.0 == 0.0`, and NaN equals nothing, so `isin` never
finds a NaN and `intersect1d` drops NaNs. `unique` (and `union1d`, which is
`unique` of both inputs) collapses NaNs into one unless `equal_nan=False`;
`unique_all`, `unique_counts`, `unique_inverse` and `unique_values` keep every
NaN, as NumPy's do (the Array API rule).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_interpreters.jit import jit
from polyjax_numpy.lax import _cumulative, _shape_ops, _slicing
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _sorting as lax_sorting
from polyjax_numpy.lax._bits import reduce_and, reduce_or
from polyjax_numpy.lax._reductions import argmax, reduce_sum
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import moveaxis, ravel, take_axis
from polyjax_numpy.numpy._selection import nonzero_static
from polyjax_numpy.numpy._sorting import searchsorted

_I32 = np.dtype(np.int32)
_BOOL = np.dtype(bool)
ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")
# Up to this many test elements, `isin(method="auto")` compares all pairs.
_COMPARE_ALL_LIMIT = 64


class UniqueAllResult(NamedTuple):
    """The result of `unique_all`."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """The result of `unique_counts`."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """The result of `unique_inverse`."""

    values: Any
    inverse_indices: Any


# ---------------------------------------------------------------------------
# Runs of equal values


def _first(x: Any) -> Any:
    return _shape_ops.slice_in_dim(x, 0, _u.shape(x)[0] - 1, axis=0)


def _rest(x: Any) -> Any:
    return _shape_ops.slice_in_dim(x, 1, _u.shape(x)[0], axis=0)


def _same(a: Any, b: Any, equal_nan: bool) -> Any:
    """Elementwise `a == b`, NaNs equal to each other if `equal_nan`."""
    same = lax.eq(a, b)
    if equal_nan and _u.issubdtype_of(a, np.inexact):
        same = lax.bitwise_or(same, lax.bitwise_and(lax.ne(a, a), lax.ne(b, b)))
    return same


def _run_starts(same_as_previous: Any, n: int) -> Any:
    """The bool mask of run starts: the first element, and each one unlike its predecessor."""
    if n == 0:
        return _shape_ops.full((0,), False, _BOOL)
    head = _shape_ops.full((1,), True, _BOOL)
    return _shape_ops.concatenate([head, lax.bitwise_not(same_as_previous)], 0)


def _sorted_runs(x: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """The 1-D `x` sorted (stably), the permutation that sorts it, and its run starts."""
    n = _u.shape(x)[0]
    s, perm = lax_sorting.sort_key_val(x, _shape_ops.iota(_I32, n), dimension=0)
    same = _same(_rest(s), _first(s), equal_nan) if n else None
    return s, perm, _run_starts(same, n)


def _sorted_row_runs(rows: Any, equal_nan: bool) -> tuple[Any, Any, Any]:
    """`_sorted_runs` of the rows of a matrix, compared lexicographically."""
    n, m = _u.shape(rows)
    iota = _shape_ops.iota(_I32, n)
    if m == 0 or n == 0:  # all rows are equal (empty)
        same = _shape_ops.full((max(n - 1, 0),), True, _BOOL)
        return rows, iota, _run_starts(same, n)
    columns = [
        _shape_ops.reshape(_shape_ops.slice_in_dim(rows, j, j + 1, axis=1), (n,)) for j in range(m)
    ]
    perm = lax_sorting.sort((*columns, iota), dimension=0, num_keys=m)[-1]
    s = take_axis(rows, perm, 0)
    same = reduce_and(_same(_rest(s), _first(s), equal_nan), (1,))
    return s, perm, _run_starts(same, n)


# ---------------------------------------------------------------------------
# Compaction, in two compiled stages
#
# Each operation is compiled (`jit`, static flags): once to count what it finds
# when `size` is not given (which needs a concrete input), then with that static
# `size`. Run eagerly primitive by primitive, each new shape would compile a few
# dozen small programs instead.


def _static_size(size: Any, name: str) -> int | None:
    if size is None:
        return None
    size = concrete_int(size, f"'size' argument of jnp.{name}")
    if size < 0:
        raise ValueError(f"jnp.{name}: size must be nonnegative, got {size}")
    return size


def _resolve_size(
    name: str, size: Any, count: Callable[..., Any], *args: Any, **static: Any
) -> int:
    """`size` as a static int, or (for None) the count of what `name` finds in `args`."""
    size = _static_size(size, name)
    if size is not None:
        return size
    context = (
        f"The size argument of jnp.{name} must be statically specified to use jnp.{name} "
        "within JAX transformations."
    )
    for arg in args:
        concrete_or_error(None, arg, context)
    return concrete_or_error(int, count(*args, **static), context)


def _count_true(mask: Any) -> Any:
    return reduce_sum(_u.convert(mask, _I32), (0,))


def _check_fill(fill_value: Any) -> None:
    if fill_value is not None:
        _u.check_arraylike("fill_value", fill_value)


def _compact(mask: Any, size: int, values: Any, fill_value: Any) -> tuple[Any, Any, Any]:
    """The entries of `values` where the 1-D `mask` holds, moved to the front.

    Returns `(picked, positions, valid)`: `size` entries of `values` (along its first
    axis) and their positions, and which of them were found. Missing entries repeat the
    first found one (else the first entry of `values`) unless `fill_value` is given.
    """
    n = _u.shape(mask)[0]
    rest = _u.shape(values)[1:]
    dtype = _u.dtype(values)
    if n == 0:
        fill = np.zeros((), dtype) if fill_value is None else fill_value
        picked = _broadcast_fill(fill, size, rest, dtype)
        zeros = _shape_ops.full((size,), np.int32(0))
        return picked, zeros, _shape_ops.full((size,), False, _BOOL)
    (positions,) = nonzero_static(mask, size=size, fill_value=0)
    valid = lax.lt(_shape_ops.iota(_I32, size), _count_true(mask))
    # Padding repeats the first found entry: the smallest one when `values` is sorted.
    positions = lax.select_n(valid, _shape_ops.full((size,), argmax(mask, 0, _I32)), positions)
    picked = take_axis(values, positions, 0)
    if fill_value is not None:
        fill = _broadcast_fill(fill_value, size, rest, dtype)
        keep = _shape_ops.broadcast_in_dim(valid, (size, *rest), (0,))
        picked = lax.select_n(keep, fill, picked)
    return picked, positions, valid


def _broadcast_fill(fill_value: Any, size: int, rest: tuple, dtype: Any) -> Any:
    """`fill_value` broadcast to `size` entries of shape `rest`."""
    fill = _u.convert(asarray(fill_value), dtype)
    if _u.ndim(fill) > len(rest) or np.broadcast_shapes(_u.shape(fill), rest) != rest:
        raise ValueError(
            f"fill_value of shape {_u.shape(fill)} does not broadcast to the entries' shape {rest}"
        )
    shape = (size, *rest)
    return _shape_ops.broadcast_in_dim(
        fill, shape, tuple(range(len(shape) - _u.ndim(fill), len(shape)))
    )


def _index_output(x: Any) -> Any:
    return _u.convert(x, dtypes.default_int_dtype())


# ---------------------------------------------------------------------------
# unique


def _unique_runs(arr: Any, axis: int | None, equal_nan: bool) -> tuple[Any, Any, Any]:
    """The sorted entries (elements, or slices along `axis` first), the permutation and
    the run starts."""
    if axis is None:
        return _sorted_runs(ravel(arr), equal_nan)
    moved = moveaxis(arr, axis, 0)
    n, *rest = _u.shape(moved)
    rows = _shape_ops.reshape(moved, (n, math.prod(rest)))
    s, perm, starts = _sorted_row_runs(rows, equal_nan)
    return _shape_ops.reshape(s, (n, *rest)), perm, starts


@functools.partial(jit, static_argnames=("axis", "equal_nan"))
def _unique_count(arr: Any, axis: int | None, equal_nan: bool) -> Any:
    return _count_true(_unique_runs(arr, axis, equal_nan)[2])


@functools.partial(
    jit,
    static_argnames=(
        "size",
        "axis",
        "equal_nan",
        "return_index",
        "return_inverse",
        "return_counts",
    ),
)
def _unique(
    arr: Any,
    fill_value: Any,
    *,
    size: int,
    axis: int | None,
    equal_nan: bool,
    return_index: bool,
    return_inverse: bool,
    return_counts: bool,
) -> tuple[Any, ...]:
    s, perm, starts = _unique_runs(arr, axis, equal_nan)
    n = _u.shape(starts)[0]
    values, positions, _ = _compact(starts, size, s, fill_value)
    outs = [values if axis is None else moveaxis(values, 0, axis)]
    if return_index:
        outs.append(_index_output(take_axis(perm, positions, 0) if n else positions))
    if return_inverse:
        run = lax.sub(_cumulative.cumsum(_u.convert(starts, _I32), 0), np.int32(1))
        inverse = _slicing.scatter(
            _shape_ops.full((n,), np.int32(0)),
            _shape_ops.expand_dims(perm, (1,)),
            run,
            _slicing.ScatterDimensionNumbers((), (0,), (0,)),
            unique_indices=True,
            mode="promise_in_bounds",
        )
        if axis is None:
            inverse = _shape_ops.reshape(inverse, _u.shape(arr))
        outs.append(_index_output(inverse))
    if return_counts:
        if n:
            (bounds,) = nonzero_static(starts, size=size + 1, fill_value=n)
            counts = lax.sub(_rest(bounds), _first(bounds))
        else:
            counts = _shape_ops.full((size,), np.int32(0))
        outs.append(_index_output(counts))
    return tuple(outs)


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value: Any = None,
    sorted: bool = True,
) -> Any:
    """The sorted unique elements of `ar` (or unique slices along `axis`).

    Args:
      ar: an array.
      return_index: also return the index of each unique value's first occurrence.
      return_inverse: also return, for each element of `ar`, the index of its value
        among the unique values (`ar`'s shape when `axis` is None, else
        `(ar.shape[axis],)`).
      return_counts: also return how often each unique value occurs.
      axis: the axis whose slices are compared; None flattens `ar`.
      equal_nan: whether NaNs count as one value.
      size: the static number of unique values returned (needed under `jit`);
        padded with `fill_value`, counts with 0.
      fill_value: the padding value; defaults to the smallest unique value.
      sorted: accepted for NumPy compatibility; the result is always sorted.

    Returns:
      The unique values, or a tuple with the requested extra arrays (default integers).

    Raises:
      ConcretizationTypeError: `ar` is traced and `size` is None.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unique(jnp.array([3, 1, 3, 2]), size=4, fill_value=0)
      Array([1, 2, 3, 0], dtype=int32)
    """
    del sorted  # always sorted
    _u.check_arraylike("unique", ar)
    _check_fill(fill_value)
    arr = asarray(ar)
    if axis is not None:
        axis = _u.canonicalize_axis(axis, _u.ndim(arr))
    equal_nan = bool(equal_nan)
    size = _resolve_size("unique", size, _unique_count, arr, axis=axis, equal_nan=equal_nan)
    outs = _unique(
        arr,
        fill_value,
        size=size,
        axis=axis,
        equal_nan=equal_nan,
        return_index=bool(return_index),
        return_inverse=bool(return_inverse),
        return_counts=bool(return_counts),
    )
    return outs[0] if len(outs) == 1 else outs


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueAllResult:
    """The unique values of `x` with their first indices, the inverse indices and counts.

    NaNs are all distinct (the Array API rule); otherwise as `unique` with
    `return_index`, `return_inverse` and `return_counts`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unique_all(jnp.array([3, 1, 3])).counts
      Array([1, 2], dtype=int32)
    """
    values, indices, inverse, counts = unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        equal_nan=False,
        size=size,
        fill_value=fill_value,
    )
    return UniqueAllResult(values, indices, inverse, counts)


def unique_counts(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> UniqueCountsResult:
    """The unique values of `x` and how often each occurs (NaNs distinct).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unique_counts(jnp.array([3, 1, 3])).values
      Array([1, 3], dtype=int32)
    """
    values, counts = unique(
        x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return UniqueCountsResult(values, counts)


def unique_inverse(
    x: Any, /, *, size: int | None = None, fill_value: Any = None
) -> UniqueInverseResult:
    """The unique values of `x` and, for each element, the index of its value (NaNs distinct).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unique_inverse(jnp.array([3, 1, 3])).inverse_indices
      Array([1, 0, 1], dtype=int32)
    """
    values, inverse = unique(
        x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
    )
    return UniqueInverseResult(values, inverse)


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of `x` (NaNs distinct).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unique_values(jnp.array([3, 1, 3]))
      Array([1, 3], dtype=int32)
    """
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ---------------------------------------------------------------------------
# Membership


def _isin(element: Any, test: Any, method: str) -> Any:
    """Whether each entry of `element` equals some entry of the 1-D `test` (one dtype)."""
    n = _u.shape(test)[0]
    shape = _u.shape(element)
    if n == 0 or math.prod(shape) == 0:
        return _shape_ops.full(shape, False, _BOOL)
    if method == "auto":
        method = "compare_all" if n <= _COMPARE_ALL_LIMIT else "binary_search"
    if method == "compare_all":
        rank = len(shape)
        full = (*shape, n)
        e = _shape_ops.broadcast_in_dim(element, full, tuple(range(rank)))
        t = _shape_ops.broadcast_in_dim(test, full, (rank,))
        return reduce_or(lax.eq(e, t), (rank,))
    s = lax_sorting.sort(test, dimension=0)
    where = searchsorted(s, element, method="scan" if method == "binary_search" else "sort")
    found = take_axis(s, lax.min(where, np.int32(n - 1)), 0)
    return lax.eq(found, element)


def _promoted_1d(name: str, *arrays: Any) -> list[Any]:
    _u.check_arraylike(name, *arrays)
    return [ravel(asarray(x)) for x in _u.promote_dtypes(*arrays)]


def isin(
    element: Any,
    test_elements: Any,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    method: str = "auto",
) -> Any:
    """Whether each element of `element` occurs in `test_elements` (as a bool array).

    Args:
      element: the array whose elements are looked up.
      test_elements: the values looked for (flattened).
      assume_unique: accepted for NumPy compatibility (no effect).
      invert: return the negation (`element not in test_elements`).
      method: "compare_all" (every pair), "binary_search" (sort `test_elements`, then
        a binary search), "sort" (one sort of both), or "auto" (the default: compare
        all for up to 64 test elements, else binary search).

    Returns:
      A bool array of `element`'s shape.

    Raises:
      ValueError: `method` is unknown.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isin(jnp.array([1, 2, 3, 4]), jnp.array([[1, 5], [3, 7]]))
      Array([ True, False,  True, False], dtype=bool)
    """
    del assume_unique
    if method not in ISIN_METHODS:
        raise ValueError(f"isin: method must be one of {ISIN_METHODS}, got {method!r}")
    _u.check_arraylike("isin", element, test_elements)
    e, t = (asarray(x) for x in _u.promote_dtypes(element, test_elements))
    return _isin_compiled(e, ravel(t), method=method, invert=bool(invert))


@functools.partial(jit, static_argnames=("method", "invert"))
def _isin_compiled(element: Any, test: Any, *, method: str, invert: bool) -> Any:
    out = _isin(element, test, method)
    return lax.bitwise_not(out) if invert else out


# ---------------------------------------------------------------------------
# Set operations on 1-D arrays


def _candidates(x: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """The sorted `x`, its sorting permutation, and which entries are distinct values.

    With `assume_unique`, every entry counts (NaNs never collapse: NumPy's `unique` is
    skipped then).
    """
    if assume_unique:
        n = _u.shape(x)[0]
        s, perm = lax_sorting.sort_key_val(x, _shape_ops.iota(_I32, n), dimension=0)
        return s, perm, _shape_ops.full((n,), True, _BOOL)
    return _sorted_runs(x, equal_nan=True)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values found in either `ar1` or `ar2` (both flattened).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.union1d(jnp.array([3, 1]), jnp.array([2, 3]))
      Array([1, 2, 3], dtype=int32)
    """
    a, b = _promoted_1d("union1d", ar1, ar2)
    both = _shape_ops.concatenate([a, b], 0)
    size = _resolve_size("union1d", size, _unique_count, both, axis=None, equal_nan=True)
    return unique(both, size=size, fill_value=fill_value)


def _common(a: Any, b: Any, assume_unique: bool) -> tuple[Any, Any, Any]:
    """The sorted candidates of `a`, their permutation, and which of them are in `b`."""
    s, perm, distinct = _candidates(a, assume_unique)
    return s, perm, lax.bitwise_and(distinct, _isin(s, b, "auto"))


@functools.partial(jit, static_argnames=("assume_unique",))
def _intersect_count(a: Any, b: Any, assume_unique: bool) -> Any:
    return _count_true(_common(a, b, assume_unique)[2])


@functools.partial(jit, static_argnames=("size", "assume_unique", "return_indices"))
def _intersect(
    a: Any, b: Any, fill_value: Any, *, size: int, assume_unique: bool, return_indices: bool
) -> Any:
    s1, perm1, common = _common(a, b, assume_unique)
    values, positions, valid = _compact(common, size, s1, fill_value)
    if not return_indices:
        return values
    n1, n2 = _u.shape(a)[0], _u.shape(b)[0]
    if n1 == 0 or n2 == 0:
        return values, _shape_ops.full((size,), n1, _I32), _shape_ops.full((size,), n2, _I32)
    first1 = take_axis(perm1, positions, 0)
    idx1 = lax.select_n(valid, _shape_ops.full((size,), np.int32(n1)), first1)
    # A stable sort puts the first occurrence of a value first among its equals.
    s2, perm2 = lax_sorting.sort_key_val(b, _shape_ops.iota(_I32, n2), dimension=0)
    at = lax.min(searchsorted(s2, values), np.int32(n2 - 1))
    idx2 = lax.select_n(valid, _shape_ops.full((size,), np.int32(n2)), take_axis(perm2, at, 0))
    return values, _index_output(idx1), _index_output(idx2)


def intersect1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    return_indices: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted unique values found in both `ar1` and `ar2` (both flattened).

    Args:
      ar1, ar2: the arrays.
      assume_unique: whether both hold distinct values (faster; else undefined).
      return_indices: also return the index of each value's first occurrence in `ar1`
        and in `ar2` (padded with `ar1.size` and `ar2.size`).
      size: the static number of values returned (needed under `jit`).
      fill_value: the padding value; defaults to the smallest common value.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.intersect1d(jnp.array([1, 2, 3, 2]), jnp.array([2, 3, 4]))
      Array([2, 3], dtype=int32)
    """
    a, b = _promoted_1d("intersect1d", ar1, ar2)
    _check_fill(fill_value)
    flags = dict(assume_unique=bool(assume_unique))
    size = _resolve_size("intersect1d", size, _intersect_count, a, b, **flags)
    return _intersect(a, b, fill_value, size=size, return_indices=bool(return_indices), **flags)


def _difference(a: Any, b: Any, assume_unique: bool) -> tuple[Any, Any]:
    """The candidates of `a` (sorted unless `assume_unique`) and which are not in `b`."""
    if assume_unique:
        values, keep = a, _shape_ops.full(_u.shape(a), True, _BOOL)
    else:
        values, _, keep = _sorted_runs(a, equal_nan=True)
    return values, lax.bitwise_and(keep, lax.bitwise_not(_isin(values, b, "auto")))


@functools.partial(jit, static_argnames=("assume_unique",))
def _setdiff_count(a: Any, b: Any, assume_unique: bool) -> Any:
    return _count_true(_difference(a, b, assume_unique)[1])


@functools.partial(jit, static_argnames=("size", "assume_unique"))
def _setdiff(a: Any, b: Any, fill_value: Any, *, size: int, assume_unique: bool) -> Any:
    values, keep = _difference(a, b, assume_unique)
    return _compact(keep, size, values, fill_value)[0]


def setdiff1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The unique values of `ar1` that are not in `ar2`, sorted.

    With `assume_unique`, the values keep their order in `ar1` instead (as in NumPy).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.setdiff1d(jnp.array([4, 1, 2, 1]), jnp.array([2, 5]))
      Array([1, 4], dtype=int32)
    """
    a, b = _promoted_1d("setdiff1d", ar1, ar2)
    _check_fill(fill_value)
    flags = dict(assume_unique=bool(assume_unique))
    size = _resolve_size("setdiff1d", size, _setdiff_count, a, b, **flags)
    return _setdiff(a, b, fill_value, size=size, **flags)


def _exclusive(a: Any, b: Any, assume_unique: bool) -> tuple[Any, Any]:
    """The candidates of both inputs, sorted, and which of them occur in one input only."""
    s1, _, keep1 = _candidates(a, assume_unique)
    s2, _, keep2 = _candidates(b, assume_unique)
    values = _shape_ops.concatenate([s1, s2], 0)
    dropped = lax.bitwise_not(_shape_ops.concatenate([keep1, keep2], 0))
    if _u.shape(values)[0] == 0:
        return values, dropped
    # The candidates (one per distinct value of each input) first, in sorted order; then
    # a value is kept if no neighbouring candidate equals it (NaN never equals).
    dropped, values = lax_sorting.sort((dropped, values), dimension=0, num_keys=2)
    live = lax.bitwise_not(dropped)
    equal = lax.bitwise_and(lax.eq(_rest(values), _first(values)), _rest(live))
    no = _shape_ops.full((1,), False, _BOOL)
    like_previous = _shape_ops.concatenate([no, equal], 0)
    like_next = _shape_ops.concatenate([equal, no], 0)
    alone = lax.bitwise_not(lax.bitwise_or(like_previous, like_next))
    return values, lax.bitwise_and(live, alone)


@functools.partial(jit, static_argnames=("assume_unique",))
def _setxor_count(a: Any, b: Any, assume_unique: bool) -> Any:
    return _count_true(_exclusive(a, b, assume_unique)[1])


@functools.partial(jit, static_argnames=("size", "assume_unique"))
def _setxor(a: Any, b: Any, fill_value: Any, *, size: int, assume_unique: bool) -> Any:
    values, keep = _exclusive(a, b, assume_unique)
    return _compact(keep, size, values, fill_value)[0]


def setxor1d(
    ar1: Any,
    ar2: Any,
    assume_unique: bool = False,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted values found in exactly one of `ar1` and `ar2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.setxor1d(jnp.array([1, 2, 3, 4]), jnp.array([3, 4, 5, 6]))
      Array([1, 2, 5, 6], dtype=int32)
    """
    a, b = _promoted_1d("setxor1d", ar1, ar2)
    _check_fill(fill_value)
    flags = dict(assume_unique=bool(assume_unique))
    size = _resolve_size("setxor1d", size, _setxor_count, a, b, **flags)
    return _setxor(a, b, fill_value, size=size, **flags)


__all__ = [
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "intersect1d",
    "isin",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
]
