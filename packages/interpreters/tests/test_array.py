"""Array: metadata, host values, printing, conversions, pickling, DLPack, transfers."""

from __future__ import annotations

import copy
import gc
import operator
import pickle
import subprocess
import sys
import textwrap
import time
import weakref

import ml_dtypes
import numpy as np
import pytest
from jaxlib import _jax, xla_client

from polyjax_core import config, dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.tracing import BINARY_OPERATORS, OTHER_OPERATORS, Tracer
from polyjax_interpreters import array as array_mod
from polyjax_interpreters import backends
from polyjax_interpreters.array import (
    Array,
    block_until_ready,
    device_get,
    device_put,
    from_dlpack,
    put_value,
    register_array_attribute,
    register_array_method,
)
from polyjax_interpreters.sharding import SingleDeviceSharding

DTYPES = [
    np.float32,
    np.int32,
    np.bool_,
    np.uint8,
    np.int8,
    np.int16,
    np.float16,
    np.complex64,
    ml_dtypes.bfloat16,
    ml_dtypes.float8_e4m3fn,
    ml_dtypes.float8_e5m2,
    ml_dtypes.int4,
]


@pytest.fixture(scope="module")
def devs():
    """Two devices of a client of our own (the process's backends keep their devices)."""
    return xla_client.make_cpu_client(num_devices=2).devices()


@pytest.fixture
def no_operators(monkeypatch):
    """Array with no operators or attributes registered, whatever was imported before."""
    monkeypatch.setattr(array_mod, "_array_methods", {})
    monkeypatch.setattr(array_mod, "_array_attributes", {})
    for name, placeholder in array_mod._PLACEHOLDERS.items():
        monkeypatch.setattr(Array, name, placeholder)


def f32(*values):
    return device_put(np.array(values, np.float32))


# ---------------------------------------------------------------------------
# Construction and metadata


def test_not_constructible_directly():
    with pytest.raises(TypeError, match="device_put"):
        Array(np.zeros(3))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_round_trip(dtype, shape):
    x = np.arange(int(np.prod(shape)) or 1)[: int(np.prod(shape))].reshape(shape) % 4
    x = x.astype(dtype)
    a = device_put(x)
    assert type(a) is Array
    assert a.shape == shape and a.ndim == len(shape) and a.size == x.size
    assert a.dtype == np.dtype(dtype)
    assert a.itemsize == x.itemsize and a.nbytes == x.nbytes
    assert not a.weak_type
    out = np.asarray(a)
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    assert out.tolist() == x.tolist()


def test_metadata():
    a = device_put(np.zeros((2, 3), np.float32))
    dev = backends.default_device()
    assert a.sharding == SingleDeviceSharding(dev)
    assert a.devices() == {dev}
    assert a.device == dev
    assert a.committed is False and a._committed is False
    assert a.is_fully_addressable and a.is_fully_replicated
    assert get_aval(a) is a.aval == ShapedArray((2, 3), np.float32)
    assert a.on_device_size_in_bytes() >= 24
    assert isinstance(a.unsafe_buffer_pointer(), int)


def test_make_wraps_without_copying():
    a = f32(1, 2)
    same = Array._make(a._impl, a.aval, a._committed)
    assert same._impl is a._impl and same.aval is a.aval
    assert weakref.ref(same)() is same


def test_make_keeps_commitment_on_the_buffer():
    # jit's C++ fast path sees only buffers: an Array is committed exactly when its
    # buffer is, re-wrapping (not copying) when they differ.
    a = f32(1, 2)
    b = Array._make(a._impl, a.aval, True)
    assert b.committed and b._impl._committed and not a._impl._committed
    assert b.unsafe_buffer_pointer() == a.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(b), [1, 2])


def test_make_is_cheap():
    a = f32(1)
    make, impl, aval = Array._make, a._impl, a.aval
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10_000):
            make(impl, aval, False)
        best = min(best, (time.perf_counter() - t0) / 10_000)
    assert best < 3e-6  # about 0.3 us here; the bound only catches gross regressions


