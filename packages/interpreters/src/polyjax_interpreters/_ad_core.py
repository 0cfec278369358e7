"""The machinery of automatic differentiation (the public face is `polyjax_interpreters.ad`).

- Symbolic zeros (`Zero`), linear inputs of transpose rules
  (`UndefinedPrimal`), tangent types (`float0` for integers), `add_any`.
- The rule tables `primitive_jvps` / `primitive_transposes` and the helpers
  rule writers use (`defjvp`, `deflinear`...).
- `JVPTrace`: forward mode. `backward_pass`: transposition of linear jaxprs.
- `_linearize_flat`: jvp with partial evaluation on the fly, the ground of
  `linearize`, `vjp`, `grad` and the Jacobians.
- `jvp_jaxpr` / `transpose_jaxpr`: the same on jaxprs, for higher-order
  primitives such as `jit`.

Everything public here is re-exported by `ad`; import it from there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes, tracing
from polyjax_core import source_info as si
from polyjax_core.abstract_values import (
    AbstractToken,
    AbstractValue,
    ShapedArray,
    Token,
    get_aval,
)
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.dce import dce_jaxpr
from polyjax_core.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_eval import eval_jaxpr, jaxpr_as_fun
from polyjax_core.jaxpr_tracing import JaxprTrace, JaxprTracer, trace_to_jaxpr
from polyjax_core.lists import partition_list
from polyjax_core.primitive import Primitive
from polyjax_core.rules import RuleTable
from polyjax_core.tracing import Trace, Tracer, current_trace, set_current_trace
from polyjax_core.tree_util import tree_map
from polyjax_interpreters import batching, discharge, dispatch, mlir
from polyjax_interpreters import partial_eval as pe

_trace_state = tracing._state  # the thread-local current trace (read on every bind)

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
    "add_tangents",
    "always_jvp",
    "backward_pass",
    "bind_unknown",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "deflinear",
    "deflinear2",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp_flat",
    "jvp_jaxpr",
    "primitive_jvps",
    "primitive_transposes",
    "register_zeros_maker",
    "stop_gradient",
    "stop_gradient_p",
    "tangent_aval",
    "transpose_jaxpr",
    "zeros_like_aval",
]


# ---------------------------------------------------------------------------
# Symbolic zeros, undefined primals, tangent types


@functools.cache
def _is_inexact(dtype: Any) -> bool:
    return dtypes.issubdtype(dtype, np.inexact)


def tangent_aval(aval: AbstractValue) -> AbstractValue:
    """The type of a tangent (or cotangent) of a value of type `aval`.

    Floating and complex values have tangents of their own type; integer and
    boolean values have `float0` tangents of the same shape. A token is not
    differentiable: its tangent type is its own, and its tangents stay symbolic
    zeros.
    """
    if type(aval) is AbstractToken:
        return aval
    if _is_inexact(aval.dtype) or aval.dtype == dtypes.float0:
        return aval
    return ShapedArray(aval.shape, dtypes.float0)


class Zero:
    """A symbolic zero tangent or cotangent of type `aval`, never materialized.

    Example:
      >>> Zero(ShapedArray((3,), np.float32))
      Zero(float32[3])
    """

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue):
        self.aval = aval

    @staticmethod
    def from_primal_value(x: Any) -> Zero:
        """The zero tangent of the value `x`."""
        return Zero(tangent_aval(get_aval(x)))

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """A linear input of a transpose rule: only its type is known.

    Example:
      >>> is_undefined_primal(UndefinedPrimal(ShapedArray((), np.float32)))
      True
    """

    __slots__ = ("aval",)

    def __init__(self, aval: AbstractValue):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x: Any) -> bool:
    """Whether `x` is a linear (undefined) input of a transpose rule."""
    return type(x) is UndefinedPrimal


_zeros_maker: Callable[[AbstractValue], Any] | None = None


def register_zeros_maker(fn: Callable[[AbstractValue], Any]) -> None:
    """Sets how `zeros_like_aval` builds arrays (polyjax-numpy registers a lax op).

    Args:
      fn: `fn(aval) -> array` of zeros of that shape and dtype, usable under
        any trace (e.g. a `broadcast_in_dim` of a scalar literal).
    """
    global _zeros_maker
    _zeros_maker = fn


def zeros_like_aval(aval: AbstractValue) -> Any:
    """An array of zeros of type `aval` (a NumPy array for `float0`; a token for
    a token's type)."""
    if type(aval) is AbstractToken:
        return Token()
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    if _zeros_maker is not None:
        return _zeros_maker(aval)
    # No array library registered: a NumPy constant (staged as a literal or constant).
    return np.zeros(aval.shape, aval.dtype)


def instantiate_zeros(t: Any) -> Any:
    """`t`, with a symbolic `Zero` replaced by an array of zeros."""
    if type(t) is Zero:
        return zeros_like_aval(t.aval)
    return t


# ---------------------------------------------------------------------------
# add_any: the sum of two tangents (or cotangents)

add_any_p = Primitive("add_any")
add_any_p.def_impl(functools.partial(dispatch.apply_primitive, add_any_p))


@add_any_p.def_abstract_eval
def _add_any_abstract_eval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"add_any: tangents of different types {x.str_short()} and {y.str_short()}")
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


