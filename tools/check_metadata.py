#!/usr/bin/env python3
"""Check that a package's metadata declares exactly the distributions its code imports.

Usage:
    uv run --locked python tools/check_metadata.py [PACKAGE ...]   # the sources' pyproject
    uv run --locked python tools/check_metadata.py --wheel W.whl   # a built wheel's METADATA

Each module's `import x` and `from x import y` statements (absolute ones, anywhere in
the module except under `if TYPE_CHECKING:`) name top-level modules; the standard
library's and the package's own are dropped, the rest are mapped to the distributions
that provide them (`importlib.metadata.packages_distributions()` of this environment,
and the workspace's own packages). That set must equal the unconditional
`Requires-Dist` names (extras, e.g. `polyjax[cuda12]`, are left out): an import that is
not declared fails, and so does a declared distribution that no module imports.
tools/check_isolated.py runs the wheel form on every wheel it builds. Exit status: 0
pass, 1 a mismatch, 2 bad usage. Standard library only.
"""

from __future__ import annotations

import ast
import email.parser
import functools
import importlib.metadata
import re
import sys
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# Distributions a package imports only when they are installed, and so does not
# declare: dist -> {distribution: why}.
OPTIONAL: dict[str, dict[str, str]] = {
    "polyjax-core": {"jaxlib": "the C++ pytree registry, used when jaxlib is there"},
}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(source: str) -> set[str]:
    """Top-level names of the modules a module's source imports at run time."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found - {"__future__"}


@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def distributions_of(modules: Iterable[str], own: set[str], workspace: dict[str, str]) -> dict:
    """{distribution: [modules]} for the non-stdlib, non-own modules; None key: unknown."""
    provided = _packages_distributions()
    out: dict = {}
    for mod in sorted(set(modules) - own - set(sys.stdlib_module_names)):
        dists = [workspace[mod]] if mod in workspace else provided.get(mod, [None])
        for d in dists:
            out.setdefault(normalize(d) if d else None, []).append(mod)
    return out


def required(requirements: Iterable[str]) -> set[str]:
    """Names of the requirements that apply without an extra."""
    names = set()
    for req in requirements:
        if re.search(r"""extra\s*==""", req.partition(";")[2]):
            continue
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
        if m:
            names.add(normalize(m.group(1)))
    return names


def compare(dist: str, sources: dict[str, str], requirements: Iterable[str], own: set[str],
            workspace: dict[str, str]) -> list[str]:  # fmt: skip
    """Problems (empty when the declared and the imported distributions agree)."""
    modules: set[str] = set()
    for text in sources.values():
        modules |= imported_modules(text)
    imported = distributions_of(modules, own, workspace)
    declared = required(requirements)
    problems = []
    if None in imported:
        problems.append(f"{dist}: imports modules no installed distribution provides: "
                        f"{', '.join(imported.pop(None))}")  # fmt: skip
    for d in sorted(set(imported) - declared - set(OPTIONAL.get(dist, {}))):
        problems.append(f"{dist}: imports {', '.join(imported[d])} but does not declare {d}")
    for d in sorted(declared - set(imported)):
        problems.append(f"{dist}: declares {d} but imports nothing from it")
    return problems


def workspace_modules(root: Path) -> dict[str, str]:
    """Import name -> distribution, for the workspace's packages."""
    out = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text())
        dist = normalize(data["project"]["name"])
        pkgs = data.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
        for p in pkgs.get("wheel", {}).get("packages", [dist.replace("-", "_")]):
            out[Path(p).name] = dist
    return out


def check_source(pkg_dir: Path, root: Path = REPO_ROOT) -> list[str]:
    data = tomllib.loads((pkg_dir / "pyproject.toml").read_text())
    dist = normalize(data["project"]["name"])
    workspace = workspace_modules(root)
    own = {m for m, d in workspace.items() if d == dist}
    sources = {str(p): p.read_text() for m in own for p in (pkg_dir / "src" / m).rglob("*.py")}
    return compare(dist, sources, data["project"].get("dependencies", []), own, workspace)


def check_wheel(wheel: Path, root: Path = REPO_ROOT) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.parser.Parser().parsestr(zf.read(meta_name).decode())
        sources = {n: zf.read(n).decode() for n in zf.namelist() if n.endswith(".py")}
    dist = normalize(meta["Name"])
    own = {n.split("/")[0] for n in sources}
    return compare(dist, sources, meta.get_all("Requires-Dist") or [], own,
                   workspace_modules(root))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--wheel"]:
        if len(args) < 2:
            print("usage: check_metadata.py --wheel WHEEL ...", file=sys.stderr)
            return 2
        problems = [p for w in args[1:] for p in check_wheel(Path(w))]
    else:
        dirs = sorted(p.parent for p in REPO_ROOT.glob("packages/*/pyproject.toml"))
        if args:
            dirs = [d for d in dirs if d.name in args or f"polyjax-{d.name}" in args
                    or (d.name == "polyjax" and "polyjax" in args)]  # fmt: skip
            if not dirs:
                print(f"unknown package(s): {' '.join(args)}", file=sys.stderr)
                return 2
        problems = [p for d in dirs for p in check_source(d)]
    print("\n".join(problems) if problems else "metadata: every import is declared, and used")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
