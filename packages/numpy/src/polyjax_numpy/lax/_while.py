"""`while_loop` and `fori_loop`: the `while` primitive, a loop with a traced condition.

    while[cond_nconsts=0 body_nconsts=1 ...]   f32[], i32[] -> f32[], i32[]

Its rules: lowering to `stablehlo.while`, jvp (the tangents join the carry),
partial evaluation, DCE, batching (a batched condition runs until every lane is
done). It has no transpose: its trip count is dynamic, so reverse mode is an
error. `fori_loop` is a `scan` when its bounds are concrete (differentiable in
reverse mode) and a `while` otherwise. See `_loop_helpers`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import effects as core_effects
from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr import ClosedJaxpr, Var
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.lists import partition_list, split_list
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._dim_value import dim_as_value
from polyjax_numpy.lax._loop_helpers import (
    _aval_of,
    _check_carry_structure,
    _check_carry_types,
    _closed_call,
    _first_param_name,
    _has_lane_predicated,
    _lane_predicated,
    _lower_invariants,
    _pad_invars,
    _permute_invars,
    _promote_weak_carries,
    _trace_fun,
    _type_str,
)
from polyjax_numpy.lax._reductions import reduce_max
from polyjax_numpy.lax._scan import _scan
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
)

__all__ = ["fori_loop", "while_loop", "while_p"]

# ---------------------------------------------------------------------------
# while_loop / fori_loop

while_p = Primitive("while")
while_p.multiple_results = True


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
    return _while_loop(cond_fun, body_fun, init_val)


def _while_loop(
    cond_fun: Callable[[Any], Any],
    body_fun: Callable[[Any], Any],
    init_val: Any,
    body_adapt: Callable[..., Any] | None = None,
) -> Any:
    """`while_loop`, the body traced as ``body_adapt(body_fun, val)`` when given
    (a fixed wrapping, so that eager calls hit the trace cache on ``body_fun``)."""
    init_flat, tree = tree_flatten(init_val)
    in_tree = tree_flatten((init_val,))[1]
    avals = [_aval_of(x) for x in init_flat]
    traced_body = body_fun if body_adapt is None else functools.partial(body_adapt, body_fun)
    name = _first_param_name(traced_body)

    def trace(avals: list[Any]) -> tuple[ClosedJaxpr, list[Any], ClosedJaxpr, list[Any]]:
        cj, cconsts, _ = _trace_fun(cond_fun, in_tree, avals)
        out = cj.out_avals
        if len(out) != 1 or out[0].shape != () or out[0].dtype != np.bool_:
            raise TypeError(
                f"cond_fun must return a boolean scalar, but got output type(s) {_type_str(out)}."
            )
        bj, bconsts, out_tree = _trace_fun(body_fun, in_tree, avals, adapt=body_adapt)
        _check_carry_structure("while_loop", name, tree, out_tree)
        return cj, cconsts, bj, bconsts

    cj, cconsts, bj, bconsts = trace(avals)
    promoted = _promote_weak_carries(init_flat, avals, bj.out_avals)
    if promoted is not None:
        init_flat, avals = promoted
        cj, cconsts, bj, bconsts = trace(avals)
    _check_carry_types("while_loop", name, tree, avals, bj.out_avals)
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


def _while_abstract_eval(*avals: Any, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, **_):
    outs = list(body_jaxpr.out_avals)
    pred_vma = getattr(cond_jaxpr.out_avals[0], "vma", frozenset())
    if pred_vma:
        # Devices whose predicates differ run different numbers of iterations: the
        # results vary over the predicate's axes too (JAX keeps the carries' type; we
        # stay sound, see docs/sharding.md).
        outs = [a.update(vma=a.vma | pred_vma) for a in outs]
    return outs, cond_jaxpr.effects | body_jaxpr.effects


def _while_lowering(
    ctx: Any, *args: ir.Value, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
) -> list:
    cond_consts, body_consts, carry = split_list(args, [cond_nconsts, body_nconsts])
    cond_jaxpr, cond_consts = _lower_invariants(ctx, cond_jaxpr, cond_consts)
    body_jaxpr, body_consts = _lower_invariants(ctx, body_jaxpr, body_consts)
    ncc, nbc = len(cond_consts), len(body_consts)
    mctx, dims = ctx.module_context, ctx.dim_var_values
    if mlir.has_ordered_effects(cond_jaxpr):
        raise NotImplementedError(
            "Ordered effects are not supported in the cond_fun of a while_loop."
        )
    # With ordered effects in the body, the token is carried last, so the
    # effects of one iteration happen before those of the next and of what follows.
    ordered = mlir.has_ordered_effects(body_jaxpr)
    args = [*cond_consts, *body_consts, *carry, *([mctx.token] if ordered else [])]
    types = [v.type for v in args]
    loop = hlo.WhileOp(types, args)
    cblock = loop.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cblock):
        a = list(cblock.arguments)[: len(args) - ordered]
        (pred,) = mlir.jaxpr_subcomp(
            mctx, cond_jaxpr.jaxpr, cond_jaxpr.consts, [*a[:ncc], *a[ncc + nbc :]], dims
        )
        hlo.return_([pred])
    bblock = loop.regions[1].blocks.append(*types)
    with ir.InsertionPoint(bblock):
        a = list(bblock.arguments)
        if ordered:
            mctx.token = a.pop()
        outs = mlir.jaxpr_subcomp(mctx, body_jaxpr.jaxpr, body_jaxpr.consts, a[ncc:], dims)
        hlo.return_([*a[: ncc + nbc], *outs, *([mctx.token] if ordered else [])])
    results = list(loop.results)
    if ordered:
        mctx.token = results.pop()
    return results[ncc + nbc :]


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
    k_bconsts = partition_list(bconst_uk, bconsts)[0]
    known_eqn = eqn.replace(
        invars=[*cconsts, *k_bconsts, *(x for x, k in zip(init, known_mask) if k)],
        outvars=partition_list(known_mask, eqn.outvars)[1],
        params=dict(p, cond_jaxpr=kc, body_jaxpr=kb, body_nconsts=len(k_bconsts)),
    )
    unknown_eqn = eqn.replace(
        outvars=[Var(v.aval) if k else v for v, k in zip(eqn.outvars, known_mask)]
    )
    return known_eqn, unknown_eqn, carry_uk, []


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
        outvars=partition_list(used, eqn.outvars)[1],
        params=dict(p, cond_jaxpr=cond, body_jaxpr=body, body_nconsts=nbc + used.count(False)),
    )
    return [True] * n_in, new_eqn


def _while_transpose(cts: list, *args: Any, **params: Any) -> list:
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
        "dynamic start/stop values. Try using lax.scan, or using fori_loop with static "
        "start/stop."
    )


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
    if any(d is not None for d in dims) and core_effects.batched_loop_disallowed_effects.filter_in(
        cond_jaxpr.effects | body_jaxpr.effects
    ):
        # A batched loop may run its body more often than each example asks
        # (JAX raises a bare Exception here; so do we, with its words).
        raise Exception("Ordered IO effects not supported in vmap.")  # noqa: TRY002
    cc_d, bc_d, car_d = split_list(list(dims), [ncc, nbc])
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
    lane_checks = pred_batched and _has_lane_predicated(body_jaxpr)
    if lane_checks:  # the body's checks hold only on lanes still looping
        bb, _ = batching.batch_jaxpr(_lane_predicated(body_jaxpr), axis_data, [0, *b_in], carry_b)
    else:
        bb, _ = batching.batch_jaxpr(body_jaxpr, axis_data, b_in, carry_b)
    cb, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, c_in, [pred_batched])
    cconsts, bconsts, carry = split_list(list(args), [ncc, nbc])
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
        cc, bc, vals = split_list(a, [ncc, nbc])
        (pred,) = _closed_call(cb, *cc, *vals)
        new = _closed_call(bb, *([pred] if lane_checks else []), *bc, *vals)
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


define_rules(
    while_p,
    _while_abstract_eval,
    _while_lowering,
    effectful=True,
    jvp=_while_jvp,
    partial_eval=_while_partial_eval,
    dce=_while_dce,
    transpose=_while_transpose,
    axis_batching=_while_batching,
)


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


def _fori_index_type(lower: Any, upper: Any) -> tuple[np.dtype, bool]:
    """The dtype and weak type of a traced `fori_loop` index.

    As in JAX, the bounds must have one type, except that a Python int (weakly
    typed) bound goes with any signed integer bound.

    Raises:
      TypeError: the bounds' types differ otherwise.
    """
    (dl, wl), (du, wu) = (
        (dtypes.dtype(b, canonicalize=True), dtypes.is_weakly_typed(b)) for b in (lower, upper)
    )
    if dl == du:
        return dl, wl and wu
    for (d, w), (other, other_w) in (((dl, wl), (du, wu)), ((du, wu), (dl, wl))):
        if w and not other_w and d.kind == "i" and other.kind == "i":
            return other, False
    raise TypeError(
        f"lower and upper arguments to fori_loop must have equal types, got {dl.name} and {du.name}"
    )


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
    # A symbolic bound (`x.shape[0]` under export) is a traced value: a while loop.
    lower, upper = dim_as_value(lower), dim_as_value(upper)
    dtype, weak = _fori_index_type(lower, upper)
    lo, hi = _concrete_int(lower), _concrete_int(upper)
    if lo is not None and hi is not None:
        (_, out), _ = _scan(
            body_fun,
            (_ew._convert_element_type(lo, np.int32, weak_type=True), init_val),
            None,
            length=max(hi - lo, 0),
            unroll=1 if unroll is None else unroll,
            adapt=_fori_scan_step,
        )
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are static.")
    lower = _ew._convert_element_type(lower, dtype, weak_type=weak)
    upper = _ew._convert_element_type(upper, dtype, weak_type=weak)
    _, _, out = _while_loop(_fori_cond, body_fun, (lower, upper, init_val), _fori_while_step)
    return out


# The fixed wrappings of fori_loop's body (module-level, so that the trace cache
# keyed on the user's `body_fun` hits on every eager call).


def _fori_scan_step(body_fun: Callable[[Any, Any], Any], loop_carry: Any, _: Any) -> Any:
    # Concrete bounds count like Python ints: the index is a weak int32, as in JAX.
    i, x = loop_carry
    one = _ew._convert_element_type(1, np.int32, weak_type=True)
    return (_ew.add(i, one), body_fun(i, x)), None


def _fori_cond(loop_carry: Any) -> Any:
    return _ew.lt(loop_carry[0], loop_carry[1])


def _fori_while_step(body_fun: Callable[[Any, Any], Any], loop_carry: Any) -> Any:
    i, u, x = loop_carry
    aval = _aval_of(i)
    one = _ew._convert_element_type(1, aval.dtype, weak_type=aval.weak_type)
    return _ew.add(i, one), u, body_fun(i, x)
