"""tools/optax_suite.py: its summary of a pytest JUnit report, and the group it needs.

Running optax's suite itself takes half an hour (docs/ecosystem.md); these
checks need neither optax nor a run.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
  <testcase classname="a.T" name="test_ok"/>
  <testcase classname="a.T" name="test_ok2"/>
  <testcase classname="a.T" name="test_print">
    <failure message="AttributeError: no print&#10;more">x</failure></testcase>
  <testcase classname="a.T" name="test_print2">
    <failure message="AttributeError: no print">x</failure></testcase>
  <testcase classname="a.T" name="test_skip"><skipped message="TPU only"/></testcase>
  <testcase classname="b" name="b"><error message="collection failure">x</error></testcase>
</testsuite></testsuites>
"""


def _tool():
    spec = importlib.util.spec_from_file_location(
        "_tools_optax_suite", REPO / "tools" / "optax_suite.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_summary_counts_rate_causes_and_failed_ids(tmp_path, capsys):
    report = tmp_path / "r.xml"
    report.write_text(_REPORT)
    counts = _tool()._summarize(report, top=5)
    assert counts == {"passed": 2, "failed": 2, "skipped": 1, "error": 1}
    out = capsys.readouterr().out
    assert "2 passed, 2 failed, 1 skipped, 1 errors, of 6 collected" in out
    assert "pass rate: 33.3% of collected tests" in out
    assert "    2  AttributeError: no print\n" in out
    assert "    1  TPU only\n" in out
    assert "  a.T::test_print: AttributeError: no print\n" in out


def test_dev_group_pins_optax_and_chex_and_never_installs_jax():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    group = project["dependency-groups"]["dev"]
    assert "optax==0.2.8" in group and "chex==0.1.92" in group
    assert any(dep.startswith("absl-py") for dep in group)
    # The jax package these libraries declare is never installed.
    assert any(o.startswith("jax;") for o in project["tool"]["uv"]["override-dependencies"])
    assert importlib.util.find_spec("optax") is not None
    assert importlib.util.find_spec("jax") is None
