"""`jnp.ufunc` objects and `jnp.frompyfunc`: attributes, `reduce`, `accumulate`,
`reduceat`, `outer`, `at`, against NumPy's ufuncs; errors; jit, vmap, derivatives.

Each family of cases runs under one `jit` (one compilation). Result dtypes are
JAX's (e.g. `add.reduce` of small integers gives int32), values NumPy's.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

f32, i32, i8, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.int8, np.uint8, bool))

UFUNCS = [
    "add",
    "subtract",
    "multiply",
    "negative",
    "maximum",
    "minimum",
    "logaddexp",
    "logaddexp2",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "logical_and",
    "logical_or",
    "logical_xor",
]

X = np.array([[1.0, -2.0, 3.5, 0.5], [4.0, 0.25, -1.0, 2.0], [-3.0, 1.5, 2.5, -0.5]], np.float32)
N = np.array([[3, 5, 12, 7], [6, 1, 9, 14], [10, 2, 8, 4]], np.int32)
B = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, False]])


def _check(got, want, dtype=None, rtol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    if dtype is not None:
        assert got.dtype == dtype, (got.dtype, dtype)
        want = want.astype(dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", UFUNCS)
def test_attributes(name):
    ours, theirs = getattr(jnp, name), getattr(np, name)
    assert isinstance(ours, jnp.ufunc)
    assert (ours.nin, ours.nout, ours.nargs) == (theirs.nin, theirs.nout, theirs.nin)
    assert ours.identity == theirs.identity or (ours.identity is theirs.identity is None)
    assert ours.__name__ == name and repr(ours) == f"<jnp.ufunc '{name}'>"
    assert ours == getattr(jnp, name) and hash(ours) == hash(getattr(jnp, name))
    assert ours.__doc__


def test_frompyfunc_equality_and_hash():
    a = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    b = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
    c = jnp.frompyfunc(operator.add, nin=2, nout=1)
    assert a == b and hash(a) == hash(b) and a != c and a != jnp.add
    assert len({a, b, c}) == 2


# ---------------------------------------------------------------------------
# reduce

REDUCE_CASES = [
    # (ufunc, input, kwargs, NumPy's result)
    ("add", N, {}, np.add.reduce(N)),
    ("add", N, {"axis": 1, "keepdims": True}, np.add.reduce(N, axis=1, keepdims=True)),
    ("add", N, {"axis": None}, np.add.reduce(N, axis=None)),
    ("add", X, {"axis": (0, 1), "initial": 10.0}, np.add.reduce(X, axis=(0, 1), initial=10.0)),
    ("add", X, {"where": B[0], "axis": 1}, np.add.reduce(X, axis=1, where=B[0])),
    ("add", B, {}, np.add.reduce(B.astype(np.int32))),
    ("add", N, {"dtype": np.float32}, np.add.reduce(N, dtype=np.float32)),
    ("multiply", N, {"axis": 1}, np.multiply.reduce(N, axis=1)),
    ("maximum", X, {}, np.maximum.reduce(X)),
    ("maximum", X, {"axis": 1, "where": B, "initial": -9.0},
     np.maximum.reduce(X, axis=1, where=B, initial=-9.0)),
    ("minimum", N, {"axis": None, "keepdims": True},
     np.minimum.reduce(N, axis=None, keepdims=True)),
    ("bitwise_and", N, {"axis": 1}, np.bitwise_and.reduce(N, axis=1)),
    ("bitwise_or", N, {}, np.bitwise_or.reduce(N)),
    ("bitwise_xor", N, {"axis": None}, np.bitwise_xor.reduce(N, axis=None)),
    ("bitwise_or", N, {"where": B, "axis": 1}, np.bitwise_or.reduce(N, where=B, axis=1)),
    ("logical_and", B, {"axis": 1}, np.logical_and.reduce(B, axis=1)),
    ("logical_or", N - 5, {}, np.logical_or.reduce(N - 5)),
    ("logical_xor", B, {"axis": None}, np.logical_xor.reduce(B, axis=None)),
    ("logical_and", B, {"where": B[0], "axis": 1}, np.logical_and.reduce(B, where=B[0], axis=1)),
    ("logaddexp", X, {"axis": 1}, np.logaddexp.reduce(X.astype(np.float64), axis=1)),
    ("logaddexp2", X, {}, np.logaddexp2.reduce(X.astype(np.float64))),
    ("logaddexp", X, {"where": B, "axis": 0}, np.logaddexp.reduce(X, where=B, axis=0)),
]  # fmt: skip


def _canonical(dtype: np.dtype) -> np.dtype:
    """NumPy's 64-bit result types are 32-bit ones in JAX (without x64)."""
    return {"int64": i32, "uint64": np.dtype(np.uint32), "float64": f32}.get(dtype.name, dtype)


