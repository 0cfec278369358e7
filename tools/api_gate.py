#!/usr/bin/env python3
"""The API-diff gate: each package's public API against its last released snapshot.

Usage:
    uv run --no-sync python tools/api_gate.py check [PACKAGE ...]     # pre-commit and CI
    uv run --no-sync python tools/api_gate.py snapshot [PACKAGE ...]  # write api/<version>.json
    uv run --no-sync python tools/api_gate.py refresh [--force]       # snapshots + names table

A package's public API is what its `__init__` exports (`__all__`): functions and
classes with their signatures (parameter names, kinds, defaults, annotations), the
public members of classes with their types, and, for an exported module, that
module's own exports one level down (so `polyjax.numpy.sum` is part of `polyjax`'s
API). It is read from the imported package (the facade's lazy names included) into
griffe objects, stored as griffe's JSON in `packages/<dir>/api/<version>.json`, and
compared with `griffe.find_breaking_changes`.

`check` compares every package with its newest snapshot. A break (a removed name or
member, a removed or moved parameter, a parameter that became required, a changed
default or kind, ...) fails unless the package's version is a breaking bump of the
snapshot's (major, or minor below 1.0) AND its CHANGELOG (the "Unreleased" section or
the new version's) names each broken object by its dotted path inside the package
(e.g. `numpy.sum` for `polyjax.numpy.sum`). Additions never fail. Exit status: 0 pass,
1 a break or a missing snapshot, 2 bad usage.

`snapshot` records the current API as the package's current version (tools/release.py
writes one at release). `refresh` rewrites every package's snapshot of its current
version and regenerates the JAX-names list and table (tools/api_names.py): the one
command to run after merging branches that add names. It writes nothing when `check`
fails (a break would vanish into the new snapshot) unless --force is given.
"""

from __future__ import annotations

import argparse
import enum
import importlib
import inspect
import json
import re
import sys
import types
from pathlib import Path

import griffe

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

import release  # noqa: E402  (tools/release.py: the workspace model and versions)

# griffe records source lines; snapshots have none, and its JSON reader needs them.
_AT = {"lineno": 1, "endlineno": 1}
_SIMPLE = (type(None), bool, int, float, complex, str, bytes)


# ---------------------------------------------------------------------------
# Runtime objects -> griffe objects.


def _annotation(value) -> str | None:
    if value is inspect.Parameter.empty or value is inspect.Signature.empty:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, type):
        return value.__qualname__
    return re.sub(r"\b(typing|collections\.abc)\.", "", repr(value))


def _default(value) -> str | None:
    """A stable text for a default: literals by value, anything else by its type."""
    if value is inspect.Parameter.empty:
        return None
    if isinstance(value, _SIMPLE):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, tuple) and all(isinstance(v, _SIMPLE) for v in value):
        return repr(value)
    if isinstance(value, frozenset) and all(isinstance(v, _SIMPLE) for v in value):
        # Sorted: a set's order follows string hashing, which changes between runs.
        return f"frozenset({sorted(value, key=repr)!r})" if value else "frozenset()"
    return f"<{type(value).__name__}>"


_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: griffe.ParameterKind.positional_only,
    inspect.Parameter.POSITIONAL_OR_KEYWORD: griffe.ParameterKind.positional_or_keyword,
    inspect.Parameter.VAR_POSITIONAL: griffe.ParameterKind.var_positional,
    inspect.Parameter.KEYWORD_ONLY: griffe.ParameterKind.keyword_only,
    inspect.Parameter.VAR_KEYWORD: griffe.ParameterKind.var_keyword,
}


def _signature(obj) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def _function(name: str, obj, *, drop_self: bool = False) -> griffe.Function:
    sig = _signature(obj)
    params = []
    returns = None
    if sig is not None:
        items = list(sig.parameters.values())
        if drop_self and items and items[0].name in ("self", "cls"):
            items = items[1:]
        params = [
            griffe.Parameter(
                p.name,
                kind=_KINDS[p.kind],
                annotation=_annotation(p.annotation),
                default=_default(p.default),
            )
            for p in items
        ]
        returns = _annotation(sig.return_annotation)
    return griffe.Function(name, parameters=griffe.Parameters(*params), returns=returns, **_AT)


# Module prefixes whose classes are ours to snapshot (members inherited from
# Python's or NumPy's types are not); current_api adds the package it reads.
_OWN = {"polyjax"}


def _ours(obj) -> bool:
    return (getattr(obj, "__module__", None) or "").startswith(tuple(_OWN))


