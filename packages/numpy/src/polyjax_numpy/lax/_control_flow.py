"""Structured control flow: `cond`/`switch`, `scan`, `while_loop`, `fori_loop`, `map`,
`associative_scan`.

All of them are *initial-style*: the user's functions are traced once to
`ClosedJaxpr`s held in the params of a higher-order primitive (`cond`, `scan`,
`while`), so that every transformation sees the whole body at once. Values a
body closes over (constants and tracers of enclosing transformations) are
hoisted into explicit leading operands, as `jit` does: loop-invariant values
thus enter a loop once, as operands, and are never recomputed per iteration.
What a loop body computes from those operands alone is lowered before the loop
(`_lower_invariants`), and partial evaluation does not stack such values as
per-iteration residuals (`_scan_partial_eval`).

Each primitive carries all its rules here: abstract evaluation, an eager impl
(a compiled one-primitive executable), lowering (`stablehlo.case`,
`stablehlo.while`), jvp, partial evaluation (so that `linearize`/`grad` split
the body into a known and an unknown part), transpose and batching.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.symbolic_dims import DimExpr
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._reductions import reduce_max
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    concatenate,
    pad,
    reshape,
    rev,
    slice_in_dim,
)

__all__ = [
    "associative_scan",
    "cond",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]


# ---------------------------------------------------------------------------
# Tracing user functions


def _trace_fun(
    fun: Callable[..., Any], in_tree: Any, in_avals: Sequence[Any], convert_out: Any = None
) -> tuple[ClosedJaxpr, list[Any], Any]:
    """Traces ``fun`` (pytree arguments) on ``in_avals``.

    Returns:
      `(jaxpr, consts, out_tree)`: the jaxpr takes the closed-over values
      (`consts`) as leading inputs and has no constvars of its own.
    """
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        out = fun(*tree_unflatten(in_tree, list(xs)))
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


def _aval_of(x: Any) -> ShapedArray:
    return get_aval(x)


def _same_type(a: Any, b: Any) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


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


def _impl(prim: Primitive) -> None:
    prim.def_impl(functools.partial(dispatch.apply_primitive, prim))


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


# ---------------------------------------------------------------------------
# cond / switch

cond_p = Primitive("cond")
cond_p.multiple_results = True
_impl(cond_p)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """Applies ``branches[index](*operands)``; the index is clamped into range.

    Args:
      index: an integer scalar.
      branches: functions of ``operands`` returning pytrees of one structure
        and of identical types.
      *operands: pytrees of arrays passed to the chosen branch.

    Returns:
      The chosen branch's result.

    Raises:
      TypeError: the branches' outputs differ in structure or type.

    Example:
      >>> switch(1, [lambda x: x + 1, lambda x: x * 2], 3.0)
      Array(6., dtype=float32, weak_type=True)
    """
    branches = list(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    idx_aval = _aval_of(index)
    if idx_aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {idx_aval.str_short()}")
    if not dtypes.issubdtype(idx_aval.dtype, np.integer):
        raise TypeError(f"Index type must be an integer, got {idx_aval.dtype}.")
    if len(branches) == 1:
        return branches[0](*operands)
    index = _ew.convert_element_type(index, np.int32)
    index = _ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    return _cond(index, branches, operands)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged out.

    Args:
      pred: a boolean (or numeric: nonzero is true) scalar.
      true_fun: the function applied when ``pred`` holds.
      false_fun: the function applied otherwise; its output must have the same
        structure and types as ``true_fun``'s.
      *operands: pytrees of arrays passed to the branch.

    Returns:
      The chosen branch's result.

    Example:
      >>> import numpy as np
      >>> x = np.float32(-2.0)
      >>> cond(x > 0, lambda x: x, lambda x: -x, x)
      Array(2., dtype=float32)
    """
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    p_aval = _aval_of(pred)
    if p_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of type {p_aval.str_short()}")
    if p_aval.dtype != np.bool_ and not dtypes.issubdtype(p_aval.dtype, np.number):
        raise TypeError(f"Pred type must be either boolean or number, got {p_aval.dtype}.")
    if p_aval.dtype != np.bool_:
        pred = _ew.ne(pred, _ew._convert_element_type(0, p_aval.dtype))
    index = _ew.convert_element_type(pred, np.int32)
    return _cond(index, [false_fun, true_fun], operands)


def _cond(index: Any, branches: list[Callable[..., Any]], operands: Sequence[Any]) -> Any:
    ops, in_tree = tree_flatten(tuple(operands))
    avals = [_aval_of(x) for x in ops]
    traced = [_trace_fun(f, in_tree, avals) for f in branches]
    out_trees = [t[2] for t in traced]
    for t in out_trees[1:]:
        if t != out_trees[0]:
            raise TypeError(
                "branch 0 and another branch outputs must have same type structure, got "
                f"{out_trees[0]} and {t}."
            )
    outs0 = traced[0][0].out_avals
    weak = [all(t[0].out_avals[k].weak_type for t in traced) for k in range(len(outs0))]
    for i, (jx, _, _) in enumerate(traced[1:], 1):
        if not all(_same_type(a, b) for a, b in zip(outs0, jx.out_avals)):
            raise TypeError(
                "branches 0 and "
                f"{i} outputs must have identical types, got {_type_str(outs0)} and "
                f"{_type_str(jx.out_avals)}."
            )
    if any(a.weak_type != w for t in traced for a, w in zip(t[0].out_avals, weak)):
        # Weak and strong outputs mix: every branch returns the strong type.
        conv = [ShapedArray(a.shape, a.dtype, w) for a, w in zip(outs0, weak)]
        traced = [_trace_fun(f, in_tree, avals, conv) for f in branches]
    # Every branch takes every branch's closed-over values, then the operands.
    all_consts = [c for _, cs, _ in traced for c in cs]
    const_avals = [[_aval_of(c) for c in cs] for _, cs, _ in traced]
    jaxprs = []
    for i, (jx, _, _) in enumerate(traced):
        before = [a for avs in const_avals[:i] for a in avs]
        after = [a for avs in const_avals[i + 1 :] for a in avs]
        n_c = len(const_avals[i])
        j = jx.jaxpr
        mine, rest = j.invars[:n_c], j.invars[n_c:]
        invars = [*(Var(a) for a in before), *mine, *(Var(a) for a in after), *rest]
        jaxprs.append(ClosedJaxpr(j.replace(invars=invars), []))
    outs = cond_p.bind(index, *all_consts, *ops, branches=tuple(jaxprs))
    return tree_unflatten(out_trees[0], outs)


@cond_p.def_effectful_abstract_eval
def _cond_abstract_eval(index: Any, *avals: Any, branches: tuple[ClosedJaxpr, ...]):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    effects = frozenset().union(*(b.effects for b in branches))
    return list(branches[0].out_avals), effects


def _cond_lowering(ctx: Any, index: ir.Value, *args: ir.Value, branches: tuple) -> list:
    types = [mlir.aval_to_ir_type(a) for a in ctx.avals_out]
    case = hlo.CaseOp(types, index, len(branches))
    for i, br in enumerate(branches):
        block = case.regions[i].blocks.append()
        with ir.InsertionPoint(block):
            outs = mlir.jaxpr_subcomp(
                ctx.module_context, br.jaxpr, br.consts, args, ctx.dim_var_values
            )
            hlo.return_(outs)
    return list(case.results)


mlir.register_lowering(cond_p, _cond_lowering)


