"""The jaxpr IR: a typed, first-order, functional program in A-normal form.

    { lambda c:f32[3]; a:f32[3] b:f32[]. let
        d:f32[3] = mul a c
        e:f32[3] = sin d
      in (e, b) }

- A `Var` is a typed name (its `aval`); names such as `a`, `b` are given only
  when printing, so building and transforming jaxprs never renames anything.
- A `Literal` is a scalar constant written inline (`2.0:f32[]`).
- A `JaxprEqn` binds its `outvars` to a primitive applied to its `invars`
  (vars or literals) with static `params`; it records its effects and the
  user's source line.
- A `Jaxpr` has `constvars` (hoisted constants), `invars`, `eqns` and
  `outvars`. A `ClosedJaxpr` pairs a jaxpr with the values of its constvars:
  it is what `make_jaxpr` returns and what higher-order primitives carry in
  their params (ARCHITECTURE decision 2).

Passes that must look inside higher-order primitives (type checking, DCE,
evaluation, printing) use `jaxprs_in_params` / `map_jaxprs_in_params`, which find
every jaxpr held in an equation's params, in tuples and lists too, so no pass
needs a rule per primitive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from polyjax_core import _pretty as pp
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractValue
from polyjax_core.effects import no_effects

__all__ = [
    "CalleeJaxpr",
    "ClosedJaxpr",
    "DropVar",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Var",
    "jaxprs_in_params",
    "map_jaxprs_in_params",
    "new_jaxpr_eqn",
    "subjaxprs",
]


class Var:
    """A typed variable of a jaxpr. Identity is the name: two Vars are never equal."""

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var(id={id(self):x}):{self.aval.str_short()}"


class DropVar(Var):
    """An output binder whose value nobody uses; printed as `_`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"_:{self.aval.str_short()}"


class Literal:
    """A scalar constant written inline in an equation, such as `2.0:f32[]`."""

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: AbstractValue):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"{self.val}:{self.aval.str_short(short_dtypes=True)}"


Atom = Var | Literal


class JaxprEqn:
    """`outvars = primitive[params] invars`, with effects and source info."""

    __slots__ = ("invars", "outvars", "primitive", "params", "effects", "source_info")

    def __init__(
        self,
        invars: list[Atom],
        outvars: list[Var],
        primitive: Any,
        params: dict[str, Any],
        effects: frozenset = no_effects,
        source_info: Any = None,
    ):
        self.invars = invars
        self.outvars = outvars
        self.primitive = primitive
        self.params = params
        self.effects = effects
        self.source_info = source_info

    def replace(self, **changes: Any) -> JaxprEqn:
        """A copy with some fields replaced."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
        return pp.format_doc(_eqn_doc(self, _Names(), source_info=False))


def new_jaxpr_eqn(
    invars: Sequence[Atom],
    outvars: Sequence[Var],
    primitive: Any,
    params: dict[str, Any],
    effects: frozenset = no_effects,
    source_info: Any = None,
) -> JaxprEqn:
    return JaxprEqn(list(invars), list(outvars), primitive, params, effects, source_info)


class Jaxpr:
    """A typed program: constvars and invars in, equations, outvars (atoms) out.

    Attributes:
      constvars: variables standing for hoisted constants.
      invars: the inputs.
      outvars: the outputs, vars or literals.
      eqns: the equations, in order.
      effects: the union of the equations' effects.
      debug_info: what was traced (a `wrapped_fun.DebugInfo`), or None.
    """

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[JaxprEqn],
        effects: frozenset | None = None,
        debug_info: Any = None,
    ):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        if effects is None:
            effects = frozenset().union(*(e.effects for e in self.eqns))
        self.effects = effects
        self.debug_info = debug_info

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def replace(self, **changes: Any) -> Jaxpr:
        fields = dict(
            constvars=self.constvars,
            invars=self.invars,
            outvars=self.outvars,
            eqns=self.eqns,
            effects=self.effects,
            debug_info=self.debug_info,
        )
        fields.update(changes)
        return Jaxpr(**fields)

    def pretty_print(self, *, source_info: bool = False, width: int = 80) -> str:
        """The printed form; `source_info=True` adds each equation's source line."""
        return pp.format_doc(_jaxpr_doc(self, _Names(), source_info), width)

    def __str__(self) -> str:
        return self.pretty_print()

    __repr__ = __str__


