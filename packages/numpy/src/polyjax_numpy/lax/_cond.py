"""`cond` and `switch`: the `cond` primitive, which runs one of several traced branches.

    cond[branches=(...)]   i32[], f32[3] -> f32[3]     (the index picks the branch)

Its rules: lowering to `stablehlo.case`, jvp and transpose branch by branch,
partial evaluation and DCE of every branch alike, batching (a batched index
becomes a `select_n` over all branches' results). See `_loop_helpers` for what the
control-flow primitives share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes, tracing
from polyjax_core.abstract_values import get_aval
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jaxpr import ClosedJaxpr, Var
from polyjax_core.lists import partition_list
from polyjax_core.primitive import Primitive
from polyjax_core.state import is_ref_aval
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_core.wrapped_fun import debug_info
from polyjax_interpreters import ad, batching, discharge, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._loop_helpers import (
    _aval_of,
    _check_branch_types,
    _closed_call,
    _has_lane_predicated,
    _lane_predicated,
    _trace_fun,
    _with_zero_outputs,
)
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
)

__all__ = ["cond", "cond_p", "switch"]

# ---------------------------------------------------------------------------
# cond / switch

cond_p = Primitive("cond")
cond_p.multiple_results = True


_NO_OPERAND: Any = object()


def _with_operand_keyword(operands: tuple, operand: Any) -> tuple:
    """The operands of `cond`/`switch`, given positionally or by JAX's older `operand=x`."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(
            "if 'operand' keyword is passed then no positional operands can be passed, "
            f"got operand={operand} and positional operands {operands}"
        )
    return (operand,)


