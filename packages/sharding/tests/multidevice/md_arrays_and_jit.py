"""The user workflow on 8 host devices: NamedSharding arrays, jit with shardings, constraints.

Values are checked against NumPy on the gathered arrays and each shard against
the NumPy slice that `devices_indices_map` names; sharded programs against the
same program on one device.
"""

import logging

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.config import explain_cache_misses, use_shardy_partitioner
from polyjax_interpreters import ad, array, batching, custom_derivatives, remat
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_sharding import AxisType, NamedSharding, make_mesh, set_mesh
from polyjax_sharding import PartitionSpec as P

# A spec per mesh shape that splits both dimensions of a rank-2 array, and one that
# leaves a mesh axis to replication.
SPLIT = {1: P("x"), 2: P("x", "y"), 3: P(("x", "z"), "y")}
PARTIAL = {1: P(), 2: P(None, "y"), 3: P("z", None)}


def _value(shape=(8, 8), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _check_shards(x, value):
    np.testing.assert_array_equal(np.asarray(x), value)
    indices = x.sharding.devices_indices_map(value.shape)
    replicas = {}
    for shard in x.addressable_shards:
        assert shard.index == indices[shard.device]
        np.testing.assert_array_equal(np.asarray(shard.data), value[shard.index])
        key = str(shard.index)
        assert shard.replica_id == replicas.get(key, -1) + 1
        replicas[key] = shard.replica_id
    assert len(x.global_shards) == 8


def _close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.fixture
def split(mesh):
    return NamedSharding(mesh, SPLIT[len(mesh.axis_names)])


@pytest.fixture
def partial(mesh):
    return NamedSharding(mesh, PARTIAL[len(mesh.axis_names)])


# ---------------------------------------------------------------------------
# Arrays


def test_device_put_shards_print_and_index(split):
    value = _value()
    x = array.device_put(value, split)
    assert x.sharding == split and x.committed
    _check_shards(x, value)
    assert repr(x) == repr(array.device_put(value))
    np.testing.assert_array_equal(np.asarray(x[1]), value[1])
    np.testing.assert_array_equal(np.asarray(x[2:5, ::2]), value[2:5, ::2])
    np.testing.assert_array_equal(array.device_get(x), value)


def test_resharding_moves_between_shardings(split, partial, devices):
    value = _value()
    x = array.device_put(value, split)
    y = array.device_put(x, partial)
    assert y.sharding == partial
    _check_shards(y, value)
    one = array.device_put(y, devices[3])
    np.testing.assert_array_equal(np.asarray(one), value)
    back = array.device_put(one, split)
    _check_shards(back, value)
    donated = array.device_put(back, partial, donate=True)
    assert back.is_deleted()
    _check_shards(donated, value)


def test_make_array_from_functions(split):
    value = _value()
    x = array.make_array_from_callback(value.shape, split, lambda index: value[index])
    assert x.sharding == split
    _check_shards(x, value)
    parts = [s.data for s in x.addressable_shards]
    _check_shards(array.make_array_from_single_device_arrays(value.shape, split, parts), value)
    _check_shards(array.make_array_from_process_local_data(split, value), value)


def test_uneven_dimension_is_an_error(devices):
    mesh = make_mesh((8,), ("x",), axis_types=AxisType.Auto)
    with pytest.raises(ValueError, match="evenly divide"):
        array.device_put(np.zeros((6,), np.float32), NamedSharding(mesh, P("x")))


# ---------------------------------------------------------------------------
# jit


def test_elementwise_keeps_the_named_sharding(split):
    value = _value()
    x = array.device_put(value, split)
    out = jit(lambda a: jnp.sin(a) * 2 + a)(x)
    assert out.sharding == split, out.sharding
    _close(out, np.sin(value) * 2 + value)
    eager = jnp.cos(x)
    assert eager.sharding == split
    _check_shards(eager, np.asarray(eager))


def test_in_and_out_shardings_with_bare_specs(mesh, split, partial):
    value = _value()
    f = jit(lambda a, b: a @ b, in_shardings=(split.spec, None), out_shardings=partial.spec)
    with pytest.raises(RuntimeError, match="mesh"):
        f(value, value)
    with set_mesh(mesh):
        out = f(value, value)
    assert out.sharding == partial and out.committed
    _close(out, value @ value, 1e-4)
    # a committed argument laid out otherwise: JAX's error, naming the argument
    g = jit(lambda a: a + 1, in_shardings=split)
    with pytest.raises(ValueError, match=r"(?s)does not match the sharding.*argument a"):
        g(array.device_put(value, partial))
    # None in out_shardings: the partitioner's choice, as a NamedSharding on the mesh
    h = jit(lambda a: (a * 2, a.sum(0)), out_shardings=(partial, None))
    out, total = h(array.device_put(value, split))
    assert out.sharding == partial and isinstance(total.sharding, NamedSharding)
    _close(total, value.sum(0), 1e-4)


def test_lowering_shardy_and_gspmd(split, partial):
    value = _value()
    x = array.device_put(value, split)
    f = jit(lambda a: jnp.tanh(a) @ a, out_shardings=partial)
    text = f.lower(x).as_text()
    mesh = split.mesh
    axes = ", ".join(f'"{n}"={k}' for n, k in zip(mesh.axis_names, mesh.axis_sizes))
    assert f"sdy.mesh @mesh = <[{axes}]>" in text, text
    assert "sdy.sharding = #sdy.sharding<@mesh" in text
    assert f"mhlo.num_partitions = {mesh.size}" in text
    shardy = f(x)
    with use_shardy_partitioner(False):
        text = f.lower(x).as_text()
        assert "mhlo.sharding" in text and "sdy." not in text, text
        gspmd = f(x)
    assert shardy.sharding == gspmd.sharding == partial
    _close(shardy, gspmd)
    _close(shardy, np.tanh(value) @ value, 1e-4)


def test_aot_stages_show_shardings(split, partial):
    x = array.device_put(_value(), split)
    lowered = jit(lambda a, b: a + b, out_shardings=partial).lower(x, _value())
    compiled = lowered.compile()
    (ins, _) = compiled.input_shardings
    assert ins[0] == split and ins[1].is_fully_replicated
    assert compiled.output_shardings == partial
    _close(compiled(x, _value()), 2 * _value())
    # ahead of time, from types alone: a ShapeDtypeStruct's sharding places its argument
    spec = ShapeDtypeStruct((8, 8), np.float32, sharding=split)
    lowered = jit(lambda a: a * 2).lower(spec)
    assert "sdy.sharding = #sdy.sharding<@mesh" in lowered.as_text()
    assert lowered.compile().input_shardings[0][0] == split


def test_cache_keys_on_shardings_and_explains_misses(split, partial):
    f = jit(lambda a: a * 3)
    f(array.device_put(_value(), split))
    f(array.device_put(_value(), split))
    assert f._cache_size() == 1
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("polyjax").addHandler(handler)
    try:
        with explain_cache_misses(True):
            f(array.device_put(_value(), partial))
    finally:
        logging.getLogger("polyjax").removeHandler(handler)
    assert f._cache_size() == 2
    message = "\n".join(r.getMessage() for r in records)
    assert "the sharding changed" in message and str(partial.spec) in message, message


# ---------------------------------------------------------------------------
# Constraints and composition


def test_with_sharding_constraint_and_reshard(mesh, split, partial):
    value = _value()
    with set_mesh(mesh):
        f = jit(lambda a: lax.with_sharding_constraint(a * 2, split.spec))
        out = f(value)  # a host input: the constraint decides the devices
        assert out.sharding == split
        assert "sdy.sharding_constraint" in f.lower(value).as_text()
        _close(out, 2 * value)
        r = lax.reshard(out, partial.spec)
        assert r.sharding == partial
    with pytest.raises(RuntimeError, match="mesh"):
        lax.with_sharding_constraint(value, split.spec)
    # device_put with a sharding inside jit is a constraint too
    g = jit(lambda a: array.device_put(a * 3, partial))
    assert g(value).sharding == partial
    assert "sdy.sharding_constraint" in g.lower(value).as_text()


def test_constraint_under_grad_and_vmap(split):
    mesh = split.mesh
    value = _value()

    def loss(a):
        return jnp.sum(lax.with_sharding_constraint(jnp.sin(a) * a, split) ** 2)

    _close(jit(ad.grad(loss))(value), ad.grad(loss)(array.device_put(value)), 1e-4)
    row = NamedSharding(mesh, P(mesh.axis_names[-1]))

    def f(r):
        return lax.with_sharding_constraint(r * 2, row)

    text = jit(batching.vmap(f)).lower(value).as_text()
    assert "sharding_constraint" in text and "{?}" in text, text
    first = mesh.axis_names[0]
    if first != mesh.axis_names[-1]:
        spmd = jit(batching.vmap(f, spmd_axis_name=first))
        assert f'[{{"{first}"}}, {{"{mesh.axis_names[-1]}"}}]' in spmd.lower(value).as_text()
        _close(spmd(value), 2 * value)


def test_transformations_of_sharded_programs(split):
    value, w = _value(), _value(seed=1)
    x = array.device_put(value, split)

    def mlp(a, b):
        return jnp.sum(jnp.tanh(a @ b) ** 2)

    expected = ad.grad(mlp)(value, w)
    _close(jit(ad.grad(mlp))(x, w), expected, 1e-4)
    _close(ad.grad(jit(mlp))(x, w), expected, 1e-4)
    _close(jit(batching.vmap(jnp.sin))(x), np.sin(value))

    def step(c, r):
        return c * 0.5 + r, jnp.sum(c)

    carry, ys = jit(lambda a: lax.scan(step, a[0], a))(x)
    c1, y1 = lax.scan(step, jnp.asarray(value[0]), jnp.asarray(value))
    _close(carry, c1)
    _close(ys, y1, 1e-4)
    _close(jit(lambda p, a: lax.cond(p, jnp.sin, jnp.cos, a))(False, x), np.cos(value))
    sq = remat.checkpoint(lambda a: jnp.sum(jnp.sin(a) ** 2))
    _close(jit(ad.grad(sq))(x), 2 * np.sin(value) * np.cos(value), 1e-4)

    @custom_derivatives.custom_vjp
    def double(a):
        return 2 * a

    double.defvjp(lambda a: (2 * a, None), lambda _, g: (3 * g,))
    _close(jit(ad.grad(lambda a: jnp.sum(double(a))))(x), np.full_like(value, 3.0))


def test_bare_specs_follow_the_mesh_in_context():
    a = make_mesh((2, 4), ("x", "y"), axis_types=AxisType.Auto)
    b = make_mesh((4, 2), ("x", "y"), axis_types=AxisType.Auto)
    f = jit(lambda v: v + 1, in_shardings=P("x", "y"))
    value = _value()
    with set_mesh(a):
        assert f(value).sharding == NamedSharding(a, P("x", "y"))
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logging.getLogger("polyjax").addHandler(handler)
    try:
        with set_mesh(b), explain_cache_misses(True):
            out = f(value)
    finally:
        logging.getLogger("polyjax").removeHandler(handler)
    assert out.sharding == NamedSharding(b, P("x", "y"))
    _close(out, value + 1)
    message = "\n".join(r.getMessage() for r in records)
    assert "the mesh in context changed" in message, message


def test_jit_shardings_hold_under_transformations(split, partial):
    value = _value()
    x = array.device_put(value, split)
    f = jit(lambda a: jnp.sin(a) * 2, out_shardings=partial)
    primal, tangent = ad.jvp(f, (x,), (x,))
    assert primal.sharding == partial and tangent.sharding == partial
    _close(tangent, np.cos(value) * 2 * value)
    g = ad.grad(lambda a: jnp.sum(f(a)))(x)
    _close(g, np.cos(value) * 2)
    _close(batching.vmap(f)(x), np.sin(value) * 2)
    # inside an outer jit, the inner one's shardings constrain its outputs there
    outer = jit(lambda a: f(a) + 1)
    assert "sdy.sharding_constraint" in outer.lower(x).as_text()
    out = outer(x)
    assert out.sharding.is_equivalent_to(partial, 2), out.sharding
    _close(out, np.sin(value) * 2 + 1)