@pytest.mark.parametrize(
    "value, dtype, weak",
    [(1.0, np.float32, True), (3, np.int32, True), (1 + 2j, np.complex64, True)],
)
def test_python_scalars_are_weak(value, dtype, weak):
    a = device_put(value)
    assert a.dtype == dtype and a.weak_type is weak and a.shape == ()
    assert a.item() == value


def test_x64():
    with config.enable_x64(True):
        a = device_put(np.arange(3.0))
        assert a.dtype == np.float64
        assert repr(a) == "Array([0., 1., 2.], dtype=float64)"
        assert device_put(2**40).item() == 2**40
    assert device_put(np.arange(3.0)).dtype == np.float32


# ---------------------------------------------------------------------------
# Printing


@pytest.mark.parametrize(
    "value, expected",
    [
        (np.array([1.0, 2.0], np.float32), "Array([1., 2.], dtype=float32)"),
        (np.float32(1.0), "Array(1., dtype=float32)"),
        (1.0, "Array(1., dtype=float32, weak_type=True)"),
        (7, "Array(7, dtype=int32, weak_type=True)"),
        (np.array([True, False]), "Array([ True, False], dtype=bool)"),
        (np.zeros((0,), np.float32), "Array([], shape=(0,), dtype=float32)"),
        (np.zeros((2, 0), np.int32), "Array([], shape=(2, 0), dtype=int32)"),
        (
            np.arange(4, dtype=np.int32).reshape(2, 2),
            "Array([[0, 1],\n       [2, 3]], dtype=int32)",
        ),
        (np.array([1.5, 2], ml_dtypes.bfloat16), "Array([1.5, 2], dtype=bfloat16)"),
    ],
)
def test_repr(value, expected):
    assert repr(device_put(value)) == expected


def test_repr_pushes_a_long_dtype_right_instead_of_wrapping():
    # JAX's printed form: when `dtype=...` does not fit on the last line, it is set
    # off by the width of "Array(" on that same line.
    a = device_put(np.linspace(0, 1, 10, dtype=np.float32))
    text = repr(a)
    lines = text.split("\n")
    assert len(lines) == 2
    assert lines[0].startswith("Array([0.        , 0.11111111,")
    assert lines[1].endswith("1.        ],      dtype=float32)")


def test_repr_follows_numpy_print_options():
    with np.printoptions(precision=2):
        assert repr(f32(1 / 3)) == "Array([0.33], dtype=float32)"


@pytest.mark.parametrize(
    "value", [np.arange(6.0, dtype=np.float32).reshape(2, 3), np.int32(4), np.array([True])]
)
def test_str_is_numpys(value):
    assert str(device_put(value)) == str(np.asarray(value))


def test_format():
    assert f"{device_put(2.5):.3f}" == "2.500"
    assert f"{device_put(np.int32(7)):>3}" == "  7"
    assert f"{f32(1, 2)}" == str(np.array([1, 2], np.float32))


# ---------------------------------------------------------------------------
# Host values


def test_array_protocol():
    a = f32(1, 2, 3)
    v = np.asarray(a)
    assert not v.flags.writeable  # arrays are immutable; so is their host view
    w = np.array(a)
    assert w.flags.writeable and w is not v
    w[0] = 10  # a copy: the array is unchanged
    np.testing.assert_array_equal(np.asarray(a), [1, 2, 3])
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    assert a.__array__(copy=True).flags.writeable
    with pytest.raises(ValueError):
        a.__array__(np.int32, copy=False)


def test_host_copy_is_cached_when_the_transfer_copies():
    # int4 values are unpacked on the way to the host: a real copy, kept.
    a = device_put(np.arange(4).astype(ml_dtypes.int4))
    assert a._impl._npy_value is None
    first = np.asarray(a)
    assert a._impl._npy_value is first and np.asarray(a) is first
    assert not first.flags.writeable


