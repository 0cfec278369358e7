"""Regenerates docs/lax.md, the table of `jax.lax` names polyjax implements.

The lists live in packages/numpy/tests/test_lax_coverage.py (`JAX_LAX`, and
`IMPLEMENTED`, the subset done); this script renders them, and reports names
that polyjax already exports but `IMPLEMENTED` does not list yet:

    uv run --no-sync python tools/lax_coverage.py [--check]

With `--check` it writes nothing and exits 1 when docs/lax.md is stale.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
TEST = ROOT / "packages" / "numpy" / "tests" / "test_lax_coverage.py"


def _load_lists():
    spec = importlib.util.spec_from_file_location("_lax_coverage_lists", TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    lists = _load_lists()
    text = lists.render_doc()
    every = [n for names in lists.JAX_LAX.values() for n in names]
    unlisted = [n for n in every if n not in lists.IMPLEMENTED and lists._lookup(n)]
    if unlisted:
        print("exported but not in IMPLEMENTED:", " ".join(unlisted))
    if "--check" in argv:
        current = lists.DOC.read_text() if lists.DOC.exists() else ""
        if current != text:
            print(f"{lists.DOC.relative_to(ROOT)} is stale")
            return 1
        return 0
    lists.DOC.write_text(text)
    print(f"wrote {lists.DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
