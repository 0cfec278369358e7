"""Elementwise lax primitives: shape rules, printed jaxprs, errors, lowering, values.

Values are checked eagerly (`lax.sin(np_array)` runs a cached one-primitive
executable) against NumPy and SciPy evaluated in float64 on the same inputs.
Each (primitive, dtype) pair compiles one executable, so the inputs of a pair
share one shape.
"""

from __future__ import annotations

import operator

import ml_dtypes
import numpy as np
import pytest
import scipy.special

from polyjax_core import config, make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapedArray, ShapeDtypeStruct
from polyjax_interpreters import mlir
from polyjax_numpy import lax
from polyjax_numpy.lax import _elementwise, _shape_rules

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32 = np.dtype(np.float16), np.dtype(np.float32)
i32, u8, i8 = np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.int8)
boolean = np.dtype(np.bool_)
FLOATS = [f32, bf16, f16]


def _jaxpr(fun, *args) -> str:
    return str(make_jaxpr(fun)(*args))


def _lowered_text(fun, *args) -> str:
    closed = make_jaxpr(fun)(*args)
    lowered = mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"])
    return mlir.module_to_string(lowered.module)


# ---------------------------------------------------------------------------
# Printed jaxprs

x3 = np.ones(3, np.float32)

# (function, example args, input binders, the one equation), printed as
# "{ lambda ; <binders>. let <equation> in (<last var>,) }".
JAXPRS = [
    (lax.sin, x3, "a:f32[3]", "b:f32[3] = sin a"),
    (lax.exp2, x3, "a:f32[3]", "b:f32[3] = exp2 a"),
    (lax.erf_inv, x3, "a:f32[3]", "b:f32[3] = erf_inv a"),
    (lambda x: lax.add(x, 1.0), x3, "a:f32[3]", "b:f32[3] = add a 1.0:f32[]"),
    (lambda x: lax.sub(2, x), np.ones(3, np.int32), "a:i32[3]", "b:i32[3] = sub 2:i32[] a"),
    # A Python scalar takes the other operand's dtype, staying weak.
    (lambda x: lax.mul(x, 2.0), np.ones(3, bf16), "a:bf16[3]", "b:bf16[3] = mul a 2.0:bf16[]"),
    (lambda x: lax.add(x, 3), np.ones(3, np.uint8), "a:u8[3]", "b:u8[3] = add a 3:u8[]"),
    (lambda x: lax.integer_pow(x, 3), x3, "a:f32[3]", "b:f32[3] = integer_pow[y=3] a"),
    (lax.reciprocal, x3, "a:f32[3]", "b:f32[3] = integer_pow[y=-1] a"),
    (lambda x: lax.pow(x, 2), x3, "a:f32[3]", "b:f32[3] = pow a 2:i32[]"),
    (lax.round, x3, "a:f32[3]", "b:f32[3] = round[rounding_method=0] a"),
    (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), x3, "a:f32[3]",
     "b:f32[3] = round[rounding_method=1] a"),
    (lambda x: lax.convert_element_type(x, np.int32), x3, "a:f32[3]",
     "b:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] a"),
    (lambda x: lax.lt(x, 0.0), x3, "a:f32[3]", "b:bool[3] = lt a 0.0:f32[]"),
    (lax.bitwise_not, np.ones(3, np.int32), "a:i32[3]", "b:i32[3] = not a"),
    (lambda x: lax.bitwise_and(x, x), np.ones(3, np.bool_), "a:bool[3]", "b:bool[3] = and a a"),
    (lambda x: lax.shift_right_logical(x, 1), np.ones(3, np.int32), "a:i32[3]",
     "b:i32[3] = shift_right_logical a 1:i32[]"),
    (lambda x: lax.clamp(0.0, x, 1.0), np.ones(3, np.float16), "a:f16[3]",
     "b:f16[3] = clamp 0.0:f16[] a 1.0:f16[]"),
    (lax.select, np.ones(3, np.bool_), x3, x3, "a:bool[3] b:f32[3] c:f32[3]",
     "d:f32[3] = select_n a c b"),
    (lax.is_finite, x3, "a:f32[3]", "b:bool[3] = is_finite a"),
    (lambda x: lax.sin(x, accuracy=lax.Tolerance(atol=1e-3)), x3, "a:f32[3]",
     "b:f32[3] = sin[accuracy=Tolerance(atol=0.001, rtol=0.0, ulps=0)] a"),
]  # fmt: skip


