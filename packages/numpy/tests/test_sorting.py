"""sort and top_k: values against NumPy, derivatives, vmap against a loop, jit against eager."""

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


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)  # many ties
    x = rng.integers(-3, 4, shape).astype(np.float32)  # ties too
    if dtype.kind == "c":
        x = x + 1j * rng.integers(-2, 3, shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.float16, np.int32, np.uint8, np.bool_,
                                   np.complex64])  # fmt: skip
@pytest.mark.parametrize("shape, dim", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((0, 4), 1),
                                        ((2, 0), 1)])  # fmt: skip
def test_sort_matches_numpy_stable(dtype, shape, dim):
    x = _data(shape, dtype)
    pos_shape = [-1 if i == dim else 1 for i in range(len(shape))]
    idx = np.broadcast_to(np.arange(shape[dim], dtype=np.int32).reshape(pos_shape), shape)
    vals, perm = lax.sort((x, idx), dimension=dim)
    want = np.argsort(x, axis=dim, kind="stable")
    np.testing.assert_array_equal(np.asarray(perm), want)
    np.testing.assert_array_equal(np.asarray(vals), np.sort(x, axis=dim, kind="stable"))
    assert vals.dtype == x.dtype


def test_sort_nan_and_signed_zero_order():
    x = np.float32([np.nan, 2.0, -np.nan, -0.0, -np.inf, 0.0, 1.0, np.inf])
    idx = np.arange(8, dtype=np.int32)
    vals, perm = lax.sort((x, idx))
    np.testing.assert_array_equal(np.asarray(vals), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(np.asarray(perm), np.argsort(x, kind="stable"))


def test_sort_num_keys_lexicographic():
    a = np.int32([1, 0, 1, 0, 1])
    b = np.float32([3.0, 2.0, 1.0, 5.0, 1.0])
    c = np.arange(5, dtype=np.int32)
    sa, sb, sc = lax.sort((a, b, c), num_keys=2)
    order = np.lexsort((b, a))  # last key is the primary one
    np.testing.assert_array_equal(np.asarray(sc), order)
    np.testing.assert_array_equal(np.asarray(sa), a[order])
    # one key only: ties on a keep their order (stable)
    _, _, sc1 = lax.sort((a, b, c), num_keys=1)
    np.testing.assert_array_equal(np.asarray(sc1), np.argsort(a, kind="stable"))


def test_sort_unstable_still_sorts():
    x = _data((4, 9), np.float32)
    np.testing.assert_array_equal(np.asarray(lax.sort(x, is_stable=False)), np.sort(x, axis=-1))


def test_sort_jaxpr_and_errors():
    x = np.zeros((2, 3), np.float32)
    text = str(make_jaxpr(lambda x: lax.sort(x, 0))(x))
    assert "sort[dimension=0 is_stable=True num_keys=1]" in text
    with pytest.raises(TypeError, match="same shape"):
        lax.sort((x, np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match="Invalid dimension"):
        lax.sort(x, dimension=2)
    with pytest.raises(ValueError, match="no larger than"):
        lax.top_k(x, 4)


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.int32, np.uint8])
@pytest.mark.parametrize("shape, k", [((6,), 3), ((3, 5), 5), ((2, 4), 0), ((3, 1, 4), 2)])
def test_top_k_matches_numpy(dtype, shape, k):
    x = _data(shape, dtype, seed=1)
    vals, idx = lax.top_k(x, k)
    want = np.argsort(-x.astype(np.float64), axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(np.asarray(idx), want)
    np.testing.assert_array_equal(np.asarray(vals), np.take_along_axis(x, want, -1))
    assert idx.dtype == np.int32 and vals.dtype == x.dtype


def test_top_k_nan_is_largest():
    vals, idx = lax.top_k(np.float32([1.0, np.nan, 5.0, 5.0]), 3)
    np.testing.assert_array_equal(np.asarray(idx), [1, 2, 3])
    assert np.isnan(np.asarray(vals)[0])


def _distinct(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / max(n, 1) - 0.4).astype(np.float32)


@pytest.mark.parametrize(
    "fun, shapes",
    [
        (lambda x: lax.sort(x, 1), [(3, 5)]),
        (lambda x: lax.sort(x, 0, is_stable=False), [(4, 2)]),
        (lambda x, y: lax.sort((x, y), 0)[1], [(6,), (6,)]),
        (lambda x, y: lax.sort((x, y), 0, num_keys=2), [(6,), (6,)]),
        (lambda x: lax.top_k(x, 2)[0], [(3, 4)]),
        (lambda x: lax.top_k(x, 3)[0], [(5,)]),
    ],
)
def test_grads(fun, shapes):
    args = [_distinct(s, i) for i, s in enumerate(shapes)]
    check_grads(fun, args, order=2)


@pytest.mark.parametrize(
    "fun, shapes",
    [
        (lambda x: lax.sort(x, 1), [(3, 4)]),
        (lambda x, y: lax.sort((x, y), 0)[1], [(6,), (6,)]),
        (lambda x: lax.top_k(x, 2)[0], [(3, 4)]),
    ],
)
def test_second_order_reverse_mode_under_jit(fun, shapes):
    # The vjp of the vjp once came out zero under jit only: DCE dropped the tangent jit
    # feeding the transposed one (see polyjax_core.dce).
    args = [_distinct(s, i) for i, s in enumerate(shapes)]
    check_grads(jit(fun), args, order=2, modes=("rev",))


def test_grad_of_sorted_values_goes_back_to_its_source():
    from polyjax_interpreters import ad

    x = np.float32([3.0, 1.0, 2.0])
    w = np.float32([1.0, 10.0, 100.0])
    g = ad.grad(lambda x: lax.reduce_sum(lax.mul(lax.sort(x), w), (0,)))(x)
    np.testing.assert_allclose(np.asarray(g), [100.0, 1.0, 10.0])


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_vmap_matches_loop(in_axes):
    x = _data((3, 4, 5), np.float32)
    y = _data((3, 4, 5), np.int32, seed=2)

    def f(a, b):
        s = lax.sort((a, b), dimension=0, num_keys=2)
        return s, lax.top_k(a, 2)

    out = batching.vmap(f, (in_axes, in_axes))(x, y)
    for i in range(x.shape[in_axes]):
        want = f(np.take(x, i, in_axes), np.take(y, i, in_axes))
        for o, w in zip([*out[0], *out[1]], [*want[0], *want[1]]):
            np.testing.assert_array_equal(np.asarray(o)[i], np.asarray(w))


def test_vmap_one_operand_unbatched():
    keys = _data((4, 6), np.float32)
    payload = np.arange(6, dtype=np.int32)
    out = batching.vmap(lambda k, p: lax.sort((k, p))[1], (0, None))(keys, payload)
    np.testing.assert_array_equal(np.asarray(out), np.argsort(keys, -1, kind="stable"))


def test_jit_matches_eager():
    x = _data((3, 6), np.float32)
    f = lambda x: (lax.sort(x, 0), lax.top_k(x, 4))  # noqa: E731
    got, want = jit(f)(x), f(x)
    np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
    for a, b in zip(got[1], want[1]):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
