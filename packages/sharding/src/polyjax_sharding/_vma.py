"""Which manual axes each value of a per-device program varies over (`check_vma`).

In a `shard_map` body, an input varies over the mesh axes its `in_specs`
entry names (each device holds a different block); everything else about
it is the same on every device. Operations propagate variation: a result
varies over every axis any of its operands varies over. Collectives change
it: `psum`/`pmax`/`pmin` over axes make the result the same across them
(invariant), while `axis_index`, `all_gather`, `psum_scatter`, `all_to_all`
and `ppermute` make it vary over theirs.

An output whose `out_specs` omits an axis says "this value is the same
across that axis" (so one copy is the global value). `check_outputs` raises
when the analysis finds that an output may vary over such an axis, as JAX's
`check_vma=True` does.

The analysis walks sub-jaxprs through the generic visitor: `cond` joins its
branches (and a varying predicate makes every output vary), `scan` and
`while` iterate their carries to a fixpoint, call-like equations (jit,
checkpoint, custom derivatives) map inputs to the body's inputs, and any
other higher-order equation conservatively varies over everything its
operands and its bodies' collectives mention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, Literal, jaxprs_in_params

__all__ = ["check_outputs", "output_vmas"]

Vma = frozenset

_REDUCING = {"psum", "pmax", "pmin"}
_VARYING = {"all_gather", "reduce_scatter", "all_to_all", "ppermute", "axis_index"}
_PER_OPERAND = {"pvary"}  # each output varies like its own operand, plus the axes


def _axes(eqn: Any) -> frozenset:
    p = eqn.params
    names = p.get("axes", p.get("axis_name", ()))
    return frozenset(names if isinstance(names, tuple | list) else (names,))


def _open(j: Jaxpr | ClosedJaxpr) -> Jaxpr:
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def _mentioned(jaxpr: Jaxpr) -> frozenset:
    """Every axis a collective in ``jaxpr`` (at any depth) names."""
    out: frozenset = frozenset()
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _REDUCING | _VARYING:
            out |= _axes(eqn)
        for sub in jaxprs_in_params(eqn.params):
            out |= _mentioned(_open(sub))
    return out


def output_vmas(jaxpr: Jaxpr, in_vmas: Sequence[frozenset]) -> list[frozenset]:
    """The axes each output of ``jaxpr`` may vary over, given its inputs'."""
    env: dict[Any, frozenset] = dict(zip(jaxpr.invars, in_vmas))
    for v in jaxpr.constvars:
        env[v] = frozenset()

    def read(x: Any) -> frozenset:
        return frozenset() if isinstance(x, Literal) else env.get(x, frozenset())

    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.invars]
        outs = _eqn_vmas(eqn, ins)
        for v, m in zip(eqn.outvars, outs):
            env[v] = m
    return [read(x) for x in jaxpr.outvars]


def _union(ms: Sequence[frozenset]) -> frozenset:
    return frozenset().union(*ms) if ms else frozenset()


def _eqn_vmas(eqn: Any, ins: list[frozenset]) -> list[frozenset]:
    name = eqn.primitive.name
    n_out = len(eqn.outvars)
    if name in _REDUCING:
        return [m - _axes(eqn) for m in ins]
    if name in _PER_OPERAND:
        return [m | _axes(eqn) for m in ins]
    if name in _VARYING:
        return [_union(ins) | _axes(eqn)] * n_out
    subs = list(jaxprs_in_params(eqn.params))
    if not subs:
        return [_union(ins)] * n_out
    if name == "cond":
        pred, ops = ins[0], ins[1:]
        outs = [_union(x) for x in zip(*(output_vmas(_open(b), ops) for b in subs))]
        return [m | pred for m in outs] if outs else []
    if name == "scan":
        return _scan_vmas(eqn, ins)
    if name == "while":
        return _while_vmas(eqn, ins)
    if len(subs) >= 1 and all(
        len(_open(s).invars) == len(ins) and len(_open(s).outvars) == n_out for s in subs
    ):
        outs = [_union(x) for x in zip(*(output_vmas(_open(s), ins) for s in subs))]
        return outs
    extra = _union([_mentioned(_open(s)) for s in subs])
    return [_union(ins) | extra] * n_out


def _scan_vmas(eqn: Any, ins: list[frozenset]) -> list[frozenset]:
    body = _open(eqn.params["jaxpr"])
    nc, ncar = eqn.params["num_consts"], eqn.params["num_carry"]
    ins = list(ins)
    while True:
        outs = output_vmas(body, ins)
        carry = [a | b for a, b in zip(ins[nc : nc + ncar], outs[:ncar])]
        if carry == ins[nc : nc + ncar]:
            return outs
        ins[nc : nc + ncar] = carry


def _while_vmas(eqn: Any, ins: list[frozenset]) -> list[frozenset]:
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, carry = ins[:cn], ins[cn : cn + bn], list(ins[cn + bn :])
    while True:
        (pred,) = output_vmas(_open(p["cond_jaxpr"]), [*cconsts, *carry])
        outs = output_vmas(_open(p["body_jaxpr"]), [*bconsts, *carry])
        new = [a | b | pred for a, b in zip(carry, outs)]
        if new == carry:
            return carry
        carry = new


def check_outputs(
    jaxpr: Jaxpr,
    in_vmas: Sequence[frozenset],
    out_specs: Sequence[Any],
    mesh: Any,
    manual_axes: frozenset,
    fun_name: str,
) -> None:
    """Raises JAX's `ValueError` if an output may vary over an axis its spec omits."""
    for vma, spec in zip(output_vmas(jaxpr, in_vmas), out_specs):
        named = {a for entry in spec for a in _entry_axes(entry)}
        bad = (vma & manual_axes) - named
        if not bad:
            continue
        names = [n for n in mesh.axis_names if n in manual_axes]
        shape = tuple(mesh.shape[n] for n in mesh.axis_names)
        if named and vma >= manual_axes:
            missing = [n for n in names if n in bad]
            which = (
                f"mesh axis {missing[0]!r}" if len(missing) == 1 else f"mesh axes {tuple(missing)}"
            )
            detail = (
                f"out_specs is {spec} which implies that the corresponding output value is "
                f"replicated across {which}, but could not infer replication over any axes"
            )
        else:
            detail = (
                f"out_specs is {spec} which implies that the corresponding output value is only "
                f"varying across mesh axes {_set_str(named & manual_axes, names)} and not "
                f"{_set_str(bad, names)}, but it was inferred to be possibly varying over "
                f"{_set_str(vma & manual_axes, names)}"
            )
        raise ValueError(
            f"shard_map applied to the function '{fun_name}' was given out_specs which "
            "require replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {shape} with corresponding axis names "
            f"{tuple(mesh.axis_names)}.\n\n"
            f"{detail}\n\n"
            "Check if these output values are meant to be replicated over those mesh axes. "
            "If not, consider revising the corresponding out_specs entries. If so, consider "
            "disabling the check by passing the check_vma=False argument to `jax.shard_map`."
        )


def _entry_axes(entry: Any) -> tuple:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _set_str(axes: Any, order: Sequence[Any]) -> str:
    return "{" + ",".join(str(n) for n in order if n in axes) + "}"
