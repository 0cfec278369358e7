"""Runs each `multidevice/md_*.py` file on 8 host devices, in a pytest process of its own.

A failure names the inner tests that failed and shows their errors; to debug
one file directly: ``JAX_NUM_CPU_DEVICES=8 JAX_PLATFORMS=cpu uv run --locked
python -m pytest -o python_files='md_*.py' packages/sharding/tests/multidevice/md_mesh.py``.
"""

import pathlib

import pytest

from polyjax_interpreters.multidevice import md_files, run_file

_DIR = pathlib.Path(__file__).resolve().parent / "multidevice"


def test_there_are_multidevice_files():
    assert {p.name for p in md_files(_DIR)} >= {
        "md_mesh.py",
        "md_named_sharding.py",
        "md_shard_map.py",
        "md_xmap.py",
        "md_visualize.py",
        "md_vma.py",
    }


@pytest.mark.parametrize("path", md_files(_DIR), ids=lambda p: p.stem)
def test_on_8_host_devices(path, pytestconfig):
    run_file(path, num_devices=8, pytestconfig=pytestconfig).assert_passed()
