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
from polyjax_core.abstract_values import AbstractValue, ShapedArray, get_aval
from polyjax_core.jaxpr import Jaxpr, Literal, Var
from polyjax_core.primitive import Primitive
from polyjax_core.rules import RuleTable
from polyjax_core.tracing import Trace, Tracer, current_trace, set_current_trace
from polyjax_interpreters import dispatch, mlir

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
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
    from polyjax_core.tree_util import tree_map

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
    from polyjax_core.tree_util import tree_map

    return tree_map(lambda x: x.primal if type(x) is JVPTracer and x._trace is trace else x, tree)


# ---------------------------------------------------------------------------
# Reverse mode: transposing linear jaxprs


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
                    *[x.val if type(x) is Literal else known[x] for x in eqn.invars], **eqn.params
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
            x.val if type(x) is Literal else known[x] if x in known else UndefinedPrimal(x.aval)
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
    from polyjax_core.tree_util import tree_flatten, tree_unflatten

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
