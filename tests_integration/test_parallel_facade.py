"""The facade's per-device maps: polyjax.shard_map, polyjax.pmap,
polyjax.experimental.shard_map (JAX's older names) and polyjax.experimental.maps.xmap,
on the one device of the main test session (8-device checks: the md_* files)."""

import numpy as np
import pytest

import polyjax as jax
from polyjax import lax
from polyjax.experimental.maps import xmap

with pytest.warns(DeprecationWarning, match="polyjax.shard_map"):  # deprecated, as in JAX
    from polyjax.experimental.shard_map import shard_map as old_shard_map


def test_shard_map_pmap_and_old_names():
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    x = np.arange(4.0, dtype=np.float32)
    f = jax.shard_map(lambda a: lax.psum(a, "x") * 2, mesh=mesh, in_specs=jax.P("x"),
                      out_specs=jax.P())  # fmt: skip
    np.testing.assert_allclose(f(x), 2 * x)
    g = old_shard_map(lambda a: lax.psum(a, "x") * 2, mesh, jax.P("x"), jax.P(), check_rep=True)
    np.testing.assert_allclose(g(x), 2 * x)
    with pytest.raises(ValueError, match="require replication"):
        old_shard_map(lambda a: a, mesh, jax.P("x"), jax.P())(x)
    old_shard_map(lambda a: a, mesh, jax.P("x"), jax.P(), check_rep=False)(x)
    np.testing.assert_allclose(jax.pmap(lambda v: v + 1)(x[:1]), x[:1] + 1)
    assert "shard_map" in jax.__all__ and "pmap" in jax.__all__


def test_xmap_vectorized():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = xmap(lambda v: v - lax.pmean(v, "i"), in_axes=["i", ...], out_axes=["i", ...])
    np.testing.assert_allclose(f(x), x - x.mean(0))
