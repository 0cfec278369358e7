"""Automatic differentiation: forward mode (jvp), linearization, transposition, reverse mode.

Forward mode is a trace. A `JVPTracer` carries a *primal* value and its
*tangent*; binding a primitive on such tracers looks up the primitive's jvp rule
in `primitive_jvps` and evaluates it under the parent trace, so that jvp
composes with every other transformation (jvp of jit records the jvp'd
equations into the jaxpr being built, jvp of jvp differentiates twice).

A tangent known to be zero is the symbolic `Zero(aval)`: rules skip it, and an
equation whose inputs all have zero tangents is not differentiated at all. It
becomes an array only where it must (`instantiate_zeros`), e.g. when handed back
to the user. Integer and boolean values have tangents of dtype `float0`.

Reverse mode is built from forward mode:

1. `linearize` traces the jvp of a function to a jaxpr, then splits it with
   partial evaluation into the part computing primal values (run now) and a
   *linear* jaxpr mapping input tangents to output tangents.
2. `backward_pass` transposes that linear jaxpr: it walks its equations in
   reverse, calling each primitive's transpose rule (`primitive_transposes`)
   with the output cotangents and accumulating the input cotangents.
3. `vjp` pairs both; `grad`, `value_and_grad`, `jacrev` are built on `vjp`,
   and `jacfwd` on `jvp` and `vmap`.

Rule writers use `defjvp`, `defjvp2`, `defjvp_zero`, `deflinear` and
`deflinear2` (JAX's names), or register in the tables directly:

    primitive_jvps[p] = rule(primals, tangents, **params) -> (primal_out, tangent_out)
    primitive_transposes[p] = rule(ct, *args, **params) -> [ct_in or None per arg]

In a transpose rule, the linear arguments are `UndefinedPrimal(aval)`
(`is_undefined_primal(x)`); the others are known values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractValue, ShapedArray, get_aval, shaped_abstractify
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from polyjax_core.jaxpr_eval import eval_jaxpr, jaxpr_as_fun
from polyjax_core.jaxpr_tracing import JaxprTrace, JaxprTracer, trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.rules import RuleTable
from polyjax_core.tracing import Trace, Tracer, current_trace, set_current_trace
from polyjax_core.tree_util import (
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from polyjax_interpreters import batching, dispatch, mlir
from polyjax_interpreters import partial_eval as pe

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "linear_transpose",
    "linearize",
    "value_and_grad",
    "vjp",
    "add_tangents",
    "backward_pass",
    "defjvp",
    "defjvp2",
    "defjvp_zero",
    "deflinear",
    "deflinear2",
    "instantiate_zeros",
    "is_undefined_primal",
    "jvp",
    "jvp_flat",
    "jvp_jaxpr",
    "transpose_jaxpr",
    "primitive_jvps",
    "primitive_transposes",
    "register_zeros_maker",
    "stop_gradient",
    "stop_gradient_p",
    "tangent_aval",
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
    boolean values have `float0` tangents of the same shape.
    """
    if _is_inexact(aval.dtype) or aval.dtype == dtypes.float0:
        return aval
    return ShapedArray(aval.shape, dtypes.float0)


class Zero:
    """A symbolic zero tangent or cotangent of type `aval`, never materialized.

    Example:
      >>> Zero(ShapedArray((3,), np.float32))
      Zero(f32[3])
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
    """An array of zeros of type `aval` (a NumPy array for `float0`)."""
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
      >>> defjvp(sin_p, lambda g, x: mul(g, cos(x)))
    """

    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        if not _is_float_out(prim, ans):
            return ans, _zero_tangents_like(prim, ans)
        contributions = [
            fn(t, *primals, **params)
            for fn, t in zip(jvp_fns, tangents)
            if fn is not None and type(t) is not Zero
        ]
        return ans, _sum_contributions(prim, ans, contributions)

    primitive_jvps[prim] = rule


