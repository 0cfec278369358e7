"""Partial evaluation: splitting a jaxpr into a known part and an unknown part.

Given a jaxpr and which of its inputs are *known* now (and which will only be
known later), partial evaluation splits it in two:

    jaxpr_known   : known inputs          -> known outputs, residuals
    jaxpr_unknown : residuals, unknown inputs -> unknown outputs

An equation is unknown as soon as one of its inputs is unknown; the known
values that unknown equations read are the *residuals*, computed by the known
part and handed over. This is the machinery under `linearize` and `vjp`: the
jvp of a function, with primal inputs known and tangent inputs unknown, splits
into the primal computation (run now) and a linear function of the tangents
(kept for later, transposed by `vjp`).

Higher-order primitives split their bodies instead of going wholly unknown:
they register a rule in `partial_eval_jaxpr_custom_rules`,

    rule(unknowns, instantiate, eqn) -> (known_eqn | None, unknown_eqn | None,
                                         out_unknowns, residuals)

where `unknowns` has one bool per input of `eqn`, `instantiate` one bool per
output (outputs the caller wants unknown even if they could be known),
`known_eqn` computes the known outputs of `eqn` plus residual variables,
`unknown_eqn` reads the residuals and computes the unknown outputs, and
`out_unknowns` says which outputs of `eqn` are unknown. The `jit` rule lives
next to `jit_p`, the `checkpoint` rule in `remat.py`.

Residuals are deduplicated (a value read by several unknown equations is
handed over once), literals stay inline, and dead-code elimination prunes
both the residuals nobody reads and the equations nobody needs (through
`polyjax_core.dce`, whose `dce_rules` the higher-order primitives extend).

`partial_eval_jaxpr_custom` is the variant `remat` uses: the unknown part
also receives the known inputs, and known equations that a *policy* does not
allow saving are recomputed by the unknown part instead of becoming
residuals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core.caching import weakref_lru_cache
from polyjax_core.dce import dce_jaxpr, dce_rules
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.lists import partition_list
from polyjax_core.rules import RuleTable
from polyjax_core.tracing import Tracer

__all__ = [
    "PartialEvalRule",
    "convert_constvars_jaxpr",
    "dce_closed_jaxpr",
    "dce_jaxpr",
    "dce_rules",
    "hoist_tracer_consts",
    "partial_eval_jaxpr_custom",
    "partial_eval_jaxpr_custom_rules",
    "partial_eval_jaxpr_nounits",
]

PartialEvalRule = Callable[
    [list[bool], list[bool], JaxprEqn],
    tuple[JaxprEqn | None, JaxprEqn | None, list[bool], list[Var]],
]

# Rules of higher-order primitives. A primitive without one goes wholly
# unknown when any of its inputs is unknown (`.get` never raises).
partial_eval_jaxpr_custom_rules: RuleTable = RuleTable("partial evaluation")

# A policy of `partial_eval_jaxpr_custom`: may this (known) equation's outputs
# be saved as residuals? If not, the unknown part recomputes it.
Saveable = Callable[[JaxprEqn], bool]


def _bools(flags: bool | Sequence[bool], n: int, what: str) -> tuple[bool, ...]:
    if isinstance(flags, bool):
        return (flags,) * n
    flags = tuple(bool(f) for f in flags)
    if len(flags) != n:
        raise ValueError(f"partial_eval: {len(flags)} {what} flags for {n} values")
    return flags


# ---------------------------------------------------------------------------
# The split


class _Split:
    """The result of one walk over a jaxpr's equations (before DCE)."""

    __slots__ = ("known_eqns", "staged_eqns", "unknown", "out_unknowns", "staged_outvars")

    def __init__(self) -> None:
        self.known_eqns: list[JaxprEqn] = []
        self.staged_eqns: list[JaxprEqn] = []
        self.unknown: set[Var] = set()
        self.out_unknowns: list[bool] = []
        self.staged_outvars: list[Any] = []


