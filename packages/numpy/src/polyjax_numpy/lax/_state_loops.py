"""Discharging references through `scan`, `while` and `cond` (docs/refs.md).

A loop body that reads or writes a reference it closes over gets that
reference as a const operand. Discharged, the reference becomes a *carry*:
its contents enter the loop, the discharged body returns the new contents
each iteration, and the final contents are what the reference holds after
the loop. A `cond` branch returns the final contents of every reference any
branch may write (unchanged ones as they came in), so all branches agree.

References created inside a body (no reference operand) discharge inside the
body: the loop is rebuilt from its discharged body alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_interpreters import discharge
from polyjax_interpreters import partial_eval as pe
from polyjax_numpy.lax._cond import cond_p
from polyjax_numpy.lax._scan import scan_p
from polyjax_numpy.lax._while import while_p

__all__: list[str] = []


def _inner(aval: Any) -> Any:
    return getattr(aval, "inner_aval", aval)


def _retrace(fun: Callable[..., list[Any]], avals: Sequence[Any]) -> tuple[ClosedJaxpr, list]:
    """``fun`` traced to a jaxpr without constvars: (jaxpr, its consts as leading inputs)."""
    closed = trace_to_jaxpr(fun, list(avals))
    return ClosedJaxpr(pe.convert_constvars_jaxpr(closed.jaxpr), []), list(closed.consts)


def _refuse_ref_operands(prim: str, is_ref: Sequence[bool], allowed: range) -> None:
    if any(r for i, r in enumerate(is_ref) if i not in allowed):
        raise NotImplementedError(
            f"a mutable array reference may enter `{prim}` only as a value its body "
            "closes over, not as a carry or a scanned-over operand"
        )


def _scan_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    p = eqn.params
    nc, ncar = p["num_consts"], p["num_carry"]
    _refuse_ref_operands("scan", is_ref, range(nc))
    refs = [i for i in range(nc) if is_ref[i]]
    pure, _ = discharge.discharge_state(p["jaxpr"], [i in refs for i in range(len(values))])
    n_out = len(eqn.outvars)
    consts = [values[i] for i in range(nc) if not is_ref[i]]
    contents = [values[i] for i in refs]
    avals = [_inner(a) for a in pure.in_avals]
    const_avals = [avals[i] for i in range(nc) if not is_ref[i]]
    ref_avals = [avals[i] for i in refs]

    def body(*args: Any) -> list[Any]:
        k, r = len(consts), len(refs)
        cs, rv, rest = args[:k], args[k : k + r], args[k + r :]
        it_c, it_r = iter(cs), iter(rv)
        full = [next(it_r) if is_ref[i] else next(it_c) for i in range(nc)]
        outs = eval_jaxpr(pure.jaxpr, pure.consts, *full, *rest)
        return [*outs[n_out:], *outs[:n_out]]

    jaxpr, extra = _retrace(body, [*const_avals, *ref_avals, *avals[nc:]])
    n_in = len(extra) + len(values)
    outs = scan_p.bind(
        *extra,
        *consts,
        *contents,
        *values[nc:],
        **{
            **p,
            "jaxpr": jaxpr,
            "num_consts": len(extra) + len(consts),
            "num_carry": len(refs) + ncar,
            "linear": (False,) * n_in,
        },
    )
    updates: list[Any] = [None] * len(values)
    for j, i in enumerate(refs):
        updates[i] = outs[j]
    return outs[len(refs) :], updates


def _while_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    # References among the cond's and the body's consts (one reference may be in
    # both) become leading carries; each body and cond reads them from there.
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    _refuse_ref_operands("while_loop", is_ref, range(ncc + nbc))
    carry = values[ncc + nbc :]
    refs: list[Any] = []  # the distinct reference variables, in order
    for v, r in zip(eqn.invars[: ncc + nbc], is_ref):
        if r and v not in refs:
            refs.append(v)
    slot = {v: k for k, v in enumerate(refs)}
    contents = [values[eqn.invars.index(v)] for v in refs]
    n_carry = len(carry)

    def pure_part(closed: Any, lo: int, hi: int) -> tuple[Any, list, list]:
        """The discharged cond or body, with its non-reference consts and their avals."""
        n_in = len(closed.in_avals)
        must = [lo + i < hi and is_ref[lo + i] and lo > 0 for i in range(n_in)]
        pure, written = discharge.discharge_state(closed, must)
        if lo == 0 and written:
            raise NotImplementedError("a while_loop cond_fun may read references, not write them")
        consts = [values[i] for i in range(lo, hi) if not is_ref[i]]
        avals = [_inner(pure.in_avals[i - lo]) for i in range(lo, hi) if not is_ref[i]]
        return pure, consts, avals

    def call(pure: Any, lo: int, hi: int, cs: Sequence, rv: Sequence, rest: Sequence) -> list:
        it = iter(cs)
        full = [rv[slot[eqn.invars[i]]] if is_ref[i] else next(it) for i in range(lo, hi)]
        return eval_jaxpr(pure.jaxpr, pure.consts, *full, *rest)

    cond_pure, cconsts, cavals = pure_part(p["cond_jaxpr"], 0, ncc)
    body_pure, bconsts, bavals = pure_part(p["body_jaxpr"], ncc, ncc + nbc)
    body_refs = [eqn.invars[i] for i in range(ncc, ncc + nbc) if is_ref[i]]
    ref_avals = [_inner(v.aval) for v in refs]
    carry_avals = [_inner(a) for a in body_pure.in_avals[nbc:]]

    def cond(*args: Any) -> list[Any]:
        k, r = len(cconsts), len(refs)
        return call(cond_pure, 0, ncc, args[:k], args[k : k + r], args[k + r :])

    def body(*args: Any) -> list[Any]:
        k, r = len(bconsts), len(refs)
        rv = list(args[k : k + r])
        outs = call(body_pure, ncc, ncc + nbc, args[:k], rv, args[k + r :])
        for v, new in zip(body_refs, outs[n_carry:]):
            rv[slot[v]] = new
        return [*rv, *outs[:n_carry]]

    cj, cextra = _retrace(cond, [*cavals, *ref_avals, *carry_avals])
    bj, bextra = _retrace(body, [*bavals, *ref_avals, *carry_avals])
    outs = while_p.bind(
        *cextra,
        *cconsts,
        *bextra,
        *bconsts,
        *contents,
        *carry,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=len(cextra) + len(cconsts),
        body_nconsts=len(bextra) + len(bconsts),
    )
    updates: list[Any] = [None] * len(values)
    for i in range(ncc + nbc):
        if is_ref[i]:
            updates[i] = outs[slot[eqn.invars[i]]]
    return outs[len(refs) :], updates


def _cond_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    index, ops = values[0], values[1:]
    op_is_ref = is_ref[1:]
    refs = [i for i, r in enumerate(op_is_ref) if r]
    branches = []
    for br in eqn.params["branches"]:
        pure, _ = discharge.discharge_state(br, op_is_ref)
        if pure.consts:
            raise NotImplementedError("discharging a cond branch that stages constants")
        branches.append(pure)
    outs = cond_p.bind(index, *ops, **{**eqn.params, "branches": tuple(branches)})
    n_out = len(eqn.outvars)
    updates: list[Any] = [None] * len(values)
    for j, i in enumerate(refs):
        updates[1 + i] = outs[n_out + j]
    return outs[:n_out], updates


discharge.discharge_rules[scan_p] = _scan_discharge
discharge.discharge_rules[while_p] = _while_discharge
discharge.discharge_rules[cond_p] = _cond_discharge
scan_p.has_body = while_p.has_body = cond_p.has_body = True
