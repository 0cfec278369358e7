"""Reductions: printed jaxprs, shape rules and errors, lowering, values against NumPy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _jnp_helpers import flat_jaxpr as _jaxpr

from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import mlir
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, i32, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))

x23 = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize(
    "fun, eqn",
    [
        (lambda x: lax.reduce_sum(x, (0,)), "b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a"),
        (lambda x: lax.reduce_max(x, (0, 1)),
         "b:f32[] = reduce_max[axes=(0, 1) out_sharding=None] a"),
        (lambda x: lax.reduce_min(x, ()), "b:f32[2,3] = reduce_min[axes=() out_sharding=None] a"),
        (lambda x: lax.reduce_prod(x, [1]),
         "b:f32[2] = reduce_prod[axes=(1,) out_sharding=None] a"),
        (lambda x: lax.argmax(x, 1, np.int32), "b:i32[2] = argmax[axes=(1,) index_dtype=int32] a"),
        (lambda x: lax.argmin(x, 0, np.uint8), "b:u8[3] = argmin[axes=(0,) index_dtype=uint8] a"),
    ],
)  # fmt: skip
def test_printed_jaxpr(fun, eqn):
    out = eqn.split(":")[0]
    assert _jaxpr(fun, x23) == f"{{ lambda ; a:f32[2,3]. let {eqn} in ({out},) }}"


def test_result_types_keep_weak_type_except_arg_reductions():
    def f(x):
        v = lax.reduce_sum(x, ())  # a weak f32[3] stays weak
        return lax.reduce_sum(v, (0,)), lax.reduce_max(v, (0,)), lax.argmax(v, 0, np.int64)

    s, m, a = make_jaxpr(f)(ShapeDtypeStruct((3,), np.float32, weak_type=True)).out_avals
    assert (s.shape, s.dtype, s.weak_type) == ((), f32, True)
    assert (m.shape, m.dtype, m.weak_type) == ((), f32, True)
    assert (a.shape, a.dtype, a.weak_type) == ((), i32, False)  # int64 is i32 without x64


@pytest.mark.parametrize(
    "fun, arg, exc, msg",
    [
        (lambda x: lax.reduce_sum(x, (2,)), x23, ValueError, "contains out-of-bounds indices"),
        (lambda x: lax.reduce_sum(x, (-1,)), x23, ValueError, "contains out-of-bounds indices"),
        (lambda x: lax.reduce_max(x, (0, 0)), x23, ValueError, "duplicate value in 'axes'"),
        (lambda x: lax.reduce_sum(x, (0,)), np.ones(2, np.bool_), TypeError,
         "reduce_sum does not accept dtype bool"),
        (lambda x: lax.reduce_prod(x, (0,)), np.ones(2, np.bool_), TypeError,
         "reduce_prod does not accept dtype bool"),
        (lambda x: lax.reduce_sum(x, 0), x23, TypeError, "must be a sequence of integers"),
        (lambda x: lax.argmax(x, 2, np.int32), x23, ValueError, "Invalid axis 2"),
        (lambda x: lax.argmax(x, 0, np.float32), x23, TypeError,
         "index_dtype must be an integer type, but got float32"),
        (lambda x: lax.argmin(x, 0, np.int32), np.zeros((0, 2), np.float32), ValueError,
         "non-empty reduction dimension"),
    ],
)  # fmt: skip
def test_errors(fun, arg, exc, msg):
    with pytest.raises(exc, match=msg):
        make_jaxpr(fun)(arg)


def test_symbolic_shapes():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), np.float32)

    def f(x):
        return lax.reduce_sum(x, (0,)), lax.reduce_max(x, (1,)), lax.argmax(x, 0, np.int32)

    closed = make_jaxpr(f)(x)
    assert [tuple(map(str, a.shape)) for a in closed.out_avals] == [("3",), ("b",), ("3",)]
    lowered = mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"])
    text = mlir.module_to_string(lowered.module)
    assert "stablehlo.dynamic_iota" in text and "stablehlo.reduce" in text


def test_lowering_uses_one_reduce_with_a_region():
    closed = make_jaxpr(lambda x: (lax.reduce_sum(x, (0,)), lax.argmax(x, 1, np.int32)))(x23)
    text = mlir.module_to_string(
        mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"]).module
    )
    assert text.count("stablehlo.reduce") == 2
    assert "applies stablehlo.add" in text


# ---------------------------------------------------------------------------
# Values


def _values(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    if dtype == boolean:
        return rng.random(shape) < 0.5
    if dtype in (i32, u8):
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


def _check(out, expected, dtype):
    assert out.dtype == dtype and out.shape == np.shape(expected)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected, dtype))


@pytest.mark.parametrize("dtype", [f32, bf16, i32, u8], ids=str)
def test_reduce_values(dtype):
    x = _values(dtype)
    wide = x.astype(np.float64)
    _check(lax.reduce_sum(x, (0,)), wide.sum(0), dtype)
    _check(lax.reduce_prod(x, (1,)), wide.prod(1), dtype)
    _check(lax.reduce_max(x, (0, 1)), wide.max(), dtype)
    _check(lax.reduce_min(x, (1,)), wide.min(1), dtype)
    _check(lax.argmax(x, 1, np.int32), wide.argmax(1), i32)
    _check(lax.argmin(x, 0, np.int32), wide.argmin(0), i32)


def test_bool_values():
    x = _values(boolean)
    _check(lax.reduce_max(x, (0,)), x.any(0), boolean)
    _check(lax.reduce_min(x, (1,)), x.all(1), boolean)
    _check(lax.argmax(x, 1, np.int32), x.argmax(1), i32)
    _check(lax.argmin(x, 0, np.int32), x.argmin(0), i32)


def test_empty_reductions_give_the_identity():
    e = np.zeros((0, 2), np.float32)
    _check(lax.reduce_sum(e, (0,)), [0, 0], f32)
    _check(lax.reduce_prod(e, (0,)), [1, 1], f32)
    _check(lax.reduce_max(e, (0,)), [-np.inf] * 2, f32)
    _check(lax.reduce_min(e, (0,)), [np.inf] * 2, f32)
    _check(lax.reduce_max(np.zeros(0, np.uint8), (0,)), 0, u8)
    _check(lax.reduce_min(np.zeros(0, np.int32), (0,)), np.iinfo(np.int32).max, i32)
    _check(lax.reduce_min(np.zeros(0, np.bool_), (0,)), True, boolean)
    _check(lax.reduce_sum(e, (1,)), np.zeros(0), f32)


def test_rank0():
    s = np.float32(3.0)
    _check(lax.reduce_sum(s, ()), 3.0, f32)


def test_argmax_nan_and_ties():
    # The first NaN wins (as in NumPy), and ties go to the first index.
    x = np.array(
        [[1, 3, 3, 0], [np.nan, 1, np.nan, 5], [2, 2, 2, 2], [-np.inf, -np.inf, 0, np.nan]],
        np.float32,
    )
    _check(lax.argmax(x, 1, np.int32), np.argmax(x, 1), i32)
    _check(lax.argmin(x, 1, np.int32), np.argmin(x, 1), i32)
    y = np.full((2, 5), -np.inf, np.float32)
    _check(lax.argmax(y, 1, np.int32), [0, 0], i32)
    big = np.arange(1000, dtype=np.float32) % 17  # many ties, reduced in a tree by XLA
    _check(lax.argmax(big, 0, np.int32), np.argmax(big), i32)
    _check(lax.argmin(big[::-1].copy(), 0, np.int32), np.argmin(big[::-1]), i32)


def test_reduce_max_propagates_nan():
    x = np.array([1, np.nan, 3], np.float32)
    assert np.isnan(np.asarray(lax.reduce_max(x, (0,))))
    assert np.isnan(np.asarray(lax.reduce_min(x, (0,))))


# ---------------------------------------------------------------------------
# Complex max/min: NumPy's lexicographic order on (real, imag)

c64 = np.dtype(np.complex64)
# Rows with ties of the real parts (the imaginary part decides), negative and zero
# parts, and a row whose winner has real part -inf.
CX = np.array(
    [
        [1 + 2j, 1 + 3j, 5j, 1 - 1j],
        [-2 - 1j, -2 + 4j, -3 + 9j, -2 + 0j],
        [0j, -0.5j, 0.5j, 0j],
        [-np.inf - 1j, -np.inf + 2j, -np.inf - 7j, -np.inf + 0j],
    ],
    c64,
)


@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1), ()], ids=str)
def test_complex_max_min_are_lexicographic(axes):
    for name in ("max", "min"):
        got = getattr(lax, f"reduce_{name}")(CX, axes)
        _check(got, getattr(np, name)(CX, axis=axes) if axes else CX, c64)
    # The elementwise ops agree with the reductions.
    _check(lax.max(CX[:, 0], CX[:, 1]), np.maximum(CX[:, 0], CX[:, 1]), c64)
    _check(lax.reduce_max(np.complex64([1 + 2j, 1 + 3j, 5j]), (0,)), 1 + 3j, c64)


def test_complex_empty_reductions_give_the_lexicographic_extremes():
    e = np.zeros((0, 2), c64)
    _check(lax.reduce_max(e, (0,)), [complex(-np.inf, -np.inf)] * 2, c64)
    _check(lax.reduce_min(e, (0,)), [complex(np.inf, np.inf)] * 2, c64)
    # Below every number, so reducing it with anything gives that thing.
    _check(lax.reduce_max(np.complex64([-np.inf - 1e30j]), (0,)), -np.inf - 1e30j, c64)


def test_complex_max_min_jvp_splits_ties():
    from polyjax_interpreters import ad

    x = np.complex64([1 + 3j, 1 + 3j, 1 + 2j, -5j])
    t = np.complex64([1 + 1j, 3 - 1j, 10j, 100])
    for fun, expected in ((lax.reduce_max, (t[0] + t[1]) / 2), (lax.reduce_min, t[3])):
        out, tan = ad.jvp(lambda v, fun=fun: fun(v, (0,)), (x,), (t,))
        _check(tan, expected, c64)


def test_complex_max_min_grads_and_vmap():
    from polyjax_interpreters import batching
    from polyjax_interpreters.test_util import check_grads

    # Finite differences move real parts, so the derivatives are checked away from
    # ties; vmap runs on the tied rows.
    rng = np.random.default_rng(1)
    x = (rng.permutation(12).reshape(3, 4) + 1j * rng.normal(size=(3, 4))).astype(c64)
    for fun in (lax.reduce_max, lax.reduce_min):
        check_grads(lambda v, fun=fun: fun(v, (1,)), (x,), order=2)
    x = CX[:3]
    for fun in (lax.reduce_max, lax.reduce_min):
        out = batching.vmap(lambda v, fun=fun: fun(v, (0,)), 1)(x)
        _check(out, [fun(x[:, j], (0,)) for j in range(x.shape[1])], c64)


# ---------------------------------------------------------------------------
# jax_allow_f16_reductions


@pytest.mark.parametrize("dtype", [np.float16, bf16])
def test_f16_sums_raise_when_f16_reductions_are_disallowed(dtype):
    from polyjax_core.config import allow_f16_reductions
    from polyjax_interpreters.jit import jit
    from polyjax_numpy import numpy as jnp

    x = np.ones(3, dtype)
    with allow_f16_reductions(False):
        for fun in (lambda v: lax.reduce_sum(v, (0,)), jit(lambda v: lax.reduce_sum(v, (0,)))):
            with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
                fun(x)
        # jnp.sum accumulates in float32, and other reductions and dtypes are unaffected.
        assert float(jnp.sum(x)) == 3.0
        assert float(lax.reduce_max(x, (0,))) == 1.0
        assert float(lax.reduce_sum(x.astype(np.float32), (0,))) == 3.0
    assert float(lax.reduce_sum(x, (0,))) == 3.0