def defjvp2(prim: Primitive, *jvp_fns: Callable[..., Any] | None) -> None:
    """Like `defjvp`, but each function also gets the output: `fn(tangent, ans, *primals)`.

    Example:
      >>> defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
    """

    def rule(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
        ans = prim.bind(*primals, **params)
        if not _is_float_out(prim, ans):
            return ans, _zero_tangents_like(prim, ans)
        contributions = [
            fn(t, ans, *primals, **params)
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
    if all(type(t) is Zero for t in tangents):
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
      >>> grad(lambda x: x * stop_gradient(x))(3.0)
      Array(3., dtype=float32, weak_type=True)
    """

    def stop(leaf: Any) -> Any:
        if not _is_inexact(get_aval(leaf).dtype):
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


class JVPTrace(Trace):
    """Forward-mode differentiation: primitives apply their jvp rules under the parent."""

    def to_primal_tangent(self, x: Any) -> tuple[Any, Any]:
        """`(primal, tangent)` of `x`; a value not of this trace has a zero tangent."""
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
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
        with set_current_trace(self.parent):
            if not nonzero:
                # Nothing to differentiate: the result is a constant of this trace.
                return primitive.bind(*primals, **params)
            tangents = [
                Zero.from_primal_value(p) if t is None else t for p, t in zip(primals, tangents)
            ]
            primal_out, tangent_out = primitive_jvps[primitive](primals, tangents, **params)
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
    for v, x in zip(jaxpr.invars, primals_in):
        if type(x) is not UndefinedPrimal:
            known[v] = x

    # Forward: evaluate what does not depend on the linear inputs.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if all(type(x) is Literal or x in known for x in eqn.invars):
            with si.user_context(eqn.source_info):
                ans = eqn.primitive.bind(
                    *[_literal(x) if type(x) is Literal else known[x] for x in eqn.invars],
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
# The public forward-mode API


def _wraps(fun: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Like `functools.wraps`, without copying `fun.__dict__` (a jitted function's state)."""
    return functools.wraps(fun, updated=())


def _dtype_name(dtype: Any) -> str:
    return "float0" if dtype == dtypes.float0 else str(dtype.name)


def _check_tangent(primal: Any, tangent: Any) -> Any:
    """Checks a user tangent against its primal; returns it (`Zero` for float0)."""
    p_aval = get_aval(primal)
    t_aval = get_aval(tangent)
    expected = tangent_aval(p_aval).dtype
    if t_aval.dtype != expected:
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, "
            "or in case of int/bool primal dtype the tangent dtype must be float0."
            f"Got primal dtype {_dtype_name(p_aval.dtype)} and so expected tangent dtype "
            f"{_dtype_name(expected)}, but got tangent dtype {_dtype_name(t_aval.dtype)} "
            "instead."
        )
    if p_aval.shape != t_aval.shape:
        raise ValueError(
            "jvp called with different primal and tangent shapes;"
            f"Got primal shape {p_aval.shape} and tangent shape as {t_aval.shape}"
        )
    if expected == dtypes.float0:
        return Zero(tangent_aval(p_aval))
    return tangent


def jvp(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
) -> Any:
    """Computes `fun(*primals)` and its derivative along `tangents` (forward mode).

    Args:
      fun: a function of arrays (pytrees) returning arrays (a pytree).
      primals: a tuple or list of the arguments: the point to differentiate at.
      tangents: a tuple or list with the same structure, shapes and dtypes
        (`float0` for integer and boolean primals).
      has_aux: `fun` returns `(output, aux)`; aux is returned undifferentiated.

    Returns:
      `(primals_out, tangents_out)`, or `(primals_out, tangents_out, aux)`.

    Raises:
      TypeError: `primals`/`tangents` are not tuples or lists, or do not match.

    Example:
      >>> jvp(sin, (0.0,), (1.0,))
      (Array(0., dtype=float32, weak_type=True), Array(1., dtype=float32, weak_type=True))
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        bad = primals if not isinstance(primals, tuple | list) else tangents
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; "
            f"found {type(bad).__name__}."
        )
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {tree_p} whereas tangents have tree structure {tree_t}."
        )
    flat_t = [_check_tangent(p, t) for p, t in zip(flat_p, flat_t)]
    out_tree_box: list[Any] = []

    def flat_fun(*args: Any) -> Any:
        out = fun(*tree_unflatten(tree_p, args))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError(
                    "jvp with has_aux=True requires the function to return a pair "
                    f"(output, aux), got {type(out).__name__}"
                )
            out, aux = out
        leaves, tree = tree_flatten(out)
        out_tree_box.append(tree)
        return (leaves, aux) if has_aux else leaves

    res = jvp_flat(flat_fun, flat_p, flat_t, has_aux=has_aux)
    out_tree = out_tree_box[0]
    primals_out = tree_unflatten(out_tree, res[0])
    tangents_out = tree_unflatten(out_tree, res[1])
    if has_aux:
        return primals_out, tangents_out, res[2]
    return primals_out, tangents_out


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
            with set_current_trace(self.parent):
                return primitive.bind(*args, **params)
        rule = pe.partial_eval_jaxpr_custom_rules.get(primitive)
        if rule is None:
            return super().process_primitive(primitive, args, params)
        return self._split(rule, primitive, args, params, unknowns)

    def _split(
        self, rule: Any, primitive: Any, args: tuple, params: dict, unknowns: list[bool]
    ) -> Any:
        in_vars = [Var(get_aval(x)) for x in args]
        out_avals, effects = primitive.abstract_eval(*(v.aval for v in in_vars), **params)
        if not primitive.multiple_results:
            out_avals = [out_avals]
        out_vars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(in_vars, out_vars, primitive, params, effects, si.current())
        known_eqn, unknown_eqn, _, _ = rule(unknowns, [False] * len(out_vars), eqn)
        env: dict[Var, Any] = dict(zip(in_vars, args))

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

    def jvp(self, tangents: Sequence[Any]) -> list[Any]:
        """Output tangents (symbolic `Zero`s where known zero) for input tangents."""
        args = [instantiate_zeros(t) for t, nz in zip(tangents, self.in_nonzero) if nz]
        outs = iter(eval_jaxpr(self.jaxpr.jaxpr, self.jaxpr.consts, *args))
        return [next(outs) if nz else Zero(a) for a, nz in zip(self.out_avals, self.out_nonzero)]

    def transpose(self, cts: Sequence[Any]) -> list[Any]:
        """Input cotangents (symbolic `Zero`s where zero) for output cotangents."""
        jaxpr = self.jaxpr.jaxpr
        undefined = [UndefinedPrimal(v.aval) for v in jaxpr.invars]
        cts_nz = [ct for ct, nz in zip(cts, self.out_nonzero) if nz]
        cts_in = iter(backward_pass(jaxpr, self.jaxpr.consts, undefined, cts_nz))
        return [next(cts_in) if nz else Zero(a) for a, nz in zip(self.in_avals, self.in_nonzero)]


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
        jaxpr = lt.to_jaxpr([t for t in out_tangents if type(t) is not Zero])
    out_avals = [tangent_aval(get_aval(p)) for p, _ in pairs]
    lin = _Linearized([p for p, _ in pairs], jaxpr, in_avals, out_avals, in_nonzero, out_nonzero)
    return lin, aux


# ---------------------------------------------------------------------------
# Pytree plumbing shared by the public functions


class _FlatFun:
    """`fun` over flat leaves (tree `in_tree`); records its output structure(s).

    With `has_aux`, `fun` returns `(output, aux)`; the flat function returns
    `(leaves, aux)` and `aux` is kept as a pytree.
    """

    def __init__(self, fun: Callable[..., Any], in_tree: Any, has_aux: bool, name: str):
        self.fun = fun
        self.in_tree = in_tree
        self.has_aux = has_aux
        self.name = name
        self.out_tree: Any = None

    def __call__(self, *leaves: Any) -> Any:
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        out = self.fun(*args, **kwargs)
        if self.has_aux:
            if not (isinstance(out, tuple | list) and len(out) == 2):
                raise TypeError(
                    f"{self.name} with has_aux=True requires the function to return a pair "
                    f"(output, auxiliary data), got {type(out).__name__} with value {out!r}"
                )
            out, aux = out
        leaves_out, self.out_tree = tree_flatten(out)
        return (leaves_out, aux) if self.has_aux else leaves_out


def _flatten_call(
    fun: Callable[..., Any], args: Sequence[Any], kwargs: dict, has_aux: bool, name: str
) -> tuple[_FlatFun, list[Any]]:
    leaves, in_tree = tree_flatten((tuple(args), kwargs))
    return _FlatFun(fun, in_tree, has_aux, name), leaves


# ---------------------------------------------------------------------------
# linearize and vjp


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Evaluates `fun` at `primals` and returns its derivative there as a linear function.

    The primal computation runs now; the returned `f_jvp` evaluates only the
    linear (tangent) part, from the residuals saved by the primal computation.

    Args:
      fun: a function of arrays (pytrees) returning arrays (a pytree).
      *primals: the point.
      has_aux: `fun` returns `(output, aux)`.

    Returns:
      `(primals_out, f_jvp)` or `(primals_out, f_jvp, aux)`, where
      `f_jvp(*tangents)` returns the output tangents.

    Example:
      >>> y, f_jvp = linearize(sin, 1.0)
      >>> f_jvp(2.0)   # 2 * cos(1)
    """
    flat_fun, leaves = _flatten_call(fun, primals, {}, has_aux, "linearize")
    lin, aux = _linearize_flat(flat_fun, leaves, has_aux)
    out_tree = flat_fun.out_tree
    in_tree = tree_structure(tuple(primals))
    p_avals = [get_aval(p) for p in leaves]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != in_tree:
            raise ValueError(
                f"linearized function called on tangent values inconsistent with the original "
                f"primal values: expected tree structure {in_tree}, got {t_tree}"
            )
        ts = []
        for a, t in zip(p_avals, t_leaves):
            ta = get_aval(t)
            expected = tangent_aval(a)
            if ta.shape != a.shape or ta.dtype != expected.dtype:
                raise ValueError(
                    "linearized function called on tangent values inconsistent with the "
                    f"original primal values: got tangent aval {ta.str_short()} for primal "
                    f"aval {a.str_short()}"
                )
            ts.append(Zero(expected) if expected.dtype == dtypes.float0 else t)
        outs = [instantiate_zeros(t) for t in lin.jvp(ts)]
        return tree_unflatten(out_tree, outs)

    primals_out = tree_unflatten(out_tree, lin.primals_out)
    return (primals_out, f_jvp, aux) if has_aux else (primals_out, f_jvp)


def _vjp(
    fun: Callable[..., Any], primals: Sequence[Any], has_aux: bool, name: str = "vjp"
) -> tuple[Any, Any, _Linearized, Any, _FlatFun]:
    flat_fun, leaves = _flatten_call(fun, primals, {}, has_aux, name)
    lin, aux = _linearize_flat(flat_fun, leaves, has_aux)
    return tree_unflatten(flat_fun.out_tree, lin.primals_out), aux, lin, leaves, flat_fun


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """Evaluates `fun` at `primals` and returns its vector-Jacobian product function.

    Args:
      fun: a function of arrays (pytrees) returning arrays (a pytree).
      *primals: the point.
      has_aux: `fun` returns `(output, aux)`.

    Returns:
      `(primals_out, vjp_fn)` or `(primals_out, vjp_fn, aux)`. `vjp_fn(ct)`
      takes a cotangent with the structure of `primals_out` and returns a
      tuple with one cotangent per primal (`float0` zeros for integer ones).

    Example:
      >>> y, f_vjp = vjp(sin, 1.0)
      >>> f_vjp(1.0)   # (cos(1),)
    """
    out, aux, lin, leaves, flat_fun = _vjp(fun, primals, has_aux)
    in_tree = tree_structure(tuple(primals))
    out_tree = flat_fun.out_tree
    out_avals = [get_aval(p) for p in lin.primals_out]
    fun_name = getattr(fun, "__name__", repr(fun))

    def vjp_fn(*cts: Any) -> Any:
        if len(cts) != 1:
            raise TypeError(
                f"The function returned by `jax.vjp` applied to {fun_name} was called with "
                f"{len(cts)} arguments, but functions returned by `jax.vjp` must be called "
                f"with a single argument corresponding to the single value returned by "
                f"{fun_name} (even if that returned value is a tuple or other container)."
            )
        ct_leaves, ct_tree = tree_flatten(cts[0])
        if ct_tree != out_tree:
            raise ValueError(
                "unexpected tree structure of argument to vjp function: "
                f"got {ct_tree}, but expected to match {out_tree}"
            )
        checked = [_check_cotangent(a, ct) for a, ct in zip(out_avals, ct_leaves)]
        cts_in = [instantiate_zeros(ct) for ct in lin.transpose(checked)]
        return tree_unflatten(in_tree, cts_in)

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _check_cotangent(primal_aval: AbstractValue, ct: Any) -> Any:
    expected = tangent_aval(primal_aval)
    if type(ct) is Zero:
        return ct
    ct_aval = get_aval(ct)
    if ct_aval.dtype != expected.dtype:
        if expected.dtype == dtypes.float0:
            return Zero(expected)  # an integer output: its cotangent does not matter
        raise TypeError(
            f"Type of cotangent input to vjp pullback function ({_dtype_name(ct_aval.dtype)}) "
            f"is not the expected tangent type ({_dtype_name(expected.dtype)}) of corresponding "
            f"primal output with dtype {_dtype_name(primal_aval.dtype)}."
        )
    if ct_aval.shape != expected.shape:
        raise ValueError(
            f"Shape of cotangent input to vjp pullback function {ct_aval.shape} must be the "
            f"same as the shape of corresponding primal input {expected.shape}."
        )
    return ct


# ---------------------------------------------------------------------------
# grad and value_and_grad


def _argnums_tuple(argnums: Any) -> tuple[int, ...]:
    if isinstance(argnums, int | np.integer) and not isinstance(argnums, bool):
        return (int(argnums),)
    if isinstance(argnums, tuple | list) and all(
        isinstance(a, int | np.integer) and not isinstance(a, bool) for a in argnums
    ):
        return tuple(int(a) for a in argnums)
    raise TypeError(
        f"argnums must be an int or a tuple of ints, got {type(argnums).__name__}: {argnums!r}"
    )


def _check_argnums(argnums: tuple[int, ...], nargs: int, orig: Any) -> tuple[int, ...]:
    if not argnums:
        raise ValueError("argnums must be a non-empty int or tuple of ints, got ()")
    max_argnum = max(a if a >= 0 else -a - 1 for a in argnums)
    if max_argnum >= nargs:
        raise TypeError(
            f"differentiating with respect to argnums={orig} requires at least "
            f"{max_argnum + 1} positional arguments to be passed by the caller, but got only "
            f"{nargs} positional arguments."
        )
    return tuple(a % nargs for a in argnums)


def _check_input_dtype_revderiv(name: str, holomorphic: bool, allow_int: bool, x: Any) -> None:
    dtype = get_aval(x).dtype
    if isinstance(dtype, dtypes.ExtendedDType):
        return
    if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} with holomorphic=True requires inputs with complex dtype, "
            f"but got {_dtype_name(dtype)}."
        )
    if not allow_int and not _is_inexact(dtype):
        raise TypeError(
            f"{name} requires real- or complex-valued inputs (input dtype that is a "
            f"sub-dtype of np.inexact), but got {_dtype_name(dtype)}. If you want to use "
            "Boolean- or integer-valued inputs, use vjp or set allow_int to True."
        )


