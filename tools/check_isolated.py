#!/usr/bin/env python3
"""Check that each polyjax package installs, imports and passes its tests on its own.

Usage:
    uv run --locked python tools/check_isolated.py [PACKAGE ...] [--keep] [-v]
        [--compilation-cache DIR]

PACKAGE is a distribution name (polyjax-core), an import name (polyjax_core) or a
directory name under packages/ (core); the default is every workspace package, bottom
layer first. For the requested packages this tool

1. builds the sdists and wheels of those packages and of every sibling they depend on,
   with `uv build --package DIST --no-sources` (as published: no workspace sources; the
   wheel is built from the sdist), and checks each wheel's metadata: its Requires-Dist
   names exactly what its modules import (tools/check_metadata.py) and `twine check
   --strict` passes on the wheel and the sdist (after step 4);
2. per package, makes a fresh virtualenv (`uv venv`, same Python as this one) in a
   temporary directory and installs only that package from the new wheels, plus the
   test tools its own `[dependency-groups] dev` lists; siblings are pinned to the
   versions just built, third-party dependencies come from the package index;
3. checks that the installed polyjax files are the ones just built;
4. imports the package with `python -I` and fails if that imported any module of a
   workspace package above it in the layer order (the import-linter `layers` contract
   of the root pyproject.toml) or of any distribution it does not declare, directly or
   through its declared dependencies;
5. runs the package's own tests (packages/<dir>/tests) with that venv's pytest, without
   the root pytest configuration, and fails unless at least one test ran and none failed
   (tests marked `multiprocess` or `sweep` are left to the main test run).

It never touches the workspace's .venv and leaves nothing in the repository; the
temporary directory is removed at the end unless --keep is given. Exit status: 0 when
every package passed, 1 when any step failed, 2 on bad usage. Standard library only,
but for twine (the workspace's dev group), which it imports.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import glob
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------
# The workspace: packages, their declared siblings and the layer order.

_NAME_RE = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def normalize(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    """The normalized distribution name at the start of a PEP 508 requirement string."""
    m = _NAME_RE.match(req)
    if not m:
        raise ValueError(f"cannot read a distribution name from requirement {req!r}")
    return normalize(m.group(1))


@dataclasses.dataclass
class Package:
    dist: str  # normalized distribution name, e.g. "polyjax-core"
    dir: Path  # <root>/packages/<dir>
    version: str
    import_names: list[str]
    dependencies: list[str]  # raw [project].dependencies
    dev_group: list[str]  # raw [dependency-groups].dev (strings only)


@dataclasses.dataclass
class Workspace:
    root: Path
    packages: dict[str, Package]  # by normalized dist name
    layers: list[str]  # import names, high to low, from the import-linter layers contract
    pytest_ini: dict  # the root [tool.pytest.ini_options]

    def resolve(self, name: str) -> Package:
        """A package by dist name, import name or directory name."""
        if normalize(name) in self.packages:
            return self.packages[normalize(name)]
        for pkg in self.packages.values():
            if name in pkg.import_names or pkg.dir.name == name:
                return pkg
        raise KeyError(f"unknown package {name!r} (known: {', '.join(self.packages)})")

    def siblings(self, dist: str) -> list[str]:
        """Workspace packages that `dist` declares in [project].dependencies."""
        names = (requirement_name(r) for r in self.packages[dist].dependencies)
        return list(dict.fromkeys(n for n in names if n in self.packages))

    def closure(self, dists) -> list[str]:
        """`dists` plus every sibling they depend on, transitively, bottom layer first."""
        seen: set[str] = set()
        stack = list(dists)
        while stack:
            d = stack.pop()
            if d not in seen:
                seen.add(d)
                stack.extend(self.siblings(d))
        return self.ordered(seen)

    def layer_rank(self, dist: str) -> int | None:
        """0 for the bottom layer, growing upwards; None if not in the layers contract."""
        for imp in self.packages[dist].import_names:
            if imp in self.layers:
                return len(self.layers) - 1 - self.layers.index(imp)
        return None

    def ordered(self, dists) -> list[str]:
        """Dependencies before dependants; ties broken by layer, then name."""

        def key(d):
            rank = self.layer_rank(d)
            return (len(self.layers) if rank is None else rank, d)

        done: list[str] = []
        active: list[str] = []

        def visit(d):
            if d in done:
                return
            if d in active:
                cycle = " -> ".join(active[active.index(d) :] + [d])
                raise ValueError(f"dependency cycle between workspace packages: {cycle}")
            active.append(d)
            for dep in sorted(self.siblings(d), key=key):
                visit(dep)
            active.pop()
            done.append(d)

        for d in sorted(self.packages, key=key):
            visit(d)
        wanted = set(dists)
        return [d for d in done if d in wanted]

    def above(self, dist: str) -> list[str]:
        """Workspace packages in a higher layer than `dist`."""
        rank = self.layer_rank(dist)
        if rank is None:
            return []
        ranks = {d: self.layer_rank(d) for d in self.packages}
        return [d for d, r in ranks.items() if r is not None and r > rank]


def _import_names(dist: str, pyproject: dict) -> list[str]:
    targets = pyproject.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
    pkgs = targets.get("wheel", {}).get("packages")
    return [Path(p).name for p in pkgs] if pkgs else [dist.replace("-", "_")]


def load_workspace(root: Path | str = REPO_ROOT) -> Workspace:
    root = Path(root).resolve()
    rootcfg = tomllib.loads((root / "pyproject.toml").read_text())
    tool = rootcfg.get("tool", {})
    ws = tool.get("uv", {}).get("workspace", {})
    excluded = {
        Path(p).resolve() for pat in ws.get("exclude", []) for p in glob.glob(str(root / pat))
    }
    packages: dict[str, Package] = {}
    for pattern in ws.get("members", []):
        for d in sorted(glob.glob(str(root / pattern))):
            d = Path(d).resolve()
            if d in excluded or not (d / "pyproject.toml").is_file():
                continue
            data = tomllib.loads((d / "pyproject.toml").read_text())
            proj = data.get("project", {})
            if "name" not in proj:
                continue
            dist = normalize(proj["name"])
            dev = data.get("dependency-groups", {}).get("dev", [])
            packages[dist] = Package(
                dist=dist,
                dir=d,
                version=str(proj.get("version", "")),
                import_names=_import_names(dist, data),
                dependencies=list(proj.get("dependencies", [])),
                dev_group=[g for g in dev if isinstance(g, str)],
            )
    layers: list[str] = []
    for contract in tool.get("importlinter", {}).get("contracts", []):
        if contract.get("type") == "layers" and not contract.get("containers"):
            layers = [layer.strip() for layer in contract.get("layers", [])]
            break
    pytest_ini = tool.get("pytest", {}).get("ini_options", {})
    return Workspace(root=root, packages=packages, layers=layers, pytest_ini=pytest_ini)


# ---------------------------------------------------------------------------
# Steps.


class StepFailed(Exception):
    def __init__(self, step: str, message: str, output: str = ""):
        super().__init__(message)
        self.step = step
        self.message = message
        self.output = output


def _env() -> dict[str, str]:
    """The environment for child processes: nothing that points at the workspace venv."""
    env = dict(os.environ)
    for var in (
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONHOME",
        "UV_PROJECT_ENVIRONMENT",
        "CONDA_PREFIX",
    ):
        env.pop(var, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(
    cmd,
    step: str,
    cwd: Path,
    verbose: bool,
    timeout: float = 1800,
    check: bool = True,
    extra_env: dict[str, str] | None = None,
):
    """Run `cmd`; return its output (with check=False: (exit status, output))."""
    if verbose:
        print("  $", " ".join(str(c) for c in cmd), flush=True)
    try:
        proc = subprocess.run(
            [str(c) for c in cmd],
            cwd=cwd,
            env=_env() | (extra_env or {}),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
    except FileNotFoundError as e:
        raise StepFailed(step, f"cannot run {cmd[0]!r}: {e}") from None
    except subprocess.TimeoutExpired as e:
        raise StepFailed(step, f"timed out after {timeout:.0f} s", str(e.output or "")) from None
    if verbose and proc.stdout:
        print(_indent(proc.stdout), flush=True)
    if not check:
        return proc.returncode, proc.stdout
    if proc.returncode != 0:
        raise StepFailed(
            step, f"exit status {proc.returncode}: {' '.join(map(str, cmd))}", proc.stdout
        )
    return proc.stdout


def _indent(text: str, prefix: str = "    | ") -> str:
    return "\n".join(prefix + line for line in text.rstrip().splitlines())


def build_wheels(ws: Workspace, dists, wheeldir: Path, verbose: bool) -> dict[str, Path]:
    """Build each dist's sdist, and its wheel from that sdist, without workspace sources.

    Returns dist -> wheel path (the sdist lies next to it).
    """
    wheels: dict[str, Path] = {}
    for dist in dists:
        pkg = ws.packages[dist]
        before = set(wheeldir.iterdir())
        run(
            ["uv", "build", "--package", dist, "--no-sources", "-o", wheeldir],
            f"build {dist}",
            ws.root,
            verbose,
        )
        prefix = dist.replace("-", "_") + "-" + pkg.version
        new = sorted(p for p in set(wheeldir.iterdir()) - before if p.name.startswith(prefix))
        wheel = [p for p in new if p.name.endswith(".whl")]
        sdist = [p for p in new if p.name.endswith(".tar.gz")]
        if len(wheel) != 1 or len(sdist) != 1:
            raise StepFailed(
                f"build {dist}", f"expected one new {prefix}*.whl and *.tar.gz in {wheeldir}"
            )
        wheels[dist] = wheel[0]
    return wheels


def check_metadata(ws: Workspace, pkg: Package, wheel: Path, verbose: bool) -> str:
    """The wheel's Requires-Dist names exactly what its modules import, and twine accepts
    the metadata of the wheel and the sdist (`twine check --strict`)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import check_metadata as cm

    problems = cm.check_wheel(wheel, ws.root)
    if problems:
        raise StepFailed("metadata", "; ".join(problems))
    sdist = wheel.parent / f"{pkg.dist.replace('-', '_')}-{pkg.version}.tar.gz"
    # In this process (twine's start-up costs more than its check): the metadata must
    # parse and the long description must render on PyPI, warnings counting as errors.
    from twine.commands import check as twine

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        failed = twine.check([str(wheel), str(sdist)], strict=True)
    if failed:
        raise StepFailed("twine check", "`twine check --strict` failed", out.getvalue())
    return "metadata ok"


