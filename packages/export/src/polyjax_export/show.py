"""A readable summary of an `Exported`, and the ``show`` command line.

``python -m polyjax.export show FILE [--module]`` (the facade's entry point,
`main` here) prints what `describe` gives for a serialized artifact.
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from polyjax_core import symbolic_dims as sd
from polyjax_core import tree_util
from polyjax_export import _export
from polyjax_export._exported import Exported, NamedShardingSpec

__all__ = ["describe", "main"]


def _aval(a: Any) -> str:
    return f"{a.dtype}[{', '.join(str(d) for d in a.shape)}]"


def _sharding(s: NamedShardingSpec | None) -> str:
    if s is None:
        return ""
    mesh = ", ".join(f"'{n}': {k}" for n, k in zip(s.axis_names, s.axis_sizes))
    return f"  sharding {s.spec_str()} on mesh {{{mesh}}}"


def _leaf_names(tree: Any, prefix: str) -> list[str]:
    leaves = tree_util.tree_flatten_with_path(tree.unflatten(list(range(tree.num_leaves))))[0]
    return [prefix + tree_util.keystr(path) for path, _ in leaves]


def _arg_names(exp: Exported) -> list[str]:
    # in_tree is ((args...), {kwargs}): name leaves args[i]... and kwargs['k']...
    names = _leaf_names(exp.in_tree, "")
    return [n.replace("[0]", "args", 1) if n.startswith("[0]") else n.replace("[1]", "kwargs", 1)
            for n in names]  # fmt: skip


def _is_live(exp: Exported) -> bool:
    """Whether `exp` comes from `export` in this process (not from bytes)."""
    get = exp._get_vjp
    return isinstance(get, functools.partial) and get.func is _export._export_vjp


def _vjp_orders(exp: Exported) -> str:
    # A live export makes the VJP of every order on demand: counting them would
    # never end. An artifact read from bytes has the orders it was serialized with.
    if _is_live(exp):
        return "every order, on demand (not serialized yet)"
    order, e = 0, exp
    while e.has_vjp():
        order, e = order + 1, e.vjp()
    return f"order {order}" if order else "none"


def describe(exp: Exported, *, module: bool = False) -> str:
    """The signature of `exp` as text (and its StableHLO when `module`).

    Example:
      >>> import numpy as np
      >>> from polyjax_core import ShapeDtypeStruct
      >>> from polyjax_export import deserialize, export
      >>> from polyjax_interpreters.jit import jit
      >>> exp = export(jit(lambda x: x))(ShapeDtypeStruct((3,), np.float32))
      >>> print(describe(deserialize(exp.serialize(vjp_order=1))))
      function <lambda>
        platforms: cpu; devices: 1
      ...
        vjp: order 1
    """
    lines = [f"function {exp.fun_name}"]
    dim_vars = sd.shape_vars(a.shape for a in exp.in_avals)
    lines.append(f"  platforms: {', '.join(exp.platforms)}; devices: {exp.nr_devices}")
    lines.append(
        f"  calling convention: {exp.calling_convention_version}; "
        f"uses global constants: {exp.uses_global_constants}"
    )
    lines.append(f"  symbolic dimensions: {', '.join(dim_vars) if dim_vars else 'none'}")
    lines.append(f"  constraints: {'; '.join(exp._constraints) if exp._constraints else 'none'}")
    lines.append(f"  in_tree: {exp.in_tree}")
    in_sh = exp._in_named_shardings or (None,) * len(exp.in_avals)
    out_sh = exp._out_named_shardings or (None,) * len(exp.out_avals)
    lines.append("  inputs:")
    kept = set(exp.module_kept_var_idx)
    for i, (name, a, s) in enumerate(zip(_arg_names(exp), exp.in_avals, in_sh)):
        unused = "" if i in kept else "  (unused: not passed to the module)"
        lines.append(f"    {name}: {_aval(a)}{_sharding(s)}{unused}")
    lines.append(f"  out_tree: {exp.out_tree}")
    lines.append("  outputs:")
    for name, a, s in zip(_leaf_names(exp.out_tree, "result"), exp.out_avals, out_sh):
        lines.append(f"    {name}: {_aval(a)}{_sharding(s)}")
    lines.append(
        f"  effects: ordered {list(exp.ordered_effects) or 'none'}, "
        f"unordered {list(exp.unordered_effects) or 'none'}"
    )
    checks = [repr(c) for c in exp.disabled_safety_checks]
    lines.append(f"  disabled safety checks: {', '.join(checks) if checks else 'none'}")
    lines.append(f"  vjp: {_vjp_orders(exp)}")
    text = "\n".join(lines)
    if module:
        text += "\n\n" + exp.mlir_module()
    return text


def main(argv: list[str] | None = None) -> int:
    """Runs ``show FILE [--module]``; returns the exit status.

    Args:
      argv: the command-line arguments (default: ``sys.argv[1:]``).

    Returns:
      0, or 1 when the file cannot be read or deserialized (the error on stderr).
    """
    parser = argparse.ArgumentParser(
        prog="python -m polyjax.export", description="Inspect serialized Exported artifacts."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the signature of a serialized Exported")
    show.add_argument("file", help="a file written by Exported.serialize()")
    show.add_argument("--module", action="store_true", help="also print the StableHLO module")
    args = parser.parse_args(argv)

    from polyjax_export._serialization import deserialize

    try:
        with open(args.file, "rb") as f:
            exp = deserialize(f.read())
        text = describe(exp, module=args.module)
    except (OSError, ValueError, NotImplementedError) as e:
        print(f"error: {args.file}: {e}", file=sys.stderr)
        return 1
    print(text)
    return 0