def _check_output_dtype_revderiv(name: str, holomorphic: bool, x: Any) -> None:
    dtype = get_aval(x).dtype
    if isinstance(dtype, dtypes.ExtendedDType):
        raise TypeError(f"{name} with output element type {dtype}")
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, "
                f"but got {_dtype_name(dtype)}."
            )
        return
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(dtype)}. For holomorphic differentiation, "
            "pass holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(dtype)}. For differentiation of functions "
            "with integer outputs, use jax.vjp directly."
        )


def _check_scalar(x: Any) -> None:
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {x}."
        ) from None
    if aval.shape != ():
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}."
        )


def _one_like(aval: AbstractValue) -> Any:
    """The cotangent 1 of a scalar output: weakly typed if the output is (as in JAX)."""
    if aval.weak_type:
        one = complex(1) if dtypes.issubdtype(aval.dtype, np.complexfloating) else 1.0
        if get_aval(one) == aval:  # a Python scalar is weakly typed, of the default width
            return one
    return np.ones((), aval.dtype)


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function evaluating `fun` and its gradient with respect to `argnums`.

    Args:
      fun: a function of arrays (pytrees) returning a scalar (with `has_aux`,
        a pair `(scalar, aux)`).
      argnums: the position(s) of the positional argument(s) to differentiate.
      has_aux: `fun` returns `(output, aux)`; aux is returned with the value.
      holomorphic: `fun` is holomorphic (complex inputs and output).
      allow_int: allow integer/boolean inputs (their gradient is `float0` zeros).
      reduce_axes: not supported (must be empty, as in current JAX).

    Returns:
      A function returning `(value, gradient)`, or `((value, aux), gradient)`;
      the gradient has the structure of the argument (a tuple of them when
      `argnums` is a tuple).

    Raises:
      TypeError: non-scalar or non-float output, integer input without
        `allow_int`, too few positional arguments for `argnums`.

    Example:
      >>> value_and_grad(lambda x: x * x)(3.0)
      (Array(9., dtype=float32, weak_type=True), Array(6., dtype=float32, weak_type=True))
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    argnums_t = _argnums_tuple(argnums)
    single = isinstance(argnums, int | np.integer)

    @_wraps(fun)
    @si.api_boundary
    def value_and_grad_f(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums_t, len(args), argnums)
        diff_args = [args[i] for i in nums]
        for leaf in tree_leaves(diff_args):
            _check_input_dtype_revderiv("grad", holomorphic, allow_int, leaf)

        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full, **kwargs)

        flat_fun, leaves = _flatten_call(partial_fun, diff_args, {}, has_aux, "grad")
        lin, aux = _linearize_flat(flat_fun, leaves, has_aux)
        out = tree_unflatten(flat_fun.out_tree, lin.primals_out)
        _check_scalar(out)
        _check_output_dtype_revderiv("grad", holomorphic, out)
        (ans,) = lin.primals_out
        ct = _one_like(get_aval(ans))
        cts_in = [instantiate_zeros(c) for c in lin.transpose([ct])]
        grads = tree_unflatten(tree_structure(tuple(diff_args)), cts_in)
        g = grads[0] if single else grads
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_f


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable[..., Any]:
    """A function evaluating the gradient of the scalar function `fun`.

    Args:
      fun: a function of arrays (pytrees) returning a scalar (with `has_aux`,
        a pair `(scalar, aux)`).
      argnums: the position(s) of the positional argument(s) to differentiate.
      has_aux: `fun` returns `(output, aux)`; the gradient function returns
        `(gradient, aux)`.
      holomorphic: `fun` is holomorphic (complex inputs and output).
      allow_int: allow integer/boolean inputs (their gradient is `float0` zeros).
      reduce_axes: not supported.

    Returns:
      A function with `fun`'s arguments returning the gradient: the structure
      of the argument at `argnums` (a tuple of them for a tuple `argnums`).

    Example:
      >>> grad(lambda x: x * x)(3.0)
      Array(6., dtype=float32, weak_type=True)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes)

    @_wraps(fun)
    @si.api_boundary
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return grad_f


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
    known_avals = [a for a, lin in zip(in_avals, linear) if not lin]
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
        cts_lin = [ct for ct, lin in zip(cts_in, linear) if lin]
        ct_nz_box.append(tuple(type(ct) is not Zero for ct in cts_lin))
        return [ct for ct in cts_lin if type(ct) is not Zero]

    transposed = trace_to_jaxpr(fun, [*known_avals, *ct_avals], closed.jaxpr.debug_info)
    return transposed, ct_nz_box[0]


# ---------------------------------------------------------------------------
# Jacobians


def _reshape(x: Any, shape: tuple[Any, ...]) -> Any:
    if get_aval(x).shape == shape:
        return x
    return batching._op("reshape")(x, shape)


def _std_basis(aval: AbstractValue) -> np.ndarray:
    """The `size` unit vectors of `aval`'s space, stacked: shape `(size, *aval.shape)`."""
    n = int(np.prod(aval.shape, dtype=np.int64))
    return np.eye(n, dtype=aval.dtype).reshape((n, *aval.shape))


