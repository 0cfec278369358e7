"""Primitives: the operations a traced program is made of.

A `Primitive` is declared once, with a name, how to compute its output types
from its input types (*abstract evaluation*) and how to compute it on concrete
values (*impl*). Calling `prim.bind(*args, **params)` hands it to the current
trace (see `polyjax_core.tracing`): evaluation runs the impl, a jaxpr-building
trace records an equation, and the transformations of polyjax-interpreters
apply their rules. Those rules live in tables owned by each interpreter
(`polyjax_core.rules.RuleTable`), so a primitive object knows nothing of them.

Example:
  >>> import numpy as np
  >>> sin_p = Primitive("sin")
  >>> impl = sin_p.def_impl(np.sin)
  >>> rule = sin_p.def_abstract_eval(lambda x: x)
  >>> sin_p.bind(np.float32(0.0))
  np.float32(0.0)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polyjax_core import aval_sharding as _aval_sharding
from polyjax_core import tracing
from polyjax_core import vma as _vma
from polyjax_core.effects import no_effects

__all__ = ["Primitive"]


class Primitive:
    """An operation of the jaxpr language.

    Attributes:
      name: printed in jaxprs.
      multiple_results: `bind` returns a list of outputs instead of one value.
      impl: computes the primitive on concrete values.
    """

    multiple_results = False
    # Whether the shape rule computes its outputs' varying manual axes itself
    # (collectives); otherwise outputs vary over the union of the inputs' (see `vma`).
    own_vma = False
    # With `own_vma`: `vma_operand_axes(params) -> axes` makes the operands vary over
    # those axes before the primitive applies (a collective's communicated axes).
    vma_operand_axes: Callable[[dict[str, Any]], Any] | None = None
    # Which params a printed jaxpr shows, in order: `print_params(params) -> dict`. None
    # shows them all, sorted by name (JAX's default); `jit` shows its name, then its jaxpr.
    print_params: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # A primitive printed in a form of its own (`b[0] <- c` for a reference write):
    # `print_eqn(eqn, atom, binder, is_used) -> str`, where `atom(x)` and `binder(v)`
    # print an operand and a typed output, and `is_used(v)` says whether the
    # enclosing jaxpr reads output `v`. None prints `outs = name[params] ins`.
    print_eqn: Callable[..., str] | None = None
    # Whether the primitive's params hold jaxprs (loops, branches, jit): transformations
    # then check whether a body uses mutable references (`polyjax_interpreters.discharge`).
    has_body = False

    def __init__(self, name: str):
        self.name = name
        self.impl: Callable[..., Any] | None = None
        self._abstract_eval: Callable[..., tuple[Any, frozenset]] | None = None

    def __repr__(self) -> str:
        return self.name

    def bind(self, *args: Any, **params: Any) -> Any:
        """Applies the primitive under the current trace."""
        return tracing._state.trace.process_primitive(self, args, params)

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """Sets how to evaluate the primitive on concrete values. Usable as a decorator."""
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Sets the shape rule: `rule(*in_avals, **params) -> out_aval(s)`, with no effects."""
        self._abstract_eval = lambda *avals, **params: (rule(*avals, **params), no_effects)
        return rule

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Sets a shape rule returning `(out_aval(s), effects)`."""
        self._abstract_eval = rule
        return rule

    def abstract_eval(self, *avals: Any, **params: Any) -> tuple[Any, frozenset]:
        """Output aval(s) and effects for the given input avals."""
        if self._abstract_eval is None:
            raise NotImplementedError(
                f"Abstract evaluation for primitive '{self.name}' is not implemented "
                "(use def_abstract_eval)."
            )
        outs, effects = self._abstract_eval(*avals, **params)
        outs = _aval_sharding.apply_rule(self, avals, outs, params)
        return _vma.output_avals(self, avals, outs, params), effects

    def evaluate(self, *args: Any, **params: Any) -> Any:
        """Runs the impl (what the evaluation trace does)."""
        if self.impl is None:
            raise NotImplementedError(
                f"Evaluation rule for primitive '{self.name}' is not implemented (use def_impl)."
            )
        return self.impl(*args, **params)
