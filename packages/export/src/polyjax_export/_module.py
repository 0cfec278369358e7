"""The StableHLO module inside an `Exported`: reading it, checking it, refining it.

`mlir_module_serialized` is a StableHLO portable artifact. To call it, we
build a small wrapper module whose public `main` has the concrete argument
types of the call: it passes the platform index as a constant and converts
each argument to the type the artifact's `main` declares (`tensor<?x16xf32>`
for a symbolic dimension). jaxlib's `refine_polymorphic_shapes` then
propagates the concrete shapes through the whole module (running the shape
assertions against them), and the refined functions are copied into the
caller's module (`inline_call`), renamed so that they cannot clash.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import symbolic_dims as sd
from polyjax_export._exported import _IMPLS
from polyjax_interpreters import mlir

__all__ = ["check_module_signature", "inline_call", "module_text"]


def _deserialize(blob: bytes) -> ir.Module:
    """The module of a portable artifact, in the current context."""
    diagnostics: list[str] = []

    def keep(d: Any) -> bool:
        # Never raise here: an exception escaping into MLIR's C++ corrupts the process.
        # The message of corrupted bytecode may not even be valid UTF-8.
        try:
            diagnostics.append(str(d.message))
        except Exception:
            diagnostics.append("(a diagnostic that is not valid text)")
        return True  # handled: MLIR would otherwise print it on stderr

    handler = ir.Context.current.attach_diagnostic_handler(keep)
    try:
        return _jax.mlir.deserialize_portable_artifact(bytes(blob))
    except Exception as e:  # jaxlib raises assorted errors on bad bytes
        detail = "; ".join(diagnostics) or f"{type(e).__name__}: {e}"
        raise ValueError(
            f"Cannot deserialize the StableHLO module of an Exported: {detail}"
        ) from None
    finally:
        handler.detach()


def module_text(blob: bytes) -> str:
    """The StableHLO text of a serialized module."""
    with mlir.make_ir_context():
        return mlir.module_to_string(_deserialize(blob))


_IMPLS["module_text"] = module_text


def _main(module: ir.Module) -> func.FuncOp:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == (
            "main"
        ):
            return op
    raise ValueError("the StableHLO module has no 'main' function")


def _n_leading(exp: Any) -> int:
    """How many arguments `main` takes before the arrays: platform index and tokens."""
    return (1 if len(exp.platforms) > 1 else 0) + len(exp.ordered_effects)


def _ranked(t: ir.Type) -> ir.RankedTensorType | None:
    try:
        return ir.RankedTensorType(t)
    except ValueError:
        return None


def _type_matches(t: ir.Type, aval: Any) -> bool:
    rt = _ranked(t)
    if rt is None:
        return False
    if rt.rank != len(aval.shape) or rt.element_type != mlir.dtype_to_ir_type(aval.dtype):
        return False
    dyn = ir.ShapedType.get_dynamic_size()
    return all(
        s == dyn if not sd.is_constant_dim(d) else s in (int(d), dyn)
        for s, d in zip(rt.shape, aval.shape)
    )


def check_module_signature(exp: Any) -> None:
    """Checks that the module deserializes and its `main` takes and returns what the avals say.

    Checked once per `Exported` (the result is remembered on it).

    Raises:
      ValueError: naming the first argument or result that differs.
    """
    if exp.__dict__.get("_module_checked"):
        return
    with mlir.make_ir_context(), ir.Location.unknown():
        module = _deserialize(exp.mlir_module_serialized)
        ftype = ir.FunctionType(ir.TypeAttr(_main(module).attributes["function_type"]).value)
        ins, outs = list(ftype.inputs), list(ftype.results)
        lead = _n_leading(exp)
        kept = [exp.in_avals[i] for i in exp.module_kept_var_idx]
        name = exp.fun_name
        if len(ins) != lead + len(kept):
            raise ValueError(
                f"The module of '{name}' has a main with {len(ins)} arguments, but its "
                f"signature needs {lead + len(kept)} ({lead} for the platform index and "
                f"tokens, {len(kept)} arrays)"
            )
        for i, t, aval in zip(exp.module_kept_var_idx, ins[lead:], kept):
            if not _type_matches(t, aval):
                raise ValueError(
                    f"The module of '{name}' takes {t} for argument {i}, which does not match "
                    f"its aval {aval.str_short()}"
                )
        n_tok = len(exp.ordered_effects)
        if len(outs) != n_tok + len(exp.out_avals):
            raise ValueError(
                f"The module of '{name}' returns {len(outs)} values, but its signature has "
                f"{len(exp.out_avals)} results and {n_tok} tokens"
            )
        for i, (t, aval) in enumerate(zip(outs[n_tok:], exp.out_avals)):
            if not _type_matches(t, aval):
                raise ValueError(
                    f"The module of '{name}' returns {t} for result {i}, which does not match "
                    f"its aval {aval.str_short()}"
                )
    object.__setattr__(exp, "_module_checked", True)  # Exported is frozen


_counter = itertools.count()


def _wrapper_module(
    exp: Any, platform_index: int | None, arg_types: Sequence[ir.Type], out_types: Sequence[ir.Type]
) -> ir.Module:
    """A module whose public main calls the artifact's main on `arg_types`."""
    # Some kernels (LAPACK's) are bound at the first lowering that calls them: an
    # artifact may be the process's first user of them. Importing lax.linalg
    # registers their initializer.
    import polyjax_numpy.lax.linalg  # noqa: F401

    mlir.initialize_custom_call_targets(bytes(exp.mlir_module_serialized))
    callee_module = _deserialize(exp.mlir_module_serialized)
    callee = _main(callee_module)
    callee.attributes["sym_name"] = ir.StringAttr.get("_exported_main")
    callee.attributes["sym_visibility"] = ir.StringAttr.get("private")
    ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
    callee_ins, callee_outs = list(ftype.inputs), list(ftype.results)
    with ir.InsertionPoint(callee_module.body):
        main = func.FuncOp("main", ir.FunctionType.get(list(arg_types), list(out_types)))
    main.attributes["sym_visibility"] = ir.StringAttr.get("public")
    entry = main.add_entry_block()
    with ir.InsertionPoint(entry):
        args: list[ir.Value] = []
        if platform_index is not None:
            idx = mlir.ir_constant(__import__("numpy").int32(platform_index))
            args.append(_convert(idx, callee_ins[0]))
        for a, t in zip(entry.arguments, callee_ins[len(args) :]):
            args.append(_convert(a, t))
        call = func.CallOp(callee_outs, ir.FlatSymbolRefAttr.get("_exported_main"), args)
        func.ReturnOp([_convert(r, t) for r, t in zip(call.results, out_types)])
    return callee_module