def _zeros_block(shape: tuple[Any, ...], dtype: Any) -> Any:
    return zeros_like_aval(ShapedArray(shape, dtype))


def _jac_fwd_columns(lin: _Linearized, i: int, in_aval: AbstractValue) -> list[Any]:
    """d(every output)/d(input i), by pushing input i's basis through the linear map."""
    flags: list[list[bool]] = []

    def push(t: Any) -> list[Any]:
        tangents = [t if k == i else Zero(a) for k, a in enumerate(lin.in_avals)]
        outs = lin.jvp(tangents)
        flags.append([type(o) is not Zero for o in outs])
        return [o for o in outs if type(o) is not Zero]

    cols = iter(batching.vmap(push, in_axes=0, out_axes=-1)(_std_basis(in_aval)))
    blocks = []
    for out_aval, nz in zip(lin.out_avals, flags[0]):
        shape = (*out_aval.shape, *in_aval.shape)
        blocks.append(_reshape(next(cols), shape) if nz else _zeros_block(shape, out_aval.dtype))
    return blocks


def _jac_rev_rows(lin: _Linearized, j: int, out_aval: AbstractValue) -> list[Any]:
    """d(output j)/d(every input), by pulling output j's basis back through the linear map."""
    flags: list[list[bool]] = []

    def pull(ct: Any) -> list[Any]:
        cts = [ct if k == j else Zero(a) for k, a in enumerate(lin.out_avals)]
        ins = lin.transpose(cts)
        flags.append([type(c) is not Zero for c in ins])
        return [c for c in ins if type(c) is not Zero]

    rows = iter(batching.vmap(pull)(_std_basis(out_aval)))
    blocks = []
    for in_aval, nz in zip(lin.in_avals, flags[0]):
        shape = (*out_aval.shape, *in_aval.shape)
        blocks.append(_reshape(next(rows), shape) if nz else _zeros_block(shape, in_aval.dtype))
    return blocks


