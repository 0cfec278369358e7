"""Tests of the developer tools in tools/ (check_isolated.py and release.py).

The release tests work on a copy of the workspace in tmp_path, never on this checkout.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / "tools"
PACKAGE_DIRS = sorted(p.parent for p in (REPO / "packages").glob("*/pyproject.toml"))


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_tools_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_isolated = _load("check_isolated")
release = _load("release")
needs_uv = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH")


def _version(pkg_dir: Path) -> str:
    return tomllib.loads((pkg_dir / "pyproject.toml").read_text())["project"]["version"]


def _deps(pkg_dir: Path) -> list[str]:
    return tomllib.loads((pkg_dir / "pyproject.toml").read_text())["project"]["dependencies"]


# ---------------------------------------------------------------------------
# check_isolated: the workspace model.


def test_workspace_order_follows_the_layers():
    ws = check_isolated.load_workspace(REPO)
    assert ws.layers[-1] == "polyjax_core" and ws.layers[0] == "polyjax"
    order = ws.ordered(ws.packages)
    assert order[0] == "polyjax-core" and order[-1] == "polyjax"
    for dist in order:  # every package comes after the siblings it declares
        for dep in ws.siblings(dist):
            assert order.index(dep) < order.index(dist)
    assert set(ws.above("polyjax-core")) == set(ws.packages) - {"polyjax-core"}
    assert ws.above("polyjax") == []


def test_workspace_resolves_names_and_closures():
    ws = check_isolated.load_workspace(REPO)
    core = ws.resolve("polyjax-core")
    assert ws.resolve("polyjax_core") is core and ws.resolve("core") is core
    assert core.import_names == ["polyjax_core"]
    assert ws.closure(["polyjax-core"]) == ["polyjax-core"]
    assert ws.closure(["polyjax-numpy"])[-1] == "polyjax-numpy"
    assert set(ws.closure(["polyjax"])) == set(ws.packages)
    with pytest.raises(KeyError):
        ws.resolve("nope")


@pytest.mark.parametrize(
    "output, expected",
    [
        ("..\n2 passed in 0.01s\n", {"passed": 2}),
        (
            "==== 3 passed, 1 skipped, 2 warnings in 1.20s ====",
            {"passed": 3, "skipped": 1, "warnings": 2},
        ),
        ("F.\n1 failed, 1 passed in 0.10s", {"failed": 1, "passed": 1}),
        ("1 error in 0.10s", {"errors": 1}),
        ("\nno tests ran in 0.01s\n", {"passed": 0}),
        ("Traceback ...\nImportError: boom\n", {}),
    ],
)
def test_parse_pytest_summary(output, expected):
    assert check_isolated.parse_pytest_summary(output) == expected


def test_pytest_command_ignores_the_root_config():
    ws = check_isolated.load_workspace(REPO)
    pkg = ws.resolve("polyjax-core")
    cmd = [str(c) for c in check_isolated.pytest_command(ws, pkg, Path("/venv/bin/python"))]
    assert cmd[cmd.index("-c") + 1] == "/dev/null"
    assert cmd[cmd.index("--rootdir") + 1] == str(pkg.dir)
    assert "--import-mode=importlib" in cmd and "no:cacheprovider" in cmd
    assert str(pkg.dir / "tests") in cmd
    assert "-m" in cmd[5:] and cmd[cmd.index("-m", 5) + 1] == "not multiprocess and not sweep"


# ---------------------------------------------------------------------------
# check_isolated end to end, on a small fake workspace with one good package and
# one of each kind of fault.

_FAKE = {
    # dist: (declared siblings, __init__ body, tests {name: body})
    "fk-base": ([], "", {"test_ok.py": "def test_ok():\n    assert 1 + 1 == 2\n"}),
    # imports a higher layer that it (wrongly) declares, so it is installed
    "fk-mid": (["fk-top"], "import fk_top\n", {"test_ok.py": "def test_ok():\n    pass\n"}),
    # imports a third-party module it does not declare (present only through pytest)
    "fk-top": (
        ["fk-base"],
        "import fk_base\nimport iniconfig\n",
        {"test_ok.py": "def test_ok():\n    pass\n"},
    ),
    # has a tests directory without tests
    "fk-empty": (["fk-base"], "import fk_base\n", {"helpers.py": "X = 1\n"}),
    # has a failing test
    "fk-failing": (
        ["fk-base"],
        "import fk_base\n",
        {"test_bad.py": "def test_bad():\n    assert False\n"},
    ),
}


def _make_fake_workspace(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [tool.uv.workspace]
            members = ["packages/*"]
            [tool.uv]
            python-downloads = "never"
            python-preference = "only-system"
            [tool.pytest.ini_options]
            testpaths = ["packages/*/tests", "elsewhere"]
            addopts = "-x --this-option-does-not-exist"
            [[tool.importlinter.contracts]]
            name = "layers"
            type = "layers"
            layers = ["fk_top", "fk_mid", "fk_base"]
            """
        )
    )
    (root / ".python-version").write_text("3.11\n")
    for dist, (siblings, init, tests) in _FAKE.items():
        imp = dist.replace("-", "_")
        d = root / "packages" / dist.removeprefix("fk-")
        (d / "src" / imp).mkdir(parents=True)
        (d / "tests").mkdir()
        (d / "src" / imp / "__init__.py").write_text(init)
        (d / "README.md").write_text(f"# {dist}\n\nA fake package.\n")
        for name, body in tests.items():
            (d / "tests" / name).write_text(body)
        deps = ", ".join(f'"{s}>=0.1,<0.2"' for s in siblings)
        sources = "".join(f"{s} = {{ workspace = true }}\n" for s in siblings)
        (d / "pyproject.toml").write_text(
            textwrap.dedent(
                f"""\
                [build-system]
                requires = ["hatchling>=1.26"]
                build-backend = "hatchling.build"
                [project]
                name = "{dist}"
                version = "0.1.0"
                description = "A fake package."
                readme = "README.md"
                requires-python = ">=3.11"
                dependencies = [{deps}]
                [dependency-groups]
                dev = ["pytest>=9"]
                [tool.hatch.build.targets.wheel]
                packages = ["src/{imp}"]
                [tool.uv.sources]
                """
            )
            + sources
        )


