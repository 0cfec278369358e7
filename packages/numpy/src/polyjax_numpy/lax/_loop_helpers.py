"""What the control-flow primitives share: tracing user functions, and lowering loops.

`cond`, `scan` and `while` (modules `_cond`, `_scan`, `_while`) are
*initial-style*: the user's functions are traced once to `ClosedJaxpr`s held in
the params of a higher-order primitive, so that every transformation sees the
whole body at once. Values a body closes over (constants and tracers of
enclosing transformations) are hoisted into explicit leading operands, as `jit`
does: loop-invariant values thus enter a loop once, as operands, and are never
recomputed per iteration. What a loop body computes from those operands alone is
lowered before the loop (`_lower_invariants` here), and partial evaluation does
not stack such values as per-iteration residuals (`_scan_partial_eval`).

Each primitive carries all its rules in its module: abstract evaluation, an eager
impl (a compiled one-primitive executable), lowering (`stablehlo.case`,
`stablehlo.while`), jvp, partial evaluation (so that `linearize`/`grad` split
the body into a known and an unknown part), DCE, transpose and batching.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from polyjax_core import dtypes, tracing
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractToken, ShapedArray, get_aval, ordered_axes
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from polyjax_interpreters import ad, mlir
from polyjax_numpy.lax import _elementwise as _ew

# ---------------------------------------------------------------------------
# Tracing user functions


def _trace_fun(
    fun: Callable[..., Any],
    in_tree: Any,
    in_avals: Sequence[Any],
    convert_out: Any = None,
    adapt: Callable[..., Any] | None = None,
) -> tuple[ClosedJaxpr, list[Any], Any]:
    """Traces ``fun`` (pytree arguments) on ``in_avals``.

    Outside any transformation (an eager `while_loop`, `scan`, `cond`...), the
    result is cached on ``fun``, held weakly, and the other arguments, as `jit`'s
    trace cache does: calling the construct again with the same function and
    argument types neither traces nor (the jaxpr being the same object, so the
    eager executable cache hits) compiles again. As in JAX, values the function
    closes over are captured at its first trace. Under a transformation the
    closed-over values may be tracers of that transformation: no caching there.

    Args:
      fun: the user's function.
      in_tree: the structure of its arguments.
      in_avals: the types of their leaves.
      convert_out: per output leaf, an aval to convert it to (or None).
      adapt: a module-level function ``adapt(fun, *args)`` traced instead of
        ``fun(*args)`` (the fixed wrapping a construct puts around the user's
        function); part of the cache key, so it must be the same object each call.

    Returns:
      `(jaxpr, consts, out_tree)`: the jaxpr takes the closed-over values
      (`consts`) as leading inputs and has no constvars of its own.
    """
    convert = None if convert_out is None else tuple(convert_out)
    if tracing.current_trace() is tracing.eval_trace:
        try:
            return _trace_fun_cached(fun, in_tree, tuple(in_avals), convert, adapt)
        except _Unhashable:
            pass
    return _trace_fun_uncached(fun, in_tree, in_avals, convert, adapt)


class _Unhashable(Exception):
    """A cache key part cannot be hashed: trace without the cache."""


def _trace_fun_uncached(
    fun: Callable[..., Any],
    in_tree: Any,
    in_avals: Sequence[Any],
    convert_out: Any,
    adapt: Callable[..., Any] | None,
) -> tuple[ClosedJaxpr, list[Any], Any]:
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        args = tree_unflatten(in_tree, list(xs))
        out = fun(*args) if adapt is None else adapt(fun, *args)
        leaves, tree = tree_flatten(out)
        box.append(tree)
        if convert_out is not None:
            leaves = [
                _ew._convert_element_type(x, a.dtype, weak_type=a.weak_type) if a is not None else x
                for x, a in zip(leaves, convert_out)
            ]
        return leaves

    closed = trace_to_jaxpr(flat, list(in_avals))
    jaxpr = closed.jaxpr
    body = jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
    return ClosedJaxpr(body, []), list(closed.consts), box[0]


@weakref_lru_cache(maxsize=4096)
def _trace_fun_cached_impl(
    fun: Callable[..., Any], in_tree: Any, in_avals: tuple, convert_out: Any, adapt: Any
) -> tuple[ClosedJaxpr, tuple[Any, ...], Any]:
    jaxpr, consts, out_tree = _trace_fun_uncached(fun, in_tree, in_avals, convert_out, adapt)
    return jaxpr, tuple(consts), out_tree


def _trace_fun_cached(
    fun: Callable[..., Any], in_tree: Any, in_avals: tuple, convert_out: Any, adapt: Any
) -> tuple[ClosedJaxpr, list[Any], Any]:
    try:
        hash((in_tree, in_avals, convert_out, adapt))
    except TypeError:
        raise _Unhashable from None
    jaxpr, consts, out_tree = _trace_fun_cached_impl(fun, in_tree, in_avals, convert_out, adapt)
    return jaxpr, list(consts), out_tree


def _aval_of(x: Any) -> ShapedArray:
    return get_aval(x)


def _same_type(a: Any, b: Any) -> bool:
    if type(a) is AbstractToken or type(b) is AbstractToken:
        return a == b
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and _vma(a) == _vma(b)
        and getattr(a, "aval_sharding", None) == getattr(b, "aval_sharding", None)
    )


def _vma(a: Any) -> frozenset:
    return getattr(a, "vma", frozenset())


def _vma_hint(missing: frozenset, where: str) -> str:
    """JAX's advice when values differ only in the manual axes they vary over."""
    axes = ordered_axes(missing)
    return (
        f"\n\nThis might be fixed by applying `jax.lax.pcast(..., {axes!r}, to='varying')`"
        f"{where}.\nSee https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma "
        "for more information."
    )


