"""JAX 0.10.2's public names against polyjax's, module by module (issue 20 point 6).

The names polyjax lacks are committed (tests_integration/data/api_names_missing.txt,
written by tools/api_names.py with docs/api-coverage.md). These tests fail on a
regression (a name polyjax had is gone) and on a stale list or table (a name
appeared: rerun `uv run --no-sync python tools/api_names.py`), not on every name
still missing: other issues own those.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "api_names.py"
_spec = importlib.util.spec_from_file_location("_tools_api_names", TOOL)
api_names = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_names)

JAX_NAMES = api_names.read_names(api_names.JAX_NAMES)
COMMITTED = api_names.read_names(api_names.MISSING)


@pytest.fixture(scope="module")
def missing():
    return api_names.missing_now(JAX_NAMES)


def _diff(a: dict[str, list[str]], b: dict[str, list[str]]) -> list[str]:
    return [f"{m}.{n}" for m, names in a.items() for n in names if n not in b.get(m, ())]


def test_no_name_polyjax_had_is_gone(missing):
    lost = _diff(missing, COMMITTED)
    assert not lost, f"polyjax no longer has: {lost}"


def test_missing_list_is_current(missing):
    gained = _diff(COMMITTED, missing)
    assert not gained, f"now implemented, rerun tools/api_names.py: {gained}"


def test_coverage_table_is_current():
    assert api_names.DOC.read_text() == api_names.render(JAX_NAMES, COMMITTED)


def test_names_left_out_on_purpose_are_jax_names_polyjax_lacks():
    for module, reasons in api_names.ON_PURPOSE.items():
        assert set(reasons) <= set(COMMITTED.get(module, ())), module
        assert all(len(why) > 20 for why in reasons.values())


def test_a_lost_name_is_reported(missing):
    # The comparison the first test makes, on a planted regression.
    planted = {m: list(ns) for m, ns in missing.items()}
    planted["jax.numpy"] = [*planted.get("jax.numpy", []), "sum"]
    assert _diff(planted, COMMITTED) == ["jax.numpy.sum"]
