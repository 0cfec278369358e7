"""Arrays and jit over 8 host devices, with `GSPMDSharding` (no mesh: that is polyjax-sharding).

Run on 8 host devices by ../test_multidevice.py, in a pytest process of its
own. Values are compared with NumPy on the gathered arrays, and each shard
with the NumPy slice that `devices_indices_map` names.
"""

from __future__ import annotations

import logging
import pathlib
import sys

import numpy as np
import pytest

# The toy primitives of the interpreters tests (this directory's parent).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

# Tilings of a rank-2 array over 8 devices (the shapes of meshes (8,), (2, 4),
# (4, 2), (2, 2, 2) with every mesh axis sharding one dimension or replicating).
TILINGS = {
    "8x1": ([8, 1], False),
    "1x8": ([1, 8], False),
    "2x4": ([2, 4], False),
    "4x2": ([4, 2], False),
    "2x2 rep2": ([2, 2, 2], True),
    "2x1 rep4": ([2, 1, 4], True),
    "replicated": (None, False),
}


def _env():
    """What the tests use: 8 devices, toy primitives, the runtime's modules."""
    from types import SimpleNamespace

    from conftest import TOY
    from jaxlib import xla_client

    from polyjax_interpreters import array, backends, dispatch, sharding
    from polyjax_interpreters.jit import jit

    devices = backends.devices()
    assert len(devices) == 8, devices
    return SimpleNamespace(
        toy=TOY,
        devices=devices,
        xc=xla_client,
        array=array,
        dispatch=dispatch,
        GSPMD=sharding.GSPMDSharding,
        Single=sharding.SingleDeviceSharding,
        jit=jit,
    )


def _tiled(env, name, devices=None):
    dims, replicate = TILINGS[name]
    hlo = env.xc.HloSharding
    devices = env.devices if devices is None else devices
    if dims is None:
        return env.GSPMD(devices, hlo.replicate())
    subgroups = [env.xc.OpSharding.Type.REPLICATED] if replicate else []
    return env.GSPMD(devices, hlo.iota_tile(dims, subgroup_types=subgroups))


def _value(shape=(8, 8)):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _check_shards(x, value):
    """The gathered value and every shard against NumPy."""
    np.testing.assert_array_equal(np.asarray(x), value)
    indices = x.sharding.devices_indices_map(value.shape)
    shards = x.addressable_shards
    assert {s.device for s in shards} == set(indices)
    seen = {}
    for s in shards:
        assert s.index == indices[s.device]
        assert s.data.shape == x.sharding.shard_shape(value.shape)
        assert s.data.sharding.device_set == {s.device}
        np.testing.assert_array_equal(np.asarray(s.data), value[s.index])
        key = str(s.index)
        assert s.replica_id == seen.get(key, -1) + 1
        seen[key] = s.replica_id


# ---------------------------------------------------------------------------
# GSPMDSharding


def test_gspmd_sharding_interface():
    env = _env()
    for name in TILINGS:
        s = _tiled(env, name)
        value = _value()
        indices = s.devices_indices_map(value.shape)
        assert set(indices) == set(env.devices), name
        covered = np.zeros(value.shape, int)
        for index in indices.values():
            covered[index] += 1
            assert value[index].shape == s.shard_shape(value.shape), name
        dims, replicate = TILINGS[name]
        copies = 8 if dims is None else (dims[-1] if replicate else 1)
        assert (covered == copies).all(), name
        assert s.is_fully_replicated == (dims is None), name
        assert s.num_devices == 8 and s.device_set == set(env.devices)
        assert s.is_fully_addressable and s.memory_kind == "device"
        assert s == _tiled(env, name) and hash(s) == hash(_tiled(env, name))
        assert repr(s).startswith("GSPMDSharding({")
    assert _tiled(env, "2x4") != _tiled(env, "4x2")
    assert _tiled(env, "2x4") != _tiled(env, "2x4", env.devices[::-1])
    assert _tiled(env, "2x4").with_memory_kind("device") == _tiled(env, "2x4")


# ---------------------------------------------------------------------------
# Sharded arrays


def test_device_put_from_host_and_printing():
    env = _env()
    value = _value()
    for name in TILINGS:
        x = env.array.device_put(value, _tiled(env, name))
        assert x.committed and x.sharding == _tiled(env, name)
        _check_shards(x, value)
        assert len(x.global_shards) == 8
        assert repr(x) == repr(env.array.device_put(value))
        assert str(x) == str(value)
        assert x.is_fully_replicated == (name == "replicated")
        assert x.is_fully_addressable


