#!/usr/bin/env python3
"""Prepare the release of ONE polyjax package: bump, changelog, API snapshot, tag.

Usage:
    uv run python tools/release.py PACKAGE {major,minor,patch,X.Y.Z}
        [--dry-run] [--update-dependants] [--no-lock] [--date YYYY-MM-DD] [--root DIR]

PACKAGE is a distribution name (polyjax-core), an import name (polyjax_core) or a
directory name under packages/ (core). The tool

1. sets the static `[project] version` in packages/<dir>/pyproject.toml to the new
   version, which must be greater than the current one (or, given as X.Y.Z, may equal a
   current version newer than the last API snapshot: bumped during development along
   with an API break, as tools/api_gate.py requires);
2. renames the "## Unreleased" section of packages/<dir>/CHANGELOG.md to
   "## X.Y.Z (YYYY-MM-DD)", opens a fresh, empty "## Unreleased" above it, and lists
   under the new section the commits touching packages/<dir> since the package's last
   tag (`DIST==X.Y.Z`), or, with no tag, since the commit that recorded its API snapshot;
2b. compares the package's public API with its last API snapshot (tools/api_gate.py)
   and refuses a release that breaks it unless the bump is breaking (major, or minor
   below 1.0) and the changelog names each break; then writes packages/<dir>/api/X.Y.Z.json
   (older snapshots stay: each marks a release, for tools/min_versions.py);
3. looks for workspace packages whose declared range on this one excludes the new
   version, and prints each with the range it would need. With --update-dependants it
   rewrites those ranges (and notes the change in their Unreleased changelog sections);
   without it, it refuses to write anything, since the workspace could not be locked,
   unless --no-lock is given;
4. runs `uv lock` so uv.lock records the new version (skip with --no-lock);
5. prints the commit, the tag to create (e.g. `polyjax-core==0.2.0`), and the build and
   publish commands (`uv build --package DIST --no-sources`, `uv publish`). It creates
   no tag, makes no commit and publishes nothing.

No other package is touched. --dry-run prints what would change and writes nothing.
Exit status: 0 done, 1 refused or failed, 2 bad usage. Standard library only, but for
the API snapshot (griffe, from the workspace's dev group, through tools/api_gate.py).
"""

from __future__ import annotations

import argparse
import datetime
import operator
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

_VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


class ReleaseError(Exception):
    pass


def normalize(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_version(text: str) -> tuple[int, int, int]:
    m = _VERSION_RE.match(text.strip())
    if not m:
        raise ReleaseError(f"{text!r} is not a release version of the form X.Y.Z")
    return tuple(int(g) for g in m.groups())  # type: ignore[return-value]  # the regex has 3 groups


def fmt(v) -> str:
    return ".".join(str(x) for x in v)


def bumped(current: str, bump: str) -> str:
    major, minor, patch = parse_version(current)
    if bump == "major":
        return fmt((major + 1, 0, 0))
    if bump == "minor":
        return fmt((major, minor + 1, 0))
    if bump == "patch":
        return fmt((major, minor, patch + 1))
    new = fmt(parse_version(bump))
    if parse_version(new) <= (major, minor, patch):
        raise ReleaseError(f"{new} is not greater than the current version {current}")
    return new


# ---------------------------------------------------------------------------
# Version specifiers (enough of PEP 440 for X.Y.Z releases).

_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_SPEC_RE = re.compile(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9a-zA-Z.*+!-]*)\s*$")


def _release(text: str) -> tuple[int, ...]:
    m = re.match(r"^(?:\d+!)?(\d+(?:\.\d+)*)", text)
    if not m:
        raise ReleaseError(f"cannot read version {text!r}")
    return tuple(int(p) for p in m.group(1).split("."))


def _pad(a, n):
    return tuple(a) + (0,) * (n - len(a))