def build_releases(ws: Workspace, wanted: dict, tmp: Path, verbose: bool) -> dict:
    """{sibling: (version, wheel)}: each older release in `wanted` ({sibling: (version, git
    ref)}) built from its ref, without workspace sources, into a directory of its own."""
    out = {}
    for dist, (version, ref) in wanted.items():
        src = tmp / f"src-{dist}-{version}"
        if not src.exists():
            src.mkdir()
            archive = subprocess.run(
                ["git", "archive", "--format=tar", ref], cwd=ws.root, capture_output=True
            )
            if archive.returncode != 0:
                raise StepFailed(f"checkout {dist}=={version}", archive.stderr.decode())
            subprocess.run(["tar", "-x", "-C", src], input=archive.stdout, check=True)
        out_dir = tmp / f"wheels-{dist}-{version}"
        run(["uv", "build", "--package", dist, "--no-sources", "--wheel", "-o", out_dir],
            f"build {dist}=={version}", src, verbose)  # fmt: skip
        wheel = next(out_dir.glob(f"{dist.replace('-', '_')}-{version}-*.whl"), None)
        if wheel is None:
            raise StepFailed(f"build {dist}=={version}", f"no wheel of {version} from {ref}")
        shutil.copy2(wheel, tmp / "wheels")
        out[dist] = (version, tmp / "wheels" / wheel.name)
    return out


