"""jnp's scalar types, type hierarchy, dtype queries, array properties and constants.

Oracles: NumPy's own answers where JAX agrees with it (`issubdtype` of NumPy
types, `finfo`, `iinfo`, `can_cast`), JAX's promotion table otherwise.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core import basearray, config, make_jaxpr
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.dtypes import TypePromotionError
from polyjax_interpreters.array import Array
from polyjax_interpreters.jit import jit

bf16 = np.dtype(ml_dtypes.bfloat16)

SCALAR_TYPES = {
    "bool_": np.bool_,
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "complex64": np.complex64,
    "complex128": np.complex128,
    "bfloat16": ml_dtypes.bfloat16,
    "int2": ml_dtypes.int2,
    "int4": ml_dtypes.int4,
    "uint2": ml_dtypes.uint2,
    "uint4": ml_dtypes.uint4,
    "float4_e2m1fn": ml_dtypes.float4_e2m1fn,
    "float6_e2m3fn": ml_dtypes.float6_e2m3fn,
    "float6_e3m2fn": ml_dtypes.float6_e3m2fn,
    "float8_e3m4": ml_dtypes.float8_e3m4,
    "float8_e4m3": ml_dtypes.float8_e4m3,
    "float8_e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu,
    # The default types are the 64-bit ones (canonicalized when used).
    "int_": np.int64,
    "uint": np.uint64,
    "float_": np.float64,
    "complex_": np.complex128,
    "single": np.float32,
    "double": np.float64,
    "csingle": np.complex64,
    "cdouble": np.complex128,
}


@pytest.mark.parametrize("name", sorted(SCALAR_TYPES))
def test_scalar_type_is_its_dtype(name):
    ours, scalar = getattr(jnp, name), SCALAR_TYPES[name]
    assert isinstance(ours, type)
    assert ours.dtype == np.dtype(scalar) and np.dtype(ours) == np.dtype(scalar)
    assert ours == scalar and hash(ours) == hash(scalar)
    assert jnp.dtype(ours) == np.dtype(scalar)


@pytest.mark.parametrize("name", ["float32", "bfloat16", "int8", "uint8", "bool_", "complex64"])
def test_scalar_type_call_makes_arrays(name):
    ours = getattr(jnp, name)
    x = ours(1)
    assert isinstance(x, Array) and x.dtype == ours.dtype and x.shape == ()
    assert not x.aval.weak_type
    y = ours([1, 0, 1])
    assert (
        y.dtype == ours.dtype
        and np.asarray(y).tolist() == np.asarray([1, 0, 1], ours.dtype).tolist()
    )
    # On tracers too: the call is an `asarray`.
    traced = jit(lambda v: ours(v))(np.float32(1.0))
    assert traced.dtype == ours.dtype


def test_scalar_types_as_dtype_arguments():
    assert jnp.asarray([1, 2], jnp.bfloat16).dtype == bf16
    assert jnp.asarray(1.5, dtype=jnp.float16).dtype == np.float16
    assert jnp.astype(np.arange(3), jnp.int8).dtype == np.int8
    # The 64-bit defaults are narrowed without x64, with JAX's warning.
    with config.enable_x64(False), pytest.warns(UserWarning, match="float64 .* not available"):
        assert jnp.asarray([1.0], jnp.float_).dtype == np.float32
    with config.enable_x64(False), pytest.warns(UserWarning, match="int64 .* not available"):
        assert jnp.asarray([1], jnp.int_).dtype == np.int32
    assert isinstance(np.float32(1.0), jnp.float32) and not isinstance(np.float64(1), jnp.float32)
    assert repr(jnp.float32) == "<class 'jax.numpy.float32'>"


HIERARCHY = [
    (jnp.bfloat16, jnp.floating, True),
    (jnp.bfloat16, jnp.inexact, True),
    (jnp.bfloat16, jnp.number, True),
    (jnp.bfloat16, jnp.integer, False),
    (jnp.float8_e4m3fn, jnp.floating, True),
    (jnp.int4, jnp.signedinteger, True),
    (jnp.uint4, jnp.unsignedinteger, True),
    (jnp.uint4, jnp.signedinteger, False),
    (jnp.int8, jnp.integer, True),
    (jnp.complex64, jnp.complexfloating, True),
    (jnp.complex64, jnp.floating, False),
    (jnp.bool_, jnp.generic, True),
    (jnp.bool_, jnp.number, False),
    (jnp.float32, jnp.float32, True),
    (jnp.float32, jnp.float64, False),
    (np.dtype(np.int16), jnp.signedinteger, True),
    ("float16", jnp.inexact, True),
]


@pytest.mark.parametrize("a, b, expected", HIERARCHY, ids=str)
def test_issubdtype(a, b, expected):
    assert jnp.issubdtype(a, b) is expected


def test_abstract_categories_are_numpys():
    for name in (
        "generic number integer signedinteger unsignedinteger inexact floating "
        "complexfloating character flexible object_"
    ).split():
        assert getattr(jnp, name) is getattr(np, name)
    assert jnp.dtype is np.dtype and jnp.ndarray is basearray.Array
    assert jnp.ComplexWarning is np.exceptions.ComplexWarning


ISDTYPE = [
    (jnp.bool_, "bool", True),
    (jnp.int8, "signed integer", True),
    (jnp.uint8, "signed integer", False),
    (jnp.uint4, "unsigned integer", True),
    (jnp.int4, "integral", True),
    (jnp.bfloat16, "real floating", True),
    (jnp.complex64, "real floating", False),
    (jnp.complex64, "complex floating", True),
    (jnp.float8_e5m2, "numeric", True),
    (jnp.bool_, "numeric", False),
    (jnp.int32, ("bool", "real floating"), False),
    (jnp.int32, ("bool", "integral"), True),
    (jnp.float32, jnp.float32, True),
    (jnp.float32, (jnp.float16, np.float32), True),
]


@pytest.mark.parametrize("dtype, kind, expected", ISDTYPE, ids=str)
def test_isdtype(dtype, kind, expected):
    assert jnp.isdtype(dtype, kind) is expected
    if not any(t in str(dtype) for t in ("bfloat16", "int4", "float8")):
        assert (
            np.isdtype(np.dtype(dtype), kind if isinstance(kind, str | tuple) else np.dtype(kind))
            is expected
        )


def test_isdtype_errors():
    with pytest.raises(TypeError, match="unknown kind 'floating'"):
        jnp.isdtype(jnp.float32, "floating")
    with pytest.raises(TypeError, match="kind must be a dtype"):
        jnp.isdtype(jnp.float32, object())


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, ml_dtypes.int4, jnp.uint8])
def test_iinfo(dtype):
    info = jnp.iinfo(dtype)
    reference = ml_dtypes.iinfo(np.dtype(dtype))
    assert (info.min, info.max, info.bits) == (reference.min, reference.max, reference.bits)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, jnp.bfloat16, ml_dtypes.float8_e4m3fn])
def test_finfo(dtype):
    info = jnp.finfo(dtype)
    reference = ml_dtypes.finfo(np.dtype(dtype))
    assert (float(info.eps), float(info.max), info.bits) == (
        float(reference.eps),
        float(reference.max),
        reference.bits,
    )
    if np.dtype(dtype) in (np.dtype(np.float16), np.dtype(np.float32)):
        assert float(info.tiny) == float(np.finfo(dtype).tiny)


# JAX's promotion table (https://docs.jax.dev/en/latest/type_promotion.html).
PROMOTE = [
    (np.int8, np.uint8, np.int16),
    (np.uint8, np.int32, np.int32),
    (np.int32, np.uint32, np.int32),  # x64 is off: int32, not int64 (JAX's lattice)
    (np.int64, np.uint64, np.float64),
    (jnp.bfloat16, np.float16, np.float32),
    (jnp.bfloat16, np.int32, jnp.bfloat16),
    (np.bool_, np.int8, np.int8),
    (np.float16, np.complex64, np.complex64),
    (np.uint8, int, np.uint8),
    (np.float16, float, np.float16),
    (np.int32, float, np.float64),
    (int, float, np.float64),
    (np.bool_, complex, np.complex128),
]


@pytest.mark.parametrize("a, b, expected", PROMOTE, ids=str)
def test_promote_types(a, b, expected):
    with config.enable_x64(False):
        assert jnp.promote_types(a, b) == np.dtype(expected)
        assert jnp.promote_types(b, a) == np.dtype(expected)


def test_promote_types_lattice_depends_on_x64():
    with config.enable_x64(True):
        assert jnp.promote_types(np.int32, np.uint32) == np.int64
    with config.enable_x64(False):
        assert jnp.promote_types(np.int32, np.uint32) == np.int32
        assert jnp.promote_types(np.int64, np.uint32) == np.int64  # not canonicalized


def test_promote_types_without_promotion():
    with pytest.raises(TypePromotionError):
        jnp.promote_types(jnp.float8_e4m3fn, np.float32)


def test_result_type():
    with config.enable_x64(False):
        assert jnp.result_type(np.int8, 1) == np.int8
        assert jnp.result_type(np.int32, 1.0) == np.float32
        assert jnp.result_type(np.float16, np.float32) == np.float32
        assert jnp.result_type(np.int64) == np.int32
        assert jnp.result_type(1, 2.0) == np.float32
        assert jnp.result_type(np.zeros(2, np.uint8), np.int8) == np.int16
        assert jnp.result_type(jnp.asarray(1.0), np.float16) == np.float16  # a weak array
    with pytest.raises(ValueError, match="at least one"):
        jnp.result_type()


def test_can_cast_is_numpys():
    assert jnp.can_cast(np.int8, np.float32) and not jnp.can_cast(np.float32, np.int8)
    assert jnp.can_cast(jnp.int8, jnp.bfloat16, casting="same_kind")
    assert jnp.can_cast(np.float64, np.float32, casting="same_kind")


# ---------------------------------------------------------------------------
# Array properties


def test_ndim_shape_size_on_values():
    x = np.zeros((2, 3, 4))
    a = jnp.asarray(np.zeros((2, 0), np.float32))
    for value in (x, a, 1.5, [[1, 2, 3]], np.float32(1)):
        assert jnp.ndim(value) == np.ndim(value)
        assert jnp.shape(value) == np.shape(value)
        assert jnp.size(value) == np.size(value)
    assert jnp.size(x, 1) == 3 and jnp.size(x, (0, 2)) == 8 and jnp.size(x, -1) == 4


def test_ndim_shape_size_on_tracers():
    def f(x):
        assert (jnp.ndim(x), jnp.shape(x), jnp.size(x), jnp.size(x, 0)) == (2, (2, 3), 6, 2)
        assert jnp.isscalar(x[0, 0]) and not jnp.isscalar(x)
        return x

    make_jaxpr(f)(ShapeDtypeStruct((2, 3), np.float32))


def test_isscalar():
    assert jnp.isscalar(1.0) and jnp.isscalar(np.float32(1)) and jnp.isscalar(True)
    assert jnp.isscalar(np.array(1.0)) and jnp.isscalar(jnp.asarray(1.0))
    assert not jnp.isscalar(np.zeros(2)) and not jnp.isscalar([1.0]) and not jnp.isscalar(None)


def test_iscomplexobj_isrealobj():
    assert jnp.iscomplexobj(np.zeros(2, np.complex64)) and jnp.iscomplexobj(1j)
    assert jnp.iscomplexobj([1j, 2]) and not jnp.iscomplexobj([1, 2])
    assert jnp.iscomplexobj(jnp.asarray(np.zeros(2, np.complex64)))
    assert not jnp.iscomplexobj(None) and not jnp.iscomplexobj(jnp.bfloat16(1.0))
    assert jnp.isrealobj(np.float32(1)) and not jnp.isrealobj(1 + 0j)


# ---------------------------------------------------------------------------
# Constants


def test_constants():
    assert (jnp.pi, jnp.e, jnp.euler_gamma) == (np.pi, np.e, np.euler_gamma)
    assert jnp.inf == np.inf and np.isnan(jnp.nan) and jnp.newaxis is None
    assert all(type(c) is float for c in (jnp.pi, jnp.e, jnp.euler_gamma, jnp.inf, jnp.nan))
    # Python floats are weakly typed: they keep the array's dtype.
    x = jnp.asarray(np.ones(3, bf16))
    assert (x * jnp.pi).dtype == bf16
    assert jnp.asarray(np.arange(3.0, dtype=np.float32))[jnp.newaxis].shape == (1, 3)