def test_tolist_and_item():
    a = device_put(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert a.item(4) == 4 and type(a.item(4)) is int
    assert device_put(2.5).item() == 2.5


def test_copy_to_host_async_then_read():
    a = f32(4, 5)
    assert a.copy_to_host_async() is None
    np.testing.assert_array_equal(np.asarray(a), [4, 5])
    a.copy_to_host_async()  # again, after the value is known


def test_block_until_ready():
    a = f32(1)
    assert a.block_until_ready() is a
    assert a.is_ready()
    tree = {"a": a, "b": [f32(2), 3.0], "c": None}
    assert block_until_ready(tree) is tree


def test_device_get():
    a, b = f32(1, 2), device_put(np.int32(3))
    out = device_get({"a": a, "b": [b, 4.0], "c": "text"})
    assert out["b"][1] == 4.0 and out["c"] == "text"
    assert type(out["a"]) is np.ndarray and out["a"].dtype == np.float32
    np.testing.assert_array_equal(out["a"], [1, 2])
    assert out["b"][0] == 3
    assert device_get(np.float32(1)) == 1


# ---------------------------------------------------------------------------
# Python protocols


def test_scalar_conversions():
    assert float(device_put(2.5)) == 2.5
    assert int(device_put(np.float32(2.7))) == 2
    assert complex(device_put(1 + 2j)) == 1 + 2j
    assert operator.index(device_put(np.int32(3))) == 3
    assert [10, 11, 12][device_put(np.int32(1))] == 11
    assert bool(device_put(True)) is True and bool(device_put(0.0)) is False
    assert bool(f32(3)) is True  # one element is fine, as in NumPy


@pytest.mark.parametrize("convert", [int, float, complex])
def test_scalar_conversions_need_scalars(convert):
    with pytest.raises(TypeError, match="Only scalar arrays"):
        convert(f32(1, 2))
    with pytest.raises(TypeError, match="Only scalar arrays"):
        convert(f32(1))


@pytest.mark.parametrize("value", [np.float32(1), np.array([1], np.int32), np.bool_(True)])
def test_index_needs_an_integer_scalar(value):
    with pytest.raises(TypeError, match="integer scalar"):
        operator.index(device_put(value))


@pytest.mark.parametrize("n", [0, 2])
def test_truth_value_of_non_single_arrays(n):
    with pytest.raises(ValueError, match="ambiguous"):
        bool(device_put(np.zeros(n)))


def test_len_and_iter(no_operators):
    a = device_put(np.arange(6, dtype=np.int32).reshape(3, 2))
    assert len(a) == 3
    rows = list(a)
    assert all(type(r) is Array and r.shape == (2,) for r in rows)
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), np.asarray(a))
    assert rows[0].sharding == a.sharding and rows[0].committed == a.committed
    with pytest.raises(TypeError, match="len"):
        len(device_put(1.0))
    with pytest.raises(TypeError, match="0-d"):
        iter(device_put(1.0))


def test_iter_keeps_weak_type(no_operators):
    a = device_put(np.zeros(2, np.float32))
    weak = Array._make(a._impl, a.aval.update(weak_type=True), False)
    assert all(r.weak_type for r in weak)


def test_iter_uses_registered_indexing(no_operators):
    register_array_method("__getitem__", lambda self, i: ("row", i))
    assert list(f32(1, 2, 3)) == [("row", 0), ("row", 1), ("row", 2)]


def test_unhashable():
    with pytest.raises(TypeError, match="unhashable type: 'Array'"):
        hash(f32(1))
    with pytest.raises(TypeError, match="unhashable"):
        {f32(1): 1}


def test_unhashable_after_registering_eq(no_operators):
    register_array_method("__eq__", lambda self, other: "eq")
    assert (f32(1) == 2) == "eq"
    with pytest.raises(TypeError, match="unhashable"):
        hash(f32(1))


def test_immutable():
    with pytest.raises(TypeError, match="immutable"):
        f32(1, 2)[0] = 3


# ---------------------------------------------------------------------------
# Operators and attributes


