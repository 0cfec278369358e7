"""Running tests on several host devices from a test session that has one.

jaxlib's CPU client fixes its number of devices when it starts, and in the
main test session (README's ``pytest -n 2``) other tests start it with one
device per xdist worker. Tests that need 8 devices therefore live in their own
files, named ``md_*.py`` (pytest's default ``test_*.py`` pattern does not
collect them), in a ``multidevice/`` directory, written as ordinary pytest
tests (fixtures, parametrize, hypothesis). `run_file` runs one such file in a
fresh pytest process whose backend has ``num_devices`` host devices
(``JAX_NUM_CPU_DEVICES``, ``JAX_PLATFORMS=cpu``), and `Report.assert_passed`
fails naming each inner test that failed, with its error. One process per
file: a file is the unit that pays the ~2 s start-up.

Use: one outer test per package, parametrized over `md_files(directory)`::

    @pytest.mark.parametrize("path", md_files(HERE / "multidevice"), ids=lambda p: p.stem)
    def test_on_8_host_devices(path, pytestconfig):
        run_file(path, num_devices=8, pytestconfig=pytestconfig).assert_passed()

It needs only the standard library and pytest (in the test process).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

__all__ = ["InnerResult", "Report", "md_files", "run_file"]

# What a failure message shows of each failing inner test's traceback.
_MAX_LINES = 40


@dataclasses.dataclass(frozen=True)
class InnerResult:
    """One test of the inner run: its id, "passed"/"failed"/"error"/"skipped", and why."""

    test_id: str
    outcome: str
    message: str


@dataclasses.dataclass(frozen=True)
class Report:
    """What the inner pytest process did."""

    path: Path
    returncode: int
    results: list[InnerResult]
    output: str

    def assert_passed(self) -> None:
        """Fails unless every inner test passed (skips count as failures: none are allowed)."""
        bad = [r for r in self.results if r.outcome != "passed"]
        if not self.results or bad or self.returncode != 0:
            lines = [f"{self.path.name} on several devices: {len(bad)} of "]
            lines[0] += f"{len(self.results)} inner tests did not pass (exit {self.returncode})"
            for r in bad:
                tail = r.message.splitlines()[-_MAX_LINES:]
                lines += [f"--- {r.outcome.upper()}: {r.test_id}", *tail]
            if not bad:
                lines += ["--- inner pytest output:", *self.output.splitlines()[-_MAX_LINES:]]
            raise AssertionError("\n".join(lines))


def md_files(directory: Path) -> list[Path]:
    """The multi-device test files of ``directory``, sorted."""
    return sorted(Path(directory).glob("md_*.py"))


def _results(junit_xml: Path) -> list[InnerResult]:
    results = []
    for case in ET.parse(junit_xml).getroot().iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            node = case.find(kind)
            if node is not None:
                outcome = "failed" if kind == "failure" else kind
                message = "\n".join(filter(None, [node.get("message", ""), node.text or ""]))
                break
        results.append(InnerResult(test_id, outcome, message))
    return results


def run_file(
    path: Path,
    *,
    num_devices: int = 8,
    pytestconfig: Any = None,
    timeout: float = 600,
) -> Report:
    """Runs the tests of ``path`` in a new pytest process with ``num_devices`` host devices.

    Args:
      path: an ``md_*.py`` file.
      num_devices: how many CPU devices the inner backend has.
      pytestconfig: the outer session's config, whose ``filterwarnings`` the
        inner run inherits (so warnings that are errors stay errors).
      timeout: seconds before the inner run is stopped.

    Returns:
      The `Report`.
    """
    path = Path(path).resolve()
    env = dict(os.environ)
    env.update(JAX_NUM_CPU_DEVICES=str(num_devices), JAX_PLATFORMS="cpu")
    env.pop("PYTEST_XDIST_WORKER", None)
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "report.xml"
        cmd = [
            sys.executable, "-m", "pytest", str(path),
            "-c", os.devnull,
            "--rootdir", str(path.parent),
            "--confcutdir", str(path.parent),
            "--import-mode=importlib",
            "-p", "no:cacheprovider",
            "-o", "python_files=md_*.py",
            "-o", "junit_family=xunit1",
            f"--junitxml={junit}",
            "-q",
        ]  # fmt: skip
        if pytestconfig is not None:
            warnings = pytestconfig.getini("filterwarnings")
            if warnings:
                cmd += ["-o", "filterwarnings=" + "\n".join(warnings)]
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=path.parent
        )
        results = _results(junit) if junit.exists() else []
    return Report(path, proc.returncode, results, proc.stdout + proc.stderr)