def _check_input_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    dtype = get_aval(x).dtype
    if isinstance(dtype, dtypes.ExtendedDType):
        return
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "jacfwd with holomorphic=True requires inputs with complex dtype, "
                f"but got {_dtype_name(dtype)}."
            )
    elif not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(dtype)}. For holomorphic differentiation, "
            "pass holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex inputs or integer inputs, use jax.jvp directly."
        )


def _check_output_dtype_jacfwd(holomorphic: bool, x: Any) -> None:
    dtype = get_aval(x).dtype
    if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            "jacfwd with holomorphic=True requires outputs with complex dtype, "
            f"but got {_dtype_name(dtype)}."
        )


def _jacobian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    mode: str,
) -> Callable[..., Any]:
    argnums_t = _argnums_tuple(argnums)
    single = isinstance(argnums, int | np.integer)

    @_wraps(fun)
    @si.api_boundary
    def jacfun(*args: Any, **kwargs: Any) -> Any:
        nums = _check_argnums(argnums_t, len(args), argnums)
        diff_args = tuple(args[i] for i in nums)
        for leaf in tree_leaves(diff_args):
            if mode == "jacfwd":
                _check_input_dtype_jacfwd(holomorphic, leaf)
            else:
                _check_input_dtype_revderiv(mode, holomorphic, allow_int, leaf)

        def partial_fun(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            return fun(*full, **kwargs)

        flat_fun, leaves = _flatten_call(partial_fun, diff_args, {}, has_aux, mode)
        lin, aux = _linearize_flat(flat_fun, leaves, has_aux)
        for y in lin.primals_out:
            if mode == "jacfwd":
                _check_output_dtype_jacfwd(holomorphic, y)
            else:
                _check_output_dtype_revderiv(mode, holomorphic, y)
        in_avals = [get_aval(x) for x in leaves]
        out_avals = [get_aval(y) for y in lin.primals_out]
        if mode == "jacfwd":
            cols = [_jac_fwd_columns(lin, i, a) for i, a in enumerate(in_avals)]
            rows = [[col[j] for col in cols] for j in range(len(out_avals))]
        else:
            rows = [_jac_rev_rows(lin, j, a) for j, a in enumerate(out_avals)]
        in_tree = tree_structure(diff_args)
        per_output = [tree_unflatten(in_tree, row) for row in rows]
        if single:
            per_output = [r[0] for r in per_output]
        jac = tree_unflatten(flat_fun.out_tree, per_output)
        return (jac, aux) if has_aux else jac

    return jacfun


def jacfwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of `fun`, computed column by column with forward mode.

    Args:
      fun: a function of arrays (pytrees) returning arrays (a pytree).
      argnums: the position(s) of the positional argument(s) to differentiate.
      has_aux: `fun` returns `(output, aux)`; the Jacobian function returns
        `(jacobian, aux)`.
      holomorphic: `fun` is holomorphic (complex inputs and outputs).

    Returns:
      A function returning the Jacobian: for each output leaf of shape `S`, the
      structure of the differentiated argument(s) with leaves of shape
      `S + leaf shape`.

    Example:
      >>> jacfwd(lambda x: x * x)(np.arange(3.0)).shape
      (3, 3)
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, False, "jacfwd")


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of `fun`, computed row by row with reverse mode.

    Args:
      fun: a function of arrays (pytrees) returning arrays (a pytree).
      argnums: the position(s) of the positional argument(s) to differentiate.
      has_aux: `fun` returns `(output, aux)`; the Jacobian function returns
        `(jacobian, aux)`.
      holomorphic: `fun` is holomorphic (complex inputs and outputs).
      allow_int: allow integer/boolean inputs (their blocks are `float0` zeros).

    Returns:
      A function returning the Jacobian, laid out as for `jacfwd`.

    Example:
      >>> jacrev(lambda x: x * x)(np.arange(3.0)).shape
      (3, 3)
    """
    return _jacobian(fun, argnums, has_aux, holomorphic, allow_int, "jacrev")


jacobian = jacrev


def hessian(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable[..., Any]:
    """The Hessian of `fun`: `jacfwd(jacrev(fun))` (forward over reverse).

    Example:
      >>> hessian(lambda x: (x * x * x).sum())(np.arange(3.0))   # diag(6 x)
    """
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )


# ---------------------------------------------------------------------------
# linear_transpose


def linear_transpose(
    fun: Callable[..., Any], *primals: Any, reduce_axes: Sequence[Any] = ()
) -> Callable[..., Any]:
    """The transpose of the linear function `fun`.

    Args:
      fun: a function linear in its arguments.
      *primals: example arguments (arrays or `ShapeDtypeStruct`s): only their
        shapes and dtypes are used.
      reduce_axes: not supported (must be empty).

    Returns:
      `f_transpose(out_cotangent)`, returning a tuple with one cotangent per
      argument of `fun`.

    Raises:
      TypeError: mixed float/integer types, or a cotangent of the wrong type.

    Example:
      >>> f_t = linear_transpose(lambda x: x * 2.0, np.float32(1.0))
      >>> f_t(np.float32(3.0))
      (Array(6., dtype=float32),)
    """
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_flatten(primals)
    in_avals = [shaped_abstractify(x) for x in leaves]
    out_tree_box: list[Any] = []

    def flat_fun(*args: Any) -> list[Any]:
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, args)))
        out_tree_box.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat_fun, in_avals)
    out_tree = out_tree_box[0]
    out_avals = closed.out_avals
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    floating = all(map(_is_inexact, in_dtypes)) and all(map(_is_inexact, out_dtypes))
    integral = not any(map(_is_inexact, in_dtypes)) and not any(map(_is_inexact, out_dtypes))
    if not (floating or integral):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and "
            f"integer -> integer functions, but got {[str(d) for d in in_dtypes]} -> "
            f"{[str(d) for d in out_dtypes]}."
        )

    @_wraps(fun)
    def transposed_fun(out_cotangent: Any) -> tuple[Any, ...]:
        cts, ct_tree = tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                "cotangent tree does not match function output, "
                f"expected {out_tree} but got {ct_tree}"
            )
        ct_avals = [get_aval(c) for c in cts]
        if not all(c.shape == o.shape and c.dtype == o.dtype for c, o in zip(ct_avals, out_avals)):
            raise TypeError(
                "cotangent type does not match function output, expected "
                f"{[a.str_short() for a in out_avals]} but got "
                f"{[a.str_short() for a in ct_avals]}"
            )
        undefined = [UndefinedPrimal(a) for a in in_avals]
        cts_in = backward_pass(closed.jaxpr, closed.consts, undefined, cts)
        return tuple(tree_unflatten(in_tree, [instantiate_zeros(c) for c in cts_in]))

    return transposed_fun
