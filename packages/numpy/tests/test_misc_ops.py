"""Bit ops, nextafter, bitcast_convert_type, reduce_precision, bitwise and general reductions."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
INT_DTYPES = [np.int8, np.int32, np.uint8, np.uint16, np.uint32]


def _ints(dtype, shape=(3, 5), seed=0):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    return rng.integers(max(info.min, -(2**31)), min(info.max, 2**31 - 1), shape,
                        endpoint=True).astype(dtype)  # fmt: skip


def _np_popcount(x):
    u = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    return np.array([bin(int(v)).count("1") for v in u.ravel()]).reshape(x.shape)


def _np_clz(x):
    bits = 8 * x.dtype.itemsize
    u = x.view(f"u{x.dtype.itemsize}").astype(np.uint64)
    return np.array([bits - int(v).bit_length() for v in u.ravel()]).reshape(x.shape)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 5), (), (0, 2)])
def test_population_count_and_clz(dtype, shape):
    x = _ints(dtype, shape)
    x = np.asarray(x, dtype)
    if x.size:
        x.ravel()[0] = 0
    pc, lz = lax.population_count(x), lax.clz(x)
    assert pc.dtype == x.dtype and lz.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(pc), _np_popcount(np.asarray(x)))
    np.testing.assert_array_equal(np.asarray(lz), _np_clz(np.asarray(x)))


def test_bit_ops_reject_floats():
    with pytest.raises(TypeError, match="population_count"):
        lax.population_count(np.float32(1.0))
    with pytest.raises(TypeError, match="nextafter"):
        lax.nextafter(np.int32(1), np.int32(2))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bf16])
def test_nextafter(dtype):
    x1 = np.array([1.0, 1.0, 0.0, -0.0, np.inf, np.nan, 3.0], dtype)
    x2 = np.array([2.0, 0.0, 1.0, -1.0, 0.0, 1.0, 3.0], dtype)
    got = np.asarray(lax.nextafter(x1, x2))
    if dtype == bf16:  # NumPy has no bfloat16 nextafter: step the bits
        assert got[0] > 1 and got[1] < 1 and got[2] > 0 and got[3] < 0 and np.isnan(got[5])
    else:
        np.testing.assert_array_equal(got, np.nextafter(x1, x2))
    got_scalar = lax.nextafter(np.asarray(x1, dtype), 5.0)
    assert got_scalar.dtype == x1.dtype


@pytest.mark.parametrize(
    "x, new_dtype",
    [
        (np.float32([1.0, -2.5, 0.0]), np.int32),
        (np.int32([1, -7]), np.uint32),
        (np.float32([[1.0, 2.0]]), np.uint8),  # narrower: trailing axis of 4
        (np.float32([1.5]), np.int16),
        (np.uint8([[0, 0, 128, 63], [1, 2, 3, 4]]), np.float32),  # wider: last axis goes
        (np.float16([1.0, 2.0]), bf16),
        (np.zeros((0,), np.float32), np.int32),
    ],
)
def test_bitcast_convert_type(x, new_dtype):
    got = lax.bitcast_convert_type(x, new_dtype)
    new = np.dtype(new_dtype)
    if new.itemsize < x.dtype.itemsize:
        want = x.view(new).reshape(*x.shape, x.dtype.itemsize // new.itemsize)
    elif new.itemsize > x.dtype.itemsize:
        want = np.ascontiguousarray(x).view(new).reshape(x.shape[:-1])
    else:
        want = x.view(new)
    assert got.dtype == new and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))
    jitted = jit(lambda x: lax.bitcast_convert_type(x, new_dtype))(x)
    np.testing.assert_array_equal(np.asarray(jitted).view(np.uint8), want.view(np.uint8))


def test_bitcast_errors_and_vmap():
    with pytest.raises(TypeError, match="last dimension must be 4"):
        lax.bitcast_convert_type(np.uint8([1, 2]), np.float32)
    with pytest.raises(TypeError, match="bool"):
        lax.bitcast_convert_type(np.array([True]), np.uint8)
    x = np.float32([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for axis in (0, 1):
        out = batching.vmap(lambda v: lax.bitcast_convert_type(v, np.uint16), axis)(x)
        for i in range(x.shape[axis]):
            want = np.take(x, i, axis).view(np.uint16).reshape(-1, 2)
            np.testing.assert_array_equal(np.asarray(out)[i], want)


@pytest.mark.parametrize(
    "exponent_bits, mantissa_bits, target", [(8, 7, bf16), (5, 10, np.float16), (8, 23, None)]
)
def test_reduce_precision(exponent_bits, mantissa_bits, target):
    rng = np.random.default_rng(0)
    x = (rng.uniform(1, 2, 50) * 10.0 ** rng.integers(-3, 4, 50)).astype(np.float32)  # normal f16
    x = np.concatenate([x, np.float32([np.inf, -np.inf, np.nan, 0.0, 1e6])])
    got = np.asarray(lax.reduce_precision(x, exponent_bits, mantissa_bits))
    with np.errstate(over="ignore"):
        want = x if target is None else x.astype(target).astype(np.float32)
    np.testing.assert_array_equal(got, want)


def test_reduce_precision_rules():
    x = np.float32([[1.0, 2.5], [-3.0, 0.5]])
    f = lambda x: lax.reduce_precision(x, 8, 7)  # noqa: E731
    # Piecewise constant, so finite differences do not apply: the rule treats it as the
    # (rounded) identity, tangents and cotangents rounded like the values.
    t = np.float32([[1.0001, 2.0], [3.0, 4.0]])
    _, t_out = ad.jvp(f, (x,), (t,))
    np.testing.assert_array_equal(np.asarray(t_out), t.astype(bf16).astype(np.float32))
    g = ad.grad(lambda x: lax.reduce_sum(lax.mul(f(x), 1.0001), (0, 1)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.full((2, 2), np.float32(1.0001).astype(bf16)))
    out = batching.vmap(f, 1)(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(f(x)).T)
    assert "reduce_precision[exponent_bits=8 mantissa_bits=7]" in str(make_jaxpr(f)(x))


NP_BITWISE = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}


@pytest.mark.parametrize("kind", ["and", "or", "xor"])
@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("shape, axes", [((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 0), (1,)),
                                         ((), ())])  # fmt: skip
def test_bitwise_reductions(kind, dtype, shape, axes):
    rng = np.random.default_rng(1)
    if dtype is np.bool_:
        x = rng.integers(0, 2, shape).astype(bool)
    else:
        x = _ints(dtype, shape)
    got = getattr(lax, f"reduce_{kind}")(x, axes)
    want = NP_BITWISE[kind].reduce(x, axis=axes) if axes else x
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(got), want)


def test_bitwise_reduction_vmap_and_errors():
    x = _ints(np.int32, (3, 4, 2))
    for bd in (0, 2):
        out = batching.vmap(lambda v: lax.reduce_xor(v, (0,)), bd)(x)
        for i in range(x.shape[bd]):
            want = np.bitwise_xor.reduce(np.take(x, i, bd), axis=0)
            np.testing.assert_array_equal(np.asarray(out)[i], want)
    with pytest.raises(TypeError, match="reduce_and"):
        lax.reduce_and(np.float32([1.0]), (0,))


def _argmax_pair(a, b):
    pick = lax.ge(a[0], b[0])
    return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])


def test_general_reduce():
    x = np.float32([[1.0, 5.0, 3.0], [4.0, 2.0, 0.5]])
    # the monoids become the differentiable reductions
    text = str(make_jaxpr(lambda x: lax.reduce(x, np.float32(0), lax.add, (1,)))(x))
    assert "reduce_sum[" in text
    np.testing.assert_allclose(np.asarray(lax.reduce(x, np.float32(1), lax.mul, (0,))), x.prod(0))
    check_grads(lambda x: lax.reduce(x, -np.inf, lax.max, (0,)), (x,), order=2)
    # a non-identity start or a user computation: the general primitive
    np.testing.assert_allclose(
        np.asarray(lax.reduce(x, np.float32(10), lax.add, (1,))), 10 + x.sum(1)
    )
    idx = np.broadcast_to(np.arange(3, dtype=np.int32), x.shape)
    vals, where = lax.reduce((x, idx), (np.float32(-np.inf), np.int32(0)), _argmax_pair, (1,))
    np.testing.assert_array_equal(np.asarray(vals), x.max(1))
    np.testing.assert_array_equal(np.asarray(where), x.argmax(1))
    assert "reduce[" in str(make_jaxpr(lambda x: lax.reduce(x, 2.0, lax.add, (0,)))(x))
    out = batching.vmap(lambda v: lax.reduce(v, np.float32(10), lax.add, (0,)), 1)(x)
    np.testing.assert_allclose(np.asarray(out), 10 + x.sum(0))
    rows = np.broadcast_to(np.arange(2, dtype=np.int32)[:, None], x.shape)
    jitted = jit(lambda x: lax.reduce((x, rows), (np.float32(-np.inf), np.int32(0)), _argmax_pair,
                                      (0,)))(x)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(jitted[1]), x.argmax(0))
    # derivatives through a tree of the computation; none with respect to the start value.
    g = ad.grad(lambda x: lax.reduce_sum(lax.reduce(x, 2.0, lax.add, (0,)), (0,)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.ones_like(x))
    check_grads(lambda x: lax.reduce((x, idx), (-np.inf, np.int32(0)), _argmax_pair, (1,))[0],
                (x,), order=2)  # fmt: skip
    with pytest.raises(NotImplementedError, match="initial values"):
        ad.grad(lambda i: lax.reduce_sum(lax.reduce(x, i, lax.add, (0,)), (0,)))(np.float32(2))
