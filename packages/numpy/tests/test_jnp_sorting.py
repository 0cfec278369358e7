"""jnp sorting and searching against NumPy.

Values are compared with NumPy computed in float64/complex128 (NumPy cannot sort
bfloat16), under one `jit` per dtype and shape that computes every sort at once.
Ties use duplicated values, so the stable orders are checked exactly; float32
data holds NaNs, which sort last (first in descending order). The data-dependent
sizes of `nonzero`/`argwhere` are checked with `size=`/`fill_value` padding and
with the concretization error naming the caller's line under `jit`.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from _jnp_helpers import assert_equal as _equal
from _jnp_helpers import bf16, boolean, c64, f16, f32, i32, u8
from _jnp_helpers import wide as _wide

import polyjax_numpy.numpy as jnp
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

DTYPES = [f32, bf16, f16, i32, u8, boolean, c64]
SHAPES = [(0,), (7,), (3, 5), (2, 0, 3)]


def _data(shape, dtype, seed=0, nan=True):
    """Values with many ties (few distinct values); float32 also gets NaNs and infs."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == boolean:
        return rng.integers(0, 2, shape).astype(bool)
    x = rng.integers(0, 4, shape).astype(np.float64)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-1, 2, shape)
    if dtype == f32 and nan and x.size:
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, max(flat.size // 4, 1))] = np.nan
        flat[0] = -np.inf
    return x.astype(dtype)


def _stable_descending_argsort(x, axis):
    """NumPy's stable argsort of `x` from the largest, equal elements first-first."""
    n = x.shape[axis]
    rev = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - rev, axis)


# ---------------------------------------------------------------------------
# sort and argsort


@jit
def _sorts(x):
    return (
        jnp.sort(x),
        jnp.sort(x, axis=0),
        jnp.sort(x, axis=None),
        jnp.sort(x, descending=True),
        jnp.argsort(x),
        jnp.argsort(x, axis=0),
        jnp.argsort(x, axis=None),
        jnp.argsort(x, descending=True),
        x.sort(),
        x.argsort(),
    )


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_sort_and_argsort_match_numpy(dtype, shape):
    x = _data(shape, dtype)
    w = _wide(x)
    got = _sorts(x)
    want = (
        np.sort(w),
        np.sort(w, axis=0),
        np.sort(w, axis=None),
        np.flip(np.sort(w), -1),
        np.argsort(w, kind="stable"),
        np.argsort(w, axis=0, kind="stable"),
        np.argsort(w, axis=None, kind="stable"),
        _stable_descending_argsort(w, -1),
        np.sort(w),
        np.argsort(w, kind="stable"),
    )
    for i, (g, wt) in enumerate(zip(got, want)):
        _equal(g, wt, f"output {i}")
    for g in got[:4] + got[8:9]:
        assert g.dtype == dtype
    for g in got[4:8] + got[9:]:
        assert g.dtype == i32


def test_sort_nan_placement():
    x = np.array([2.0, np.nan, -np.inf, -np.nan, 1.0, np.inf, -0.0], np.float32)
    got = np.asarray(jnp.sort(x))
    assert np.array_equal(got[:5], [-np.inf, -0.0, 1.0, 2.0, np.inf])
    assert np.isnan(got[5:]).all()  # NaNs of either sign go last
    down = np.asarray(jnp.sort(x, descending=True))
    assert np.isnan(down[:2]).all() and np.array_equal(down[2:], [np.inf, 2, 1, 0, -np.inf])
    assert list(np.asarray(jnp.argsort(x))[-2:]) == [1, 3]
    # Complex: real part first, NaN parts last, as NumPy.
    z = np.array([1 + 1j, np.nan + 0j, 1 + np.nan * 1j, 0 + 5j, 1 - 1j], np.complex64)
    _equal(jnp.argsort(z), np.argsort(z, kind="stable"))