def _type_str(avals: Sequence[Any]) -> str:
    return "[" + ", ".join(a.str_short() for a in avals) + "]"


def _pad_invars(closed: ClosedJaxpr, before: Sequence[Any], after: Sequence[Any]) -> ClosedJaxpr:
    """The same jaxpr taking extra (unused) inputs of types ``before`` and ``after``."""
    j = closed.jaxpr
    invars = [*(Var(a) for a in before), *j.invars, *(Var(a) for a in after)]
    return ClosedJaxpr(j.replace(invars=invars), closed.consts)


def _permute_invars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    """The jaxpr whose k-th input is input ``order[k]`` of ``closed``."""
    j = closed.jaxpr
    return ClosedJaxpr(j.replace(invars=[j.invars[i] for i in order]), closed.consts)


def _permute_outvars(closed: ClosedJaxpr, order: Sequence[int]) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(j.replace(outvars=[j.outvars[i] for i in order]), closed.consts)


def _with_zero_outputs(
    closed: ClosedJaxpr, keep: Sequence[bool], avals: Sequence[Any]
) -> ClosedJaxpr:
    """A jaxpr returning, for output slot k, the next output of ``closed`` where
    ``keep[k]`` and zeros of ``avals[k]`` elsewhere."""

    def fun(*args: Any) -> list[Any]:
        outs = iter(jaxpr_as_fun(closed)(*args))
        return [next(outs) if k else ad.zeros_like_aval(a) for k, a in zip(keep, avals)]

    return trace_to_jaxpr(fun, closed.in_avals)


def _closed_call(closed: ClosedJaxpr, *args: Any) -> list[Any]:
    return list(jaxpr_as_fun(closed)(*args))


# A primitive with `predicate_lanes = True` (checkify's `check`) takes a boolean
# first operand that must hold. When a batched index runs every branch on every
# lane, such an equation in a branch must hold only on the lanes that take the
# branch: its predicate becomes `pred or not lane_selected`. The same holds for a
# `while_loop` body on lanes whose loop has finished. (Checks nested in a
# branch's own control flow are not predicated.)


