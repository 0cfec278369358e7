import re

import polyjax_sharding


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax_sharding.__version__)


def test_every_exported_name_exists():
    assert polyjax_sharding.__all__ == sorted(polyjax_sharding.__all__)
    for name in polyjax_sharding.__all__:
        assert getattr(polyjax_sharding, name) is not None, name


def test_one_device_mesh_in_the_main_process():
    # The main test session has one device: what works there, checked without a subprocess.
    from polyjax_sharding import NamedSharding, make_mesh
    from polyjax_sharding import PartitionSpec as P

    mesh = make_mesh((1, 1), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    assert s.shard_shape((3, 5)) == (3, 5) and s.is_fully_replicated
    assert s.num_devices == 1 and s._to_xla_hlo_sharding(2).is_replicated()