def _class(name: str, cls: type) -> griffe.Class:
    out = griffe.Class(name, bases=[b.__qualname__ for b in cls.__bases__ if _ours(b)], **_AT)
    init = _function("__init__", cls, drop_self=False) if _signature(cls) else None
    if init is not None:
        out.set_member("__init__", init)
    annotations: dict = {}
    for base in reversed(cls.__mro__):
        if _ours(base):
            annotations.update(getattr(base, "__annotations__", {}) or {})
    for attr in sorted(set(dir(cls)) | set(annotations)):
        if attr.startswith("_"):
            continue
        if not hasattr(cls, attr):  # annotated only: an instance attribute
            out.set_member(
                attr, griffe.Attribute(attr, annotation=_annotation(annotations[attr]), **_AT)
            )
            continue
        owner = next((b for b in cls.__mro__ if attr in vars(b)), None)
        if owner is None or not _ours(owner):
            continue  # inherited from Python's or NumPy's types: not ours to snapshot
        raw = vars(owner)[attr]
        if isinstance(raw, staticmethod | classmethod):
            out.set_member(attr, _function(attr, raw.__func__, drop_self=True))
        elif inspect.isfunction(raw):
            out.set_member(attr, _function(attr, raw, drop_self=True))
        elif isinstance(raw, property):
            ann = _annotation(_signature(raw.fget).return_annotation) if raw.fget else None
            out.set_member(attr, griffe.Attribute(attr, annotation=ann, **_AT))
        elif isinstance(raw, type):
            out.set_member(attr, griffe.Class(attr, **_AT))
        else:
            out.set_member(attr, griffe.Attribute(attr, annotation=_annotation(
                annotations.get(attr, inspect.Parameter.empty)), **_AT))  # fmt: skip
    return out


def _object(name: str, obj, depth: int):
    if isinstance(obj, types.ModuleType):
        return _module(name, obj, depth + 1) if depth == 0 else griffe.Module(name, **_AT)
    if isinstance(obj, type):
        return _class(name, obj)
    if callable(obj) and _signature(obj) is not None:
        return _function(name, obj)
    return griffe.Attribute(
        name, annotation=type(obj).__name__ if _ours(type(obj)) else None, **_AT
    )


def public_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return sorted(set(names) - {"__version__"})


def _module(name: str, module: types.ModuleType, depth: int = 0) -> griffe.Module:
    out = griffe.Module(name, **_AT)
    names = public_names(module)
    for attr in names:
        try:
            value = getattr(module, attr)
        except AttributeError:
            continue  # listed but missing: shows up as a removal
        out.set_member(attr, _object(attr, value, depth))
    out.exports = list(names)
    return out


_READ: dict[str, tuple[types.ModuleType, griffe.Module]] = {}


def current_api(import_name: str) -> griffe.Module:
    """The public API of an installed package, as griffe objects (read once per import
    of the package: the result is shared, so callers must not change it)."""
    _OWN.add(import_name)
    module = importlib.import_module(import_name)
    if import_name in _READ and _READ[import_name][0] is module:
        return _READ[import_name][1]
    api = _module(import_name, module)
    _READ[import_name] = (module, api)
    return api


def to_json(module: griffe.Module) -> str:
    return module.as_json(full=False, indent=0) + "\n"


def from_json(text: str) -> griffe.Module:
    return json.loads(text, object_hook=griffe.json_decoder)


# ---------------------------------------------------------------------------
# Snapshots and the gate.


def snapshot_dir(pkg: release.Package) -> Path:
    return pkg.dir / "api"


def latest_snapshot(pkg: release.Package) -> tuple[str, Path] | None:
    files = [
        (release.parse_version(p.stem), p)
        for p in snapshot_dir(pkg).glob("*.json")
        if release._VERSION_RE.match(p.stem)
    ]
    if not files:
        return None
    v, path = max(files)
    return release.fmt(v), path


def is_breaking_bump(old: str, new: str) -> bool:
    """Whether going from `old` to `new` may break the API (major; minor below 1.0)."""
    o, n = release.parse_version(old), release.parse_version(new)
    if n[0] > o[0]:
        return True
    return o[0] == 0 and n[0] == 0 and n[1] > o[1]


def breaks(old: griffe.Module, new: griffe.Module) -> list[griffe.Breakage]:
    # A parameter named with a leading underscore is private (a dataclass's
    # internal fields show up in its __init__): moving it breaks no caller.
    return [
        b
        for b in griffe.find_breaking_changes(old, new)
        if not (isinstance(b.old_value, griffe.Parameter) and b.old_value.name.startswith("_"))
    ]