mlir.register_lowering(add_any_p, lambda ctx, x, y: [hlo.add(x, y)])


def add_tangents(x: Any, y: Any) -> Any:
    """The sum of two tangents, symbolic zeros skipped."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    if get_aval(x).dtype == dtypes.float0:
        return x
    return add_any_p.bind(x, y)


# ---------------------------------------------------------------------------
# Rule tables and helpers for rule writers

primitive_jvps = RuleTable("differentiation (jvp)")
# Primitives whose jvp rule runs even when no input has a tangent: `new_ref`,
# whose reference gets a tangent reference that later writes may fill.
always_jvp: set[Primitive] = set()
primitive_transposes = RuleTable("transpose")

JVPRule = Callable[..., tuple[Any, Any]]


def _zero_tangents_like(prim: Primitive, ans: Any) -> Any:
    if prim.multiple_results:
        return [Zero.from_primal_value(a) for a in ans]
    return Zero.from_primal_value(ans)


def _is_float_out(prim: Primitive, ans: Any) -> bool:
    if prim.multiple_results:
        return any(_is_inexact(get_aval(a).dtype) for a in ans)
    return _is_inexact(get_aval(ans).dtype)


def _sum_contributions(prim: Primitive, ans: Any, contributions: list[Any]) -> Any:
    if not contributions:
        return _zero_tangents_like(prim, ans)
    if prim.multiple_results:
        total = list(contributions[0])
        for c in contributions[1:]:
            total = [add_tangents(a, b) for a, b in zip(total, c)]
        # Integer outputs of a mixed primitive get float0 zeros.
        return [
            t if _is_inexact(get_aval(a).dtype) else Zero.from_primal_value(a)
            for a, t in zip(ans, total)
        ]
    total = contributions[0]
    for c in contributions[1:]:
        total = add_tangents(total, c)
    return total


def defjvp(prim: Primitive, *jvp_fns: Callable[..., Any] | None) -> None:
    """Defines the jvp of `prim` as a sum of one term per differentiable input.

    Args:
      prim: the primitive.
      *jvp_fns: one per positional input: `fn(tangent, *primals, **params)`
        returning that input's contribution to the output tangent, or None
        for an input that is not differentiable. Zero tangents are skipped.

    Example:
      >>> from polyjax_numpy import lax
      >>> from polyjax_core.primitive import Primitive
      >>> my_sin_p = Primitive("my_sin")
      >>> defjvp(my_sin_p, lambda g, x: lax.mul(g, lax.cos(x)))
    """
    _def_summed_jvp(prim, jvp_fns, with_ans=False)


def defjvp2(prim: Primitive, *jvp_fns: Callable[..., Any] | None) -> None:
    """Like `defjvp`, but each function also gets the output: `fn(tangent, ans, *primals)`.

    Example:
      >>> from polyjax_numpy import lax
      >>> from polyjax_core.primitive import Primitive
      >>> my_exp_p = Primitive("my_exp")
      >>> defjvp2(my_exp_p, lambda g, ans, x: lax.mul(g, ans))
    """
    _def_summed_jvp(prim, jvp_fns, with_ans=True)


def _def_summed_jvp(prim: Primitive, jvp_fns: tuple, with_ans: bool) -> None:
    """The jvp rule of `defjvp` (`with_ans=False`) and `defjvp2` (`with_ans=True`)."""

    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        if not _is_float_out(prim, ans):
            return ans, _zero_tangents_like(prim, ans)
        lead = (ans,) if with_ans else ()
        contributions = [
            fn(t, *lead, *primals, **params)
            for fn, t in zip(jvp_fns, tangents)
            if fn is not None and type(t) is not Zero
        ]
        return ans, _sum_contributions(prim, ans, contributions)

    primitive_jvps[prim] = rule


def defjvp_zero(prim: Primitive) -> None:
    """Declares that `prim`'s output has a zero tangent (e.g. comparisons, `floor`)."""

    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        return ans, _zero_tangents_like(prim, ans)

    primitive_jvps[prim] = rule