def test_reduce():
    def f(xs):
        return [getattr(jnp, n).reduce(x, **kw) for (n, _, kw, _), x in zip(REDUCE_CASES, xs)]

    got = jit(f)([case[1] for case in REDUCE_CASES])
    for (_, _, _, want), g in zip(REDUCE_CASES, got):
        _check(g, want, _canonical(np.asarray(want).dtype), rtol=1e-5)


def test_reduce_of_logaddexp_handles_infinities():
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, -np.inf]], np.float32)
    _check(jnp.logaddexp.reduce(x, axis=1), np.logaddexp.reduce(x, axis=1), f32)
    _check(jnp.logaddexp.reduce(np.zeros((0,), np.float32)), -np.inf, f32)
    assert jnp.logaddexp.reduce(np.arange(3)).dtype == f32


def test_reduce_of_small_integers_uses_the_default_integer():
    assert jnp.add.reduce(np.ones(3, np.int8)).dtype == i32
    assert jnp.multiply.reduce(np.ones(3, np.uint8)).dtype == np.dtype(np.uint32)
    assert jnp.maximum.reduce(np.ones(3, np.int8)).dtype == i8


# ---------------------------------------------------------------------------
# accumulate, reduceat, outer


def test_accumulate_reduceat_outer():
    idx = np.array([0, 2, 1, 3], np.int32)

    def f(x, n, b):
        return [
            jnp.add.accumulate(n),
            jnp.add.accumulate(x, axis=1),
            jnp.add.accumulate(b),
            jnp.multiply.accumulate(n, axis=1),
            jnp.maximum.accumulate(x, axis=1),
            jnp.minimum.accumulate(n),
            jnp.logaddexp.accumulate(x, axis=1),
            jnp.add.reduceat(n, idx, axis=1),
            jnp.maximum.reduceat(x, idx, axis=1),
            jnp.multiply.reduceat(n, np.array([0, 2], np.int32)),
            jnp.add.outer(x[0], n[:, 0]),
            jnp.multiply.outer(n, n[0]),
            jnp.maximum.outer(x[:2, :2], x[0, :3]),
            jnp.logaddexp.outer(x[0], x[1]),
            jnp.bitwise_and.outer(n[0], n[1]),
        ]

    got = jit(f)(X, N, B)
    want = [
        np.add.accumulate(N),
        np.add.accumulate(X, axis=1),
        np.add.accumulate(B.astype(np.int32)),
        np.multiply.accumulate(N, axis=1),
        np.maximum.accumulate(X, axis=1),
        np.minimum.accumulate(N),
        np.logaddexp.accumulate(X, axis=1),
        np.add.reduceat(N, idx, axis=1),
        np.maximum.reduceat(X, idx, axis=1),
        np.multiply.reduceat(N, [0, 2]),
        np.add.outer(X[0], N[:, 0]).astype(f32),
        np.multiply.outer(N, N[0]),
        np.maximum.outer(X[:2, :2], X[0, :3]),
        np.logaddexp.outer(X[0], X[1]),
        np.bitwise_and.outer(N[0], N[1]),
    ]
    for g, w in zip(got, want):
        _check(g, w, _canonical(w.dtype), rtol=1e-5)


# ---------------------------------------------------------------------------
# at