def _convert(x: ir.Value, t: ir.Type) -> ir.Value:
    if x.type == t:
        return x
    rt, rx = _ranked(t), _ranked(x.type)
    if rt is not None and rx is not None and rt.element_type != rx.element_type:
        raise ValueError(f"cannot pass {x.type} as {t}")
    return hlo.convert(t, x)


def _refine(module: ir.Module) -> ir.Module:
    """Shape refinement; a violated shape assertion or constraint raises ValueError."""
    try:
        refined = _jax.mlir.refine_polymorphic_shapes(
            mlir.module_to_bytecode(module),
            enable_shape_assertions=True,
            validate_static_shapes=True,
        )
    except Exception as e:
        raise ValueError(_refinement_message(e)) from None
    return ir.Module.parse(refined)


def _refinement_message(e: Exception) -> str:
    text = _strip_status(str(e))
    # jaxlib reports a failed shape_assertion with its error message, formatted
    # from the operands: keep that, it is the message for the user.
    # It comes after a location and "error: ", which we drop too.
    for line in text.splitlines():
        for start in ("Input shapes do not match", "Shape mismatch"):
            if start in line:
                return line[line.index(start) :].strip()
    return f"Error refining shapes: {text}"


# absl status codes jaxlib puts before its messages ("INVALID_ARGUMENT: ...");
# they say nothing to the user, who gets a ValueError anyway.
_STATUS_PREFIX = re.compile(
    r"\b(?:INVALID_ARGUMENT|UNKNOWN|FAILED_PRECONDITION|INTERNAL|UNIMPLEMENTED"
    r"|OUT_OF_RANGE|NOT_FOUND|ABORTED|RESOURCE_EXHAUSTED): "
)


def _strip_status(text: str) -> str:
    return _STATUS_PREFIX.sub("", text)


def inline_call(
    ctx: Any,
    exp: Any,
    platform_index: int | None,
    args: Sequence[ir.Value],
    out_types: Sequence[ir.Type],
) -> list[ir.Value]:
    """Emits, at the current insertion point of `ctx`, a call of the artifact on `args`.

    When the arguments have static types the artifact is refined to them first;
    otherwise (the caller is itself shape-polymorphic) it is copied as is and the
    caller's own refinement specializes it later.

    Args:
      ctx: the `LoweringRuleContext`.
      exp: the `Exported`.
      platform_index: the index of the platform lowered for in `exp.platforms`,
        or None for a single-platform artifact.
      args: the kept arguments (tokens first, if any).
      out_types: the types of the results the caller expects.

    Returns:
      The results (tokens first).
    """
    mctx = ctx.module_context
    arg_types = [a.type for a in args]
    module = _wrapper_module(exp, platform_index, arg_types, out_types)
    if all(rt is None or rt.has_static_shape for rt in map(_ranked, arg_types)):
        module = _refine(module)
    prefix = f"_exported_{_sanitize(exp.fun_name)}_{next(_counter)}"
    names = {}
    for op in module.body.operations:
        if "sym_name" in op.attributes:
            old = ir.StringAttr(op.attributes["sym_name"]).value
            names[old] = f"{prefix}_{old}"
    for old, new in names.items():
        ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
    for op in list(module.body.operations):
        if "sym_name" in op.attributes:
            old = ir.StringAttr(op.attributes["sym_name"]).value
            op.attributes["sym_name"] = ir.StringAttr.get(names[old])
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
    main_name = names["main"]
    with ir.InsertionPoint(mctx.module.body):
        for op in list(module.body.operations):
            if op.operation.name == "sdy.mesh" and _has_symbol(mctx, op):
                continue
            moved = op.operation.clone()
            mctx.symbol_table.insert(moved)
    call = func.CallOp(list(out_types), ir.FlatSymbolRefAttr.get(main_name), list(args))
    return list(call.results)


def _has_symbol(mctx: Any, op: Any) -> bool:
    try:
        mctx.symbol_table[ir.StringAttr(op.attributes["sym_name"]).value]
        return True
    except KeyError:
        return False


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
