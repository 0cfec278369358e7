"""Tracing Python functions into jaxprs: the jaxpr-building trace.

`trace_to_jaxpr(fun, in_avals)` calls `fun` on fresh tracers of a
`JaxprTrace`. Each primitive bound on them is not computed but *recorded*: its
abstract evaluation gives the output types, and an equation joins the jaxpr
under construction. What `fun` returns becomes the jaxpr's outputs.

Values that are not tracers of this trace become constants:
- Python and NumPy scalars are written inline as literals (`mul a 2.0:f32[]`);
- other arrays, and tracers of an *enclosing* trace (a closure over a value
  being traced by an outer transformation), become constvars, with their values
  in the `ClosedJaxpr`'s consts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import config
from polyjax_core import source_info as si
from polyjax_core import vma as _vma
from polyjax_core.abstract_values import AbstractValue, get_aval
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_check import check_jaxpr
from polyjax_core.tracing import Trace, Tracer

__all__ = ["JaxprTrace", "JaxprTracer", "trace_to_jaxpr"]


class JaxprTracer(Tracer):
    """A tracer of a `JaxprTrace`: a jaxpr variable seen from Python."""

    __slots__ = ("_aval", "var", "_src")

    def __init__(self, trace: JaxprTrace, aval: AbstractValue, var: Var, src: Any = None):
        self._trace = trace
        self._aval = aval
        self.var = var
        self._src = src

    @property
    def aval(self) -> AbstractValue:
        return self._aval

    def _source_info(self) -> Any:
        return self._src

    def __repr__(self) -> str:
        # JAX's name for the tracers of `jit` and `make_jaxpr`: `JitTracer(~float32[])`.
        return f"JitTracer({self._aval})"


# Scalars of these types are written inline as literals rather than hoisted.
_LITERAL_TYPES = (bool, int, float, complex, np.generic)


class JaxprTrace(Trace):
    """Records primitives bound on its tracers as equations of a jaxpr."""

    def __init__(self, debug_info: Any = None, parent: Trace | None = None):
        super().__init__(parent)
        self.debug_info = debug_info
        self.invars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_atoms: dict[int, Var] = {}  # id(value) -> constvar, to hoist once

    def new_arg(self, aval: AbstractValue) -> JaxprTracer:
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, aval, var)

    def _atom(self, x: Any) -> tuple[AbstractValue, Var | Literal]:
        """The type and jaxpr atom standing for `x` (a tracer or a constant)."""
        if type(x) is JaxprTracer and x._trace is self:
            return x._aval, x.var
        if isinstance(x, Tracer):
            self.check_foreign_tracer(x)
            return x.aval, self._constvar(x, x.aval)
        aval = get_aval(x)
        if isinstance(x, _LITERAL_TYPES) or (isinstance(x, np.ndarray) and x.ndim == 0):
            return aval, Literal(np.asarray(x, aval.dtype)[()], aval)
        return aval, self._constvar(x, aval)

    def _constvar(self, value: Any, aval: AbstractValue) -> Var:
        var = self._const_atoms.get(id(value))
        if var is None:
            var = self._const_atoms[id(value)] = Var(aval)
            self.constvars.append(var)
            self.consts.append(value)  # also keeps id(value) from being reused
        return var

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        matched = _vma.match_operands(primitive, args, params)
        in_avals, invars = [], []
        for x in matched:
            aval, atom = self._atom(x)
            in_avals.append(aval)
            invars.append(atom)
        out_avals, effects = primitive.abstract_eval(*in_avals, **params)
        src = si.current()
        out: JaxprTracer | list[JaxprTracer]
        if primitive.multiple_results:
            outvars = [Var(a) for a in out_avals]
            out = [JaxprTracer(self, a, v, src) for a, v in zip(out_avals, outvars)]
        else:
            outvars = [Var(out_avals)]
            out = JaxprTracer(self, out_avals, outvars[0], src)
        self.eqns.append(JaxprEqn(invars, outvars, primitive, params, effects, src))
        return out

    def to_jaxpr(self, outs: Sequence[Any]) -> ClosedJaxpr:
        """The jaxpr recorded so far, with `outs` as its outputs."""
        outvars = [self._atom(x)[1] for x in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, debug_info=self.debug_info)
        return ClosedJaxpr(jaxpr, self.consts)


def trace_to_jaxpr(
    fun: Callable[..., Sequence[Any]],
    in_avals: Sequence[AbstractValue],
    debug_info: Any = None,
) -> ClosedJaxpr:
    """Traces `fun` (flat tracers in, a flat sequence out) to a `ClosedJaxpr`.

    Args:
      fun: a function of `len(in_avals)` positional arguments returning a list
        or tuple of arrays (no pytrees: flatten around it).
      in_avals: the abstract values of the arguments.
      debug_info: what is being traced, for error messages (`wrapped_fun.DebugInfo`).

    Returns:
      The `ClosedJaxpr`. With `jax_enable_checks` on, it has been type-checked.
    """
    with JaxprTrace(debug_info) as trace:
        args = [trace.new_arg(a) for a in in_avals]
        outs = fun(*args)
        if not isinstance(outs, list | tuple):
            raise TypeError(
                f"trace_to_jaxpr: the traced function must return a list or tuple, got {outs!r}"
            )
        closed = trace.to_jaxpr(outs)
    if config.enable_checks.value:
        check_jaxpr(closed.jaxpr)
    return closed
