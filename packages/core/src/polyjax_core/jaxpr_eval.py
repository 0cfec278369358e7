"""Evaluating a jaxpr: bind each equation's primitive, in order.

`eval_jaxpr` binds primitives under whatever trace is current, so the same
function evaluates a jaxpr on concrete values, re-traces it into a new jaxpr,
or transforms it (jvp of a jaxpr is `eval_jaxpr` under a JVP trace).
Higher-order primitives receive their sub-jaxprs in their params and decide
themselves how to run them. Each bind runs in the source context of its
equation, so re-traced equations and errors keep the user's original line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core import source_info as si
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var

__all__ = ["eval_jaxpr", "jaxpr_as_fun"]


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any) -> list[Any]:
    """Evaluates `jaxpr` on `consts` (for its constvars) and `args` (for its invars).

    Args:
      jaxpr: an open `Jaxpr`.
      consts: one value per constvar.
      *args: one value per invar.

    Returns:
      The list of output values.

    Raises:
      TypeError: the numbers of consts or args do not match the jaxpr.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import Primitive, make_jaxpr
      >>> sin_p = Primitive("sin")
      >>> impl, rule = sin_p.def_impl(np.sin), sin_p.def_abstract_eval(lambda x: x)
      >>> closed = make_jaxpr(lambda x: sin_p.bind(x))(np.float32(0.0))
      >>> eval_jaxpr(closed.jaxpr, closed.consts, np.float32(0.0))
      [np.float32(0.0)]
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts and "
            f"{len(jaxpr.invars)} args, got {len(consts)} consts and {len(args)} args"
        )
    env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(x: Var | Literal) -> Any:
        return x.val if isinstance(x, Literal) else env[x]

    for eqn in jaxpr.eqns:
        with si.user_context(eqn.source_info):
            ans = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        if eqn.primitive.multiple_results:
            env.update(zip(eqn.outvars, ans))
        else:
            env[eqn.outvars[0]] = ans
    return [read(x) for x in jaxpr.outvars]


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr) -> Callable[..., list[Any]]:
    """A Python function evaluating `closed_jaxpr` on its arguments (returns a list)."""

    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun
