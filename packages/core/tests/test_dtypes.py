"""Tests for polyjax_core.dtypes: promotion, weak types, canonicalization, dtype queries."""

import dataclasses
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyjax_core import dtypes
from polyjax_core.config import enable_x64, numpy_dtype_promotion


@dataclasses.dataclass(frozen=True)
class FakeAval:
    """Stands in for an abstract value: something with `dtype` and `weak_type`."""

    dtype: object
    weak_type: bool = False
    shape: tuple = ()


# ---------------------------------------------------------------------------------------
# The oracle: JAX's documented binary promotion table ("Type promotion semantics"),
# row label x column label -> result. i*, f*, c* are weakly-typed int/float/complex.
# ---------------------------------------------------------------------------------------

_LABELS = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*".split()
_TABLE_TEXT = """
b1  b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1  u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2  u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4  u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8  u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1  i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2  i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4  i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8  i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2  f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*  i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*  f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*  c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""
TABLE = {
    (row[0], col): result
    for row in (line.split() for line in _TABLE_TEXT.strip().splitlines())
    for col, result in zip(_LABELS, row[1:])
}

_STRONG = {
    "b1": np.dtype(bool),
    "u1": np.dtype(np.uint8),
    "u2": np.dtype(np.uint16),
    "u4": np.dtype(np.uint32),
    "u8": np.dtype(np.uint64),
    "i1": np.dtype(np.int8),
    "i2": np.dtype(np.int16),
    "i4": np.dtype(np.int32),
    "i8": np.dtype(np.int64),
    "bf": np.dtype(ml_dtypes.bfloat16),
    "f2": np.dtype(np.float16),
    "f4": np.dtype(np.float32),
    "f8": np.dtype(np.float64),
    "c8": np.dtype(np.complex64),
    "c16": np.dtype(np.complex128),
}
_WEAK_PYTYPE = {"i*": int, "f*": float, "c*": complex}
_WEAK_VALUE = {"i*": 3, "f*": 2.5, "c*": 1 + 2j}


def expected_x64(label):
    """(dtype, weak_type) that result_type returns for `label` with x64 on."""
    if label in _WEAK_PYTYPE:
        return np.dtype(_WEAK_PYTYPE[label]), True
    return _STRONG[label], False


def as_value(label):
    return _WEAK_VALUE[label] if label in _WEAK_VALUE else _STRONG[label]


def as_aval(label):
    dtype, weak = expected_x64(label)
    return FakeAval(dtype, weak)


def test_oracle_table_is_complete_and_symmetric():
    assert len(TABLE) == len(_LABELS) ** 2
    for a in _LABELS:
        for b in _LABELS:
            assert TABLE[a, b] == TABLE[b, a]


_PAIRS = [(a, b) for a in _LABELS for b in _LABELS]


@pytest.mark.parametrize("a, b", _PAIRS)
def test_promotion_table_x64(a, b):
    expected = expected_x64(TABLE[a, b])
    with enable_x64(True):
        assert dtypes.result_type(as_value(a), as_value(b), return_weak_type_flag=True) == expected
        assert dtypes.result_type(as_aval(a), as_aval(b), return_weak_type_flag=True) == expected
        spec_a = _WEAK_PYTYPE.get(a, _STRONG.get(a))
        spec_b = _WEAK_PYTYPE.get(b, _STRONG.get(b))
        assert dtypes.promote_types(spec_a, spec_b) == expected[0]


# Without x64, JAX's lattice puts u4 below i4 (not i8): uint32 mixed with a signed integer
# of at most 32 bits gives int32. Every other entry of the table stands.
TABLE_X32 = {
    **TABLE,
    **{pair: "i4" for s in ("i1", "i2", "i4") for pair in (("u4", s), (s, "u4"))},
}
# The label of each 64-bit type's value without x64.
_CANONICAL_LABEL = {"u8": "u4", "i8": "i4", "f8": "f4", "c16": "c8"}


@pytest.mark.parametrize("a, b", _PAIRS)
def test_promotion_table_x32(a, b):
    with enable_x64(False):
        # promote_types is not canonicalized: it joins the dtypes as given.
        spec_a = _WEAK_PYTYPE.get(a, _STRONG.get(a))
        spec_b = _WEAK_PYTYPE.get(b, _STRONG.get(b))
        assert dtypes.promote_types(spec_a, spec_b) == expected_x64(TABLE_X32[a, b])[0]
        # result_type joins what values of the dtypes are: 64-bit types are 32-bit ones.
        a32, b32 = (_CANONICAL_LABEL.get(x, x) for x in (a, b))
        dtype, weak = expected_x64(TABLE_X32[a32, b32])
        got = dtypes.result_type(as_value(a), as_value(b), return_weak_type_flag=True)
        assert got == (dtypes.canonicalize_dtype(dtype), weak)
        assert dtypes.result_type(as_aval(a), as_aval(b), return_weak_type_flag=True) == got


def test_promotion_x32_never_widens_to_64_bits():
    # The point of the x64-off lattice: joining strong types of at most 32 bits stays there.
    wide = {_STRONG[x] for x in _CANONICAL_LABEL}
    narrow = [d for x, d in _STRONG.items() if x not in _CANONICAL_LABEL]
    with enable_x64(False):
        for a in narrow:
            for b in narrow:
                assert dtypes.promote_types(a, b) not in wide, (a, b)


_label_strategy = st.sampled_from(_LABELS)


@given(_label_strategy, _label_strategy, _label_strategy, st.booleans())
def test_promotion_is_associative_and_commutative(a, b, c, x64):
    with enable_x64(x64):

        def join(*labels_or_avals):
            return FakeAval(
                *dtypes.result_type(
                    *[as_aval(x) if isinstance(x, str) else x for x in labels_or_avals],
                    return_weak_type_flag=True,
                )
            )

        left = join(join(a, b), c)
        right = join(a, join(b, c))
        flat = join(a, b, c)
        assert left == right == flat
        assert join(a, b) == join(b, a)
        assert join(c, b, a) == flat


@given(st.lists(_label_strategy, min_size=1, max_size=5))
def test_result_type_is_an_upper_bound(labels):
    # Joining the result with any input gives the result back: it lies above them all.
    with enable_x64(True):
        result = FakeAval(*dtypes.result_type(*map(as_aval, labels), return_weak_type_flag=True))
        for label in labels:
            assert dtypes.result_type(result, as_aval(label), return_weak_type_flag=True) == (
                result.dtype,
                result.weak_type,
            )


# ---------------------------------------------------------------------------------------
# Narrow (ml_dtypes) types, strict mode, result_type details
# ---------------------------------------------------------------------------------------

_NARROW_FLOATS = [
    dtypes.float8_e4m3fn,
    dtypes.float8_e5m2,
    dtypes.float8_e4m3b11fnuz,
    dtypes.float8_e4m3fnuz,
    dtypes.float8_e5m2fnuz,
    dtypes.float8_e3m4,
    dtypes.float8_e4m3,
    dtypes.float8_e8m0fnu,
    dtypes.float4_e2m1fn,
]
_NARROW_INTS = [dtypes.int4, dtypes.uint4, dtypes.int2, dtypes.uint2]


# The narrow types that JAX's table leaves out are leaves of the lattice just above the
# weak node of their kind: they absorb everything below that node, and nothing else.


@pytest.mark.parametrize("narrow", _NARROW_FLOATS)
def test_narrow_floats_are_lattice_leaves(narrow):
    for below in (1.0, 1, True, np.int8, np.uint64, narrow):
        assert dtypes.result_type(narrow, below) == np.dtype(narrow)
    for other in (np.float32, np.float16, dtypes.bfloat16, complex, np.complex64):
        with pytest.raises(dtypes.TypePromotionError, match="8 bits or fewer"):
            dtypes.promote_types(narrow, other)


@pytest.mark.parametrize("narrow", _NARROW_INTS)
def test_narrow_ints_are_lattice_leaves(narrow):
    assert dtypes.result_type(narrow, 1) == np.dtype(narrow)
    assert dtypes.result_type(True, narrow) == np.dtype(narrow)
    for other in (
        np.int32,
        np.uint8,
        np.int8,
        float,
        np.float32,
        dtypes.int4 if narrow is not dtypes.int4 else dtypes.uint4,
    ):
        with pytest.raises(dtypes.TypePromotionError, match="sub-byte"):
            dtypes.promote_types(narrow, other)


def test_type_promotion_error_is_a_value_error():
    assert issubclass(dtypes.TypePromotionError, ValueError)


@pytest.mark.parametrize(
    "args, expected",
    [
        ((np.int32, 1), np.int32),
        ((np.int8, 1), np.int8),
        ((np.float32, 1), np.float32),
        ((np.float16, 1.0), np.float16),
        ((dtypes.bfloat16, 2.0), dtypes.bfloat16),
        ((np.complex64, 1), np.complex64),
        ((np.complex64, 1.0), np.complex64),
        ((np.float32, np.float32), np.float32),
    ],
)
def test_strict_mode_allows_weak_promotion(args, expected):
    with numpy_dtype_promotion("strict"):
        assert dtypes.result_type(*args) == np.dtype(expected)


@pytest.mark.parametrize(
    "a, b",
    [
        (np.int32, np.float32),
        (np.int8, np.int16),
        (np.uint8, np.int8),
        (np.float16, np.float32),
        (np.float32, np.complex64),
        (np.bool_, np.int32),
        (np.int32, 1j),
        (np.float32, 1j),
    ],
)
def test_strict_mode_rejects_strong_mixing(a, b):
    with numpy_dtype_promotion("strict"):
        with pytest.raises(dtypes.TypePromotionError, match="jax_numpy_dtype_promotion=strict"):
            dtypes.result_type(a, b)
    dtypes.result_type(a, b)  # fine in standard mode


def test_result_type_weak_results_take_default_width():
    with enable_x64(False):
        assert dtypes.result_type(1, return_weak_type_flag=True) == (np.dtype(np.int32), True)
        assert dtypes.result_type(1.0) == np.dtype(np.float32)
        assert dtypes.result_type(1, 1.0, 1j) == np.dtype(np.complex64)
        assert dtypes.result_type(True, return_weak_type_flag=True) == (np.dtype(bool), False)
        # A weak aval has no width of its own.
        assert dtypes.result_type(FakeAval(np.dtype(np.float16), True)) == np.float32
    with enable_x64(True):
        assert dtypes.result_type(1) == np.dtype(np.int64)
        assert dtypes.result_type(2.0) == np.dtype(np.float64)


def test_result_type_misc_inputs():
    with enable_x64(False):
        assert dtypes.result_type(np.zeros(3, np.int16), np.int8(1)) == np.dtype(np.int16)
        assert dtypes.result_type("float64", "int8") == np.dtype(np.float32)
        assert dtypes.result_type(None) == np.dtype(np.float32)
        assert dtypes.result_type(int, np.uint8) == np.dtype(np.uint8)
        assert dtypes.result_type(FakeAval(np.dtype(np.int8), True), np.int16) == np.int16
        assert dtypes.result_type(ml_dtypes.bfloat16(1), 2.0) == np.dtype(dtypes.bfloat16)


def test_result_type_requires_arguments():
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()


def test_promote_types_examples():
    assert dtypes.promote_types("int32", "float32") == np.dtype(np.float32)
    assert dtypes.promote_types(np.uint8, int) == np.dtype(np.uint8)
    assert dtypes.promote_types("float16", float) == np.dtype(np.float16)
    assert dtypes.promote_types(bool, bool) == np.dtype(bool)
    assert dtypes.promote_types(int, float) == np.dtype(np.float64)


# ---------------------------------------------------------------------------------------
# Canonicalization and dtype()
# ---------------------------------------------------------------------------------------

_CANONICAL_X32 = [
    (np.int64, np.int32),
    (np.uint64, np.uint32),
    (np.float64, np.float32),
    (np.complex128, np.complex64),
    (int, np.int32),
    (float, np.float32),
    ("float64", np.float32),
    (np.int32, np.int32),
    (np.int8, np.int8),
    (np.float16, np.float16),
    (bool, bool),
    (dtypes.bfloat16, dtypes.bfloat16),
    (dtypes.int4, dtypes.int4),
    (dtypes.float0, dtypes.float0),
]


@pytest.mark.parametrize("given_dtype, expected", _CANONICAL_X32)
def test_canonicalize_dtype(given_dtype, expected):
    with enable_x64(False):
        assert dtypes.canonicalize_dtype(given_dtype) == np.dtype(expected)
        assert isinstance(dtypes.canonicalize_dtype(given_dtype), np.dtype)
    with enable_x64(True):
        assert dtypes.canonicalize_dtype(given_dtype) == np.dtype(given_dtype)


def test_canonicalize_follows_flag_changes():
    # The cache is keyed on the flag, so flipping it must change the answer.
    for _ in range(2):
        with enable_x64(True):
            assert dtypes.canonicalize_dtype(np.float64) == np.float64
        with enable_x64(False):
            assert dtypes.canonicalize_dtype(np.float64) == np.float32


def test_canonicalize_rejects_non_dtypes():
    with pytest.raises(TypeError, match="not understood"):
        dtypes.canonicalize_dtype("not_a_dtype")


@pytest.mark.parametrize(
    "value, x64_dtype, x32_dtype",
    [
        (1, np.int64, np.int32),
        (1.5, np.float64, np.float32),
        (1j, np.complex128, np.complex64),
        (True, bool, bool),
        (np.float16(1), np.float16, np.float16),
        (np.zeros(2, np.int64), np.int64, np.int32),
        (np.zeros(2, dtypes.bfloat16), dtypes.bfloat16, dtypes.bfloat16),
        (np.float64, np.float64, np.float32),
        ("int4", dtypes.int4, dtypes.int4),
        (int, np.int64, np.int32),
        (FakeAval(np.dtype(np.uint64)), np.uint64, np.uint32),
    ],
)
def test_dtype_of_values(value, x64_dtype, x32_dtype):
    with enable_x64(False):
        assert dtypes.dtype(value) == np.dtype(x64_dtype)
        assert dtypes.dtype(value, canonicalize=True) == np.dtype(x32_dtype)
    with enable_x64(True):
        assert dtypes.dtype(value, canonicalize=True) == np.dtype(x64_dtype)


@pytest.mark.parametrize("bad", [np.array(["a"]), np.dtype(object), "S3", object()])
def test_dtype_rejects_unsupported(bad):
    with pytest.raises(TypeError):
        dtypes.dtype(bad)


def test_dtype_of_none_is_an_error():
    with pytest.raises(ValueError, match="None"):
        dtypes.dtype(None)


def test_defaults_follow_x64():
    with enable_x64(False):
        assert dtypes.default_int_dtype() == np.int32
        assert dtypes.default_uint_dtype() == np.uint32
        assert dtypes.default_float_dtype() == np.float32
        assert dtypes.default_complex_dtype() == np.complex64
        assert dtypes.canonicalize_dtype(dtypes.float_) == np.float32
        assert dtypes.canonicalize_dtype(dtypes.int_) == np.int32
    with enable_x64(True):
        assert dtypes.default_int_dtype() == np.int64
        assert dtypes.default_float_dtype() == np.float64
        assert dtypes.default_complex_dtype() == np.complex128
        assert dtypes.canonicalize_dtype(dtypes.complex_) == np.complex128
    assert dtypes.bool_ is np.bool_


# ---------------------------------------------------------------------------------------
# Weak types and Python scalars
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, weak, py_scalar",
    [
        (1, True, True),
        (1.0, True, True),
        (1j, True, True),
        (True, False, True),
        (np.int32(1), False, False),
        (np.zeros(()), False, False),
        (FakeAval(np.dtype(np.float32), True), True, True),
        (FakeAval(np.dtype(np.float32), True, (3,)), True, False),
        (FakeAval(np.dtype(np.float32), False), False, False),
    ],
)
def test_weak_types_and_python_scalars(value, weak, py_scalar):
    assert dtypes.is_weakly_typed(value) is weak
    assert dtypes.is_python_scalar(value) is py_scalar


def test_is_weakly_typed_reads_aval():
    class Tracerish:
        aval = FakeAval(np.dtype(np.int32), True)

    assert dtypes.is_weakly_typed(Tracerish())


def test_python_scalar_dtypes():
    assert dtypes.python_scalar_dtypes == {
        bool: np.dtype(bool),
        int: np.dtype(np.int64),
        float: np.dtype(np.float64),
        complex: np.dtype(np.complex128),
    }


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.int8(1), int),
        (np.uint32(1), int),
        (np.zeros(2, dtypes.int4), int),
        (np.bool_(True), bool),
        (np.float16(1), float),
        (np.zeros(2, dtypes.float8_e5m2), float),
        (np.complex64(1), complex),
        (3, int),
    ],
)
def test_scalar_type_of(value, expected):
    assert dtypes.scalar_type_of(value) is expected


def test_scalar_type_of_rejects_float0():
    with pytest.raises(TypeError, match="Invalid scalar"):
        dtypes.scalar_type_of(np.zeros(2, dtypes.float0))


# ---------------------------------------------------------------------------------------
# issubdtype, finfo, iinfo, kind conversions
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (dtypes.bfloat16, np.floating, True),
        (dtypes.bfloat16, np.inexact, True),
        (dtypes.bfloat16, np.number, True),
        (dtypes.bfloat16, np.generic, True),
        (dtypes.bfloat16, np.integer, False),
        (dtypes.bfloat16, np.float16, False),
        (dtypes.bfloat16, dtypes.bfloat16, True),
        (dtypes.float8_e4m3fn, np.floating, True),
        (dtypes.float4_e2m1fn, np.floating, True),
        (dtypes.int4, np.signedinteger, True),
        (dtypes.int4, np.integer, True),
        (dtypes.int4, np.unsignedinteger, False),
        (dtypes.uint4, np.unsignedinteger, True),
        (dtypes.uint2, np.signedinteger, False),
        (np.float32, np.floating, True),
        (np.int32, np.floating, False),
        (np.complex64, np.inexact, True),
        ("int8", np.integer, True),
        (np.dtype(np.float64), float, True),
        (np.float32, dtypes.extended, False),
        (bool, np.bool_, True),
    ],
)
def test_issubdtype(a, b, expected):
    assert dtypes.issubdtype(a, b) is expected


@pytest.mark.parametrize(
    "t", [np.float16, np.float32, np.float64, dtypes.bfloat16, *_NARROW_FLOATS]
)
def test_finfo_matches_ml_dtypes_and_numpy(t):
    info = dtypes.finfo(t)
    reference = np.finfo(t) if t in (np.float16, np.float32, np.float64) else ml_dtypes.finfo(t)
    assert info.bits == reference.bits
    assert info.eps == reference.eps
    assert info.max == reference.max
    assert info.dtype == np.dtype(t)


@pytest.mark.parametrize(
    "t, lo, hi",
    [(dtypes.int4, -8, 7), (dtypes.uint4, 0, 15), (dtypes.int2, -2, 1), (dtypes.uint2, 0, 3)]
    + [(np.int8, -128, 127), (np.uint16, 0, 65535), (np.int64, -(2**63), 2**63 - 1)],
)
def test_iinfo(t, lo, hi):
    info = dtypes.iinfo(t)
    assert (info.min, info.max) == (lo, hi)
    if t in (np.int8, np.uint16, np.int64):
        assert (info.min, info.max) == (np.iinfo(t).min, np.iinfo(t).max)


@pytest.mark.parametrize(
    "t, bits",
    [(bool, 8), (dtypes.int4, 4), (dtypes.uint2, 2), (np.float16, 16), (np.complex64, 64)],
)
def test_itemsize_bits(t, bits):
    assert dtypes.itemsize_bits(t) == bits


@pytest.mark.parametrize(
    "t, inexact, complex_, numeric",
    [
        (bool, np.float32, np.complex64, np.int32),
        (np.int8, np.float32, np.complex64, np.int8),
        (np.uint32, np.float32, np.complex64, np.uint32),
        (np.int64, np.float64, np.complex128, np.int64),
        (dtypes.int4, np.float32, np.complex64, dtypes.int4),
        (np.float16, np.float16, np.complex64, np.float16),
        (dtypes.bfloat16, dtypes.bfloat16, np.complex64, dtypes.bfloat16),
        (np.float64, np.float64, np.complex128, np.float64),
        (np.complex128, np.complex128, np.complex128, np.complex128),
    ],
)
def test_kind_conversions(t, inexact, complex_, numeric):
    assert dtypes.to_inexact_dtype(t) == np.dtype(inexact)
    assert dtypes.to_complex_dtype(t) == np.dtype(complex_)
    assert dtypes.to_numeric_dtype(t) == np.dtype(numeric)


def test_float0():
    assert dtypes.float0 == np.dtype([("float0", "V")])
    assert dtypes.float0.itemsize == 0
    assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0
    with pytest.raises(dtypes.TypePromotionError, match="float0"):
        dtypes.result_type(dtypes.float0, np.float32)


def test_ml_dtypes_reexports():
    for name in (
        "bfloat16 float8_e4m3fn float8_e5m2 float8_e4m3b11fnuz float8_e4m3fnuz "
        "float8_e5m2fnuz float8_e3m4 float8_e4m3 float8_e8m0fnu float4_e2m1fn "
        "int4 uint4 int2 uint2"
    ).split():
        assert getattr(dtypes, name) is getattr(ml_dtypes, name)


# ---------------------------------------------------------------------------------------
# check_user_dtype_supported
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("ok", [None, int, float, bool, complex, np.int8, "bfloat16", "int4"])
def test_check_user_dtype_supported_accepts(ok):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dtypes.check_user_dtype_supported(ok, "zeros")


@pytest.mark.parametrize("bad", [object, np.dtype(object), "U4", np.str_, "not_a_dtype"])
def test_check_user_dtype_supported_rejects(bad):
    with pytest.raises(TypeError, match="in zeros"):
        dtypes.check_user_dtype_supported(bad, "zeros")


def test_check_user_dtype_supported_warns_on_truncation():
    with enable_x64(False):
        with pytest.warns(UserWarning, match="float64 in ones is not available"):
            dtypes.check_user_dtype_supported(np.float64, "ones")
    with enable_x64(True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            dtypes.check_user_dtype_supported(np.float64, "ones")


# ---------------------------------------------------------------------------------------
# Extended dtypes
# ---------------------------------------------------------------------------------------


class fake_key(dtypes.prng_key):
    """The scalar type of a test PRNG key dtype."""


@dataclasses.dataclass(frozen=True)
class FakeKeyDType(dtypes.ExtendedDType):
    impl: str
    type = fake_key

    @property
    def name(self) -> str:
        return f"key<{self.impl}>"


KEY = FakeKeyDType("fry")
OTHER_KEY = FakeKeyDType("rbg")


def test_extended_dtype_is_abstract():
    with pytest.raises(TypeError):
        dtypes.ExtendedDType()
    assert KEY._rules is None
    assert str(KEY) == "key<fry>"


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (KEY, dtypes.extended, True),
        (KEY, dtypes.prng_key, True),
        (KEY, np.generic, True),
        (KEY, KEY, True),
        (KEY, FakeKeyDType("fry"), True),
        (KEY, OTHER_KEY, False),
        (KEY, np.floating, False),
        (np.float32, KEY, False),
        (dtypes.prng_key, dtypes.extended, True),
        (dtypes.extended, dtypes.prng_key, False),
    ],
)
def test_issubdtype_extended(a, b, expected):
    assert dtypes.issubdtype(a, b) is expected


def test_extended_dtypes_pass_through():
    for x64 in (False, True):
        with enable_x64(x64):
            assert dtypes.canonicalize_dtype(KEY, allow_extended_dtype=True) is KEY
            assert dtypes.dtype(FakeAval(KEY), canonicalize=True) is KEY
    with pytest.raises(ValueError, match="key<fry>"):
        dtypes.canonicalize_dtype(KEY)
    dtypes.check_user_dtype_supported(KEY, "zeros")


def test_extended_dtypes_promote_only_with_themselves():
    assert dtypes.result_type(FakeAval(KEY), FakeAval(KEY)) is KEY
    assert dtypes.result_type(KEY, FakeKeyDType("fry")) == KEY
    assert dtypes.promote_types(KEY, KEY) is KEY
    assert dtypes.result_type(FakeAval(KEY), return_weak_type_flag=True) == (KEY, False)
    for other in (np.float32, OTHER_KEY, 1):
        with pytest.raises(TypeError, match="key<fry>") as info:
            dtypes.result_type(KEY, other)
        assert str(dtypes.dtype(other)) in str(info.value)
    with pytest.raises(TypeError, match=r"key<fry>.*int32"):
        dtypes.promote_types(KEY, np.int32)