def broken_path(breakage: griffe.Breakage) -> str:
    """The dotted path of the broken object inside its package (`numpy.sum`)."""
    path = breakage.obj.path
    return path.split(".", 1)[1] if "." in path else path


def explain(b: griffe.Breakage) -> str:
    """One line: the object, what broke, and the old and new values where there are some."""
    text = f"{broken_path(b)}: {b.kind.value}"
    name = getattr(b.old_value, "name", None)
    if isinstance(b.old_value, griffe.Parameter) and name:
        text += f" (parameter {name!r})"
    if b.kind in (griffe.BreakageKind.PARAMETER_CHANGED_DEFAULT,):
        text += f": {b.old_value.default} -> {b.new_value.default}"
    return text


def changelog_sections(text: str, version: str) -> str:
    """The "Unreleased" section and the section of `version`, concatenated."""
    out = []
    for m in re.finditer(r"(?m)^##[ \t]+(.*)$", text):
        title = m.group(1).strip()
        if title.lower() == "unreleased" or title.split()[0] == version:
            rest = text[m.end() :]
            nxt = re.search(r"(?m)^##[ \t]", rest)
            out.append(rest[: nxt.start()] if nxt else rest)
    return "\n".join(out)


def unannounced(
    pkg: release.Package, found: list[griffe.Breakage], version: str = "", log: str = ""
) -> list[str]:
    """Broken paths that the changelog (`log`, else the package's) does not name for
    `version` (else the package's)."""
    if not log and pkg.changelog_path.is_file():
        log = pkg.changelog_path.read_text()
    named = changelog_sections(log, version or pkg.version)
    paths = sorted({broken_path(b) for b in found})
    return [p for p in paths if not re.search(rf"(?<!\w){re.escape(p)}(?![\w])", named)]


def check_package(pkg: release.Package, new: griffe.Module | None = None) -> list[str]:
    """Problems that fail the gate for one package ([] when it passes)."""
    latest = latest_snapshot(pkg)
    if latest is None:
        return [f"{pkg.dist}: no API snapshot in {snapshot_dir(pkg)}; run `api_gate.py snapshot`"]
    snap_version, path = latest
    if release.parse_version(pkg.version) < release.parse_version(snap_version):
        return [f"{pkg.dist}: version {pkg.version} is older than its snapshot {snap_version}"]
    new = new if new is not None else current_api(pkg.import_names[0])
    found = breaks(from_json(path.read_text()), new)
    if not found:
        return []
    lines = [f"  {explain(b)}" for b in found]
    if not is_breaking_bump(snap_version, pkg.version):
        bump = "minor" if release.parse_version(snap_version)[0] == 0 else "major"
        return [
            f"{pkg.dist}: {len(found)} breaking change(s) against its API snapshot "
            f"{snap_version}, but its version {pkg.version} is not a breaking bump "
            f"(needs a {bump} bump and a CHANGELOG entry naming each break):",
            *lines,
        ]
    missing = unannounced(pkg, found)
    if missing:
        return [
            f"{pkg.dist}: breaking change(s) for {pkg.version} that its CHANGELOG does not "
            f"name (in 'Unreleased' or '{pkg.version}'): {', '.join(missing)}",
            *lines,
        ]
    return []


def write_snapshot(pkg: release.Package, api: griffe.Module | None = None) -> Path:
    path = snapshot_dir(pkg) / f"{pkg.version}.json"
    path.parent.mkdir(exist_ok=True)
    api = api if api is not None else current_api(pkg.import_names[0])
    path.write_text(to_json(api))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "snapshot", "refresh"])
    parser.add_argument("packages", nargs="*", help="dist, import or directory names")
    parser.add_argument(
        "--force", action="store_true", help="refresh: overwrite snapshots despite breaks"
    )
    parser.add_argument("--root", default=str(REPO_ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    packages = release.load_packages(root)
    try:
        chosen = [release.find_package(packages, n) for n in args.packages] or list(
            packages.values()
        )
    except release.ReleaseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.command == "refresh" and not args.force:
        # Overwriting a snapshot would hide a break: report it instead.
        problems = [line for pkg in chosen for line in check_package(pkg)]
        if problems:
            print("\n".join(problems))
            print("refresh: not written (a break above; fix it, or --force to accept it)")
            return 1
    if args.command in ("snapshot", "refresh"):
        for pkg in chosen:
            print(f"wrote {write_snapshot(pkg).relative_to(root)}")
        if args.command == "refresh":
            import api_names

            return api_names.main([])
        return 0
    problems = [line for pkg in chosen for line in check_package(pkg)]
    print("\n".join(problems) if problems else f"API gate: {len(chosen)} package(s) pass")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