def test_unregistered_binary_operators_defer(no_operators):
    a = f32(1)
    with pytest.raises(TypeError, match="unsupported operand"):
        a + 1
    with pytest.raises(TypeError, match="unsupported operand"):
        1 @ a
    assert (a == a) is True and (a == f32(1)) is False  # identity, like object
    assert a != 1


@pytest.mark.parametrize("op", [operator.neg, operator.pos, abs, operator.invert, round])
def test_unregistered_other_operators_raise(no_operators, op):
    with pytest.raises(TypeError, match="no array library registered it"):
        op(f32(1))
    with pytest.raises(TypeError, match="__getitem__"):
        f32(1, 2)[0]


@pytest.mark.parametrize("name", BINARY_OPERATORS + OTHER_OPERATORS)
def test_every_forwarded_operator_can_be_registered(no_operators, name):
    calls = []
    register_array_method(name, lambda *args: calls.append(args) or "result")
    a = f32(1)
    assert getattr(a, name)(*([2] if name in BINARY_OPERATORS else [])) == "result"
    assert calls[0][0] is a


def test_registered_operators(no_operators):
    register_array_method("__add__", lambda x, y: ("add", x, y))
    register_array_method("__radd__", lambda x, y: ("radd", x, y))
    register_array_method("__neg__", lambda x: ("neg", x))
    a = f32(1)
    assert a + 2 == ("add", a, 2)
    assert 2 + a == ("radd", a, 2)
    assert -a == ("neg", a)
    out = np.float32(1) + a  # NumPy scalars defer to Array's reflected operator
    assert out == ("radd", a, np.float32(1))
    out = np.ones(1, np.float32) + a
    assert out[0] == "radd"


def test_register_checks_names(no_operators):
    with pytest.raises(ValueError, match="register_array_attribute"):
        register_array_method("sum", lambda x: x)
    with pytest.raises(ValueError, match="already defines 'shape'"):
        register_array_attribute("shape", lambda x: x)


def test_registered_attributes(no_operators):
    register_array_attribute("twice", lambda x: 2 * np.asarray(x))
    register_array_attribute("total", lambda x: lambda: float(np.asarray(x).sum()))
    a = f32(1, 2)
    np.testing.assert_array_equal(a.twice, [2, 4])
    assert a.total() == 3.0
    with pytest.raises(AttributeError, match="'Array' object has no attribute 'nope'"):
        a.nope


# ---------------------------------------------------------------------------
# Deleted arrays


def _uses():
    return {
        "repr": repr,
        "str": str,
        "format": lambda x: f"{x}",
        "asarray": np.asarray,
        "tolist": lambda x: x.tolist(),
        "item": lambda x: x.item(0),
        "block_until_ready": lambda x: x.block_until_ready(),
        "block_until_ready(tree)": lambda x: block_until_ready([x]),
        "copy_to_host_async": lambda x: x.copy_to_host_async(),
        "is_ready": lambda x: x.is_ready(),
        "device_get": device_get,
        "device_put": lambda x: device_put(x, backends.default_device()),
        "device_put(no device)": device_put,
        "copy": copy.copy,
        "pickle": pickle.dumps,
        "dlpack": lambda x: x.__dlpack__(),
        "np.from_dlpack": np.from_dlpack,
        "iter": lambda x: list(x),
        "size in bytes": lambda x: x.on_device_size_in_bytes(),
    }


@pytest.mark.parametrize("use", list(_uses()))
def test_using_a_deleted_array_raises(use):
    a = f32(1, 2)
    np.asarray(a)  # a host copy must not let a deleted array be read
    a.delete()
    assert a.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2\]"):
        _uses()[use](a)


@pytest.mark.parametrize("convert", [bool, int, float, complex, operator.index])
def test_converting_a_deleted_scalar_raises(convert):
    a = device_put(np.int32(1))
    a.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=int32\[\]"):
        convert(a)


def test_deleted_array_keeps_its_metadata():
    a = f32(1, 2)
    a.delete()
    a.delete()  # twice is fine
    assert a.shape == (2,) and a.dtype == np.float32 and a.device == backends.default_device()


# ---------------------------------------------------------------------------
# Copying and pickling


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy])
def test_copy_makes_a_new_buffer(devs, copier):
    a = device_put(np.arange(3, dtype=np.int32), devs[1])
    b = copier(a)
    assert type(b) is Array and b is not a
    assert b.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()
    assert b.device == devs[1] and b.committed and b.aval == a.aval
    a.delete()
    np.testing.assert_array_equal(np.asarray(b), [0, 1, 2])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("weak", [False, True])
def test_pickle_round_trip(dtype, weak):
    x = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    a = device_put(x)
    a = Array._make(a._impl, a.aval.update(weak_type=weak), False)
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is Array and b.aval == a.aval
    assert np.asarray(b).tolist() == x.tolist()


def test_unpickled_arrays_are_uncommitted_on_the_default_device(devs):
    a = device_put(np.ones(2, np.float32), devs[1])
    b = pickle.loads(pickle.dumps(a))
    assert b.device == backends.default_device() and not b.committed


def test_pickle_holds_numpy_not_device_state():
    a = f32(1, 2)
    reconstruct, args = a.__reduce__()
    assert type(args[0]) is np.ndarray and args[1] == np.float32 and args[2] is False


# ---------------------------------------------------------------------------
# DLPack


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.complex64, np.bool_])
def test_dlpack_to_numpy(dtype):
    x = (np.arange(6) % 2).astype(dtype).reshape(3, 2)
    a = device_put(x)
    assert a.__dlpack_device__() == (1, 0)
    out = np.from_dlpack(a)
    np.testing.assert_array_equal(out, x)
    assert out.dtype == x.dtype


def test_dlpack_export_shares_memory_unless_asked_to_copy():
    a = f32(1, 2, 3)
    shared = np.from_dlpack(a)
    assert shared.ctypes.data == a.unsafe_buffer_pointer()
    copied = np.from_dlpack(a, copy=True)
    assert copied.ctypes.data != a.unsafe_buffer_pointer()
    np.testing.assert_array_equal(copied, [1, 2, 3])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.complex64])
def test_from_dlpack_numpy(dtype):
    x = (np.arange(6) % 2).astype(dtype).reshape(2, 3)
    a = from_dlpack(x)
    assert type(a) is Array and a.dtype == x.dtype and a.shape == x.shape
    assert not a.committed and a.device == backends.get_backend("cpu").local_devices()[0]
    np.testing.assert_array_equal(np.asarray(a), x)


def test_from_dlpack_copy_true_always_copies():
    for _ in range(20):  # whatever alignment NumPy happened to give (aligned data is shared)
        x = np.arange(64, dtype=np.float32)
        a = from_dlpack(x, copy=True)
        x[0] = 100
        assert np.asarray(a)[0] == 0


def test_from_dlpack_canonicalizes_64_bit():
    a = from_dlpack(np.arange(3.0))
    assert a.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2])
    with config.enable_x64(True):
        assert from_dlpack(np.arange(3.0)).dtype == np.float64


def test_from_dlpack_read_only_numpy():
    x = np.arange(3, dtype=np.int32)
    x.flags.writeable = False
    np.testing.assert_array_equal(np.asarray(from_dlpack(x)), x)


def test_from_dlpack_to_a_device(devs):
    a = from_dlpack(np.arange(3, dtype=np.int32), device=devs[1])
    assert a.device == devs[1] and a.committed
    np.testing.assert_array_equal(np.asarray(a), [0, 1, 2])


def test_from_dlpack_of_an_array():
    a = f32(1, 2)
    b = from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(b), [1, 2])


def test_from_dlpack_rejects_other_objects():
    with pytest.raises(TypeError, match="__dlpack__"):
        from_dlpack([1, 2, 3])


# ---------------------------------------------------------------------------
# device_put