@needs_uv
def test_check_isolated_end_to_end(tmp_path):
    root = tmp_path / "ws"
    _make_fake_workspace(root)
    proc = subprocess.run(
        [sys.executable, TOOLS / "check_isolated.py", "--root", root],
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    summary = {
        line.split()[0]: line
        for line in out.split("== summary")[-1].splitlines()
        if line.startswith("fk-")
    }
    assert list(summary) == ["fk-base", "fk-top", "fk-mid", "fk-empty", "fk-failing"], out
    assert " PASS " in summary["fk-base"] and "1 passed" in summary["fk-base"], out
    assert " FAIL " in summary["fk-mid"] and "higher layer" in summary["fk-mid"], out
    assert "iniconfig" in summary["fk-top"] and "not a declared" in summary["fk-top"], out
    assert "no tests ran" in summary["fk-empty"], out
    assert "1 failed" in summary["fk-failing"], out
    assert "FAILED: fk-top, fk-mid, fk-empty, fk-failing" in out
    # Nothing was left behind in the workspace.
    assert not list(root.rglob("*.whl")) and not list(root.rglob("__pycache__"))
    assert not (root / ".venv").exists()


def test_check_isolated_compilation_cache_env(tmp_path, monkeypatch):
    # --compilation-cache DIR: the tests' processes get the persistent cache in DIR,
    # every compilation written (no minimum time or size), and nothing else changes.
    env = check_isolated.compilation_cache_env(str(tmp_path))
    assert env == {
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }
    seen = {}

    def fake_run(cmd, *args, **kwargs):
        seen.update(kwargs.get("extra_env") or {})
        return 0, "1 passed in 0.01s"

    monkeypatch.setattr(check_isolated, "run", fake_run)
    monkeypatch.setattr(check_isolated, "_test_env", env)
    ws = check_isolated.load_workspace(REPO)
    pkg = ws.resolve("core")
    check_isolated.run_tests(ws, pkg, Path("/venv/bin/python"), tmp_path, False)
    assert seen == env


def test_check_isolated_rejects_unknown_package(capsys):
    assert check_isolated.main(["no-such-package"]) == 2
    assert "unknown package" in capsys.readouterr().err


# ---------------------------------------------------------------------------
# release: pure helpers.


def test_bumps_and_ranges():
    assert release.bumped("0.1.0", "patch") == "0.1.1"
    assert release.bumped("0.1.3", "minor") == "0.2.0"
    assert release.bumped("0.9.3", "major") == "1.0.0"
    assert release.bumped("0.1.0", "0.1.5") == "0.1.5"
    for bad in ("0.1.0", "0.0.9"):
        with pytest.raises(release.ReleaseError, match="not greater"):
            release.bumped("0.1.0", bad)
    with pytest.raises(release.ReleaseError):
        release.bumped("0.1.0", "1.0")
    assert release.compatible_range("0.2.0") == ">=0.2,<0.3"
    assert release.compatible_range("1.4.2") == ">=1.4,<2"
    assert release.satisfies("0.1.5", ">=0.1,<0.2")
    assert not release.satisfies("0.2.0", ">=0.1,<0.2")
    assert release.satisfies("1.3.0", "~=1.2") and not release.satisfies("2.0.0", "~=1.2")
    assert release.satisfies("0.1.7", "==0.1.*") and not release.satisfies("0.2.0", "==0.1.*")
    assert release.satisfies("0.3.0", "")
    assert (
        release.with_specifier('polyjax-core[x]>=0.1,<0.2; python_version>="3.11"', ">=0.2,<0.3")
        == 'polyjax-core[x]>=0.2,<0.3 ; python_version>="3.11"'
    )


def test_changelog_edit():
    text = "# Changelog\n\n## Unreleased\n\n- Added a thing.\n\n## 0.1.0\n\n- First version.\n"
    out = release.date_changelog(text, "0.2.0", "2026-01-02")
    assert out == (
        "# Changelog\n\n## Unreleased\n\n## 0.2.0 (2026-01-02)\n\n- Added a thing.\n\n"
        "## 0.1.0\n\n- First version.\n"
    )
    with pytest.raises(release.ReleaseError, match="Unreleased"):
        release.date_changelog("# Changelog\n\n## 0.1.0\n", "0.2.0", "2026-01-02")
    noted = release.add_unreleased_entry(out, "Requires `x>=1`.")
    assert "## Unreleased\n\n- Requires `x>=1`.\n\n## 0.2.0 (2026-01-02)" in noted


def test_changelog_gets_the_commit_list():
    text = "# Changelog\n\n## Unreleased\n\n## 0.2.0 (2026-01-02)\n\n- A thing.\n\n## 0.1.0\n"
    out = release.add_commits(
        text, "0.2.0", "polyjax-core==0.1.0", ["abc1234 Fix x", "def5678 Add y"]
    )
    assert out == (
        "# Changelog\n\n## Unreleased\n\n## 0.2.0 (2026-01-02)\n\n- A thing.\n\n"
        "### Commits since polyjax-core==0.1.0\n\n- abc1234 Fix x\n- def5678 Add y\n\n## 0.1.0\n"
    )
    assert release.add_commits(text, "0.2.0", "x", []) == text


def test_commits_since_release_reads_this_repository():
    pkg = release.load_packages(REPO)["polyjax-core"]
    base, commits = release.commits_since_release(REPO, pkg)
    assert base is not None  # the commit that recorded core's API snapshot
    assert all(re.match(r"^[0-9a-f]{7,} ", c) for c in commits)


# ---------------------------------------------------------------------------
# release: on a copy of the workspace.


@pytest.fixture
def repo_copy(tmp_path):
    """packages/, the root pyproject and uv.lock copied to tmp_path; the real files watched."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("pyproject.toml", "uv.lock", ".python-version"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, root / name)
    shutil.copytree(
        REPO / "packages",
        root / "packages",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis"),
    )
    watched = [REPO / "uv.lock"] + [
        p / name for p in PACKAGE_DIRS for name in ("pyproject.toml", "CHANGELOG.md")
    ]
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in watched if p.exists()}
    yield root
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in before}
    assert after == before, "a release test touched the real repository"


def _packages(root):
    return {p.name: p for p in (root / "packages").iterdir() if (p / "pyproject.toml").exists()}


def _snapshot(root):
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_release_minor_updates_dependants(repo_copy, capsys):
    pkgs = _packages(repo_copy)
    old = {name: _version(d) for name, d in pkgs.items()}
    core_old = old["core"]
    major, minor, _ = (int(x) for x in core_old.split("."))
    new = f"{major}.{minor + 1}.0"
    (pkgs["core"] / "CHANGELOG.md").write_text(
        (pkgs["core"] / "CHANGELOG.md")
        .read_text()
        .replace("## Unreleased\n", "## Unreleased\n\n- Something new.\n", 1)
    )
    rc = release.main(
        ["polyjax-core", "minor", "--root", str(repo_copy), "--no-lock",
         "--update-dependants", "--date", "2026-03-04"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0, out
    assert _version(pkgs["core"]) == new
    changelog = (pkgs["core"] / "CHANGELOG.md").read_text()
    assert f"## Unreleased\n\n## {new} (2026-03-04)\n\n- Something new.\n" in changelog
    assert f"tag to create: polyjax-core=={new}" in out
    for name, d in pkgs.items():
        if name == "core":
            continue
        assert _version(d) == old[name]  # no other version moves
        core_reqs = [r for r in _deps(d) if r.startswith("polyjax-core")]
        if core_reqs:
            assert core_reqs == [f"polyjax-core>={major}.{minor + 1},<{major}.{minor + 2}"]
            assert f"polyjax-core>={major}.{minor + 1}" in (d / "CHANGELOG.md").read_text()
            assert f"polyjax-{name}" in out or name == "polyjax"


def test_release_refuses_when_dependants_would_break_the_lock(repo_copy, capsys):
    before = _snapshot(repo_copy)
    rc = release.main(["core", "minor", "--root", str(repo_copy)])
    captured = capsys.readouterr()
    assert rc == 1
    assert "needs 'polyjax-core>=" in captured.out
    assert "--update-dependants" in captured.err and "nothing was written" in captured.err
    assert _snapshot(repo_copy) == before


def test_release_refuses_versions_not_greater(repo_copy, capsys):
    before = _snapshot(repo_copy)
    current = _version(_packages(repo_copy)["core"])
    assert release.main(["polyjax-core", current, "--root", str(repo_copy), "--no-lock"]) == 1
    assert "not greater" in capsys.readouterr().err
    assert release.main(["polyjax-core", "0.0.1", "--root", str(repo_copy), "--no-lock"]) == 1
    assert release.main(["polyjax-core", "banana", "--root", str(repo_copy), "--no-lock"]) == 1
    assert _snapshot(repo_copy) == before


def _plant_removed_function(root: Path, name: str) -> None:
    """Makes core's API snapshot list a function the package does not have (a removal)."""
    import griffe

    path = root / "packages" / "core" / "api" / f"{_version(root / 'packages' / 'core')}.json"
    snap = json.loads(path.read_text(), object_hook=griffe.json_decoder)
    snap.set_member(name, griffe.Function(name, lineno=1, endlineno=1))
    snap.exports = [*snap.exports, name]
    path.write_text(snap.as_json(full=False, indent=0))


def test_release_refuses_an_api_break_until_breaking_and_announced(repo_copy, capsys):
    _plant_removed_function(repo_copy, "gone_fn")
    args = ["--root", str(repo_copy), "--no-lock", "--update-dependants"]
    before = _snapshot(repo_copy)
    assert release.main(["core", "patch", *args]) == 1
    assert "needs a breaking bump" in capsys.readouterr().err
    assert release.main(["core", "minor", *args]) == 1
    assert "does not name: gone_fn" in capsys.readouterr().err
    assert _snapshot(repo_copy) == before
    log = repo_copy / "packages" / "core" / "CHANGELOG.md"
    log.write_text(
        log.read_text().replace("## Unreleased\n", "## Unreleased\n\n- `gone_fn` is removed.\n", 1)
    )
    assert release.main(["core", "minor", *args]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    new = _version(repo_copy / "packages" / "core")
    snaps = sorted(p.name for p in (repo_copy / "packages" / "core" / "api").iterdir())
    assert f"{new}.json" in snaps and len(snaps) == 2, snaps  # the old one marks a release
    assert "gone_fn" not in (repo_copy / "packages" / "core" / "api" / f"{new}.json").read_text()
    assert "uv publish dist/polyjax-core/*" in out and f"git tag polyjax-core=={new}" in out


def test_release_of_a_version_bumped_with_its_break(repo_copy, capsys):
    # A break made during development comes with its bump (the gate asks for it); the
    # release then ships that version as it stands.
    core = repo_copy / "packages" / "core"
    _plant_removed_function(repo_copy, "gone_fn")
    old = _version(core)
    major, minor, _ = (int(x) for x in old.split("."))
    new = f"{major}.{minor + 1}.0"
    pyproject = core / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'version = "{old}"', f'version = "{new}"'))
    log = core / "CHANGELOG.md"
    log.write_text(
        log.read_text().replace("## Unreleased\n", "## Unreleased\n\n- `gone_fn` goes.\n", 1)
    )
    args = ["--root", str(repo_copy), "--no-lock", "--update-dependants"]
    assert release.main(["core", new, *args]) == 0, capsys.readouterr()
    assert f"releasing {new}" in capsys.readouterr().out
    assert _version(core) == new and (core / "api" / f"{new}.json").exists()
    assert f"## {new} (" in log.read_text()
    # Once released (its snapshot written), the same version cannot be released again.
    assert release.main(["core", new, *args]) == 1
    assert "not greater" in capsys.readouterr().err