def _record_hashes(lines, import_names) -> dict[str, str]:
    out = {}
    for line in lines:
        parts = line.rsplit(",", 2)
        if len(parts) == 3 and parts[1] and parts[0].split("/")[0] in import_names:
            out[parts[0]] = parts[1]
    return out


def verify_provenance(
    ws: Workspace, venv_python: Path, wheels: dict[str, Path], versions: dict[str, str]
) -> None:
    """Every workspace package in the venv must hold exactly the files of the new wheel."""
    probe = (
        "import json, sys\n"
        "from importlib import metadata\n"
        "out = {}\n"
        "for d in metadata.distributions():\n"
        "    record = d.read_text('RECORD') or ''\n"
        "    out[d.metadata['Name']] = [d.version, str(d.locate_file('')), record]\n"
        "print(json.dumps(out))\n"
    )
    step = "provenance"
    installed = json.loads(run([venv_python, "-I", "-c", probe], step, venv_python.parent, False))
    installed = {normalize(k): v for k, v in installed.items()}
    for dist, wheel in wheels.items():
        if dist not in installed:
            continue
        version, base, record = installed[dist]
        pkg = ws.packages[dist]
        expected = versions[dist]
        if version != expected:
            raise StepFailed(step, f"{dist} {version} is installed, not the {expected} just built")
        with zipfile.ZipFile(wheel) as zf:
            rec_name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
            expected = _record_hashes(zf.read(rec_name).decode().splitlines(), pkg.import_names)
        got = _record_hashes(record.splitlines(), pkg.import_names)
        for path, digest in expected.items():
            algo, _, want = digest.partition("=")
            try:
                data = (Path(base) / path).read_bytes()
            except OSError:
                data = b""
            have = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
            if have != want or got.get(path) != digest:
                raise StepFailed(
                    step,
                    f"{dist}: installed {path} differs from the wheel just built ({wheel.name})",
                )