def test_sort_unstable_and_descending_ties():
    x = np.array([3, 1, 3, 2, 1, 3], np.int32)
    _equal(jnp.sort(x, stable=False), np.sort(x))
    _equal(jnp.sort(x, stable=False, descending=True), np.sort(x)[::-1])
    # Unstable argsort still sorts; only the order among ties may differ.
    idx = np.asarray(jnp.argsort(x, stable=False, descending=True))
    _equal(x[idx], np.sort(x)[::-1])
    _equal(jnp.argsort(x, descending=True), [0, 2, 5, 3, 1, 4])


def test_sort_errors_and_deprecations():
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="'order' argument to sort"):
        jnp.sort(x, order="a")
    with pytest.raises(ValueError, match="'order' argument to argsort"):
        jnp.argsort(x, order="a")
    with pytest.warns(DeprecationWarning, match="'kind' argument to sort"):
        _equal(jnp.sort(x, kind="stable"), x)
    with pytest.raises(ValueError, match="axis 1 is out of bounds"):
        jnp.sort(x, axis=1)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sort(np.float32(1.0))
    with pytest.raises(TypeError, match="sort requires ndarray"):
        jnp.sort([3, 1])
    _equal(jnp.sort(np.float32(1.0), axis=None), [1.0])


def test_sort_grads():
    x = np.array([[0.3, -1.2, 2.5, 0.1], [1.0, 0.4, -0.7, 3.0]], np.float32)
    check_grads(lambda x: jnp.sort(x, axis=1), (x,), order=2)
    check_grads(lambda x: jnp.sort(x, axis=None, descending=True), (x,), order=2)
    check_grads(lambda x: jnp.partition(x, 1, axis=1), (x,), order=2)


def test_sort_vmap_matches_loop():
    x = _data((4, 6), f32, seed=3)
    for fun in (jnp.sort, jnp.argsort, lambda r: jnp.sort(r, descending=True)):
        got = vmap(fun)(x)
        want = np.stack([np.asarray(fun(r)) for r in x])
        _equal(got, want)
    got = vmap(jnp.sort, in_axes=1)(x)
    _equal(got, np.sort(_wide(x), axis=0).T)


# ---------------------------------------------------------------------------
# lexsort and sort_complex


def test_lexsort():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, (4, 6)).astype(np.int32)
    b = rng.integers(0, 2, (4, 6)).astype(bool)
    c = rng.integers(0, 3, (4, 6)).astype(np.float32)
    _equal(jnp.lexsort([a, b, c]), np.lexsort([a, b, c]))
    _equal(jnp.lexsort((a, c), axis=0), np.lexsort((a, c), axis=0))
    _equal(jnp.lexsort(jnp.asarray(a[:2])), np.lexsort(a[:2]))  # rows of an array as keys
    assert jnp.lexsort([a]).dtype == i32
    _equal(jnp.lexsort([np.int32(3)]), 0)
    _equal(jnp.lexsort([np.zeros(0, np.float32)]), np.zeros(0, np.int64))
    with pytest.raises(TypeError, match="need sequence of keys"):
        jnp.lexsort([])
    with pytest.raises(ValueError, match="same shape"):
        jnp.lexsort([a, a[:2]])


@pytest.mark.parametrize("dtype", [i32, u8, f32, bf16, c64], ids=str)
def test_sort_complex(dtype):
    x = _data((2, 5), dtype, nan=False)
    got = jnp.sort_complex(x)
    assert got.dtype == c64
    _equal(got, np.sort_complex(_wide(x)))


# ---------------------------------------------------------------------------
# partition and argpartition


def test_partition_documented_example():
    x = np.array([6, 8, 4, 3, 1, 9, 7, 5, 2, 3], np.int32)
    _equal(jnp.partition(x, 4), [1, 2, 3, 3, 4, 9, 8, 7, 6, 5])
    _equal(jnp.argpartition(x, 4), [4, 8, 3, 9, 2, 0, 1, 5, 6, 7])
    _equal(jnp.asarray(x).argpartition(4), jnp.argpartition(x, 4))