def test_at():
    a = np.arange(6, dtype=np.float32)
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    idx = np.array([0, 2, 2, -1], np.int32)
    rows, cols = np.array([0, 2, 0], np.int32), np.array([1, 3, 1], np.int32)
    vals = np.array([1.5, -2.0, 4.0, 0.5], np.float32)

    def f(a, m):
        return [
            jnp.add.at(a, idx, vals, inplace=False),
            jnp.add.at(a, idx, 1.0, inplace=False),
            jnp.multiply.at(a, idx, vals, inplace=False),
            jnp.subtract.at(a, idx, vals, inplace=False),
            jnp.maximum.at(a, idx, vals, inplace=False),
            jnp.minimum.at(m, (rows, cols), 2, inplace=False),
            jnp.add.at(m, rows, np.int32(100), inplace=False),
            jnp.negative.at(a, idx, inplace=False),
            jnp.logaddexp.at(a, idx, vals, inplace=False),
            jnp.bitwise_or.at(m, (rows, cols), np.int32(16), inplace=False),
        ]

    got = jit(f)(a, m)

    def numpy_at(ufunc, target, *args):
        out = target.copy()
        ufunc.at(out, *args)
        return out

    want = [
        numpy_at(np.add, a, idx, vals),
        numpy_at(np.add, a, idx, 1.0),
        numpy_at(np.multiply, a, idx, vals),
        numpy_at(np.subtract, a, idx, vals),
        numpy_at(np.maximum, a, idx, vals),
        numpy_at(np.minimum, m, (rows, cols), 2),
        numpy_at(np.add, m, rows, 100),
        numpy_at(np.negative, a, idx),
        numpy_at(np.logaddexp, a, idx, vals),
        numpy_at(np.bitwise_or, m, (rows, cols), 16),
    ]
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.asarray(g).dtype == w.dtype, i
        _check(g, w, rtol=1e-5)


# ---------------------------------------------------------------------------
# frompyfunc: the generic methods


def _affine(a, b):
    return a * 2 + b


AFFINE = jnp.frompyfunc(_affine, nin=2, nout=1, identity=0)
NP_AFFINE = np.frompyfunc(_affine, 2, 1, identity=0)


def _np_obj(result, dtype):
    return np.asarray(result).astype(dtype)


def test_frompyfunc_generic_methods():
    n = N[:2]
    idx = np.array([0, 3, 1], np.int32)

    def f(n):
        return [
            AFFINE(n, np.int32(1)),
            AFFINE(n[:, :1], n[0]),
            AFFINE.reduce(n),
            AFFINE.reduce(n, axis=1, keepdims=True),
            AFFINE.reduce(n, axis=(0, 1)),
            AFFINE.reduce(n, axis=1, where=B[:2], initial=1),
            AFFINE.accumulate(n, axis=1),
            AFFINE.reduceat(n, idx, axis=1),
            AFFINE.outer(n[0], n[1, :2]),
            AFFINE.at(n, (np.array([0, 1, 0], np.int32), np.array([1, 2, 1], np.int32)), 3,
                      inplace=False),
        ]  # fmt: skip

    got = jit(f)(n)
    at_want = n.copy()
    NP_AFFINE.at(at_want, ([0, 1, 0], [1, 2, 1]), 3)
    want = [
        NP_AFFINE(n, 1),
        NP_AFFINE(n[:, :1], n[0]),
        NP_AFFINE.reduce(n),
        NP_AFFINE.reduce(n, axis=1, keepdims=True),
        NP_AFFINE.reduce(n.ravel()),
        NP_AFFINE.reduce(n, axis=1, where=B[:2], initial=1),
        NP_AFFINE.accumulate(n, axis=1),
        NP_AFFINE.reduceat(n, idx, axis=1),
        NP_AFFINE.outer(n[0], n[1, :2]),
        at_want,
    ]
    for g, w in zip(got, want):
        _check(g, _np_obj(w, i32), i32)


def test_frompyfunc_promotes_through_the_function():
    half = jnp.frompyfunc(lambda a, b: (a + b) / 2, nin=2, nout=1)
    got = half.reduce(np.array([1, 2, 4], np.int32))
    _check(got, ((1 + 2) / 2 + 4) / 2, f32)
    _check(half.accumulate(np.array([1, 2, 4], np.int32)), [1.0, 1.5, 2.75], f32)


