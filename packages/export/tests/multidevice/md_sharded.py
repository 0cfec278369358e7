"""JAX's sharded artifact (a 2x2 mesh, `nr_devices` 4) called on 4 of the host devices."""

import numpy as np
import pytest
from _golden import DIR, load

from polyjax_interpreters.array import device_put
from polyjax_interpreters.backends import devices
from polyjax_interpreters.jit import jit
from polyjax_sharding import make_mesh

_ARRAYS = np.load(DIR / "arrays.npz")


@pytest.fixture
def mesh():
    return make_mesh((2, 2), ("x", "y"), devices=devices()[:4])


def test_sharded_call_under_jit_gives_jax_results(mesh):
    exp = load("sharded")
    (s_in,), (s_out,) = exp.in_shardings_jax(mesh), exp.out_shardings_jax(mesh)
    assert str(s_in.spec) == "P('x', 'y')" and str(s_out.spec) == "P('x', None)"
    x = device_put(_ARRAYS["sharded__call0_arg0"], s_in)
    out = jit(exp.call)(x)
    np.testing.assert_allclose(np.asarray(out), _ARRAYS["sharded__call0_out0"], rtol=1e-6)
    assert len(out.sharding.device_set) == 4
    assert out.sharding.is_equivalent_to(s_out, 2)  # the artifact's result sharding


def test_sharded_call_on_the_wrong_number_of_devices(mesh):
    exp = load("sharded")
    x = _ARRAYS["sharded__call0_arg0"]
    with pytest.raises(ValueError, match="exported for 4 devices"):
        exp.call(x)


def test_explicitly_typed_export_round_trips_types_shardings_and_values():
    # Explicit mode (docs/explicit-sharding.md): the avals' types are the shardings
    # serialization stores (as JAX 0.10.2's in_shardings_jax gives them), and come back.
    import polyjax_numpy.numpy as jnp
    from polyjax_export import deserialize, export
    from polyjax_sharding import NamedSharding, reshard, set_mesh
    from polyjax_sharding import PartitionSpec as P

    mesh = make_mesh((2, 4), ("a", "b"))
    X = np.arange(32, dtype=np.float32).reshape(8, 4) / 8
    W = np.arange(32, dtype=np.float32).reshape(4, 8) / 8
    with set_mesh(mesh):
        x = device_put(X, NamedSharding(mesh, P("a", None)))
        w = device_put(W, NamedSharding(mesh, P(None, "b")))

        def f(x, w):
            x2 = reshard(x, P("a", "b"))
            partial = jnp.dot(x2, x2.T, out_sharding=P("a", None, unreduced={"b"}))
            return jnp.sin(x @ w), partial, reshard(partial, P("a", None))

        exp = deserialize(export(jit(f))(x, w).serialize())
        types = [str(a) for a in (*exp.in_avals, *exp.out_avals)]
        assert types == [
            "float32[8@a,4]",
            "float32[4,8@b]",
            "float32[8@a,8@b]",
            "float32[8@a,8]{U:b}",
            "float32[8@a,8]",
        ]
        specs = [s.spec for s in (*exp.in_shardings_jax(mesh), *exp.out_shardings_jax(mesh))]
        assert specs[:3] == [P("a", None), P(None, "b"), P("a", "b")]
        assert specs[3].unreduced == {"b"}
        for call in (exp.call, jit(exp.call)):
            y, partial, summed = call(x, w)
            assert str(y.aval) == "float32[8@a,8@b]" and y.sharding.spec == P("a", "b")
            np.testing.assert_allclose(np.asarray(y), np.sin(X @ W), rtol=1e-5)
            np.testing.assert_allclose(np.asarray(summed), X @ X.T, rtol=1e-5)
            assert str(partial.aval) == "float32[8@a,8]{U:b}"
