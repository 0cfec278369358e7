"""jnp's elementwise functions: values against NumPy, JAX's result dtypes and weak types,
special values, errors, derivatives, and jit/vmap.

Values: for each dtype, all the functions of a table run under one `jit` (one
compilation), and each result is compared with NumPy evaluated in float64 (or
complex128) on the same inputs and rounded to the result dtype. Result dtypes
follow JAX's rules, not NumPy's: integers and bools become the default float
(float32) in inexact functions.
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
import scipy.special

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32, f64, c64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64))
i8, i32, u8, boolean = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.bool_))
DTYPES = [f32, bf16, f16, i32, u8, boolean, c64]
_RTOL = {f32: 1e-5, bf16: 1e-2, f16: 2e-3, c64: 2e-5}
_ATOL = {f32: 1e-6, bf16: 1e-2, f16: 1e-3, c64: 2e-6}

# Inputs by domain and dtype kind: 12 values each, exact in every dtype of the kind.
_DOMAINS = {
    "real": {
        "f": [-3.0, -1.5, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 3.0, 7.0],
        "i": [-7, -3, -2, -1, 0, 1, 2, 3, 5, 7, 9, 12],
        "u": [0, 1, 2, 3, 5, 7, 9, 12, 20, 33, 50, 100],
    },
    "pos": {
        "f": [0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 7.0, 20.0],
        "i": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        "u": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    },
    "unit": {
        "f": [-0.875, -0.75, -0.5, -0.25, -0.125, 0.0, 0.125, 0.25, 0.5, 0.625, 0.75, 0.875],
        "i": [0] * 12,
        "u": [0] * 12,
    },
    "ge1": {
        "f": [1.0, 1.125, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 7.0, 10.0, 20.0],
        "i": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        "u": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    },
}


def _kind(dtype: np.dtype) -> str:
    if dtype == boolean:
        return "b"
    if np.issubdtype(dtype, np.complexfloating):
        return "c"
    return "f" if dtype in (f32, bf16, f16) else dtype.kind


def _inputs(domain: str, dtype: np.dtype, flip: bool = False) -> np.ndarray:
    kind = _kind(dtype)
    if kind == "b":
        values = np.array([i % 3 == 0 for i in range(12)])
    elif kind == "c":
        re = np.array(_DOMAINS[domain]["f"])
        im = re[::-1] / 4 if domain in ("real", "unit") else np.full(12, 0.25)
        values = re + 1j * im
    else:
        values = np.array(_DOMAINS[domain][kind])
    values = values[::-1] if flip else values
    return values.astype(dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _inexact(dtype: np.dtype) -> np.dtype:
    return f32 if _kind(dtype) in "biu" else dtype


def _assert_close(got, want, dtype, name):
    got = np.asarray(got)
    assert got.dtype == dtype, f"{name}: dtype {got.dtype}, expected {dtype}"
    assert got.shape == np.shape(want), f"{name}: shape {got.shape}, expected {np.shape(want)}"
    if _kind(dtype) in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
        return
    wide = np.complex128 if _kind(dtype) == "c" else np.float64
    np.testing.assert_allclose(
        got.astype(wide),
        np.asarray(want).astype(wide),
        rtol=_RTOL[dtype],
        atol=_ATOL[dtype],
        equal_nan=True,
        err_msg=name,
    )


def _run_jitted(fns: dict, args: dict) -> dict:
    return jit(lambda a: {name: fn(*a[name]) for name, fn in fns.items()})(args)


# ---------------------------------------------------------------------------
# Functions of one operand that give inexact results

# name -> (domain, NumPy's function, accepts complex)
UNARY_INEXACT = {
    "sqrt": ("pos", np.sqrt, True),
    "cbrt": ("real", np.cbrt, False),
    "exp": ("real", np.exp, True),
    "exp2": ("real", np.exp2, True),
    "expm1": ("real", np.expm1, True),
    "log": ("pos", np.log, True),
    "log1p": ("pos", np.log1p, True),
    "log2": ("pos", np.log2, True),
    "log10": ("pos", np.log10, True),
    "sin": ("real", np.sin, True),
    "cos": ("real", np.cos, True),
    "tan": ("unit", np.tan, True),
    "arcsin": ("unit", np.arcsin, True),
    "arccos": ("unit", np.arccos, True),
    "arctan": ("real", np.arctan, True),
    "sinh": ("real", np.sinh, True),
    "cosh": ("real", np.cosh, True),
    "tanh": ("real", np.tanh, True),
    "arcsinh": ("real", np.arcsinh, True),
    "arccosh": ("ge1", np.arccosh, True),
    "arctanh": ("unit", np.arctanh, True),
    "deg2rad": ("real", np.deg2rad, False),
    "rad2deg": ("real", np.rad2deg, False),
    "sinc": ("real", np.sinc, True),
    "i0": ("real", scipy.special.i0, False),
    "fabs": ("real", np.fabs, False),
    "reciprocal": ("pos", np.reciprocal, True),
    "rint": ("real", np.rint, True),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_unary_inexact_values_and_dtypes(dtype):
    complex_input = _kind(dtype) == "c"
    table = {n: t for n, t in UNARY_INEXACT.items() if t[2] or not complex_input}
    args = {name: (_inputs(domain, dtype),) for name, (domain, _, _) in table.items()}
    got = _run_jitted({name: getattr(jnp, name) for name in table}, args)
    out_dtype = _inexact(dtype)
    for name, (_, np_fn, _) in table.items():
        (x,) = args[name]
        with np.errstate(all="ignore"):
            want = np_fn(_wide(x)).astype(out_dtype)
        _assert_close(got[name], want, out_dtype, name)


# Functions that keep integers (and bools) as they are.
UNARY_KEEP = {
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "absolute": np.absolute,
    "abs": np.abs,
    "positive": np.positive,
    "sign": np.sign,
}


@pytest.mark.parametrize("dtype", [f32, bf16, f16, i32, u8, i8], ids=str)
def test_unary_dtype_preserving(dtype):
    args = {name: (_inputs("real", dtype),) for name in UNARY_KEEP}
    got = _run_jitted({name: getattr(jnp, name) for name in UNARY_KEEP}, args)
    for name, np_fn in UNARY_KEEP.items():
        (x,) = args[name]
        _assert_close(got[name], np_fn(_wide(x)).astype(dtype), dtype, name)


def test_bool_and_complex_cases_of_dtype_preserving_functions():
    b = _inputs("real", boolean)
    z = _inputs("real", c64)

    def f(b, z):
        return (jnp.floor(b), jnp.absolute(b), jnp.sign(b), jnp.absolute(z), jnp.sign(z))

    floor_b, abs_b, sign_b, abs_z, sign_z = jit(f)(b, z)
    for got in (floor_b, abs_b, sign_b):
        _assert_close(got, b, boolean, "bool")
    _assert_close(abs_z, np.abs(z), f32, "abs complex")
    _assert_close(sign_z, z / np.abs(z), c64, "sign complex")
    assert jnp.square(b).dtype == i32 and jnp.negative(np.int8(3)).dtype == i8


# ---------------------------------------------------------------------------
# Functions of two operands

# name -> (x domain, y domain, NumPy's function, accepted kinds, result rule)
#   result rules: "inexact" (ints/bools to float32), "same", "numeric" (bool to int32), "bool"
BINARY = {
    "add": ("real", "real", np.add, "biufc", "same"),
    "subtract": ("real", "real", np.subtract, "iufc", "same"),
    "multiply": ("real", "real", np.multiply, "biufc", "same"),
    "true_divide": ("real", "pos", np.true_divide, "biufc", "inexact"),
    "divide": ("real", "pos", np.divide, "biufc", "inexact"),
    "floor_divide": ("real", "pos", np.floor_divide, "iuf", "numeric"),
    "remainder": ("real", "pos", np.remainder, "iuf", "numeric"),
    "mod": ("real", "pos", np.mod, "iuf", "numeric"),
    "fmod": ("real", "pos", np.fmod, "iuf", "numeric"),
    "maximum": ("real", "real", np.maximum, "biuf", "same"),
    "minimum": ("real", "real", np.minimum, "biuf", "same"),
    "fmax": ("real", "real", np.fmax, "biuf", "same"),
    "fmin": ("real", "real", np.fmin, "biuf", "same"),
    "arctan2": ("real", "real", np.arctan2, "biuf", "inexact"),
    "atan2": ("real", "real", np.arctan2, "biuf", "inexact"),
    "hypot": ("real", "real", np.hypot, "biuf", "inexact"),
    "logaddexp": ("real", "real", np.logaddexp, "biuf", "inexact"),
    "logaddexp2": ("real", "real", np.logaddexp2, "biuf", "inexact"),
    "copysign": ("real", "real", np.copysign, "biuf", "inexact"),
    "heaviside": ("real", "real", np.heaviside, "biuf", "inexact"),
    "float_power": ("pos", "real", np.float_power, "biufc", "inexact"),
    "power": ("pos", "unit", np.power, "fc", "same"),
    "equal": ("real", "real", np.equal, "biufc", "bool"),
    "not_equal": ("real", "real", np.not_equal, "biufc", "bool"),
    "less": ("real", "real", np.less, "biuf", "bool"),
    "less_equal": ("real", "real", np.less_equal, "biuf", "bool"),
    "greater": ("real", "real", np.greater, "biuf", "bool"),
    "greater_equal": ("real", "real", np.greater_equal, "biuf", "bool"),
    "logical_and": ("real", "real", np.logical_and, "biufc", "bool"),
    "logical_or": ("real", "real", np.logical_or, "biufc", "bool"),
    "logical_xor": ("real", "real", np.logical_xor, "biufc", "bool"),
    "bitwise_and": ("real", "real", np.bitwise_and, "biu", "same"),
    "bitwise_or": ("real", "real", np.bitwise_or, "biu", "same"),
    "bitwise_xor": ("real", "real", np.bitwise_xor, "biu", "same"),
    "gcd": ("real", "real", np.gcd, "iu", "same"),
    "lcm": ("real", "real", np.lcm, "iu", "same"),
}


def _binary_result_dtype(rule: str, dtype: np.dtype) -> np.dtype:
    if rule == "inexact":
        return _inexact(dtype)
    if rule == "numeric" and dtype == boolean:
        return i32
    return boolean if rule == "bool" else dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_binary_values_and_dtypes(dtype):
    table = {n: t for n, t in BINARY.items() if _kind(dtype) in t[3]}
    args = {
        name: (_inputs(dx, dtype), _inputs(dy, dtype, flip=True))
        for name, (dx, dy, *_) in table.items()
    }
    got = _run_jitted({name: getattr(jnp, name) for name in table}, args)
    for name, (_, _, np_fn, _, rule) in table.items():
        out_dtype = _binary_result_dtype(rule, dtype)
        x, y = args[name]
        if _kind(dtype) in "biu" and rule != "inexact":
            with np.errstate(all="ignore"):
                want = np_fn(x, y).astype(out_dtype)
        else:
            with np.errstate(all="ignore"):
                want = np_fn(_wide(x), _wide(y)).astype(out_dtype)
        _assert_close(got[name], want, out_dtype, name)


def test_integer_power_shifts_and_bit_counts():
    x = np.array([-3, -1, 0, 1, 2, 5], np.int32)
    y = np.array([3, 4, 0, 7, 10, 2], np.int32)
    u = np.array([1, 2, 128, 255, 0, 7], np.uint8)

    def f(x, y, u):
        return (
            jnp.power(x, y),
            jnp.left_shift(x, 2),
            jnp.right_shift(x, 1),
            jnp.right_shift(u, 1),
            jnp.bitwise_count(x),
            jnp.bitwise_count(u),
            jnp.invert(u),
            jnp.bitwise_not(x),
            jnp.logical_not(x),
        )

    got = jit(f)(x, y, u)
    want = (
        np.power(x, y),
        np.left_shift(x, 2),
        np.right_shift(x, 1),
        np.right_shift(u, 1),
        np.bitwise_count(x),
        np.bitwise_count(u),
        np.invert(u),
        np.bitwise_not(x),
        np.logical_not(x),
    )
    for g, w in zip(got, want):
        _assert_close(g, w, w.dtype, "bits")
    # Integer arrays to negative integer powers vanish (except for bases 1 and -1), as in JAX.
    _assert_close(jnp.power(np.int32([2, -1, 1]), np.int32([-1, -3, -2])), [0, -1, 1], i32, "neg")


# ---------------------------------------------------------------------------
# Shapes: broadcasting, size-0 and rank-0 operands

SHAPES = [((), ()), ((0,), ()), ((2, 0, 3), (3,)), ((3, 1), (4,)), ((2, 3), (2, 3))]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_shapes(shapes):
    sx, sy = shapes
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, sx).astype(np.float32)
    y = rng.uniform(-2.0, 2.0, sy).astype(np.float32)
    fns = {
        "hypot": (jnp.hypot, np.hypot),
        "logaddexp": (jnp.logaddexp, np.logaddexp),
        "maximum": (jnp.maximum, np.maximum),
        "fmod": (jnp.fmod, np.fmod),
        "isclose": (jnp.isclose, np.isclose),
        "copysign": (jnp.copysign, np.copysign),
    }
    got = jit(lambda x, y: {n: f(x, y) for n, (f, _) in fns.items()})(x, y)
    for name, (_, np_fn) in fns.items():
        want = np_fn(x, y)
        _assert_close(got[name], want, want.dtype, name)
    unary = jit(lambda x: (jnp.sqrt(x), jnp.round(x, 1), jnp.frexp(x), jnp.isnan(x)))(x)
    _assert_close(unary[0], np.sqrt(x), f32, "sqrt")
    _assert_close(unary[1], np.round(x, 1), f32, "round")
    _assert_close(unary[2][0], np.frexp(x)[0], f32, "frexp")
    _assert_close(unary[2][1], np.frexp(x)[1], i32, "frexp")
    _assert_close(unary[3], np.isnan(x), boolean, "isnan")


# ---------------------------------------------------------------------------
# Weak types and promotion


def _aval(fun, *args):
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out.dtype, out.weak_type


def _sds(dtype, weak=False):
    return ShapeDtypeStruct((3,), dtype, weak_type=weak)


def test_python_scalars_give_weak_results():
    assert (jnp.sqrt(2).dtype, jnp.sqrt(2).aval.weak_type) == (f32, True)
    assert jnp.exp(1.0).aval.weak_type and jnp.positive(2).aval.weak_type
    assert not jnp.sqrt(np.int32(2)).aval.weak_type
    assert _aval(jnp.sqrt, _sds(i32)) == (f32, False)
    assert _aval(jnp.sqrt, _sds(f32, weak=True)) == (f32, True)
    assert _aval(jnp.sin, _sds(bf16)) == (bf16, False)
    assert _aval(lambda x: jnp.hypot(x, 2.0), _sds(f16)) == (f16, False)
    assert _aval(lambda x: jnp.arctan2(x, 2), _sds(i8)) == (f32, False)
    assert _aval(lambda x: jnp.maximum(x, 2.5), _sds(i32)) == (f32, True)
    assert _aval(lambda x: jnp.logaddexp(x, x), _sds(u8)) == (f32, False)
    assert _aval(lambda x: jnp.heaviside(x, 0.5), _sds(bf16)) == (bf16, False)
    assert _aval(lambda x, y: jnp.fmax(x, y), _sds(i8), _sds(u8)) == (np.dtype(np.int16), False)
    assert _aval(lambda x, y: jnp.hypot(x, y), _sds(bf16), _sds(f16)) == (f32, False)
    assert _aval(jnp.rint, _sds(i32)) == (f32, False)
    assert _aval(jnp.floor, _sds(u8)) == (u8, False)
    assert _aval(jnp.isnan, _sds(f32)) == (boolean, False)
    assert _aval(lambda x: jnp.clip(x, 0.5), _sds(i32)) == (f32, True)
    assert _aval(lambda x: jnp.ldexp(x, 3), _sds(bf16)) == (bf16, False)
    assert jnp.frexp(2.0)[0].aval.weak_type and jnp.frexp(2.0)[1].dtype == i32


# ---------------------------------------------------------------------------
# Special values


# The sign of a zero result is part of the contract of these (not of maximum & co).
_SIGNED_ZEROS_MATTER = {"signbit", "copysign", "nan_to_num", "spacing", "modf", "trunc"}


def test_special_values_of_floats():
    nan, inf = np.nan, np.inf
    x = np.array([nan, inf, -inf, 0.0, -0.0, 1.0, -2.5], np.float32)
    y = np.array([1.0, inf, -inf, -0.0, nan, nan, 2.0], np.float32)

    def f(x, y):
        return dict(
            isnan=jnp.isnan(x),
            isinf=jnp.isinf(x),
            isfinite=jnp.isfinite(x),
            isposinf=jnp.isposinf(x),
            isneginf=jnp.isneginf(x),
            signbit=jnp.signbit(x),
            fmax=jnp.fmax(x, y),
            fmin=jnp.fmin(x, y),
            maximum=jnp.maximum(x, y),
            logaddexp=jnp.logaddexp(x, y),
            hypot=jnp.hypot(x, y),
            copysign=jnp.copysign(np.float32(3.0), x),
            nan_to_num=jnp.nan_to_num(x),
            nan_to_num_args=jnp.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-7.0),
            spacing=jnp.spacing(np.array([1.0, -1.0, 1e3, inf], np.float32)),
            modf=jnp.modf(x),
            trunc=jnp.trunc(x),
            isclose=jnp.isclose(x, y),
            isclose_nan=jnp.isclose(x, y, equal_nan=True),
        )

    got = jit(f)(x, y)
    with np.errstate(all="ignore"):
        want = dict(
            isnan=np.isnan(x),
            isinf=np.isinf(x),
            isfinite=np.isfinite(x),
            isposinf=np.isposinf(x),
            isneginf=np.isneginf(x),
            signbit=np.signbit(x),
            fmax=np.fmax(x, y),
            fmin=np.fmin(x, y),
            maximum=np.maximum(x, y),
            logaddexp=np.logaddexp(x, y),
            hypot=np.hypot(x, y),
            copysign=np.copysign(np.float32(3.0), x),
            nan_to_num=np.nan_to_num(x),
            nan_to_num_args=np.nan_to_num(x, nan=1.5, posinf=7.0, neginf=-7.0),
            spacing=np.spacing(np.array([1.0, -1.0, 1e3, inf], np.float32)),
            modf=np.modf(x),
            trunc=np.trunc(x),
            isclose=np.isclose(x, y),
            isclose_nan=np.isclose(x, y, equal_nan=True),
        )
    for name, w in want.items():
        g = got[name]
        for gi, wi in zip(g, w) if isinstance(w, tuple) else [(g, w)]:
            _assert_close(gi, wi, wi.dtype, name)
            if name in _SIGNED_ZEROS_MATTER and wi.dtype.kind == "f":
                real = ~np.isnan(wi)  # the sign of a NaN means nothing
                np.testing.assert_array_equal(
                    np.signbit(np.asarray(gi))[real], np.signbit(wi)[real], name
                )


def test_complex_predicates_and_nan_to_num():
    z = np.array([1 + 2j, complex(np.nan, 1), complex(1, np.inf), 3 + 0j], np.complex64)
    got = jit(
        lambda z: (
            jnp.isnan(z),
            jnp.isinf(z),
            jnp.isfinite(z),
            jnp.isreal(z),
            jnp.iscomplex(z),
            jnp.nan_to_num(z),
        )
    )(z)
    want = (np.isnan(z), np.isinf(z), np.isfinite(z), np.isreal(z), np.iscomplex(z))
    for g, w in zip(got, want):
        _assert_close(g, w, boolean, "complex predicate")
    _assert_close(got[5], np.nan_to_num(z), c64, "nan_to_num")
    ints = np.array([1, 2], np.int32)
    assert not np.asarray(jnp.isnan(ints)).any() and np.asarray(jnp.isfinite(ints)).all()
    assert np.asarray(jnp.isreal(ints)).all()
    unchanged = jnp.nan_to_num(ints)  # an array, as in JAX, not the NumPy input handed back
    assert isinstance(unchanged, jnp.ndarray) and unchanged.dtype == np.int32
    np.testing.assert_array_equal(unchanged, ints)


def test_frexp_and_ldexp():
    x = np.array([8.0, 0.75, -3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, 1e-30], np.float32)
    e = np.array([2, -3, 100, -100, 5, 1, -1, 0, 20, -20], np.int32)

    def f(x, e, h):
        return jnp.frexp(x), jnp.ldexp(x, e), jnp.frexp(h), jnp.ldexp(h, e[:3])

    h = np.array([3.0, -0.125, 1000.0], np.float16)
    (m, ex), scaled, (mh, eh), scaled_h = jit(f)(x, e, h)
    want_m, want_e = np.frexp(x)
    _assert_close(m, want_m, f32, "frexp mantissa")
    _assert_close(ex, want_e, i32, "frexp exponent")
    with np.errstate(all="ignore"):
        _assert_close(scaled, np.ldexp(x, e), f32, "ldexp")
        _assert_close(scaled_h, np.ldexp(h, e[:3]), f16, "ldexp f16")
    _assert_close(mh, np.frexp(h)[0], f16, "frexp f16")
    _assert_close(eh, np.frexp(h)[1], i32, "frexp f16")
    # Exponents far out of range saturate to 0 and inf instead of wrapping around.
    huge = np.array([2**31 - 1, -(2**31)], np.int32)
    _assert_close(jnp.ldexp(np.float32([1.0, 1.0]), huge), np.float32([np.inf, 0.0]), f32, "big")
    _assert_close(jnp.ldexp(np.float32(1.5), np.uint8(3)), np.float32(12.0), f32, "uint exp")


def test_round():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375, 1234.5678, -2.675], np.float32)
    ints = np.array([15, 25, -15, -25, 14, 16, 2147483600], np.int32)

    def f(x, b, h, ints, z):
        return (
            jnp.round(x),
            jnp.round(x, 2),
            jnp.around(x, -1),
            jnp.round(b, 1),
            jnp.round(h, 2),
            jnp.round(ints, -1),
            jnp.round(ints, -2),
            jnp.round(ints, 3),
            jnp.round(z, 1),
            x.round(1),
            jnp.round(np.uint8(250), -1),
        )

    b, h = x.astype(bf16), x.astype(f16)
    z = (x + 1j * x[::-1]).astype(c64)
    got = jit(f)(x, b, h, ints, z)
    want = (
        np.round(x),
        np.round(x, 2),
        np.round(x, -1),
        np.round(b.astype(f32), 1).astype(bf16),
        np.round(h.astype(f32), 2).astype(f16),
        np.round(ints, -1),
        np.round(ints, -2),
        ints,
        np.round(z, 1),
        np.round(x, 1),
        np.uint8(250),
    )
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_close(g, w, w.dtype, f"round case {i}")
    assert round(jnp.asarray(np.float32(2.5))).dtype == i32
    assert float(round(jnp.asarray(np.float32(2.675)), 2)) == pytest.approx(2.68, abs=1e-6)


def test_clip():
    x = np.arange(-3, 5, dtype=np.int32)

    def f(x):
        return (
            jnp.clip(x, 1, 3),
            jnp.clip(x, max=2),
            jnp.clip(x, min=0),
            jnp.clip(x, 0.5),
            jnp.clip(x, np.arange(8, dtype=np.int32), 4),
            jnp.clip(x, 3, 1),
            x.clip(-1, 1),
            x.clip(max=0),
        )

    got = jit(f)(x)
    want = (
        np.clip(x, 1, 3),
        np.clip(x, None, 2),
        np.clip(x, 0, None),
        np.clip(x, 0.5, None).astype(f32),
        np.clip(x, np.arange(8, dtype=np.int32), 4),
        np.clip(x, 3, 1),
        np.clip(x, -1, 1),
        np.clip(x, None, 0),
    )
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_close(g, w, w.dtype, f"clip case {i}")
    nan_clipped = jnp.clip(np.float32([np.nan, 5.0]), 0.0, 1.0)
    assert np.isnan(nan_clipped[0]) and nan_clipped[1] == 1.0
    with pytest.warns(DeprecationWarning, match="'a_min'"):
        _assert_close(jnp.clip(x, a_min=0, a_max=2), np.clip(x, 0, 2), i32, "a_min")
    with pytest.warns(DeprecationWarning, match="'a'"):
        _assert_close(jnp.clip(a=x, max=0), np.clip(x, None, 0), i32, "a")


def test_gcd_lcm():
    x = np.array([12, -18, 0, 0, 7, 100, -35], np.int32)
    y = np.array([8, 12, 5, 0, 13, -75, -49], np.int32)
    got = jit(lambda x, y: (jnp.gcd(x, y), jnp.lcm(x, y), jnp.gcd(x, 6)))(x, y)
    for g, w in zip(got, (np.gcd(x, y), np.lcm(x, y), np.gcd(x, 6))):
        _assert_close(g, w, i32, "gcd/lcm")
    u = np.array([12, 0, 255], np.uint8)
    _assert_close(jnp.gcd(u, np.uint8(18)), np.gcd(u, np.uint8(18)), u8, "gcd u8")


def test_angle_and_sinc_at_zero():
    z = np.array([1j, -1 + 0j, 1 + 1j, 0j], np.complex64)
    got = jit(lambda z, r: (jnp.angle(z), jnp.angle(z, deg=True), jnp.angle(r)))(
        z, np.array([-2, 0, 3], np.int32)
    )
    _assert_close(got[0], np.angle(z), f32, "angle")
    _assert_close(got[1], np.angle(z, deg=True), f32, "angle deg")
    _assert_close(got[2], np.angle(np.array([-2, 0, 3])).astype(f32), f32, "angle real")
    # sinc's derivatives at 0 come from its Maclaurin series: 1, 0, -pi^2/3, 0.
    d1 = ad.grad(jnp.sinc)
    d2 = ad.grad(d1)
    d3 = ad.grad(d2)
    zero = np.float32(0.0)
    assert (float(jnp.sinc(zero)), float(d1(zero)), float(d3(zero))) == (1.0, 0.0, 0.0)
    assert float(d2(zero)) == pytest.approx(-(math.pi**2) / 3, rel=1e-6)


# ---------------------------------------------------------------------------
# Whole-array comparisons


def test_allclose_array_equal_array_equiv():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    b = np.array([1.0, 2.0 + 1e-6, np.nan], np.float32)
    assert not bool(jnp.allclose(a, b)) and bool(jnp.allclose(a, b, equal_nan=True))
    assert bool(jnp.allclose(a[:2], b[:2], rtol=0, atol=1e-5))
    assert not bool(jnp.allclose(a[:2], b[:2], rtol=0, atol=1e-7))
    assert bool(jnp.array_equal([1, 2], np.array([1, 2])))
    assert not bool(jnp.array_equal(a, a)) and bool(jnp.array_equal(a, a, equal_nan=True))
    assert not bool(jnp.array_equal([1, 2], [1, 2, 3]))
    assert not bool(jnp.array_equal(np.zeros(3), "abc"))
    assert bool(jnp.array_equiv(np.ones((2, 3)), 1.0))
    assert not bool(jnp.array_equiv(np.ones(2), np.ones(3)))
    assert bool(jnp.array_equiv(np.array([[1, 2], [1, 2]]), np.array([1, 2])))
    # Integers compare exactly, whatever the tolerances (JAX's rule).
    assert not bool(jnp.isclose(np.int32(100), np.int32(101), rtol=0.1))
    out = jit(lambda x, y: (jnp.allclose(x, y), jnp.array_equal(x, y)))(a, b)
    assert out[0].shape == () and out[0].dtype == boolean and not bool(out[1])


# ---------------------------------------------------------------------------
# Errors


def test_errors():
    with pytest.raises(TypeError, match="sqrt requires ndarray or scalar arguments"):
        jnp.sqrt([1.0, 2.0])
    with pytest.raises(TypeError, match="hypot requires ndarray or scalar"):
        jnp.hypot(np.ones(2), [1.0])
    z = np.ones(2, np.complex64)
    for fn in (jnp.fabs, jnp.floor, jnp.trunc, jnp.signbit, jnp.frexp, jnp.spacing, jnp.modf):
        with pytest.raises(TypeError, match="complex"):
            fn(z)
    for fn in (jnp.copysign, jnp.fmod, jnp.floor_divide):  # hypot, logaddexp: below
        with pytest.raises(TypeError, match="complex"):
            fn(z, z)
    with pytest.raises(TypeError, match="bitwise_and is only defined for integer and boolean"):
        jnp.bitwise_and(np.ones(2, np.float32), 1)
    with pytest.raises(TypeError, match="invert is only defined"):
        jnp.invert(np.float32(1))
    with pytest.raises(ValueError, match="gcd must be integers"):
        jnp.gcd(np.float32(1), 2)
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(np.float32(1), 2.0)
    with pytest.raises(ValueError, match="ldexp not supported"):
        jnp.ldexp(z, 2)
    with pytest.raises(ValueError, match="not well defined for complex"):
        jnp.isposinf(z)
    with pytest.raises(ValueError, match="Complex values have no ordering"):
        jnp.clip(z, 0, 1)
    with pytest.raises(ValueError, match="No input"):
        jnp.clip(min=0)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="Only one of"):
        jnp.clip(np.ones(2), a=np.ones(2))
    with pytest.raises(TypeError, match="decimals must be an int"):
        jnp.round(np.ones(2), 1.5)
    with pytest.raises(NotImplementedError, match="out"):
        jnp.round(np.ones(2), out=np.ones(2))
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        jnp.subtract(np.bool_(True), np.bool_(False))


# ---------------------------------------------------------------------------
# Derivatives

_P = np.array([0.3, 0.7, 1.3, 2.1], np.float32)
_Q = np.array([1.9, -0.6, 0.45, -1.2], np.float32)
_U = np.array([-0.6, -0.2, 0.3, 0.7], np.float32)

GRADS = {
    "sqrt": (jnp.sqrt, (_P,)),
    "log": (jnp.log, (_P,)),
    "log2": (jnp.log2, (_P,)),
    "exp2": (jnp.exp2, (_Q,)),
    "cbrt": (jnp.cbrt, (_P,)),
    "tan": (jnp.tan, (_U,)),
    "arcsin": (jnp.arcsin, (_U,)),
    "arccosh": (jnp.arccosh, (_P + 1.0,)),
    "arctanh": (jnp.arctanh, (_U,)),
    "sinc": (jnp.sinc, (_Q,)),
    "i0": (jnp.i0, (_Q,)),
    "reciprocal": (jnp.reciprocal, (_P,)),
    "arctan2": (jnp.arctan2, (_Q, _P)),
    "hypot": (jnp.hypot, (_Q, _P)),
    "logaddexp": (jnp.logaddexp, (_Q, _P)),
    "logaddexp2": (jnp.logaddexp2, (_Q, _P)),
    "logaddexp at ties": (jnp.logaddexp, (_Q, _Q)),
    "logaddexp2 at ties": (jnp.logaddexp2, (_P, _P)),
    "float_power": (jnp.float_power, (_P, _Q)),
    "copysign": (jnp.copysign, (_Q, _P - 1.0)),
    "fmax": (jnp.fmax, (_Q, _P)),
    "clip": (lambda x: jnp.clip(x, -0.5, 0.5), (_U * 2.0,)),
    "ldexp": (lambda x: jnp.ldexp(x, np.int32([3, -2, 0, 1])), (_Q,)),
    "frexp": (lambda x: jnp.frexp(x)[0], (_Q,)),
    "modf": (lambda x: jnp.modf(x)[0] * 3.0 + jnp.modf(x)[1], (_Q,)),
    "deg2rad": (jnp.deg2rad, (_Q,)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_check_grads(name):
    fn, args = GRADS[name]
    check_grads(fn, args, order=2)


def test_logaddexp_splits_ties_evenly():
    zero = np.float32(0.0)
    for fn in (jnp.logaddexp, jnp.logaddexp2):
        assert float(ad.grad(fn)(zero, zero)) == float(ad.grad(fn, argnums=1)(zero, zero)) == 0.5
    inf = np.float32(np.inf)
    assert float(ad.grad(jnp.logaddexp)(np.float32(1.0), -inf)) == 1.0
    assert float(ad.grad(jnp.logaddexp, argnums=1)(np.float32(1.0), -inf)) == 0.0


def test_grads_of_discontinuous_functions_are_zero():
    for fn in (jnp.floor, jnp.round, jnp.rint, jnp.sign, lambda x: jnp.heaviside(x, 0.5)):
        g = ad.grad(lambda x, fn=fn: jnp.sum(fn(x)))(_Q)
        np.testing.assert_array_equal(np.asarray(g), np.zeros(4, np.float32))


# ---------------------------------------------------------------------------
# vmap against a Python loop, jit against eager


VMAPPED = {
    "logaddexp": lambda x, y: jnp.logaddexp(x, y),
    "round": lambda x, y: jnp.round(x * y, 1),
    "frexp": lambda x, y: jnp.frexp(x * y),
    "ldexp": lambda x, y: jnp.ldexp(x, jnp.astype(y * 4, np.int32)),
    "isclose": lambda x, y: jnp.isclose(x, y, atol=0.5),
    "gcd": lambda x, y: jnp.gcd(jnp.astype(x * 10, np.int32), jnp.astype(y * 6, np.int32)),
    "clip": lambda x, y: jnp.clip(x, y, 1.0),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap_matches_loop(name):
    fn = VMAPPED[name]
    rng = np.random.default_rng(1)
    xs = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    ys = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    batched = vmap(fn)(xs, ys)
    looped = [fn(xs[i], ys[i]) for i in range(3)]
    flat_b = batched if isinstance(batched, tuple) else (batched,)
    for j, b in enumerate(flat_b):
        rows = [lp[j] if isinstance(lp, tuple) else lp for lp in looped]
        np.testing.assert_array_equal(np.asarray(b), np.stack([np.asarray(r) for r in rows]))


def test_jit_matches_eager():
    x = np.array([0.5, -1.25, 3.0, 0.0], np.float32)
    y = np.array([2.0, 0.75, -1.0, 0.0], np.float32)

    def f(x, y):
        return (jnp.hypot(x, y), jnp.fmod(x, 0.7), jnp.signbit(y), jnp.copysign(x, y))

    for e, j in zip(f(x, y), jit(f)(x, y)):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))


def test_no_warnings_on_special_values():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jnp.log(np.float32([0.0, -1.0]))
        jnp.true_divide(np.float32(1), np.float32(0))


# JAX 0.10.2 takes complex operands in deg2rad/rad2deg, arctan2 (stablehlo.atan2)
# and logaddexp/logaddexp2 (the lexicographic max plus a log1p correction); hypot
# raises ValueError, copysign and nextafter TypeError.
_Z1 = np.array([1 + 1j, -2 + 0.5j, 0.5 - 3j, -1 - 1j], np.complex64)
_Z2 = np.array([2 - 1j, 3 + 0j, -0.25 + 1j, -1 - 1j], np.complex64)


def test_degree_conversions_scale_complex_values():
    np.testing.assert_allclose(jnp.deg2rad(_Z1), _Z1 * np.float32(np.pi / 180), rtol=1e-6)
    np.testing.assert_allclose(jnp.radians(_Z1), _Z1 * np.float32(np.pi / 180), rtol=1e-6)
    np.testing.assert_allclose(jnp.rad2deg(_Z1), _Z1 * np.float32(180 / np.pi), rtol=1e-6)
    assert jnp.degrees(_Z1).dtype == np.complex64


def test_arctan2_of_complex_inverts_the_tangent_of_the_quotient():
    out = np.asarray(jnp.arctan2(_Z1, _Z2))
    assert out.dtype == np.complex64
    np.testing.assert_allclose(np.tan(out.astype(np.complex128)), _Z1 / _Z2, rtol=1e-5)
    # on the real axis it is the real arctan2, quadrant included
    real = np.asarray(jnp.arctan2(_Z1.real.astype(np.complex64), _Z2.real.astype(np.complex64)))
    np.testing.assert_allclose(real.real, np.arctan2(_Z1.real, _Z2.real), rtol=1e-6)


@pytest.mark.parametrize(("name", "base"), [("logaddexp", np.e), ("logaddexp2", 2.0)])
def test_logaddexp_of_complex_is_a_logarithm_of_the_sum(name, base):
    out = np.asarray(getattr(jnp, name)(_Z1, _Z2)).astype(np.complex128)
    z1, z2 = _Z1.astype(np.complex128), _Z2.astype(np.complex128)
    np.testing.assert_allclose(base**out, base**z1 + base**z2, rtol=1e-5)
    # the larger operand (lexicographically) plus a principal-branch correction
    big = np.where(z1.real >= z2.real, z1, z2)
    np.testing.assert_allclose(
        out, big + np.log1p(base ** (z1 + z2 - 2 * big)) / np.log(base), rtol=1e-5
    )


def test_real_only_binary_functions_refuse_complex_as_jax():
    with pytest.raises(ValueError, match="hypot is not well defined for complex"):
        jnp.hypot(_Z1, _Z2)
    for f in (jnp.copysign, jnp.nextafter):
        with pytest.raises(TypeError, match="complex"):
            f(_Z1, _Z2)
