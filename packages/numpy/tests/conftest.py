"""Fixtures shared by the polyjax-numpy tests."""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType

import pytest

_TOOL = pathlib.Path(__file__).resolve().parents[3] / "tools" / "api_coverage.py"


@pytest.fixture(scope="session")
def api_coverage() -> ModuleType:
    """tools/api_coverage.py, which renders the coverage tables the coverage tests check."""
    name = "_polyjax_api_coverage"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _TOOL)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    return sys.modules[name]