def satisfies(version: str, specifier: str) -> bool:
    """Whether a plain X.Y.Z version satisfies a comma-separated specifier set."""
    v = _release(version)
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        m = _SPEC_RE.match(clause)
        if not m:
            raise ReleaseError(f"cannot read version specifier {clause!r}")
        op, target = m.groups()
        if op in ("==", "!=") and target.endswith(".*"):
            prefix = _release(target[:-2])
            ok = _pad(v, len(prefix))[: len(prefix)] == prefix
            ok = ok if op == "==" else not ok
        elif op == "~=":
            t = _release(target)
            n = max(len(t), len(v))
            ok = _pad(v, n) >= _pad(t, n) and v[: len(t) - 1] == t[:-1]
        elif op == "===":
            ok = version == target
        else:
            t = _release(target)
            n = max(len(t), len(v))
            a, b = _pad(v, n), _pad(t, n)
            ok = _COMPARE[op](a, b)
        if not ok:
            return False
    return True


def compatible_range(version: str) -> str:
    """The range a dependant needs to accept `version` and its compatible successors."""
    major, minor, _ = parse_version(version)
    if major == 0:
        return f">={major}.{minor},<{major}.{minor + 1}"
    return f">={major}.{minor},<{major + 1}"


# PEP 508: name [extras] (specifiers | @ url) ; marker
_REQ_RE = re.compile(
    r"^(?P<name>\s*[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?P<extras>\s*\[[^\]]*\])?"
    r"(?P<spec>[^;@]*)"
    r"(?P<rest>[;@].*)?$",
    re.S,
)


def split_requirement(req: str) -> tuple[str, str, str, str]:
    m = _REQ_RE.match(req)
    if not m:
        raise ReleaseError(f"cannot read requirement {req!r}")
    spec = m.group("spec").strip()
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    return m.group("name").strip(), m.group("extras") or "", spec, m.group("rest") or ""


def with_specifier(req: str, spec: str) -> str:
    name, extras, _, rest = split_requirement(req)
    return f"{name}{extras}{spec}" + (f" {rest.strip()}" if rest else "")


# ---------------------------------------------------------------------------
# The workspace.


class Package:
    def __init__(self, directory: Path):
        self.dir = directory
        self.pyproject_path = directory / "pyproject.toml"
        self.changelog_path = directory / "CHANGELOG.md"
        self.data = tomllib.loads(self.pyproject_path.read_text())
        project = self.data.get("project", {})
        self.dist = normalize(project["name"])
        self.version = project.get("version")
        self.dynamic = "version" in project.get("dynamic", [])
        self.dependencies: list[str] = list(project.get("dependencies", []))
        targets = self.data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
        pkgs = targets.get("wheel", {}).get("packages")
        self.import_names = [Path(p).name for p in pkgs] if pkgs else [self.dist.replace("-", "_")]


def load_packages(root: Path) -> dict[str, Package]:
    rootcfg = tomllib.loads((root / "pyproject.toml").read_text())
    members = rootcfg.get("tool", {}).get("uv", {}).get("workspace", {}).get("members", [])
    packages: dict[str, Package] = {}
    for pattern in members:
        for d in sorted(root.glob(pattern)):
            if (d / "pyproject.toml").is_file():
                try:
                    pkg = Package(d)
                except KeyError:
                    continue
                packages[pkg.dist] = pkg
    return packages


def find_package(packages: dict[str, Package], name: str) -> Package:
    if normalize(name) in packages:
        return packages[normalize(name)]
    for pkg in packages.values():
        if name in pkg.import_names or pkg.dir.name == name:
            return pkg
    raise ReleaseError(f"unknown package {name!r} (known: {', '.join(packages)})")


# ---------------------------------------------------------------------------
# Text edits that keep every other byte of the files as it was.


def set_project_version(text: str, old: str, new: str) -> str:
    """Replace `version = "old"` inside the [project] table only."""
    header = re.search(r"(?m)^\[project\]\s*$", text)
    if not header:
        raise ReleaseError("no [project] table")
    nxt = re.search(r"(?m)^\[", text[header.end() :])
    end = header.end() + nxt.start() if nxt else len(text)
    table = text[header.end() : end]
    pattern = re.compile(r'(?m)^(\s*version\s*=\s*)(["\'])' + re.escape(old) + r"\2")
    table, n = pattern.subn(lambda m: f"{m.group(1)}{m.group(2)}{new}{m.group(2)}", table, count=1)
    if n != 1:
        raise ReleaseError(f'no static version = "{old}" in [project]')
    return text[: header.end()] + table + text[end:]


