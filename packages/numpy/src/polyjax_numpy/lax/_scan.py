"""`scan`, and `map` and `associative_scan`, the loops without a traced condition.

    scan[length=5 num_consts=1 num_carry=1 ...]   f32[3], f32[], f32[5,3] -> f32[], f32[5,3]

`scan` runs a traced body a static number of times, carrying values and stacking
per-step outputs. Its rules: lowering to `stablehlo.while`, jvp (a scan of the jvp
of the body), partial evaluation into a known and an unknown scan (residuals
stacked, loop invariants not), DCE, transpose (a reverse scan) and batching.
`map` is a scan without a carry; `associative_scan` combines slices in a tree
of `lax` operations and binds no loop primitive. See `_loop_helpers`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.lists import partition_list, split_list
from polyjax_core.primitive import Primitive
from polyjax_core.symbolic_dims import DimExpr
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._loop_helpers import (
    _aval_of,
    _check_carry_structure,
    _check_carry_types,
    _closed_call,
    _first_param_name,
    _lower_invariants,
    _permute_invars,
    _permute_outvars,
    _promote_weak_carries,
    _trace_fun,
)
from polyjax_numpy.lax._shape_ops import (
    concatenate,
    pad,
    reshape,
    rev,
    slice_in_dim,
)

__all__ = ["associative_scan", "map", "scan", "scan_p"]

# ---------------------------------------------------------------------------
# scan

scan_p = Primitive("scan")
scan_p.multiple_results = True


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
    return _scan(f, init, xs, length, reverse, unroll, _split_transpose)


def _scan_pair(f: Callable[[Any, Any], Any], c: Any, x: Any) -> tuple[Any, Any]:
    """The user's scan body, its output checked to be a pair ``(carry, y)``."""
    out = f(c, x)
    if not isinstance(out, tuple | list) or len(out) != 2:
        raise TypeError(
            f"scan body output must be a pair, got {type(out).__name__} of length "
            f"{len(out) if isinstance(out, tuple | list) else 1}."
        )
    return tuple(out)


