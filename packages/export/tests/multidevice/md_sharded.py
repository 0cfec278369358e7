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