IMPORT_PROBE = r"""
import importlib, json, re, sys
name = sys.argv[1]
before = set(sys.modules)
importlib.import_module(name)
loaded = sorted({m.split(".")[0] for m in set(sys.modules) - before})

# Only now import what the analysis needs.
from importlib import metadata

def norm(n):
    return re.sub(r"[-_.]+", "-", n).lower()

try:
    from packaging.requirements import Requirement
except ImportError:
    Requirement = None

def requires(dist, extras):
    try:
        reqs = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return []
    out = []
    for r in reqs:
        if Requirement is not None:
            req = Requirement(r)
            if req.marker is not None:
                envs = [{"extra": e} for e in (extras or [""])]
                if not any(req.marker.evaluate(env) for env in envs):
                    continue
            out.append((norm(req.name), sorted(req.extras)))
        else:  # no packaging: keep unconditional requirements only
            head, _, marker = r.partition(";")
            if "extra" in marker:
                continue
            m = re.match(r"\s*([A-Za-z0-9._-]+)\s*(\[([^\]]*)\])?", head)
            extras_ = [e.strip() for e in (m.group(3) or "").split(",") if e.strip()]
            out.append((norm(m.group(1)), extras_))
    return out

top = sys.argv[2]
closure, stack = set(), [(top, [])]
while stack:
    d, ex = stack.pop()
    key = (d, tuple(ex))
    if key in closure:
        continue
    closure.add(key)
    stack.extend(requires(d, ex))
owners = metadata.packages_distributions()
print(json.dumps({
    "loaded": loaded,
    "owners": {m: sorted({norm(d) for d in owners.get(m, [])}) for m in loaded},
    "closure": sorted({d for d, _ in closure}),
}))
"""


def check_import(ws: Workspace, pkg: Package, venv_python: Path, workdir: Path) -> str:
    """Import the package with `python -I`; fail on modules it has no right to load."""
    step = "import"
    report = None
    for imp in pkg.import_names:
        out = run([venv_python, "-I", "-c", IMPORT_PROBE, imp, pkg.dist], step, workdir, False)
        report = json.loads(out.strip().splitlines()[-1])
        problems = []
        above = {i: d for d in ws.above(pkg.dist) for i in ws.packages[d].import_names}
        others = {i: d for d in ws.packages if d != pkg.dist for i in ws.packages[d].import_names}
        declared = set(report["closure"])
        for mod in report["loaded"]:
            if mod in above:
                problems.append(f"{mod} ({above[mod]}, a higher layer than {pkg.dist})")
            elif mod in others and others[mod] not in declared:
                problems.append(f"{mod} ({others[mod]}, a sibling {pkg.dist} does not declare)")
            else:
                foreign = [d for d in report["owners"].get(mod, []) if d not in declared]
                if foreign:
                    problems.append(f"{mod} (from {', '.join(foreign)}, not a declared dependency)")
        if problems:
            raise StepFailed(step, f"`import {imp}` imported " + "; ".join(problems))
    dists = sorted({d for ds in report["owners"].values() for d in ds} - {pkg.dist})
    return "import ok" + (f" (also loads {', '.join(dists)})" if dists else "")


_SUMMARY_RE = re.compile(
    r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|subtests passed)"
)


def parse_pytest_summary(output: str) -> dict[str, int]:
    """Counts from pytest's closing line; {} if there is none."""
    for line in reversed(output.strip().splitlines()):
        if "no tests ran" in line:
            return {"passed": 0}
        found = _SUMMARY_RE.findall(line)
        if found and re.search(r" in [\d.]+s", line):
            counts: dict[str, int] = {}
            for n, word in found:
                word = {"error": "errors", "warning": "warnings"}.get(word, word)
                counts[word] = counts.get(word, 0) + int(n)
            return counts
    return {}


