"""Abstract values: ShapedArray, ShapeDtypeStruct and get_aval."""

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import config
from polyjax_core.abstract_values import (
    ShapedArray,
    ShapeDtypeStruct,
    get_aval,
    register_aval_handler,
    shaped_abstractify,
    short_dtype_name,
)
from polyjax_core.symbolic_dims import symbolic_dim


@pytest.mark.parametrize(
    "dtype, short",
    [
        (np.float32, "f32"),
        (np.float16, "f16"),
        (ml_dtypes.bfloat16, "bf16"),
        (np.int8, "i8"),
        (np.uint32, "u32"),
        (np.complex64, "c64"),
        (np.bool_, "bool"),
        (ml_dtypes.float8_e4m3fn, "f8_e4m3fn"),
        (ml_dtypes.int4, "i4"),
    ],
)
def test_str_short(dtype, short):
    assert ShapedArray((3, 4), dtype).str_short() == f"{short}[3,4]"
    assert ShapedArray((), dtype).str_short() == f"{short}[]"
    assert short_dtype_name(np.dtype(dtype)) == short


def test_repr_equality_and_hash():
    a = ShapedArray((2, 3), np.float32)
    assert repr(a) == "ShapedArray(float32[2,3])"
    assert repr(a.update(weak_type=True)) == "ShapedArray(float32[2,3], weak_type=True)"
    assert a == ShapedArray([2, 3], "float32") and hash(a) == hash(ShapedArray((2, 3), np.float32))
    assert a != a.update(weak_type=True)
    assert a != a.update(dtype=np.int32)
    assert a != a.update(shape=(3, 2))
    assert a.update(shape=(5,)) == ShapedArray((5,), np.float32)
    assert a.ndim == 2 and a.size == 6
    assert a.update(weak_type=True).strip_weak_type() == a
    assert len({a, ShapedArray((2, 3), np.float32)}) == 1


def test_numpy_integer_dims_become_ints():
    a = ShapedArray((np.int64(2), np.int32(3)), np.float32)
    assert a.shape == (2, 3) and all(type(d) is int for d in a.shape)


@pytest.mark.parametrize("bad", [(2.0,), (-1,), (None,), "ab"])
def test_bad_shapes_are_rejected(bad):
    with pytest.raises(TypeError, match="ShapedArray"):
        ShapedArray(bad, np.float32)


def test_symbolic_shapes():
    b = symbolic_dim("b")
    a = ShapedArray((b, 2 * b), np.float32)
    assert a.str_short() == "f32[b,2*b]"
    assert a.size == 2 * b * b
    assert a == ShapedArray((b, b + b), np.float32)


@pytest.mark.parametrize(
    "value, expected",
    [
        (True, ShapedArray((), np.bool_)),  # bool has one width: never weak, as in JAX
        (3, ShapedArray((), np.int32, weak_type=True)),
        (3.0, ShapedArray((), np.float32, weak_type=True)),
        (3j, ShapedArray((), np.complex64, weak_type=True)),
        (np.float16(1), ShapedArray((), np.float16)),
        (np.ones((2, 3)), ShapedArray((2, 3), np.float32)),
        (np.arange(4), ShapedArray((4,), np.int32)),
        (np.ones(2, ml_dtypes.bfloat16), ShapedArray((2,), ml_dtypes.bfloat16)),
    ],
)
def test_get_aval(value, expected):
    assert get_aval(value) == expected


def test_get_aval_with_x64():
    with config.enable_x64(True):
        assert get_aval(3.0) == ShapedArray((), np.float64, weak_type=True)
        assert get_aval(np.arange(4)).dtype == np.int64
        assert get_aval(2**40).dtype == np.int64


def test_get_aval_errors():
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        get_aval(2**40)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        get_aval("text")
    with pytest.raises(TypeError, match="not a valid polyjax array type"):
        get_aval(np.array(["a"]))


def test_jax_array_protocol_and_registered_types():
    class Wrapper:
        def __jax_array__(self):
            return np.zeros((2,), np.int8)

    # As in JAX 0.10: abstractification no longer converts such objects.
    with pytest.raises(ValueError, match="Triggering __jax_array__\\(\\) during abstractification"):
        get_aval(Wrapper())

    class Box:
        pass

    class SubBox(Box):
        pass

    register_aval_handler(Box, lambda b: ShapedArray((7,), np.uint8))
    assert get_aval(SubBox()) == ShapedArray((7,), np.uint8)  # found through the MRO


def test_shape_dtype_struct():
    s = ShapeDtypeStruct((2, 3), np.float32)
    assert (s.shape, s.dtype, s.ndim, s.size, len(s)) == ((2, 3), np.float32, 2, 6, 2)
    assert s == ShapeDtypeStruct([2, 3], "float32") and hash(s) == hash(
        ShapeDtypeStruct((2, 3), "f4")
    )
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert shaped_abstractify(s) == ShapedArray((2, 3), np.float32)
    assert shaped_abstractify(ShapeDtypeStruct((), np.float64)).dtype == np.float32
    with pytest.raises(ValueError, match="dtype"):
        ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError, match="not a valid JAX type"):
        get_aval(s)  # a stand-in has no data: only shaped_abstractify accepts it
