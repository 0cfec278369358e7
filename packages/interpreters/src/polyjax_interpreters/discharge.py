"""Discharging state: turning a jaxpr that uses mutable references into a pure one.

XLA programs are functional, so a jaxpr that creates, reads and writes
references (`polyjax_core.state`) is rewritten before it lowers. The
rewriting, *discharge*, evaluates the jaxpr symbolically while keeping, for
each reference, the array it currently holds:

    b:Ref{f32[3]} = new_ref a        b holds a
    c:f32[3] <- b[...]               c = a
    d:f32[3] = add c 1.0             (copied)
    b[...] <- d                      b holds d
    e:f32[3] = freeze b              e = d

A reference that is an *input* of the jaxpr becomes an ordinary input (its
contents), and if the program writes it, its final contents become an extra
output: the caller passes the contents in and stores what comes back
(`RefCall`). Loops and branches whose bodies use references have discharge
rules of their own (the body is discharged, the references become carries);
each stateful or higher-order primitive registers its rule in
`discharge_rules`:

    rule(eqn, values, is_ref) -> (outputs, new_contents)

where `values[i]` is the value of operand `i` (for a reference, what it holds),
and `new_contents[i]` is what reference operand `i` holds afterwards (None when
unchanged). A primitive without a rule is copied as it is when it touches no
reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, jaxprs_in_params
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.rules import RuleTable
from polyjax_core.state import Ref, RefEffect, is_ref_aval
from polyjax_core.tracing import Tracer
from polyjax_interpreters.array import Array, _copy_array

__all__ = [
    "RefCall",
    "bind_discharged",
    "body_has_state",
    "call_rule",
    "check_distinct_refs",
    "compile_with_refs",
    "discharge_rules",
    "discharge_state",
    "has_state",
    "hoist_ref_consts",
    "check_no_returned_refs",
    "returned_ref_error",
    "run_discharged",
]

discharge_rules = RuleTable("state discharge")


def has_state(closed: ClosedJaxpr | Jaxpr) -> bool:
    """Whether a jaxpr uses references: reference inputs or reference effects."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    return any(isinstance(e, RefEffect) for e in jaxpr.effects) or any(
        is_ref_aval(v.aval) for v in (*jaxpr.invars, *jaxpr.constvars)
    )


def body_has_state(primitive: Any, params: dict[str, Any]) -> bool:
    """Whether a higher-order primitive with a discharge rule has a body using references."""
    return primitive in discharge_rules and any(has_state(j) for j in jaxprs_in_params(params))


