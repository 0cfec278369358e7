"""lax names that round out JAX's API: `split`, `collapse`, `broadcast_shapes`, `empty`,
`sort_key_val`, `scatter_sub`, `index_take`, `optimization_barrier`.

Values against NumPy over dtypes and shapes (size 0 included), printed jaxprs,
errors, check_grads, vmap against a Python loop and jit against eager.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import mlir
from polyjax_interpreters.ad import grad, jvp
from polyjax_interpreters.array import Array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, i32, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))
c64 = np.dtype(np.complex64)
DTYPES = [f32, bf16, i32, u8, boolean, c64]
_rng = np.random.default_rng(0)


def _arr(shape, dtype=f32):
    x = (np.arange(int(np.prod(shape))) % 7).reshape(shape)
    return (x % 2).astype(dtype) if dtype == boolean else x.astype(dtype)


def _normal(shape, dtype=f32):
    return _rng.normal(size=shape).astype(dtype)


def _jaxpr(fun, *args) -> str:
    return " ".join(str(make_jaxpr(fun)(*args)).split())


def _loop(f, in_axes, args):
    """`f` mapped over the `in_axes` of `args` by a Python loop; outputs stacked on axis 0."""
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = [
        f(*[a if ax is None else np.take(a, k, ax) for a, ax in zip(args, in_axes)])
        for k in range(n)
    ]
    if isinstance(outs[0], list | tuple):
        return [np.stack([np.asarray(o[i]) for o in outs]) for i in range(len(outs[0]))]
    return np.stack([np.asarray(o) for o in outs])


def _assert_all_equal(got, want):
    got, want = list(got), list(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# ---------------------------------------------------------------------------
# split


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_split_dtypes(dtype):
    x = _arr((5, 3), dtype)
    out = lax.split(x, (2, 0, 3))
    assert all(o.dtype == dtype for o in out)
    _assert_all_equal(out, np.split(x, [2, 2], axis=0))


@pytest.mark.parametrize(
    "shape, sizes, axis",
    [((2, 6), (1, 2, 3), 1), ((2, 6), (6,), -1), ((0, 4), (1, 3), 1), ((3, 0), (0, 0), 1)],
)
def test_split_shapes(shape, sizes, axis):
    x = _arr(shape)
    bounds = np.cumsum(sizes)[:-1]
    _assert_all_equal(lax.split(x, sizes, axis), np.split(x, bounds, axis=axis))
    _assert_all_equal(jit(lambda x: lax.split(x, sizes, axis))(x), np.split(x, bounds, axis))


def test_split_jaxpr_and_errors():
    x = np.zeros((5, 6), np.float32)
    assert "b:f32[5,2] c:f32[5,4] = split[axis=1 sizes=(2, 4)] a" in _jaxpr(
        lambda x: lax.split(x, (2, 4), 1), x
    )
    with pytest.raises(ValueError, match="Sum of sizes 5 must be equal to dimension 1"):
        lax.split(x, (2, 3), 1)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.split(x, (7, -1), 1)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.split(x, (6,), 2)


def test_split_grads_vmap_symbolic():
    x = _normal((4, 5))
    check_grads(lambda x: lax.split(x, (1, 4), 1), (x,), order=2)
    check_grads(jit(lambda x: lax.split(x, (3, 0, 1), 0)[0]), (x,), order=1)
    f = lambda x: lax.split(x, (2, 3), 1)  # noqa: E731
    xb = _normal((3, 4, 5))
    for ax in (0, 2):  # batch axis before and after the split axis
        _assert_all_equal(vmap(f, in_axes=ax)(np.moveaxis(xb, 0, ax)), _loop(f, (0,), (xb,)))
    b = symbolic_dim("b")
    closed = make_jaxpr(lambda x: lax.split(x, (b, 2), 0))(ShapeDtypeStruct((b + 2, 3), f32))
    assert [tuple(a.shape) for a in closed.out_avals] == [(b, 3), (2, 3)]
    text = mlir.module_to_string(
        mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"]).module
    )
    assert "real_dynamic_slice" in text


# ---------------------------------------------------------------------------
# collapse and broadcast_shapes


@pytest.mark.parametrize(
    "shape, start, stop, want",
    [
        ((2, 3, 4), 0, 2, (6, 4)),
        ((2, 3, 4), 1, None, (2, 12)),
        ((2, 3, 4), 0, -1, (6, 4)),
        ((2, 3, 4), -2, 3, (2, 12)),
        ((2, 3, 4), 2, 1, (2, 3, 1, 4)),  # an empty range inserts an axis of size 1
        ((2, 0, 4), 0, 2, (0, 4)),
        ((5,), 0, None, (5,)),
    ],
)
def test_collapse(shape, start, stop, want):
    x = _arr(shape)
    out = lax.collapse(x, start, stop)
    assert out.shape == want
    np.testing.assert_array_equal(np.asarray(out), x.reshape(want))


def test_collapse_grads_and_vmap():
    x = _normal((2, 3, 4))
    check_grads(lambda x: lax.collapse(x, 1), (x,), order=1)
    f = lambda x: lax.collapse(x, 0, 2)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(vmap(f, in_axes=1)(x)), _loop(f, (1,), (x,)))
    with pytest.raises(TypeError):
        lax.collapse(x, 0.5)


@pytest.mark.parametrize(
    "shapes, want",
    [
        (((3, 1), (4,)), (3, 4)),
        (((2,),), (2,)),
        (((), (2, 3)), (2, 3)),
        (((0, 1), (1, 5), (5,)), (0, 5)),
    ],
)
def test_broadcast_shapes(shapes, want):
    assert lax.broadcast_shapes(*shapes) == want
    assert want == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_errors_and_symbolic():
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_shapes((2,), (3,))
    b = symbolic_dim("b")
    assert lax.broadcast_shapes((b, 1), (1, 3)) == (b, 3)


# ---------------------------------------------------------------------------
# empty


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 4)])
def test_empty(dtype, shape):
    out = lax.empty(shape, dtype)
    assert isinstance(out, Array) and out.dtype == dtype and out.shape == shape


def test_empty_jaxpr_jit_and_transforms():
    assert "a:f32[3] = empty[dtype=float32 out_sharding=None shape=(3,)]" in _jaxpr(
        lambda: lax.empty(3, np.float32)
    )
    x = _normal((3,))
    out = jit(lambda x: lax.mul(lax.empty((3,), np.float32), 0.0) + x)(x)
    np.testing.assert_array_equal(np.asarray(out), x)
    _, t = jvp(lambda x: lax.empty((3,), np.float32) + x, (x,), (np.ones(3, np.float32),))
    np.testing.assert_array_equal(np.asarray(t), np.ones(3))
    out = vmap(lambda x: lax.empty((2,), np.int32).shape[0] * x)(np.ones((4,), np.int32))
    np.testing.assert_array_equal(np.asarray(out), 2 * np.ones(4))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        lax.empty((2,), np.float32, out_sharding=object())


# ---------------------------------------------------------------------------
# sort_key_val


@pytest.mark.parametrize("key_dtype", [f32, bf16, i32, u8, boolean], ids=str)
@pytest.mark.parametrize("shape, dimension", [((7,), -1), ((3, 4), 0), ((0, 3), 1)])
def test_sort_key_val(key_dtype, shape, dimension):
    keys = (_arr(shape, i32) * 5 % 3).astype(key_dtype)  # ties, so stability shows
    values = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    k, v = lax.sort_key_val(keys, values, dimension)
    order = np.argsort(keys.astype(np.float32), axis=dimension, kind="stable")
    np.testing.assert_array_equal(np.asarray(k), np.take_along_axis(keys, order, dimension))
    np.testing.assert_array_equal(np.asarray(v), np.take_along_axis(values, order, dimension))


def test_sort_key_val_grads_vmap_jit():
    # Keys at least 1 apart, so that finite differences do not reorder them.
    keys = np.stack([_rng.permutation(5) for _ in range(3)]).astype(f32) + _normal((3, 5)) / 10
    values = _normal((3, 5))
    check_grads(lambda k, v: lax.sort_key_val(k, v), (keys, values), order=2)
    f = lambda k, v: lax.sort_key_val(k, v)  # noqa: E731
    _assert_all_equal(vmap(f, in_axes=(1, 1))(keys.T, values.T), _loop(f, (0, 0), (keys, values)))
    _assert_all_equal(jit(f)(keys, values), f(keys, values))


# ---------------------------------------------------------------------------
# scatter_sub

SDN_ROWS = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
ROWS = np.int32([[1], [0], [1], [5], [-1]])  # repeats and out-of-bounds rows


def _np_scatter_sub(x, rows, u, clip):
    out = np.array(x, copy=True)
    rows = np.asarray(rows)[:, 0]
    if clip:
        rows = np.clip(rows, 0, x.shape[0] - 1)
    else:
        keep = (rows >= 0) & (rows < x.shape[0])
        rows, u = rows[keep], u[keep]
    np.subtract.at(out, rows, u)
    return out


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("dtype", [f32, bf16, i32, u8, c64], ids=str)
def test_scatter_sub_values(dtype, mode):
    x = (_arr((3, 4)) + 10).astype(dtype)
    u = (np.arange(20).reshape(5, 4) % 3).astype(dtype)
    out = lax.scatter_sub(x, ROWS, u, SDN_ROWS, mode=mode)
    want = _np_scatter_sub(x, ROWS, u, mode == "clip")
    np.testing.assert_array_equal(np.asarray(out), want)


def test_scatter_sub_empty_updates_and_bool():
    x = _arr((3, 4))
    out = lax.scatter_sub(x, np.zeros((0, 1), np.int32), np.zeros((0, 4), f32), SDN_ROWS)
    np.testing.assert_array_equal(np.asarray(out), x)
    with pytest.raises(TypeError, match="bool"):
        lax.scatter_sub(_arr((3, 4), boolean), ROWS, _arr((5, 4), boolean), SDN_ROWS)


def test_scatter_sub_grads_vmap_jit():
    x, u = _normal((3, 4)), _normal((5, 4))
    f = lambda x, u: lax.scatter_sub(x, ROWS, u, SDN_ROWS)  # noqa: E731
    check_grads(f, (x, u), order=2)
    check_grads(jit(lambda u: lax.scatter_sub(x, ROWS, u, SDN_ROWS, mode="clip")), (u,), order=1)
    xb, ub = _normal((2, 3, 4)), _normal((2, 5, 4))
    out = vmap(f, in_axes=(0, 2))(xb, np.moveaxis(ub, 0, 2))
    np.testing.assert_allclose(np.asarray(out), _loop(f, (0, 0), (xb, ub)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(jit(f)(x, u)), np.asarray(f(x, u)))


# ---------------------------------------------------------------------------
# index_take


def _np_index_take(x, idxs, axes):
    """Entry k: `x` indexed by ``idxs[j][k]`` (wrapped) on ``axes[j]``, other axes whole."""
    kept = [d for d in range(x.ndim) if d not in axes]
    out = np.zeros((len(idxs[0]), *(x.shape[d] for d in kept)), x.dtype)
    for k in range(len(idxs[0])):
        index = [slice(None)] * x.ndim
        for a, i in zip(axes, idxs):
            index[a] = int(i[k]) % x.shape[a]
        out[k] = x[tuple(index)]
    return out


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_take_dtypes(dtype):
    x = _arr((3, 4, 5), dtype)
    idxs = (np.int64([1, 7, -6, 0]), np.int32([2, -1, 4, 0]))  # wrap around
    out = lax.index_take(x, idxs, (2, 0))
    assert out.shape == (4, 4) and out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), _np_index_take(x, idxs, (2, 0)))


@pytest.mark.parametrize(
    "shape, axes, n",
    [((3, 4), (1,), 5), ((3, 4), (0, 1), 2), ((3, 0), (0,), 2), ((3, 4), (0,), 0)],
)
def test_index_take_shapes(shape, axes, n):
    x = _arr(shape)
    idxs = tuple(np.int32(np.arange(n) * 2 - 1) for _ in axes)
    out = np.asarray(lax.index_take(x, idxs, axes))
    want = _np_index_take(x, idxs, axes)
    assert out.shape == want.shape
    np.testing.assert_array_equal(out, want)


def test_index_take_grads_vmap_jit_errors():
    x = _normal((3, 4))
    idx = (np.int32([2, 0, 2]),)
    check_grads(lambda x: lax.index_take(x, idx, (0,)), (x,), order=2)
    f = lambda x, i: lax.index_take(x, (i,), (1,))  # noqa: E731
    ib = np.int32([[0, 3], [-1, 1]])
    out = vmap(f, in_axes=(None, 0))(x, ib)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, (None, 0), (x, ib)))
    np.testing.assert_array_equal(np.asarray(jit(f)(x, ib[0])), np.asarray(f(x, ib[0])))
    with pytest.raises(ValueError, match="one index array per axis"):
        lax.index_take(x, idx, (0, 1))
    with pytest.raises(ValueError, match="1-D"):
        lax.index_take(x, (np.int32([[0]]),), (0,))


# ---------------------------------------------------------------------------
# optimization_barrier


def test_optimization_barrier_jaxpr_and_lowering():
    def f(x):
        return lax.optimization_barrier(lax.sin(x)) + lax.sin(x)

    x = _normal((3,))
    assert "c:f32[3] = optimization_barrier b" in _jaxpr(f, x)
    text = jit(f).lower(x).as_text()
    assert "stablehlo.optimization_barrier" in text and text.count("stablehlo.sine") == 2
    np.testing.assert_allclose(np.asarray(jit(f)(x)), 2 * np.sin(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", [f32, bf16, i32, boolean, c64], ids=str)
def test_optimization_barrier_values(dtype):
    tree = {"a": _arr((2, 3), dtype), "b": (_arr((0,), dtype), _arr((), dtype))}
    for out in (lax.optimization_barrier(tree), jit(lax.optimization_barrier)(tree)):
        assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
        got, want = [out["a"], *out["b"]], [tree["a"], *tree["b"]]
        assert all(isinstance(g, Array) and g.dtype == dtype for g in got)
        _assert_all_equal(got, want)
    assert lax.optimization_barrier(()) == ()


def test_optimization_barrier_grads_and_vmap():
    x, y = _normal((3,)), _normal((3,))

    def f(x, y):
        a, b = lax.optimization_barrier((lax.mul(x, y), y))
        return lax.sin(a) * b

    check_grads(f, (x, y), order=2)
    check_grads(jit(f), (x, y), order=2)
    g = grad(lambda x: lax.reduce_sum(lax.optimization_barrier((x, np.int32(2)))[0] ** 2, (0,)))
    np.testing.assert_allclose(np.asarray(g(x)), 2 * x, rtol=1e-6)
    xb = _normal((4, 3))
    np.testing.assert_allclose(
        np.asarray(vmap(f, in_axes=(1, None))(xb.T, y)), _loop(f, (0, None), (xb, y)), rtol=1e-6
    )


@pytest.mark.parametrize("sampler", ["normal", "uniform"])
def test_out_sharding_of_an_unsharded_type_asks_for_nothing(sampler):
    # Libraries pass `typeof(x).sharding` on as `out_sharding` (optax's
    # tree_random_like): outside explicit mode it names no mesh axes, and the draw
    # is the same as without it, eagerly and under jit.
    from polyjax_core.abstract_values import get_aval as typeof
    from polyjax_numpy import random

    s = typeof(np.ones(3, np.float32)).sharding
    key = random.key(0)
    want = np.asarray(getattr(random, sampler)(key, (3,)))
    eager = getattr(random, sampler)(key, (3,), out_sharding=s)
    jitted = jit(lambda k: getattr(random, sampler)(k, (3,), out_sharding=s))(key)
    np.testing.assert_array_equal(np.asarray(eager), want)
    np.testing.assert_array_equal(np.asarray(jitted), want)
