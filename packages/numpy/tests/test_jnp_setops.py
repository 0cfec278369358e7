"""jnp set operations against NumPy: `unique` (and its Array-API forms), `isin`,
`intersect1d`, `union1d`, `setdiff1d`, `setxor1d`.

NumPy computes the expected values in float64/complex128 (it cannot sort
bfloat16). The static `size=` forms are checked under `jit` against NumPy's
result padded as JAX documents (`fill_value`, by default the smallest value;
counts padded with 0); without `size` a traced input raises the concretization
error naming the caller's line.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from _jnp_helpers import assert_equal as _equal
from _jnp_helpers import bf16, boolean, c64, f32, i32, u8
from _jnp_helpers import wide as _wide

import polyjax_numpy.numpy as jnp
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

DTYPES = [f32, bf16, i32, u8, boolean, c64]


def _data(shape, dtype, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == boolean:
        return rng.integers(0, 2, shape).astype(bool)
    x = rng.integers(0, 5, shape).astype(np.float64)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(0, 2, shape)
    if dtype == f32 and nan and x.size > 2:
        flat = x.reshape(-1)
        flat[:: max(flat.size // 3, 1)] = np.nan
    return x.astype(dtype)


def _pad(x, size, fill):
    x = np.asarray(x)
    out = np.full((size, *x.shape[1:]), fill, dtype=x.dtype)
    out[: min(size, len(x))] = x[:size]
    return out


# ---------------------------------------------------------------------------
# unique


@pytest.mark.parametrize("shape", [(0,), (9,), (3, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unique_matches_numpy(dtype, shape):
    x = _data(shape, dtype)
    got = jnp.unique(x, True, True, True)
    want = np.unique(_wide(x), True, True, True)
    for g, w, what in zip(got, want, ("values", "index", "inverse", "counts")):
        _equal(g, w, what)
    assert got[0].dtype == dtype
    assert all(g.dtype == i32 for g in got[1:])


def test_unique_nans():
    x = _data((3, 4), f32)
    _equal(jnp.unique(x), np.unique(x))  # one NaN
    for g, w in zip(
        jnp.unique(x, True, True, True, equal_nan=False),
        np.unique(x, True, True, True, equal_nan=False),
    ):
        _equal(g, w)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_along_axis(axis):
    x = np.array([[1, 2, 1, 1], [0, 5, 0, 0], [1, 2, 1, 1], [0, 1, 0, 3]], np.int32)
    for g, w in zip(
        jnp.unique(x, True, True, True, axis=axis), np.unique(x, True, True, True, axis=axis)
    ):
        _equal(g, w)
    y = _data((3, 2, 2), f32, nan=False)
    y[2] = y[0]
    for g, w in zip(
        jnp.unique(y, True, True, True, axis=0), np.unique(y, True, True, True, axis=0)
    ):
        _equal(g, w)
    _equal(jnp.unique(np.zeros((3, 0)), axis=0), np.unique(np.zeros((3, 0)), axis=0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.unique(np.float32(1), axis=0)


@pytest.mark.parametrize("size", [1, 4, 8])
def test_unique_size_and_fill_value(size):
    x = np.array([3.0, 1.0, 3.0, np.nan, 2.0, 1.0], np.float32)  # 4 unique values
    vals, idx, inv, counts = np.unique(x, True, True, True)

    @jit
    def padded(x):
        return (
            jnp.unique(x, True, True, True, size=size),
            jnp.unique(x, size=size, fill_value=-1.0),
        )

    (g_vals, g_idx, g_inv, g_counts), g_fill = padded(x)
    _equal(g_vals, _pad(vals, size, vals[0]))  # the smallest value by default
    _equal(g_idx, _pad(idx, size, idx[0]))
    _equal(g_inv, inv)
    _equal(g_counts, _pad(counts, size, 0))
    _equal(g_fill, _pad(vals, size, -1.0))
    # Empty input: zeros, or the fill value.
    _equal(jnp.unique(np.zeros(0, np.int32), size=2), [0, 0])
    _equal(jnp.unique(np.zeros(0, np.int32), size=2, fill_value=7), [7, 7])
    # Rows padded with a fill value of a row's shape.
    rows = np.array([[1, 2], [0, 0], [1, 2]], np.int32)
    got = jnp.unique(rows, axis=0, size=3, fill_value=np.array([9, 8]))
    _equal(got, [[0, 0], [1, 2], [9, 8]])


def test_unique_array_api_forms_keep_nans_apart():
    x = np.array([2.0, np.nan, 1.0, np.nan, 2.0], np.float32)
    got, want = jnp.unique_all(x), np.unique_all(x)
    for field in ("values", "indices", "inverse_indices", "counts"):
        _equal(getattr(got, field), getattr(want, field), field)
    _equal(jnp.unique_counts(x).counts, np.unique_counts(x).counts)
    _equal(jnp.unique_inverse(x).inverse_indices, np.unique_inverse(x).inverse_indices)
    _equal(jnp.unique_values(x), np.unique_values(x))
    m = np.array([[3, 1], [1, 3]], np.int32)
    _equal(jnp.unique_inverse(m).inverse_indices, np.unique_inverse(m).inverse_indices)
    _equal(jnp.unique_values(m, size=3, fill_value=0), [1, 3, 0])


def test_unique_grads_and_vmap():
    # Distinct values (ties would split apart under finite differences); padded.
    x = np.array([0.5, -1.0, 2.0, 0.1], np.float32)
    check_grads(lambda x: jnp.unique(x, size=6), (x,), order=1)
    batch = _data((3, 6), i32, seed=2)
    got = vmap(lambda r: jnp.unique(r, return_counts=True, size=6, fill_value=-1))(batch)
    for row, values, counts in zip(batch, *got):
        v, c = np.unique(row, return_counts=True)
        _equal(values, _pad(v, 6, -1))
        _equal(counts, _pad(c, 6, 0))


# ---------------------------------------------------------------------------
# isin


@jit
def _isins(element, test):
    return tuple(
        jnp.isin(element, test, method=m) for m in ("auto", "compare_all", "binary_search", "sort")
    ) + (jnp.isin(element, test, invert=True),)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_isin_methods_match_numpy(dtype):
    element = _data((3, 4), dtype, seed=1)
    test = _data((2, 3), dtype, seed=2)
    got = _isins(element, test)
    want = np.isin(_wide(element), _wide(test))
    for g in got[:4]:
        _equal(g, want)
        assert g.dtype == boolean
    _equal(got[4], ~want)


def test_isin_edge_cases():
    nan = np.float32(np.nan)
    # NaN is in nothing; -0.0 equals 0.0; promotion of int and float.
    _equal(jnp.isin(np.array([nan, 0.0, -0.0]), np.array([nan, 0.0])), [False, True, True])
    _equal(jnp.isin(np.array([1, 2]), np.array([1.5, 2.0])), [False, True])
    _equal(jnp.isin(np.arange(3), np.zeros(0)), [False, False, False])
    _equal(jnp.isin(np.int32(2), np.arange(3)), True)
    big = np.arange(0, 200, 3)  # over the compare-all limit: binary search
    _equal(jnp.isin(np.arange(10), big), np.isin(np.arange(10), big))
    with pytest.raises(ValueError, match="method must be one of"):
        jnp.isin(1, np.arange(3), method="hash")


# ---------------------------------------------------------------------------
# intersect1d, union1d, setdiff1d, setxor1d


PAIRS = [
    (np.array([1, 2, 3, 2, 7, 9]), np.array([2, 3, 4, 9, 9])),
    (np.array([5.0, np.nan, 1.0, np.nan]), np.array([np.nan, 1.0, 8.0])),
    (np.zeros(0, np.int32), np.array([1, 2])),
    (np.array([[4, 1], [1, 0]]), np.array([0, 6])),
]


@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_set_operations_match_numpy(pair):
    a, b = PAIRS[pair]
    _equal(jnp.union1d(a, b), np.union1d(a, b))
    _equal(jnp.setdiff1d(a, b), np.setdiff1d(a, b))
    _equal(jnp.setxor1d(a, b), np.setxor1d(a, b))
    _equal(jnp.intersect1d(a, b), np.intersect1d(a, b))
    for g, w in zip(
        jnp.intersect1d(a, b, return_indices=True), np.intersect1d(a, b, return_indices=True)
    ):
        _equal(g, w)


def test_set_operations_assume_unique():
    a, b = np.array([7, 1, 4, 3]), np.array([3, 0, 7])
    _equal(jnp.setdiff1d(a, b, assume_unique=True), np.setdiff1d(a, b, assume_unique=True))
    _equal(jnp.setxor1d(a, b, assume_unique=True), np.setxor1d(a, b, assume_unique=True))
    for g, w in zip(
        jnp.intersect1d(a, b, assume_unique=True, return_indices=True),
        np.intersect1d(a, b, assume_unique=True, return_indices=True),
    ):
        _equal(g, w)


def test_set_operations_with_size_under_jit():
    a, b = np.array([1, 2, 3, 2, 7, 9], np.int32), np.array([2, 3, 4, 9, 9], np.int32)

    @jit
    def padded(a, b):
        return (
            jnp.union1d(a, b, size=8),
            jnp.setdiff1d(a, b, size=3, fill_value=0),
            jnp.setxor1d(a, b, size=5),
            jnp.intersect1d(a, b, size=4, fill_value=-1),
            jnp.intersect1d(a, b, return_indices=True, size=4),
        )

    union, diff, xor, common, (values, i1, i2) = padded(a, b)
    _equal(union, _pad(np.union1d(a, b), 8, 1))
    _equal(diff, _pad(np.setdiff1d(a, b), 3, 0))
    _equal(xor, _pad(np.setxor1d(a, b), 5, 1))
    _equal(common, _pad(np.intersect1d(a, b), 4, -1))
    w_values, w1, w2 = np.intersect1d(a, b, return_indices=True)
    _equal(values, _pad(w_values, 4, w_values[0]))
    _equal(i1, _pad(w1, 4, len(a)))  # indices padded out of bounds
    _equal(i2, _pad(w2, 4, len(b)))
    # Empty results pad with the smallest candidate.
    _equal(jnp.setdiff1d(np.array([3, 1]), np.array([1, 3]), size=2), [1, 1])


def test_set_operations_vmap():
    a = _data((3, 5), i32, seed=5)
    b = _data((3, 4), i32, seed=6)
    got = vmap(lambda x, y: jnp.intersect1d(x, y, size=5, fill_value=-1))(a, b)
    for g, x, y in zip(got, a, b):
        _equal(g, _pad(np.intersect1d(x, y), 5, -1))
    got = vmap(jnp.isin)(a, b)
    _equal(got, np.stack([np.isin(x, y) for x, y in zip(a, b)]))


# ---------------------------------------------------------------------------
# Concretization errors


def test_size_needed_under_jit():
    x = np.array([3, 1, 3])
    cases = {
        "unique": lambda x: jnp.unique(x),
        "unique": lambda x: jnp.unique_values(x),  # noqa: F601
        "union1d": lambda x: jnp.union1d(x, x),
        "intersect1d": lambda x: jnp.intersect1d(x, x),
        "setdiff1d": lambda x: jnp.setdiff1d(x, x),
        "setxor1d": lambda x: jnp.setxor1d(x, x),
    }
    for name, fun in cases.items():
        with pytest.raises(ConcretizationTypeError) as info:
            jit(fun)(x)
        message = str(info.value)
        assert f"The size argument of jnp.{name} must be statically specified" in message
        line = inspect.getsourcelines(fun)[1]
        assert f"test_jnp_setops.py:{line} (<lambda>)" in message, message