@pytest.mark.parametrize("dtype", [f32, i32, u8, boolean, bf16], ids=str)
@pytest.mark.parametrize("kth,axis", [(0, -1), (3, -1), (-1, -1), (1, 0)])
def test_partition_property(dtype, kth, axis):
    x = _data((3, 6), dtype, seed=5)
    w = _wide(x)
    part = np.asarray(jnp.partition(x, kth, axis=axis))
    idx = np.asarray(jnp.argpartition(x, kth, axis=axis))
    n = x.shape[axis]
    k = kth % n
    full = np.sort(w, axis=axis)
    for got in (_wide(part), np.take_along_axis(w, idx, axis=axis)):
        pivot = np.take(got, [k], axis=axis)
        _equal(pivot, np.take(full, [k], axis=axis))
        # The values before kth are the smallest ones (as a multiset), in order.
        _equal(np.take(got, range(k + 1), axis=axis), np.take(full, range(k + 1), axis=axis))
        rest = np.sort(np.take(got, range(k + 1, n), axis=axis), axis=axis)
        _equal(rest, np.take(full, range(k + 1, n), axis=axis))
    assert part.dtype == dtype and idx.dtype == i32
    # argpartition is a permutation of each slice.
    _equal(
        np.sort(idx, axis=axis),
        np.broadcast_to(np.expand_dims(np.arange(n), 1 - (axis % 2)), idx.shape),
    )


def test_partition_errors():
    x = np.arange(5.0)
    with pytest.raises(ValueError, match=r"kth\(=5\) out of bounds"):
        jnp.partition(x, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.argpartition(x, -6)
    with pytest.raises(ConcretizationTypeError, match="'kth' argument of jnp.partition"):
        jit(lambda x, k: jnp.partition(x, k))(x, 2)


# ---------------------------------------------------------------------------
# searchsorted


@jit
def _searches(a, v):
    return tuple(
        jnp.searchsorted(a, v, side, method=m)
        for m in ("scan", "scan_unrolled", "sort", "compare_all")
        for side in ("left", "right")
    )


@pytest.mark.parametrize("dtype", [f32, bf16, i32, u8, boolean, c64], ids=str)
def test_searchsorted_methods_match_numpy(dtype):
    a = _wide(np.sort(_data((9,), dtype, seed=2), kind="stable"))
    a = a.astype(dtype) if dtype != bf16 else a.astype(bf16)
    v = _data((3, 4), dtype, seed=7)
    if dtype == f32:
        v[0, 0], v[0, 1] = np.nan, 10.0
    got = _searches(a, v)
    for i, side in enumerate(("left", "right") * 4):
        want = np.searchsorted(_wide(a), _wide(v), side)
        _equal(got[i], want, f"{i} {side}")
        assert got[i].dtype == i32


def test_searchsorted_nan_and_sorter():
    a = np.array([1.0, 2.0, 2.0, np.nan, np.nan], np.float32)
    v = np.array([np.nan, 2.0, 5.0, -1.0], np.float32)
    for side in ("left", "right"):
        _equal(jnp.searchsorted(a, v, side), np.searchsorted(a, v, side))
    unsorted = np.array([3, 1, 2, 5, 4], np.int32)
    sorter = np.argsort(unsorted)
    vals = np.array([0, 3, 6, 2], np.int32)
    for method in ("scan", "sort", "compare_all"):
        _equal(
            jnp.searchsorted(unsorted, vals, sorter=sorter, method=method),
            np.searchsorted(unsorted, vals, sorter=sorter),
        )
    # Scalars, empty arrays, promotion and the array method.
    assert jnp.searchsorted(np.arange(5), 2.5).shape == ()
    _equal(jnp.searchsorted(np.arange(5), 2.5), 3)
    _equal(jnp.searchsorted(np.zeros(0, np.float32), np.ones(3)), np.zeros(3, np.int32))
    _equal(jnp.searchsorted(np.arange(3.0), np.zeros((2, 0))), np.zeros((2, 0), np.int32))
    _equal(jnp.asarray(np.arange(5)).searchsorted(np.array([1, 4]), side="right"), [2, 5])


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(np.zeros((2, 2)), 1.0)
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        jnp.searchsorted(np.arange(3), 1, side="middle")
    with pytest.raises(ValueError, match="'bisect' is not a valid method"):
        jnp.searchsorted(np.arange(3), 1, method="bisect")


def test_searchsorted_vmap_matches_loop():
    a = np.sort(np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32), axis=1)
    v = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
    got = vmap(jnp.searchsorted)(a, v)
    want = np.stack([np.searchsorted(ai, vi) for ai, vi in zip(a, v)])
    _equal(got, want)
    got = vmap(lambda vi: jnp.searchsorted(a[0], vi, method="sort"))(v)
    _equal(got, np.searchsorted(a[0], v))


