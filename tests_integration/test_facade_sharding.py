"""The facade's sharding names: `polyjax.sharding`, `polyjax.P`, `make_mesh`, `set_mesh`."""

import pathlib
import subprocess
import sys

import polyjax
import polyjax_core
import polyjax_sharding

_NAMES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "jax_api_names.txt"


def _jax_names(namespace):
    if not _NAMES.exists():  # the list lives beside the repository, outside it
        return None
    for line in _NAMES.read_text().splitlines():
        if line.startswith(namespace + ": "):
            return set(line.split(": ", 1)[1].split())
    raise AssertionError(f"{namespace} is not in {_NAMES}")


def test_polyjax_sharding_names_are_jax_sharding_names():
    names = set(polyjax.sharding.__all__)
    jax_names = _jax_names("jax.sharding")
    # `use_mesh` is JAX's earlier name for `with set_mesh(...)`, which the issue asks for.
    if jax_names is not None:
        assert names - {"use_mesh"} <= jax_names
    for name in names:
        assert getattr(polyjax.sharding, name) is getattr(polyjax_sharding, name)


def test_top_level_names():
    assert polyjax.P is polyjax_core.PartitionSpec is polyjax.sharding.PartitionSpec
    assert polyjax.NamedSharding is polyjax.sharding.NamedSharding
    assert polyjax.make_mesh is polyjax_sharding.make_mesh
    assert polyjax.set_mesh is polyjax.sharding.set_mesh
    assert {"P", "NamedSharding", "make_mesh", "set_mesh"} <= set(polyjax.__all__)


def test_p_does_not_load_jaxlib():
    code = "import polyjax, sys\npolyjax.P('x', None)\nprint('jaxlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_one_device_workflow():
    mesh = polyjax.make_mesh((1,), ("x",))
    with polyjax.set_mesh(mesh):
        assert polyjax.sharding.get_mesh() == mesh
        assert polyjax.sharding.get_abstract_mesh() == mesh.abstract_mesh
    s = polyjax.NamedSharding(mesh, polyjax.P("x"))
    assert s.devices_indices_map((4,)) == {polyjax.devices()[0]: (slice(0, 4),)}


def test_polyjax_debug_names_are_jax_debug_names():
    jax_names = _jax_names("jax.debug")
    if jax_names is not None:
        assert set(polyjax.debug.__all__) <= jax_names
    assert polyjax.debug.visualize_sharding is polyjax_sharding.visualize_sharding
    assert polyjax.debug.visualize_array_sharding is polyjax_sharding.visualize_array_sharding
