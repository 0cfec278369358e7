"""Runs optax's own test suite on polyjax, under ``polyjax.as_jax``.

optax ships its tests inside its wheel; they import ``jax``, which the hook
resolves to polyjax. optax and absl-py are in the workspace's dev group::

    uv run --locked python tools/optax_suite.py [-k EXPR] [-n 2] [--causes 20]

``--subset`` runs the CI-sized subset instead (`SUBSET`: about 440 tests of
optax's transforms, losses, schedules, tree utilities and core pieces, which
README's test command runs through tests_integration/test_optax_subset.py).

Prints the passed/failed/skipped/error counts, the pass rate of the collected
tests, and the most common failure causes (exception type and first line of
the message). Any other arguments are passed on to pytest. The exit status is
0 when the run completed (whatever the pass rate), pytest's otherwise.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path


def _cause(element: ET.Element) -> str:
    """One line naming what failed: the exception and its message's first line."""
    lines = (element.get("message") or element.text or "").strip().splitlines()
    text = lines[0] if lines else ""
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    return text[:160]


def _summarize(report: Path, top: int) -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    causes: collections.Counter[str] = collections.Counter()
    skips: collections.Counter[str] = collections.Counter()
    failed: list[str] = []
    for case in ET.parse(report).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                causes[_cause(child)] += 1
                failed.append(f"{case.get('classname')}::{case.get('name')}: {_cause(child)}")
            elif child.tag == "skipped":
                outcome = "skipped"
                skips[_cause(child)] += 1
        counts[outcome] += 1
    total = sum(counts.values())
    print(
        f"optax suite on polyjax: {counts['passed']} passed, {counts['failed']} failed, "
        f"{counts['skipped']} skipped, {counts['error']} errors, of {total} collected"
    )
    if total:
        print(f"pass rate: {100.0 * counts['passed'] / total:.1f}% of collected tests")
    if causes and top:
        print(f"most common failure causes (top {top}):")
        for cause, n in causes.most_common(top):
            print(f"  {n:5d}  {cause}")
    if skips and top:
        print("skip reasons:")
        for cause, n in skips.most_common(top):
            print(f"  {n:5d}  {cause}")
    if failed:
        print("failed tests:")
        for line in sorted(failed):
            print(f"  {line}")
    return dict(counts)


# The CI-sized subset: whole test modules of optax, relative to its package directory.
SUBSET = (
    "transforms/_clipping_test.py",
    "transforms/_combining_test.py",
    "transforms/_masking_test.py",
    "transforms/_constraining_test.py",
    "transforms/_adding_test.py",
    "transforms/_conditionality_test.py",
    "losses/_regression_test.py",
    "losses/_ranking_test.py",
    "losses/_smoothing_test.py",
    "schedules/_schedule_test.py",
    "schedules/_join_test.py",
    "tree_utils/_tree_math_test.py",
    "tree_utils/_casting_test.py",
    "_src/base_test.py",
    "_src/update_test.py",
    "_src/numerics_test.py",
    "_src/combine_test.py",
    "_src/utils_test.py",
)
# Tests of the subset left out (by name), each with the reason.
SUBSET_DESELECTED = {
    # ClippingTest: assertAlmostEqual(0.9999999, 1.0) to 7 places; fails on JAX 0.10.2 too.
    "test_clip_by_block_rms",
}


def _subset_arguments() -> list[str]:
    """The subset's test files, as paths into the installed optax, and its deselection."""
    # find_spec of a top-level package locates it without running it (optax imports jax).
    spec = importlib.util.find_spec("optax")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("optax is not installed (it is in the workspace's dev group)")
    root = Path(spec.submodule_search_locations[0])
    files = [str(root / name) for name in SUBSET]
    return [*files, "-k", " and ".join(f"not {name}" for name in sorted(SUBSET_DESELECTED))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--causes", type=int, default=20, help="failure causes to list")
    parser.add_argument("--module", default="optax", help="package whose tests run")
    parser.add_argument("--subset", action="store_true", help="run the CI-sized subset only")
    args, pytest_args = parser.parse_known_args()
    if args.subset:
        pytest_args = _subset_arguments() + pytest_args
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        # An empty ini of its own keeps this repository's pytest settings and
        # conftest.py out of the run.
        (tmp_path / "pytest.ini").write_text("[pytest]\n")
        report = tmp_path / "report.xml"
        # Test files or ids given on the command line replace the whole package.
        targets = [str(Path(a).resolve()) for a in pytest_args if Path(a.split("::")[0]).exists()]
        options = [a for a in pytest_args if not Path(a.split("::")[0]).exists()]
        command = [
            sys.executable,
            "-m",
            "polyjax.as_jax",
            "-m",
            "pytest",
            *(targets or ["--pyargs", args.module]),
            "-q",
            "-c",
            str(tmp_path / "pytest.ini"),
            "-p",
            "no:cacheprovider",
            # pytest-xdist workers are fresh interpreters: loading the hook as a
            # plugin installs it in each of them.
            "-p",
            "polyjax.as_jax",
            f"--junitxml={report}",
            # Modules that need a package outside the group (flax) count as errors.
            "--continue-on-collection-errors",
            *options,
        ]
        proc = subprocess.run(command, cwd=tmp, stdout=subprocess.PIPE, text=True)
        tail = proc.stdout.strip().splitlines()[-1:] or [""]
        print(f"pytest: {tail[0]}")
        if not report.exists():
            print(proc.stdout[-5000:])
            return proc.returncode or 1
        _summarize(report, args.causes)
    # 0: all passed; 1: some failed. Anything else means the run itself broke.
    return 0 if proc.returncode in (0, 1) else proc.returncode


if __name__ == "__main__":
    sys.exit(main())