@pytest.mark.parametrize("case", JAXPRS, ids=lambda c: c[-1].split("=")[1].split()[0])
def test_printed_jaxpr(case):
    fun, *args, binders, eqn = case
    out = eqn.split(":")[0]
    expected = f"{{ lambda ; {binders}. let {eqn} in ({out},) }}"
    assert " ".join(_jaxpr(fun, *args).split()) == expected


# ---------------------------------------------------------------------------
# Abstract evaluation: result types


def _aval(fun, *args) -> ShapedArray:
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


@pytest.mark.parametrize(
    "fun, args, shape, dtype, weak",
    [
        (lax.add, (1.0, 2.0), (), f32, True),
        (lax.add, (np.float32(1), 2.0), (), f32, False),
        (lax.eq, (1.0, 2.0), (), boolean, True),
        (lax.abs, (np.ones(2, np.complex64),), (2,), f32, False),
        (lax.add, (np.ones((3, 1), np.float32), np.ones((1, 4), np.float32)), (3, 4), f32, False),
        (lax.add, (np.ones((3, 1), np.float32), np.float32(1)), (3, 1), f32, False),
        (lax.max, (np.ones((2,), np.bool_), np.zeros((2,), np.bool_)), (2,), boolean, False),
        (lax.pow, (np.ones(2, bf16), np.ones(2, np.int8)), (2,), bf16, False),
        (lax.select_n, (np.int32(1), np.ones(2, f16), np.ones(2, f16), np.ones(2, f16)), (2,),
         f16, False),
        (lax.clamp, (np.float32(0), np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)),
         (2, 3), f32, False),
        (lambda x: lax.clamp(np.float32(0), x, np.float32(1)), (1.0,), (), f32, False),
        (lambda x: lax.clamp(0.0, x, 1.0), (1.0,), (), f32, True),
    ],
)  # fmt: skip
def test_result_type(fun, args, shape, dtype, weak):
    out = _aval(fun, *args)
    assert (out.shape, out.dtype, out.weak_type) == (shape, dtype, weak)


def test_convert_element_type_weak_type_param():
    conv = _elementwise._convert_element_type
    out = _aval(lambda x: conv(x, np.float16, weak_type=True), x3)
    assert (out.dtype, out.weak_type) == (f16, True)
    # 64-bit targets are canonicalized without x64.
    with config.enable_x64(False):
        assert _aval(lambda x: lax.convert_element_type(x, np.float64), x3).dtype == f32


def test_convert_element_type_of_same_type_is_identity():
    jaxpr = _jaxpr(lambda x: lax.convert_element_type(x, np.float32), x3)
    assert jaxpr == "{ lambda ; a:f32[3]. let  in (a,) }"


def test_convert_element_type_folds_host_scalars_under_a_trace():
    conv = _elementwise._convert_element_type
    jaxpr = _jaxpr(lambda x: lax.mul(x, conv(2, bf16, weak_type=True)), np.ones(2, bf16))
    assert jaxpr == "{ lambda ; a:bf16[2]. let b:bf16[2] = mul a 2.0:bf16[] in (b,) }"
    # A big Python int that fits the target is fine.
    jaxpr = _jaxpr(lambda x: lax.mul(x, lax.convert_element_type(2**40, np.float32)), x3)
    assert "1099511627776.0:f32[]" in jaxpr


def test_symbolic_shapes():
    b = symbolic_dim("b")
    spec = ShapeDtypeStruct((b, 1), np.float32)
    row = ShapeDtypeStruct((1, 3), np.float32)
    assert _aval(lax.add, spec, row).shape == (b, 3)
    assert _aval(lambda x: lax.sin(lax.add(x, 1.0)), spec).shape == (b, 1)
    assert _aval(lambda x: lax.select_n(lax.gt(x, 0.0), x, x), spec).shape == (b, 1)
    c = symbolic_dim("c", scope=b.scope)
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        make_jaxpr(lax.add)(ShapeDtypeStruct((b,), f32), ShapeDtypeStruct((c,), f32))
    with pytest.raises(TypeError, match="select cases must have the same shapes"):
        make_jaxpr(lambda x, y: lax.select_n(True, x, y))(
            ShapeDtypeStruct((b,), f32), ShapeDtypeStruct((c,), f32)
        )


