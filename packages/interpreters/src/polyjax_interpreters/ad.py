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

1. `linearize` runs the jvp of a function with *partial evaluation on the
   fly*: the tangents are unknown values of a jaxpr being built, the primals
   are known. An equation reading only known values runs right away under the
   enclosing trace (so primal values stay concrete, and Python control flow
   on them works under `grad` as in JAX); an equation reading a tangent is
   recorded. The result is the primal output and a *linear* jaxpr from input
   tangents to output tangents, whose constants are the residuals. A
   higher-order primitive such as `jit` is split by its partial-evaluation
   rule (`partial_eval.partial_eval_jaxpr_custom_rules`) into a known part
   run now and an unknown part recorded.
2. `backward_pass` transposes that linear jaxpr: it walks its equations in
   reverse, calling each primitive's transpose rule (`primitive_transposes`)
   with the output cotangents and accumulating the input cotangents with
   `add_any`; cotangents known to be zero stay symbolic and skip equations.
3. `vjp` pairs both; `grad` and `value_and_grad` are `vjp` with a cotangent
   of 1; `jacrev` maps the transpose over a basis with `vmap`, `jacfwd` maps
   the linear jaxpr itself; `hessian` is `jacfwd(jacrev)`.

Higher-order primitives get their rules from `jvp_jaxpr` and
`transpose_jaxpr` (jaxpr to jaxpr, cached), as `jit`'s do in `jit.py`.

