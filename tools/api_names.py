#!/usr/bin/env python3
"""JAX 0.10.2's public names, module by module, against polyjax's: the missing list and table.

Usage:
    uv run --no-sync python tools/api_names.py           # rewrite the missing list and the table
    uv run --no-sync python tools/api_names.py --check   # exit 1 if either is stale

JAX's names are data (../shared/jax_api_names.txt beside the repository, one line per module:
`module: name name ...`; JAX is never imported). For each module `jax.X` this tool
imports `polyjax.X` and looks each name up, then writes

- tests_integration/data/api_names_missing.txt: the names polyjax does not have yet,
  in the same format (a module polyjax lacks lists all its names);
- docs/api-coverage.md: per module, how many names polyjax has, and each missing name
  with the reason: left out on purpose (`ON_PURPOSE` below) or the issue that owns it.

tests_integration/test_api_coverage.py fails when a name polyjax had disappears (it is
missing but not in the committed list) or when either file is stale (a name appeared:
rerun this tool, or `tools/api_gate.py refresh`, which also runs it).
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JAX_NAMES = ROOT.parent / "shared" / "jax_api_names.txt"
MISSING = ROOT / "tests_integration" / "data" / "api_names_missing.txt"
DOC = ROOT / "docs" / "api-coverage.md"

# Names polyjax leaves out on purpose, with the reason.
_IMPORT = "an import inside JAX's module (a module or helper it uses), not API"


def _imports(names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), _IMPORT)


_ODE_STEP = (
    "a step of JAX's own Dormand-Prince integrator behind odeint, undocumented; "
    "polyjax's odeint has its own internals"
)
_JET_INTERPRETER = (
    "the trace, tracer and wrapped-function plumbing of JAX's Taylor interpreter; "
    "polyjax's jet evaluates the jaxpr equation by equation when rules are registered "
    "(jet_rules), with nested forward-mode derivatives for the others"
)
_JET_ZEROS = (
    "JAX's symbolic-zero markers of its Taylor interpreter; the rules polyjax's jet calls "
    "receive zero terms written out"
)
_MULTIHOST_PRIMITIVE = (
    "the primitive (and its rules) behind JAX's host-local/global array conversion; "
    "polyjax converts with make_array_from_process_local_data and "
    "make_array_from_single_device_arrays, no primitive"
)
ON_PURPOSE: dict[str, dict[str, str]] = {
    "jax.lax": {
        "device_put_p": "polyjax's device_put is not a primitive: eagerly a transfer, under "
        "jit the identity or a sharding constraint (packages/sharding)",
    },
    "jax": {
        "jax2tf_associative_scan_reductions": "a flag of jax2tf (TensorFlow conversion), "
        "which polyjax does not have",
        "lib": "an empty module in JAX 0.10.2 (its former bridge to jaxlib's internals is "
        "gone); polyjax's packages call jaxlib directly",
        "api_util": "JAX's internal helpers for writing transformations on JAX's own "
        "WrappedFun (flatten_fun, argnums_partial, donation_vector, ...); polyjax's "
        "transformations are written on polyjax.extend.linear_util",
        "enable_custom_prng": "a transitional flag of JAX's upgrade to user-defined PRNG "
        "implementations; polyjax's PRNG implementations are its built-in ones, chosen by "
        "name with jax_default_prng_impl",
    },
    "jax.experimental": {
        "EArray": "JAX's internal array of an extended dtype (key arrays are built on it); "
        "polyjax's key arrays are their own type (polyjax.random's PRNGKeyArray)",
        "cur_qdd": "an internal of JAX's tracing of mutable references (the current "
        "'quasi-dynamic data' of a Ref under a trace)",
        "primal_tangent_dtype": "a hook of JAX's extended-dtype machinery for declaring a "
        "custom dtype with its own tangent dtype; polyjax has no user-defined dtypes",
    },
    "jax.experimental.shard_map": _imports("jshmap traceback_util"),
    "jax.experimental.multihost_utils": {
        **_imports(
            "Any P ad annotations array batching contextlib core distributed dtypes jax jnp "
            "lru_cache mlir np partial pjit_lib prng pxla safe_zip sharding_impls "
            "tree_flatten tree_unflatten xla_bridge xla_client zlib"
        ),
        **dict.fromkeys(
            "global_array_to_host_local_array_impl global_array_to_host_local_array_p "
            "gtl_abstract_eval host_local_array_to_global_array_impl "
            "host_local_array_to_global_array_p ltg_abstract_eval ltg_batcher".split(),
            _MULTIHOST_PRIMITIVE,
        ),
    },
    "jax.custom_derivatives": {
        "remat_opt_p": "the primitive of JAX's custom_vjp(optimize_remat=True); polyjax "
        "accepts optimize_remat and keeps custom_vjp's usual residuals",
    },
    "jax.example_libraries.optimizers": _imports(
        "Array jax map namedtuple partial safe_map safe_zip unzip2 zip"
    ),
    "jax.experimental.ode": {
        **_imports(
            "api_util core custom_derivatives jax lu map op partial promote_dtypes_inexact "
            "safe_map safe_zip zip"
        ),
        **dict.fromkeys(
            "abs2 fit_4th_order_polynomial initial_step_size interp_fit_dopri "
            "mean_error_ratio optimal_step_size ravel_first_arg ravel_first_arg_ "
            "runge_kutta_step".split(),
            _ODE_STEP,
        ),
    },
    "jax.experimental.jet": {
        **_imports(
            "ad_util api_util core dispatch lax lax_internal lu np partial pe pjit "
            "register_pytree_node safe_zip sharding_impls tree_flatten tree_structure "
            "tree_unflatten treedef_is_leaf unzip2 weakref_lru_cache"
        ),
        **dict.fromkeys(
            "JetTrace JetTracer call_param_updaters jet_fun jet_subtrace traceable".split(),
            _JET_INTERPRETER,
        ),
        **dict.fromkeys("ZeroSeries ZeroTerm zero_series zero_term".split(), _JET_ZEROS),
    },
    "jax.extend": {
        "pallas": "the registration hooks of JAX's Pallas kernel language "
        "(GridMapping, register_lowering_rule); polyjax has no Pallas",
        "xla": "hooks for custom HLO passes at stages of JAX's XLA compiler pipeline "
        "(register_hlo_module_transformation); polyjax compiles through PJRT's compile "
        "call and has no pass registry",
    },
    "jax.experimental.sparse": {
        "SparseTracer": "the tracer of JAX's sparsify; polyjax's sparsify evaluates the "
        "function's jaxpr with the sparse values instead of tracing with a sparse tracer",
    },
}

# Who owns the names still missing, by module (the longest matching prefix wins).
_SHARDING = "sharding and distributed issues"
_EFFECTS = "issue 17: effects, callbacks, checkify, profiler"
_SMALL = "issue 20 points 1-2: top level, small modules, lax"
_LIBS = "issue 20 points 3-5: scipy, nn, example_libraries, experimental"
_REFS = "issue 20 point 1: mutable array references (jax.ref)"
OWNERS: dict[str, str] = {
    "jax": "issue 20 point 1, the sharding issues and issue 17 for their names",
    "jax.lax": _SMALL,
    "jax.ref": _REFS,
    "jax.numpy": _SMALL,
    "jax.sharding": _SHARDING,
    "jax.distributed": _SHARDING,
    "jax.experimental.shard_map": _SHARDING,
    "jax.experimental.multihost_utils": _SHARDING,
    "jax.export": "the export issue",
    "jax.debug": _EFFECTS,
    "jax.profiler": _EFFECTS,
    "jax.experimental.checkify": _EFFECTS,
    "jax.experimental.compilation_cache": "issue 16: persistent compilation cache",
    "jax.experimental": _LIBS,
    "jax.example_libraries": _LIBS,
    "jax.scipy": _LIBS,
    "jax.nn": _LIBS,
}


def read_names(path: Path) -> dict[str, list[str]]:
    """`module: name name ...` lines -> {module: [names]} (the file's order)."""
    out: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            module, _, names = line.partition(":")
            out[module.strip()] = names.split()
    return out


def write_names(names: dict[str, list[str]]) -> str:
    return "".join(f"{m}: {' '.join(ns)}\n" for m, ns in names.items() if ns)


def polyjax_module(jax_module: str) -> types.ModuleType | None:
    """polyjax's module for `jax.X`, or None when polyjax has no such module."""
    name = "polyjax" + jax_module.removeprefix("jax")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and name.startswith(e.name):
            return None
        raise


def missing_now(jax_names: dict[str, list[str]]) -> dict[str, list[str]]:
    """JAX's names that polyjax lacks today, module by module (on-purpose ones included)."""
    out = {}
    for module, names in jax_names.items():
        ours = polyjax_module(module)
        out[module] = [n for n in names if ours is None or not hasattr(ours, n)]
    return out


# Owners of single names that differ from their module's owner.
NAME_OWNERS: dict[str, dict[str, str]] = {
    "jax": {
        **dict.fromkeys("Ref empty_ref free_ref freeze new_ref ref".split(), _REFS),
        "memory": _SHARDING + " (memory spaces of arrays: jax.memory.Space)",
        "remove_size_one_mesh_axis_from_type": _SHARDING + " (shardings in types)",
    },
    "jax.sharding": {
        "ManualAxisType": _SHARDING
        + " (manual axis types of abstract inputs: ShapeDtypeStruct(manual_axis_type=))"
    },
}


def owner(module: str) -> str:
    prefixes = [p for p in OWNERS if module == p or module.startswith(p + ".")]
    return OWNERS[max(prefixes, key=len)] if prefixes else _SMALL


def render(jax_names: dict[str, list[str]], missing: dict[str, list[str]]) -> str:
    total = sum(len(ns) for ns in jax_names.values())
    lacking = sum(len(missing.get(m, ())) for m in jax_names)
    lines = [
        "# Coverage of JAX 0.10.2's public names",
        "",
        "<!-- generated by tools/api_names.py from tests_integration/data/: do not edit -->",
        "",
        "Every public module of JAX 0.10.2 and how many of its names polyjax has",
        "(`polyjax.X` for `jax.X`). The test `tests_integration/test_api_coverage.py`",
        "fails when a name polyjax had disappears or this page is stale. Names left",
        "out on purpose say why; the others name the issue that owns them.",
        "`jax.lax` and `jax.numpy` have section-by-section tables in",
        "[lax.md](lax.md) and [numpy.md](numpy.md).",
        "",
        f"Implemented: {total - lacking} of {total} names.",
        "",
        "| module | has | of | missing |",
        "|---|---|---|---|",
    ]
    for module, names in jax_names.items():
        miss = missing.get(module, [])
        lines.append(f"| `{module}` | {len(names) - len(miss)} | {len(names)} | {len(miss)} |")
    lines += ["", "## Left out on purpose", ""]
    for module, reasons in ON_PURPOSE.items():
        for name, why in reasons.items():
            lines.append(f"- `{module}.{name}`: {why}.")
    lines += ["", "## Not there yet", ""]
    for module in jax_names:
        miss = [n for n in missing.get(module, []) if n not in ON_PURPOSE.get(module, {})]
        by_owner: dict[str, list[str]] = {}
        for n in miss:
            by_owner.setdefault(NAME_OWNERS.get(module, {}).get(n, owner(module)), []).append(n)
        for who, names in by_owner.items():
            lines += [f"### `{module}`: {who}", "", " ".join(f"`{n}`" for n in names), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    jax_names = read_names(JAX_NAMES)
    missing = missing_now(jax_names)
    files = {MISSING: write_names(missing), DOC: render(jax_names, missing)}
    status = 0
    for path, text in files.items():
        current = path.read_text() if path.exists() else ""
        where = path.relative_to(ROOT)
        if current == text:
            print(f"{where} is up to date")
        elif "--check" in argv:
            print(f"{where} is stale: run tools/api_names.py")
            status = 1
        else:
            path.write_text(text)
            print(f"wrote {where}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
