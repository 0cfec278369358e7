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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad, mlir
from polyjax_numpy.lax import _elementwise as _ew

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
