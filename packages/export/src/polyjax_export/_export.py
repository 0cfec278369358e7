"""`export`: lowering a jitted function to an `Exported` with JAX's calling convention.

The function is traced for the given argument types (dimensions may be
symbolic) and lowered with the `mlir` machinery of `jit`: the dimension
variables (and, for several platforms, the platform index) become leading
`tensor<i32>` arguments of every function. That module's `main` becomes the
private `_wrapped_jax_export_main`, and a new public `main` is put in front of
it (calling convention version 9 and 10)::

    main(platform_index?, *kept_args):
        read each dimension variable off an argument shape (get_dimension_size)
        shape_assertion: every variable >= 1, every other symbolic dimension
            equal to its specification, every constraint of the scope
        return _wrapped_jax_export_main(platform_index?, *dim_vars, *kept_args)

jaxlib's shape refinement (run by whoever calls the artifact, JAX included)
substitutes the concrete shapes, evaluates the assertions and raises their
message when one fails: the message names the argument, the dimension and
the rule broken.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import config
from polyjax_core import effects as core_effects
from polyjax_core import symbolic_dims as sd
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.tree_util import keystr, tree_flatten_with_path
from polyjax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    NamedShardingSpec,
    default_export_platform,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    typed_sharding_spec,
)
from polyjax_export._shape_spec import parse_constraint
from polyjax_interpreters import mlir
from polyjax_interpreters.jit import JitWrapped, jitted_object

__all__ = ["export", "PLATFORM_INDEX"]

PLATFORM_INDEX = mlir.PLATFORM_INDEX
_KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
# StableHLO's compatibility target for artifacts: what jaxlib 0.10.2 calls WEEK_4.
_TARGET_VERSION = "1.15.0"
_DOCS = "See 'Shape assertion errors' in polyjax's docs/export.md."


def export(
    fun_jit: Any,
    *,
    platforms: Sequence[str] | None = None,
    disabled_checks: Sequence[DisabledSafetyCheck] = (),
) -> Callable[..., Exported]:
    """Exports a jitted function: returns a function of the arguments that returns `Exported`.

    Args:
      fun_jit: a function wrapped by `polyjax.jit`.
      platforms: the platforms to lower for (``"cpu"``, ``"cuda"``, ``"rocm"``,
        ``"tpu"``); the default backend's platform when None. With several
        platforms the module's `main` takes the platform index first.
      disabled_checks: safety checks to skip (recorded in the `Exported`).

    Returns:
      A function that takes arguments as `fun_jit` does (arrays or
      ``ShapeDtypeStruct`` s whose shapes may have symbolic dimensions, made
      with `symbolic_shape`) and returns the `Exported`.

    Raises:
      ValueError: ``fun_jit`` is not jitted, or an unknown platform.

    Example:
      >>> import polyjax as jax, polyjax.numpy as jnp
      >>> import polyjax_export as export
      >>> b, = export.symbolic_shape("b")
      >>> exp = export.export(jax.jit(jnp.sin))(jax.ShapeDtypeStruct((b, 3), jnp.float32))
      >>> exp.in_avals, exp.out_avals
      ((ShapedArray(float32[b,3]),), (ShapedArray(float32[b,3]),))
    """
    jitted = jitted_object(fun_jit)
    if jitted is None:
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    platforms = _check_platforms(platforms)
    checks = tuple(disabled_checks)
    for c in checks:
        if not isinstance(c, DisabledSafetyCheck):
            raise ValueError(f"disabled_checks must be DisabledSafetyCheck objects, got {c!r}")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        return _export(jitted, platforms, checks, args, kwargs)

    return do_export


def _check_platforms(platforms: Sequence[str] | None) -> tuple[str, ...]:
    if platforms is None:
        return (default_export_platform(),)
    if isinstance(platforms, str):
        platforms = (platforms,)
    out = []
    for p in platforms:
        p = "cuda" if p.lower() == "gpu" else p.lower()
        if p not in _KNOWN_PLATFORMS:
            raise ValueError(
                f"Unknown platform {p!r} to export for; the platforms are {_KNOWN_PLATFORMS}."
            )
        if p in out:
            raise ValueError(f"The platform {p!r} is listed twice in platforms={platforms}.")
        out.append(p)
    if not out:
        raise ValueError("export needs at least one platform.")
    return tuple(out)


def _calling_convention_version() -> int:
    """The version to write, from `jax_export_calling_convention_version` (as JAX, checked
    when exporting). Versions 9 and 10 have the same module: 10 only tells readers
    that the Shardy partitioner setting is propagated."""
    version = config.export_calling_convention_version.value
    lo, hi = (
        minimum_supported_calling_convention_version,
        maximum_supported_calling_convention_version,
    )
    if not lo <= version <= hi:
        raise ValueError(
            f"The requested export calling convention version {version} is outside the "
            f"range of supported versions [{lo}..{hi}]"
        )
    return version


def _export(
    fun_jit: JitWrapped,
    platforms: tuple[str, ...],
    checks: tuple[DisabledSafetyCheck, ...],
    args: tuple,
    kwargs: dict,
) -> Exported:
    version = _calling_convention_version()
    traced = fun_jit.trace(*args, **kwargs)._t
    closed: ClosedJaxpr = traced.jaxpr
    in_avals = tuple(v.aval for v in closed.jaxpr.invars)
    out_avals = tuple(closed.out_avals)
    ordered = core_effects.ordered_effects.filter_in(closed.jaxpr.effects)
    if ordered:
        raise NotImplementedError(
            f"Exporting functions with ordered effects ({ordered}) is not supported by polyjax yet."
        )
    _common_scope(in_avals)
    arg_names = _arg_names(traced.args, traced.kwargs, fun_jit)
    dim_vars = sd.shape_vars(a.shape for a in in_avals)
    # With symbolic shapes every argument is kept: its shape may define variables.
    keep_unused = bool(dim_vars) or fun_jit._keep_unused
    jaxpr, used = dce_jaxpr(
        closed.jaxpr, [True] * len(closed.jaxpr.outvars), instantiate=keep_unused
    )
    kept = tuple(i for i, u in enumerate(used) if u)
    multi = len(platforms) > 1
    leading = ((PLATFORM_INDEX,) if multi else ()) + dim_vars
    result = mlir.lower_jaxpr_to_module(
        ClosedJaxpr(jaxpr, closed.consts),
        module_name=f"jit_{fun_jit._name}",
        platforms=platforms,
        backend_platform=None,
        arg_names=[traced.debug.safe_arg_names(len(in_avals))[i] for i in kept],
        dim_vars=leading,
    )
    if result.host_callbacks:
        # (A Python function cannot travel with the serialized module.)
        raise NotImplementedError("serialization of host_callbacks is not yet implemented")
    module = result.module
    with module.context, ir.Location.unknown():
        module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(bool(dim_vars))
        if dim_vars:
            _wrap_main(module, [in_avals[i] for i in kept], [arg_names[i] for i in kept], multi)
        serialized = _serialize(module)
    return Exported(
        fun_name=fun_jit._name,
        in_tree=traced.in_tree,
        in_avals=in_avals,
        out_tree=traced.out_tree,
        out_avals=out_avals,
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=1,
        platforms=platforms,
        ordered_effects=(),
        unordered_effects=tuple(closed.jaxpr.effects),
        disabled_safety_checks=checks,
        mlir_module_serialized=serialized,
        calling_convention_version=version,
        module_kept_var_idx=kept,
        uses_global_constants=bool(dim_vars) or multi,
        _get_vjp=functools.partial(_export_vjp, closed, platforms=platforms, checks=checks),
        _in_named_shardings=_typed_specs(in_avals),
        _out_named_shardings=_typed_specs(out_avals),
        _constraints=_scope_constraints(in_avals),
    )


def _typed_specs(avals: Sequence[Any]) -> tuple[NamedShardingSpec | None, ...] | None:
    """Explicit mode: the types' shardings, which serialization stores and
    `in_shardings_jax` gives (None when no aval carries one)."""
    specs = tuple(typed_sharding_spec(a) for a in avals)
    return specs if any(s is not None for s in specs) else None


def _export_vjp(
    closed: ClosedJaxpr,
    primal: Exported,
    *,
    platforms: tuple[str, ...],
    checks: tuple[DisabledSafetyCheck, ...],
) -> Exported:
    """The `Exported` of the VJP: `(*flat_primals, *flat_out_cts) -> flat_in_cts`.

    Exported like any function, for the primal's (possibly symbolic) avals, so
    its own `_get_vjp` gives the next order: a live export has VJPs of every
    order (`has_vjp()` is always true), a deserialized one the orders it stored.
    """
    from polyjax_core import ShapeDtypeStruct
    from polyjax_interpreters import ad
    from polyjax_interpreters.jit import jit

    n_in = len(primal.in_avals)
    fun = jaxpr_as_fun(closed)

    def vjp_fun(*primals_and_cts: Any) -> list[Any]:
        primals, cts = primals_and_cts[:n_in], primals_and_cts[n_in:]
        _, pullback = ad.vjp(lambda *xs: fun(*xs), *primals)
        return list(pullback(list(cts)))

    vjp_fun.__name__ = f"{primal.fun_name}_vjp"
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in (*primal.in_avals, *primal.out_avals)]
    return export(jit(vjp_fun), platforms=platforms, disabled_checks=checks)(*specs)


def _serialize(module: ir.Module) -> bytes:
    return _jax.mlir.serialize_portable_artifact(module, _TARGET_VERSION, True)


def _common_scope(avals: Sequence[Any]) -> sd.SymbolicScope | None:
    scope = None
    for a in avals:
        for d in a.shape:
            if sd.is_symbolic_dim(d):
                if scope is None:
                    scope = d.scope
                elif d.scope is not scope:
                    raise ValueError(
                        f"Invalid mixing of symbolic scopes in the argument shapes: '{d}' is of "
                        f"{d.scope!r} while other dimensions are of {scope!r}. Make all the "
                        "shapes of one export with one SymbolicScope (symbolic_args_specs, or "
                        "symbolic_shape(..., scope=scope)); see 'Symbolic scopes' in polyjax's "
                        "docs/export.md."
                    )
    return scope


def _scope_constraints(avals: Sequence[Any]) -> tuple[str, ...]:
    scope = _common_scope(avals)
    return () if scope is None else scope.constraints


def _arg_names(args: tuple, kwargs: dict, fun_jit: JitWrapped) -> list[str]:
    """`args[0]`, `args[1]['w']`, `kwargs['x']`: one per flat dynamic argument."""
    dyn_args, dyn_kwargs, _, _ = fun_jit._split(args, kwargs)
    pairs, _ = tree_flatten_with_path((dyn_args, dyn_kwargs))
    names = []
    for path, _ in pairs:
        head = "args" if path[0].idx == 0 else "kwargs"
        names.append(head + keystr(tuple(path[1:])))
    return names


# ------------------------------------------------------------------------------------------------
# The calling-convention wrapper


def _find_func(module: ir.Module, name: str) -> func.FuncOp:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == (
            name
        ):
            return op
    raise AssertionError(f"no function {name} in the lowered module")


def _platform_index_attr() -> ir.DictAttr:
    return ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get(PLATFORM_INDEX)})


def _i32(value: int) -> ir.Value:
    return mlir.ir_constant(np.int32(value))


class _Assertions:
    """Emits the dimension variables of main and the shape assertions that check them."""

    def __init__(self, avals: Sequence[Any], names: Sequence[str], args: Sequence[ir.Value]):
        self.avals, self.names, self.args = avals, names, args
        self.values: dict[str, ir.Value] = {}
        self.sizes: dict[tuple[int, int], ir.Value] = {}
        self.solved: list[tuple[str, int, int, Any]] = []  # var, arg, dim, spec
        self.specs = ", ".join(
            f"{n}.shape = {_shape_str(a.shape)}" for n, a in zip(names, avals) if a.ndim
        )

    def size(self, i: int, j: int) -> ir.Value:
        if (i, j) not in self.sizes:
            self.sizes[(i, j)] = hlo.get_dimension_size(self.args[i], j)
        return self.sizes[(i, j)]

    def where(self, i: int, j: int) -> str:
        return f"{self.names[i]}.shape[{j}]"

    def solve(self, dim_vars: Sequence[str]) -> None:
        pending = [
            (i, j, d)
            for i, a in enumerate(self.avals)
            for j, d in enumerate(a.shape)
            if sd.is_symbolic_dim(d)
        ]
        self.unused = []
        while True:
            progress = False
            rest = []
            for i, j, d in pending:
                if d.free_vars() <= self.values.keys():
                    continue  # fully known: checked for equality below
                found = self._linear(d)
                if found is None:
                    rest.append((i, j, d))
                    continue
                var, coeff, offset = found
                num = self.size(i, j)
                if not sd.definitely_equal(offset, 0):
                    num = hlo.subtract(num, self.eval(offset))
                value = num if coeff == 1 else hlo.divide(num, _i32(coeff))
                self.values[var] = value
                self.solved.append((var, i, j, d))
                self.assert_ge1(var)
                if coeff != 1:
                    self.unused.append((i, j, d))  # checks divisibility
                progress = True
            pending = rest
            if not progress:
                break
        if pending:
            i, j, d = pending[0]
            missing = sorted(set(dim_vars) - set(self.values))
            raise ValueError(
                f"Cannot solve for the values of the dimension variables {missing}: the "
                f"dimension {self.where(i, j)} = '{d}' is not linear in one unknown variable. "
                f"Each variable must appear alone, times a constant, plus known terms, in some "
                f"dimension of the arguments (e.g. 'b' or '2*b + 1'). Specifications: "
                f"{self.specs}."
            )
        self.unused.extend(
            (i, j, d)
            for i, a in enumerate(self.avals)
            for j, d in enumerate(a.shape)
            if sd.is_symbolic_dim(d) and not any(s[1:3] == (i, j) for s in self.solved)
        )

    def _linear(self, d: Any) -> tuple[str, int, Any] | None:
        unknown = [v for v in sorted(d.free_vars()) if v not in self.values]
        if len(unknown) != 1:
            return None
        (u,) = unknown
        env = {v: sd.symbolic_dim(v, d.scope) for v in d.free_vars()}
        try:
            at0 = d.evaluate({**env, u: 0})
            at1 = d.evaluate({**env, u: 1})
        except ZeroDivisionError:
            return None
        coeff = at1 - at0
        if not sd.is_constant_dim(coeff) or coeff <= 0:
            return None
        if not sd.definitely_equal(d, at0 + coeff * env[u]):
            return None
        return u, int(coeff), at0

    def eval(self, d: Any) -> ir.Value:
        if sd.is_constant_dim(d):
            return _i32(int(d))
        return mlir.eval_dim(self.values, d)

    def obtained(self) -> str:
        parts = []
        for n, (var, i, j, d) in enumerate(self.solved):
            parts.append(
                f"'{var}' = {{v{n}}} from the specification '{d}' of {self.where(i, j)} "
                f"(= {{s{n}}})"
            )
        return ", ".join(parts)

    def check(self, ok: ir.Value, text: str, values: Sequence[ir.Value]) -> None:
        """A `shape_assertion` of `ok`; `{0}`... in `text` print `values`."""
        operands = list(values)
        for n, (var, i, j, _) in enumerate(self.solved):
            text = text.replace(f"{{v{n}}}", f"{{{len(operands)}}}")
            operands.append(self.values[var])
            text = text.replace(f"{{s{n}}}", f"{{{len(operands)}}}")
            operands.append(self.size(i, j))
        op = hlo.CustomCallOp(
            [],
            [ok, *operands],
            call_target_name=ir.StringAttr.get("shape_assertion"),
            has_side_effect=ir.BoolAttr.get(True),
        )
        op.attributes["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2)
        op.attributes["error_message"] = ir.StringAttr.get(text)

    def message(self, rule: str) -> str:
        return (
            f"Input shapes do not match the polymorphic shapes specification. {rule} "
            f"Using the following polymorphic shapes specifications: {self.specs}. "
            f"Obtained dimension variables: {self.obtained()}. {_DOCS}"
        )

    def assert_ge1(self, var: str) -> None:
        value = self.values[var]
        ok = _compare(value, _i32(1), "GE")
        self.check(
            ok,
            self.message(f"Expected value >= 1 for dimension variable '{var}', got {{0}}."),
            [value],
        )

    def assert_dims(self) -> None:
        for i, j, d in self.unused:
            size, expected = self.size(i, j), self.eval(d)
            self.check(
                _compare(size, expected, "EQ"),
                self.message(
                    f"Found inconsistency between dimension size {self.where(i, j)} (= {{0}}) "
                    f"and the specification '{d}' (= {{1}})."
                ),
                [size, expected],
            )

    def assert_constraints(self, scope: sd.SymbolicScope) -> None:
        for text in scope.constraints:
            lhs, cmp, rhs = parse_constraint(text, scope)
            diff = lhs - rhs if cmp != "<=" else rhs - lhs
            value = self.eval(diff)
            ok = _compare(value, _i32(0), "EQ" if cmp == "==" else "GE")
            want = "equal to 0" if cmp == "==" else "greater or equal to 0"
            self.check(
                ok,
                self.message(
                    f"The symbolic shape constraint '{text}' does not hold: expected "
                    f"'{diff}' to be {want}, but it is {{0}}."
                ),
                [value],
            )


def _compare(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get("SIGNED"),
    )


def _shape_str(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def _wrap_main(module: ir.Module, avals: Sequence[Any], names: Sequence[str], multi: bool) -> None:
    """Renames `main` to `_wrapped_jax_export_main` and puts the checking `main` before it."""
    inner = _find_func(module, "main")
    inner.attributes["sym_name"] = ir.StringAttr.get("_wrapped_jax_export_main")
    inner.attributes["sym_visibility"] = ir.StringAttr.get("private")
    ftype = ir.FunctionType(ir.TypeAttr(inner.attributes["function_type"]).value)
    inner_ins, outs = list(ftype.inputs), list(ftype.results)
    n_lead = len(inner_ins) - len(avals)
    dim_vars = sd.shape_vars(a.shape for a in avals)
    arg_types = ([inner_ins[0]] if multi else []) + inner_ins[n_lead:]
    with ir.InsertionPoint.at_block_begin(module.body):
        main = func.FuncOp("main", ir.FunctionType.get(arg_types, outs))
    main.attributes["sym_visibility"] = ir.StringAttr.get("public")
    if multi:
        attrs = [_platform_index_attr()] + [ir.DictAttr.get({})] * len(avals)
        main.arg_attrs = ir.ArrayAttr.get(attrs)
    if "res_attrs" in inner.attributes:
        main.result_attrs = inner.attributes["res_attrs"]
    entry = main.add_entry_block()
    with ir.InsertionPoint(entry):
        block_args = list(entry.arguments)
        args = block_args[1:] if multi else block_args
        checks = _Assertions(avals, names, args)
        checks.solve(dim_vars)
        checks.assert_dims()
        scope = next(d.scope for a in avals for d in a.shape if sd.is_symbolic_dim(d))
        checks.assert_constraints(scope)
        lead = [block_args[0]] if multi else []
        call = func.CallOp(inner, [*lead, *(checks.values[v] for v in dim_vars), *args])
        func.ReturnOp(list(call.results))