_UNRELEASED_RE = re.compile(r"(?mi)^##[ \t]+unreleased[ \t]*$")


def unreleased_body(text: str) -> str | None:
    m = _UNRELEASED_RE.search(text)
    if not m:
        return None
    nxt = re.search(r"(?m)^##[ \t]", text[m.end() :])
    return text[m.end() : m.end() + nxt.start() if nxt else len(text)].strip()


def date_changelog(text: str, version: str, date: str) -> str:
    m = _UNRELEASED_RE.search(text)
    if not m:
        raise ReleaseError('no "## Unreleased" section')
    if re.search(rf"(?m)^##[ \t]+{re.escape(version)}\b", text):
        raise ReleaseError(f"already has a section for {version}")
    return text[: m.start()] + f"## Unreleased\n\n## {version} ({date})" + text[m.end() :]


def add_unreleased_entry(text: str, entry: str) -> str:
    """Append a bullet to the Unreleased section."""
    m = _UNRELEASED_RE.search(text)
    if not m:
        raise ReleaseError('no "## Unreleased" section')
    nxt = re.search(r"(?m)^##[ \t]", text[m.end() :])
    end = m.end() + nxt.start() if nxt else len(text)
    body = text[m.end() : end].strip("\n")
    body = (body + "\n" if body else "") + f"- {entry}"
    tail = text[end:]
    return text[: m.end()] + "\n\n" + body + "\n" + ("\n" + tail if tail else "")


def replace_dependency(text: str, old_req: str, new_req: str) -> str:
    """Replace one quoted requirement string in a pyproject (inside [project])."""
    for quote in ('"', "'"):
        needle = f"{quote}{old_req}{quote}"
        if text.count(needle) >= 1:
            return text.replace(needle, f"{quote}{new_req}{quote}", 1)
    raise ReleaseError(f"cannot find the requirement {old_req!r} to rewrite")


# ---------------------------------------------------------------------------


def dependants_outside(packages, target: Package, new_version: str):
    """[(package, old requirement, new requirement)] for siblings whose range excludes it."""
    out = []
    for pkg in packages.values():
        if pkg is target:
            continue
        for req in pkg.dependencies:
            name, _, spec, rest = split_requirement(req)
            if normalize(name) != target.dist or rest.lstrip().startswith("@"):
                continue
            if not satisfies(new_version, spec):
                out.append((pkg, req, with_specifier(req, compatible_range(new_version))))
    return out


# ---------------------------------------------------------------------------
# The changelog's commit list and the API snapshot.


def unreleased_bump(pkg: Package) -> bool:
    """Whether the package's version is newer than its last API snapshot's (it was bumped
    during development, as a break needs: docs/releasing.md)."""
    snaps = [
        parse_version(p.stem) for p in (pkg.dir / "api").glob("*.json") if _VERSION_RE.match(p.stem)
    ]
    return bool(snaps) and parse_version(pkg.version) > max(snaps)


def last_tag(root: Path, pkg: Package) -> str | None:
    """The package's newest release tag (`polyjax-core==0.1.0`), or None."""
    proc = subprocess.run(
        ["git", "tag", "--list", f"{pkg.dist}==*"], cwd=root, capture_output=True, text=True
    )
    tags = [t for t in proc.stdout.split() if _VERSION_RE.match(t.split("==", 1)[1])]
    return max(tags, key=lambda t: parse_version(t.split("==", 1)[1])) if tags else None


def commits_since_release(root: Path, pkg: Package) -> tuple[str | None, list[str]]:
    """(base, ["<hash> <subject>", ...]): the commits touching the package since its last
    tag or, with no tag (a clean checkout has none), since the commit that recorded its
    API snapshot. (None, []) outside a git repository."""
    git = lambda *a: subprocess.run(["git", *a], cwd=root, capture_output=True, text=True)
    if git("rev-parse", "--git-dir").returncode != 0:
        return None, []
    base = last_tag(root, pkg)
    if base is None:
        snap = git("log", "-1", "--format=%h", "--", str(pkg.dir / "api")).stdout.strip()
        base = snap or None
    if base is None:
        return "the first commit", _lines(git("log", "--format=%h %s", "--", str(pkg.dir)))
    return base, _lines(git("log", "--format=%h %s", f"{base}..HEAD", "--", str(pkg.dir)))