def test_symbolic_shapes_lower_to_dynamic_broadcasts():
    b = symbolic_dim("b")
    text = _lowered_text(lambda x, y: lax.add(x, y), ShapeDtypeStruct((b, 1), f32),
                         ShapeDtypeStruct((1, 3), f32))  # fmt: skip
    assert "stablehlo.dynamic_broadcast_in_dim" in text
    assert "tensor<?x3xf32>" in text


@pytest.mark.parametrize(
    "shapes, expected",
    [
        (((3,), (3,)), (3,)),
        (((), (2, 3)), (2, 3)),
        (((2, 1), (1, 3), ()), (2, 3)),
        (((1,), (1,)), (1,)),
    ],
)
def test_broadcasting_shape(shapes, expected):
    assert _shape_rules.broadcasting_shape("add", *shapes) == expected


# ---------------------------------------------------------------------------
# Errors


ERRORS = [
    (lax.sin, (np.ones(2, np.int32),), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating."),
    (lax.erf, (np.ones(2, np.complex64),), TypeError, "erf does not accept dtype complex64"),
    (lax.floor, (np.ones(2, np.int32),), TypeError, "floor does not accept dtype int32"),
    (lax.abs, (np.ones(2, np.uint8),), TypeError, "abs does not accept dtype uint8"),
    (lax.neg, (np.ones(2, np.bool_),), TypeError, "neg does not accept dtype bool"),
    (lax.add, (np.ones(2, np.bool_), np.ones(2, np.bool_)), TypeError,
     "add does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes "
     "of integer, floating, complexfloating."),
    (lax.shift_left, (np.ones(2, np.float32), np.ones(2, np.float32)), TypeError,
     "shift_left does not accept dtype float32 at position 0"),
    (lax.bitwise_or, (np.ones(2, np.float32), np.ones(2, np.float32)), TypeError,
     "or does not accept dtype float32"),
    (lax.rem, (np.ones(2, np.complex64), np.ones(2, np.complex64)), TypeError,
     "rem does not accept dtype complex64"),
    (lax.lt, (np.ones(2, np.complex64), np.ones(2, np.complex64)), TypeError,
     "lt does not accept dtype complex64"),
    (lax.add, (np.ones(2, np.int32), np.ones(2, np.float32)), TypeError,
     "lax.add requires arguments to have the same dtypes, got int32, float32."),
    (lax.mul, (np.ones(2, bf16), np.ones(2, np.float32)), TypeError,
     "lax.mul requires arguments to have the same dtypes, got bfloat16, float32."),
    # A Python float does not become an int; a Python bool is not weak.
    (lambda x: lax.add(x, 1.5), (np.ones(2, np.int32),), TypeError,
     "lax.add requires arguments to have the same dtypes, got int32, float32."),
    (lambda x: lax.add(x, True), (np.ones(2, np.int32),), TypeError,
     "add does not accept dtype bool"),
    # A Python int that does not fit is not wrapped (as jnp does): lax refuses it, as JAX.
    (lambda x: lax.add(x, 300), (np.ones(2, np.uint8),), TypeError,
     "lax.add requires arguments to have the same dtypes, got uint8, int32."),
    (lambda x: lax.add(x, -1), (np.ones(2, np.uint8),), TypeError,
     "lax.add requires arguments to have the same dtypes, got uint8, int32."),
    (lambda x: lax.add(x, 2**31), (np.ones(2, np.float32),), OverflowError,
     "Python int 2147483648 too large to convert to int32"),
    (lax.add, (np.ones(3, np.float32), np.ones(4, np.float32)), TypeError,
     r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)."),
    (lax.add, (np.ones(3, np.float32), np.ones((1, 3), np.float32)), TypeError,
     r"add: arrays must have same number of dimensions, got \(3,\), \(1, 3\)."),
    (lax.pow, (np.ones(2, np.int32), np.ones(2, np.int32)), TypeError,
     "pow does not accept dtype int32 at position 0"),
    (lax.pow, (np.ones(2, np.float32), np.ones(2, np.float16)), TypeError,
     "the first argument to pow must have an inexact dtype"),
    (lambda x: lax.integer_pow(x, -2), (np.ones(2, np.int32),), TypeError,
     "Integers cannot be raised to negative powers"),
    (lax.select_n, (np.ones(2, np.float32), np.ones(2), np.ones(2)), TypeError,
     "select `which` must be boolean or integer type"),
    (lax.select_n, (np.ones(3, np.bool_), x3, x3, x3), TypeError,
     "select with boolean `which` cannot have > 2 cases"),
    (lax.select_n, (np.ones(2, np.bool_), x3, x3), TypeError,
     r"select `which` must be scalar or have the same shape as cases"),
    (lax.select_n, (True, x3, np.ones(2, np.float32)), TypeError,
     r"select cases must have the same shapes, got \[\(3,\), \(2,\)\]"),
    (lax.select_n, (True, x3, np.ones(3, np.int32)), TypeError,
     "lax.select_n requires arguments to have the same dtypes"),
    (lax.clamp, (np.ones(2, np.float32), x3, np.float32(1)), TypeError,
     r"clamp requires min.shape == operand.shape or min.shape == \(\), got \(2,\)."),
    (lax.clamp, (np.float32(0), x3, np.int32(1)), TypeError,
     "lax.clamp requires arguments to have the same dtypes"),
    (lax.sin, (np.zeros(2, np.dtype([("float0", np.void, 0)])),), TypeError,
     "Called sin with a float0"),
]  # fmt: skip


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[-1][:40])
def test_errors(case):
    fun, args, exc, message = case
    with pytest.raises(exc, match=message if "\\" in message else _escape(message)):
        make_jaxpr(fun)(*args)