def _cond_jvp(primals: list, tangents: list, *, branches: tuple) -> tuple[list, list]:
    index, ops = primals[0], primals[1:]
    nz = [type(t) is not ad.Zero for t in tangents[1:]]
    n_out = len(branches[0].out_avals)
    out_nz = [False] * n_out
    for br in branches:
        _, o = ad.jvp_jaxpr(br, nz, instantiate=False)
        out_nz = [a or b for a, b in zip(out_nz, o)]
    jvps = tuple(ad.jvp_jaxpr(br, nz, instantiate=out_nz)[0] for br in branches)
    nz_t = [t for t in tangents[1:] if type(t) is not ad.Zero]
    outs = cond_p.bind(index, *ops, *nz_t, branches=jvps)
    it = iter(outs[n_out:])
    t_out = [
        next(it) if z else ad.Zero(ad.tangent_aval(a))
        for a, z in zip(branches[0].out_avals, out_nz)
    ]
    return outs[:n_out], t_out


ad.primitive_jvps[cond_p] = _cond_jvp


def _cond_partial_eval(unknowns: list[bool], instantiate: list[bool], eqn: Any):
    """Known index: a known cond computing the known outputs and every branch's residuals
    (zeros for the other branches'), and an unknown cond reading them."""
    branches = eqn.params["branches"]
    n_out = len(eqn.outvars)
    if unknowns[0]:
        return None, eqn, [True] * n_out, []
    ops_uk = unknowns[1:]
    out_uk = list(instantiate)
    for br in branches:
        _, _, o, _ = pe.partial_eval_jaxpr_nounits(br, ops_uk, instantiate=False)
        out_uk = [a or b for a, b in zip(out_uk, o)]
    splits = [pe.partial_eval_jaxpr_nounits(br, ops_uk, instantiate=out_uk) for br in branches]
    all_res = [a for s in splits for a in s[3]]
    n_known_out = n_out - sum(out_uk)
    known_avals = [a for a, u in zip(branches[0].out_avals, out_uk) if not u]
    known_brs, unknown_brs = [], []
    offset = 0
    for known, unknown, _, res in splits:
        keep = [True] * n_known_out + [offset <= k < offset + len(res) for k in range(len(all_res))]
        known_brs.append(_with_zero_outputs(known, keep, [*known_avals, *all_res]))
        n_uk_in = len(unknown.in_avals) - len(res)
        j = unknown.jaxpr
        invars = [
            *(Var(a) for a in all_res[:offset]),
            *j.invars[: len(res)],
            *(Var(a) for a in all_res[offset + len(res) :]),
            *j.invars[len(res) : len(res) + n_uk_in],
        ]
        unknown_brs.append(ClosedJaxpr(j.replace(invars=invars), unknown.consts))
        offset += len(res)
    residuals = [Var(a) for a in all_res]
    index = eqn.invars[0]
    known_eqn = eqn.replace(
        invars=[index, *(x for x, u in zip(eqn.invars[1:], ops_uk) if not u)],
        outvars=[*(v for v, u in zip(eqn.outvars, out_uk) if not u), *residuals],
        params=dict(branches=tuple(known_brs)),
        effects=frozenset(),
    )
    unknown_eqn = eqn.replace(
        invars=[index, *residuals, *(x for x, u in zip(eqn.invars[1:], ops_uk) if u)],
        outvars=[v for v, u in zip(eqn.outvars, out_uk) if u],
        params=dict(branches=tuple(unknown_brs)),
    )
    return known_eqn, unknown_eqn, out_uk, residuals


pe.partial_eval_jaxpr_custom_rules[cond_p] = _cond_partial_eval


def _cond_dce(used_outputs: list[bool], eqn: Any):
    """Drops unused outputs and the branch equations only they need.

    Inputs are all kept (unused ones stay unread), so every input's producer stays live.
    """
    branches = eqn.params["branches"]
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    new_brs = tuple(pe.dce_closed_jaxpr(br, used_outputs, instantiate=True)[0] for br in branches)
    new_eqn = eqn.replace(
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(branches=new_brs),
    )
    return [True] * len(eqn.invars), new_eqn


pe.dce_rules[cond_p] = _cond_dce


def _cond_transpose(cts: list, index: Any, *args: Any, branches: tuple) -> list:
    if ad.is_undefined_primal(index):
        raise ValueError("cond transpose: the index cannot be linear")
    linear = [ad.is_undefined_primal(x) for x in args]
    ct_nz = [type(ct) is not ad.Zero for ct in cts]
    lin_avals = [ad.tangent_aval(x.aval) for x, lin in zip(args, linear) if lin]
    tr = [ad.transpose_jaxpr(br, linear, ct_nz) for br in branches]
    in_nz = [any(t[1][k] for t in tr) for k in range(len(lin_avals))]
    new_brs = []
    for body, nz in tr:
        keep = [n for n, u in zip(nz, in_nz) if u]
        new_brs.append(_with_zero_outputs(body, keep, [a for a, u in zip(lin_avals, in_nz) if u]))
    known = [x for x, lin in zip(args, linear) if not lin]
    nz_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    outs = iter(cond_p.bind(index, *known, *nz_cts, branches=tuple(new_brs)))
    lin_it = iter(zip(lin_avals, in_nz))
    res: list[Any] = [None]
    for lin in linear:
        if lin:
            a, nz = next(lin_it)
            res.append(next(outs) if nz else ad.Zero(a))
        else:
            res.append(None)
    return res


ad.primitive_transposes[cond_p] = _cond_transpose


def _cond_batching(axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, branches):
    index, ops = args[0], list(args[1:])
    idx_dim, op_dims = dims[0], list(dims[1:])
    size = axis_data.size
    if idx_dim is not None:
        # A batched index: every branch runs on every lane, then a select picks.
        ops = [batching.bdim_at_front(x, d, size) for x, d in zip(ops, op_dims)]
        index = batching.moveaxis(index, idx_dim, 0)
        outs = []
        for br in branches:
            bj, _ = batching.batch_jaxpr(br, axis_data, [0] * len(ops), True)
            outs.append(_closed_call(bj, *ops))
        res = []
        for k in range(len(outs[0])):
            cases = [o[k] for o in outs]
            shape = get_aval(cases[0]).shape
            which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
            res.append(_ew.select_n(which, *cases))
        return res, [0] * len(res)
    out_b = [False] * len(branches[0].out_avals)
    for br in branches:
        _, od = batching.batch_jaxpr(br, axis_data, op_dims, False)
        out_b = [a or (d is not None) for a, d in zip(out_b, od)]
    new = [batching.batch_jaxpr(br, axis_data, op_dims, out_b) for br in branches]
    out_dims = new[0][1]
    outs = cond_p.bind(index, *ops, branches=tuple(b for b, _ in new))
    return outs, out_dims


batching.axis_primitive_batchers[cond_p] = _cond_batching


# ---------------------------------------------------------------------------
# scan