def test_device_put_pytrees():
    tree = {"a": np.zeros(2, np.float32), "b": [1.0, (np.int32(2), None)]}
    out = device_put(tree)
    assert set(out) == {"a", "b"} and out["b"][1][1] is None
    assert all(type(x) is Array for x in (out["a"], out["b"][0], out["b"][1][0]))
    assert out["b"][0].weak_type and not out["a"].weak_type
    assert not any(x.committed for x in (out["a"], out["b"][0]))


def test_device_put_commits_when_a_device_is_given(devs):
    a = device_put(np.ones(2, np.float32), devs[1])
    assert a.committed and a.device == devs[1]
    b = device_put(np.ones(2, np.float32), SingleDeviceSharding(devs[0]))
    assert b.committed and b.device == devs[0]
    c = device_put(np.ones(2, np.float32), _jax.SingleDeviceSharding(devs[1]))
    assert c.committed and c.sharding == SingleDeviceSharding(devs[1])


def test_device_put_without_device_leaves_arrays_where_they_are(devs):
    a = device_put(np.ones(2, np.float32), devs[1])
    assert device_put(a) is a
    b = device_put(a, may_alias=False)
    assert b is not a and b.committed and b.device == devs[1]
    assert b.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()


def test_device_put_to_the_same_device_shares_the_buffer(devs):
    a = device_put(np.ones(2, np.float32))
    b = device_put(a, a.device)
    assert b.committed and not a.committed
    assert b.unsafe_buffer_pointer() == a.unsafe_buffer_pointer()
    c = device_put(a, a.device, may_alias=False)
    assert c.unsafe_buffer_pointer() != a.unsafe_buffer_pointer()


@pytest.mark.parametrize("donate", [False, True])
def test_device_put_between_devices(devs, donate):
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    a = device_put(x, devs[0])
    b = device_put(a, devs[1], donate=donate)
    assert b.device == devs[1] and b.committed and b.aval == a.aval
    np.testing.assert_array_equal(np.asarray(b), x)
    assert a.is_deleted() is donate


def test_device_put_keeps_weak_types_across_devices(devs):
    a = device_put(2.0, devs[0])
    assert device_put(a, devs[1]).weak_type


def test_device_put_with_a_prefix_tree_of_devices(devs):
    tree = {"a": np.zeros(2, np.float32), "b": [np.ones(1, np.int32), 3.0]}
    out = device_put(tree, {"a": devs[1], "b": devs[0]})
    assert out["a"].device == devs[1]
    assert out["b"][0].device == devs[0] and out["b"][1].device == devs[0]
    out = device_put(tree, {"a": None, "b": devs[1]})
    assert not out["a"].committed and out["b"][1].committed
    with pytest.raises(ValueError, match="prefix"):
        device_put(tree, [devs[0], devs[1]])


def test_device_put_copies_host_data_by_default():
    x = np.zeros(4, np.float32)
    a = device_put(x)
    x[0] = 5
    assert np.asarray(a)[0] == 0


@pytest.mark.parametrize("bad", ["text", object(), [b"bytes"]])
def test_device_put_rejects_non_arrays(bad):
    with pytest.raises(TypeError):
        device_put(bad)


def test_device_put_rejects_bad_targets():
    with pytest.raises(TypeError, match="Device or a Sharding"):
        device_put(1.0, SingleDeviceSharding)
    with pytest.raises(TypeError, match="Device or a Sharding"):
        device_put(1.0, "cpu")
    with pytest.raises(TypeError, match="Device or a Sharding"):
        device_put([1.0, 2.0], [None, "cpu"])


def test_device_put_passes_tracers_through():
    class FakeTracer(Tracer):
        pass

    t = FakeTracer(None)
    assert device_put(t) is t


def test_device_put_refuses_jax_array_protocol():
    # As in JAX 0.10: device_put abstractifies, which no longer converts.
    class Wrapped:
        def __jax_array__(self):
            return np.arange(3, dtype=np.int32)

    with pytest.raises(ValueError, match="Triggering __jax_array__"):
        device_put(Wrapped())