class ClosedJaxpr:
    """A `Jaxpr` together with the values of its constvars.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import Primitive, make_jaxpr
      >>> sin_p = Primitive("sin")
      >>> impl, rule = sin_p.def_impl(np.sin), sin_p.def_abstract_eval(lambda x: x)
      >>> closed = make_jaxpr(lambda x: sin_p.bind(x))(np.float32(1.0))
      >>> closed.in_avals, closed.out_avals, closed.consts
      ([ShapedArray(float32[])], [ShapedArray(float32[])], [])
    """

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
        if len(consts) != len(jaxpr.constvars):
            raise ValueError(
                f"ClosedJaxpr: {len(consts)} consts given for {len(jaxpr.constvars)} constvars"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    literals = property(lambda self: self.consts)  # JAX's older name

    def replace(self, *, jaxpr: Jaxpr | None = None, consts: Sequence[Any] | None = None):
        return ClosedJaxpr(
            self.jaxpr if jaxpr is None else jaxpr, self.consts if consts is None else consts
        )

    def pretty_print(self, *, source_info: bool = False, width: int = 80) -> str:
        return self.jaxpr.pretty_print(source_info=source_info, width=width)

    def __str__(self) -> str:
        return self.jaxpr.pretty_print()

    __repr__ = __str__


# ---------------------------------------------------------------------------
# The generic sub-jaxpr visitor


def _is_jaxpr(x: Any) -> bool:
    return isinstance(x, Jaxpr | ClosedJaxpr)


def jaxprs_in_params(params: dict[str, Any]) -> Iterator[Jaxpr | ClosedJaxpr]:
    """Every jaxpr held in an equation's params, directly or in tuples/lists."""
    for value in params.values():
        if _is_jaxpr(value):
            yield value
        elif isinstance(value, tuple | list):
            for item in value:
                if _is_jaxpr(item):
                    yield item


def map_jaxprs_in_params(
    params: dict[str, Any], f: Callable[[Jaxpr | ClosedJaxpr], Jaxpr | ClosedJaxpr]
) -> dict[str, Any]:
    """A copy of `params` with `f` applied to every jaxpr it holds (same container types)."""
    new = {}
    for key, value in params.items():
        if _is_jaxpr(value):
            value = f(value)
        elif isinstance(value, tuple | list) and any(_is_jaxpr(v) for v in value):
            value = type(value)(f(v) if _is_jaxpr(v) else v for v in value)
        new[key] = value
    return new


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """The open jaxprs held by the equations of `jaxpr` (one level deep)."""
    for eqn in jaxpr.eqns:
        for sub in jaxprs_in_params(eqn.params):
            yield sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub


# ---------------------------------------------------------------------------
# Printing. Variables are named a, b, ..., z, ba, bb, ... in order of first
# appearance; sub-jaxprs continue the same sequence, so every name in a printed
# jaxpr refers to one variable.


class _Names:
    def __init__(self) -> None:
        self._names: dict[Var, str] = {}
        self._count = 0

    def __call__(self, v: Var) -> str:
        if isinstance(v, DropVar):
            return "_"
        name = self._names.get(v)
        if name is None:
            name = self._names[v] = _alphabetic(self._count)
            self._count += 1
        return name

    def alias(self, v: Var, name: str) -> None:
        """Prints `v` as `name` (an existing name), without using up a fresh one."""
        self._names.setdefault(v, name)


def _alphabetic(n: int) -> str:
    digits = ""
    while True:
        n, r = divmod(n, 26)
        digits = chr(ord("a") + r) + digits
        if n == 0:
            return digits


def _binder(v: Var, names: _Names) -> str:
    return f"{names(v)}:{v.aval.str_short(short_dtypes=True)}"


def _atom(x: Atom, names: _Names) -> str:
    if isinstance(x, Literal):
        return repr(x)
    return names(x)


class CalleeJaxpr:
    """Wraps a sub-jaxpr param called with its equation's operands (``jit``'s jaxpr).

    JAX prints such a jaxpr with its inputs named as the equation's operands
    and its outputs as the equation's results; its other variables continue
    the enclosing jaxpr's names. A `print_params` hook returns this wrapper for
    the param to print that way; other sub-jaxprs just continue the names.
    """

    __slots__ = ("jaxpr",)

    def __init__(self, jaxpr: Jaxpr | ClosedJaxpr):
        self.jaxpr = jaxpr


def _param_doc(value: Any, names: _Names, eqn: JaxprEqn | None = None) -> pp.Doc:
    if isinstance(value, CalleeJaxpr):
        inner = value.jaxpr.jaxpr if isinstance(value.jaxpr, ClosedJaxpr) else value.jaxpr
        if eqn is not None:
            pairs = [*zip(inner.invars, eqn.invars), *zip(inner.outvars, eqn.outvars)]
            for v, outer in pairs:
                if isinstance(v, Var) and isinstance(outer, Var) and not isinstance(v, DropVar):
                    names.alias(v, names(outer))
        return _jaxpr_doc(inner, names, False)
    if isinstance(value, Jaxpr):
        return _jaxpr_doc(value, names, False)
    if isinstance(value, ClosedJaxpr):
        return _jaxpr_doc(value.jaxpr, names, False)
    if isinstance(value, tuple | list) and any(_is_jaxpr(v) for v in value):
        items = [_param_doc(v, names) for v in value]
        return pp.group(
            pp.text("(")
            + pp.nest(2, pp.brk("") + pp.join(pp.brk(), items))
            + pp.brk("")
            + pp.text(")")
        )
    if isinstance(value, np.dtype):
        return pp.text(value.name)
    return pp.text(str(value))


def _eqn_doc(
    eqn: JaxprEqn, names: _Names, source_info: bool, used: frozenset | None = None
) -> pp.Doc:
    custom = eqn.primitive.print_eqn
    if custom is not None:
        text = custom(
            eqn,
            lambda x: _atom(x, names),
            lambda v: _binder(v, names),
            lambda v: used is None or v in used,
        )
        doc = pp.text(text)
        if source_info and eqn.source_info is not None and eqn.source_info.frame is not None:
            doc += pp.text(f"  # {si.summarize(eqn.source_info)}")
        return doc
    lhs = " ".join(_binder(v, names) for v in eqn.outvars)
    rhs = pp.text(eqn.primitive.name)
    # JAX prints parameters sorted by name, unless the primitive says what to show
    # and in which order (`jit`: its name, then its jaxpr).
    if eqn.params and eqn.primitive.print_params is not None:
        shown = list(eqn.primitive.print_params(eqn.params).items())
    else:
        shown = sorted(eqn.params.items())
    if shown:
        kvs = [pp.text(f"{k}=") + _param_doc(v, names, eqn) for k, v in shown]
        rhs += pp.group(
            pp.text("[")
            + pp.nest(2, pp.brk("") + pp.join(pp.brk(), kvs))
            + pp.brk("")
            + pp.text("]")
        )
    if eqn.invars:
        rhs += pp.text(" " + " ".join(_atom(x, names) for x in eqn.invars))
    doc = pp.group(pp.text(lhs + " = ") + rhs) if lhs else pp.group(rhs)
    if source_info and eqn.source_info is not None and eqn.source_info.frame is not None:
        doc += pp.text(f"  # {si.summarize(eqn.source_info)}")
    return doc


def _eqns_doc(eqns: list[pp.Doc]) -> pp.Doc:
    # One equation per line when broken; on one line JAX separates them with "; ".
    return pp.concat(pp.brk("; " if i else " ") + e for i, e in enumerate(eqns))


def _jaxpr_doc(jaxpr: Jaxpr, names: _Names, source_info: bool) -> pp.Doc:
    consts = " ".join(_binder(v, names) for v in jaxpr.constvars)
    ins = " ".join(_binder(v, names) for v in jaxpr.invars)
    used = frozenset(x for e in jaxpr.eqns for x in e.invars if isinstance(x, Var)) | frozenset(
        x for x in jaxpr.outvars if isinstance(x, Var)
    )
    eqns = [_eqn_doc(e, names, source_info, used) for e in jaxpr.eqns]
    outs = [_atom(x, names) for x in jaxpr.outvars]
    outs_str = f"({outs[0]},)" if len(outs) == 1 else f"({', '.join(outs)})"
    return pp.group(
        pp.text(f"{{ lambda {consts}; {ins}. let")
        # JAX prints an empty body as "let  in".
        + (pp.nest(4, _eqns_doc(eqns)) if eqns else pp.text(" "))
        + pp.nest(2, pp.brk() + pp.text(f"in {outs_str}"))
        + pp.text(" }")
    )
