"""Calling an `Exported`: the `call_exported` primitive and all its rules.

`call_exported(exp)(*args, **kwargs)` checks the arguments against the
artifact's signature (pytree structure, ranks, dtypes, then the dimension
variables solved from the argument shapes, with JAX's messages), and binds
`call_exported_p` on the flattened arguments:

* abstract evaluation: the output avals, the artifact's `out_avals` with the
  solved dimension variables substituted;
* lowering: the artifact's module, refined to the argument shapes, is copied
  into the caller's module and called (`_module.inline_call`), so calls work
  under `jit` and inside another export; eagerly, the one-primitive
  executable of `dispatch.apply_primitive` does the same;
* vmap: a loop (`lax.map`) of calls over the batch, since an artifact's
  signature has no batch dimension to grow;
* grad: when the artifact carries its VJP (serialized with `vjp_order > 0`),
  the call is a `custom_vjp` whose backward pass calls the VJP's artifact;
  otherwise differentiating raises ``ValueError: No VJP is available``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import aval_sharding, tree_util
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_export import _module
from polyjax_export._exported import (
    _IMPLS,
    DisabledSafetyCheck,
    Exported,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from polyjax_export._shape_spec import parse_constraint
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_interpreters.custom_derivatives import custom_vjp

__all__ = ["call_exported", "call_exported_p"]


class _ExportedParam:
    """The `exported` parameter: compared and hashed by identity, printed as the Exported."""

    __slots__ = ("exp",)

    def __init__(self, exp: Exported):
        self.exp = exp

    def __repr__(self) -> str:
        return repr(self.exp)


call_exported_p = Primitive("call_exported")
call_exported_p.multiple_results = True
call_exported_p.def_impl(functools.partial(dispatch.apply_primitive, call_exported_p))


# ----------------------------------------------------------------------------- signature checks


def _spec_str(shape: Sequence[Any]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def _check_avals(exp: Exported, avals: Sequence[ShapedArray]) -> None:
    for i, (a, e) in enumerate(zip(avals, exp.in_avals)):
        if len(a.shape) != len(e.shape):
            raise ValueError(
                f"Rank mismatch for args[{i}]: expected {_spec_str(e.shape)} and called with "
                f"{_spec_str(a.shape)}"
            )
        if np.dtype(a.dtype) != np.dtype(e.dtype):
            raise ValueError(
                f"Dtype mismatch for args[{i}]: expected {e.dtype} and called with {a.dtype}"
            )
        for j, (da, de) in enumerate(zip(a.shape, e.shape)):
            if sd.is_constant_dim(de) and not (sd.is_constant_dim(da) and int(da) == int(de)):
                if sd.is_constant_dim(da) or not sd.definitely_equal(da, de):
                    raise ValueError(
                        f"Shape mismatch for args[{i}].shape[{j}] (expected same constant): "
                        f"expected {_spec_str(e.shape)} and called with {_spec_str(a.shape)}"
                    )


class _Solver:
    """Solves the dimension variables of `exp.in_avals` from the shapes of a call."""

    def __init__(self, exp: Exported, avals: Sequence[ShapedArray]):
        self.exp = exp
        self.avals = avals
        self.values: dict[str, Any] = {}
        self.obtained: list[str] = []

    def fail(self, why: str) -> ValueError:
        specs = ",".join(
            f"args[{i}].shape = {_spec_str(a.shape)}" for i, a in enumerate(self.exp.in_avals)
        )
        return ValueError(
            "Input shapes do not match the polymorphic shapes specification. "
            f"{why}. Using the following polymorphic shapes specifications: {specs}. "
            f"Obtained dimension variables: {''.join(self.obtained)}. Please see "
            "https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors "
            "for more details."
        )

    def solve(self) -> dict[str, Any]:
        pending = [
            (i, j, de, da)
            for i, (a, e) in enumerate(zip(self.avals, self.exp.in_avals))
            for j, (da, de) in enumerate(zip(a.shape, e.shape))
            if not sd.is_constant_dim(de)
        ]
        while pending:
            rest = [p for p in pending if not self._step(*p)]
            if len(rest) == len(pending):
                i, j, de, _ = rest[0]
                raise self.fail(
                    f"Cannot solve for the dimension variables of '{de}' in args[{i}].shape[{j}]"
                )
            pending = rest
        return self.values

    def _step(self, i: int, j: int, de: sd.DimExpr, da: Any) -> bool:
        """Uses one dimension: solves its one unknown variable or checks it; False to postpone."""
        where = f"args[{i}].shape[{j}]"
        unknown = [v for v in sorted(de.free_vars()) if v not in self.values]
        if not unknown:
            expected = de.evaluate(self.values)
            if not sd.definitely_equal(expected, da):
                raise self.fail(
                    f"Found inconsistency between dimension size {where} (= {da}) and the "
                    f"specification '{de}' (= {expected})"
                )
            return True
        if len(unknown) > 1:
            return False
        v = unknown[0]
        at = [de.evaluate({**self.values, v: k}) for k in range(4)]
        k, c = at[1] - at[0], at[0]
        if any(not sd.definitely_equal(at[n], c + n * k) for n in range(4)) or not (
            sd.is_constant_dim(k) and int(k) > 0
        ):
            return False  # not linear in v: use another dimension first
        k = int(k)
        num = da - c
        rem = num % k
        if not sd.definitely_equal(rem, 0):
            raise self.fail(f"Division had remainder {rem} when computing the value of '{v}'")
        value = num // k
        self.values[v] = value
        self.obtained.append(
            f"'{v}' = {value} from specification '{de}' for dimension {where} (= {da}), "
        )
        if sd.is_constant_dim(value) and int(value) < 1:
            raise self.fail(f"Expected value >= 1 for dimension variable '{v}'")
        return True


def _check_constraints(exp: Exported, values: dict[str, Any], solver: _Solver) -> None:
    """Checks the constraints that polyjax serialized (JAX's reader drops them)."""
    if not exp._constraints or not all(sd.is_constant_dim(x) for x in values.values()):
        return
    scope = sd.SymbolicScope()
    for text in exp._constraints:
        lhs, op, rhs = parse_constraint(text, scope)
        lv, rv = sd.evaluate(lhs, values), sd.evaluate(rhs, values)
        if not {">=": lv >= rv, "<=": lv <= rv, "==": lv == rv}[op]:
            raise solver.fail(f"Constraint '{text}' is not satisfied: {lhs} = {lv}, {rhs} = {rv}")


def _out_avals(exp: Exported, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
    _check_avals(exp, avals)
    solver = _Solver(exp, avals)
    values = solver.solve()
    _check_constraints(exp, values, solver)
    # (a.update keeps an explicitly typed result's sharding: the rank is the same)
    return [
        a.update(shape=tuple(sd.evaluate(d, values) for d in a.shape), weak_type=False)
        for a in exp.out_avals
    ]


def _abstract_eval(*avals: ShapedArray, exported: _ExportedParam) -> list[ShapedArray]:
    return _out_avals(exported.exp, avals)


call_exported_p.def_abstract_eval(_abstract_eval)
# Explicit mode: the results are typed as exported (shardings, unreduced axes).
aval_sharding.register_rule(
    call_exported_p,
    lambda outs, avals, **params: (
        [o.aval_sharding for o in outs] if len(outs) != 1 else outs[0].aval_sharding
    ),
)
aval_sharding.register_reduction_rule(
    call_exported_p, lambda outs, avals, **params: [aval_sharding.reductions(o) for o in outs]
)


# ----------------------------------------------------------------------------- lowering


def _platform_index(exp: Exported, platform: str) -> int | None:
    platform = "cuda" if platform == "gpu" else platform
    if platform in exp.platforms:
        idx = exp.platforms.index(platform)
    elif DisabledSafetyCheck.platform() in exp.disabled_safety_checks:
        idx = 0
    else:
        raise ValueError(
            f"Function '{exp.fun_name}' was exported for platforms '{exp.platforms}' but it is "
            f"used on '{(platform,)}'."
        )
    return idx if len(exp.platforms) > 1 else None


def _lowering(ctx: mlir.LoweringRuleContext, *args: Any, exported: _ExportedParam) -> list[Any]:
    exp = exported.exp
    version = exp.calling_convention_version
    if not (
        minimum_supported_calling_convention_version
        <= version
        <= maximum_supported_calling_convention_version
    ):
        raise NotImplementedError(
            f"The exported function '{exp.fun_name}' was lowered with calling convention "
            f"version {version}, but this version of polyjax supports only versions "
            f"{minimum_supported_calling_convention_version} to "
            f"{maximum_supported_calling_convention_version}"
        )
    if exp.ordered_effects:
        raise NotImplementedError(
            f"Calling the exported function '{exp.fun_name}', which has ordered effects "
            f"{exp.ordered_effects}, is not supported yet"
        )
    if exp.nr_devices != ctx.module_context.num_devices and exp.nr_devices != 1:
        raise ValueError(
            f"Function {exp.fun_name} was exported for {exp.nr_devices} devices and is "
            f"called in a context with {ctx.module_context.num_devices} devices."
        )
    _module.check_module_signature(exp)
    idx = _platform_index(exp, ctx.platform)
    kept = [args[i] for i in exp.module_kept_var_idx]
    out_types = [mlir.aval_to_ir_type(a) for a in ctx.avals_out]
    outs = _module.inline_call(ctx, exp, idx, kept, out_types)
    return _constrain_outputs(ctx, exp, outs)


def _constrain_outputs(ctx: mlir.LoweringRuleContext, exp: Exported, outs: list[Any]) -> list[Any]:
    """Lays the results out as the artifact's result shardings say (in a multi-device module)."""
    devices = ctx.module_context.device_assignment
    specs = exp._out_named_shardings
    if not specs or len(devices) != exp.nr_devices or exp.nr_devices == 1:
        return outs
    from polyjax_sharding import Mesh

    result = []
    for out, spec, aval in zip(outs, specs, ctx.avals_out):
        if spec is not None:
            mesh = Mesh(np.array(devices, dtype=object).reshape(spec.axis_sizes), spec.axis_names)
            out = mlir.sharding_constraint(ctx, out, spec.to_named_sharding(mesh), aval)
        result.append(out)
    return result


mlir.register_lowering(call_exported_p, _lowering)


# ----------------------------------------------------------------------------- vmap and grad


def _batching(args: Sequence[Any], dims: Sequence[Any], *, exported: _ExportedParam):
    from polyjax_numpy import lax

    size = next(a.shape[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
    mapped = [d is not batching.not_mapped for d in dims]
    xs = [batching.moveaxis(a, d, 0) for a, d, m in zip(args, dims, mapped) if m]
    del size

    def one(xs_one: list[Any]) -> list[Any]:
        it = iter(xs_one)
        full = [next(it) if m else a for a, m in zip(args, mapped)]
        return call_exported_p.bind(*full, exported=exported)

    outs = lax.map(one, xs)
    return list(outs), [0] * len(outs)


batching.primitive_batchers[call_exported_p] = _batching


def _no_vjp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, exported: _ExportedParam):
    raise ValueError(
        f"No VJP is available for the exported function '{exported.exp.fun_name}': "
        "it was serialized without one (use serialize(vjp_order=1) or more to differentiate it)"
    )


ad.primitive_jvps[call_exported_p] = _no_vjp_jvp


# ----------------------------------------------------------------------------- the user's call


def _describe_node(data: Any, n: int) -> str:
    t = data[0]
    if t in (tuple, list):
        return f"a {t.__name__} of length {n}"
    return f"a {t}"


def _differences(got: tree_util.PyTreeDef, want: tree_util.PyTreeDef, path: str) -> list[str]:
    """JAX's descriptions of where two structures differ, outermost first."""
    gd, wd = got.node_data(), want.node_data()
    if gd is None and wd is None:
        return []
    gk, wk = got.children(), want.children()
    if gd is None or wd is None or gd[0] is not wd[0]:
        # (JAX names a leaf of the invocation oddly, "<class 'int'>"; we say "a leaf".)
        g = "a leaf" if gd is None else f"a {gd[0]}"
        w = "a leaf" if wd is None else f"a {wd[0]}"
        return [
            f"{path} is {g} in the invocation and {w} when exported, so their Python types differ."
        ]
    if len(gk) != len(wk):
        if gd[0] in (tuple, list):
            return [
                f"{path} is {_describe_node(gd, len(gk))} in the invocation and "
                f"{_describe_node(wd, len(wk))} when exported, so the lengths do not match."
            ]
        extra = ""
        if gd[0] is dict:
            extra = f", with the symmetric difference of key sets: {set(gd[1]) ^ set(wd[1])}"
        return [
            f"{path} is a {gd[0]} with {len(gk)} child in the invocation and a {wd[0]} with "
            f"{len(wk)} child when exported, so the numbers of children do not match{extra}."
        ]
    if gd[1] != wd[1]:
        gm, wm = (tuple(x[1]) if x[0] is dict else x[1] for x in (gd, wd))
        return [
            f"{path} is a {gd[0]} with pytree metadata {gm} in the invocation and a {wd[0]} "
            f"with pytree metadata {wm} when exported, so the pytree node metadata does not "
            "match."
        ]
    if not path:  # the (args, kwargs) pair
        names = ["args", "kwargs"]
    elif gd[0] is dict:
        names = [f"{path}[{k!r}]" for k in gd[1]]
    else:
        names = [f"{path}[{i}]" for i in range(len(gk))]
    return [d for g, w, name in zip(gk, wk, names) for d in _differences(g, w, name)]


def _structure_error(exp: Exported, got: tree_util.PyTreeDef) -> ValueError:
    diffs = _differences(got, exp.in_tree, "") or [
        f"the invocation has {got}, the export {exp.in_tree}"
    ]
    return ValueError(
        "The invocation args and kwargs must have the same pytree structure as when the "
        f"function '{exp.fun_name}' was exported, but they have the following structural "
        "differences:\n" + "".join(f"   - {d}\n" for d in diffs)
    )


def _flat_call(exp: Exported) -> Callable[..., list[Any]]:
    """`f(*flat_args) -> flat_results`: the primitive, with the VJP as a custom_vjp when present."""
    param = _ExportedParam(exp)

    def primal(*flat: Any) -> list[Any]:
        return call_exported_p.bind(*flat, exported=param)

    if not exp.has_vjp():
        return primal
    # The VJP is exported (or read) only when a backward pass needs it: an Exported made
    # by `export` has VJPs of every order, each built on demand.
    vjp_calls: list[Callable[..., list[Any]]] = []

    def vjp_call(*args: Any) -> list[Any]:
        if not vjp_calls:
            vjp_calls.append(_flat_call(exp.vjp()))
        return vjp_calls[0](*args)

    n_in = len(exp.in_avals)

    f = custom_vjp(lambda *flat: primal(*flat))

    def fwd(*flat: Any) -> tuple[list[Any], tuple[Any, ...]]:
        # `f`, not the bare primitive: under an outer `grad` the forward pass is itself
        # differentiated, through the next VJP level (as JAX nests them).
        return f(*flat), flat

    def bwd(res: tuple[Any, ...], cts: list[Any]) -> tuple[Any, ...]:
        cts = [_ct_like(ct, a) for ct, a in zip(cts, exp.out_avals)]
        in_cts = vjp_call(*res, *cts)
        if len(in_cts) != n_in:
            raise ValueError(
                f"The VJP of '{exp.fun_name}' returned {len(in_cts)} cotangents for {n_in} inputs"
            )
        return tuple(in_cts)

    f.defvjp(fwd, bwd)
    return f


def _ct_like(ct: Any, aval: ShapedArray) -> Any:
    # Symbolic zeros arrive as None or zeros of another dtype: the VJP artifact wants arrays.
    from polyjax_numpy import lax

    if ct is None:
        return np.zeros((), aval.dtype)
    if np.dtype(get_aval(ct).dtype) != np.dtype(aval.dtype):
        return lax.convert_element_type(ct, aval.dtype)
    return ct


def call_exported(exp: Exported) -> Callable[..., Any]:
    """A function that calls `exp` (what `Exported.call` uses).

    Args:
      exp: the `Exported` to call.

    Returns:
      `f(*args, **kwargs)` with the structure of the exported function's
      arguments, returning its results' structure.
    """
    # One primitive parameter per Exported: the eager cache and jit's cache key on it,
    # so a new one per call would compile again every time.
    flat_call = exp.__dict__.get("_flat_call")
    if flat_call is None:
        flat_call = _flat_call(exp)
        object.__setattr__(exp, "_flat_call", flat_call)  # Exported is frozen

    def f(*args: Any, **kwargs: Any) -> Any:
        flat, tree = tree_util.tree_flatten((args, kwargs))
        if tree != exp.in_tree:
            raise _structure_error(exp, tree)
        _check_avals(exp, [get_aval(x) for x in flat])
        return tree_util.tree_unflatten(exp.out_tree, flat_call(*flat))

    return f


_IMPLS["call_exported"] = call_exported