def _walk(
    jaxpr: Jaxpr,
    in_unknowns: Sequence[bool],
    instantiate: Sequence[bool],
    saveable: Saveable | None,
) -> _Split:
    """Sorts the equations into known and staged (unknown) ones.

    With `saveable` (the remat mode) known equations it rejects are also
    copied to the staged side, to be recomputed there; DCE later drops the
    copies nobody needs.
    """
    split = _Split()
    unknown = split.unknown
    unknown.update(v for v, u in zip(jaxpr.invars, in_unknowns) if u)
    known_eqns, staged_eqns = split.known_eqns, split.staged_eqns
    rules = partial_eval_jaxpr_custom_rules
    for eqn in jaxpr.eqns:
        unks_in = [type(x) is not Literal and x in unknown for x in eqn.invars]
        if not any(unks_in):
            known_eqns.append(eqn)
            if saveable is not None and not eqn.effects and not saveable(eqn):
                staged_eqns.append(eqn)  # recomputed, if the unknown side needs it
            continue
        rule = rules.get(eqn.primitive)
        if rule is None:
            staged_eqns.append(eqn)
            unknown.update(eqn.outvars)
            continue
        n_out = len(eqn.outvars)
        known_eqn, staged_eqn, out_unks, _ = rule(unks_in, [False] * n_out, eqn)
        if known_eqn is not None:
            known_eqns.append(known_eqn)
            if saveable is not None and not known_eqn.effects and not saveable(eqn):
                # The policy forbids saving what this equation computes: the
                # staged side recomputes the known part too, so the residuals
                # between the two parts need not cross over. (Recomputing the
                # whole equation instead would leave known values computed by
                # an equation with unknown inputs, which transposition cannot
                # tell from linear ones.)
                staged_eqns.append(known_eqn)
        if staged_eqn is not None:
            staged_eqns.append(staged_eqn)
        unknown.update(v for v, u in zip(eqn.outvars, out_unks) if u)
    for x, inst in zip(jaxpr.outvars, instantiate):
        unk = type(x) is not Literal and x in unknown
        split.out_unknowns.append(unk or inst)
        if unk or inst:
            split.staged_outvars.append(x)
    return split


def _free_vars(eqns: Sequence[JaxprEqn], outvars: Sequence[Any], bound: set[Var]) -> list[Var]:
    """Vars that `eqns`/`outvars` read without binding them (or finding them in `bound`), in
    order of first use, each once."""
    defined = set(bound)
    free: dict[Var, None] = {}
    for eqn in eqns:
        for x in eqn.invars:
            if not isinstance(x, Literal) and x not in defined and x not in free:
                free[x] = None
        defined.update(eqn.outvars)
    for x in outvars:
        if type(x) is not Literal and x not in defined and x not in free:
            free[x] = None
    return list(free)


def _prune_constvars(jaxpr: Jaxpr, consts: Sequence[Any]) -> tuple[Jaxpr, list[Any]]:
    """Drops the constvars that no equation or output reads."""
    used: set[Any] = set()
    for eqn in jaxpr.eqns:
        used.update(eqn.invars)
    used.update(jaxpr.outvars)
    keep = [i for i, v in enumerate(jaxpr.constvars) if v in used]
    if len(keep) == len(jaxpr.constvars):
        return jaxpr, list(consts)
    return (
        jaxpr.replace(constvars=[jaxpr.constvars[i] for i in keep]),
        [consts[i] for i in keep],
    )


# ---------------------------------------------------------------------------
# partial_eval_jaxpr_nounits