# ---------------------------------------------------------------------------
# nonzero, flatnonzero, argwhere


@pytest.mark.parametrize("shape", [(0,), (6,), (2, 3), (2, 0, 2), (3, 1, 4)], ids=str)
@pytest.mark.parametrize("dtype", [f32, i32, boolean, c64], ids=str)
def test_nonzero_family_matches_numpy(dtype, shape):
    x = _data(shape, dtype, nan=False)
    for g, w in zip(jnp.nonzero(x), np.nonzero(x)):
        _equal(g, w)
        assert g.dtype == i32
    _equal(jnp.flatnonzero(x), np.flatnonzero(x))
    _equal(jnp.argwhere(x), np.argwhere(x))
    for g, w in zip(jnp.asarray(x).nonzero(), np.nonzero(x)):
        _equal(g, w)


def _padded(indices, size, fill):
    out = np.full(size, fill, np.int64)
    k = min(size, len(indices))
    out[:k] = indices[:k]
    return out


@pytest.mark.parametrize("size", [0, 3, 7, 30])
def test_nonzero_size_and_fill_value(size):
    x = _data((4, 5), i32, seed=4)
    want = np.nonzero(x)
    f = jit(lambda x: jnp.nonzero(x, size=size, fill_value=(-1, -2)))
    for axis, (g, w) in enumerate(zip(f(x), want)):
        _equal(g, _padded(w, size, -1 - axis))
    _equal(jnp.nonzero(x, size=size)[1], _padded(want[1], size, 0))
    _equal(
        jit(lambda x: jnp.flatnonzero(x, size=size, fill_value=-1))(x),
        _padded(np.flatnonzero(x), size, -1),
    )
    rows = np.argwhere(x)
    expected = np.full((size, 2), 9)
    expected[: min(size, len(rows))] = rows[:size]
    _equal(jit(lambda x: jnp.argwhere(x, size=size, fill_value=9))(x), expected)


def test_nonzero_rank0_and_argwhere_rank0():
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(np.int32(1))
    assert jnp.argwhere(np.bool_(True)).shape == np.argwhere(np.bool_(True)).shape == (1, 0)
    assert jnp.argwhere(np.float32(0)).shape == (0, 0)
    assert jnp.argwhere(np.float32(0), size=2).shape == (2, 0)
    _equal(jnp.flatnonzero(np.float32(3)), [0])


def test_nonzero_needs_size_under_jit():
    x = np.array([0, 2, 0, 3])
    cases = {
        "nonzero": lambda x: jnp.nonzero(x),
        "flatnonzero": lambda x: jnp.flatnonzero(x),
        "argwhere": lambda x: jnp.argwhere(x),
    }
    for name, fun in cases.items():
        with pytest.raises(ConcretizationTypeError) as info:
            jit(fun)(x)
        message = str(info.value)
        assert f"The size argument of jnp.{name} must be statically specified" in message
        # The error names the user's code: the lambda's line in this file.
        line = inspect.getsourcelines(fun)[1]
        assert f"test_jnp_sorting.py:{line} (<lambda>)" in message, message


def test_nonzero_vmap_with_size():
    x = _data((3, 6), i32, seed=8)
    got = vmap(lambda r: jnp.nonzero(r, size=4, fill_value=-1)[0])(x)
    want = np.stack([_padded(np.flatnonzero(r), 4, -1) for r in x])
    _equal(got, want)