scan_p = Primitive("scan")
scan_p.multiple_results = True
_impl(scan_p)


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loops ``f`` over the leading axis of ``xs``, threading a carry; stacks the outputs.

    Semantically ``for x in xs: carry, y = f(carry, x)``, returning the final
    carry and the ``y``s stacked along a new leading axis.

    Args:
      f: ``(carry, x) -> (carry, y)``; the output carry has the input carry's
        structure and types.
      init: the initial carry (a pytree of arrays).
      xs: a pytree of arrays with a common leading dimension, or None.
      length: the number of iterations (required when ``xs`` is None).
      reverse: iterate from the end of ``xs`` (outputs stay in ``xs`` order).
      unroll: iterations per loop trip in the lowered program (True: all).

    Returns:
      ``(final_carry, stacked_ys)``.

    Example:
      >>> scan(lambda c, x: (c + x, c), 0.0, np.arange(3.0))
      (Array(3., dtype=float32), Array([0., 0., 1.], dtype=float32))
    """
    xs_flat, xs_tree = tree_flatten(xs)
    lengths = set()
    for x in xs_flat:
        a = _aval_of(x)
        if a.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {a.str_short()}")
        lengths.add(a.shape[0])
    if length is not None:
        length = length if isinstance(length, DimExpr) else int(length)
        if lengths and lengths != {length}:
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {sorted(lengths)}."
            )
    elif not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(lengths) > 1:
        raise ValueError(f"scan got values with different leading axis sizes: {sorted(lengths)}.")
    else:
        length = lengths.pop()
    if unroll is True:
        unroll = 1 if isinstance(length, DimExpr) else max(length, 1)
    elif unroll is False:
        unroll = 1
    unroll = int(unroll)
    if unroll < 1:
        raise ValueError("`unroll` must be a `bool` or a positive `int`.")
    init_flat, init_tree = tree_flatten(init)
    x_avals = [_slice_aval(_aval_of(x)) for x in xs_flat]
    in_tree = tree_flatten((init, xs))[1]
    carry_trees: list[Any] = []

    def body(c: Any, x: Any) -> Any:
        out = f(c, x)
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise TypeError(
                f"scan body output must be a pair, got {type(out).__name__} of length "
                f"{len(out) if isinstance(out, tuple | list) else 1}."
            )
        carry_trees.append(tree_flatten(out[0])[1])
        return tuple(out)

    carry_avals = [_aval_of(x) for x in init_flat]
    for _ in range(2):
        jaxpr, consts, out_tree = _trace_fun(body, in_tree, [*carry_avals, *x_avals])
        if carry_trees[-1] != init_tree:
            raise TypeError(
                "scan body function carry input and carry output must have the same pytree "
                f"structure, but they differ: the input carry is {init_tree} and the output "
                f"carry is {carry_trees[-1]}."
            )
        outs = jaxpr.out_avals[: len(init_flat)]
        for a, b in zip(carry_avals, outs):
            if not _same_type(a, b):
                raise TypeError(
                    "scan body function carry input and carry output must have equal types: "
                    f"the input carry component has type {a.str_short()} but the corresponding "
                    f"output carry component has type {b.str_short()}."
                )
        if all(a.weak_type == b.weak_type for a, b in zip(carry_avals, outs)):
            break
        # A weakly typed initial carry meets a strong one: start from the strong type.
        carry_avals = [
            ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type)
            for a, b in zip(carry_avals, outs)
        ]
        init_flat = [
            _ew._convert_element_type(x, a.dtype, weak_type=a.weak_type)
            for x, a in zip(init_flat, carry_avals)
        ]
    n_in = len(consts) + len(init_flat) + len(xs_flat)
    outs = scan_p.bind(
        *consts,
        *init_flat,
        *xs_flat,
        reverse=bool(reverse),
        length=length,
        jaxpr=jaxpr,
        num_consts=len(consts),
        num_carry=len(init_flat),
        linear=(False,) * n_in,
        unroll=unroll,
        _split_transpose=_split_transpose,
    )
    return tree_unflatten(out_tree, outs)


def _slice_aval(a: Any) -> ShapedArray:
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


def _stack_aval(a: Any, length: int) -> ShapedArray:
    return ShapedArray((length, *a.shape), a.dtype, a.weak_type)


@scan_p.def_effectful_abstract_eval
def _scan_abstract_eval(*avals: Any, length: int, jaxpr: ClosedJaxpr, num_carry: int, **_: Any):
    outs = jaxpr.out_avals
    return [*outs[:num_carry], *(_stack_aval(a, length) for a in outs[num_carry:])], jaxpr.effects


def _i32(v: int) -> ir.Value:
    return mlir.ir_constant(np.int32(v))


def _scan_lowering(
    ctx: Any,
    *args: ir.Value,
    reverse: bool,
    length: int,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    unroll: int,
    **_: Any,
) -> list:
    consts, init, xs = _split3(args, num_consts, num_carry)
    if isinstance(length, DimExpr) or length > 0:
        jaxpr, consts = _lower_invariants(ctx, jaxpr, consts)
    nc, ncar = len(consts), num_carry
    x_avals = jaxpr.in_avals[nc + ncar :]
    y_avals = jaxpr.out_avals[ncar:]
    ys_avals = ctx.avals_out[ncar:]
    mctx, dims = ctx.module_context, ctx.dim_var_values

    def step(i: ir.Value, consts: Sequence, carry: Sequence, xs: Sequence, ys: Sequence):
        idx = hlo.subtract(last, i) if reverse else i
        zero = _i32(0)
        x_slices = []
        for x, a in zip(xs, x_avals):
            sl = hlo.dynamic_slice(
                x,
                [idx] + [zero] * a.ndim,
                [1, *a.shape],
                results=[mlir.aval_to_ir_type(ShapedArray((1, *a.shape), a.dtype))],
            )
            x_slices.append(hlo.reshape(mlir.aval_to_ir_type(a), sl))
        outs = mlir.jaxpr_subcomp(
            mctx, jaxpr.jaxpr, jaxpr.consts, [*consts, *carry, *x_slices], dims
        )
        new_ys = []
        for buf, y, a in zip(ys, outs[ncar:], y_avals):
            y1 = hlo.reshape(mlir.aval_to_ir_type(ShapedArray((1, *a.shape), a.dtype)), y)
            new_ys.append(hlo.dynamic_update_slice(buf, y1, [idx] + [zero] * a.ndim))
        return outs[:ncar], new_ys

    ys = [mlir.full_like_aval(ctx, 0, a) for a in ys_avals]
    if isinstance(length, DimExpr):  # a symbolic trip count: no unrolling
        (n_v,) = mlir.eval_dynamic_shape(ctx, (length,))
        last = hlo.subtract(n_v, _i32(1)) if reverse else None
        u, n_main, n_static = 1, n_v, 0
    else:
        u = max(1, min(unroll, length)) if length > 0 else 1
        n_main = n_static = (length // u) * u
        n_v, last = _i32(n_main), _i32(length - 1) if reverse else None
    carry = list(init)
    if not isinstance(n_main, int) or n_main > 0:
        vals = [_i32(0), *consts, *carry, *xs, *ys]
        types = [v.type for v in vals]
        loop = hlo.WhileOp(types, vals)
        cblock = loop.regions[0].blocks.append(*types)
        with ir.InsertionPoint(cblock):
            hlo.return_([mlir.compare_hlo(cblock.arguments[0], n_v, "LT", "SIGNED")])
        bblock = loop.regions[1].blocks.append(*types)
        with ir.InsertionPoint(bblock):
            a = list(bblock.arguments)
            i = a[0]
            b_consts = a[1 : 1 + nc]
            b_carry = a[1 + nc : 1 + nc + ncar]
            b_xs = a[1 + nc + ncar : 1 + nc + ncar + len(xs)]
            b_ys = a[1 + nc + ncar + len(xs) :]
            for k in range(u):
                ik = hlo.add(i, _i32(k)) if k else i
                b_carry, b_ys = step(ik, b_consts, b_carry, b_xs, b_ys)
            hlo.return_([hlo.add(i, _i32(u)), *b_consts, *b_carry, *b_xs, *b_ys])
        res = list(loop.results)
        carry = res[1 + nc : 1 + nc + ncar]
        ys = res[1 + nc + ncar + len(xs) :]
    for k in range(n_static, n_static if u == 1 else length):  # left over by unrolling
        carry, ys = step(_i32(k), consts, carry, xs, ys)
    return [*carry, *ys]


mlir.register_lowering(scan_p, _scan_lowering)


def _split3(xs: Sequence[Any], a: int, b: int) -> tuple[list, list, list]:
    return list(xs[:a]), list(xs[a : a + b]), list(xs[a + b :])


def _scan_jvp(
    primals: list,
    tangents: list,
    *,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    **params: Any,
) -> tuple[list, list]:
    nc, ncar = num_consts, num_carry
    nz = [type(t) is not ad.Zero for t in tangents]
    const_nz, carry_nz, xs_nz = _split3(nz, nc, ncar)
    n_ys = len(jaxpr.out_avals) - ncar
    for _ in range(ncar + 1):
        _, out_nz = ad.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys)
        new = [a or b for a, b in zip(carry_nz, out_nz[:ncar])]
        if new == carry_nz:
            break
        carry_nz = new
    jj, out_nz = ad.jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * n_ys)
    ys_nz = out_nz[ncar:]
    n_p = len(primals)
    nct, ncart, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    order = [
        *range(nc),
        *range(n_p, n_p + nct),
        *range(nc, nc + ncar),
        *range(n_p + nct, n_p + nct + ncart),
        *range(nc + ncar, n_p),
        *range(n_p + nct + ncart, n_p + nct + ncart + nxt),
    ]
    jj = _permute_invars(jj, order)
    nyt = sum(ys_nz)
    oorder = [
        *range(ncar),
        *range(ncar + n_ys, ncar + n_ys + ncart),
        *range(ncar, ncar + n_ys),
        *range(ncar + n_ys + ncart, ncar + n_ys + ncart + nyt),
    ]
    jj = _permute_outvars(jj, oorder)
    consts, init, xs = _split3(primals, nc, ncar)
    t_consts, t_init, t_xs = _split3(tangents, nc, ncar)
    t_consts = [t for t in t_consts if type(t) is not ad.Zero]
    t_init = [ad.instantiate_zeros(t) for t, z in zip(t_init, carry_nz) if z]
    t_xs = [t for t in t_xs if type(t) is not ad.Zero]
    ops = [*consts, *t_consts, *init, *t_init, *xs, *t_xs]
    outs = scan_p.bind(
        *ops,
        jaxpr=jj,
        num_consts=nc + nct,
        num_carry=ncar + ncart,
        **dict(params, linear=(False,) * len(ops)),
    )
    carry, carry_t, rest = _split3(outs, ncar, ncart)
    ys, ys_t = rest[:n_ys], iter(rest[n_ys:])
    out_avals = _scan_abstract_eval(
        *[get_aval(x) for x in primals], length=params["length"], jaxpr=jaxpr, num_carry=ncar
    )[0]
    ct_it = iter(carry_t)
    t_out = [
        next(ct_it) if z else ad.Zero(ad.tangent_aval(a))
        for a, z in zip(out_avals[:ncar], carry_nz)
    ] + [next(ys_t) if z else ad.Zero(ad.tangent_aval(a)) for a, z in zip(out_avals[ncar:], ys_nz)]
    return [*carry, *ys], t_out


ad.primitive_jvps[scan_p] = _scan_jvp


def _loop_invariant_vars(j: Jaxpr, n_consts: int) -> set:
    """The vars of loop body ``j`` that depend on nothing but its first ``n_consts``
    inputs (and constvars): the same at every iteration."""
    inv = {*j.constvars, *j.invars[:n_consts]}
    for eqn in j.eqns:
        if not eqn.effects and all(type(x) is Literal or x in inv for x in eqn.invars):
            inv.update(eqn.outvars)
    return inv


def _scan_partial_eval(unknowns: list[bool], instantiate: list[bool], eqn: Any):
    """Known iterations run now and stack the per-iteration residuals; the unknown scan
    reads them as scanned inputs.

    Loop-invariant residuals (functions of known loop constants alone, such as the
    cosine of a weight whose sine the body takes) are not stacked: the unknown body
    recomputes them from those constants, and the lowering hoists that out of its
    loop (`_lower_invariants`), so they cost one evaluation instead of one stored
    copy per iteration.
    """
    p = eqn.params
    jaxpr, nc, ncar, length = p["jaxpr"], p["num_consts"], p["num_carry"], p["length"]
    const_uk, carry_uk, xs_uk = _split3(list(unknowns), nc, ncar)
    n_ys = len(jaxpr.out_avals) - ncar
    carry_uk = [a or b for a, b in zip(carry_uk, instantiate[:ncar])]
    for _ in range(ncar + 1):
        _, _, out_uk, _ = pe.partial_eval_jaxpr_nounits(
            jaxpr, const_uk + carry_uk + xs_uk, carry_uk + [False] * n_ys
        )
        new = [a or b for a, b in zip(carry_uk, out_uk[:ncar])]
        if new == carry_uk:
            break
        carry_uk = new
    known, unknown, out_uk, res_avals = pe.partial_eval_jaxpr_nounits(
        jaxpr, const_uk + carry_uk + xs_uk, carry_uk + list(instantiate[ncar:])
    )
    ys_uk = out_uk[ncar:]
    kj = known.jaxpr
    n_kc = nc - sum(const_uk)
    n_res = len(res_avals)
    n_kout = len(kj.outvars) - n_res
    res_out = kj.outvars[n_kout:]
    inv_vars = _loop_invariant_vars(kj, n_kc)
    invariant = [v in inv_vars for v in res_out]
    inv_res = [v for v, inv in zip(res_out, invariant) if inv]
    # What computes the invariant residuals from the known constants, for the unknown body.
    recompute, rec_ins = dce_jaxpr(
        Jaxpr(
            kj.constvars,
            kj.invars[:n_kc],
            inv_res,
            [e for e in kj.eqns if e.outvars and e.outvars[0] in inv_vars],
        ),
        [True] * len(inv_res),
    )
    read = {x for e in recompute.eqns for x in e.invars if type(x) is not Literal}
    rec_consts = [(v, c) for v, c in zip(kj.constvars, known.consts) if v in read or v in inv_res]
    known_consts_ops = [x for x, u in zip(eqn.invars[:nc], const_uk) if not u]
    rec_ops = [x for x, used in zip(known_consts_ops, rec_ins) if used]
    known_body, _ = dce_jaxpr(
        kj.replace(
            outvars=[*kj.outvars[:n_kout], *(v for v, inv in zip(res_out, invariant) if not inv)]
        ),
        [True] * (n_kout + n_res - len(inv_res)),
        instantiate=True,
    )
    known_body = ClosedJaxpr(known_body, known.consts)
    stacked_res = [Var(_stack_aval(a, length)) for a, inv in zip(res_avals, invariant) if not inv]
    consts, init, xs = _split3(eqn.invars, nc, ncar)
    c_out, y_out = eqn.outvars[:ncar], eqn.outvars[ncar:]
    k_ops = [
        *(x for x, u in zip(consts, const_uk) if not u),
        *(x for x, u in zip(init, carry_uk) if not u),
        *(x for x, u in zip(xs, xs_uk) if not u),
    ]
    known_eqn = eqn.replace(
        invars=k_ops,
        outvars=[
            *(v for v, u in zip(c_out, carry_uk) if not u),
            *(v for v, u in zip(y_out, ys_uk) if not u),
            *stacked_res,
        ],
        params=dict(
            p,
            jaxpr=known_body,
            num_consts=n_kc,
            num_carry=ncar - sum(carry_uk),
            linear=(False,) * len(k_ops),
        ),
        effects=known_body.effects,
    )
    uj = unknown.jaxpr
    res_in, uk_in = uj.invars[:n_res], uj.invars[n_res:]
    n_uc, n_ucar = sum(const_uk), sum(carry_uk)
    # The residual vars are shared by both sides: the invariant ones become outputs of
    # the recomputing equations, placed first in the unknown body.
    unknown_body = ClosedJaxpr(
        Jaxpr(
            [v for v, _ in rec_consts],
            [
                *recompute.invars,
                *uk_in[: n_uc + n_ucar],
                *(v for v, inv in zip(res_in, invariant) if not inv),
                *uk_in[n_uc + n_ucar :],
            ],
            uj.outvars,
            [*recompute.eqns, *uj.eqns],
        ),
        [c for _, c in rec_consts],
    )
    u_ops = [
        *rec_ops,
        *(x for x, u in zip(consts, const_uk) if u),
        *(x for x, u in zip(init, carry_uk) if u),
        *stacked_res,
        *(x for x, u in zip(xs, xs_uk) if u),
    ]
    unknown_eqn = eqn.replace(
        invars=u_ops,
        outvars=[
            *(v for v, u in zip(c_out, carry_uk) if u),
            *(v for v, u in zip(y_out, ys_uk) if u),
        ],
        params=dict(
            p,
            jaxpr=unknown_body,
            num_consts=len(rec_ops) + n_uc,
            num_carry=n_ucar,
            linear=(False,) * len(u_ops),
        ),
        effects=unknown_body.effects,
    )
    return known_eqn, unknown_eqn, [*carry_uk, *ys_uk], stacked_res


pe.partial_eval_jaxpr_custom_rules[scan_p] = _scan_partial_eval


def _scan_dce(used_outputs: list[bool], eqn: Any) -> tuple[list[bool], Any]:
    """Drops unused stacked outputs, carries no used output depends on, and the body
    equations only they need. Inputs are kept (see `_cond_dce`)."""
    p = eqn.params
    jaxpr, nc, ncar = p["jaxpr"], p["num_consts"], p["num_carry"]
    n_in = len(eqn.invars)
    if not any(used_outputs) and not eqn.effects:
        return [False] * n_in, None
    used_carry, used_ys = list(used_outputs[:ncar]), list(used_outputs[ncar:])
    for _ in range(ncar + 1):
        _, used_in = pe.dce_closed_jaxpr(jaxpr, used_carry + used_ys)
        new = [a or b for a, b in zip(used_carry, used_in[nc : nc + ncar])]
        if new == used_carry:
            break
        used_carry = new
    if all(used_carry) and all(used_ys):
        return [True] * n_in, eqn
    body, _ = pe.dce_closed_jaxpr(jaxpr, used_carry + used_ys, instantiate=True)
    # A dropped carry leaves its input unread: the body takes it as a scanned-over
    # const no more, so it moves from the carry to the consts.
    j = body.jaxpr
    consts_v, carry_v, xs_v = _split3(j.invars, nc, ncar)
    consts_o, carry_o, xs_o = _split3(eqn.invars, nc, ncar)
    dropped = [not u for u in used_carry]
    body = ClosedJaxpr(
        j.replace(
            invars=[
                *consts_v,
                *(v for v, d in zip(carry_v, dropped) if d),
                *(v for v, d in zip(carry_v, dropped) if not d),
                *xs_v,
            ]
        ),
        body.consts,
    )
    invars = [
        *consts_o,
        *(x for x, d in zip(carry_o, dropped) if d),
        *(x for x, d in zip(carry_o, dropped) if not d),
        *xs_o,
    ]
    new_eqn = eqn.replace(
        invars=invars,
        outvars=[v for v, u in zip(eqn.outvars, used_carry + used_ys) if u],
        params=dict(
            p,
            jaxpr=body,
            num_consts=nc + sum(dropped),
            num_carry=ncar - sum(dropped),
            linear=(False,) * n_in,
        ),
        effects=body.effects,
    )
    return [True] * n_in, new_eqn


pe.dce_rules[scan_p] = _scan_dce


def _scan_transpose(
    cts: list,
    *args: Any,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    reverse: bool,
    length: int,
    **params: Any,
) -> list:
    nc, ncar = num_consts, num_carry
    consts, carry, xs = _split3(args, nc, ncar)
    c_lin = [ad.is_undefined_primal(x) for x in consts]
    x_lin = [ad.is_undefined_primal(x) for x in xs]
    # A known carry of a linear scan is a constant the body is linear in (e.g. the zero
    # accumulator of a transposed scan, transposed again): it gets no cotangent.
    carry_known = [not ad.is_undefined_primal(x) for x in carry]
    in_avals = jaxpr.in_avals
    c_avals, car_avals, x_avals = _split3(in_avals, nc, ncar)
    res_c = [x for x, lin in zip(consts, c_lin) if not lin]
    res_x = [x for x, lin in zip(xs, x_lin) if not lin]
    acc_avals = [ad.tangent_aval(a) for a, lin in zip(c_avals, c_lin) if lin]
    ct_car_avals = [ad.tangent_aval(a) for a in car_avals]
    lin_x_avals = [ad.tangent_aval(a) for a, lin in zip(x_avals, x_lin) if lin]
    y_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals[ncar:]]
    linear = [*c_lin, *([True] * ncar), *x_lin]
    tj, ct_nz = ad.transpose_jaxpr(jaxpr, linear, [True] * len(jaxpr.out_avals))
    lin_avals = [*acc_avals, *ct_car_avals, *lin_x_avals]
    n_rc, n_acc = len(res_c), len(acc_avals)

    def tbody(*a: Any) -> list[Any]:
        rc, acc, cc = _split3(a[: n_rc + n_acc + ncar], n_rc, n_acc)
        rx, cy = a[n_rc + n_acc + ncar : len(a) - len(y_avals)], a[len(a) - len(y_avals) :]
        outs = iter(_closed_call(tj, *rc, *rx, *cc, *cy))
        got = [next(outs) if z else ad.zeros_like_aval(av) for z, av in zip(ct_nz, lin_avals)]
        acc = [_ew.add(s, g) for s, g in zip(acc, got[:n_acc])]
        return [*acc, *got[n_acc:]]

    body_avals = [
        *(a for a, lin in zip(c_avals, c_lin) if not lin),
        *acc_avals,
        *ct_car_avals,
        *(a for a, lin in zip(x_avals, x_lin) if not lin),
        *y_avals,
    ]
    tbj = trace_to_jaxpr(tbody, body_avals)
    ct_carry = [ad.instantiate_zeros(ct) for ct in cts[:ncar]]
    ct_ys = [
        ad.instantiate_zeros(ct)
        if type(ct) is not ad.Zero
        else ad.zeros_like_aval(_stack_aval(a, length))
        for ct, a in zip(cts[ncar:], y_avals)
    ]
    ops = [*res_c, *(ad.zeros_like_aval(a) for a in acc_avals), *ct_carry, *res_x, *ct_ys]
    outs = scan_p.bind(
        *ops,
        jaxpr=tbj,
        num_consts=n_rc,
        num_carry=n_acc + ncar,
        reverse=not reverse,
        length=length,
        **dict(params, linear=(False,) * len(ops)),
    )
    acc, ct_init, ct_xs = _split3(outs, n_acc, ncar)
    acc_it, xs_it = iter(acc), iter(ct_xs)
    return [
        *(next(acc_it) if lin else None for lin in c_lin),
        *(None if k else ct for ct, k in zip(ct_init, carry_known)),
        *(next(xs_it) if lin else None for lin in x_lin),
    ]


ad.primitive_transposes[scan_p] = _scan_transpose


def _scan_batching(
    axis_data: Any,
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    **params: Any,
):
    nc, ncar = num_consts, num_carry
    size = axis_data.size
    c_d, car_d, x_d = _split3(list(dims), nc, ncar)
    carry_b = [d is not None for d in car_d]
    n_ys = len(jaxpr.out_avals) - ncar

    def in_dims(cb: list[bool]) -> list[Any]:
        return [
            *(None if d is None else 0 for d in c_d),
            *(0 if b else None for b in cb),
            *(None if d is None else 0 for d in x_d),
        ]

    for _ in range(ncar + 1):
        _, od = batching.batch_jaxpr(jaxpr, axis_data, in_dims(carry_b), carry_b + [False] * n_ys)
        new = [a or (d is not None) for a, d in zip(carry_b, od[:ncar])]
        if new == carry_b:
            break
        carry_b = new
    bj, od = batching.batch_jaxpr(jaxpr, axis_data, in_dims(carry_b), carry_b + [False] * n_ys)
    consts, carry, xs = _split3(list(args), nc, ncar)
    consts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(consts, c_d)]
    carry = [
        batching.bdim_at_front(x, d, size) if b else x for x, d, b in zip(carry, car_d, carry_b)
    ]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, x_d)]
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=bj, num_consts=nc, num_carry=ncar, **params)
    out_dims = [0 if b else None for b in carry_b] + [None if d is None else 1 for d in od[ncar:]]
    return outs, out_dims


batching.axis_primitive_batchers[scan_p] = _scan_batching


# ---------------------------------------------------------------------------
# while_loop / fori_loop

while_p = Primitive("while")
while_p.multiple_results = True
_impl(while_p)


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any):
    """``val = init_val; while cond_fun(val): val = body_fun(val)``, staged out.

    Args:
      cond_fun: ``val -> bool scalar``.
      body_fun: ``val -> val`` (same structure and types).
      init_val: the initial value (a pytree of arrays).

    Returns:
      The final value. Reverse-mode differentiation is not supported (the trip
      count is dynamic); forward mode and vmap are.

    Example:
      >>> while_loop(lambda x: x < 10, lambda x: x * 2, 1)
      Array(16, dtype=int32, weak_type=True)
    """
    init_flat, tree = tree_flatten(init_val)
    in_tree = tree_flatten((init_val,))[1]
    avals = [_aval_of(x) for x in init_flat]
    box: list[Any] = []
    for _ in range(2):
        cj, cconsts, _ = _trace_fun(cond_fun, in_tree, avals)
        out = cj.out_avals
        if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
            raise TypeError(
                f"cond_fun must return a boolean scalar, but got output type(s) {_type_str(out)}."
            )

        def body(v: Any, box: list[Any] = box) -> Any:
            o = body_fun(v)
            box.append(tree_flatten(o)[1])
            return o

        bj, bconsts, _ = _trace_fun(body, in_tree, avals)
        if box[-1] != tree:
            raise TypeError(
                "body_fun output and input must have identical types, but the structures "
                f"differ: {tree} and {box[-1]}."
            )
        outs = bj.out_avals
        for a, b in zip(avals, outs):
            if not _same_type(a, b):
                raise TypeError(
                    "body_fun output and input must have identical types, got input "
                    f"{a.str_short()} and output {b.str_short()}."
                )
        if all(a.weak_type == b.weak_type for a, b in zip(avals, outs)):
            break
        avals = [
            ShapedArray(a.shape, a.dtype, a.weak_type and b.weak_type) for a, b in zip(avals, outs)
        ]
        init_flat = [
            _ew._convert_element_type(x, a.dtype, weak_type=a.weak_type)
            for x, a in zip(init_flat, avals)
        ]
    outs = while_p.bind(
        *cconsts,
        *bconsts,
        *init_flat,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=len(cconsts),
        body_nconsts=len(bconsts),
    )
    return tree_unflatten(tree, outs)


@while_p.def_effectful_abstract_eval
def _while_abstract_eval(*avals: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, **_):
    return list(body_jaxpr.out_avals), cond_jaxpr.effects | body_jaxpr.effects


def _while_lowering(
    ctx: Any, *args: ir.Value, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
) -> list:
    cond_consts, body_consts, carry = _split3(args, cond_nconsts, body_nconsts)
    cond_jaxpr, cond_consts = _lower_invariants(ctx, cond_jaxpr, cond_consts)
    body_jaxpr, body_consts = _lower_invariants(ctx, body_jaxpr, body_consts)
    ncc, nbc = len(cond_consts), len(body_consts)
    mctx, dims = ctx.module_context, ctx.dim_var_values
    args = [*cond_consts, *body_consts, *carry]
    types = [v.type for v in args]
    loop = hlo.WhileOp(types, args)
    cblock = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cblock):
        a = list(cblock.arguments)
        (pred,) = mlir.jaxpr_subcomp(
            mctx, cond_jaxpr.jaxpr, cond_jaxpr.consts, [*a[:ncc], *a[ncc + nbc :]], dims
        )
        hlo.return_([pred])
    bblock = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(bblock):
        a = list(bblock.arguments)
        outs = mlir.jaxpr_subcomp(mctx, body_jaxpr.jaxpr, body_jaxpr.consts, a[ncc:], dims)
        hlo.return_([*a[: ncc + nbc], *outs])
    return list(loop.results)[ncc + nbc :]


mlir.register_lowering(while_p, _while_lowering)


def _while_jvp(
    primals: list, tangents: list, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
) -> tuple[list, list]:
    ncc, nbc = cond_nconsts, body_nconsts
    nz = [type(t) is not ad.Zero for t in tangents]
    bconst_nz, carry_nz = nz[ncc : ncc + nbc], nz[ncc + nbc :]
    n = len(carry_nz)
    for _ in range(n + 1):
        _, out_nz = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
        new = [a or b for a, b in zip(carry_nz, out_nz)]
        if new == carry_nz:
            break
        carry_nz = new
    bj, _ = ad.jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    nbt, nct = sum(bconst_nz), sum(carry_nz)
    nb = nbc + n
    bj = _permute_invars(
        bj, [*range(nbc), *range(nb, nb + nbt), *range(nbc, nb), *range(nb + nbt, nb + nbt + nct)]
    )
    carry_avals = body_jaxpr.out_avals
    t_avals = [ad.tangent_aval(a) for a, z in zip(carry_avals, carry_nz) if z]
    cj = _pad_invars(cond_jaxpr, [], t_avals)
    cconsts, bconsts, init = primals[:ncc], primals[ncc : ncc + nbc], primals[ncc + nbc :]
    bconst_t = [t for t in tangents[ncc : ncc + nbc] if type(t) is not ad.Zero]
    init_t = [ad.instantiate_zeros(t) for t, z in zip(tangents[ncc + nbc :], carry_nz) if z]
    outs = while_p.bind(
        *cconsts,
        *bconsts,
        *bconst_t,
        *init,
        *init_t,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=ncc,
        body_nconsts=nbc + nbt,
    )
    it = iter(outs[n:])
    t_out = [next(it) if z else ad.Zero(ad.tangent_aval(a)) for a, z in zip(carry_avals, carry_nz)]
    return outs[:n], t_out


ad.primitive_jvps[while_p] = _while_jvp


def _while_partial_eval(unknowns: list[bool], instantiate: list[bool], eqn: Any):
    """The known part of the carry (when it does not depend on the unknown part, nor the
    predicate on it) runs now; the whole loop is staged for the unknown part."""
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    n = len(eqn.outvars)
    everything = None, eqn, [True] * n, []
    if any(unknowns[:ncc]):
        return everything
    bconst_uk, carry_uk = list(unknowns[ncc : ncc + nbc]), list(unknowns[ncc + nbc :])
    carry_uk = [a or b for a, b in zip(carry_uk, instantiate)]
    for _ in range(n + 1):
        _, _, out_uk, _ = pe.partial_eval_jaxpr_nounits(bj, bconst_uk + carry_uk, carry_uk)
        new = [a or b for a, b in zip(carry_uk, out_uk)]
        if new == carry_uk:
            break
        carry_uk = new
    _, cond_used = pe.dce_closed_jaxpr(cj, [True])
    if any(u and c for u, c in zip(carry_uk, cond_used[ncc:])) or all(carry_uk):
        return everything
    known_mask = [not u for u in carry_uk]
    kb, used = pe.dce_closed_jaxpr(
        bj, known_mask, instantiate=[not u for u in bconst_uk] + known_mask
    )
    if any(u and k for u, k in zip(used, bconst_uk + carry_uk)):
        return everything
    kc = ClosedJaxpr(
        cj.jaxpr.replace(
            invars=[
                *cj.jaxpr.invars[:ncc],
                *(v for v, k in zip(cj.jaxpr.invars[ncc:], known_mask) if k),
            ]
        ),
        cj.consts,
    )
    cconsts, bconsts, init = (
        eqn.invars[:ncc],
        eqn.invars[ncc : ncc + nbc],
        eqn.invars[ncc + nbc :],
    )
    k_bconsts = [x for x, u in zip(bconsts, bconst_uk) if not u]
    known_eqn = eqn.replace(
        invars=[*cconsts, *k_bconsts, *(x for x, k in zip(init, known_mask) if k)],
        outvars=[v for v, k in zip(eqn.outvars, known_mask) if k],
        params=dict(p, cond_jaxpr=kc, body_jaxpr=kb, body_nconsts=len(k_bconsts)),
    )
    unknown_eqn = eqn.replace(
        outvars=[Var(v.aval) if k else v for v, k in zip(eqn.outvars, known_mask)]
    )
    return known_eqn, unknown_eqn, carry_uk, []


pe.partial_eval_jaxpr_custom_rules[while_p] = _while_partial_eval


def _while_dce(used_outputs: list[bool], eqn: Any) -> tuple[list[bool], Any]:
    """Drops the carry components that neither the predicate nor a used output needs.

    Their initial values stay inputs (unread body constants; see `_cond_dce`).
    """
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
    n_in = len(eqn.invars)
    if not any(used_outputs) and not eqn.effects:
        return [False] * n_in, None
    _, cond_used = pe.dce_closed_jaxpr(cj, [True])
    used = [a or b for a, b in zip(used_outputs, cond_used[ncc:])]
    for _ in range(len(used) + 1):
        _, used_in = pe.dce_closed_jaxpr(bj, used)
        new = [a or b for a, b in zip(used, used_in[nbc:])]
        if new == used:
            break
        used = new
    if all(used):
        return [True] * n_in, eqn
    body, _ = pe.dce_closed_jaxpr(bj, used, instantiate=True)
    j = body.jaxpr
    b_consts, b_carry = j.invars[:nbc], j.invars[nbc:]
    body = ClosedJaxpr(
        j.replace(
            invars=[
                *b_consts,
                *(v for v, u in zip(b_carry, used) if not u),
                *(v for v, u in zip(b_carry, used) if u),
            ]
        ),
        body.consts,
    )
    cjj = cj.jaxpr
    cond = ClosedJaxpr(
        cjj.replace(invars=[*cjj.invars[:ncc], *(v for v, u in zip(cjj.invars[ncc:], used) if u)]),
        cj.consts,
    )
    init = eqn.invars[ncc + nbc :]
    new_eqn = eqn.replace(
        invars=[
            *eqn.invars[: ncc + nbc],
            *(x for x, u in zip(init, used) if not u),
            *(x for x, u in zip(init, used) if u),
        ],
        outvars=[v for v, u in zip(eqn.outvars, used) if u],
        params=dict(p, cond_jaxpr=cond, body_jaxpr=body, body_nconsts=nbc + used.count(False)),
    )
    return [True] * n_in, new_eqn


pe.dce_rules[while_p] = _while_dce


def _while_transpose(cts: list, *args: Any, **params: Any) -> list:
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop."
    )


ad.primitive_transposes[while_p] = _while_transpose


def _any_lane(pred: Any) -> Any:
    return _ew.ne(reduce_max(_ew.convert_element_type(pred, np.int32), (0,)), np.int32(0))


def _while_batching(
    axis_data: Any,
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    cond_jaxpr,
    body_jaxpr,
    cond_nconsts,
    body_nconsts,
):
    ncc, nbc = cond_nconsts, body_nconsts
    size = axis_data.size
    cc_d, bc_d, car_d = _split3(list(dims), ncc, nbc)
    carry_b = [d is not None for d in car_d]
    n = len(carry_b)

    def zero_or_none(ds: Sequence[Any]) -> list[Any]:
        return [None if d is None else 0 for d in ds]

    def fix(carry_b: list[bool]) -> list[bool]:
        for _ in range(n + 1):
            _, od = batching.batch_jaxpr(
                body_jaxpr,
                axis_data,
                zero_or_none(bc_d) + [0 if b else None for b in carry_b],
                carry_b,
            )
            new = [a or (d is not None) for a, d in zip(carry_b, od)]
            if new == carry_b:
                break
            carry_b = new
        return carry_b

    carry_b = fix(carry_b)
    c_in = zero_or_none(cc_d) + [0 if b else None for b in carry_b]
    _, (pd,) = batching.batch_jaxpr(cond_jaxpr, axis_data, c_in, [False])
    pred_batched = pd is not None
    if pred_batched:
        carry_b = [True] * n
        c_in = zero_or_none(cc_d) + [0] * n
    b_in = zero_or_none(bc_d) + [0 if b else None for b in carry_b]
    bb, _ = batching.batch_jaxpr(body_jaxpr, axis_data, b_in, carry_b)
    cb, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, c_in, [pred_batched])
    cconsts, bconsts, carry = _split3(list(args), ncc, nbc)
    cconsts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(cconsts, cc_d)]
    bconsts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(bconsts, bc_d)]
    carry = [
        batching.bdim_at_front(x, d, size) if b else x for x, d, b in zip(carry, car_d, carry_b)
    ]
    out_dims = [0 if b else None for b in carry_b]
    if not pred_batched:
        outs = while_p.bind(
            *cconsts,
            *bconsts,
            *carry,
            cond_jaxpr=cb,
            body_jaxpr=bb,
            cond_nconsts=ncc,
            body_nconsts=nbc,
        )
        return outs, out_dims
    # A batched predicate: loop while any lane runs; finished lanes keep their values.
    cc_avals = [get_aval(x) for x in cconsts]
    bc_avals = [get_aval(x) for x in bconsts]
    car_avals = [get_aval(x) for x in carry]

    def new_cond(*a: Any) -> list[Any]:
        (pred,) = _closed_call(cb, *a)
        return [_any_lane(pred)]

    def new_body(*a: Any) -> list[Any]:
        cc, bc, vals = _split3(a, ncc, nbc)
        (pred,) = _closed_call(cb, *cc, *vals)
        new = _closed_call(bb, *bc, *vals)
        res = []
        for old, nw in zip(vals, new):
            shape = get_aval(old).shape
            which = broadcast_in_dim(pred, shape, (0,)) if len(shape) > 1 else pred
            res.append(_ew.select_n(which, old, nw))
        return res

    ncj = trace_to_jaxpr(new_cond, [*cc_avals, *car_avals])
    nbj = trace_to_jaxpr(new_body, [*cc_avals, *bc_avals, *car_avals])
    outs = while_p.bind(
        *cconsts,
        *cconsts,
        *bconsts,
        *carry,
        cond_jaxpr=ncj,
        body_jaxpr=nbj,
        cond_nconsts=ncc,
        body_nconsts=ncc + nbc,
    )
    return outs, out_dims


batching.axis_primitive_batchers[while_p] = _while_batching


def _concrete_int(x: Any) -> int | None:
    if isinstance(x, Tracer):
        return None
    try:
        a = np.asarray(x)
    except Exception:
        return None
    if a.shape != () or not np.issubdtype(a.dtype, np.integer):
        return None
    return int(a)


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``.

    With concrete bounds it is a `scan` of ``upper - lower`` steps (reverse-mode
    differentiable); with traced bounds a `while_loop` (forward mode only).

    Args:
      lower: the first index (an integer scalar).
      upper: the bound (exclusive).
      body_fun: ``(i, val) -> val``.
      init_val: the initial value (a pytree of arrays).
      unroll: iterations per trip of the lowered loop (static bounds only).

    Returns:
      The final value.
    """
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    dtype = np.result_type(
        *(
            np.asarray(b).dtype
            if not isinstance(b, int | Tracer)
            else (_aval_of(b).dtype if isinstance(b, Tracer) else np.int32)
            for b in (lower, upper)
        )
    )
    if lo is not None and hi is not None:

        def step(carry: Any, _: Any) -> Any:
            i, x = carry
            return (_ew.add(i, np.asarray(1, dtype)), body_fun(i, x)), None

        (_, out), _ = scan(
            step,
            (np.asarray(lo, dtype), init_val),
            None,
            length=max(hi - lo, 0),
            unroll=1 if unroll is None else unroll,
        )
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are static.")
    lower = _ew.convert_element_type(lower, dtype)
    upper = _ew.convert_element_type(upper, dtype)

    def body(c: Any) -> Any:
        i, u, x = c
        return _ew.add(i, np.asarray(1, dtype)), u, body_fun(i, x)

    _, _, out = while_loop(lambda c: _ew.lt(c[0], c[1]), body, (lower, upper, init_val))
    return out