def _escape(message: str) -> str:
    import re

    return re.escape(message)


def test_select_n_needs_a_case():
    with pytest.raises(ValueError, match="at least one case"):
        lax.select_n(True)


def test_complex_to_real_conversion_warns():
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        make_jaxpr(lambda x: lax.convert_element_type(x, np.float32))(np.ones(2, np.complex64))


# ---------------------------------------------------------------------------
# Lowering


def test_lowering_broadcasts_scalars_and_size_one_dims():
    text = _lowered_text(lax.add, np.ones((2, 1), f32), np.ones((1, 3), f32))
    assert text.count("stablehlo.broadcast_in_dim") == 2
    text = _lowered_text(lambda x: lax.clamp(0.0, x, 1.0), np.ones((2, 3), f32))
    assert "stablehlo.clamp" in text and "broadcast_in_dim" not in text


def test_lowering_uses_xla_ops():
    text = _lowered_text(lambda x: lax.erf_inv(lax.lgamma(lax.tan(x))), x3)
    assert "chlo.erf_inv" in text and "chlo.lgamma" in text and "stablehlo.tan" in text
    text = _lowered_text(lambda x: lax.round(x, 1), x3)
    assert "stablehlo.round_nearest_even" in text


def test_lowering_of_accuracy():
    text = _lowered_text(lambda x: lax.exp(x, accuracy=lax.Tolerance(atol=1e-5, ulps=2)), x3)
    assert "result_accuracy" in text and "ulps = 2" in text
    text = _lowered_text(lambda x: lax.sin(x, accuracy=lax.AccuracyMode.HIGHEST), x3)
    assert "HIGHEST" in text


def test_integer_pow_lowering_is_square_and_multiply():
    text = _lowered_text(lambda x: lax.integer_pow(x, 13), x3)
    assert text.count("stablehlo.multiply") == 5  # x^2, x^4, x^8, then x * x^4 * x^8


# ---------------------------------------------------------------------------
# Values, eagerly, against NumPy and SciPy


def _tolerance(dtype: np.dtype) -> dict:
    if dtype == bf16:
        return dict(rtol=2e-2, atol=2e-2)
    if dtype == f16:
        return dict(rtol=3e-3, atol=2e-3)
    return dict(rtol=2e-5, atol=2e-6)


def _check(actual, expected, dtype):
    actual = np.asarray(actual)
    assert actual.dtype == dtype
    if dtypes_inexact(dtype):
        np.testing.assert_allclose(
            actual.astype(np.float64), np.asarray(expected, np.float64), **_tolerance(dtype)
        )
    else:
        np.testing.assert_array_equal(actual, np.asarray(expected).astype(dtype))


def dtypes_inexact(dtype):
    return dtype in (f32, bf16, f16, np.dtype(np.complex64))


SIGNED_INPUTS = np.array([-2.5, -1.5, -0.7, -0.5, 0.0, 0.5, 1.5, 2.5, 3.7])