def test_device_put_follows_the_default_device_option(devs):
    with config.default_device(devs[1]):
        a = device_put(1.0)
    assert a.device == devs[1] and not a.committed


# ---------------------------------------------------------------------------
# put_value (the internal transfer of dispatch and jit)


@pytest.mark.parametrize(
    "value, dtype",
    [(1.5, np.float32), (3, np.float32), (np.arange(3.0), np.float32), (True, np.int32)],
)
def test_put_value_converts_to_the_aval_dtype(value, dtype):
    aval = ShapedArray(np.shape(value), dtype)
    sharding = SingleDeviceSharding(backends.default_device())
    a = put_value(value, aval, sharding, False)
    assert a.aval is aval and a.sharding is sharding and not a.committed
    out = np.asarray(a)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.asarray(value).astype(dtype))


def test_put_value_moves_arrays(devs):
    a = device_put(np.arange(2, dtype=np.int32), devs[0])
    b = put_value(a, a.aval, SingleDeviceSharding(devs[1]), False)
    assert b.device == devs[1] and not b.committed and not a.is_deleted()
    np.testing.assert_array_equal(np.asarray(b), [0, 1])


def test_put_value_copies_unless_aliasing_is_allowed():
    x = np.zeros(3, np.float32)
    a = put_value(x, get_aval(x), SingleDeviceSharding(backends.default_device()), True)
    x[:] = 1
    np.testing.assert_array_equal(np.asarray(a), 0)


# ---------------------------------------------------------------------------
# Weak types and garbage


def test_weak_type_is_visible_to_dtype_rules():
    assert dtypes.is_weakly_typed(device_put(1.0))
    assert not dtypes.is_weakly_typed(f32(1))


def test_arrays_are_freed():
    a = f32(1)
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is None


# ---------------------------------------------------------------------------
# jaxlib is not patched


def test_jaxlib_classes_are_untouched_and_keep_working():
    script = textwrap.dedent(
        """
        import pickle, types
        import numpy as np
        from jaxlib import _jax, xla_client

        CLASSES = [_jax.ArrayImpl, _jax.SingleDeviceSharding, _jax.Sharding, _jax.Device,
                   _jax.Client, _jax.DeviceList, _jax.GSPMDSharding, _jax.LoadedExecutable]

        def snapshot():
            return {c.__name__: (sorted(dir(c)), {k: repr(v) for k, v in vars(c).items()})
                    for c in CLASSES}

        before = snapshot()
        from polyjax_interpreters import array, backends, sharding

        x = array.device_put(np.arange(4, dtype=np.float32))
        repr(x); str(x); np.asarray(x); x.tolist(); pickle.loads(pickle.dumps(x))
        np.from_dlpack(x); array.from_dlpack(np.ones(2)); array.device_get([x])
        array.device_put(x, backends.devices()[0], may_alias=False).delete()
        assert snapshot() == before, "jaxlib classes changed"

        # jaxlib's own objects, side by side with ours.
        client = xla_client.make_cpu_client()
        dev = client.devices()[0]

        class Plain(_jax.SingleDeviceSharding):
            memory_kind = None
            def _to_xla_hlo_sharding(self, ndim):
                return xla_client.HloSharding.replicate()

        aval = types.SimpleNamespace(shape=(2,), dtype=np.dtype(np.int32), weak_type=False)
        impl = _jax.batched_device_put(aval, Plain(dev), [np.array([5, 6], np.int32)], [dev],
                                       committed=True, enable_x64=False)
        assert impl.aval is aval and type(impl._sharding) is Plain
        assert np.asarray(impl).tolist() == [5, 6]
        assert not hasattr(impl, "shape") and not hasattr(impl, "__array__")
        assert not isinstance(_jax.SingleDeviceSharding(dev), sharding.Sharding)
        assert np.asarray(x).tolist() == [0, 1, 2, 3]
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"