def test_frompyfunc_two_outputs_and_scalars():
    split = jnp.frompyfunc(lambda a: (a // 3, a % 3), nin=1, nout=2)
    q, r = split(np.arange(7, dtype=np.int32))
    _check(q, np.arange(7) // 3, i32)
    _check(r, np.arange(7) % 3, i32)
    q0, r0 = split(np.int32(8))
    assert (int(q0), int(r0)) == (2, 2)
    empty = AFFINE(np.zeros((0, 3), np.int32), np.int32(1))
    assert empty.shape == (0, 3) and empty.dtype == i32


# ---------------------------------------------------------------------------
# Errors


def test_errors():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="inplace=True"):
        jnp.add.at(x, 0, 1.0)
    with pytest.raises(ValueError, match="second operand needed"):
        jnp.add.at(x, 0, inplace=False)
    with pytest.raises(ValueError, match="second operand provided for unary"):
        jnp.negative.at(x, 0, 1.0, inplace=False)
    with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
        jnp.negative.reduce(x)
    with pytest.raises(ValueError, match="outer only supported for binary ufuncs"):
        jnp.negative.outer(x, x)
    with pytest.raises(ValueError, match="accumulate only supported"):
        jnp.frompyfunc(lambda a, b: (a, b), nin=2, nout=2).accumulate(x)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional arguments but 3"):
        jnp.add(x, x, x)
    with pytest.raises(NotImplementedError, match="out argument"):
        jnp.add(x, x, out=x)
    with pytest.raises(NotImplementedError, match="where argument"):
        jnp.add(x, x, where=x > 1)
    no_identity = jnp.frompyfunc(_affine, nin=2, nout=1)
    with pytest.raises(ValueError, match="does not have an identity"):
        no_identity.reduce(x, where=x > 1)
    with pytest.raises(ValueError, match="zero-size array to reduction operation"):
        no_identity.reduce(np.zeros((0, 2), np.float32))
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        jnp.maximum.reduce(np.zeros((0,), np.float32))
    with pytest.raises(ValueError, match="indices must be a 1-D integer array"):
        AFFINE.reduceat(x, np.zeros((2, 2), np.int32))
    with pytest.raises(ValueError, match="the input must be an array"):
        AFFINE.accumulate(np.float32(1))
    with pytest.raises(NotImplementedError, match="integer indices"):
        AFFINE.at(x, slice(0, 2), 1.0, inplace=False)
    with pytest.raises(TypeError, match="reduce requires ndarray or scalar"):
        jnp.add.reduce([1, 2])
    with pytest.raises(TypeError, match="bitwise reduction is only defined for integer"):
        jnp.bitwise_or.reduce(x)


def test_empty_reductions_give_the_identity():
    empty = np.zeros((0, 3), np.int32)
    _check(jnp.add.reduce(empty), np.zeros(3), i32)
    _check(AFFINE.reduce(empty), np.zeros(3), i32)
    _check(jnp.logical_and.reduce(empty), np.ones(3, bool), boolean)
    _check(AFFINE.accumulate(empty), empty, i32)


# ---------------------------------------------------------------------------
# vmap against a loop; derivatives


def test_vmap_matches_loop():
    xs = np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 7

    cases = {
        "generic reduce": lambda x: AFFINE.reduce(x, axis=1),
        "generic accumulate": lambda x: AFFINE.accumulate(x),
        "generic reduceat": lambda x: AFFINE.reduceat(x, np.array([0, 2], np.int32), axis=1),
        "generic at": lambda x: AFFINE.at(x, (np.array([0, 0], np.int32),), 1, inplace=False),
        "add at": lambda x: jnp.add.at(x, (x[:, 0] % 3,), 5, inplace=False),
        "bitwise_xor reduce": lambda x: jnp.bitwise_xor.reduce(x, axis=None),
    }
    for name, fn in cases.items():
        batched = vmap(fn)(xs)
        looped = np.stack([np.asarray(fn(x)) for x in xs])
        np.testing.assert_array_equal(np.asarray(batched), looped, err_msg=name)


def test_check_grads():
    x = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.7]], np.float32)
    idx = np.array([0, 2, 0], np.int32)
    check_grads(lambda x: jnp.logaddexp.reduce(x, axis=1), (x,), order=2)
    check_grads(lambda x: jnp.logaddexp.accumulate(x, axis=1), (x,), order=1)
    mix = jnp.frompyfunc(lambda a, b: a * b + jnp.sin(a), nin=2, nout=1)
    check_grads(lambda x: mix.reduce(x, axis=1), (x,), order=2)
    check_grads(lambda x: mix.accumulate(x, axis=1), (x,), order=1)
    # As in JAX, scatter-multiplies differentiate in the updates only for indices
    # promised unique, which ufunc.at cannot promise: differentiate in `a`.
    check_grads(lambda a: jnp.multiply.at(a, idx, x[1], inplace=False), (x[0],), order=2)
    check_grads(lambda a, b: jnp.add.at(a, idx, b, inplace=False), (x[0], x[1]), order=2)
    check_grads(lambda a, b: mix.at(a, idx, b, inplace=False), (x[0], x[1]), order=1)
