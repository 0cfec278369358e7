"""Fixtures of the 8-device tests (run by ../test_multidevice.py in their own process)."""

import sys
from pathlib import Path

import pytest

from polyjax_interpreters import backends
from polyjax_sharding import AxisType, make_mesh

# The inner run sees only this directory (--confcutdir): the facade names shared
# with ../test_shard_map.py import by name (`from _sharding_facade import pj`).
sys.path.insert(0, str(Path(__file__).parent))

# The mesh shapes every multi-device test file covers, with their axis names.
MESH_SHAPES = {
    "8": ((8,), ("x",)),
    "2x4": ((2, 4), ("x", "y")),
    "4x2": ((4, 2), ("x", "y")),
    "2x2x2": ((2, 2, 2), ("x", "y", "z")),
}


@pytest.fixture(scope="session", autouse=True)
def _eight_host_devices():
    n = len(backends.devices())
    assert n == 8, (
        f"these tests need 8 host devices but the backend has {n}: run them through "
        "polyjax_interpreters.multidevice.run_file (test_multidevice.py), which sets "
        "JAX_NUM_CPU_DEVICES=8"
    )


@pytest.fixture(scope="session")
def devices():
    return backends.devices()


@pytest.fixture(params=sorted(MESH_SHAPES), scope="session")
def mesh_shape(request):
    """Each mesh shape in turn: (axis sizes, axis names)."""
    return MESH_SHAPES[request.param]


@pytest.fixture(scope="session")
def mesh(mesh_shape):
    """A mesh of each shape in turn, with Auto axes."""
    return make_mesh(*mesh_shape, axis_types=AxisType.Auto)
