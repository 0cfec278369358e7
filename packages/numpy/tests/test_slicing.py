"""dynamic_slice, dynamic_update_slice and their one-axis helpers.

Values against NumPy (with the clamping of out-of-range starts written out),
derivatives with `check_grads` to order 2, vmap against a Python loop, jit
against eager execution.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr
from polyjax_interpreters import batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, i32, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))
DTYPES = [f32, bf16, i32, u8, boolean]


def _arr(shape, dtype=f32):
    x = np.asarray((np.arange(int(np.prod(shape))) % 7).reshape(shape))
    return (x % 2).astype(dtype) if dtype == boolean else x.astype(dtype)


def _np_starts(shape, starts, sizes):
    """NumPy's reading of JAX's rule: wrap negatives once, then clamp into range."""
    out = []
    for d, s, n in zip(shape, starts, sizes):
        s = int(s)
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - n))
    return out


def _np_dynamic_slice(x, starts, sizes):
    st = _np_starts(x.shape, starts, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(st, sizes))]


def _np_dynamic_update_slice(x, u, starts):
    st = _np_starts(x.shape, starts, u.shape)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + n) for s, n in zip(st, u.shape))] = u
    return out


SLICE_CASES = [
    ((5, 6), (1, 2), (2, 3)),
    ((5, 6), (4, 5), (2, 3)),  # clamped at the end
    ((5, 6), (-1, -7), (2, 3)),  # wrapped, then clamped at 0
    ((5,), (3,), (0,)),  # empty slice
    ((0, 3), (0, 1), (0, 2)),  # size-0 operand
    ((), (), ()),  # rank 0
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, starts, sizes", SLICE_CASES)
def test_dynamic_slice_values(shape, starts, sizes, dtype):
    x = _arr(shape, dtype)
    idx = [np.int32(s) for s in starts]
    out = lax.dynamic_slice(x, idx, sizes)
    np.testing.assert_array_equal(np.asarray(out), _np_dynamic_slice(x, starts, sizes))
    assert out.dtype == dtype and out.shape == tuple(sizes)
    # Python ints go the same way.
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_slice(x, list(starts), sizes)), _np_dynamic_slice(x, starts, sizes)
    )


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, starts, sizes", SLICE_CASES)
def test_dynamic_update_slice_values(shape, starts, sizes, dtype):
    x = _arr(shape, dtype)
    u = np.ones(sizes, dtype) if dtype != u8 else np.full(sizes, 9, u8)
    idx = [np.int32(s) for s in starts]
    out = lax.dynamic_update_slice(x, u, idx)
    np.testing.assert_array_equal(np.asarray(out), _np_dynamic_update_slice(x, u, starts))
    assert out.dtype == dtype


def test_index_dtypes_and_unsigned():
    x = _arr((4, 5))
    out = lax.dynamic_slice(x, (np.uint8(3), np.int64(1)), (2, 2))
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:3])
    # allow_negative_indices=False clamps a negative start to 0 instead.
    out = lax.dynamic_slice(x, (np.int32(-1), 0), (2, 2), allow_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(out), x[0:2, 0:2])


def test_jaxpr_and_jit_match_eager():
    x = _arr((5, 6))
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    jaxpr = " ".join(str(make_jaxpr(f)(x, np.int32(1), np.int32(2))).split())
    assert "dynamic_slice[slice_sizes=(2, 3)] a" in jaxpr
    jf = jit(f)
    g = jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)))
    u = np.full((2, 2), -1, f32)
    for i, j in [(0, 0), (3, 3), (9, -2), (-4, 1)]:
        a, b = np.int32(i), np.int32(j)
        np.testing.assert_array_equal(np.asarray(jf(x, a, b)), np.asarray(f(x, a, b)))
        np.testing.assert_array_equal(
            np.asarray(g(x, u, a)), _np_dynamic_update_slice(x, u, (i, 1))
        )


def test_errors():
    x = _arr((3, 4))
    with pytest.raises(TypeError, match="Length of slice indices"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match="less than or equal"):
        lax.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(TypeError, match="integer scalars"):
        lax.dynamic_slice(x, (np.float32(0), 0), (1, 1))
    with pytest.raises(TypeError, match="same dtype"):
        lax.dynamic_update_slice(x, np.zeros((1, 1), i32), (0, 0))
    with pytest.raises(TypeError, match="smaller than operand"):
        lax.dynamic_update_slice(x, np.zeros((4, 1), f32), (0, 0))
    with pytest.raises(IndexError):
        lax.index_in_dim(x, 3, 0)


def test_in_dim_helpers():
    x = _arr((4, 5))
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, 1, False)), x[:, -1])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, 2)), x[2:3])
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_index_in_dim(x, np.int32(2), 1, keepdims=False)), x[:, 2]
    )
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_slice_in_dim(x, np.int32(3), 2, axis=0)), x[2:4]
    )
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, 1, 4, 2, axis=1)), x[:, 1:4:2])
    expected = x.copy()
    expected[:, 1:3] = 0
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_update_slice_in_dim(x, np.zeros((4, 2), f32), 1, axis=1)), expected
    )
    expected = x.copy()
    expected[3] = -1
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_update_index_in_dim(x, np.full(5, -1, f32), np.int32(3), 0)),
        expected,
    )


# ---------------------------------------------------------------------------
# Derivatives

_rng = np.random.default_rng(0)
X = _rng.normal(size=(5, 6)).astype(f32)
U = _rng.normal(size=(2, 3)).astype(f32)


@pytest.mark.parametrize("starts", [(1, 2), (4, -1), (-9, 9)])
def test_grads(starts):
    idx = tuple(np.int32(s) for s in starts)
    check_grads(lambda x: lax.dynamic_slice(x, idx, (2, 3)), (X,), 2)
    check_grads(lambda x, u: lax.dynamic_update_slice(x, u, idx), (X, U), 2)
    check_grads(lambda u: lax.dynamic_update_slice(X, u, idx), (U,), 2)
    check_grads(lambda x: lax.dynamic_update_slice(x, U, idx), (X,), 2)


def test_grad_under_jit_with_traced_index():
    from polyjax_interpreters.ad import grad

    f = jit(grad(lambda x, i: lax.reduce_sum(lax.dynamic_slice(x, (i, 0), (2, 6)) ** 2, (0, 1))))
    g = np.asarray(f(X, np.int32(4)))
    expected = np.zeros_like(X)
    expected[3:5] = 2 * X[3:5]
    np.testing.assert_allclose(g, expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# vmap against a loop


def _loop(f, in_axes, args):
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for k in range(n):
        outs.append(
            np.asarray(f(*[a if ax is None else np.take(a, k, ax) for a, ax in zip(args, in_axes)]))
        )
    return np.stack(outs)


XB = _rng.normal(size=(3, 5, 6)).astype(f32)
UB = _rng.normal(size=(3, 2, 3)).astype(f32)
IB = np.int32([0, 4, -2])
JB = np.int32([5, 1, 2])


@pytest.mark.parametrize(
    "in_axes",
    [(0, None, None), (None, 0, None), (0, 0, 0), (2, None, 0), (None, 0, 0)],
)
def test_vmap_dynamic_slice(in_axes):
    x = X if in_axes[0] is None else np.moveaxis(XB, 0, in_axes[0])
    i = np.int32(3) if in_axes[1] is None else IB
    j = np.int32(-1) if in_axes[2] is None else JB
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    out = batching.vmap(f, in_axes)(x, i, j)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, in_axes, (x, i, j)))


@pytest.mark.parametrize(
    "in_axes",
    [(0, None, None), (None, 0, None), (0, 0, None), (None, None, 0), (0, 0, 0), (1, None, 0)],
)
def test_vmap_dynamic_update_slice(in_axes):
    x = X if in_axes[0] is None else np.moveaxis(XB, 0, in_axes[0])
    u = U if in_axes[1] is None else UB
    i = np.int32(4) if in_axes[2] is None else IB
    f = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 2))  # noqa: E731
    out = batching.vmap(f, in_axes)(x, u, i)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, in_axes, (x, u, i)))


def test_vmap_of_grad():
    from polyjax_interpreters.ad import grad

    f = grad(lambda x, i: lax.reduce_sum(lax.dynamic_slice_in_dim(x, i, 2) ** 2, (0, 1)))
    out = batching.vmap(f, (None, 0))(X, IB)
    np.testing.assert_allclose(np.asarray(out), _loop(f, (None, 0), (X, IB)), rtol=1e-6)
