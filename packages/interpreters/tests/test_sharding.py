"""The Sharding interface and SingleDeviceSharding, next to jaxlib's own classes."""

from __future__ import annotations

import copy
import types

import numpy as np
import pytest
from jaxlib import _jax, xla_client

from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters.sharding import Sharding, SingleDeviceSharding


@pytest.fixture(scope="module")
def devs():
    # A client of our own: tests of several devices leave the process's backends alone.
    return xla_client.make_cpu_client(num_devices=2).devices()


def test_is_a_virtual_subclass(devs):
    s = SingleDeviceSharding(devs[0])
    assert isinstance(s, Sharding) and issubclass(SingleDeviceSharding, Sharding)
    assert isinstance(s, _jax.SingleDeviceSharding)  # what jaxlib's C++ accepts
    assert not isinstance(_jax.SingleDeviceSharding(devs[0]), Sharding)


def test_sharding_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        Sharding()


def test_interface(devs):
    d = devs[1]
    s = SingleDeviceSharding(d)
    assert s._device == d
    assert s.device_set == {d}
    assert s._device_assignment == (d,)
    assert s.addressable_devices == {d}
    assert s.is_fully_addressable and s.has_addressable_devices
    assert s.is_fully_replicated
    assert s.num_devices == 1
    assert s.memory_kind == "device"
    assert s._internal_device_list == _jax.DeviceList((d,))


@pytest.mark.parametrize("shape", [(), (3,), (2, 5), (0, 4, 1)])
def test_shapes_and_indices(devs, shape):
    s = SingleDeviceSharding(devs[0])
    assert s.shard_shape(shape) == shape
    full = (slice(None),) * len(shape)
    assert s.devices_indices_map(shape) == {devs[0]: full}
    assert s.addressable_devices_indices_map(shape) == {devs[0]: full}
    x = np.arange(int(np.prod(shape))).reshape(shape)
    np.testing.assert_array_equal(x[s.devices_indices_map(shape)[devs[0]]], x)


@pytest.mark.parametrize("ndim", [0, 1, 3])
def test_hlo_sharding_is_replicated(devs, ndim):
    hlo = SingleDeviceSharding(devs[0])._to_xla_hlo_sharding(ndim)
    assert isinstance(hlo, xla_client.HloSharding)
    assert hlo.is_replicated()


@pytest.mark.parametrize("kind", ["device", "pinned_host", "unpinned_host"])
def test_memory_kinds(devs, kind):
    s = SingleDeviceSharding(devs[0], memory_kind=kind)
    assert s.memory_kind == kind
    assert s.with_memory_kind("device") == SingleDeviceSharding(devs[0])
    assert SingleDeviceSharding(devs[0]).with_memory_kind(kind) == s


def test_unknown_memory_kind_is_rejected(devs):
    with pytest.raises(ValueError, match="memory kind"):
        SingleDeviceSharding(devs[0], memory_kind="on_the_moon")


def test_equality_and_hash(devs):
    a, b = SingleDeviceSharding(devs[0]), SingleDeviceSharding(devs[0], memory_kind="device")
    assert a == b and not (a != b) and hash(a) == hash(b)
    assert a != SingleDeviceSharding(devs[1])
    assert a != SingleDeviceSharding(devs[0], memory_kind="pinned_host")
    assert {a: 1}[b] == 1
    assert len({a, b, SingleDeviceSharding(devs[1])}) == 2
    assert a != "cpu" and a != None  # noqa: E711


def test_one_object_per_value(devs):
    # Equal single-device shardings are the same object, so jaxlib's C++ hashes
    # and compares them without calling Python; a copy is the same object too.
    a = SingleDeviceSharding(devs[0])
    assert SingleDeviceSharding(devs[0], memory_kind="device") is a
    assert copy.copy(a) is a
    assert a.with_memory_kind("device") is a
    pinned = SingleDeviceSharding(devs[0], memory_kind="pinned_host")
    assert pinned is not a and pinned.memory_kind == "pinned_host"
    assert SingleDeviceSharding(devs[0], memory_kind="pinned_host") is pinned


def test_not_equal_to_jaxlibs_own_class(devs):
    plain = _jax.SingleDeviceSharding(devs[0])
    ours = SingleDeviceSharding(devs[0])
    assert ours != plain and plain != ours


def test_is_equivalent_to(devs):
    a = SingleDeviceSharding(devs[0])
    assert a.is_equivalent_to(SingleDeviceSharding(devs[0]), 2)
    assert not a.is_equivalent_to(SingleDeviceSharding(devs[1]), 2)
    assert not a.is_equivalent_to(a.with_memory_kind("pinned_host"), 2)
    assert not a.is_equivalent_to(object(), 2)


def test_equivalent_to_another_class_with_the_same_placement(devs):
    class OtherSingle:  # any sharding class giving the same answers
        _device_assignment = (devs[0],)
        memory_kind = "device"

        def _to_xla_hlo_sharding(self, ndim):
            return xla_client.HloSharding.replicate()

    assert SingleDeviceSharding(devs[0]).is_equivalent_to(OtherSingle(), 1)


def test_repr(devs):
    assert repr(SingleDeviceSharding(devs[1])) == (
        "SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=device)"
    )
    assert repr(SingleDeviceSharding(devs[0], memory_kind="pinned_host")) == (
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=pinned_host)"
    )


def test_jaxlib_takes_it_for_transfers(devs):
    s = SingleDeviceSharding(devs[1])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    impl = _jax.batched_device_put(
        ShapedArray(x.shape, x.dtype), s, [x], [devs[1]], committed=True, enable_x64=False
    )
    assert impl._sharding is s
    np.testing.assert_array_equal(np.asarray(impl), x)


def test_jaxlib_objects_work_side_by_side(devs):
    """A program using only jaxlib's own classes is unaffected by ours being in use."""

    class PlainSharding(_jax.SingleDeviceSharding):  # the minimum jaxlib needs
        memory_kind = None

        def _to_xla_hlo_sharding(self, ndim):
            return xla_client.HloSharding.replicate()

    aval = types.SimpleNamespace(shape=(3,), dtype=np.dtype(np.int32), weak_type=False)
    x = np.array([1, 2, 3], np.int32)
    theirs = _jax.batched_device_put(
        aval, PlainSharding(devs[0]), [x], [devs[0]], committed=True, enable_x64=False
    )
    ours = _jax.batched_device_put(
        ShapedArray((3,), np.int32),
        SingleDeviceSharding(devs[0]),
        [x],
        [devs[0]],
        committed=True,
        enable_x64=False,
    )
    assert type(theirs._sharding) is PlainSharding and theirs.aval is aval
    np.testing.assert_array_equal(np.asarray(theirs), np.asarray(ours))
    plain = _jax.SingleDeviceSharding(devs[0])
    assert not hasattr(plain, "memory_kind") and not hasattr(plain, "device_set")