Rule writers use `defjvp`, `defjvp2`, `defjvp_zero`, `deflinear` and
`deflinear2` (JAX's names), or register in the tables directly:

    primitive_jvps[p] = rule(primals, tangents, **params) -> (primal_out, tangent_out)
    primitive_transposes[p] = rule(ct, *args, **params) -> [ct_in or None per arg]

In a transpose rule, the linear arguments are `UndefinedPrimal(aval)`
(`is_undefined_primal(x)`); the others are known values.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractValue, ShapedArray, get_aval, shaped_abstractify
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.state import is_ref_aval
from polyjax_core.tree_util import (
    Partial,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)
from polyjax_interpreters import _ad_core, batching
from polyjax_interpreters._ad_core import (  # noqa: F401  (re-exported: _ad_core.__all__)
    JVPTrace,
    JVPTracer,
    UndefinedPrimal,
    Zero,
    _is_inexact,
    _linearize_flat,
    _Linearized,
    add_any_p,
    add_tangents,
    always_jvp,
    backward_pass,
    bind_unknown,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    deflinear2,
    instantiate_zeros,
    is_undefined_primal,
    jvp_flat,
    jvp_jaxpr,
    primitive_jvps,
    primitive_transposes,
    register_zeros_maker,
    stop_gradient,
    stop_gradient_p,
    tangent_aval,
    transpose_jaxpr,
    zeros_like_aval,
)

__all__ = sorted(
    [
        *_ad_core.__all__,
        "DidntWant",
        "DontWant",
        "GradRef",
        "GradValue",
        "VJPFunction",
        "grad",
        "hessian",
        "jacfwd",
        "jacobian",
        "jacrev",
        "jvp",
        "linear_transpose",
        "linearize",
        "value_and_grad",
        "vjp",
    ]
)


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
      >>> import polyjax.numpy as jnp
      >>> jvp(jnp.sin, (0.0,), (1.0,))
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


class _LinearInfo:
    """What the functions returned by `linearize` and `vjp` know, their residuals aside."""

    def __init__(self, lin: _Linearized, in_tree: Any, out_tree: Any, fun: Any):
        self.lin = lin
        self.n_res = len(lin.jaxpr.consts)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = [get_aval(p) for p in lin.primals_out]
        self.primal_avals: list[AbstractValue] = []
        self.fun_name = getattr(fun, "__name__", repr(fun))


def _linearized_jvp(info: _LinearInfo, *args: Any) -> Any:
    residuals, tangents = args[: info.n_res], args[info.n_res :]
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if t_tree != info.in_tree:
        raise ValueError(
            "linearized function called on tangent values inconsistent with the original "
            f"primal values: expected tree structure {info.in_tree}, got {t_tree}"
        )
    ts = []
    for a, t in zip(info.primal_avals, t_leaves):
        ta = get_aval(t)
        expected = tangent_aval(a)
        if ta.shape != a.shape or ta.dtype != expected.dtype:
            raise ValueError(
                "linearized function called on tangent values inconsistent with the "
                f"original primal values: got tangent aval {ta.str_short()} for primal "
                f"aval {a.str_short()}"
            )
        ts.append(Zero(expected) if expected.dtype == dtypes.float0 else t)
    outs = [instantiate_zeros(t) for t in info.lin.with_residuals(residuals).jvp(ts)]
    return tree_unflatten(info.out_tree, outs)


def _vjp_pullback(info: _LinearInfo, *args: Any) -> Any:
    residuals, cts = args[: info.n_res], args[info.n_res :]
    if len(cts) != 1:
        name = info.fun_name
        raise TypeError(
            f"The function returned by `jax.vjp` applied to {name} was called with "
            f"{len(cts)} arguments, but functions returned by `jax.vjp` must be called "
            f"with a single argument corresponding to the single value returned by "
            f"{name} (even if that returned value is a tuple or other container)."
        )
    ct_leaves, ct_tree = tree_flatten(cts[0])
    if ct_tree != info.out_tree:
        raise ValueError(
            "unexpected tree structure of argument to vjp function: "
            f"got {ct_tree}, but expected to match {info.out_tree}"
        )
    checked = [_check_cotangent(a, ct) for a, ct in zip(info.out_avals, ct_leaves)]
    cts_in = info.lin.with_residuals(residuals).transpose(checked)
    return tree_unflatten(info.in_tree, [instantiate_zeros(ct) for ct in cts_in])


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
      >>> import polyjax.numpy as jnp
      >>> y, f_jvp = linearize(jnp.sin, 1.0)
      >>> f_jvp(2.0)   # 2 * cos(1)
      Array(1.0806046, dtype=float32, weak_type=True)
    """
    flat_fun, leaves = _flatten_call(fun, primals, {}, has_aux, "linearize")
    lin, aux = _linearize_flat(flat_fun, leaves, has_aux)
    info = _LinearInfo(lin, tree_structure(tuple(primals)), flat_fun.out_tree, fun)
    info.primal_avals = [get_aval(p) for p in leaves]
    # A pytree whose leaves are the residuals, so it can be passed to jitted functions.
    f_jvp = Partial(functools.partial(_linearized_jvp, info), *lin.jaxpr.consts)
    out_tree = flat_fun.out_tree
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
      >>> import polyjax.numpy as jnp
      >>> y, f_vjp = vjp(jnp.sin, 1.0)
      >>> f_vjp(1.0)   # (cos(1),)
      (Array(0.5403023, dtype=float32, weak_type=True),)
    """
    out, aux, lin, leaves, flat_fun = _vjp(fun, primals, has_aux)
    info = _LinearInfo(lin, tree_structure(tuple(primals)), flat_fun.out_tree, fun)
    # A pytree whose leaves are the residuals (JAX's `Partial`), so it can be
    # passed to jitted functions or returned as residuals of a custom_vjp.
    vjp_fn = VJPFunction(functools.partial(_vjp_pullback, info), *lin.jaxpr.consts)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# ---------------------------------------------------------------------------
# Routing a pullback's cotangents: `vjp_fn.with_refs(...)`, and its markers (`polyjax.ad`)


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """`with_refs` marker: return this primal's cotangent (what a plain call does)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """`with_refs` marker: this primal's cotangent is not wanted (`DidntWant()` comes back)."""


@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """What `with_refs` returns for a primal whose cotangent went into a Ref (no leaves)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """What `with_refs` returns for a primal marked `DontWant()` (no leaves)."""


def _register_empty_node(cls: type) -> None:
    register_pytree_node(cls, lambda _: ((), None), lambda _, __: cls())


# Pytrees with nothing in them, as in JAX.
_register_empty_node(GradRef)
_register_empty_node(DidntWant)


class VJPFunction(Partial):
    """The pullback `vjp` returns: ``vjp_fn(ct)`` gives one cotangent per primal.

    ``vjp_fn.with_refs(*targets)(ct)`` routes them instead: ``targets`` has the
    primals' structure, and each leaf is a `Ref` (the cotangent is added into
    it: ``ref[...] += ct``; `GradRef()` comes back), `DontWant()` (`DidntWant()`
    comes back) or `GradValue()` (the cotangent comes back), as in JAX.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> _, f_vjp = polyjax.vjp(lambda x, w: jnp.sum(x * w), jnp.ones(2), jnp.ones(2))
      >>> acc = polyjax.new_ref(jnp.zeros(2))
      >>> f_vjp.with_refs(acc, polyjax.ad.DontWant())(3.0)
      (GradRef(), DidntWant())
      >>> acc[...]
      Array([3., 3.], dtype=float32)
    """

    def with_refs(self, *targets: Any) -> Callable[[Any], Any]:
        """The pullback, routing each primal's cotangent as ``targets`` says."""
        return functools.partial(_route_cotangents, self, targets)