def _round_afz(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# name -> (oracle on float64, input domain or explicit inputs)
FLOAT_UNARY = {
    "neg": (np.negative, SIGNED_INPUTS),
    "sign": (np.sign, SIGNED_INPUTS),
    "floor": (np.floor, SIGNED_INPUTS),
    "ceil": (np.ceil, SIGNED_INPUTS),
    "round": (_round_afz, SIGNED_INPUTS),
    "abs": (np.abs, SIGNED_INPUTS),
    "square": (np.square, SIGNED_INPUTS),
    "exp": (np.exp, (-3, 3)),
    "exp2": (np.exp2, (-3, 3)),
    "log": (np.log, (0.1, 10)),
    "log1p": (np.log1p, (-0.5, 5)),
    "expm1": (np.expm1, (-2, 2)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1.2, 1.2)),
    "asin": (np.arcsin, (-0.9, 0.9)),
    "acos": (np.arccos, (-0.9, 0.9)),
    "atan": (np.arctan, (-4, 4)),
    "sinh": (np.sinh, (-2, 2)),
    "cosh": (np.cosh, (-2, 2)),
    "tanh": (np.tanh, (-3, 3)),
    "asinh": (np.arcsinh, (-4, 4)),
    "acosh": (np.arccosh, (1.1, 8)),
    "atanh": (np.arctanh, (-0.9, 0.9)),
    "logistic": (scipy.special.expit, (-5, 5)),
    "sqrt": (np.sqrt, (0.1, 9)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 9)),
    "cbrt": (np.cbrt, (-8, 8)),
    "erf": (scipy.special.erf, (-2, 2)),
    "erfc": (scipy.special.erfc, (-2, 2)),
    "erf_inv": (scipy.special.erfinv, (-0.9, 0.9)),
    "lgamma": (scipy.special.gammaln, (0.2, 6)),
    "digamma": (scipy.special.psi, (0.5, 6)),
    "reciprocal": (np.reciprocal, (0.5, 4)),
}


def _inputs(domain, dtype):
    x = domain if isinstance(domain, np.ndarray) else np.linspace(*domain, 9)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(FLOAT_UNARY))
def test_float_unary_values(name, dtype):
    oracle, domain = FLOAT_UNARY[name]
    x = _inputs(domain, dtype)
    out = getattr(lax, name)(x)
    _check(out, oracle(x.astype(np.float64)), dtype)


def test_round_to_nearest_even_and_is_finite():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], np.float32)
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint(x))
    y = np.array([1.0, np.inf, -np.inf, np.nan, 0.0], np.float32)
    out = lax.is_finite(y)
    assert out.dtype == boolean
    np.testing.assert_array_equal(out, np.isfinite(y))


INT_INPUTS = {
    i32: np.array([-7, -3, -1, 0, 1, 2, 5, 100, 2**31 - 1], np.int32),
    u8: np.array([0, 1, 2, 3, 7, 100, 128, 200, 255], np.uint8),
}


@pytest.mark.parametrize("dtype", [i32, u8], ids=str)
@pytest.mark.parametrize("name", ["neg", "sign", "abs", "square", "bitwise_not"])
def test_integer_unary_values(name, dtype):
    x = INT_INPUTS[dtype]
    if name == "abs" and dtype == u8:
        with pytest.raises(TypeError, match="abs"):  # unsigned types are rejected, as in JAX
            lax.abs(x)
        return
    oracle = {
        "neg": lambda v: (-v.astype(np.int64)).astype(dtype),
        "sign": np.sign,
        "abs": np.abs,
        "square": lambda v: (v.astype(np.int64) ** 2).astype(dtype),
        "bitwise_not": np.invert,
    }[name]
    _check(getattr(lax, name)(x), oracle(x), dtype)


def test_bool_unary_values():
    x = np.array([True, False, True])
    np.testing.assert_array_equal(lax.bitwise_not(x), ~x)


@pytest.mark.parametrize(
    "dtype, y",
    [(f32, 0), (f32, 1), (f32, 2), (f32, 5), (f32, -1), (f32, -3), (bf16, 3), (i32, 3),
     (u8, 2), (i32, 13)],
)  # fmt: skip
def test_integer_pow_values(dtype, y):
    x = np.array([-3, -2, -1, 1, 2, 3], np.float64)
    if dtype == u8:
        x = np.abs(x)
    x = x.astype(dtype)
    expected = np.power(x.astype(np.float64), y)
    if not dtypes_inexact(dtype):
        expected = (x.astype(np.int64) ** y).astype(dtype)  # wraps like the device
    _check(lax.integer_pow(x, y), expected, dtype)