def _scan(
    f: Callable[..., Any],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
    adapt: Callable[..., Any] = _scan_pair,
) -> tuple[Any, Any]:
    """`scan`, the body traced as ``adapt(f, carry, x)`` (a module-level wrapping
    returning a pair, so that eager calls hit the trace cache on ``f``)."""
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
    carry_avals = [_aval_of(x) for x in init_flat]
    # Errors call the carry by the first parameter of the function traced.
    name = _first_param_name(f if adapt is _scan_pair else functools.partial(adapt, f))

    def trace(carry_avals: list[Any]) -> tuple[ClosedJaxpr, list[Any], Any]:
        traced = _trace_fun(f, in_tree, [*carry_avals, *x_avals], adapt=adapt)
        _check_carry_structure("scan", name, init_tree, traced[2].children()[0])
        return traced

    jaxpr, consts, out_tree = trace(carry_avals)
    promoted = _promote_weak_carries(init_flat, carry_avals, jaxpr.out_avals[: len(init_flat)])
    if promoted is not None:
        init_flat, carry_avals = promoted
        jaxpr, consts, out_tree = trace(carry_avals)
    _check_carry_types("scan", name, init_tree, carry_avals, jaxpr.out_avals[: len(init_flat)])
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
    consts, init, xs = split_list(args, [num_consts, num_carry])
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
    # With ordered effects the token is carried last (see `_while_lowering`).
    ordered = mlir.has_ordered_effects(jaxpr)
    if not isinstance(n_main, int) or n_main > 0:
        vals = [_i32(0), *consts, *carry, *xs, *ys, *([mctx.token] if ordered else [])]
        types = [v.type for v in vals]
        loop = hlo.WhileOp(types, vals)
        cblock = loop.regions[0].blocks.append(*types)
        with ir.InsertionPoint(cblock):
            hlo.return_([mlir.compare_hlo(cblock.arguments[0], n_v, "LT", "SIGNED")])
        bblock = loop.regions[1].blocks.append(*types)
        with ir.InsertionPoint(bblock):
            a = list(bblock.arguments)
            if ordered:
                mctx.token = a.pop()
            i = a[0]
            b_consts = a[1 : 1 + nc]
            b_carry = a[1 + nc : 1 + nc + ncar]
            b_xs = a[1 + nc + ncar : 1 + nc + ncar + len(xs)]
            b_ys = a[1 + nc + ncar + len(xs) :]
            for k in range(u):
                ik = hlo.add(i, _i32(k)) if k else i
                b_carry, b_ys = step(ik, b_consts, b_carry, b_xs, b_ys)
            tail = [mctx.token] if ordered else []
            hlo.return_([hlo.add(i, _i32(u)), *b_consts, *b_carry, *b_xs, *b_ys, *tail])
        res = list(loop.results)
        if ordered:
            mctx.token = res.pop()
        carry = res[1 + nc : 1 + nc + ncar]
        ys = res[1 + nc + ncar + len(xs) :]
    for k in range(n_static, n_static if u == 1 else length):  # left over by unrolling
        carry, ys = step(_i32(k), consts, carry, xs, ys)
    return [*carry, *ys]


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
    const_nz, carry_nz, xs_nz = split_list(nz, [nc, ncar])
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
    consts, init, xs = split_list(primals, [nc, ncar])
    t_consts, t_init, t_xs = split_list(tangents, [nc, ncar])
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
    carry, carry_t, rest = split_list(outs, [ncar, ncart])
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
    const_uk, carry_uk, xs_uk = split_list(list(unknowns), [nc, ncar])
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
    inv_res = partition_list(invariant, res_out)[1]
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
    known_consts_ops = partition_list(const_uk, eqn.invars[:nc])[0]
    rec_ops = partition_list(rec_ins, known_consts_ops)[1]
    known_body, _ = dce_jaxpr(
        kj.replace(
            outvars=[*kj.outvars[:n_kout], *(v for v, inv in zip(res_out, invariant) if not inv)]
        ),
        [True] * (n_kout + n_res - len(inv_res)),
        instantiate=True,
    )
    known_body = ClosedJaxpr(known_body, known.consts)
    stacked_res = [Var(_stack_aval(a, length)) for a, inv in zip(res_avals, invariant) if not inv]
    consts, init, xs = split_list(eqn.invars, [nc, ncar])
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
    consts_v, carry_v, xs_v = split_list(j.invars, [nc, ncar])
    consts_o, carry_o, xs_o = split_list(eqn.invars, [nc, ncar])
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
        outvars=partition_list(used_carry + used_ys, eqn.outvars)[1],
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
    consts, carry, xs = split_list(args, [nc, ncar])
    c_lin = [ad.is_undefined_primal(x) for x in consts]
    x_lin = [ad.is_undefined_primal(x) for x in xs]
    # A known carry of a linear scan is a constant the body is linear in (e.g. the zero
    # accumulator of a transposed scan, transposed again): it gets no cotangent.
    carry_known = [not ad.is_undefined_primal(x) for x in carry]
    in_avals = jaxpr.in_avals
    c_avals, car_avals, x_avals = split_list(in_avals, [nc, ncar])
    res_c = partition_list(c_lin, consts)[0]
    res_x = partition_list(x_lin, xs)[0]
    acc_avals = [ad.tangent_aval(a) for a, lin in zip(c_avals, c_lin) if lin]
    ct_car_avals = [ad.tangent_aval(a) for a in car_avals]
    lin_x_avals = [ad.tangent_aval(a) for a, lin in zip(x_avals, x_lin) if lin]
    y_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals[ncar:]]
    linear = [*c_lin, *([True] * ncar), *x_lin]
    tj, ct_nz = ad.transpose_jaxpr(jaxpr, linear, [True] * len(jaxpr.out_avals))
    lin_avals = [*acc_avals, *ct_car_avals, *lin_x_avals]
    n_rc, n_acc = len(res_c), len(acc_avals)

    def tbody(*a: Any) -> list[Any]:
        rc, acc, cc = split_list(a[: n_rc + n_acc + ncar], [n_rc, n_acc])
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
    acc, ct_init, ct_xs = split_list(outs, [n_acc, ncar])
    acc_it, xs_it = iter(acc), iter(ct_xs)
    return [
        *(next(acc_it) if lin else None for lin in c_lin),
        *(None if k else ct for ct, k in zip(ct_init, carry_known)),
        *(next(xs_it) if lin else None for lin in x_lin),
    ]


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
    c_d, car_d, x_d = split_list(list(dims), [nc, ncar])
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
    consts, carry, xs = split_list(list(args), [nc, ncar])
    consts = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(consts, c_d)]
    carry = [
        batching.bdim_at_front(x, d, size) if b else x for x, d, b in zip(carry, car_d, carry_b)
    ]
    xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in zip(xs, x_d)]
    outs = scan_p.bind(*consts, *carry, *xs, jaxpr=bj, num_consts=nc, num_carry=ncar, **params)
    out_dims = [0 if b else None for b in carry_b] + [None if d is None else 1 for d in od[ncar:]]
    return outs, out_dims


def _scan_print_params(params: dict) -> dict:
    # JAX leaves out `linear` and `_split_transpose` at their defaults.
    return dict(
        sorted(
            (k, v)
            for k, v in params.items()
            if not (k == "linear" and not any(v)) and not (k == "_split_transpose" and not v)
        )
    )


define_rules(
    scan_p,
    _scan_abstract_eval,
    _scan_lowering,
    print_params=_scan_print_params,
    effectful=True,
    jvp=_scan_jvp,
    partial_eval=_scan_partial_eval,
    dce=_scan_dce,
    transpose=_scan_transpose,
    axis_batching=_scan_batching,
)


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
        _, ys = _scan(f, (), xs, adapt=_map_step)
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


def _map_step(f: Callable[[Any], Any], _: Any, x: Any) -> tuple[Any, Any]:
    return (), f(x)


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