def _lines(proc) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.strip()]


def add_commits(text: str, version: str, base: str | None, commits: list[str]) -> str:
    """Appends the commit list to the section of `version`."""
    if not commits:
        return text
    m = re.search(rf"(?m)^##[ \t]+{re.escape(version)}\b.*$", text)
    if not m:
        raise ReleaseError(f"no section for {version}")
    nxt = re.search(r"(?m)^##[ \t]", text[m.end() :])
    end = m.end() + nxt.start() if nxt else len(text)
    body = text[m.end() : end].rstrip("\n")
    listing = "\n".join(f"- {c}" for c in commits)
    body += f"\n\n### Commits since {base}\n\n{listing}\n"
    tail = text[end:]
    return text[: m.end()] + body + ("\n" + tail if tail else "")


def check_api(pkg: Package, new: str, changelog: str):
    """(api_gate module, the current API, the snapshot it replaces): refuses a release
    whose API breaks the last snapshot unless the bump is breaking and the changelog
    names each break."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import api_gate

    api = api_gate.current_api(pkg.import_names[0])
    latest = api_gate.latest_snapshot(pkg)
    if latest is None:
        return api_gate, api, None
    old_version, path = latest
    found = api_gate.breaks(api_gate.from_json(path.read_text()), api)
    if found:
        lines = "\n".join(f"  {api_gate.explain(b)}" for b in found)
        if not api_gate.is_breaking_bump(old_version, new):
            raise ReleaseError(
                f"{pkg.dist}'s API breaks its {old_version} snapshot; a {new} release "
                f"needs a breaking bump (major, or minor below 1.0):\n{lines}"
            )
        named = api_gate.changelog_sections(changelog, new)
        missing = [p for p in sorted({api_gate.broken_path(b) for b in found}) if p not in named]
        if missing:
            raise ReleaseError(f"the changelog of {new} does not name: {', '.join(missing)}")
    return api_gate, api, path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Bump one package's version and date its changelog (no tags, no commits)."
    )
    parser.add_argument("package", help="dist, import or directory name, e.g. polyjax-core")
    parser.add_argument("version", help="major, minor, patch or an explicit X.Y.Z")
    parser.add_argument(
        "--dry-run", action="store_true", help="show what would change, write nothing"
    )
    parser.add_argument(
        "--update-dependants",
        action="store_true",
        help="rewrite sibling ranges that exclude the new version",
    )
    parser.add_argument("--no-lock", action="store_true", help="do not run `uv lock` afterwards")
    parser.add_argument("--date", help="release date (default: today), YYYY-MM-DD")
    parser.add_argument(
        "--root", default=str(REPO_ROOT), help="workspace root (default: this repo)"
    )
    args = parser.parse_args(argv)

    try:
        date = args.date or datetime.date.today().isoformat()
        datetime.date.fromisoformat(date)
    except ValueError:
        parser.error(f"--date {args.date!r} is not YYYY-MM-DD")

    root = Path(args.root).resolve()
    try:
        return release(root, args.package, args.version, date, args)
    except ReleaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def release(root: Path, name: str, bump: str, date: str, args) -> int:
    packages = load_packages(root)
    pkg = find_package(packages, name)
    if pkg.dynamic or not pkg.version:
        raise ReleaseError(f"{pkg.dist} has no static [project] version")
    if bump not in ("major", "minor", "patch"):
        try:
            parse_version(bump)
        except ReleaseError:
            raise ReleaseError(
                f"version must be major, minor, patch or X.Y.Z, not {bump!r}"
            ) from None
    rel = lambda p: p.relative_to(root)
    writes: dict[Path, str] = {}  # every edit first; written only when all are possible
    if bump == pkg.version and unreleased_bump(pkg):
        # Bumped already, with the change that broke the API (docs/releasing.md): release
        # that version as it stands.
        new = pkg.version
    else:
        new = bumped(pkg.version, bump)
        writes[pkg.pyproject_path] = set_project_version(
            pkg.pyproject_path.read_text(), pkg.version, new
        )
    if not pkg.changelog_path.is_file():
        raise ReleaseError(f"{rel(pkg.changelog_path)} does not exist")
    changelog = pkg.changelog_path.read_text()
    base, commits = commits_since_release(root, pkg)
    try:
        dated = date_changelog(changelog, new, date)
    except ReleaseError as e:
        raise ReleaseError(f"{rel(pkg.changelog_path)}: {e}") from None
    writes[pkg.changelog_path] = add_commits(dated, new, base, commits)
    api_gate, api, snap_old = check_api(pkg, new, dated)

    if new == pkg.version:
        print(f"{pkg.dist}: releasing {new}, the version it was bumped to with its break")
    else:
        print(f"{pkg.dist}: {pkg.version} -> {new}")
        print(f'  {rel(pkg.pyproject_path)}: [project] version = "{new}"')
    print(f'  {rel(pkg.changelog_path)}: "## Unreleased" -> "## {new} ({date})"')
    if base is None:
        print("  (no git history here: no commit list added to the changelog)")
    else:
        print(f"  with the {len(commits)} commit(s) touching {rel(pkg.dir)} since {base}")
    snap_new = api_gate.snapshot_dir(pkg) / f"{new}.json"
    since = f" (the gate compared with {rel(snap_old)})" if snap_old else ""
    print(f"  API snapshot: {rel(snap_new)}{since}")
    if not unreleased_body(changelog):
        print(f"  warning: the Unreleased section of {rel(pkg.changelog_path)} is empty")

    outside = dependants_outside(packages, pkg, new)
    if outside:
        verb = "rewriting" if args.update_dependants else "needs"
        print(f"dependants whose declared range excludes {new}:")
        for dep, old_req, new_req in outside:
            print(f"  {dep.dist} ({rel(dep.pyproject_path)}): {old_req!r}, {verb} {new_req!r}")
        if args.update_dependants:
            for dep, old_req, new_req in outside:
                text = writes.get(dep.pyproject_path, dep.pyproject_path.read_text())
                writes[dep.pyproject_path] = replace_dependency(text, old_req, new_req)
                if dep.changelog_path.is_file():
                    text = writes.get(dep.changelog_path, dep.changelog_path.read_text())
                    writes[dep.changelog_path] = add_unreleased_entry(
                        text, f"Requires `{new_req}`."
                    )
                    print(f"  {rel(dep.changelog_path)}: noted under Unreleased")
            print("  (each of them needs a release of its own after this one)")
        elif not args.dry_run and not args.no_lock:
            raise ReleaseError(
                "the workspace could not be locked with these ranges; nothing was written. "
                "Rerun with --update-dependants, or with --no-lock to bump only and edit "
                "the ranges yourself."
            )
    else:
        print(f"dependants: every declared range on {pkg.dist} accepts {new}")

    if args.dry_run:
        print("dry run: nothing written")
        print(f"tag to create after committing: {pkg.dist}=={new}")
        print(f"publish: uv build --package {pkg.dist} --no-sources -o dist/{pkg.dist} "
              f"&& uv publish dist/{pkg.dist}/*")  # fmt: skip
        return 0

    for path, text in writes.items():
        path.write_text(text)
    snap_new.parent.mkdir(exist_ok=True)
    # Older snapshots stay: each marks a release that tools/min_versions.py can rebuild.
    snap_new.write_text(api_gate.to_json(api))

    if args.no_lock:
        print("skipped `uv lock` (--no-lock): run it before committing")
    else:
        print("running `uv lock` ...", flush=True)
        proc = subprocess.run(
            ["uv", "lock"], cwd=root, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            raise ReleaseError("`uv lock` failed; the edits above are in place, fix and rerun it")
        print("  uv.lock updated")

    changed = " ".join(str(rel(p)) for p in [*writes, snap_new.parent])
    changed += "" if args.no_lock else " uv.lock"
    print("next steps (not done by this tool):")
    print(f"  git add -A {changed} && git commit -m 'Release {pkg.dist} {new}'")
    print(f"  git tag {pkg.dist}=={new}")
    print(f"  uv build --package {pkg.dist} --no-sources -o dist/{pkg.dist}")
    print(f"  uv publish dist/{pkg.dist}/*")
    print(f"tag to create: {pkg.dist}=={new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