def _linear_jvp(prim: Primitive, primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    ans = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents) or not _is_float_out(prim, ans):
        return ans, _zero_tangents_like(prim, ans)
    return ans, prim.bind(*map(instantiate_zeros, tangents), **params)


def _zero_cts(args: Sequence[Any]) -> list[Any]:
    return [Zero(x.aval) if type(x) is UndefinedPrimal else None for x in args]


def deflinear(prim: Primitive, transpose_fn: Callable[..., Sequence[Any]]) -> None:
    """Declares `prim` linear in all its inputs.

    Its jvp applies `prim` to the tangents; its transpose is
    `transpose_fn(ct, **params) -> [ct per input]` (a zero cotangent gives
    zero cotangents without calling it).
    """
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if type(ct) is Zero:
            return _zero_cts(args)
        return list(transpose_fn(ct, **params))

    primitive_transposes[prim] = transpose


def deflinear2(prim: Primitive, transpose_fn: Callable[..., Sequence[Any]]) -> None:
    """Like `deflinear`, but the transpose also sees the inputs: `fn(ct, *args, **params)`.

    The linear inputs arrive as `UndefinedPrimal`s (their `aval` gives shapes).
    """
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)

    def transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
        if type(ct) is Zero:
            return _zero_cts(args)
        return list(transpose_fn(ct, *args, **params))

    primitive_transposes[prim] = transpose


# add_any is linear: its jvp adds the tangents, its transpose copies the cotangent.
def _add_any_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    x, y = primals
    tx, ty = tangents
    return add_any_p.bind(x, y), add_tangents(tx, ty)


primitive_jvps[add_any_p] = _add_any_jvp


def _add_any_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    return [ct if type(a) is UndefinedPrimal else None for a in (x, y)]


primitive_transposes[add_any_p] = _add_any_transpose


def _add_any_batching(args: Sequence[Any], dims: Sequence[Any]) -> tuple[Any, Any]:
    x, y = args
    dx, dy = dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    size = get_aval(x).shape[dx] if dx is not None else get_aval(y).shape[dy]
    x, y = batching.bdim_at_front(x, dx, size), batching.bdim_at_front(y, dy, size)
    return add_any_p.bind(x, y), 0


batching.primitive_batchers[add_any_p] = _add_any_batching


# ---------------------------------------------------------------------------
# stop_gradient

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x: x)
stop_gradient_p.def_abstract_eval(lambda x: x)
mlir.register_lowering(stop_gradient_p, lambda ctx, x: [x])


def _stop_gradient_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    (x,) = primals
    return stop_gradient_p.bind(x), Zero.from_primal_value(x)


primitive_jvps[stop_gradient_p] = _stop_gradient_jvp
batching.defvectorized(stop_gradient_p)