def bind_discharged(primitive: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Applies a higher-order primitive whose body uses references, discharged first.

    What transformations (jvp, vmap) do with a loop, branch or jit whose body
    reads or writes references: the references' contents are read, the
    discharged (pure) primitive is bound on them under the current trace, and
    the new contents are written back, so each transformation only ever sees
    pure bodies and the reference primitives themselves.
    """
    avals = [get_aval(a) for a in args]
    out_avals, effects = primitive.abstract_eval(*avals, **params)
    outs_list = out_avals if primitive.multiple_results else [out_avals]
    eqn = JaxprEqn([Var(a) for a in avals], [Var(a) for a in outs_list], primitive, params, effects)
    is_ref = [is_ref_aval(a) for a in avals]
    values = [a[...] if r else a for a, r in zip(args, is_ref)]
    outs, updates = discharge_rules[primitive](eqn, values, is_ref)
    for a, new in zip(args, updates):
        if new is not None:
            a[...] = new
    return outs if primitive.multiple_results else outs[0]


def _contents_aval(aval: Any) -> Any:
    return aval.inner_aval if is_ref_aval(aval) else aval


def run_discharged(
    jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """Evaluates `jaxpr` with every reference replaced by the array it holds.

    Called under a tracing trace (`discharge_state`) or in a rule that
    re-binds a body. ``args`` give, for reference inputs, their contents.

    Returns:
      ``(outputs, final)``: the outputs, and per input what it holds at the end
      (the argument itself for an input that is not a reference or not written).
    """
    env: dict[Any, Any] = {}

    def read(x: Any) -> Any:
        return x.val if isinstance(x, Literal) else env[x]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        values = [read(x) for x in eqn.invars]
        is_ref = [not isinstance(x, Literal) and is_ref_aval(x.aval) for x in eqn.invars]
        rule = discharge_rules.get(eqn.primitive)
        if rule is not None:
            outs, updates = rule(eqn, values, is_ref)
            for x, new in zip(eqn.invars, updates):
                if new is not None:
                    env[x] = new
        elif any(is_ref) or any(isinstance(e, RefEffect) for e in eqn.effects):
            raise NotImplementedError(
                f"Mutable array references are not supported through the primitive "
                f"'{eqn.primitive}' (it has no state discharge rule); read a reference's "
                "value with `ref[...]` before computing with it."
            )
        else:
            out = eqn.primitive.bind(*values, **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    return [read(x) for x in jaxpr.outvars], [env[v] for v in jaxpr.invars]


def discharge_state(
    closed: ClosedJaxpr, must_return: Sequence[bool] | None = None
) -> tuple[ClosedJaxpr, tuple[int, ...]]:
    """The pure version of `closed`: reference inputs become their contents.

    Args:
      closed: a jaxpr whose inputs may be references (its consts may not).
      must_return: per input, return its final contents even if unwritten
        (a loop carry needs the same outputs every iteration).

    Returns:
      ``(pure, written)``: ``pure`` takes the same inputs (a reference's
      contents in its place) and returns the outputs followed by the final
      contents of the reference inputs listed in ``written``.
    """
    jaxpr = closed.jaxpr
    in_avals = [_contents_aval(v.aval) for v in jaxpr.invars]
    written_box: list[tuple[int, ...]] = []

    def fun(*args: Any) -> list[Any]:
        outs, final = run_discharged(jaxpr, closed.consts, args)
        written = tuple(
            i
            for i, (v, a, f) in enumerate(zip(jaxpr.invars, args, final))
            if is_ref_aval(v.aval) and (f is not a or (must_return and must_return[i]))
        )
        written_box.append(written)
        return [*outs, *(final[i] for i in written)]

    pure = trace_to_jaxpr(fun, in_avals, jaxpr.debug_info)
    return pure, written_box[0]


def call_rule(
    primitive: Any, adjust: Callable[[dict[str, Any], int], dict[str, Any]] | None = None
) -> Callable[..., tuple[list, list]]:
    """The discharge rule of a call-like primitive (``jit``, ``checkpoint``): its
    ``jaxpr`` param takes the operands and gives the outputs. The body is
    discharged; written references come back as extra outputs. ``adjust(params,
    n_written)`` fixes other params that count outputs."""

    def rule(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
        body, written = discharge_state(eqn.params["jaxpr"])
        params = dict(eqn.params, jaxpr=body)
        if adjust is not None:
            params = adjust(params, len(written))
        outs = primitive.bind(*values, **params)
        n_out = len(eqn.outvars)
        updates: list[Any] = [None] * len(values)
        for j, i in enumerate(written):
            updates[i] = outs[n_out + j]
        return outs[:n_out], updates

    return rule


def hoist_ref_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Ref]]:
    """Turns consts that are concrete `Ref`s into leading inputs: (jaxpr, those refs)."""
    is_ref = [isinstance(c, Ref) for c in closed.consts]
    if not any(is_ref):
        return closed, []
    jaxpr = closed.jaxpr
    kept = [c for c, r in zip(closed.consts, is_ref) if not r]
    refs = [c for c, r in zip(closed.consts, is_ref) if r]
    kept_vars = [v for v, r in zip(jaxpr.constvars, is_ref) if not r]
    ref_vars = [v for v, r in zip(jaxpr.constvars, is_ref) if r]
    body = jaxpr.replace(constvars=kept_vars, invars=[*ref_vars, *jaxpr.invars])
    return ClosedJaxpr(body, kept), refs


def returned_ref_error(fun: str | None, traced_for: str, aval: Any, created: str | None = None):
    """JAX's error for a traced function that returns a reference."""
    where = f"\n\nThe returned mutable array was created on line {created}." if created else ""
    return ValueError(
        f"function {fun or '<unknown>'} traced for {traced_for} returned a mutable array "
        f"reference of type {aval}, but mutable array references cannot be returned.{where}"
    )


def check_no_returned_refs(outs: Sequence[Any], debug: Any, traced_for: str = "jit") -> None:
    """Raises `returned_ref_error` if one of the traced outputs ``outs`` is a reference."""
    for x in outs:
        if isinstance(x, Tracer) and is_ref_aval(x.aval):
            fun = debug.func_src_info if debug is not None else None
            raise returned_ref_error(fun, traced_for, x.aval, x._created_at())


def check_distinct_refs(args: Sequence[Any], avals: Sequence[Any], debug: Any) -> None:
    """JAX's error when one reference is passed twice to a traced function."""
    seen: dict[int, int] = {}
    for i, (a, aval) in enumerate(zip(args, avals)):
        if is_ref_aval(aval):
            j = seen.setdefault(id(a), i)
            if j != i:
                names = debug.safe_arg_names(len(args))
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {debug.func_src_info} for {debug.traced_for} "
                    f"the mutable array reference of type {aval} appeared at both {names[j]} "
                    f"and {names[i]}."
                )


