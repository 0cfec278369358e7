"""tools/api_gate.py: the API-diff gate, on a planted break in a fake workspace."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_tools_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_gate = _load("api_gate")

V1 = '''
"""A fake package."""
__all__ = ["Box", "scale", "sub"]
from fkgate_{n} import sub


def scale(x: float, factor: float = 2.0, *, clip: bool = False) -> float:
    return x * factor


class Box:
    size: int

    def grow(self, by: int = 1) -> "Box":
        return self
'''
SUB = '__all__ = ["helper"]\n\ndef helper(a, b=None):\n    return a\n'
CHANGELOG = "# Changelog\n\n## Unreleased\n\n{entry}\n## {version}\n\n- First version.\n"


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A one-package workspace whose module name is unique to this test."""
    n = tmp_path.name.replace("-", "_")
    name = f"fkgate_{n}"
    root = tmp_path / "ws"
    src = root / "packages" / "fk" / "src" / name
    src.mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    monkeypatch.syspath_prepend(str(src.parent))

    def write(init: str, sub: str = SUB, version: str = "0.1.0", entry: str = ""):
        (src / "__init__.py").write_text(textwrap.dedent(init).replace("{n}", n))
        (src / "sub.py").write_text(sub)
        d = root / "packages" / "fk"
        (d / "pyproject.toml").write_text(
            f'[project]\nname = "fk"\nversion = "{version}"\n'
            f'[tool.hatch.build.targets.wheel]\npackages = ["src/{name}"]\n'
        )
        (d / "CHANGELOG.md").write_text(CHANGELOG.format(entry=entry, version="0.1.0"))
        for mod in [m for m in sys.modules if m.startswith(name)]:
            del sys.modules[mod]
        importlib.invalidate_caches()
        return api_gate.release.load_packages(root)["fk"]

    yield write
    for mod in [m for m in sys.modules if m.startswith(name)]:
        del sys.modules[mod]


def test_snapshot_roundtrip_and_additions_pass(fake):
    pkg = fake(V1)
    path = api_gate.write_snapshot(pkg)
    assert path.name == "0.1.0.json"
    snap = api_gate.from_json(path.read_text())
    assert [p.name for p in snap["scale"].parameters] == ["x", "factor", "clip"]
    assert str(snap["Box"]["size"].annotation) == "int"
    assert "helper" in snap["sub"].members
    assert api_gate.check_package(pkg) == []
    # Adding a name, an optional parameter or a member is not a break.
    added = V1.replace("*, clip", "extra: int = 0, *, clip").replace(
        '"sub"]', '"sub", "more"]\nmore = 1'
    )
    assert api_gate.check_package(fake(added)) == []


@pytest.mark.parametrize(
    "edit, path",
    [
        (lambda s, sub: (s.replace('"Box", ', "").replace("class Box", "class _Box"), sub), "Box"),
        (lambda s, sub: (s.replace("factor: float = 2.0", "factor: float"), sub), "scale"),
        (lambda s, sub: (s.replace("x: float, factor", "factor"), sub), "scale"),
        (lambda s, sub: (s.replace("by: int = 1", "by: int = 2"), sub), "Box.grow"),
        (lambda s, sub: (s, sub.replace("a, b=None", "a")), "sub.helper"),
    ],
    ids=["removed-class", "now-required", "removed-param", "changed-default", "submodule"],
)
def test_planted_break_fails_until_bumped_and_announced(fake, edit, path):
    api_gate.write_snapshot(fake(V1))
    init, sub = edit(V1, SUB)
    problems = api_gate.check_package(fake(init, sub))
    assert problems and "not a breaking bump" in problems[0], problems
    assert "needs a minor bump" in problems[0]
    # A patch bump is not enough; a minor bump without the changelog entry is not either.
    assert "not a breaking bump" in api_gate.check_package(fake(init, sub, version="0.1.1"))[0]
    problems = api_gate.check_package(fake(init, sub, version="0.2.0"))
    assert problems and "does not name" in problems[0] and path in problems[0], problems
    # The bump and a changelog entry naming the broken object pass the gate.
    entry = f"- Breaking: `{path}` changed.\n"
    assert api_gate.check_package(fake(init, sub, version="0.2.0", entry=entry)) == []


def test_private_parameters_may_move(fake):
    # A dataclass's internal fields show up in its __init__; reordering them breaks no caller.
    api_gate.write_snapshot(fake(V1.replace("def grow(self, by", "def grow(self, _a=0, _b=1, by")))
    moved = V1.replace("def grow(self, by", "def grow(self, _b=1, _a=0, by")
    assert api_gate.check_package(fake(moved)) == []
    # A public parameter moved past them still is a break.
    swapped = V1.replace("def grow(self, by", "def grow(self, _b=1, _a=0, *, by")
    assert api_gate.check_package(fake(swapped))


def test_breaking_bumps():
    assert api_gate.is_breaking_bump("0.1.0", "0.2.0")
    assert api_gate.is_breaking_bump("1.4.2", "2.0.0")
    assert not api_gate.is_breaking_bump("0.1.0", "0.1.1")
    assert not api_gate.is_breaking_bump("1.4.2", "1.5.0")


def test_missing_snapshot_fails(fake):
    assert "no API snapshot" in api_gate.check_package(fake(V1))[0]


def test_defaults_are_recorded_stably():
    # Literals by value; sets sorted (their order follows string hashing); others by type.
    assert api_gate._default(frozenset({"b", "a"})) == "frozenset(['a', 'b'])"
    assert api_gate._default((1, "x")) == "(1, 'x')"
    assert api_gate._default(object()) == "<object>"
