"""shard_map, pmap and xmap on the one device of the main test session: the printed
jaxpr, the rules on a one-device mesh, and the errors raised before any device work
(the 8-device checks are in multidevice/md_shard_map.py and md_xmap.py)."""

import numpy as np
import pytest
from _sharding_facade import pj  # on sys.path by the conftest

import polyjax_numpy.numpy as jnp
from polyjax_numpy import lax
from polyjax_sharding import (
    AxisType,
    shard_map,
    shard_map_p,
)
from polyjax_sharding import PartitionSpec as P


@pytest.fixture(scope="module")
def mesh():
    # Auto: over an Explicit mesh shard_map checks the (NumPy) operands' types
    # against in_specs, as JAX does (multidevice/md_explicit.py).
    return pj.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))


def test_jaxpr_shows_the_primitive_and_block_shapes(mesh):
    f = shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
    text = str(pj.make_jaxpr(f)(np.ones((4, 2), np.float32)))
    assert "shard_map[" in text and "psum[axes=('x',)" in text
    assert "in_specs=(P('x',),)" in text and "out_specs=(P(),)" in text
    assert "devices" not in text  # the hidden param is not printed
    assert shard_map_p.multiple_results


def test_one_device_mesh_under_transformations(mesh):
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    f = shard_map(lambda a: jnp.sin(a) * lax.psum(a, "x"), mesh=mesh, in_specs=P("x"),
                  out_specs=P("x"))  # fmt: skip
    want = np.sin(x) * x
    np.testing.assert_allclose(f(x), want, rtol=1e-6)
    np.testing.assert_allclose(pj.jit(f)(x), want, rtol=1e-6)
    np.testing.assert_allclose(pj.vmap(f)(np.stack([x, x])), np.stack([want, want]), rtol=1e-6)
    g = pj.grad(lambda a: jnp.sum(f(a)))(x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), rtol=1e-5)
    p = pj.pmap(lambda v: lax.psum(v, "i") + 1, axis_name="i")
    np.testing.assert_allclose(p(np.ones((1, 2), np.float32)), np.full((1, 2), 2.0))


def test_errors_before_running(mesh):
    x = np.ones((3, 2), np.float32)
    with pytest.raises(TypeError, match="callable"):
        shard_map(3, mesh=mesh, in_specs=P(), out_specs=P())
    with pytest.raises(ValueError, match="not an axis of the mesh"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("z"), out_specs=P())(x)
    with pytest.raises(ValueError, match="uses the mesh axis 'x' twice"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("x", "x"), out_specs=P())(x)
    with pytest.raises(ValueError, match="has rank 2"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=P(None, None, "x"))(x)
    with pytest.raises(ValueError, match="pytree prefix of the arguments"):
        shard_map(lambda a: a, mesh=mesh, in_specs=(P(), P()), out_specs=P())(x)
    with pytest.raises(ValueError, match="require replication"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P())(x)
    with pytest.raises(NameError, match="unbound axis name: y"):
        shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P(), out_specs=P())(x)
    with pytest.raises(ValueError, match="requires at least one argument with a mapped axis"):
        pj.pmap(lambda v: v, in_axes=None)(x)
    with pytest.raises(ValueError, match=r"pmap in_axes specification must be a tree prefix"):
        pj.pmap(lambda v: v, in_axes=(0, 0))(x)


def test_psend_precv_in_a_body_print_as_jax_and_need_a_gpu(mesh):
    def body(a):
        t = lax.psend(a, "x", [(0, 0)])
        return lax.precv(t, np.ones(1, np.float32), "x", [(0, 0)])

    f = shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    lines = [line.strip() for line in str(pj.make_jaxpr(f)(np.ones(1, np.float32))).splitlines()]
    # JAX 0.10.2's lines (precv's result varies over no axis; shard_map casts it).
    want = [
        "d:Tok = psend[axis_name=('x',) perm=((0, 0),)] c",
        "e:f32[1] = precv[axis_name=('x',) out_shape=float32[1] perm=((0, 0),)] d",
        "f:f32[1]{V:x} = pvary[axes=('x',)] e",
    ]
    assert lines[5:8] == want
    with pytest.raises(NotImplementedError, match="psend is currently only implemented on GPU"):
        pj.jit(f)(np.ones(1, np.float32))