# Binary float ops: name -> (oracle, x domain, y domain)
FLOAT_BINARY = {
    "add": (np.add, (-3, 3), (-2, 5)),
    "sub": (np.subtract, (-3, 3), (-2, 5)),
    "mul": (np.multiply, (-3, 3), (-2, 5)),
    "div": (np.divide, (-3, 3), (0.5, 5)),
    "rem": (np.fmod, (-7, 7), (1.5, 4)),
    "pow": (np.power, (0.5, 3), (-2, 2)),
    "max": (np.maximum, (-3, 3), (3, -3)),
    "min": (np.minimum, (-3, 3), (3, -3)),
    "atan2": (np.arctan2, (-3, 3), (2, -4)),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("name", sorted(FLOAT_BINARY))
def test_float_binary_values(name, dtype):
    oracle, xd, yd = FLOAT_BINARY[name]
    x, y = _inputs(xd, dtype), _inputs(yd, dtype)
    _check(getattr(lax, name)(x, y), oracle(x.astype(np.float64), y.astype(np.float64)), dtype)


def test_max_min_propagate_nan():
    x = np.array([np.nan, 1.0, 2.0], np.float32)
    y = np.array([0.0, np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(lax.max(x, y), np.maximum(x, y))
    np.testing.assert_array_equal(lax.min(x, y), np.minimum(x, y))


def _trunc_div(x, y):
    q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
    return q * np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64))


def _c_rem(x, y):
    x, y = x.astype(np.int64), y.astype(np.int64)
    return x - _trunc_div(x, y) * y


INT_BINARY = {
    "add": lambda x, y: x.astype(np.int64) + y,
    "sub": lambda x, y: x.astype(np.int64) - y,
    "mul": lambda x, y: x.astype(np.int64) * y,
    "div": _trunc_div,
    "rem": _c_rem,
    "max": np.maximum,
    "min": np.minimum,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}

INT_PAIRS = {
    i32: (np.array([-7, -7, 7, 7, 0, 100, -2**31, 2**31 - 1], np.int32),
          np.array([2, -2, 2, -2, 3, 7, 3, 5], np.int32)),
    u8: (np.array([7, 7, 0, 100, 255, 200, 3, 128], np.uint8),
         np.array([2, 3, 3, 7, 5, 200, 250, 1], np.uint8)),
}  # fmt: skip


@pytest.mark.parametrize("dtype", [i32, u8], ids=str)
@pytest.mark.parametrize("name", sorted(INT_BINARY))
def test_integer_binary_values(name, dtype):
    x, y = INT_PAIRS[dtype]
    expected = np.asarray(INT_BINARY[name](x, y)).astype(dtype)  # wrap-around like the device
    _check(getattr(lax, name)(x, y), expected, dtype)


def _xla_shift(kind, x, s, dtype):
    """XLA's shifts: amounts outside [0, bits) give 0 (or the sign fill for arithmetic)."""
    bits = dtype.itemsize * 8
    unsigned = np.dtype(f"u{dtype.itemsize}")
    signed = np.dtype(f"i{dtype.itemsize}")
    out = []
    for a, n in zip(x, s):
        n = int(np.asarray(n).view(unsigned))
        ua, sa = int(np.asarray(a).view(unsigned)), int(np.asarray(a).view(signed))
        if kind == "left":
            r = 0 if n >= bits else (ua << n) % (1 << bits)
        elif kind == "logical":
            r = 0 if n >= bits else ua >> n
        else:
            r = (sa >> (bits - 1) if n >= bits else sa >> n) % (1 << bits)
        out.append(np.asarray(r, np.uint64).astype(unsigned).view(dtype))
    return np.array(out, dtype)


@pytest.mark.parametrize("dtype", [i32, u8], ids=str)
@pytest.mark.parametrize("kind", ["left", "logical", "arithmetic"])
def test_shift_values(kind, dtype):
    x = np.array([1, 3, 200, 255, 7, 5, 128, 1], np.int64).astype(dtype)
    if dtype == i32:
        x = np.array([1, -3, -200, 2**31 - 1, 7, -5, -(2**31), 1], dtype)
    s = np.array([0, 1, 3, 7, 8, 31, 32, 200], np.int64).astype(dtype)
    if dtype == i32:
        s[-1] = -1  # negative amounts are out of range too
    fun = {"left": lax.shift_left, "logical": lax.shift_right_logical,
           "arithmetic": lax.shift_right_arithmetic}[kind]  # fmt: skip
    np.testing.assert_array_equal(fun(x, s), _xla_shift(kind, x, s, dtype))


COMPARISONS = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}