def partial_eval_jaxpr_nounits(
    jaxpr: ClosedJaxpr,
    unknowns: Sequence[bool],
    instantiate: bool | Sequence[bool],
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], list[Any]]:
    """Splits `jaxpr` into the part computable from its known inputs and the rest.

    Args:
      jaxpr: the `ClosedJaxpr` to split. Its consts count as known.
      unknowns: one bool per input: True if the input is unknown. An input
        flagged False is forced known even if it could be anything.
      instantiate: True (or one bool per output) to force outputs unknown:
        such an output is produced by the unknown jaxpr even when it is
        known (handed over as a residual, or written as a literal).

    Returns:
      `(jaxpr_known, jaxpr_unknown, out_unknowns, res_avals)`:
      `jaxpr_known` takes the known inputs (in order) and returns the known
      outputs followed by the residuals; `jaxpr_unknown` takes the residuals
      followed by the unknown inputs and returns the unknown outputs;
      `out_unknowns` has one bool per output of `jaxpr`; `res_avals` are the
      residuals' types. Both jaxprs are dead-code eliminated: residuals the
      unknown part does not read are not computed.

    Results are cached, keyed weakly on `jaxpr`: splitting the same jaxpr the
    same way twice returns the same objects.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax_core.make_jaxpr import make_jaxpr
      >>> closed = make_jaxpr(lambda x, y: jnp.sin(x) * y)(1.0, 2.0)
      >>> known, unknown, out_uk, res = partial_eval_jaxpr_nounits(
      ...     closed, [False, True], instantiate=False)
      >>> out_uk, len(res)   # sin(x) is known, the product is not
      ([True], 1)
    """
    n_in, n_out = len(jaxpr.jaxpr.invars), len(jaxpr.jaxpr.outvars)
    unknowns_t = _bools(unknowns, n_in, "unknowns")
    instantiate_t = _bools(instantiate, n_out, "instantiate")
    known, unknown, out_uk, res_avals = _partial_eval_jaxpr_nounits(
        jaxpr, unknowns_t, instantiate_t
    )
    return known, unknown, list(out_uk), list(res_avals)


@weakref_lru_cache(maxsize=4096)
def _partial_eval_jaxpr_nounits(
    closed: ClosedJaxpr, unknowns: tuple[bool, ...], instantiate: tuple[bool, ...]
) -> tuple[ClosedJaxpr, ClosedJaxpr, tuple[bool, ...], tuple[Any, ...]]:
    jaxpr = closed.jaxpr
    split = _walk(jaxpr, unknowns, instantiate, None)
    known_ins, unknown_ins = partition_list(unknowns, jaxpr.invars)

    # The unknown side: its free (known) vars are the residual candidates; DCE
    # keeps those that live equations read.
    candidates = _free_vars(split.staged_eqns, split.staged_outvars, set(unknown_ins))
    staged = Jaxpr([], [*candidates, *unknown_ins], split.staged_outvars, split.staged_eqns)
    staged, used_ins = dce_jaxpr(
        staged,
        [True] * len(split.staged_outvars),
        [False] * len(candidates) + [True] * len(unknown_ins),
    )
    residuals = partition_list(used_ins[: len(candidates)], candidates)[1]

    # The known side: known outputs, then the residuals. Drop unknown outvars.
    known_outs = partition_list(split.out_unknowns, jaxpr.outvars)[0]
    known = Jaxpr(jaxpr.constvars, known_ins, [*known_outs, *residuals], split.known_eqns)
    known, _ = dce_jaxpr(known, [True] * len(known.outvars), instantiate=True)
    known, known_consts = _prune_constvars(known, closed.consts)
    return (
        ClosedJaxpr(known, known_consts),
        ClosedJaxpr(staged, []),
        tuple(split.out_unknowns),
        tuple(v.aval for v in residuals),
    )


# ---------------------------------------------------------------------------
# partial_eval_jaxpr_custom: the remat flavour