def pytest_command(ws: Workspace, pkg: Package, venv_python: Path) -> list:
    """The venv's pytest on the package's own tests, without the root pytest config."""
    cmd = [
        venv_python, "-I", "-B", "-m", "pytest", pkg.dir / "tests",
        "-c", os.devnull,
        "--rootdir", pkg.dir,
        "--confcutdir", pkg.dir,
        "--import-mode=importlib",
        "-p", "no:cacheprovider",
        "-q",
        # Runs of several processes are left to the main test run (slow, and
        # they need the polyjax facade that a lower package does not install),
        # and so are the broad sweeps: they check behaviour the main run has
        # checked, not how the package installs, and would double CI's time.
        "-m", "not multiprocess and not sweep",
    ]  # fmt: skip
    # Carry over the root settings that change what a test run means.
    for key in ("filterwarnings", "markers"):
        value = ws.pytest_ini.get(key)
        if value:
            lines = [value] if isinstance(value, str) else list(value)
            cmd += ["-o", f"{key}=" + "\n".join(lines)]
    if ws.pytest_ini.get("xfail_strict"):
        cmd += ["-o", "xfail_strict=true"]
    # A package whose tests are long declares pytest-xdist: use two workers, as CI has.
    if any(
        _NAME_RE.match(d) and normalize(_NAME_RE.match(d).group(1)) == "pytest-xdist"
        for d in pkg.dev_group or []
    ):
        cmd += ["-n", "2"]
    return cmd


# Set by --compilation-cache: the tests' environment points polyjax's persistent
# compilation cache at a directory (that an earlier run, e.g. CI's main one, filled).
_test_env: dict[str, str] = {}


