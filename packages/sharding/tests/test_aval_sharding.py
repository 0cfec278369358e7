"""`typeof(x).sharding`: the sharding an abstract value carries, as JAX 0.10.2 reports it.

polyjax's avals carry no sharding of their own yet (docs/sharding.md), so every
aval reports JAX's default: a `NamedSharding` over the abstract mesh in context
(the empty one outside any) with one ``None`` per dimension. Expected reprs are
the ones JAX 0.10.2 prints.
"""

import numpy as np
import pytest

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy import random
from polyjax_sharding import AbstractMesh, NamedSharding, make_mesh, set_mesh
from polyjax_sharding import PartitionSpec as P

# shape -> the spec as JAX 0.10.2 prints it
SPECS = {(): "P()", (3,): "P(None,)", (2, 3): "P(None, None)", (1, 2, 3): "P(None, None, None)"}


@pytest.mark.parametrize("shape", list(SPECS))
def test_default_sharding_outside_any_mesh(shape):
    s = ShapedArray(shape, np.dtype(np.float32)).sharding
    assert isinstance(s, NamedSharding)
    assert s.spec == P(*(None,) * len(shape)) and s.mesh.empty and s.memory_kind is None
    expected = f"NamedSharding(mesh=AbstractMesh((), axis_types=()), spec={SPECS[shape]})"
    assert repr(s) == expected


def test_arrays_and_keys_report_their_rank():
    assert repr(get_aval(jnp.ones(3)).sharding) == (
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"
    )
    keys = random.split(random.key(0), 4).reshape(2, 2)  # the key axes only
    assert get_aval(keys).sharding.spec == P(None, None)


def test_inside_a_mesh_and_under_jit():
    mesh = make_mesh((1,), ("x",))
    seen = []
    with set_mesh(mesh):
        s = get_aval(jnp.ones(3)).sharding
        jit(lambda x: seen.append(get_aval(x).sharding) or x)(jnp.ones(3))
    assert s.mesh == mesh.abstract_mesh and s.spec == P(None)
    assert repr(s).startswith("NamedSharding(mesh=AbstractMesh('x': 1, axis_types=(Explicit,)")
    assert repr(s).endswith("spec=P(None,))")
    assert seen == [s]


def test_a_sharding_over_an_abstract_mesh_has_no_devices():
    s = NamedSharding(AbstractMesh((2,), ("x",)), P("x"))
    assert s.spec == P("x") and s == NamedSharding(AbstractMesh((2,), ("x",)), P("x"))
    assert s != NamedSharding(AbstractMesh((2,), ("x",)), P())
    with pytest.raises(ValueError, match="device_set is not implemented"):
        s.device_set
    with pytest.raises(ValueError, match="not found in mesh"):
        NamedSharding(AbstractMesh((2,), ("x",)), P("y"))
    concrete = make_mesh((1,), ("x",))
    assert "memory_kind=device" in repr(NamedSharding(concrete, P("x")))