@pytest.mark.parametrize("dtype", [f32, bf16, i32, u8, boolean], ids=str)
@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparison_values(name, dtype):
    x = np.array([0, 1, 2, 3, 200, 0, 1], np.float64)
    y = np.array([0, 2, 1, 3, 100, 1, 0], np.float64)
    if dtype in (f32, bf16, i32):
        x, y = x - 2, y - 1  # negatives too
    x, y = x.astype(dtype), y.astype(dtype)
    out = getattr(lax, name)(x, y)
    assert out.dtype == boolean
    np.testing.assert_array_equal(out, COMPARISONS[name](x, y))


def test_comparisons_see_nan():
    x = np.array([np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(lax.eq(x, x), [False, True])
    np.testing.assert_array_equal(lax.ne(x, x), [True, False])
    np.testing.assert_array_equal(lax.lt(x, 2.0), [False, True])


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "max", "min"])
def test_bool_binary_values(name):
    x = np.array([True, True, False, False])
    y = np.array([True, False, True, False])
    oracle = {
        "bitwise_and": np.logical_and,
        "bitwise_or": np.logical_or,
        "bitwise_xor": np.logical_xor,
        "max": np.maximum,
        "min": np.minimum,
    }[name]
    _check(getattr(lax, name)(x, y), oracle(x, y), boolean)


def test_complex_values():
    x = np.array([1 + 2j, -1 - 1j, 0.5j, 3 + 0j], np.complex64)
    y = np.array([1 + 3j, -1 + 0j, 0.25 + 0.5j, 3 - 1j], np.complex64)
    np.testing.assert_allclose(lax.mul(x, y), x * y, rtol=1e-6)
    np.testing.assert_allclose(lax.exp(x), np.exp(x), rtol=1e-5)
    abs_x = lax.abs(x)
    assert abs_x.dtype == f32
    np.testing.assert_allclose(abs_x, np.abs(x), rtol=1e-6)
    # Complex max/min order by real part, then imaginary part.
    np.testing.assert_array_equal(lax.max(x, y), [1 + 3j, -1 + 0j, 0.25 + 0.5j, 3 + 0j])
    np.testing.assert_array_equal(lax.min(x, y), [1 + 2j, -1 - 1j, 0.5j, 3 - 1j])


def test_broadcasting_values():
    col = np.arange(3, dtype=np.float32).reshape(3, 1)
    row = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(lax.add(col, row), col + row)
    np.testing.assert_array_equal(lax.mul(col, np.float32(2)), col * 2)


def test_python_scalars_take_the_array_dtype():
    x = np.array([1.5, 2.5], bf16)
    out = lax.mul(x, 2.0)
    assert out.dtype == bf16 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out, np.float32), [3.0, 5.0])
    out = lax.add(np.array([250], np.uint8), 10)
    assert out.dtype == u8 and np.asarray(out)[0] == 4  # wraps around
    out = lax.add(1.0, 2.0)
    assert out.weak_type and out.dtype == f32 and float(out) == 3.0


def test_select_n_values():
    cases = [np.full(5, k, np.float32) * np.arange(5, dtype=np.float32) for k in (1, 10, 100)]
    which = np.array([0, 1, 2, 1, 0], np.int32)
    expected = np.choose(which, cases)
    np.testing.assert_array_equal(lax.select_n(which, *cases), expected)
    np.testing.assert_array_equal(lax.select_n(which.astype(np.uint8), *cases), expected)
    pred = np.array([True, False, True, False, False])
    np.testing.assert_array_equal(lax.select(pred, cases[1], cases[2]),
                                  np.where(pred, cases[1], cases[2]))  # fmt: skip
    # A scalar predicate picks whole arrays.
    np.testing.assert_array_equal(lax.select_n(np.bool_(True), cases[0], cases[1]), cases[1])


def test_clamp_values():
    x = np.array([-2.0, -0.5, 0.5, 2.0], np.float32)
    np.testing.assert_array_equal(lax.clamp(-1.0, x, 1.0), np.clip(x, -1, 1))
    lo = np.array([0.0, 0.0, 1.0, 1.0], np.float32)
    np.testing.assert_array_equal(lax.clamp(lo, x, np.float32(1.5)), np.clip(x, lo, 1.5))
    xi = np.array([0, 5, 10, 300], np.int32)
    np.testing.assert_array_equal(lax.clamp(2, xi, 9), np.clip(xi, 2, 9))


