"""dot_general and friends: printed jaxprs, dtype and shape rules, precision, values."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _jnp_helpers import flat_jaxpr as _jaxpr
from _jnp_helpers import out_aval as _out

from polyjax_core import config, make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import mlir
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
i8, i32, u8, boolean = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.bool_))

MATMUL = (((1,), (0,)), ((), ()))


a23, b34 = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
DN = "dimension_numbers=(([1], [0]), ([], []))"  # as JAX prints them: lists, None params omitted


@pytest.mark.parametrize(
    "kwargs, params",
    [
        ({}, DN),
        ({"precision": lax.Precision.HIGHEST},
         DN + " precision=(Precision.HIGHEST, Precision.HIGHEST)"),
        ({"precision": ("high", "default")}, DN + " precision=(Precision.HIGH, Precision.DEFAULT)"),
        ({"preferred_element_type": np.float32}, DN + " preferred_element_type=float32"),
    ],
)  # fmt: skip
def test_printed_jaxpr(kwargs, params):
    got = _jaxpr(lambda x, y: lax.dot_general(x, y, MATMUL, **kwargs), a23, b34)
    assert got == (
        f"{{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general[{params}] a b in (c,) }}"
    )


def test_batched_jaxpr_and_shape():
    x, y = np.ones((5, 2, 3), np.float32), np.ones((3, 5, 4), np.float32)
    got = _jaxpr(lambda x, y: lax.dot_general(x, y, (((2,), (0,)), ((0,), (1,)))), x, y)
    assert got == (
        "{ lambda ; a:f32[5,2,3] b:f32[3,5,4]. let "
        "c:f32[5,2,4] = dot_general[dimension_numbers=(([2], [0]), ([0], [1]))] a b in (c,) }"
    )


def test_precision_enum():
    P = lax.Precision
    assert [p.value for p in (P.DEFAULT, P.HIGH, P.HIGHEST)] == [0, 1, 2]
    assert repr(P.HIGH) == "Precision.HIGH" and str(P.HIGH) == "HIGH"
    assert P("bfloat16") is P.DEFAULT and P("tensorfloat32") is P.HIGH and P("float32") is P.HIGHEST
    assert P("Highest") is P.HIGHEST
    with pytest.raises(ValueError):
        P("fast")


def test_default_matmul_precision_option():
    with config.default_matmul_precision("highest"):
        got = _jaxpr(lambda x, y: lax.dot_general(x, y, MATMUL), a23, b34)
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in got
    # An explicit precision wins over the option.
    with config.default_matmul_precision("highest"):
        got = _jaxpr(lambda x, y: lax.dot_general(x, y, MATMUL, precision="default"), a23, b34)
    assert "precision=(Precision.DEFAULT, Precision.DEFAULT)" in got


@pytest.mark.parametrize(
    "lhs, rhs, preferred, expected",
    [
        (f32, f32, None, f32),
        (bf16, bf16, None, bf16),
        (bf16, bf16, f32, f32),
        (i8, i8, i32, i32),
        (i8, i32, None, i32),
        (u8, i8, None, i8),  # same width: signed wins
        (bf16, f16, None, bf16),  # more exponent range wins
        (i32, f32, None, f32),
        (boolean, boolean, None, boolean),
        (i8, i8, f32, f32),  # integers may accumulate in floats
        (u8, u8, f32, f32),
    ],
)
def test_result_dtype(lhs, rhs, preferred, expected):
    out = _out(
        lambda x, y: lax.dot_general(x, y, MATMUL, preferred_element_type=preferred),
        np.ones((2, 3), lhs),
        np.ones((3, 4), rhs),
    )
    assert out.dtype == expected and out.shape == (2, 4)


@pytest.mark.parametrize(
    "lhs, rhs, dims, kwargs, exc, msg",
    [
        ((2, 3), (3, 4), (((1,), (1,)), ((), ())), {}, TypeError,
         r"contracting dimensions to have the same shape, got \(3,\) and \(4,\)"),
        ((2, 3), (3, 4), (((1,), ()), ((), ())), {}, TypeError,
         "equal numbers of lhs_contracting and rhs_contracting"),
        ((2, 3), (2, 3), (((1,), (1,)), ((0,), ())), {}, TypeError,
         "equal numbers of lhs_batch and rhs_batch"),
        ((2, 3), (3, 3), (((1,), (1,)), ((0,), (0,))), {}, TypeError,
         "batch dimensions to have the same shape"),
        ((2, 3), (3, 4), (((2,), (0,)), ((), ())), {}, TypeError,
         "lhs dimension numbers to be nonnegative and less than"),
        ((2, 3), (3, 3), (((1,), (0,)), ((1,), (1,))), {}, TypeError,
         "lhs batch and contracting dimensions to be distinct"),
        ((2, 3), (3, 4), MATMUL, {"precision": "fastest!"}, TypeError,
         "Precision argument must be None"),
        ((2, 3), (3, 4), MATMUL, {"precision": (1, 2, 3)}, TypeError,
         "Precision argument must be None"),
        ((2, 3), (3, 4), MATMUL, {"preferred_element_type": np.int32}, TypeError,
         "Input type is incompatible with `preferred_element_type`"),
        ((2, 3), (3, 4), MATMUL, {"preferred_element_type": ml_dtypes.bfloat16}, TypeError,
         "must not be narrower"),
        ((2, 3), (3, 4), "nope", {}, TypeError, "dimension_numbers must be"),
    ],
)  # fmt: skip
def test_errors(lhs, rhs, dims, kwargs, exc, msg):
    x, y = np.ones(lhs, np.float32), np.ones(rhs, np.float32)
    with pytest.raises(exc, match=msg):
        make_jaxpr(lambda x, y: lax.dot_general(x, y, dims, **kwargs))(x, y)


def test_integer_preferred_type_errors():
    x = np.ones((2, 2), np.int32)
    with pytest.raises(TypeError, match="same signedness"):
        make_jaxpr(lambda x: lax.dot_general(x, x, MATMUL, preferred_element_type=np.uint32))(x)
    with pytest.raises(TypeError, match="must not be narrower"):
        make_jaxpr(lambda x: lax.dot_general(x, x, MATMUL, preferred_element_type=np.int8))(x)


@pytest.mark.parametrize(
    "lshape, rshape, out",
    [((3,), (3,), ()), ((2, 3), (3,), (2,)), ((3,), (3, 4), (4,)), ((2, 3), (3, 4), (2, 4))],
)
def test_dot_shapes(lshape, rshape, out):
    got = _out(lambda x, y: lax.dot(x, y), np.ones(lshape, f32), np.ones(rshape, f32))
    assert got.shape == out


@pytest.mark.parametrize("lshape, rshape", [((2, 3), (2, 3)), ((1, 2, 3), (3,)), ((), (3,))])
def test_dot_shape_errors(lshape, rshape):
    with pytest.raises(TypeError, match="Incompatible shapes for dot"):
        lax.dot(np.ones(lshape, f32), np.ones(rshape, f32))


def test_batch_matmul_shape_and_errors():
    out = _out(lax.batch_matmul, np.ones((5, 2, 3), f32), np.ones((5, 3, 4), f32))
    assert out.shape == (5, 2, 4)
    with pytest.raises(ValueError, match="agree on batch dimensions"):
        lax.batch_matmul(np.ones((5, 2, 3), f32), np.ones((4, 3, 4), f32))
    with pytest.raises(ValueError, match="at least 2D"):
        lax.batch_matmul(np.ones(3, f32), np.ones(3, f32))


def test_symbolic_shapes_and_lowering():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 2, 3), np.float32)
    y = ShapeDtypeStruct((b, 3, 4), np.float32)
    closed = make_jaxpr(lax.batch_matmul)(x, y)
    assert tuple(map(str, closed.out_avals[0].shape)) == ("b", "2", "4")
    text = mlir.module_to_string(
        mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"]).module
    )
    assert "stablehlo.dot_general" in text and "batching_dims = [0] x [0]" in text
    with pytest.raises(TypeError, match="contracting dimensions to have the same shape"):
        make_jaxpr(lambda x: lax.dot_general(x, x, (((1,), (2,)), ((), ()))))(x)


def test_precision_lowering():
    closed = make_jaxpr(lambda x, y: lax.dot(x, y, precision=("highest", "high")))(a23, b34)
    text = mlir.module_to_string(
        mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"]).module
    )
    assert "precision = [HIGHEST, HIGH]" in text


# ---------------------------------------------------------------------------
# Values


def _ints(shape, dtype, lo=-3, hi=4):
    rng = np.random.default_rng(sum(shape))
    return rng.integers(lo, hi, shape).astype(dtype)


@pytest.mark.parametrize(
    "lhs, rhs, preferred, expected",
    [
        (f32, f32, None, f32),
        (bf16, bf16, None, bf16),
        (bf16, bf16, f32, f32),
        (i32, i32, None, i32),
        (i8, i8, i32, i32),
        (i8, i32, None, i32),
        (u8, u8, None, u8),
        (boolean, boolean, None, boolean),
    ],
)
def test_values(lhs, rhs, preferred, expected):
    lo = 0 if boolean in (lhs, rhs) or u8 in (lhs, rhs) else -3
    hi = 2 if boolean in (lhs, rhs) else 4
    x, y = _ints((2, 3, 5), lhs, lo, hi), _ints((3, 5, 4), rhs, lo, hi)
    dims = (((2,), (1,)), ((1,), (0,)))  # batch over the 3s, contract the 5s
    out = lax.dot_general(x, y, dims, preferred_element_type=preferred)
    want = np.einsum("ibk,bkj->bij", x.astype(np.int64), y.astype(np.int64))
    if expected == boolean:
        want = want > 0
    assert out.dtype == expected and out.shape == (3, 2, 4)
    np.testing.assert_array_equal(np.asarray(out), want.astype(expected))


def test_dot_values_and_empty_contraction():
    x, y = _ints((2, 3), f32), _ints((3, 4), f32)
    v = _ints((3,), f32)
    np.testing.assert_array_equal(np.asarray(lax.dot(x, y)), x @ y)
    np.testing.assert_array_equal(np.asarray(lax.dot(x, v)), x @ v)
    np.testing.assert_array_equal(np.asarray(lax.dot(v, v)), v @ v)
    zeros = lax.dot(np.ones((2, 0), f32), np.ones((0, 3), f32))
    np.testing.assert_array_equal(np.asarray(zeros), np.zeros((2, 3), f32))
    outer = lax.dot_general(v, v, (((), ()), ((), ())))
    np.testing.assert_array_equal(np.asarray(outer), np.outer(v, v))
    scalar = lax.dot_general(np.float32(2), np.float32(3), (((), ()), ((), ())))
    assert float(np.asarray(scalar)) == 6.0
