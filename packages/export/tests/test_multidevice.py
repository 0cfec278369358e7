"""Runs each `multidevice/md_*.py` file on 8 host devices, in a pytest process of its own."""

import pathlib

import pytest

from polyjax_interpreters.multidevice import md_files, run_file

_DIR = pathlib.Path(__file__).resolve().parent / "multidevice"


def test_there_are_multidevice_files():
    assert {p.name for p in md_files(_DIR)} >= {"md_sharded.py"}


@pytest.mark.parametrize("path", md_files(_DIR), ids=lambda p: p.stem)
def test_on_8_host_devices(path, pytestconfig):
    run_file(path, num_devices=8, pytestconfig=pytestconfig).assert_passed()
