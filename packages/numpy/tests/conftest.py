"""Fixtures and helper modules shared by the polyjax-numpy tests."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

import pytest
from hypothesis import settings

# Hypothesis's per-example deadline is a timing assertion: on a loaded CI machine
# it fails tests whose results are right. Examples are judged by what they compute.
settings.register_profile("polyjax", deadline=None)
settings.load_profile("polyjax")

_HERE = pathlib.Path(__file__).resolve().parent
_TOOL = _HERE.parents[2] / "tools" / "api_coverage.py"


def _load(name: str, path: pathlib.Path) -> ModuleType:
    """The module at `path`, imported once under `name`."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]


# With --import-mode=importlib no test directory is on sys.path: registered here
# (pytest loads this file before the test modules beside it), the helpers shared by
# the jnp test modules import by name: `from _jnp_helpers import wide`.
_load("_jnp_helpers", _HERE / "_jnp_helpers.py")


@pytest.fixture(scope="session")
def api_coverage() -> ModuleType:
    """tools/api_coverage.py, which renders the coverage tables the coverage tests check."""
    return _load("_polyjax_api_coverage", _TOOL)
