"""Type-checking jaxprs.

`check_jaxpr` re-derives every equation's output types by running its
primitive's abstract evaluation on the declared input types, and checks that
every variable is bound once and defined before it is used, recursively
through the jaxprs held in equation params. Transformations that build jaxprs
by hand run it in tests, and `jax_enable_checks` runs it after every trace.

A failure raises `JaxprTypeError` naming the offending equation as it prints
inside the whole jaxpr, and the user's source line that produced it.
"""

from __future__ import annotations

from typing import Any

from polyjax_core import _pretty as pp
from polyjax_core import source_info as si
from polyjax_core.errors import JaxprTypeError
from polyjax_core.jaxpr import (
    ClosedJaxpr,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    _eqn_doc,
    _jaxpr_doc,
    _Names,
    jaxprs_in_params,
)

__all__ = ["check_jaxpr", "typematch"]


def _short(aval: Any) -> str:
    # The jaxpr's own notation (`f32[3]`), since the message prints the jaxpr too.
    return aval.str_short(short_dtypes=True)


def _shorts(avals: Any) -> str:
    return ", ".join(_short(a) for a in avals)


def typematch(a: Any, b: Any) -> bool:
    """Whether two avals have the same type, ignoring weak types."""
    return a.shape == b.shape and a.dtype == b.dtype


class _Failure(Exception):
    def __init__(self, what: str, eqn: JaxprEqn | None):
        self.what = what
        self.eqn = eqn


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Checks that `jaxpr` is well typed.

    Raises:
      JaxprTypeError: naming the offending equation, its source line, and why.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import Primitive, make_jaxpr
      >>> sin_p = Primitive("sin")
      >>> impl, rule = sin_p.def_impl(np.sin), sin_p.def_abstract_eval(lambda x: x)
      >>> check_jaxpr(make_jaxpr(lambda x: sin_p.bind(x))(np.float32(1.0)))  # None: well typed
    """
    top = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    try:
        _check(top)
    except _Failure as failure:
        raise _type_error(top, failure) from None


def _type_error(top: Jaxpr, failure: _Failure) -> JaxprTypeError:
    names = _Names()
    whole = pp.format_doc(_jaxpr_doc(top, names, False))
    msg = failure.what
    if failure.eqn is not None:
        msg += f"\nin equation:\n\n  {pp.format_doc(_eqn_doc(failure.eqn, names, False))}\n"
        src = failure.eqn.source_info
        if src is not None and src.frame is not None:
            msg += f"\nfrom the user's line {si.summarize(src)}\n"
    if len(whole) < 4000:
        msg += f"\nof the jaxpr:\n\n{whole}\n"
    return JaxprTypeError(msg)


def _check(jaxpr: Jaxpr) -> None:
    defined: set[Var] = set()

    def bind(v: Var, eqn: JaxprEqn | None) -> None:
        if isinstance(v, DropVar):
            return
        if v in defined:
            raise _Failure(f"Variable {v!r} is bound twice.", eqn)
        defined.add(v)

    def read(x: Any, eqn: JaxprEqn | None) -> None:
        if isinstance(x, Literal):
            return
        if x not in defined:
            raise _Failure(
                f"Variable of type {_short(x.aval)} is used before it is defined.",
                eqn,
            )

    for v in jaxpr.constvars + jaxpr.invars:
        bind(v, None)
    for eqn in jaxpr.eqns:
        for x in eqn.invars:
            read(x, eqn)
        for sub in jaxprs_in_params(eqn.params):
            _check_sub(sub, eqn)
        _check_eqn_types(eqn)
        if not eqn.effects <= jaxpr.effects:
            raise _Failure(
                f"Equation effects {set(eqn.effects)} are missing from the jaxpr's effects "
                f"{set(jaxpr.effects)}.",
                eqn,
            )
        for v in eqn.outvars:
            bind(v, eqn)
    for x in jaxpr.outvars:
        read(x, None)


def _check_sub(sub: Jaxpr | ClosedJaxpr, eqn: JaxprEqn) -> None:
    inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
    if isinstance(sub, ClosedJaxpr):
        if len(sub.consts) != len(inner.constvars):
            raise _Failure("A sub-jaxpr's consts do not match its constvars.", eqn)
    try:
        _check(inner)
    except _Failure as failure:
        raise _Failure(
            f"In a sub-jaxpr of primitive '{eqn.primitive}': {failure.what}", eqn
        ) from None


def _check_eqn_types(eqn: JaxprEqn) -> None:
    prim = eqn.primitive
    in_avals = [x.aval for x in eqn.invars]
    try:
        out, _ = prim.abstract_eval(*in_avals, **eqn.params)
    except Exception as e:  # the rule rejects these inputs: report it as a type error
        raise _Failure(
            f"Abstract evaluation of '{prim}' rejects the input types "
            f"({_shorts(in_avals)}): {type(e).__name__}: {e}",
            eqn,
        ) from None
    out_avals = list(out) if prim.multiple_results else [out]
    if len(out_avals) != len(eqn.outvars):
        raise _Failure(
            f"'{prim}' produces {len(out_avals)} outputs but the equation binds "
            f"{len(eqn.outvars)}.",
            eqn,
        )
    for var, aval in zip(eqn.outvars, out_avals):
        if not typematch(var.aval, aval):
            raise _Failure(
                f"'{prim}' applied to ({_shorts(in_avals)}) produces "
                f"{_short(aval)}, but the equation declares {_short(var.aval)}.",
                eqn,
            )
