"""jnp indexing: `x[idx]`, `x.at[idx]`, `take`, `take_along_axis`, `put`, `put_along_axis`.

NumPy is the oracle for values and shapes; where JAX differs (out-of-bound
reads clamp or fill, out-of-bound updates are dropped, repeated indices all
update) the expected values are written out or computed with `np.add.at` and
friends. Derivatives use `check_grads`, vmap is compared with a Python loop,
jit with eager execution. Many index expressions share one jitted function so
that the number of compilations stays small.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_core.errors import JAXIndexError, NonConcreteBooleanIndexError
from polyjax_interpreters.ad import grad
from polyjax_interpreters.array import device_put
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32, c64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
i8, i32, u8, boolean = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.bool_))
DTYPES = [f32, bf16, f16, i32, u8, boolean, c64]

A = np.array
X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)


def _check(got, want, dtype=None):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == (want.dtype if dtype is None else dtype), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.astype(np.float64) if got.dtype == bf16 else got, want)


def _jaxpr(fun, *args) -> str:
    return " ".join(str(make_jaxpr(fun)(*args)).split())


def _prims(fun, *args) -> list[str]:
    return [e.primitive.name for e in make_jaxpr(fun)(*args).jaxpr.eqns]


# ---------------------------------------------------------------------------
# x[idx] against NumPy: one table, evaluated under one jit

INDICES = [
    # basic
    0,
    -1,
    (1, 2),
    (slice(None), 1, slice(None, None, -2)),
    (Ellipsis, 3),
    (None, 1, None, Ellipsis, slice(1, 3)),
    # one integer array
    A([1, 0, 1]),
    (slice(None), A([2, -1, 0])),
    (Ellipsis, A([[4], [0]])),
    (1, A([0, 2]), slice(1, None)),  # int and array adjacent: placed in line
    (0, slice(None), A([1, 2])),  # separated by a slice: advanced axes go first
    (slice(None), 0, slice(None), A([1, 2])),
    # several arrays, broadcast together
    (A([0, 1]), A([1, 2])),
    (A([[0], [1]]), slice(None), A([0, 2, 3])),
    (slice(None), A([[0], [2]]), A([[1, 3]])),
    (A([0, 1]), None, A([2, 0])),  # None separates them
    (slice(None), A([0, 1, 2, 0]), Ellipsis, A([0, 1, 2, 3])),  # so does `...`
    (A([0, 1, 1]), A([2, 0, 1]), A([3, 3, 0]), A([4, 0, -1])),
    # lists inside a tuple, negative indices
    ([1, 0], slice(None), [-1, -4]),
    (slice(None), [[0, 1], [2, 0]]),
    # strided and reversed slices mixed with arrays
    (slice(None, None, -1), A([0, 2]), slice(None, None, 2)),
    (A([1, 0]), slice(3, 0, -2), None, A([[0], [3]])),
    # boolean masks and boolean scalars
    (X[:, :, 0, 0] > 20,),
    (slice(None), X[0, :, :, 1] % 3 == 0),
    (Ellipsis, A([True, False, True, False, True])),
    (A([True, False]), slice(None), A([1, 3])),
    True,
    False,
    (0, slice(None), True),
    (A([0, 1]), True),
    (Ellipsis, True, 0),
    (np.bool_(True), None, 1),
    # empty results
    A([], dtype=np.int32),
    (slice(None), []),
    (slice(2, 2), A([0, 1])),
    (X[:, 0, 0, 0] < 0,),
]


def test_getitem_table_matches_numpy():
    outs = jit(lambda x: [x[i] for i in INDICES])(X)
    for idx, out in zip(INDICES, outs):
        _check(out, X[idx])


def test_getitem_eager_matches_numpy():
    x = device_put(X)
    for idx in INDICES[6:20]:
        _check(x[idx], X[idx])
        _check(x.at[idx].get(), X[idx])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_getitem_and_updates_dtypes(dtype):
    x = (np.arange(24).reshape(4, 6) % 5).astype(f32).astype(dtype)
    v = np.float32([[1], [2]]).astype(dtype)
    idx = (A([2, 0]), slice(1, 5, 2))
    rep = A([1, 3, 1])

    def f(x):
        return x[idx], x[:, rep], x.at[idx].set(v), x.at[rep, 0].add(v[0, 0]), x.T[rep]

    want_set = x.copy()
    want_set[idx] = v
    work = f32 if dtype in (bf16, boolean) else dtype  # NumPy's add.at lacks these
    want_add = x.astype(work)
    np.add.at(want_add, (rep, 0), v.astype(work)[0, 0])
    if dtype == boolean:
        want_add = want_add != 0
    outs = jit(f)(x)
    for got, want in zip(outs, [x[idx], x[:, rep], want_set, want_add.astype(dtype), x.T[rep]]):
        _check(got, want, dtype)


def test_getitem_of_rank0_and_size0_operands():
    s = np.float32(3.5)
    e = np.zeros((0, 3), np.float32)

    def f(s, e):
        return s[()], s[None], s[...], s[True], s[False], e[A([], np.int32)], e[:, A([0, 2])]

    outs = jit(f)(s, e)
    wants = [s[()], s[None], s[...], np.asarray(s)[True], np.asarray(s)[False]]
    wants += [e[A([], np.int32)], e[:, A([0, 2])]]
    for got, want in zip(outs, wants):
        _check(got, want)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jit(lambda e: e[A([0])])(e)
    with pytest.raises(IndexError, match="size 0"):
        jit(lambda e: e[0])(e)


@st.composite
def _index_exprs(draw):
    """Random mixes of ints, slices, integer arrays, masks, None and `...` for a (4, 4, 4)
    array (a cube, so that every index fits whichever axis it lands on)."""
    n_axes = draw(st.integers(0, 3))
    bshape = draw(st.sampled_from([(2,), (3, 1), (1, 2), ()]))
    items = []
    for _ in range(n_axes):
        kind = draw(st.sampled_from(["int", "slice", "array", "array", "mask", "list"]))
        if kind == "int":
            items.append(draw(st.integers(-4, 3)))
        elif kind == "slice":
            start, stop = draw(st.none() | st.integers(-5, 5)), draw(st.none() | st.integers(-5, 5))
            step = draw(st.none() | st.sampled_from([1, 2, -1, -3]))
            items.append(slice(start, stop, step))
        elif kind == "mask":
            items.append(A(draw(st.lists(st.booleans(), min_size=4, max_size=4))))
        else:
            shape = tuple(d if draw(st.booleans()) else 1 for d in bshape)
            values = draw(st.lists(st.integers(-4, 3), min_size=8, max_size=8))
            arr = A(values[: int(np.prod(shape))], np.int32).reshape(shape)
            items.append(arr.tolist() if kind == "list" and arr.ndim else arr)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


@settings(max_examples=30, deadline=None)
@given(_index_exprs())
def test_random_index_mixes_match_numpy(idx):
    x = np.arange(64, dtype=np.float32).reshape(4, 4, 4)
    host_idx = tuple(A(i) if isinstance(i, list) else i for i in idx)
    try:
        want = x[host_idx]
    except IndexError:  # masks that broadcast with no array
        return
    _check(device_put(x)[idx], want)
    y = np.arange(want.size, dtype=np.float32).reshape(want.shape) + 100
    added = x.copy()
    np.add.at(added, host_idx, y)
    _check(device_put(x).at[idx].add(y), added)


# ---------------------------------------------------------------------------
# Out-of-bound indices


def test_out_of_bound_reads_clamp_by_default():
    x = np.arange(10, dtype=np.float32)
    outs = jit(lambda x: (x[11], x[-13], x[A([9, 10, -11, -1])], x[12:14], x[-13:-15]))(x)
    _check(outs[0], x[9])
    _check(outs[1], x[0])  # -13 wraps to -3, then clamps to 0
    _check(outs[2], x[A([9, 9, 0, 9])])
    _check(outs[3], x[12:14])  # slices are empty, as in NumPy
    _check(outs[4], x[-13:-15])


def test_out_of_bound_reads_fill_or_clip():
    x = device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    i = A([0, 3, -1, -4])
    _check(x.at[:, i].get(mode="fill", fill_value=-1.0), A([[0, -1, 2, -1], [3, -1, 5, -1]], f32))
    _check(x.at[:, i].get(mode="fill")[0], A([0, np.nan, 2, np.nan], np.float32))
    _check(x.at[5].get(mode="fill")[1], np.float32(np.nan))
    _check(x.at[:, i].get(mode="clip"), np.asarray(x)[:, A([0, 2, 2, 0])])
    ints = device_put(np.arange(4, dtype=np.int32))
    _check(ints.at[A([4])].get(mode="fill"), A([np.iinfo(np.int32).min], np.int32))
    uints = device_put(np.arange(4, dtype=np.uint8))
    _check(uints.at[7].get(mode="fill"), np.uint8(255))
    bools = device_put(np.zeros(3, bool))
    _check(bools.at[A([5])].get(mode="fill"), A([True]))


def test_out_of_bound_updates_drop_or_clip():
    x = device_put(np.zeros(5, np.float32))
    _check(x.at[A([1, 7, -6])].set(A([1.0, 2.0, 3.0], np.float32)), A([0, 1, 0, 0, 0], f32))
    _check(x.at[10].add(2.0), np.zeros(5, f32))
    _check(x.at[A([1, 7])].add(5.0, mode="clip"), A([0, 5, 0, 0, 5], f32))
    _check(x.at[-1].set(4.0), A([0, 0, 0, 0, 4], f32))


# ---------------------------------------------------------------------------
# Traced indices: jit against eager, and what they lower to


def _traced_fn(x, i, j):
    return (
        x[i],
        x[i, 1:],
        x[:, j],
        x[i, j],
        x[A([0, 1]), i],
        x[i, A([[2], [0]])],
        x[::-1, [j, 0]],  # a list holding a tracer
        x.at[i].set(0.0),
        x.at[i, j].add(10.0),
        x.at[i].get(mode="fill", fill_value=-1.0),
    )


def _np_traced_fn(x, i, j):
    def clamp(k, n):
        k = k + n if k < 0 else k
        return min(max(k, 0), n - 1)

    ci, cj = clamp(i, x.shape[0]), clamp(j, x.shape[1])
    set_ = x.copy()
    set_[ci] = 0
    add = x.copy()
    if -x.shape[0] <= i < x.shape[0] and -x.shape[1] <= j < x.shape[1]:
        add[i, j] += 10
    wi = i + x.shape[0] if i < 0 else i
    get = x[wi] if 0 <= wi < x.shape[0] else np.full(x.shape[1:], -1, x.dtype)
    return (
        x[ci],
        x[ci, 1:],
        x[:, cj],
        x[ci, cj],
        x[A([0, 1]), clamp(i, x.shape[1])],
        x[ci, A([[2], [0]])],
        x[::-1, [cj, 0]],
        set_ if -x.shape[0] <= i < x.shape[0] else x,
        add,
        get,
    )


@pytest.mark.parametrize("i, j", [(1, 2), (-1, -4), (5, 7), (-9, -1)])
def test_traced_indices_jit_matches_eager_and_numpy(i, j):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i, j = np.int32(i), np.int32(j)
    jitted = jit(_traced_fn)(x, i, j)
    eager = _traced_fn(device_put(x), device_put(i), device_put(j))
    for got, ea, want in zip(jitted, eager, _np_traced_fn(x, int(i), int(j))):
        _check(got, want)
        _check(ea, want)


def test_traced_scalar_indices_lower_to_dynamic_slice():
    x = np.zeros((3, 4), np.float32)
    i = np.int32(0)
    prims = _prims(lambda x, i: x[i, 1:], x, i)
    assert prims[0] == "slice" and prims[-2:] == ["dynamic_slice", "squeeze"], prims
    assert "gather" not in prims
    prims = _prims(lambda x, i: x[i, A([0, 1])], x, i)
    assert prims.count("gather") == 1 and "dynamic_slice" not in prims
    assert _prims(lambda x: x[A([0, 2]), 1:3], x) == ["slice", "gather"]
    assert _prims(lambda x: x[1, ::-1, None], x) == ["slice", "rev", "squeeze", "broadcast_in_dim"]
    assert _prims(lambda x, i: x.at[A([0, 0]), i].add(1.0), x, i).count("scatter-add") == 1
    # a fill read of a traced int needs the gather's mask
    assert "gather" in _prims(lambda x, i: x.at[i].get(mode="fill"), x, i)


def test_traced_slice_bounds_and_masks_raise():
    x = np.zeros(5, np.float32)
    with pytest.raises(IndexError, match="static start/stop/step"):
        jit(lambda x, i: x[i : i + 2])(x, np.int32(1))
    with pytest.raises(NonConcreteBooleanIndexError, match="boolean indices must be concrete"):
        jit(lambda x: x[x > 0])(x)
    assert issubclass(NonConcreteBooleanIndexError, JAXIndexError)
    with pytest.raises(NonConcreteBooleanIndexError):
        jit(lambda x, b: x[b])(x, np.bool_(True))
    # A mask known while tracing (a constant, or a concrete array) is fine under jit.
    mask = A([True, False, True, False, True])
    _check(jit(lambda x: x[mask])(np.arange(5, dtype=f32)), A([0, 2, 4], f32))
    _check(jit(lambda x: x[device_put(mask)])(np.arange(5, dtype=f32)), A([0, 2, 4], f32))


# ---------------------------------------------------------------------------
# vmap


def test_vmap_of_indexing_matches_loop():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    xs = np.arange(3 * 20, dtype=np.float32).reshape(3, 4, 5)
    idx = A([[0, 3], [2, 2], [-1, 1]], np.int32)  # one index array per example
    scalars = A([2, -1, 7], np.int32)
    ys = np.ones((3, 2, 5), np.float32)

    def loop(f, *args):
        return np.stack([np.asarray(f(*(a[k] for a in args))) for k in range(3)])

    cases = [
        (lambda i: device_put(x)[i], (idx,)),
        (lambda x: x[A([1, 1, 0]), 1:4], (xs,)),
        (lambda x, i: x[i], (xs, idx)),
        (lambda x, i: x[i, 1:], (xs, scalars)),
        (lambda x, i: x[:, i], (xs, scalars)),
        (lambda x, i, y: x.at[i].add(y), (xs, idx, ys)),
        (lambda x, i: x.at[i, 0].set(-1.0), (xs, idx)),
        (lambda x, i: jnp.take_along_axis(x, i[None], axis=1), (xs, idx)),
    ]
    for f, args in cases:
        _check(vmap(f)(*args), loop(f, *(device_put(a) for a in args)))


def _greedy_assignment(cost, row0):
    """A greedy assignment-problem step loop: a traced row indexes the cost matrix
    together with an array of columns (read, then masked with `.at[row, cols]`)."""
    cols = jnp.arange(cost.shape[1])

    def body(_, state):
        cost, row, total = state
        values = cost[row, cols]
        col = jnp.argmin(values)
        cost = cost.at[row, cols].set(jnp.inf).at[:, col].set(jnp.inf)
        return cost, (row + 1) % cost.shape[0], total + values[col]

    return lax.fori_loop(0, cost.shape[0], body, (cost, row0, jnp.float32(0)))[2]


@pytest.mark.parametrize("batch", [3, 0])
def test_vmap_of_traced_row_and_column_array(batch):
    # vmap over an empty batch once failed: the gather pairing the batch axes of
    # the cost and the row asked for a slice of 1 along the empty batch axis.
    rng = np.random.default_rng(7)
    costs = rng.integers(0, 9, size=(batch, 4, 4)).astype(np.float32)
    rows = A([1, 3, 0][:batch], np.int32)
    cols = A([0, 2, 3], np.int32)
    cases = [
        (_greedy_assignment, (costs, rows)),
        (lambda c, r: c[r, cols], (costs, rows)),
        (lambda c, r: c[rows][:, r], (costs, rows)),
        (lambda c, r: c.at[r, cols].set(-1.0), (costs, rows)),
        (lambda c, r: c.at[r, cols].get(mode="fill"), (costs, rows)),
        (lambda c, r: lax.dynamic_slice(c, (r, 1), (2, 3)), (costs, rows)),
        (grad(lambda c, r: (c[r, cols] ** 2).sum()), (costs, rows)),
    ]
    for f, args in cases:
        got = jit(vmap(f))(*args)
        if batch:
            want = np.stack([np.asarray(jit(f)(*(a[k] for a in args))) for k in range(batch)])
        else:
            one = jit(f)(np.zeros((4, 4), np.float32), np.int32(0))
            want = np.zeros((0, *one.shape), one.dtype)
        _check(got, want)


# ---------------------------------------------------------------------------
# Gradients


def test_grads_of_gather():
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    check_grads(lambda x: x[A([0, 2, 2]), 1:4], (x,), order=2)
    check_grads(lambda x: x[:, A([[4], [0]]), None], (x,), order=2)
    check_grads(lambda x: jnp.take(x, A([3, 1, 1]), axis=1), (x,), order=1)
    check_grads(lambda x: jnp.take_along_axis(x, A([[1], [0], [4], [4]]), axis=1), (x,), order=1)


def test_grads_of_scatters():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 3)).astype(np.float32)
    y = rng.normal(size=(3, 3)).astype(np.float32)
    rep = A([0, 2, 0])
    at = jnp.asarray  # check_grads also calls the function on NumPy arrays
    check_grads(lambda x, y: at(x).at[rep].add(y), (x, y), order=2)
    check_grads(lambda x, y: at(x).at[A([3, 1, 0])].set(y), (x, y), order=2)
    check_grads(lambda x, y: at(x).at[rep].subtract(y), (x, y), order=1)
    check_grads(lambda x, y: at(x).at[A([2, 0, 3])].multiply(y, unique_indices=True), (x, y), 1)
    check_grads(lambda x, y: at(x).at[1:, 0].max(y[:, 0]), (x, y), order=1)


# ---------------------------------------------------------------------------
# x.at[idx]: every method against NumPy's in-place updates


def test_at_methods_match_numpy_ufunc_at():
    rng = np.random.default_rng(2)
    x = rng.uniform(1, 2, size=(4, 3)).astype(np.float32)
    y = rng.uniform(1, 2, size=(5, 3)).astype(np.float32)
    rep = A([0, 2, 0, 3, 0])

    def f(x, y):
        r = x.at[rep]
        return (
            r.add(y),
            r.subtract(y),
            r.multiply(y),
            r.mul(y),
            r.divide(y),
            r.power(y),
            r.min(y),
            r.max(y),
            r.apply(lambda v: v * 2 + 1),
            x.at[1:3, A([2, 0])].set(y[:2, :2]),
            r.get(),
        )

    outs = jit(f)(x, y)
    wants = []
    for ufunc in (np.add, np.subtract, np.multiply, np.multiply, np.divide, np.power):
        w = x.copy()
        ufunc.at(w, rep, y)
        wants.append(w)
    for ufunc in (np.minimum, np.maximum):
        w = x.copy()
        ufunc.at(w, rep, y)
        wants.append(w)
    w = x.copy()
    for k in rep:  # apply runs once per index, like ufunc.at
        w[k] = w[k] * 2 + 1
    wants.append(w)
    w = x.copy()
    w[1:3, A([2, 0])] = y[:2, :2]
    wants += [w, x[rep]]
    for got, want in zip(outs, wants):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
        assert np.asarray(got).dtype == f32


def test_at_dtypes_and_casts():
    xi = device_put(np.arange(4, dtype=np.int32))
    out = xi.at[A([1, 1])].divide(2)
    _check(out, A([0, 0.25, 2, 3], f32))  # integer division is true division, as in JAX
    _check(xi.at[2].power(3), A([0, 1, 8, 3], np.int32))
    _check(xi.at[0].add(True), A([1, 1, 2, 3], np.int32))
    with pytest.warns(FutureWarning, match="cannot safely cast") as record:
        _check(xi.at[0].set(2.7), A([2, 1, 2, 3], np.int32))
    assert record[0].filename == __file__  # the warning names the user's line
    xh = device_put(np.zeros(2, np.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Python scalars are weak: no warning
        _check(xh.at[1].set(1.5), A([0, 1.5], f16))
    with pytest.warns(FutureWarning):
        xh.at[0].set(np.float32(1.0))


def test_at_broadcasting_and_errors():
    x = device_put(np.zeros((3, 4), np.float32))
    _check(x.at[:, A([0, 2])].set(A([1.0, 2.0], np.float32)), np.tile(A([1, 0, 2, 0], f32), (3, 1)))
    _check(x.at[None, 1].set(A([[5.0, 6.0, 7.0, 8.0]], f32))[1], A([5, 6, 7, 8], f32))
    with pytest.raises(ValueError, match=r"values of shape \(3,\) cannot be broadcast"):
        x.at[0].set(np.zeros(3, np.float32))
    assert "_IndexUpdateRef" in repr(x.at[0]) and "_IndexUpdateHelper" in repr(x.at)


def test_item_assignment_raises_pointing_to_at():
    x = device_put(np.zeros(3, np.float32))
    with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)"):
        x[0] = 1.0

    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError, match="immutable"):
        jit(f)(np.zeros(3, np.float32))


# ---------------------------------------------------------------------------
# Index errors


@pytest.mark.parametrize(
    "index, exc, msg",
    [
        ([0, 1], TypeError, "non-tuple sequence"),
        (1.0, TypeError, "Indexer must have integer or boolean type, got indexer with type float"),
        ((0, A([0.5])), TypeError, "type float64 at position 1"),
        ((0, 0, 0, 0, 0), IndexError, "Too many indices"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (
            A([True, False, True]),
            IndexError,
            "boolean index did not match indexed array along axis 0",
        ),
        ((A([0, 1]), A([0, 1, 2])), IndexError, "could not be broadcast together"),
        (slice(0, 2, 0), ValueError, "slice step cannot be zero"),
        (slice(0.5, 2), TypeError, "Slice entries must be integers"),
    ],
)
def test_index_errors(index, exc, msg):
    with pytest.raises(exc, match=msg):
        make_jaxpr(lambda x: x[index])(X)


# ---------------------------------------------------------------------------
# take, take_along_axis, put, put_along_axis


def test_take_modes_match_numpy():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = A([[0, 5], [-1, 2]])

    def f(x):
        return (
            jnp.take(x, i),
            jnp.take(x, i, axis=1, mode="clip"),
            jnp.take(x, i, axis=0, mode="wrap"),
            jnp.take(x, i, axis=1, fill_value=-2.0),
            jnp.take(x, 2, axis=1),
            jnp.take(x, 9, axis=1),
            x.take(A([1, 1]), axis=0),
        )

    outs = jit(f)(x)
    flat = np.append(x.ravel(), np.nan).astype(np.float32)
    _check(outs[0], flat[A([[0, 5], [11, 2]])])
    # "clip" clamps as NumPy does: a negative index reads element 0 (as in JAX).
    _check(outs[1], np.take(x, i, axis=1, mode="clip"))
    _check(outs[2], np.take(x, i, axis=0, mode="wrap"))
    _check(outs[3], A([[[0, -2], [3, 2]], [[4, -2], [7, 6]], [[8, -2], [11, 10]]], f32))
    _check(outs[4], x[:, 2])
    _check(outs[5], np.full(3, np.nan, np.float32))
    _check(outs[6], x[A([1, 1])])
    e = np.zeros((0, 3), np.float32)
    _check(jnp.take(e, A([0]), axis=0), np.full((1, 3), np.nan, np.float32))
    with pytest.raises(IndexError, match="non-empty jnp.take.. from an empty axis"):
        jnp.take(e, A([0]), axis=0, mode="clip")
    _check(jnp.take(e, A([], np.int32), axis=0, mode="clip"), np.zeros((0, 3), np.float32))


def test_take_errors():
    x = np.zeros(3, np.float32)
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.take(x, A([0]), mode="raise")
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.take(x, A([0]), out=x)
    with pytest.raises(ValueError, match="Invalid mode"):
        jnp.take(x, A([0]), mode="bogus")
    with pytest.raises(TypeError, match="indices must be of integer type"):
        jnp.take(x, A([0.0]))
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.take(x, [0, 1])


def test_take_along_axis_matches_numpy():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    order = np.argsort(x, axis=1).astype(np.int32)
    outs = jit(
        lambda x, o: (
            jnp.take_along_axis(x, o, axis=1),
            jnp.take_along_axis(x, o[:, :2] - 4, axis=-2),
            jnp.take_along_axis(x, A([[[0]], [[4]], [[2]]]), axis=2),  # broadcasts
            jnp.take_along_axis(x, A([3, -1, 200]), axis=None),
            jnp.take_along_axis(x, A([[[7]]]), axis=1, mode="clip"),
            jnp.take_along_axis(x, A([[[7]]]), axis=1, fill_value=0.5),
        )
    )(x, order)
    _check(outs[0], np.take_along_axis(x, order, axis=1))
    _check(outs[1], np.take_along_axis(x, order[:, :2], axis=1))
    _check(outs[2], np.take_along_axis(x, np.broadcast_to(A([[[0]], [[4]], [[2]]]), (3, 4, 1)), 2))
    _check(outs[3], A([x.ravel()[3], x.ravel()[-1], np.nan], np.float32))
    _check(outs[4], np.take_along_axis(x, np.full((3, 1, 5), 3), axis=1))
    _check(outs[5], np.full((3, 1, 5), 0.5, np.float32))
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.take_along_axis(x, A([0]), axis=0)
    with pytest.raises(ValueError, match="single dimension"):
        jnp.take_along_axis(x, A([[0]]), axis=None)
    with pytest.raises(ValueError, match="do not broadcast"):
        jnp.take_along_axis(x, np.zeros((2, 1, 1), np.int32), axis=1)


def test_put_along_axis_and_put():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = A([[1], [-1], [0]])
    got = jnp.put_along_axis(x, i, A([[10.0], [20.0], [30.0]], f32), axis=1, inplace=False)
    want = x.copy()
    np.put_along_axis(want, i, A([[10.0], [20.0], [30.0]], f32), axis=1)
    _check(got, want)
    got = jnp.put_along_axis(x, A([[0], [2]]), -1.0, axis=0, inplace=False)  # broadcasts
    want = x.copy()
    np.put_along_axis(want, np.broadcast_to(A([[0], [2]]), (2, 4)), -1.0, axis=0)
    _check(got, want)
    _check(
        jnp.put_along_axis(x, A([13, 0]), 5.0, axis=None, inplace=False).ravel()[0], np.float32(5)
    )
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(x, i, 1.0, axis=1)

    for mode in (None, "clip", "wrap"):
        ind = A([0, 5, -1, 13])
        got = jnp.put(x, ind, A([1.0, 2.0], f32), mode=mode, inplace=False)
        want = x.copy()
        np.put(want, ind, A([1.0, 2.0], f32), mode=mode or "clip")
        _check(got, want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put(x, A([0]), 1.0)
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.put(x, A([0]), 1.0, mode="raise", inplace=False)


# ---------------------------------------------------------------------------
# Index helpers: ix_, s_, index_exp, mgrid, ogrid, r_, c_


def test_ix_matches_numpy():
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    rows, cols = A([3, 0]), [True, False, True, False, True]
    got = jnp.asarray(x)[jnp.ix_(rows, cols)]
    _check(got, x[np.ix_(rows, cols)])
    (empty,) = jnp.ix_([])
    assert empty.shape == (0,) and empty.dtype == i32
    outs = jit(lambda r: jnp.ix_(r, A([1, 2])))(rows)  # traced integer arguments
    assert [o.shape for o in outs] == [(2, 1), (1, 2)]
    with pytest.raises(ValueError, match="must be 1-dimensional"):
        jnp.ix_(np.zeros((2, 2), np.int32))
    with pytest.raises(NonConcreteBooleanIndexError):
        jit(lambda m: jnp.ix_(m))(A([True, False]))


def test_index_expressions():
    assert jnp.s_[1:, ::2] == (slice(1, None), slice(None, None, 2))
    assert jnp.s_[3] == 3 and jnp.index_exp[3] == (3,)
    assert jnp.index_exp[1, None] == (1, None)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    _check(jnp.asarray(x)[jnp.s_[::2, A([0, 3])]], x[::2, A([0, 3])])


@pytest.mark.parametrize(
    "key",
    [
        slice(0, 4),
        slice(-1, 1, 5j),
        (slice(0, 3), slice(0, 4)),
        (slice(-1, 1, 3j), slice(0, 5, 2)),
        (slice(1, 2, 0.25), slice(0, 2), slice(0, 1, 2j)),
    ],
    ids=str,
)
def test_mgrid_ogrid_match_numpy(key):
    want = np.mgrid[key]
    got = jnp.mgrid[key]
    kind = want.dtype.kind
    _check(got, want.astype(i32 if kind == "i" else f32))
    for g, w in zip(
        jnp.ogrid[key] if isinstance(key, tuple) else [jnp.ogrid[key]],
        np.ogrid[key] if isinstance(key, tuple) else [np.ogrid[key]],
    ):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
        assert np.asarray(g).shape == w.shape
        assert np.asarray(g).dtype == (i32 if w.dtype.kind == "i" else f32)
    with pytest.raises(TypeError, match="takes slices"):
        jnp.mgrid[0:2, 3]


@pytest.mark.parametrize(
    "fn, key",
    [
        ("r_", (slice(1, 4), 0, [7, 8])),
        ("r_", (A([1, 2]), A([3.5]))),
        ("r_", (slice(-1, 1, 5j), [0] * 3, 5)),
        ("r_", ("0,2", [1, 2], [3, 4])),
        ("r_", ("1,2,0", [1, 2], [3, 4])),
        ("r_", ("-1,3,-2", [1, 2], [3, 4])),
        ("r_", ("0", A([[1, 2]]), A([[3, 4]]))),
        ("c_", (A([1, 2, 3]), A([4, 5, 6]))),
        ("c_", (A([[1, 2, 3]]), 0, 0, A([[4, 5, 6]]))),
    ],
)
def test_r_c_match_numpy(fn, key):
    want = getattr(np, fn)[key]
    got = getattr(jnp, fn)[key]
    np.testing.assert_allclose(np.asarray(got), want)
    assert np.asarray(got).dtype == (i32 if want.dtype.kind == "i" else f32)


def test_r_c_errors():
    with pytest.raises(NotImplementedError, match="matrix directives"):
        jnp.r_["r", [1, 2]]
    with pytest.raises(ValueError, match="could not understand directive"):
        jnp.r_["x,y", [1, 2]]
    with pytest.raises(ValueError, match="only allowed first"):
        jnp.r_[[1], "0"]
    _check(jit(lambda a: jnp.r_[a, 1.0])(A([2.0], f32)), A([2.0, 1.0], f32))