def _has_lane_predicated(branch: ClosedJaxpr) -> bool:
    return any(getattr(e.primitive, "predicate_lanes", False) for e in branch.jaxpr.eqns)


def _lane_predicated(branch: ClosedJaxpr) -> ClosedJaxpr:
    """``branch`` with a leading boolean input (the lane takes it) that guards its checks."""
    jaxpr = branch.jaxpr

    def fun(lane: Any, *args: Any) -> list[Any]:
        env = dict(zip(jaxpr.constvars, branch.consts))
        env.update(zip(jaxpr.invars, args))

        def read(x: Any) -> Any:
            return x.val if not isinstance(x, Var) else env[x]

        for eqn in jaxpr.eqns:
            ins = [read(x) for x in eqn.invars]
            if getattr(eqn.primitive, "predicate_lanes", False):
                ins[0] = _ew.bitwise_or(ins[0], _ew.bitwise_not(lane))
            with si.user_context(eqn.source_info):
                out = eqn.primitive.bind(*ins, **eqn.params)
            env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
        return [read(x) for x in jaxpr.outvars]

    bool_aval = ShapedArray((), np.dtype(np.bool_))
    return trace_to_jaxpr(fun, [bool_aval, *branch.in_avals])


# ---------------------------------------------------------------------------
# Loop carry types, shared by scan and while_loop
#
# A loop body must return its carry with the carry's types. One exception, as in
# JAX: a weakly typed initial carry (a Python scalar, say) whose body output has
# another type is first promoted with that output type (`0` carried through
# `c + 0.5` becomes a float32), converted to a strong array, and the body traced
# once more; only then does a remaining mismatch raise.


def _promote_weak_carries(
    vals: Sequence[Any], in_avals: Sequence[Any], out_avals: Sequence[Any]
) -> tuple[list[Any], list[Any]] | None:
    """The initial carries and their avals after JAX's weak-carry promotion, or None
    when no weakly typed carry meets a body output of another type."""
    new_vals, new_avals, changed = list(vals), list(in_avals), False
    for k, (a, b) in enumerate(zip(in_avals, out_avals)):
        if not a.weak_type or (a.dtype == b.dtype and b.weak_type):
            continue
        try:
            dtype = dtypes.result_type(a, b)
        except (TypeError, ValueError):  # no promotion: the type check reports it
            continue
        new_vals[k] = _ew._convert_element_type(vals[k], dtype, weak_type=False)
        new_avals[k] = a.update(dtype=dtype, weak_type=False)
        changed = True
    return (new_vals, new_avals) if changed else None