def switch(
    index: Any,
    branches: Sequence[Callable[..., Any]],
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    """Applies ``branches[index](*operands)``; the index is clamped into range.

    Args:
      index: an integer scalar.
      branches: functions of ``operands`` returning pytrees of one structure
        and of identical types.
      *operands: pytrees of arrays passed to the chosen branch.
      operand: the older keyword form of a single operand; not allowed together
        with positional operands.

    Returns:
      The chosen branch's result.

    Raises:
      TypeError: the branches' outputs differ in structure or type.

    Example:
      >>> switch(1, [lambda x: x + 1, lambda x: x * 2], 3.0)
      Array(6., dtype=float32, weak_type=True)
    """
    operands = _with_operand_keyword(operands, operand)
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


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged out.

    Args:
      pred: a boolean (or numeric: nonzero is true) scalar.
      true_fun: the function applied when ``pred`` holds.
      false_fun: the function applied otherwise; its output must have the same
        structure and types as ``true_fun``'s.
      *operands: pytrees of arrays passed to the branch.
      operand: the older keyword form of a single operand (``cond(p, f, g, operand=x)``);
        not allowed together with positional operands.

    Returns:
      The chosen branch's result.

    Example:
      >>> import numpy as np
      >>> x = np.float32(-2.0)
      >>> cond(x > 0, lambda x: x, lambda x: -x, x)
      Array(2., dtype=float32)
    """
    operands = _with_operand_keyword(operands, operand)
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
    return _cond(index, [false_fun, true_fun], operands, "cond", (1, 0))


def _cond(
    index: Any,
    branches: list[Callable[..., Any]],
    operands: Sequence[Any],
    what: str = "switch",
    order: Sequence[int] | None = None,
) -> Any:
    """Binds `cond_p`. ``what`` and ``order`` (the branches in the order the user
    wrote them) shape the error messages only."""
    ops, in_tree = tree_flatten(tuple(operands))
    avals = [_aval_of(x) for x in ops]
    traced = [_trace_fun(f, in_tree, avals) for f in branches]
    for f, (jx, _, _) in zip(branches, traced):
        for a in jx.out_avals:
            if is_ref_aval(a):
                src = debug_info(what, f, (), {}).func_src_info
                raise discharge.returned_ref_error(src, what, a)
    order = list(range(len(branches))) if order is None else list(order)
    names = ["true_fun", "false_fun"] if what == "cond" else [f"branch {order[0]}"]
    names += [f"branch{k}" for k in order[len(names) :]]
    _check_branch_types(
        what,
        names,
        [branches[k] for k in order],
        [traced[k][2] for k in order],
        [traced[k][0].out_avals for k in order],
    )
    out_trees = [t[2] for t in traced]
    outs0 = traced[0][0].out_avals
    if any(a.weak_type != b.weak_type for t in traced for a, b in zip(t[0].out_avals, outs0)):
        # Weak and strong outputs mix: as in JAX, branch 0's weak types win.
        traced = [_trace_fun(f, in_tree, avals, outs0) for f in branches]
    # Every branch takes every branch's closed-over values, then the operands.
    all_consts = [c for _, cs, _ in traced for c in cs]
    branch_jaxprs = tuple(jx for jx, _, _ in traced)
    n_consts = tuple(len(cs) for _, cs, _ in traced)
    if tracing.current_trace() is tracing.eval_trace:
        # Eager: the traces came from the cache, so the same branches get the
        # same padded jaxprs, and the eager executable cache hits.
        jaxprs = _padded_branches_cached(branch_jaxprs, n_consts)
    else:
        jaxprs = _padded_branches(branch_jaxprs, n_consts)
    outs = cond_p.bind(index, *all_consts, *ops, branches=jaxprs)
    return tree_unflatten(out_trees[0], outs)


def _padded_branches(
    branch_jaxprs: tuple[ClosedJaxpr, ...], n_consts: tuple[int, ...]
) -> tuple[ClosedJaxpr, ...]:
    """Each branch's jaxpr taking every branch's closed-over values (``n_consts``
    of each, in branch order), then the operands."""
    const_avals = [[v.aval for v in jx.jaxpr.invars[:n]] for jx, n in zip(branch_jaxprs, n_consts)]
    jaxprs = []
    for i, jx in enumerate(branch_jaxprs):
        before = [a for avs in const_avals[:i] for a in avs]
        after = [a for avs in const_avals[i + 1 :] for a in avs]
        n_c = n_consts[i]
        j = jx.jaxpr
        mine, rest = j.invars[:n_c], j.invars[n_c:]
        invars = [*(Var(a) for a in before), *mine, *(Var(a) for a in after), *rest]
        jaxprs.append(ClosedJaxpr(j.replace(invars=invars), []))
    return tuple(jaxprs)


_padded_branches_cached = weakref_lru_cache(_padded_branches, maxsize=4096)


def _cond_abstract_eval(index: Any, *avals: Any, branches: tuple[ClosedJaxpr, ...]):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
    effects = frozenset().union(*(b.effects for b in branches))
    outs = list(branches[0].out_avals)
    if index.vma:
        # A predicate that differs between devices makes them take different branches:
        # the result varies over its axes too (JAX keeps the branches' type here; we
        # stay sound, see docs/sharding.md).
        outs = [a.update(vma=a.vma | index.vma) for a in outs]
    return outs, effects


def _cond_lowering(ctx: Any, index: ir.Value, *args: ir.Value, branches: tuple) -> list:
    mctx = ctx.module_context
    types = [mlir.aval_to_ir_type(a) for a in ctx.avals_out]
    # With ordered effects, every branch starts from the token before the cond
    # and returns its last one first.
    ordered = mlir.has_ordered_effects(*branches)
    token_in = mctx.token
    case = hlo.CaseOp([mlir.token_type()] * ordered + types, index, len(branches))
    for i, br in enumerate(branches):
        block = case.regions[i].blocks.append()
        with ir.InsertionPoint(block):
            mctx.token = token_in
            outs = mlir.jaxpr_subcomp(mctx, br.jaxpr, br.consts, args, ctx.dim_var_values)
            hlo.return_([mctx.token, *outs] if ordered else outs)
    results = list(case.results)
    mctx.token = results.pop(0) if ordered else token_in
    return results


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
    known_avals = partition_list(out_uk, branches[0].out_avals)[0]
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
        outvars=partition_list(out_uk, eqn.outvars)[1],
        params=dict(branches=tuple(unknown_brs)),
    )
    return known_eqn, unknown_eqn, out_uk, residuals


def _cond_dce(used_outputs: list[bool], eqn: Any):
    """Drops unused outputs and the branch equations only they need.

    Inputs are all kept (unused ones stay unread), so every input's producer stays live.
    """
    branches = eqn.params["branches"]
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    new_brs = tuple(pe.dce_closed_jaxpr(br, used_outputs, instantiate=True)[0] for br in branches)
    new_eqn = eqn.replace(
        outvars=partition_list(used_outputs, eqn.outvars)[1],
        params=dict(branches=new_brs),
    )
    return [True] * len(eqn.invars), new_eqn


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
        keep = partition_list(in_nz, nz)[1]
        new_brs.append(_with_zero_outputs(body, keep, partition_list(in_nz, lin_avals)[1]))
    known = partition_list(linear, args)[0]
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


def _cond_batching(axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, branches):
    index, ops = args[0], list(args[1:])
    idx_dim, op_dims = dims[0], list(dims[1:])
    size = axis_data.size
    if idx_dim is not None:
        # A batched index: every branch runs on every lane, then a select picks.
        ops = [batching.bdim_at_front(x, d, size) for x, d in zip(ops, op_dims)]
        index = batching.moveaxis(index, idx_dim, 0)
        outs = []
        for i, br in enumerate(branches):
            if _has_lane_predicated(br):
                lanes = _ew.eq(index, np.int32(i))
                bj, _ = batching.batch_jaxpr(
                    _lane_predicated(br), axis_data, [0] * (1 + len(ops)), True
                )
                outs.append(_closed_call(bj, lanes, *ops))
                continue
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


define_rules(
    cond_p,
    _cond_abstract_eval,
    _cond_lowering,
    effectful=True,
    jvp=_cond_jvp,
    partial_eval=_cond_partial_eval,
    dce=_cond_dce,
    transpose=_cond_transpose,
    axis_batching=_cond_batching,
)