register_pytree_node(
    VJPFunction,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: VJPFunction(func, *children[0], **children[1]),
)


def _route_cotangents(pullback: VJPFunction, targets: tuple[Any, ...], ct: Any) -> Any:
    cts = pullback(ct)
    ct_leaves, ct_tree = tree_flatten(cts)
    target_leaves, target_tree = tree_flatten(targets)
    if target_tree != ct_tree:
        raise ValueError(
            "vjp's with_refs takes one target (a Ref, DontWant() or GradValue()) per "
            f"primal, in the primals' structure {ct_tree}; got {target_tree}"
        )
    routed: list[Any] = []
    for target, value in zip(target_leaves, ct_leaves):
        if isinstance(target, DontWant):
            routed.append(DidntWant())
        elif isinstance(target, GradValue):
            routed.append(value)
        elif is_ref_aval(get_aval(target)):
            target[...] += value
            routed.append(GradRef())
        else:
            raise TypeError(
                "vjp's with_refs targets are Refs, DontWant() or GradValue(); got "
                f"{type(target).__name__}"
            )
    return tree_unflatten(ct_tree, routed)


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
      >>> import polyjax.numpy as jnp
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
      >>> import polyjax.numpy as jnp
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
# Jacobians


def _reshape(x: Any, shape: tuple[Any, ...]) -> Any:
    if get_aval(x).shape == shape:
        return x
    return batching._op("reshape")(x, shape)


def _std_basis(aval: AbstractValue) -> np.ndarray:
    """The `size` unit vectors of `aval`'s space, stacked: shape `(size, *aval.shape)`."""
    n = int(np.prod(aval.shape, dtype=np.int64))  # type: ignore[arg-type]  # jacobians: concrete sizes
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
      >>> import polyjax.numpy as jnp
      >>> jacfwd(lambda x: x * x)(jnp.arange(3.0)).shape
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
      >>> import polyjax.numpy as jnp
      >>> jacrev(lambda x: x * x)(jnp.arange(3.0)).shape
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
      >>> import polyjax.numpy as jnp
      >>> print(hessian(lambda x: (x * x * x).sum())(jnp.arange(3.0)))   # diag(6 x)
      [[ 0.  0.  0.]
       [ 0.  6.  0.]
       [ 0.  0. 12.]]
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
      >>> import numpy as np
      >>> import polyjax.numpy as jnp
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