def stop_gradient(x: Any) -> Any:
    """The identity, with a zero derivative: stops gradients flowing through `x`.

    Args:
      x: a pytree of arrays. Integer and boolean leaves pass through as they are.

    Returns:
      `x`, whose leaves are treated as constants by `grad`, `jvp` and friends.

    Example:
      >>> from polyjax_interpreters.ad import grad, stop_gradient
      >>> grad(lambda x: x * stop_gradient(x))(3.0)
      Array(3., dtype=float32, weak_type=True)
    """

    def stop(leaf: Any) -> Any:
        aval = get_aval(leaf)
        if not _is_inexact(aval.dtype):
            if isinstance(leaf, np.ndarray | np.generic) and leaf.dtype != aval.dtype:
                return np.asarray(leaf, aval.dtype)  # canonical: int64 is int32 without x64
            return leaf
        return stop_gradient_p.bind(leaf)

    return tree_map(stop, x)


# ---------------------------------------------------------------------------
# Forward mode: the JVP trace


class JVPTracer(Tracer):
    """A value being differentiated in forward mode: a primal and its tangent."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self) -> AbstractValue:
        return get_aval(self.primal)

    def to_concrete_value(self) -> Any:
        # Differentiating does not hide values: `if x > 0` works under jvp/grad.
        p = self.primal
        return p.to_concrete_value() if isinstance(p, Tracer) else p

    def _source_info(self) -> Any:
        p = self.primal
        return p._source_info() if isinstance(p, Tracer) else None

    def __repr__(self) -> str:
        # JAX's forms: under jvp both values; under grad/vjp/linearize (the tangent
        # is being recorded) the tangent's type only.
        t = self.tangent
        if type(t) is JaxprTracer and isinstance(t._trace, _LinearizeTrace):
            return f"GradTracer(primal={self.primal}, typeof(tangent)={t.aval.str_short(True)})"
        return f"JVPTracer(primal={self.primal}, tangent={t})"


class JVPTrace(Trace):
    """Forward-mode differentiation: primitives apply their jvp rules under the parent."""

    def to_primal_tangent(self, x: Any) -> tuple[Any, Any]:
        """`(primal, tangent)` of `x`; a value not of this trace has a zero tangent."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        if primitive.has_body and discharge.body_has_state(primitive, params):
            return discharge.bind_discharged(primitive, args, params)
        primals: list[Any] = []
        tangents: list[Any] = []
        nonzero = False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                nonzero = nonzero or type(x.tangent) is not Zero
            else:
                primals.append(x)
                tangents.append(None)
        # The rule runs under the parent trace (set inline: this is the hot path).
        state = _trace_state
        saved, state.trace = state.trace, self.parent
        try:
            if not nonzero and primitive not in always_jvp:
                # Nothing to differentiate: the result is a constant of this trace.
                return primitive.bind(*primals, **params)
            tangents = [
                Zero.from_primal_value(p) if t is None else t for p, t in zip(primals, tangents)
            ]
            primal_out, tangent_out = primitive_jvps[primitive](primals, tangents, **params)
        finally:
            state.trace = saved
        if primitive.multiple_results:
            return [JVPTracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
        return JVPTracer(self, primal_out, tangent_out)


def jvp_flat(
    fun: Callable[..., Sequence[Any]],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    instantiate: bool | Sequence[bool] = True,
    has_aux: bool = False,
) -> Any:
    """Forward-mode derivative of a function of flat arguments (no pytrees, no checks).

    Args:
      fun: takes `len(primals)` arrays, returns a list/tuple of arrays (or, with
        `has_aux`, a pair `(list of arrays, aux)`).
      primals: the point.
      tangents: one tangent per primal; `Zero` for a symbolic zero.
      instantiate: replace symbolic zero output tangents by arrays (one bool,
        or one per output).

    Returns:
      `(primals_out, tangents_out)`, plus `aux` with `has_aux` (its tracers of
      this trace replaced by their primals).
    """
    with JVPTrace(current_trace()) as trace:
        ins = [JVPTracer(trace, p, t) for p, t in zip(primals, tangents)]
        outs = fun(*ins)
        if has_aux:
            outs, aux = outs
        pairs = [trace.to_primal_tangent(o) for o in outs]
        if has_aux:
            aux = _strip_tangents(trace, aux)
    primals_out = [p for p, _ in pairs]
    tangents_out = [t for _, t in pairs]
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(tangents_out)
    tangents_out = [instantiate_zeros(t) if i else t for t, i in zip(tangents_out, instantiate)]
    if has_aux:
        return primals_out, tangents_out, aux
    return primals_out, tangents_out


def _strip_tangents(trace: JVPTrace, tree: Any) -> Any:
    return tree_map(lambda x: x.primal if type(x) is JVPTracer and x._trace is trace else x, tree)


# ---------------------------------------------------------------------------
# Reverse mode: transposing linear jaxprs


def _literal(x: Literal) -> Any:
    """The value of a literal; a weakly typed one as a Python scalar, which stays weak."""
    if x.aval.weak_type:
        scalar = x.val.item()
        if get_aval(scalar) == x.aval:
            return scalar
    return x.val


def backward_pass(
    jaxpr: Jaxpr,
    consts: Sequence[Any],
    primals_in: Sequence[Any],
    cts_out: Sequence[Any],
) -> list[Any]:
    """Transposes a jaxpr that is linear in some of its inputs.

    Equations whose inputs are all known (consts, known primals, literals) are
    evaluated forward first; the others are linear in the undefined inputs and
    are transposed in reverse order, each with its primitive's transpose rule.
    Cotangents of a variable used several times are summed with `add_any`.
    Equations whose output cotangents are all symbolic zeros are skipped.

    Args:
      jaxpr: an open jaxpr, linear in the inputs given as `UndefinedPrimal`.
      consts: values of its constvars.
      primals_in: one per invar: a known value, or `UndefinedPrimal(aval)` for
        a linear input.
      cts_out: one cotangent per output (`Zero` for a symbolic zero).

    Returns:
      One entry per invar: the cotangent (possibly `Zero`) of each linear
      input, None for the known ones.
    """
    known: dict[Var, Any] = dict(zip(jaxpr.constvars, consts))
    for invar, x in zip(jaxpr.invars, primals_in):
        if type(x) is not UndefinedPrimal:
            known[invar] = x

    # Forward: evaluate what does not depend on the linear inputs.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if all(type(x) is Literal or x in known for x in eqn.invars):
            with si.user_context(eqn.source_info):
                ans = eqn.primitive.bind(
                    *[_literal(x) if isinstance(x, Literal) else known[x] for x in eqn.invars],
                    **eqn.params,
                )
            if eqn.primitive.multiple_results:
                known.update(zip(eqn.outvars, ans))
            else:
                known[eqn.outvars[0]] = ans
        else:
            linear_eqns.append(eqn)

    # Backward: accumulate cotangents.
    ct_env: dict[Var, Any] = {}

    def write_ct(v: Any, ct: Any) -> None:
        if type(v) is Literal or type(ct) is Zero or ct is None or v in known:
            return
        old = ct_env.get(v)
        ct_env[v] = ct if old is None else add_tangents(old, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)

    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in cts):
            continue
        cts = [Zero(tangent_aval(v.aval)) if ct is None else ct for v, ct in zip(eqn.outvars, cts)]
        args = [
            _literal(x)
            if type(x) is Literal
            else known[x]
            if x in known
            else UndefinedPrimal(x.aval)
            for x in eqn.invars
        ]
        rule = primitive_transposes[eqn.primitive]
        with si.user_context(eqn.source_info):
            cts_in = rule(cts if eqn.primitive.multiple_results else cts[0], *args, **eqn.params)
        for x, a, ct in zip(eqn.invars, args, cts_in):
            if type(a) is UndefinedPrimal:
                write_ct(x, ct)

    out = []
    for v, x in zip(jaxpr.invars, primals_in):
        if type(x) is UndefinedPrimal:
            ct = ct_env.get(v)
            out.append(Zero(tangent_aval(x.aval)) if ct is None else ct)
        else:
            out.append(None)
    return out