def test_resharding_device_to_device():
    env = _env()
    value = _value()
    names = list(TILINGS)
    for i, a in enumerate(names):
        x = env.array.device_put(value, _tiled(env, a))
        # two other tilings each (every pair would compile 49 programs)
        for b in (names[(i + 1) % len(names)], names[(i + 3) % len(names)]):
            y = env.array.device_put(x, _tiled(env, b))
            assert y.sharding == _tiled(env, b), (a, b)
            _check_shards(y, value)
        # to a reversed device order, to one device, and back from one device
        r = env.array.device_put(x, _tiled(env, "2x4", env.devices[::-1]))
        _check_shards(r, value)
        one = env.array.device_put(x, env.devices[5])
        assert one.sharding == env.Single(env.devices[5])
        np.testing.assert_array_equal(np.asarray(one), value)
        back = env.array.device_put(one, _tiled(env, a))
        _check_shards(back, value)


def test_reshard_does_not_go_through_the_host():
    env = _env()
    x = env.array.device_put(_value(), _tiled(env, "2x4"))
    calls = []
    original = env.array.Array._value
    try:
        env.array.Array._value = property(lambda self: calls.append(1) or original.fget(self))
        y = env.array.device_put(x, _tiled(env, "4x2"))
        z = env.array.device_put(y, env.devices[3])
        w = env.array.device_put(z, _tiled(env, "8x1"))
    finally:
        env.array.Array._value = original
    assert not calls
    _check_shards(w, _value())


def test_uneven_device_put_is_an_error():
    env = _env()
    with pytest.raises(ValueError, match="divisible"):
        env.array.device_put(np.zeros((6, 8), np.float32), _tiled(env, "4x2"))


def test_make_array_from_callback_and_friends():
    env = _env()
    value = _value((8, 8))
    for name in TILINGS:
        s = _tiled(env, name)
        seen = []

        def callback(index, seen=seen):
            seen.append(index)
            return value[index]

        x = env.array.make_array_from_callback(value.shape, s, callback)
        assert len(seen) == 8 and x.committed and x.sharding == s
        _check_shards(x, value)
        parts = [shard.data for shard in x.addressable_shards][::-1]
        y = env.array.make_array_from_single_device_arrays(value.shape, s, parts)
        _check_shards(y, value)
        z = env.array.make_array_from_process_local_data(s, value)
        _check_shards(z, value)
        # callbacks returning Arrays: their buffers are moved device to device
        w = env.array.make_array_from_callback(
            value.shape, s, lambda index: env.array.device_put(value[index])
        )
        _check_shards(w, value)
    s = _tiled(env, "2x4")
    parts = [shard.data for shard in env.array.device_put(value, s).addressable_shards]
    with pytest.raises(ValueError, match="missing"):
        env.array.make_array_from_single_device_arrays(value.shape, s, parts[:-1])
    with pytest.raises(ValueError, match="shape"):
        env.array.make_array_from_single_device_arrays((16, 8), s, parts)
    with pytest.raises(ValueError, match="global shape"):
        env.array.make_array_from_callback((8, 8), s, lambda index: np.zeros((1, 1)))
    with pytest.raises(ValueError, match="local_data"):
        env.array.make_array_from_process_local_data(s, value, (8, 4))


def test_device_get_block_and_delete():
    env = _env()
    x = env.array.device_put(_value(), _tiled(env, "2x4"))
    assert env.array.block_until_ready(x) is x and x.is_ready()
    got = env.array.device_get({"a": x})["a"]
    np.testing.assert_array_equal(got, _value())
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        env.array.block_until_ready(x)


# ---------------------------------------------------------------------------
# jit over 8 devices


def test_jit_propagates_input_sharding():
    env = _env()
    value = _value()
    for name in TILINGS:
        s = _tiled(env, name)
        x = env.array.device_put(value, s)
        f = env.jit(lambda a: env.toy.sin(env.toy.mul(a, a)))
        out = f(x)
        assert out.committed
        assert out.sharding.is_equivalent_to(s, 2), (name, out.sharding)
        np.testing.assert_allclose(np.asarray(out), np.sin(value * value), rtol=1e-5)
        _check_shards(out, np.asarray(out))
        # eager ops on sharded arrays run as SPMD programs too
        eager = env.toy.add(x, x)
        assert eager.sharding.is_equivalent_to(s, 2)
        np.testing.assert_array_equal(np.asarray(eager), 2 * value)


def test_jit_in_and_out_shardings():
    env = _env()
    value = _value()
    s24, s42, s81 = (_tiled(env, n) for n in ("2x4", "4x2", "8x1"))
    f = env.jit(lambda a, b: env.toy.add(a, b), in_shardings=(s24, None), out_shardings=s42)
    out = f(value, value)  # host inputs: placed per in_shardings (b: replicated)
    assert out.sharding == s42 and out.committed
    _check_shards(out, 2 * value)
    # a committed input laid out otherwise is an error naming the argument
    with pytest.raises(ValueError, match=r"(?s)does not match the sharding.*argument a"):
        f(env.array.device_put(value, s81), value)
    # an uncommitted input is moved
    out = f(env.array.device_put(value), env.array.device_put(value, s81))
    _check_shards(out, 2 * value)
    # a pytree prefix: one sharding for a whole dict argument
    g = env.jit(lambda d: env.toy.add(d["x"], d["y"]), in_shardings=(s24,))
    out = g({"x": value, "y": value})
    assert out.sharding.is_equivalent_to(s24, 2)
    with pytest.raises(ValueError, match="in_shardings"):
        env.jit(lambda a: a, in_shardings=(s24, s24))(value)
    with pytest.raises(TypeError, match="in_shardings"):
        env.jit(lambda a: a, in_shardings="x")(value)


