"""tools/check_metadata.py: a package's metadata declares exactly what its code imports."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "_tools_check_metadata", REPO / "tools" / "check_metadata.py"
)
cm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cm)

SOURCE = """
from __future__ import annotations
import os, numpy.linalg
from fk_own import sub
from . import relative
TYPE_CHECKING = False
if TYPE_CHECKING:
    import scipy
else:
    import ml_dtypes

def later():
    from polyjax_core import tree_util
"""
WORKSPACE = {"polyjax_core": "polyjax-core", "fk_own": "fk-own"}


def test_imported_modules_reads_every_runtime_import():
    assert cm.imported_modules(SOURCE) == {"os", "numpy", "fk_own", "ml_dtypes", "polyjax_core"}


@pytest.mark.parametrize(
    "requires, problem",
    [
        (["numpy>=2", "ml_dtypes", "polyjax-core>=0.1,<0.2; python_version>='3'"], None),
        (["numpy>=2", "polyjax-core"], "imports ml_dtypes but does not declare ml-dtypes"),
        (
            ["numpy", "ml_dtypes", "polyjax-core", "rich>=13"],
            "declares rich but imports nothing from it",
        ),
        # a requirement that only an extra brings in does not count
        (["numpy", "ml_dtypes", "polyjax-core", "rich; extra == 'x'"], None),
    ],
)
def test_compare_declared_with_imported(requires, problem):
    got = cm.compare("fk-own", {"m.py": SOURCE}, requires, {"fk_own"}, WORKSPACE)
    assert got == [] if problem is None else got[0].startswith(f"fk-own: {problem}")


def test_unknown_module_is_reported():
    got = cm.compare("fk", {"m.py": "import no_such_module_here\n"}, [], set(), {})
    assert got == ["fk: imports modules no installed distribution provides: no_such_module_here"]


@pytest.mark.parametrize(
    "package",
    sorted(p.name for p in (REPO / "packages").iterdir() if (p / "pyproject.toml").exists()),
)
def test_each_workspace_package_declares_exactly_what_it_imports(package):
    # The sources' form of the check CI makes on each built wheel: a module that
    # starts importing a distribution fails here, before the isolated installs.
    assert cm.check_source(REPO / "packages" / package) == []