# ---------------------------------------------------------------------------
# Linearization: jvp with partial evaluation on the fly


class _LinearizeTrace(JaxprTrace):
    """Records the tangent (linear) part of a jvp; runs the primal part under the parent.

    Its tracers are the *unknown* values: the input tangents and whatever is
    computed from them. An equation that reads none of them is known and is
    bound under the parent trace right away (so primal values stay concrete
    when the parent is evaluation, and Python control flow on them works, as
    under JAX's `grad`). An equation that reads one is recorded; the known
    values it reads become the linear jaxpr's constants (the *residuals*).
    Higher-order primitives with a partial-evaluation rule
    (`partial_eval.partial_eval_jaxpr_custom_rules`, e.g. `jit`) are split
    into a known equation run now and an unknown equation recorded.
    """

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        unknowns = [type(x) is JaxprTracer and x._trace is self for x in args]
        if not any(unknowns):
            state = _trace_state
            saved, state.trace = state.trace, self.parent
            try:
                return primitive.bind(*args, **params)
            finally:
                state.trace = saved
        rule = pe.partial_eval_jaxpr_custom_rules.get(primitive)
        if rule is None:
            return super().process_primitive(primitive, args, params)
        return self._split(rule, primitive, args, params, unknowns)

    def _split(
        self, rule: Any, primitive: Any, args: tuple, params: dict, unknowns: list[bool]
    ) -> Any:
        in_vars: list[Atom] = [Var(get_aval(x)) for x in args]
        out_avals, effects = primitive.abstract_eval(*(v.aval for v in in_vars), **params)
        if not primitive.multiple_results:
            out_avals = [out_avals]
        out_vars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(in_vars, out_vars, primitive, params, effects, si.current())
        known_eqn, unknown_eqn, _, _ = rule(unknowns, [False] * len(out_vars), eqn)
        env: dict[Atom, Any] = dict(zip(in_vars, args))

        def read(x: Any) -> Any:
            return _literal(x) if type(x) is Literal else env[x]

        if known_eqn is not None:  # run now, under the parent
            with set_current_trace(self.parent):
                outs = known_eqn.primitive.bind(*map(read, known_eqn.invars), **known_eqn.params)
            multiple = known_eqn.primitive.multiple_results
            env.update(zip(known_eqn.outvars, outs if multiple else [outs]))
        if unknown_eqn is not None:  # recorded as it is (not split again)
            outs = super().process_primitive(
                unknown_eqn.primitive, tuple(map(read, unknown_eqn.invars)), unknown_eqn.params
            )
            multiple = unknown_eqn.primitive.multiple_results
            env.update(zip(unknown_eqn.outvars, outs if multiple else [outs]))
        outs = [env[v] for v in out_vars]
        return outs if primitive.multiple_results else outs[0]