# ---------------------------------------------------------------------------
# map and associative_scan, built on the above


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` applied to each slice of ``xs`` along its leading axis, as a loop (a `scan`).

    Args:
      f: a function of one slice (a pytree).
      xs: a pytree of arrays with a common leading dimension.
      batch_size: when given, ``f`` is vmapped over chunks of this many slices
        and the loop runs over the chunks (a remainder is mapped separately).

    Returns:
      The stacked outputs of ``f``.

    Example:
      >>> map(lambda x: x * 2, np.arange(3.0))
      Array([0., 2., 4.], dtype=float32)
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    leaves, tree = tree_flatten(xs)
    if not leaves:
        raise ValueError("lax.map with batch_size needs at least one array to map over")
    n = _aval_of(leaves[0]).shape[0]
    bs = int(batch_size)
    if bs < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    n_chunks, rem = divmod(n, bs)
    vf = batching.vmap(f)
    outs = []
    if n_chunks:
        main = [
            reshape(slice_in_dim(x, 0, n_chunks * bs), (n_chunks, bs, *_aval_of(x).shape[1:]))
            for x in leaves
        ]
        _, ys = scan(lambda _, x: ((), vf(tree_unflatten(tree, x))), (), main)
        ys_flat, ys_tree = tree_flatten(ys)
        outs.append([reshape(y, (n_chunks * bs, *_aval_of(y).shape[2:])) for y in ys_flat])
    if rem:
        tail = [slice_in_dim(x, n_chunks * bs, n) for x in leaves]
        ys_flat, ys_tree = tree_flatten(vf(tree_unflatten(tree, tail)))
        outs.append(ys_flat)
    if len(outs) == 1:
        return tree_unflatten(ys_tree, outs[0])
    return tree_unflatten(ys_tree, [concatenate([a, b], 0) for a, b in zip(*outs)])


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """Inclusive prefix scan of ``elems`` with the associative combiner ``fn``.

    Computed in parallel (O(log n) depth) by combining neighbours, recursing
    on the half-length sequence, and interleaving the results.

    Args:
      fn: an associative ``(a, b) -> c`` on pytrees of arrays shaped like
        slices of ``elems`` along ``axis``, vectorized over that axis.
      elems: a pytree of arrays with a common size along ``axis``.
      reverse: scan from the end.
      axis: the axis to scan along.

    Returns:
      The pytree of prefix combinations, shaped like ``elems``.

    Example:
      >>> from polyjax_numpy import lax
      >>> associative_scan(lax.add, np.arange(4.0))
      Array([0., 1., 3., 6.], dtype=float32)
    """
    flat, tree = tree_flatten(elems)
    if not flat:
        return elems
    ndim = _aval_of(flat[0]).ndim
    ax = axis + ndim if axis < 0 else axis
    sizes = {_aval_of(x).shape[ax] for x in flat}
    if len(sizes) != 1:
        raise ValueError(
            f"Array inputs to associative_scan must have the same size along "
            f"axis {axis}, got {sorted(sizes)}"
        )
    if reverse:
        flat = [rev(x, (ax,)) for x in flat]

    def combine(a: list, b: list) -> list:
        out, out_tree = tree_flatten(fn(tree_unflatten(tree, a), tree_unflatten(tree, b)))
        if out_tree != tree:
            raise ValueError("associative_scan: fn must return a pytree of elems' structure")
        return out

    def sl(x: Any, start: int, stop: int | None, stride: int = 1) -> Any:
        return slice_in_dim(x, start, stop, stride, ax)

    def interleave(a: Any, b: Any) -> Any:
        # a at even positions, b at odd; len(a) is len(b) or len(b) + 1.
        na, nb = _aval_of(a).shape[ax], _aval_of(b).shape[ax]
        zero = _ew._convert_element_type(0, _aval_of(a).dtype)
        cfg_a = [(0, 0, 0)] * ndim
        cfg_b = [(0, 0, 0)] * ndim
        cfg_a[ax] = (0, 1 if na == nb else 0, 1)
        cfg_b[ax] = (1, 0 if na == nb else 1, 1)
        pa, pb = pad(a, zero, cfg_a), pad(b, zero, cfg_b)
        if _aval_of(a).dtype == np.bool_:
            return _ew.bitwise_or(pa, pb)
        return _ew.add(pa, pb)

    def rec(xs: list) -> list:
        n = _aval_of(xs[0]).shape[ax]
        if n < 2:
            return xs
        reduced = combine([sl(x, 0, n - 1, 2) for x in xs], [sl(x, 1, None, 2) for x in xs])
        odd = rec(reduced)
        if n % 2 == 0:
            even = combine([sl(o, 0, -1) for o in odd], [sl(x, 2, None, 2) for x in xs])
        else:
            even = combine(odd, [sl(x, 2, None, 2) for x in xs])
        even = [concatenate([sl(x, 0, 1), e], ax) for x, e in zip(xs, even)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    out = rec(flat)
    if reverse:
        out = [rev(x, (ax,)) for x in out]
    return tree_unflatten(tree, out)
