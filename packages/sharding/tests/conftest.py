"""Fixtures and helpers shared by the polyjax-sharding tests.

Tests that need several devices are ``multidevice/md_*.py``; `test_multidevice.py`
runs each of those files in a pytest process of its own with 8 host devices
(`_multidevice.py` says how, and how other packages' tests can do the same).
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

_HERE = pathlib.Path(__file__).resolve().parent


def _load(name: str, path: pathlib.Path) -> ModuleType:
    """The module at `path`, imported once under `name`."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


# With --import-mode=importlib no test directory is on sys.path: registered here,
# the helper imports by name in the test modules (`from _multidevice import run_file`).
_load("_multidevice", _HERE / "_multidevice.py")