def _first_param_name(fun: Callable[..., Any]) -> str:
    """The name of ``fun``'s first parameter, by which errors call the carry."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return "carry"
    return params[0] if params else "carry"


def _leaf_paths(tree: Any) -> list[str]:
    """The key path (``[0]['a']``) of each leaf of the pytree structure ``tree``."""
    try:
        placeholder = tree_unflatten(tree, [object()] * tree.num_leaves)
        return [keystr(p) for p, _ in tree_flatten_with_path(placeholder)[0]]
    except Exception:  # a node whose unflatten rejects placeholders
        return [f"[{k}]" for k in range(tree.num_leaves)]


def _long_type(a: Any) -> str:
    return a.str_short(short_dtypes=False)


def _type_differences(a: Any, b: Any) -> str:
    """``, so the dtypes do not match``...; '' when only the shardings differ (as JAX)."""
    reasons = []
    if a.dtype != b.dtype:
        reasons.append("the dtypes do not match")
    if a.shape != b.shape:
        reasons.append("the shapes do not match")
    if _vma(a) != _vma(b):
        reasons.append("the manual axis types do not match")
    return ", so " + ", and ".join(reasons) if reasons else ""


def _check_carry_structure(what: str, name: str, in_tree: Any, out_tree: Any) -> None:
    if in_tree != out_tree:
        raise TypeError(
            f"{what} body function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\nThe input carry {name} is {in_tree} but the "
            f"carry output is {out_tree}.\n\nRevise the function so that the carry output "
            "has the same pytree structure as the carry input."
        )


def _check_carry_types(
    what: str, name: str, tree: Any, in_avals: Sequence[Any], out_avals: Sequence[Any]
) -> None:
    """Raises JAX's TypeError listing every carry whose output type (dtype and shape;
    weak types aside) differs from its input type."""
    bad = [
        (path, a, b)
        for path, a, b in zip(_leaf_paths(tree), in_avals, out_avals)
        if not _same_type(a, b)
    ]
    if not bad:
        return

    def describe(path: str, a: Any, b: Any) -> str:
        who = f"carry component {name}{path}" if path else f"carry {name}"
        return (
            f"the input {who} has type {_long_type(a)} but the corresponding output carry "
            f"component has type {_long_type(b)}{_type_differences(a, b)}"
        )

    hint = ""
    for path, a, b in bad:
        if _vma(b) - _vma(a):  # the carry comes out varying over more axes than it went in
            who = f"carry component {name}{path}" if path else f"carry {name}"
            where = f", to the initial carry value corresponding to the input {who}"
            hint = _vma_hint(_vma(b) - _vma(a), where)
            break
    raise TypeError(
        f"{what} body function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_listed([describe(*x) for x in bad])}{hint}\n\nRevise the function so "
        "that all output types match the corresponding input types."
    )


def _listed(items: Sequence[str]) -> str:
    """One sentence, or a bulleted list of clauses."""
    if len(items) == 1:
        return items[0][0].upper() + items[0][1:] + "."
    return ";\n".join(f"  * {x}" for x in items) + "."


def _where(fun: Callable[..., Any]) -> str:
    """``name at file:line`` for a user function, as error messages show it."""
    name = getattr(fun, "__name__", None) or repr(fun)
    code = getattr(inspect.unwrap(fun), "__code__", None)
    return f"{name} at {code.co_filename}:{code.co_firstlineno}" if code is not None else name


def _check_branch_types(
    what: str, names: Sequence[str], funs: Sequence[Callable[..., Any]], trees, avals
) -> None:
    """Raises JAX's TypeError when a branch's output structure or types (dtype and
    shape; weak types aside) differ from branch 0's. ``names[i]`` names branch i."""
    for i in range(1, len(funs)):
        head = f"{names[0]} is {_where(funs[0])}\n{names[i]} is {_where(funs[i])}\n\n"
        if trees[i] != trees[0]:
            raise TypeError(
                f"{what} branch outputs must have the same pytree structure, but they differ:"
                f"\n\n{head}{names[0]} output is {trees[0]} but {names[i]} output is "
                f"{trees[i]}.\n\nRevise {names[0]} and/or {names[i]} so that they have the "
                "same pytree structure."
            )
        paths = _leaf_paths(trees[0])
        bad = [
            (path, a, b) for path, a, b in zip(paths, avals[0], avals[i]) if not _same_type(a, b)
        ]
        if bad:
            clauses = [
                f"the output of {names[0]}{f' at path {p}' if p else ''} has type "
                f"{_long_type(a)} but the corresponding output of {names[i]} has type "
                f"{_long_type(b)}{_type_differences(a, b)}"
                for p, a, b in bad
            ]
            hint = ""
            for _, a, b in bad:
                if _vma(a) != _vma(b):
                    fewer, more, who = (a, b, names[0]) if _vma(b) - _vma(a) else (b, a, names[i])
                    hint = _vma_hint(_vma(more) - _vma(fewer), f" to the output of {who}")
                    break
            raise TypeError(
                f"{what} branches must have equal output types but they differ.\n\n{head}"
                f"{_listed(clauses)}{hint}\n\nRevise {names[0]} and/or {names[i]} so that all "
                "output types match."
            )


