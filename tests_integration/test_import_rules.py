"""Import rules that import-linter's contracts do not express.

The layer order and the absence of cycles are import-linter contracts in the
root pyproject.toml (run by pre-commit). Here: a module whose name starts with
`_` is private to its package, so no other package may import it.
"""

import grimp

PACKAGES = [
    "polyjax",
    "polyjax_export",
    "polyjax_sharding",
    "polyjax_numpy",
    "polyjax_interpreters",
    "polyjax_core",
]


def _is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def test_private_modules_are_not_imported_across_packages():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    offenders = []
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.split(".")[0] != module.split(".")[0] and _is_private(imported):
                offenders.append(f"{module} -> {imported}")
    assert offenders == []


def test_core_imports_no_other_package():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    for other in PACKAGES[:-1]:
        assert not graph.chain_exists("polyjax_core", other, as_packages=True), other
