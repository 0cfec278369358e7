"""The rest of JAX's top-level and small-module names (issue 20): fwd_and_bwd, ds,
version, checking_leaks, debug.log, extend.mlir/sharding, custom_vjp_primal_tree_values,
jet2."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax import custom_derivatives, debug
from polyjax.experimental.jet import jet, jet2
from polyjax.extend import mlir, sharding


def _f(x, w):
    return jnp.sum(jnp.sin(x) * w)


@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_matches_vjp(jitted):
    x, w = np.linspace(0.1, 1.0, 3, dtype=np.float32), np.float32([1.0, 2.0, 3.0])
    fwd, bwd = polyjax.fwd_and_bwd(_f, argnums=(0, 1), jitted=jitted)
    y, residuals = fwd(x, w)
    gx, gw = bwd(residuals, np.float32(1.0))
    np.testing.assert_allclose(y, np.sum(np.sin(x) * w), rtol=1e-6)
    np.testing.assert_allclose(gx, np.cos(x) * w, rtol=1e-6)
    np.testing.assert_allclose(gw, np.sin(x), rtol=1e-6)
    # One argnum: one cotangent; the other argument is held fixed.
    fwd, bwd = polyjax.fwd_and_bwd(_f, argnums=1, jitted=jitted)
    _, residuals = fwd(x, w)
    np.testing.assert_allclose(bwd(residuals, np.float32(2.0)), 2 * np.sin(x), rtol=1e-6)


def test_fwd_and_bwd_with_aux_and_bad_argnums():
    fwd, bwd = polyjax.fwd_and_bwd(lambda x: (jnp.sum(x**2), x * 3), argnums=0, has_aux=True)
    y, residuals, aux = fwd(np.float32([1.0, 2.0]))
    assert float(y) == 5.0
    np.testing.assert_array_equal(aux, [3.0, 6.0])
    np.testing.assert_array_equal(bwd(residuals, np.float32(1.0)), [2.0, 4.0])
    with pytest.raises(TypeError, match="argnums must be an int or ints"):
        polyjax.fwd_and_bwd(_f, argnums="x")


def test_top_level_names_are_the_working_ones():
    assert polyjax.reshard is polyjax.sharding.reshard
    x = polyjax.device_put(np.arange(4.0, dtype=np.float32))
    (shard,) = x.addressable_shards
    assert isinstance(shard, polyjax.Shard)
    made = polyjax.Shard(shard.device, x.sharding, (4,), x)
    assert (made.index, made.replica_id, made.data) == ((slice(None),), 0, x)
    np.testing.assert_array_equal(polyjax.jit(lambda x, i: x[polyjax.ds(i, 2)])(x, 1), [1, 2])
    assert polyjax.version.__version__ == polyjax.__version__
    assert polyjax.version.__version_info__[0] == int(polyjax.__version__.split(".")[0])
    with polyjax.checking_leaks():
        assert polyjax.config.jax_check_tracer_leaks is True
    with polyjax.debug_key_reuse(True):
        assert polyjax.config.jax_debug_key_reuse is True


def test_debug_log_writes_to_the_logger_eagerly_and_under_jit(caplog):
    with caplog.at_level(logging.INFO, logger="polyjax.debug"):
        debug.log("x={}", np.float32(1.5))
        polyjax.jit(lambda x: debug.log("y={y}", y=x * 2, ordered=True))(np.float32(2.0))
    assert [r.getMessage() for r in caplog.records] == ["x=1.5", "y=4.0"]
    with pytest.raises(IndexError):
        debug.log("{} {}", 1.0)
    jaxpr = polyjax.make_jaxpr(lambda x: debug.log("{}", x, ordered=True))(1.0)
    assert {type(e) for e in jaxpr.effects} == {debug.OrderedDebugEffect}
    unordered = polyjax.make_jaxpr(lambda x: debug.log("{}", x))(1.0)
    assert {type(e) for e in unordered.effects} == {debug.DebugEffect}


def test_extend_mlir_round_trips_a_portable_artifact():
    module = polyjax.jit(lambda x: x * 2).lower(np.float32(1)).compiler_ir()
    data = mlir.serialize_portable_artifact(module, "1.15.0")
    assert isinstance(data, bytes)
    with module.context:
        assert "stablehlo.multiply" in str(mlir.deserialize_portable_artifact(data))
    refined = mlir.refine_polymorphic_shapes(str(module).encode())
    assert isinstance(refined, bytes) and refined


def test_extend_sharding_converts_protos():
    hlo = sharding.xla_client.HloSharding.iota_tile((2, 1))
    data = sharding.get_serialized_proto_from_hlo_sharding(hlo)
    assert sharding.get_hlo_sharding_from_serialized_proto(data) == hlo
    assert list(
        sharding.get_op_sharding_from_serialized_proto(data).tile_assignment_dimensions
    ) == [2, 1]
    s = sharding.GSPMDSharding(polyjax.devices()[:1], sharding.xla_client.HloSharding.replicate())
    assert s.is_fully_replicated


def test_custom_vjp_primal_tree_values_unwraps_symbolic_zero_primals():
    seen = []

    @polyjax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        plain = custom_derivatives.custom_vjp_primal_tree_values((x, y))
        seen.append(type(plain[0]).__name__)
        return f(*plain), plain

    def bwd(res, g):
        x, y = res
        return g * y, g * x

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    assert float(polyjax.grad(f)(np.float32(2.0), np.float32(3.0))) == 3.0
    assert "CustomVJPPrimal" not in seen


def test_jet2_uses_plain_taylor_coefficients():
    x = np.float32(0.5)
    y, terms = jet2(jnp.exp, (x,), ((np.float32(1.0), np.float32(0.0)),))
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    # exp(x0 + t) = e^x0 * sum t^k / k!: the Taylor coefficients.
    np.testing.assert_allclose(terms, [np.exp(x) / math.factorial(k) for k in (1, 2)], rtol=1e-5)
    _, scaled = jet(jnp.exp, (x,), ((np.float32(1.0), np.float32(0.0)),))
    np.testing.assert_allclose(scaled, [np.exp(x)] * 2, rtol=1e-5)


def test_array_constructors_are_implicit_transfers_and_device_put_explicit():
    host = np.ones(2, np.float32)
    with polyjax.transfer_guard_host_to_device("disallow"):
        for make in (lambda: jnp.asarray(host), lambda: jnp.array([1.0, 2.0])):
            with pytest.raises(polyjax.errors.JaxRuntimeError, match="Disallowed host-to-device"):
                make()
        np.testing.assert_array_equal(polyjax.device_put(host), host)
        np.testing.assert_array_equal(jnp.arange(3), [0, 1, 2])  # an iota: no transfer
    np.testing.assert_array_equal(jnp.asarray(host), host)


def test_inspect_array_sharding_eagerly_and_once_per_compilation():
    x = polyjax.device_put(np.ones(3, np.float32))
    seen = []
    debug.inspect_array_sharding({"a": x, "b": x}, callback=seen.append)
    assert seen == [x.sharding, x.sharding]
    seen.clear()
    f = polyjax.jit(lambda v: debug.inspect_array_sharding(v * 2, callback=seen.append))
    f(x)
    f(x)  # compiled once: one callback
    assert seen == [polyjax.sharding.SingleDeviceSharding(x.sharding._device)]
    seen.clear()
    # Under grad and vmap (inside jit) it still reports, and it is never dead code.
    polyjax.jit(
        polyjax.grad(lambda v: (debug.inspect_array_sharding(v, callback=seen.append), v.sum())[1])
    )(x)
    polyjax.vmap(lambda v: debug.inspect_array_sharding(v, callback=seen.append))(jnp.ones((2, 3)))
    assert len(seen) == 2
