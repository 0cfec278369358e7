#!/usr/bin/env python3
"""The lowest sibling versions each package's dependency ranges allow, and where to build them.

Usage:
    uv run --locked python tools/min_versions.py     # print the plan

A package declares ranges on its siblings (`polyjax-core>=0.1,<0.2`). Its tests normally
run against the workspace's versions; this tool finds, per package, the siblings whose
LOWEST released version inside that range is older than the workspace's, and the git
ref to build that release from. `tools/check_isolated.py --lowest` builds those wheels
and runs the package's tests against them (docs/releasing.md, "Minimum versions").

A version counts as released when a tag `DIST==X.Y.Z` exists, or when the package holds
its API snapshot `packages/<dir>/api/X.Y.Z.json` (written by tools/release.py at
release; a clean checkout may have no tags). The release is built from the tag, else
from the commit that added the snapshot. A range whose lowest allowed release is the
workspace's version needs no extra run: that is the case today, every package being at
its first version. Standard library only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import release  # noqa: E402  (tools/release.py: versions and ranges)

REPO_ROOT = Path(__file__).resolve().parent.parent


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    return proc.stdout if proc.returncode == 0 else ""


def released_versions(root: Path, pkg: release.Package) -> dict[str, str]:
    """{version: git ref to build it from} of the package's releases."""
    out: dict[str, str] = {}
    for snap in sorted((pkg.dir / "api").glob("*.json")):
        if release._VERSION_RE.match(snap.stem):
            rel = str(snap.relative_to(root))
            commit = _git(root, "log", "--diff-filter=A", "--format=%H", "-1", "--", rel).strip()
            if commit:
                out[snap.stem] = commit
    for tag in _git(root, "tag", "--list", f"{pkg.dist}==*").split():
        version = tag.split("==", 1)[1]
        if release._VERSION_RE.match(version):
            out[version] = tag  # a tag wins over the snapshot's commit
    return out


def lowest_siblings(
    root: Path, packages: dict[str, release.Package], dist: str
) -> dict[str, tuple[str, str]]:
    """{sibling: (version, ref)} for the siblings whose lowest allowed release is older
    than the workspace's version."""
    out = {}
    for req in packages[dist].dependencies:
        name, _, spec, rest = release.split_requirement(req)
        sib = packages.get(release.normalize(name))
        if sib is None or rest.lstrip().startswith("@"):
            continue
        allowed = [
            (release.parse_version(v), v, ref)
            for v, ref in released_versions(root, sib).items()
            if release.satisfies(v, spec)
        ]
        if not allowed:
            continue  # only the unreleased workspace version fits: nothing older to test
        _, version, ref = min(allowed)
        if release.parse_version(version) < release.parse_version(sib.version):
            out[sib.dist] = (version, ref)
    return out


def plan(root: Path, dists: list[str] | None = None) -> dict[str, dict[str, tuple[str, str]]]:
    """{package: lowest_siblings} for the packages (all by default) that need a run."""
    packages = release.load_packages(root)
    chosen = dists or list(packages)
    return {d: low for d in chosen if (low := lowest_siblings(root, packages, d))}


def main(argv: list[str] | None = None) -> int:
    root = REPO_ROOT
    todo = plan(root)
    if not todo:
        print("every sibling range's lowest allowed release is the workspace's version")
    for dist, low in todo.items():
        pins = ", ".join(f"{s}=={v} (from {ref[:12]})" for s, (v, ref) in low.items())
        print(f"{dist}: {pins}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