def test_jit_incompatible_devices():
    env = _env()
    value = _value()
    x = env.array.device_put(value, _tiled(env, "2x4"))
    y = env.array.device_put(value, env.devices[0])
    with pytest.raises(ValueError, match=r"(?s)incompatible devices.*argument b"):
        env.jit(lambda a, b: env.toy.add(a, b))(x, y)


def test_lowering_shardy_and_gspmd():
    from polyjax_core import config

    env = _env()
    value = _value()
    s24, s18 = _tiled(env, "2x4"), _tiled(env, "1x8")
    x = env.array.device_put(value, s24)
    f = env.jit(lambda a: env.toy.mul(a, a), out_shardings=s18)
    text = f.lower(x).as_text()
    assert "sdy.mesh @mesh" in text and "mhlo.num_partitions = 8" in text, text
    assert "sdy.sharding = #sdy.sharding<@" in text, text
    shardy = f(x)
    with config.use_shardy_partitioner(False):
        text = f.lower(x).as_text()
        assert 'mhlo.sharding = "{devices=[2,4]<=[8]}"' in text, text
        assert 'mhlo.sharding = "{devices=[1,8]<=[8]}"' in text, text
        assert "sdy." not in text
        gspmd = f(x)
    assert shardy.sharding == gspmd.sharding == s18
    np.testing.assert_array_equal(np.asarray(shardy), np.asarray(gspmd))
    _check_shards(gspmd, value * value)


def test_aot_stages_show_shardings():
    env = _env()
    value = _value()
    s24, s42 = _tiled(env, "2x4"), _tiled(env, "4x2")
    f = env.jit(lambda a, b: env.toy.add(a, b), out_shardings=s42)
    compiled = f.lower(env.array.device_put(value, s24), value).compile()
    (ins, kwargs) = compiled.input_shardings
    assert kwargs == {} and ins[0] == s24 and ins[1].is_fully_replicated
    assert compiled.output_shardings == s42
    out = compiled(env.array.device_put(value, s24), value)
    _check_shards(out, 2 * value)


def test_cache_keys_on_shardings():
    from polyjax_core import config

    env = _env()
    value = _value()
    f = env.jit(lambda a: env.toy.sin(a))
    x24 = env.array.device_put(value, _tiled(env, "2x4"))
    x42 = env.array.device_put(value, _tiled(env, "4x2"))
    f(x24)
    f(x24)
    assert f._cache_size() == 1
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = logging.getLogger("polyjax")
    logger.addHandler(handler)
    try:
        with config.explain_cache_misses(True):
            out = f(x42)
    finally:
        logger.removeHandler(handler)
    assert f._cache_size() == 2
    assert out.sharding.is_equivalent_to(x42.sharding, 2)
    message = "\n".join(r.getMessage() for r in records)
    assert "the sharding changed" in message and "{devices=[4,2]" in message, message


def test_donation_of_sharded_inputs():
    env = _env()
    value = _value()
    s = _tiled(env, "2x4")
    x = env.array.device_put(value, s)
    f = env.jit(lambda a: env.toy.add(a, a), donate_argnums=0)
    out = f(x)
    assert x.is_deleted()
    _check_shards(out, 2 * value)
    with pytest.raises(RuntimeError, match="deleted"):
        f(x)


def test_grad_of_sharded_jit():
    from polyjax_interpreters import ad

    env = _env()
    value = _value((8,)) / 8
    x = env.array.device_put(value, env.GSPMD(env.devices, env.xc.HloSharding.iota_tile([8])))
    f = env.jit(lambda a: env.toy.sum(env.toy.sin(a)))
    g = ad.grad(f)(x)
    np.testing.assert_allclose(np.asarray(g), np.cos(value), rtol=1e-5)
    g2 = env.jit(ad.grad(f))(x)
    assert g2.sharding.is_equivalent_to(x.sharding, 1)
    np.testing.assert_allclose(np.asarray(g2), np.cos(value), rtol=1e-5)


def test_device_to_device_transfer_guard():
    from jaxlib import _jax

    from polyjax_core import config
    from polyjax_interpreters import backends
    from polyjax_interpreters.array import device_put
    from polyjax_interpreters.jit import jit

    d0, d1 = backends.devices()[:2]
    x = device_put(np.ones(2, np.float32), d1)
    with config.transfer_guard_device_to_device("disallow"):
        # Explicit: allowed. Implicit (a jit placed on another device): refused.
        assert device_put(x, d0).devices() == {d0}
        with pytest.raises(_jax.JaxRuntimeError, match="Disallowed device-to-device transfer"):
            jit(lambda a: a, device=d0)(x)
    assert jit(lambda a: a, device=d0)(x).devices() == {d0}