def test_release_dry_run_writes_nothing(repo_copy, capsys):
    before = _snapshot(repo_copy)
    assert release.main(["core", "major", "--root", str(repo_copy), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run: nothing written" in out and "needs 'polyjax-core>=1.0,<2'" in out
    assert _snapshot(repo_copy) == before


@needs_uv
def test_release_patch_locks(repo_copy, capsys):
    pkgs = _packages(repo_copy)
    old = _version(pkgs["export"])
    major, minor, patch = (int(x) for x in old.split("."))
    new = f"{major}.{minor}.{patch + 1}"
    rc = release.main(["polyjax-export", "patch", "--root", str(repo_copy)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "every declared range on polyjax-export accepts" in out
    assert "uv.lock updated" in out
    lock = tomllib.loads((repo_copy / "uv.lock").read_text())
    versions = {p["name"]: p.get("version") for p in lock["package"]}
    assert versions["polyjax-export"] == new
    assert versions["polyjax-core"] == _version(pkgs["core"])


# ---------------------------------------------------------------------------
# bench: the output format (not the timings, which depend on the machine).

BENCH_ROWS = [
    ("import polyjax (fresh process)", "610 ms", "<= 300 ms"),
    ("  import + first jit call (for information)", None, None),
    ("jit x + y, per call", "5.40 us", "<= 5.40 us"),
    ("jit dict of 20 arrays in/out, per call", "40.7 us", "<= 40.7 us"),
    ("eager x + y, per op", None, None),
    ("eager lax.sin(x), per op", "5.00 us", "<= 5.00 us"),
    ("jit of a 100-op function: trace+lower+compile", None, None),
    ("  trace", None, None),
    ("  lower to StableHLO", None, None),
    ("  XLA compile", None, None),
    ("make_jaxpr of 2000 elementwise ops, per equation", "33.9 us", "<= 16.9 us"),
    ("jit(grad(loss)) trace+lower, 8-layer MLP", "21.0 ms", "<= 10.5 ms"),
    ("jit lax.scan of an RNN cell, 1000 steps, per call", "245 us", "<= 257 us"),
    ("  trace+lower+compile it (a fresh function)", "80.0 ms", "<= 84.0 ms"),
    ("jit(vmap(dot)), 64 pairs of 128x128 f32, per call", "3.45 ms", "<= 3.62 ms"),
    ("jit SGD step, MLP 784-512-512-10, batch 128 f32, per step", "2.70 ms", "<= 2.84 ms"),
    (
        "sharded_jit.run: tanh(x @ w) @ w.T, 512x512 on 2x4 devices, per call",
        "5.50 ms",
        "<= 5.77 ms",
    ),
    ("sharded_jit.dispatch: x + 1, 8x8 over 8 devices, per call", "200 us", "<= 200 us"),
    (
        "shard_map_psum: jit(shard_map(psum)), 8x32768 f32 over 8 devices, per call",
        "500 us",
        "<= 525 us",
    ),
    (
        "pmap_dispatch: pmap(x * 2 + 1) on its own output, 8 devices, per call",
        "300 us",
        "<= 300 us",
    ),
    *(
        (f"export_roundtrip.{phase}: tanh MLP, x f32[b,64]", None, None)
        for phase in ("export", "serialize", "deserialize", "first call", "steady call")
    ),
]
_TIME = r"\d+(\.\d+)? (s|ms|us|ns)"


def test_bench_quick_prints_every_figure_next_to_jax(tmp_path):
    report = tmp_path / "bench.json"
    out = subprocess.run(
        [sys.executable, str(TOOLS / "bench"), "--quick", "--json", str(report)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("polyjax ") and "jaxlib" in lines[0] and "backend" in lines[0]
    table = lines[next(i for i, line in enumerate(lines) if line.startswith("benchmark")) :]
    assert table[0].split() == ["benchmark", "polyjax", "(min)", "JAX", "0.10.2", "target"]
    assert len(table) == 1 + len(BENCH_ROWS)
    for line, (name, jax_figure, target) in zip(table[1:], BENCH_ROWS):
        assert line.startswith(name + "  "), line
        rest = line[len(name) :]
        assert re.match(rf"\s+{_TIME}\s+{_TIME}\s", rest), line  # median and minimum
        if jax_figure is None:
            assert rest.rstrip().endswith("-"), line
        else:
            assert f" {jax_figure} " in rest and target in rest, line
            assert rest.rstrip().endswith((" ok", " over")), line
    data = json.loads(report.read_text())
    assert [r["name"] for r in data] == [name for name, _, _ in BENCH_ROWS]
    assert all(r["median"] > 0 and r["minimum"] <= r["median"] for r in data)
    assert data[0]["jax"] == 0.61 and data[0]["target"] == 0.3


def test_bench_rejects_unknown_options():
    out = subprocess.run(
        [sys.executable, str(TOOLS / "bench"), "--no-such-option"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert out.returncode == 2 and "usage: tools/bench" in out.stderr


def test_bench_only_dispatch_prints_issue_16_rows():
    out = subprocess.run(
        [sys.executable, str(TOOLS / "bench"), "--only", "dispatch", "--quick"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    names = ("jit_dispatch_small", "jit_dispatch_pytree", "eager_op.sin", "eager_op.mul_add")
    rows = [line for line in out.stdout.splitlines() if line.startswith(names)]
    assert [r.split(":")[0] for r in rows] == list(names)
    for row in rows:  # a median and a minimum; no JAX column without --jax
        assert re.search(rf"\s{_TIME}\s+{_TIME}\s+-\s+-$", row), row
