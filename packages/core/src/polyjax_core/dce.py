"""Dead-code elimination of jaxprs.

Walking the equations backwards from the outputs that are used, an equation
survives if one of its outputs is live or it has effects. The jaxprs held in a
surviving equation's params are cleaned the same way (all their outputs
used), through the generic sub-jaxpr visitor, so no primitive needs a rule.

A primitive that can do better (drop unused outputs of a loop, say) registers
a rule in `dce_rules`: `rule(used_outputs, eqn) -> (used_inputs, new_eqn or None)`.
`used_inputs` has one flag per input of the *given* `eqn`, whatever inputs
`new_eqn` keeps: the producers of the flagged inputs stay live.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, map_jaxprs_in_params
from polyjax_core.lists import partition_list
from polyjax_core.rules import RuleTable

__all__ = ["dce_jaxpr", "dce_rules"]

DceRule = Callable[[list[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]]
# Looked up with `.get`: a primitive without a rule gets the generic treatment below.
dce_rules: RuleTable = RuleTable("dead-code elimination")


def dce_jaxpr(
    jaxpr: Jaxpr,
    used_outputs: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
) -> tuple[Jaxpr, list[bool]]:
    """Removes the equations that no used output (or effect) depends on.

    Args:
      jaxpr: the jaxpr to prune.
      used_outputs: one bool per output; unused outputs are dropped.
      instantiate: inputs to keep even if unused (one bool, or one per input).

    Returns:
      `(new_jaxpr, used_inputs)`: the pruned jaxpr takes only the inputs
      flagged in `used_inputs`; constvars are kept as they are.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import Primitive, make_jaxpr
      >>> sin_p = Primitive("sin")
      >>> impl, rule = sin_p.def_impl(np.sin), sin_p.def_abstract_eval(lambda x: x)
      >>> closed = make_jaxpr(lambda x, y: (sin_p.bind(x), y))(np.float32(1.0), np.float32(2.0))
      >>> new, used_inputs = dce_jaxpr(closed.jaxpr, [True, False])
      >>> used_inputs
      [True, False]
    """
    if len(used_outputs) != len(jaxpr.outvars):
        raise ValueError(
            f"dce_jaxpr: {len(used_outputs)} used_outputs flags for {len(jaxpr.outvars)} outputs"
        )
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    live: set[Var] = {v for v, u in zip(jaxpr.outvars, used_outputs) if u and isinstance(v, Var)}
    kept: list[JaxprEqn] = []
    for eqn in reversed(jaxpr.eqns):
        used_outs = [v in live for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_ins, new_eqn = rule(used_outs, eqn)
            if len(used_ins) != len(eqn.invars):
                raise ValueError(
                    f"the DCE rule of {eqn.primitive} returned {len(used_ins)} used-input "
                    f"flags for an equation with {len(eqn.invars)} inputs"
                )
        elif any(used_outs) or eqn.effects:
            used_ins, new_eqn = [True] * len(eqn.invars), _prune_subjaxprs(eqn)
        else:
            continue
        if new_eqn is not None:
            kept.append(new_eqn)
            # The flags are the original equation's: a rule may drop or reorder inputs.
            live.update(x for x, u in zip(eqn.invars, used_ins) if u and isinstance(x, Var))
    used_inputs = [v in live or inst for v, inst in zip(jaxpr.invars, instantiate)]
    new_jaxpr = Jaxpr(
        jaxpr.constvars,
        partition_list(used_inputs, jaxpr.invars)[1],
        partition_list(used_outputs, jaxpr.outvars)[1],
        kept[::-1],
        debug_info=jaxpr.debug_info,
    )
    return new_jaxpr, used_inputs


def _prune_inside(sub: Jaxpr | ClosedJaxpr) -> Jaxpr | ClosedJaxpr:
    inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
    pruned, _ = dce_jaxpr(inner, [True] * len(inner.outvars), instantiate=True)
    if len(pruned.eqns) == len(inner.eqns) and all(a is b for a, b in zip(pruned.eqns, inner.eqns)):
        return sub  # nothing removed: keep the object, so caches keyed on it still hit
    return sub.replace(jaxpr=pruned) if isinstance(sub, ClosedJaxpr) else pruned


def _prune_subjaxprs(eqn: JaxprEqn) -> JaxprEqn:
    new_params = map_jaxprs_in_params(eqn.params, _prune_inside)
    if all(new_params[k] is v for k, v in eqn.params.items()):
        return eqn
    return eqn.replace(params=new_params)