def bind_unknown(primitive: Primitive, *args: Any, **params: Any) -> Any:
    """`primitive.bind`, but recorded in the linear part when linearizing.

    A jvp rule creating a tangent *reference* uses it: the reference must live in
    the linear jaxpr (where its reads and writes are recorded), even when its
    initial contents are a known zero.
    """
    trace = current_trace()
    if isinstance(trace, _LinearizeTrace):
        return JaxprTrace.process_primitive(trace, primitive, args, params)
    return primitive.bind(*args, **params)


class _Linearized:
    """The result of `_linearize_flat`: primal outputs and the linear jaxpr of tangents.

    Attributes:
      primals_out: the primal outputs (values of the parent trace).
      jaxpr: `ClosedJaxpr` from the tangents of the inputs flagged in
        `in_nonzero` to the tangents of the outputs flagged in `out_nonzero`;
        its consts are the residuals.
      in_avals / out_avals: the tangent types of all inputs / outputs.
      aux: the auxiliary output (with `has_aux`).
    """

    __slots__ = ("primals_out", "jaxpr", "in_avals", "out_avals", "in_nonzero", "out_nonzero")

    def __init__(self, primals_out, jaxpr, in_avals, out_avals, in_nonzero, out_nonzero):
        self.primals_out = primals_out
        self.jaxpr = jaxpr
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.in_nonzero = in_nonzero
        self.out_nonzero = out_nonzero

    def with_residuals(self, residuals: Sequence[Any]) -> _Linearized:
        """The same linear map with other residual values (e.g. tracers under `jit`)."""
        if all(a is b for a, b in zip(residuals, self.jaxpr.consts)):
            return self
        jaxpr = ClosedJaxpr(self.jaxpr.jaxpr, residuals)
        return _Linearized(
            self.primals_out,
            jaxpr,
            self.in_avals,
            self.out_avals,
            self.in_nonzero,
            self.out_nonzero,
        )

    def jvp(self, tangents: Sequence[Any]) -> list[Any]:
        """Output tangents (symbolic `Zero`s where known zero) for input tangents."""
        args = [instantiate_zeros(t) for t, nz in zip(tangents, self.in_nonzero) if nz]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *args))
        return [next(outs) if nz else Zero(a) for a, nz in zip(self.out_avals, self.out_nonzero)]

    def transpose(self, cts: Sequence[Any]) -> list[Any]:
        """Input cotangents (symbolic `Zero`s where zero) for output cotangents."""
        jaxpr = self.jaxpr.jaxpr
        undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
        cts_nz = partition_list(self.out_nonzero, cts)[1]
        cts_in = iter(backward_pass(jaxpr, self.jaxpr.consts, undefined, cts_nz))
        return [next(cts_in) if nz else Zero(a) for a, nz in zip(self.in_avals, self.in_nonzero)]