def partial_eval_jaxpr_custom(
    jaxpr: Jaxpr,
    in_unknowns: Sequence[bool],
    ensure_out_unknowns: bool | Sequence[bool],
    saveable: Saveable,
) -> tuple[Jaxpr, Jaxpr, list[bool], list[Var], list[bool]]:
    """Splits `jaxpr` where the unknown part may recompute known values.

    Unlike `partial_eval_jaxpr_nounits`, the unknown part receives the known
    inputs as well, and a known equation whose outputs `saveable` rejects is
    recomputed by the unknown part instead of handing its outputs over as
    residuals. This is how `checkpoint` trades memory for compute.

    Args:
      jaxpr: an open jaxpr; its constvars count as known (and stay constvars
        of the known jaxpr; the unknown part reads them as residuals).
      in_unknowns: one bool per input.
      ensure_out_unknowns: outputs to force unknown (bool or one per output).
      saveable: `saveable(eqn) -> bool` for known equations: may its outputs be
        residuals?

    Returns:
      `(jaxpr_known, jaxpr_staged, out_unknowns, residuals, staged_known_ins)`:
      `jaxpr_known` (same constvars) takes the known inputs and returns the
      known outputs followed by the residuals; `jaxpr_staged` takes the
      residuals, then the known inputs flagged in `staged_known_ins`, then the
      unknown inputs, and returns the unknown outputs; `residuals` are the
      residual variables (outputs of `jaxpr_known`, inputs of `jaxpr_staged`).
    """
    n_in, n_out = len(jaxpr.invars), len(jaxpr.outvars)
    in_unknowns = _bools(in_unknowns, n_in, "unknowns")
    ensure = _bools(ensure_out_unknowns, n_out, "instantiate")
    split = _walk(jaxpr, in_unknowns, ensure, saveable)
    known_ins, unknown_ins = partition_list(in_unknowns, jaxpr.invars)

    candidates = _free_vars(
        split.staged_eqns, split.staged_outvars, set(unknown_ins) | set(known_ins)
    )
    staged = Jaxpr(
        [], [*candidates, *known_ins, *unknown_ins], split.staged_outvars, split.staged_eqns
    )
    staged, used_ins = dce_jaxpr(
        staged,
        [True] * len(split.staged_outvars),
        [False] * (len(candidates) + len(known_ins)) + [True] * len(unknown_ins),
    )
    residuals = partition_list(used_ins[: len(candidates)], candidates)[1]
    staged_known_ins = list(used_ins[len(candidates) : len(candidates) + len(known_ins)])

    known_outs = partition_list(split.out_unknowns, jaxpr.outvars)[0]
    known = Jaxpr(jaxpr.constvars, known_ins, [*known_outs, *residuals], split.known_eqns)
    known, _ = dce_jaxpr(known, [True] * len(known.outvars), instantiate=True)
    return known, staged, list(split.out_unknowns), residuals, staged_known_ins


# ---------------------------------------------------------------------------
# DCE of closed jaxprs


def dce_closed_jaxpr(
    closed: ClosedJaxpr,
    used_outputs: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[ClosedJaxpr, list[bool]]:
    """`dce_jaxpr` for a `ClosedJaxpr`, also dropping the consts nobody reads.

    Returns:
      `(new_closed, used_inputs)`.
    """
    n_in, n_out = len(closed.jaxpr.invars), len(closed.jaxpr.outvars)
    new, used_inputs = _dce_closed_jaxpr(
        closed,
        _bools(used_outputs, n_out, "used_outputs"),
        _bools(instantiate, n_in, "instantiate"),
    )
    return new, list(used_inputs)


@weakref_lru_cache(maxsize=4096)
def _dce_closed_jaxpr(
    closed: ClosedJaxpr, used_outputs: tuple[bool, ...], instantiate: tuple[bool, ...]
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    # Cached, and the same object back when nothing is removed, so that caches
    # keyed on the jaxpr (compilation, partial evaluation) keep hitting.
    jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, used_outputs, instantiate)
    unchanged = (
        all(used_outputs)
        and all(used_inputs)
        and len(jaxpr.eqns) == len(closed.jaxpr.eqns)
        and all(a is b for a, b in zip(jaxpr.eqns, closed.jaxpr.eqns))
    )
    if unchanged:
        return closed, tuple(used_inputs)
    jaxpr, consts = _prune_constvars(jaxpr, closed.consts)
    return ClosedJaxpr(jaxpr, consts), tuple(used_inputs)


def hoist_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turns the constvars holding tracers into leading invars: (jaxpr, those tracers).

    A body traced under an enclosing transformation may close over that
    transformation's tracers; as explicit inputs, the enclosing trace sees them.
    Concrete consts stay consts; with no tracer among them, `closed` is returned.
    """
    is_tracer = [isinstance(c, Tracer) for c in closed.consts]
    if not any(is_tracer):
        return closed, []
    jaxpr = closed.jaxpr
    kept, hoisted = partition_list(is_tracer, closed.consts)
    kept_vars, hoisted_vars = partition_list(is_tracer, jaxpr.constvars)
    body = jaxpr.replace(constvars=kept_vars, invars=[*hoisted_vars, *jaxpr.invars])
    return ClosedJaxpr(body, kept), hoisted


def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """The same jaxpr with its constvars turned into leading invars (and no constvars).

    Higher-order primitives bind their body this way, passing its consts as
    ordinary arguments, so that consts which are tracers of an enclosing
    transformation are seen by it.
    """
    return jaxpr.replace(constvars=[], invars=[*jaxpr.constvars, *jaxpr.invars])
