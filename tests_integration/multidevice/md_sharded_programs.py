"""Sharded programs over 8 host devices: constraints, and composition with transformations.

Run on 8 host devices by ../test_multidevice.py. Shardings here are `GSPMDSharding`s,
the runtime's own (tests of the `Mesh`/`NamedSharding` workflow are in
polyjax-sharding's tests). Values are checked against NumPy on the gathered
arrays, and against the same program on one device.
"""

from __future__ import annotations

import numpy as np
import pytest


def _env():
    from types import SimpleNamespace

    from jaxlib import xla_client

    import polyjax
    import polyjax.numpy as jnp
    from polyjax import lax
    from polyjax_interpreters.sharding import GSPMDSharding

    devices = polyjax.devices()
    assert len(devices) == 8

    def tiled(*dims, replicate=False):
        hlo = xla_client.HloSharding
        if not dims:
            return GSPMDSharding(devices, hlo.replicate())
        groups = [xla_client.OpSharding.Type.REPLICATED] if replicate else []
        return GSPMDSharding(devices, hlo.iota_tile(list(dims), subgroup_types=groups))

    return SimpleNamespace(jax=polyjax, jnp=jnp, lax=lax, devices=devices, tiled=tiled)


def _x(shape=(8, 8), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# with_sharding_constraint and reshard


def test_constraint_sets_output_layout_and_devices():
    env = _env()
    jax, lax = env.jax, env.lax
    s = env.tiled(2, 4)
    x = _x()
    f = jax.jit(lambda a: lax.with_sharding_constraint(a * 2, s))
    out = f(x)  # a host input: the constraint decides where the program runs
    assert out.sharding.is_equivalent_to(s, 2), out.sharding
    _close(out, 2 * x)
    text = f.lower(x).as_text()
    assert "sdy.sharding_constraint" in text and "mhlo.num_partitions = 8" in text, text
    from polyjax_core.config import use_shardy_partitioner

    with use_shardy_partitioner(False):
        text = f.lower(x).as_text()
        assert "stablehlo.custom_call @Sharding" in text and "{devices=[2,4]<=[8]}" in text
        _close(f(x), 2 * x)
    # outside jit: a device_put
    eager = lax.with_sharding_constraint(x, s)
    assert eager.sharding == s and eager.committed
    # reshard: the same in both places
    r = lax.reshard(eager, env.tiled(8, 1))
    assert r.sharding == env.tiled(8, 1)
    _close(r, x)
    g = jax.jit(lambda a: lax.reshard(a + 1, env.tiled(1, 8)))
    assert g(eager).sharding.is_equivalent_to(env.tiled(1, 8), 2)
    # a pytree prefix
    tree = jax.jit(lambda d: lax.with_sharding_constraint(d, {"a": s, "b": env.tiled()}))(
        {"a": x, "b": x}
    )
    assert tree["a"].sharding.is_equivalent_to(s, 2)
    assert tree["b"].sharding.is_fully_replicated
    with pytest.raises(TypeError, match="with_sharding_constraint"):
        lax.with_sharding_constraint(x, "x")


def test_constraint_under_grad():
    env = _env()
    jax, jnp, lax = env.jax, env.jnp, env.lax
    s = env.tiled(2, 4)
    x = _x()

    def loss(a):
        h = lax.with_sharding_constraint(jnp.tanh(a) * a, s)
        return jnp.sum(h * h)

    g = jax.jit(jax.grad(loss))
    out = g(x)
    expected = jax.grad(loss)(jax.device_put(x))  # one device
    _close(out, expected)
    text = g.lower(x).as_text()
    assert text.count("sdy.sharding_constraint") >= 2, text  # primal and cotangent


def test_constraint_under_vmap_with_spmd_axis_name():
    env = _env()
    jax, lax = env.jax, env.lax
    # A rank-1 sharding over 4 devices of a synthesized mesh; vmap adds a dimension.
    s1 = env.tiled(4, 2, replicate=True)  # rows split in 4, each piece on 2 devices
    x = _x()

    def f(row):
        return lax.with_sharding_constraint(row * 2, s1)

    vmapped = jax.jit(jax.vmap(f))
    text = vmapped.lower(x).as_text()
    assert "{?}" in text, text  # the batch dimension is left to the partitioner
    _close(vmapped(x), 2 * x)
    # spmd_axis_name: the batch dimension is sharded over that mesh axis
    spmd = jax.jit(jax.vmap(f, spmd_axis_name="_r"))
    with pytest.raises(ValueError, match="spmd_axis_name"):
        spmd.lower(x)


def test_composition_with_transformations():
    env = _env()
    jax, jnp, lax = env.jax, env.jnp, env.lax
    s = env.tiled(2, 4)
    x, w = _x(), _x(seed=1)
    xs = jax.device_put(x, s)
    ws = jax.device_put(w, env.tiled(4, 1, 2, replicate=True))

    def mlp(a, b):
        return jnp.sum(jnp.tanh(a @ b) ** 2)

    # grad of a sharded jit equals grad on one device
    _close(jax.jit(jax.grad(mlp))(xs, ws), jax.grad(mlp)(x, w), 1e-4)
    _close(jax.grad(jax.jit(mlp))(xs, ws), jax.grad(mlp)(x, w), 1e-4)
    # vmap over rows
    _close(jax.jit(jax.vmap(jnp.sin))(xs), np.sin(x))

    # scan carrying a sharded value
    def step(c, row):
        return c * 0.5 + row, jnp.sum(c)

    carry, ys = jax.jit(lambda a: lax.scan(step, a[0], a))(xs)
    c1, y1 = lax.scan(step, jnp.asarray(x[0]), jnp.asarray(x))
    _close(carry, c1)
    _close(ys, y1, 1e-4)
    # cond
    out = jax.jit(lambda p, a: lax.cond(p, jnp.sin, jnp.cos, a))(True, xs)
    _close(out, np.sin(x))
    # checkpoint
    _close(
        jax.jit(jax.grad(jax.checkpoint(lambda a: jnp.sum(jnp.sin(a) ** 2))))(xs),
        2 * np.sin(x) * np.cos(x),
    )

    # custom_vjp
    @jax.custom_vjp
    def double(a):
        return 2 * a

    double.defvjp(lambda a: (2 * a, None), lambda _, g: (2 * g,))
    _close(jax.jit(jax.grad(lambda a: jnp.sum(double(a))))(xs), np.full_like(x, 2.0))


def test_elementwise_keeps_sharding_and_aot():
    env = _env()
    jax, jnp = env.jax, env.jnp
    s = env.tiled(2, 4)
    xs = jax.device_put(_x(), s)
    out = jnp.sin(xs) + 1
    assert out.sharding.is_equivalent_to(s, 2)
    f = jax.jit(lambda a: a * 3, out_shardings=env.tiled(8, 1))
    lowered = f.lower(xs)
    assert "sdy.sharding" in lowered.as_text()
    compiled = lowered.compile()
    assert compiled.input_shardings[0][0] == s
    assert compiled.output_shardings == env.tiled(8, 1)
    _close(compiled(xs), 3 * _x())
    # indexing and printing of a sharded array give the global value
    _close(xs[1], _x()[1])
    assert repr(xs) == repr(jax.device_put(_x()))


def test_host_callbacks_inside_shard_map():
    # Each device calls back with its own shard; the ordered io_callback and the
    # pure_callback's result come back per shard (docs/debugging.md).
    import polyjax
    from polyjax.experimental import io_callback
    from polyjax.sharding import PartitionSpec as P

    jax = polyjax
    mesh = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    seen = []

    def per_shard(a):
        io_callback(lambda v: seen.append(v.tolist()), None, a, ordered=True)
        jax.debug.print("shard {}", a)
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct(a.shape, a.dtype), a)

    f = jax.jit(jax.shard_map(per_shard, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x), rtol=1e-6)
    assert sorted(seen) == [[2.0 * i, 2.0 * i + 1] for i in range(8)]


@pytest.mark.parametrize("shardy", [True, False], ids=["shardy", "gspmd"])
def test_host_callbacks_in_a_partitioned_jit_run_once_on_whole_values(shardy):
    # Outside shard_map a callback runs once, on the first device, with whole values.
    import polyjax
    from polyjax.experimental import io_callback
    from polyjax.sharding import NamedSharding
    from polyjax.sharding import PartitionSpec as P

    jax = polyjax
    mesh = jax.make_mesh((8,), ("x",))
    x = jax.device_put(np.arange(16, dtype=np.float32), NamedSharding(mesh, P("x")))
    seen = []

    def f(x):
        io_callback(lambda v: seen.append(v.shape), None, x, ordered=True)
        s = jax.ShapeDtypeStruct(x.shape, x.dtype)
        a, b = jax.pure_callback(lambda v: (np.sin(v), np.cos(v)), (s, s), x)
        io_callback(lambda v: seen.append("last"), None, x, ordered=True)
        return a + b

    from polyjax_core.config import use_shardy_partitioner

    with use_shardy_partitioner(shardy):
        out = jax.jit(f)(x)
    expected = np.sin(np.arange(16)) + np.cos(np.arange(16))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)
    assert seen == [(16,), "last"]
