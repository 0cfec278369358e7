"""tools/min_versions.py: which older sibling releases a package's ranges admit."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location(
    "_tools_min_versions", REPO / "tools" / "min_versions.py"
)
mv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mv)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not on PATH")


def _pyproject(d: Path, name: str, version: str, deps: list[str]) -> None:
    d.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(f'"{r}"' for r in deps)
    (d / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = [{listed}]\n'
    )


def _commit(root: Path, message: str) -> str:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(root)]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout


@needs_git
def test_lowest_release_from_snapshots_and_tags(tmp_path):
    root = tmp_path
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    base, top = root / "packages" / "base", root / "packages" / "top"
    _pyproject(base, "fk-base", "0.1.0", [])
    _pyproject(top, "fk-top", "0.1.0", ["fk-base>=0.1,<0.3"])
    (base / "api").mkdir()
    (base / "api" / "0.1.0.json").write_text("{}")
    first = _commit(root, "release fk-base 0.1.0").strip()
    # Nothing older than the workspace's version yet.
    assert mv.plan(root) == {}
    _pyproject(base, "fk-base", "0.2.0", [])
    (base / "api" / "0.2.0.json").write_text("{}")
    _commit(root, "release fk-base 0.2.0")
    # fk-top's range admits 0.1.0, built from the commit that added its snapshot.
    assert mv.plan(root) == {"fk-top": {"fk-base": ("0.1.0", first)}}
    # A tag wins over the snapshot's commit; a range that excludes 0.1.0 needs no run.
    subprocess.run(["git", "-C", str(root), "tag", "fk-base==0.1.0", first], check=True)
    assert mv.plan(root) == {"fk-top": {"fk-base": ("0.1.0", "fk-base==0.1.0")}}
    _pyproject(top, "fk-top", "0.1.0", ["fk-base>=0.2,<0.3"])
    assert mv.plan(root) == {}