CONVERSIONS = [
    (f32, i32), (f32, u8), (f32, boolean), (f32, bf16), (f32, f16),
    (bf16, f32), (f16, i32), (i32, f32), (i32, u8), (i32, boolean),
    (u8, i32), (u8, f16), (boolean, f32), (boolean, i32),
]  # fmt: skip

CONVERSION_INPUTS = np.array([-3.7, -1.5, -0.2, 0.0, 0.4, 1.0, 2.5, 7.9, 100.0, 255.0, 300.0])


@pytest.mark.parametrize("src, dst", CONVERSIONS, ids=lambda d: str(d))
def test_convert_element_type_values(src, dst):
    x = CONVERSION_INPUTS.astype(src)
    if src == u8:
        x = np.abs(CONVERSION_INPUTS).astype(np.int64).astype(src)
    if dst == u8 and src != u8:
        x = np.abs(x)  # in range: out-of-range float->int is tested below
    if dst in (i32, u8) and dtypes_inexact(src):
        info = np.iinfo(dst)  # float -> int rounds toward zero and saturates
        expected = np.clip(np.trunc(x.astype(np.float64)), info.min, info.max).astype(dst)
    else:
        expected = x.astype(dst)
    # The device path (from a device array) and the host path (from a NumPy value).
    on_device = lax.convert_element_type(lax.neg(lax.neg(x)) if src != boolean else
                                         lax.bitwise_not(lax.bitwise_not(x)), dst)  # fmt: skip
    on_host = lax.convert_element_type(x, dst)
    for out in (on_device, on_host):
        assert out.dtype == dst and not out.weak_type
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_float_to_int_conversion_saturates_on_device_and_host():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1.9, -1.9], np.float32)
    on_device = np.asarray(lax.convert_element_type(lax.neg(lax.neg(x)), np.int32))
    on_host = np.asarray(lax.convert_element_type(x, np.int32))
    np.testing.assert_array_equal(on_device, on_host)
    np.testing.assert_array_equal(on_host[3:], [2**31 - 1, -(2**31), 1, -1])
    assert on_host[0] == 0


def test_convert_element_type_of_a_scalar_eagerly():
    out = lax.convert_element_type(2.5, np.int32)
    assert out.dtype == i32 and int(out) == 2
    out = _elementwise._convert_element_type(3, np.float16, weak_type=True)
    assert out.dtype == f16 and out.weak_type and float(out) == 3.0


def test_convert_element_type_of_host_values_compiles_nothing(monkeypatch):
    from polyjax_interpreters import dispatch

    def no_executables(*args, **kwargs):
        raise AssertionError("a host conversion should not run an executable")

    monkeypatch.setattr(dispatch, "apply_primitive", no_executables)
    out = lax.convert_element_type(np.array([1.7, -2.2, np.nan], np.float32), np.int32)
    np.testing.assert_array_equal(np.asarray(out), [1, -2, 0])
    out = _elementwise._convert_element_type(np.float32(2), bf16, weak_type=True)
    assert out.dtype == bf16 and out.weak_type


def test_jit_matches_eager():
    from polyjax_interpreters.jit import jit

    def f(x, which):
        y = lax.mul(lax.add(x, 1.5), 2.0)  # weak bf16 literals inside the jaxpr
        z = lax.integer_pow(lax.sin(y), 3)
        picked = lax.select_n(which, x, y, z)
        return lax.clamp(-1.0, picked, 4.0), lax.convert_element_type(picked, np.int32)

    x = np.linspace(-2, 2, 6).astype(bf16)
    which = np.array([0, 1, 2, 2, 1, 0], np.int32)
    compiled, eager = jit(f)(x, which), f(x, which)
    for a, b in zip(compiled, eager):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_accuracy_runs():
    x = np.linspace(-3, 3, 7).astype(np.float32)
    out = lax.sin(x, accuracy=lax.Tolerance(atol=1e-5, ulps=2))
    np.testing.assert_allclose(out, np.sin(x), atol=1e-5)
    out = lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST)
    np.testing.assert_allclose(out, np.exp(x), rtol=1e-6)