# ---------------------------------------------------------------------------
# Loop-invariant code motion, at lowering time
#
# A loop body may compute from its loop constants alone (`sin(W)` or `W @ U` in a
# scan over an RNN cell, a weight's transpose or cosine in the transposed scan of its
# gradient). Such values are computed once, before the `stablehlo.while`, and enter
# it as extra loop operands, so the program XLA gets does not rely on its own loop
# optimizations for them. Jaxprs are untouched: this is a lowering decision.


def _size(avals: Sequence[Any]) -> int | None:
    """Total element count, or None when a shape is symbolic (or there is none)."""
    total = 0
    for a in avals:
        shape = getattr(a, "shape", None)
        if shape is None or not all(isinstance(d, int) for d in shape):
            return None
        total += int(np.prod(shape, dtype=np.int64))
    return total


def _hoistable(eqn: JaxprEqn) -> bool:
    """Effect-free and not size-inflating: a broadcast or an iota is cheaper to
    recompute (XLA fuses it into its users) than to keep alive through the loop."""
    if eqn.effects:
        return False
    n_in = _size([x.aval for x in eqn.invars])
    n_out = _size([v.aval for v in eqn.outvars])
    return n_in is not None and n_out is not None and n_out <= n_in


def _first_reads(eqns: Sequence[JaxprEqn], outvars: Sequence[Any], among: set) -> list[Var]:
    """The vars of ``among`` that ``eqns`` or ``outvars`` read, in order, each once."""
    seen: dict[Var, None] = {}
    for x in [x for e in eqns for x in e.invars] + list(outvars):
        if type(x) is not Literal and x in among:
            seen.setdefault(x, None)
    return list(seen)


def _split_invariants(
    closed: ClosedJaxpr, n_consts: int
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[int]] | None:
    """Splits a loop body into what depends on its first ``n_consts`` inputs only and
    the rest.

    Returns:
      None when nothing can be hoisted, else `(pre, body, kept)`: `pre` takes the
      loop constants and returns the hoisted values; `body` takes the constants at
      positions `kept`, then the hoisted values, then the body's other inputs.
    """
    j = closed.jaxpr
    consts = j.invars[:n_consts]
    invariant = {*j.constvars, *consts}
    pre_eqns, body_eqns = [], []
    for eqn in j.eqns:
        if _hoistable(eqn) and all(type(x) is Literal or x in invariant for x in eqn.invars):
            pre_eqns.append(eqn)
            invariant.update(eqn.outvars)
        else:
            body_eqns.append(eqn)
    if not pre_eqns:
        return None
    hoisted = _first_reads(body_eqns, j.outvars, {v for e in pre_eqns for v in e.outvars})
    if not hoisted:  # the invariant part feeds nothing but itself
        return None
    read = set(_first_reads(body_eqns, j.outvars, set(consts)))
    kept = [i for i, v in enumerate(consts) if v in read]
    pre, _ = dce_jaxpr(Jaxpr(j.constvars, consts, hoisted, pre_eqns), [True] * len(hoisted), True)
    body = Jaxpr(
        j.constvars,
        [*(consts[i] for i in kept), *hoisted, *j.invars[n_consts:]],
        j.outvars,
        body_eqns,
    )
    return ClosedJaxpr(pre, closed.consts), ClosedJaxpr(body, closed.consts), kept


def _lower_invariants(
    ctx: Any, closed: ClosedJaxpr, consts: Sequence[ir.Value]
) -> tuple[ClosedJaxpr, list[ir.Value]]:
    """Lowers the loop-invariant part of a body here (before its loop).

    Returns:
      The body that remains and the loop constants it takes instead of ``consts``.
    """
    split = _split_invariants(closed, len(consts))
    if split is None:
        return closed, list(consts)
    pre, body, kept = split
    hoisted = mlir.jaxpr_subcomp(
        ctx.module_context, pre.jaxpr, pre.consts, list(consts), ctx.dim_var_values
    )
    return body, [*(consts[i] for i in kept), *hoisted]
