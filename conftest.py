"""Runs the `>>>` examples in the packages' docstrings as doctests.

Collected from `packages/*/src` (listed in `testpaths`). Each example imports what it
uses, so that it reads whole where it is written. The isolated installs
(tools/check_isolated.py) run only each package's `tests/`, without this file.
"""

from __future__ import annotations

import pathlib

import pytest
from _pytest.doctest import DoctestModule
from hypothesis import settings

# Hypothesis's per-example deadline is a timing assertion: on a loaded CI machine
# it fails tests whose results are right. Examples are judged by what they compute.
settings.register_profile("polyjax", deadline=None)
settings.load_profile("polyjax")

_SRC = [p.resolve() for p in pathlib.Path(__file__).parent.glob("packages/*/src")]


def _in_src(path: pathlib.Path) -> bool:
    return any(path.is_relative_to(src) for src in _SRC)


# Importing polyjax.as_jax installs its `jax` import hook, which would change this
# process for every later test: its examples run in a fresh interpreter instead
# (packages/polyjax/tests/test_as_jax.py).
_OWN_PROCESS = ("as_jax",)


def pytest_collect_file(file_path: pathlib.Path, parent: pytest.Collector):
    if file_path.suffix == ".py" and _in_src(file_path) and _OWN_PROCESS[0] not in file_path.parts:
        return DoctestModule.from_parent(parent, path=file_path)
    return None