def compilation_cache_env(directory: str) -> dict[str, str]:
    """The environment that makes every compilation use the persistent cache in `directory`."""
    return {
        "JAX_COMPILATION_CACHE_DIR": os.path.abspath(directory),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


def run_tests(ws: Workspace, pkg: Package, venv_python: Path, workdir: Path, verbose: bool) -> str:
    step = "tests"
    tests = pkg.dir / "tests"
    if not tests.is_dir():
        raise StepFailed(step, f"{tests} does not exist")
    rc, out = run(
        pytest_command(ws, pkg, venv_python),
        step,
        workdir,
        verbose,
        check=False,
        extra_env=_test_env,
    )
    counts = parse_pytest_summary(out)
    if counts.get("failed") or counts.get("errors"):
        raise StepFailed(step, _fmt_counts(counts), out)
    if rc == 5 or (counts and not counts.get("passed")):
        raise StepFailed(step, f"no tests ran in {tests}", out)
    if rc != 0 or not counts:
        raise StepFailed(step, f"pytest exited with status {rc}", out)
    return _fmt_counts(counts)


def _fmt_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {w}" for w, n in counts.items() if w != "warnings") or "nothing"


# ---------------------------------------------------------------------------
# Driver.


@dataclasses.dataclass
class Result:
    dist: str
    ok: bool
    detail: str
    seconds: float


def check_package(ws, pkg, wheels, wheeldir, tmp, python, verbose, lowest=None) -> Result:
    """Install, import and test one package; `lowest`: {sibling: (version, wheel)} to
    install instead of the workspace's versions (--lowest)."""
    lowest = lowest or {}
    versions = {d: ws.packages[d].version for d in wheels} | {d: v for d, (v, _) in lowest.items()}
    wheels = wheels | {d: w for d, (_, w) in lowest.items()}
    start = time.monotonic()
    tag = "-lowest" if lowest else ""
    work = tmp / f"work-{pkg.dist}{tag}"
    work.mkdir()
    venv = tmp / f"venv-{pkg.dist}{tag}"
    py = venv / "bin" / "python"
    details = []
    try:
        run(["uv", "venv", "--quiet", "--python", python, venv], "venv", work, verbose)
        # Siblings exactly as just built; the rest from the package index.
        constraints = tmp / "constraints.txt"
        constraints.write_text("".join(f"{d}=={v}\n" for d, v in versions.items()))
        dev = pkg.dev_group or ["pytest"]
        run(
            ["uv", "pip", "install", "--python", py, "--find-links", wheeldir,
             "--constraints", constraints, f"{pkg.dist}=={pkg.version}", *dev],
            "install", work, verbose,
        )  # fmt: skip
        verify_provenance(ws, py, wheels, versions)
        details.append(check_import(ws, pkg, py, work))
        details.append(check_metadata(ws, pkg, wheels[pkg.dist], verbose))
        details.append("tests: " + run_tests(ws, pkg, py, work, verbose))
        return Result(pkg.dist, True, "; ".join(details), time.monotonic() - start)
    except StepFailed as e:
        print(f"\n!! {pkg.dist}: {e.step} failed: {e.message}", flush=True)
        if e.output:
            print(_indent("\n".join(e.output.rstrip().splitlines()[-60:])), flush=True)
        if e.step == "install" and "No solution found" in e.output:
            print(
                "   (a declared range on a sibling may exclude the version now in the workspace;"
                " see tools/release.py --update-dependants)",
                flush=True,
            )
        return Result(pkg.dist, False, f"{e.step}: {e.message}", time.monotonic() - start)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Build, install alone, import and test each polyjax package in a fresh venv."
    )
    parser.add_argument(
        "packages", nargs="*", help="dist, import or directory names (default: all)"
    )
    parser.add_argument(
        "--root", default=str(REPO_ROOT), help="workspace root (default: this repo)"
    )
    parser.add_argument(
        "--python",
        default=getattr(sys, "_base_executable", None) or sys.executable,
        help="interpreter for the fresh venvs (default: the one running this script)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--lowest",
        action="store_true",
        help="run only the packages whose sibling ranges allow an older release than the "
        "workspace's, against those releases (tools/min_versions.py)",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="show every command and its output"
    )
    parser.add_argument(
        "--compilation-cache",
        metavar="DIR",
        help="run the tests with polyjax's persistent compilation cache in DIR (every "
        "compilation read from and written to it): a DIR that an earlier run filled "
        "(JAX_COMPILATION_CACHE_DIR=DIR with JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0) "
        "saves most compile time",
    )
    args = parser.parse_args(argv)
    _test_env.clear()
    if args.compilation_cache:
        _test_env.update(compilation_cache_env(args.compilation_cache))

    if shutil.which("uv") is None:
        print("error: uv is not on PATH", file=sys.stderr)
        return 2
    ws = load_workspace(args.root)
    try:
        targets = ws.ordered(ws.resolve(p).dist for p in args.packages or list(ws.packages))
    except (KeyError, ValueError) as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2

    lowest_plan: dict = {}
    if args.lowest:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import min_versions

        lowest_plan = min_versions.plan(ws.root, targets)
        if not lowest_plan:
            print("--lowest: every sibling range's lowest allowed release is the workspace's "
                  "version; nothing more to run")  # fmt: skip
            return 0
        targets = [t for t in targets if t in lowest_plan]

    total_start = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="polyjax-isolated-"))
    try:
        wheeldir = tmp / "wheels"
        wheeldir.mkdir()
        to_build = ws.closure(targets)
        print(
            f"== building {len(to_build)} wheel(s) without workspace sources: {', '.join(to_build)}"
        )
        start = time.monotonic()
        try:
            wheels = build_wheels(ws, to_build, wheeldir, args.verbose)
        except StepFailed as e:
            print(f"!! {e.step} failed: {e.message}")
            print(_indent(e.output))
            print(f"FAILED: could not build the wheels ({time.monotonic() - start:.1f} s)")
            return 1
        print(f"   built in {time.monotonic() - start:.1f} s")

        results = []
        for dist in targets:
            print(f"== {dist}", flush=True)
            try:
                lowest = build_releases(ws, lowest_plan.get(dist, {}), tmp, args.verbose)
            except StepFailed as e:
                results.append(Result(dist, False, f"{e.step}: {e.message}", 0.0))
                print(_indent(e.output))
                continue
            res = check_package(
                ws, ws.packages[dist], wheels, wheeldir, tmp, args.python, args.verbose, lowest
            )
            print(
                f"   {'ok' if res.ok else 'FAILED'}: {res.detail} ({res.seconds:.1f} s)", flush=True
            )
            results.append(res)
    finally:
        if args.keep:
            print(f"(kept {tmp})")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    width = max(len(r.dist) for r in results)
    print("\n== summary (isolated install, import, own tests)")
    for r in results:
        print(f"{r.dist:<{width}}  {'PASS' if r.ok else 'FAIL'}  {r.seconds:6.1f} s  {r.detail}")
    failed = [r.dist for r in results if not r.ok]
    elapsed = time.monotonic() - total_start
    if failed:
        print(f"FAILED: {', '.join(failed)} ({elapsed:.1f} s in all)")
        return 1
    print(f"all {len(results)} package(s) passed in isolation ({elapsed:.1f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