class RefCall:
    """Runs a compiled pure program on behalf of a program with reference inputs.

    ``call(args)`` passes each `Ref` argument's contents, runs, stores the
    final contents of the written references back into them, and returns the
    program's own outputs. Other attributes are the executable's.

    Args:
      exe: the executable of the discharged program.
      ref_consts: references the program closed over (passed first).
      written: indices, among ``ref_consts + args``, of the references written.
      n_out: how many outputs the original program has.
    """

    def __init__(self, exe: Any, ref_consts: Sequence[Ref], written: Sequence[int], n_out: int):
        self.exe = exe
        self.ref_consts = list(ref_consts)
        self.written = tuple(written)
        self.n_out = n_out
        self.host_scalars: tuple[int, ...] = ()
        self.out_avals = tuple(exe.out_avals[:n_out])

    def __getattr__(self, name: str) -> Any:
        return getattr(self.exe, name)

    def call(self, args: Sequence[Any]) -> list[Any]:
        full = [*self.ref_consts, *args]
        values = [a._value if type(a) is Ref else a for a in full]
        for i in self.written:
            # A written reference's buffer is donated: one that may be shared (the
            # contents `freeze` returned) is copied first.
            if not full[i]._owned and type(values[i]) is Array:
                values[i] = _copy_array(values[i])
        outs = self.exe.call(values)
        for j, i in enumerate(self.written):
            full[i]._value = outs[self.n_out + j]
            full[i]._owned = True
        return outs[: self.n_out]

    def __call__(self, *args: Any) -> list[Any]:
        return self.call(args)


def compile_with_refs(
    closed: ClosedJaxpr, compile_pure: Callable[[ClosedJaxpr, tuple[bool, ...]], Any]
) -> RefCall:
    """Discharges `closed` (reference inputs or closed-over `Ref`s), compiles the
    pure program with ``compile_pure(pure, donated)`` (the written references'
    buffers donated: updated in place where the backend can) and wraps it in a
    `RefCall`."""
    hoisted, ref_consts = hoist_ref_consts(closed)
    pure, written = discharge_state(hoisted)
    donated = tuple(i in written for i in range(len(pure.in_avals)))
    return RefCall(compile_pure(pure, donated), ref_consts, written, len(closed.out_avals))
