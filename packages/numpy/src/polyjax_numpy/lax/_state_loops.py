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
    p = eqn.params
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    _refuse_ref_operands("while_loop", is_ref, range(ncc, ncc + nbc))
    cconsts, bvals, carry = values[:ncc], values[ncc : ncc + nbc], values[ncc + nbc :]
    b_is_ref = is_ref[ncc : ncc + nbc]
    refs = [i for i in range(nbc) if b_is_ref[i]]
    n_body_in = nbc + len(carry)
    pure, _ = discharge.discharge_state(p["body_jaxpr"], [i in refs for i in range(n_body_in)])
    cond_pure, _ = discharge.discharge_state(p["cond_jaxpr"])
    bconsts = [bvals[i] for i in range(nbc) if not b_is_ref[i]]
    contents = [bvals[i] for i in refs]
    avals = [_inner(a) for a in pure.in_avals]
    n_carry = len(carry)

    def body(*args: Any) -> list[Any]:
        k, r = len(bconsts), len(refs)
        cs, rv, rest = args[:k], args[k : k + r], args[k + r :]
        it_c, it_r = iter(cs), iter(rv)
        full = [next(it_r) if b_is_ref[i] else next(it_c) for i in range(nbc)]
        outs = eval_jaxpr(pure.jaxpr, pure.consts, *full, *rest)
        return [*outs[n_carry:], *outs[:n_carry]]

    def cond(*args: Any) -> list[Any]:
        cs, rest = args[:ncc], args[ncc + len(refs) :]
        return eval_jaxpr(cond_pure.jaxpr, cond_pure.consts, *cs, *rest)

    bj, bextra = _retrace(
        body,
        [
            *(avals[i] for i in range(nbc) if not b_is_ref[i]),
            *(avals[i] for i in refs),
            *avals[nbc:],
        ],
    )
    cj, cextra = _retrace(
        cond, [*(_inner(a) for a in cond_pure.in_avals[:ncc]), *(avals[i] for i in refs),
               *avals[nbc:]]
    )  # fmt: skip
    outs = while_p.bind(
        *cextra,
        *cconsts,
        *bextra,
        *bconsts,
        *contents,
        *carry,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=len(cextra) + ncc,
        body_nconsts=len(bextra) + len(bconsts),
    )
    updates: list[Any] = [None] * len(values)
    for j, i in enumerate(refs):
        updates[ncc + i] = outs[j]
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