def _prune(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drops the tangent equations no output needs, and the residuals they alone read."""
    jaxpr = closed.jaxpr
    pruned, _ = dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
    if len(pruned.eqns) == len(jaxpr.eqns):
        return closed
    used = {x for e in pruned.eqns for x in e.invars} | set(pruned.outvars)
    keep = [i for i, v in enumerate(jaxpr.constvars) if v in used]
    pruned = pruned.replace(constvars=[jaxpr.constvars[i] for i in keep])
    return ClosedJaxpr(pruned, [closed.consts[i] for i in keep])


def _linearize_flat(
    fun: Callable[..., Any], primals: Sequence[Any], has_aux: bool = False
) -> tuple[_Linearized, Any]:
    """Linearizes a function of flat arguments at `primals` (see `_Linearized`).

    Returns:
      `(linearized, aux)` (aux is None without `has_aux`).
    """
    in_avals = [tangent_aval(get_aval(p)) for p in primals]
    in_nonzero = [a.dtype != dtypes.float0 for a in in_avals]
    aux = None
    with _LinearizeTrace(parent=current_trace()) as lt:
        tangents = [lt.new_arg(a) if nz else Zero(a) for a, nz in zip(in_avals, in_nonzero)]
        with JVPTrace(lt) as jt:
            outs = fun(*[JVPTracer(jt, p, t) for p, t in zip(primals, tangents)])
            if has_aux:
                outs, aux = outs
            pairs = [jt.to_primal_tangent(o) for o in outs]
            if has_aux:
                aux = _strip_tangents(jt, aux)
        out_tangents = [t for _, t in pairs]
        out_nonzero = [type(t) is not Zero for t in out_tangents]
        jaxpr = _prune(lt.to_jaxpr([t for t in out_tangents if type(t) is not Zero]))
    if discharge.has_state(jaxpr):
        # Tangent references: the linear map reads and writes them; as a pure
        # jaxpr it transposes like any other.
        jaxpr = discharge.discharge_state(jaxpr)[0]
    out_avals = [tangent_aval(get_aval(p)) for p, _ in pairs]
    lin = _Linearized([p for p, _ in pairs], jaxpr, in_avals, out_avals, in_nonzero, out_nonzero)
    return lin, aux


# ---------------------------------------------------------------------------
# Jaxpr-to-jaxpr transformations, for higher-order primitives


def jvp_jaxpr(
    closed: ClosedJaxpr,
    nonzeros: Sequence[bool],
    instantiate: bool | Sequence[bool],
) -> tuple[ClosedJaxpr, list[bool]]:
    """The jvp of a jaxpr, as a jaxpr.

    Args:
      closed: the jaxpr to differentiate.
      nonzeros: one bool per input: does it have a (nonzero) tangent?
      instantiate: one bool (or one per output): give the output a tangent
        even if it is a symbolic zero.

    Returns:
      `(jvp_closed, out_nonzeros)`: `jvp_closed` takes the primal inputs then
      the tangents of the `nonzeros` inputs, and returns the primal outputs
      then the tangents of the `out_nonzeros` outputs. Cached, keyed weakly on
      `closed`.
    """
    n_out = len(closed.jaxpr.outvars)
    if isinstance(instantiate, bool):
        instantiate = (instantiate,) * n_out
    jaxpr, out_nz = _jvp_jaxpr(closed, tuple(map(bool, nonzeros)), tuple(map(bool, instantiate)))
    return jaxpr, list(out_nz)


@weakref_lru_cache(maxsize=4096)
def _jvp_jaxpr(
    closed: ClosedJaxpr, nonzeros: tuple[bool, ...], instantiate: tuple[bool, ...]
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    in_avals = closed.in_avals
    n = len(in_avals)
    t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    out_nz_box: list[tuple[bool, ...]] = []

    def fun(*args: Any) -> list[Any]:
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [
            next(nz_tangents) if nz else Zero(tangent_aval(a)) for a, nz in zip(in_avals, nonzeros)
        ]
        outs_p, outs_t = jvp_flat(
            jaxpr_as_fun(closed), primals, tangents, instantiate=list(instantiate)
        )
        out_nz = tuple(type(t) is not Zero for t in outs_t)
        out_nz_box.append(out_nz)
        return [*outs_p, *(t for t in outs_t if type(t) is not Zero)]

    jvp_closed = trace_to_jaxpr(fun, [*in_avals, *t_avals], closed.jaxpr.debug_info)
    return jvp_closed, out_nz_box[0]


def transpose_jaxpr(
    closed: ClosedJaxpr,
    linear: Sequence[bool],
    ct_nonzeros: Sequence[bool],
) -> tuple[ClosedJaxpr, list[bool]]:
    """The transpose of a jaxpr linear in some of its inputs, as a jaxpr.

    Args:
      closed: the jaxpr.
      linear: one bool per input: is it a linear input (to be transposed)?
      ct_nonzeros: one bool per output: does it get a (nonzero) cotangent?

    Returns:
      `(transposed, ct_in_nonzeros)`: `transposed` takes the non-linear inputs
      then the nonzero output cotangents, and returns the cotangents of the
      linear inputs flagged in `ct_in_nonzeros` (one bool per linear input).
      Cached, keyed weakly on `closed`.
    """
    jaxpr, ct_nz = _transpose_jaxpr(closed, tuple(map(bool, linear)), tuple(map(bool, ct_nonzeros)))
    return jaxpr, list(ct_nz)


@weakref_lru_cache(maxsize=4096)
def _transpose_jaxpr(
    closed: ClosedJaxpr, linear: tuple[bool, ...], ct_nonzeros: tuple[bool, ...]
) -> tuple[ClosedJaxpr, tuple[bool, ...]]:
    in_avals = closed.in_avals
    known_avals = partition_list(linear, in_avals)[0]
    ct_avals = [tangent_aval(a) for a, nz in zip(closed.out_avals, ct_nonzeros) if nz]
    n_known = len(known_avals)
    ct_nz_box: list[tuple[bool, ...]] = []

    def fun(*args: Any) -> list[Any]:
        known, cts_nz = iter(args[:n_known]), iter(args[n_known:])
        primals = [UndefinedPrimal(a) if lin else next(known) for a, lin in zip(in_avals, linear)]
        cts = [
            next(cts_nz) if nz else Zero(tangent_aval(a))
            for a, nz in zip(closed.out_avals, ct_nonzeros)
        ]
        cts_in = backward_pass(closed.jaxpr, closed.consts, primals, cts)
        cts_lin = partition_list(linear, cts_in)[1]
        ct_nz_box.append(tuple(type(ct) is not Zero for ct in cts_lin))
        return [ct for ct in cts_lin if type(ct) is not Zero]

    transposed = trace_to_jaxpr(fun, [*known_avals, *ct_avals], closed.jaxpr.debug_info)
    return transposed, ct_nz_box[0]
