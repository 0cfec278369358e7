"""Custom derivative rules: `custom_jvp` and `custom_vjp`.

A function decorated with `custom_jvp` behaves like the function itself, except
under differentiation, where the user's JVP rule replaces autodiff of its body;
`custom_vjp` does the same for reverse mode with a forward pass (`fwd`, which
saves *residuals*) and a backward pass (`bwd`, which maps residuals and output
cotangents to input cotangents).

Both are initial-style primitives (ARCHITECTURE decision 2). Called under a
trace, the function body is traced to a jaxpr and bound as

    custom_jvp_call[name call_jaxpr jvp symbolic_zeros]  (params call_jaxpr,
        jvp_jaxpr_fun, num_consts, symbolic_zeros)
    custom_vjp_call[name bwd call_jaxpr fwd symbolic_zeros]  (params call_jaxpr,
        fwd_jaxpr_thunk, bwd, num_consts, out_trees, symbolic_zeros)

whose leading `num_consts` operands are values the body closes over that
belong to an enclosing trace (hoisted out of the jaxpr so that every
transformation sees them). Outside any trace the function is just called.

Rules:
- evaluation and lowering run the body (`call_jaxpr`), never the rules;
- jvp of `custom_jvp_call` runs the user's rule under the parent trace, so a
  second derivative differentiates the rule itself;
- jvp of `custom_vjp_call` runs `fwd` and emits `custom_lin`, a linear
  primitive of the input tangents that carries `bwd`: transposing it (in
  `vjp`/`grad`) calls `bwd`. `custom_lin` cannot be evaluated, so forward mode
  of a `custom_vjp` function raises JAX's TypeError;
- batching batches the body with `batch_jaxpr` and wraps the rules so that
  they run under a batch trace (all outputs batched along axis 0).

Values a custom function closes over cannot be differentiated (the rule does
not know about them): that raises `CustomJVPException`/`CustomVJPException`,
as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from polyjax_core import axis_env, dtypes, tracing
from polyjax_core import source_info as si
from polyjax_core import vma as core_vma
from polyjax_core.abstract_values import AbstractValue, get_aval, shaped_abstractify
from polyjax_core.errors import UnexpectedTracerError
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.lists import partition_list
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer, current_trace
from polyjax_core.tree_util import (
    tree_flatten,
    tree_map,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)
from polyjax_core.wrapped_fun import debug_info
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters import partial_eval as pe

__all__ = [
    "CustomJVPException",
    "CustomVJPException",
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_lin_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


# ---------------------------------------------------------------------------
# Public helper types


class SymbolicZero:
    """A zero tangent or cotangent handed to a rule defined with `symbolic_zeros=True`.

    It stands for an array of zeros of type `aval` without materializing it;
    rules may also return one. It is not an array: check for it with
    `isinstance(t, SymbolicZero)` before computing with a tangent.

    Attributes:
      aval: the abstract value (shape and dtype) of the zero.
    """

    def __init__(self, aval: AbstractValue):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(x: Any) -> SymbolicZero:
        """The symbolic zero tangent of the value `x`."""
        return SymbolicZero(ad.tangent_aval(get_aval(x)))


def zero_from_primal(x: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for the pytree `x`: `SymbolicZero`s, or arrays of zeros.

    Example:
      >>> import polyjax.numpy  # with the array library loaded, zeros are Arrays
      >>> zero_from_primal((1.0, 2))
      (Array(0., dtype=float32, weak_type=True), array((b'',), dtype=[('float0', 'V')]))
    """

    def zero(leaf: Any) -> Any:
        aval = ad.tangent_aval(get_aval(leaf))
        return SymbolicZero(aval) if symbolic_zeros else ad.zeros_like_aval(aval)

    return tree_map(zero, x)


class CustomVJPPrimal:
    """A primal input of a `custom_vjp` fwd rule defined with `symbolic_zeros=True`.

    Attributes:
      value: the input value.
      perturbed: whether the input is being differentiated (its tangent is
        not a symbolic zero).
    """

    __slots__ = ("value", "perturbed")

    def __init__(self, value: Any, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """`tree` with each `CustomVJPPrimal` leaf replaced by its value.

    A `custom_vjp` fwd rule defined with ``symbolic_zeros=True`` receives its
    arguments wrapped in `CustomVJPPrimal` records; this gives the plain values back.

    Example:
      >>> custom_vjp_primal_tree_values({"a": CustomVJPPrimal(1.0, True), "b": 2.0})
      {'a': 1.0, 'b': 2.0}
    """
    return tree_map(
        lambda x: x.value if isinstance(x, CustomVJPPrimal) else x,
        tree,
        is_leaf=lambda x: isinstance(x, CustomVJPPrimal),
    )


class CustomJVPException(Exception):
    def __init__(self) -> None:
        super().__init__(
            "Detected differentiation of a custom_jvp function with respect to a closed-over "
            "value. That isn't supported because the custom JVP rule only specifies how to "
            "differentiate the custom_jvp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_jvp function as an argument, and "
            "adapting the custom_jvp rule."
        )


class CustomVJPException(Exception):
    def __init__(self) -> None:
        super().__init__(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input parameters. "
            "Try passing the closed-over value into the custom_vjp function as an argument, and "
            "adapting the custom_vjp fwd and bwd rules."
        )


# ---------------------------------------------------------------------------
# Shared plumbing


def _fun_name(fun: Any) -> str:
    return getattr(fun, "__name__", None) or type(fun).__name__


class _Name(str):
    """A string printed bare in jaxpr params (`jvp=f_jvp`)."""


def _resolve_kwargs(fun: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """All arguments by position, defaults filled in (rules see positional primals)."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError(
                "keyword arguments could not be resolved to positions (the function has no "
                "inspectable signature)"
            ) from None
        return args
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError("keyword arguments could not be resolved to positions")
    return tuple(bound.args)


def _nondiff_argnums(
    fun: Callable[..., Any], nondiff_argnums: Sequence[int], nondiff_argnames: Sequence[str]
) -> tuple[int, ...]:
    nums = set(int(i) for i in nondiff_argnums)
    if nondiff_argnames:
        params = list(inspect.signature(fun).parameters)
        for name in nondiff_argnames:
            if name not in params:
                raise ValueError(f"nondiff_argnames {name!r} is not a parameter of {fun}")
            nums.add(params.index(name))
    return tuple(sorted(nums))


class _NondiffTracerError(UnexpectedTracerError):
    """A tracer among the nondiff_argnums of a custom_vjp function (a message of its own)."""

    def __init__(self, msg: str):
        TypeError.__init__(self, msg)


class _Nondiff:
    """The non-differentiable arguments of one call, split into static and traced parts.

    Static leaves (functions, Python numbers, concrete arrays) reach the rules
    as they are; leaves that are tracers travel as operands of the primitive,
    so that transformations see them, and are put back by `rebuild`.
    """

    def __init__(self, values: Sequence[Any], traced_ok: bool, kind: str):
        leaves, self.tree = tree_flatten(list(values))
        self.leaves = leaves
        self.dyn_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tracer)]
        if self.dyn_pos and not traced_ok:
            raise _NondiffTracerError(
                f"Found a JAX Tracer object passed as an argument to a {kind} function in a "
                f"position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
                f"passed as non-differentiable arguments to {kind} functions; instead, "
                "nondiff_argnums should only be used for arguments that can't be or contain JAX "
                "tracers, e.g. function-valued arguments. In particular, array-valued arguments "
                "should typically not be indicated as nondiff_argnums."
            )

    @property
    def dynamic(self) -> list[Any]:
        return [self.leaves[i] for i in self.dyn_pos]

    def rebuild(self, dyn_values: Sequence[Any]) -> list[Any]:
        leaves = list(self.leaves)
        for i, v in zip(self.dyn_pos, dyn_values):
            leaves[i] = v
        return tree_unflatten(self.tree, leaves)


def _merge_args(nondiff_argnums: tuple[int, ...], nondiff: Sequence[Any], diff: Sequence[Any]):
    nondiff_it, diff_it = iter(nondiff), iter(diff)
    n = len(nondiff_argnums) + len(diff)
    return [next(nondiff_it) if i in nondiff_argnums else next(diff_it) for i in range(n)]


def _trace_body(
    fun: Callable[..., Any],
    nondiff_argnums: tuple[int, ...],
    nondiff: _Nondiff,
    diff_args: Sequence[Any],
    what: str,
) -> tuple[ClosedJaxpr, list[Any], list[Any], Any, Any]:
    """Traces `fun` on the operands `[*nondiff.dynamic, *diff leaves]`.

    Returns:
      `(call_jaxpr, hoisted, operands, in_tree, out_tree)`: the body's jaxpr
      takes `[*hoisted, *operands]`, where `hoisted` are the tracers it closes
      over (constants of enclosing traces).
    """
    diff_leaves, in_tree = tree_flatten(tuple(diff_args))
    n_dyn = len(nondiff.dyn_pos)
    operands = [*nondiff.dynamic, *diff_leaves]
    out_tree_box: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        args = tree_unflatten(in_tree, flat[n_dyn:])
        full = _merge_args(nondiff_argnums, nondiff.rebuild(flat[:n_dyn]), args)
        out_leaves, out_tree = tree_flatten(fun(*full))
        out_tree_box.append(out_tree)
        return out_leaves

    dbg = debug_info(what, fun, tuple(diff_args), {})
    closed = trace_to_jaxpr(flat_fun, [shaped_abstractify(x) for x in operands], dbg)
    closed, hoisted = pe.hoist_tracer_consts(closed)
    return closed, hoisted, operands, in_tree, out_tree_box[0]


def _is_float0(aval: AbstractValue) -> bool:
    return aval.dtype == dtypes.float0


def _tangent_in(t: Any, symbolic_zeros: bool) -> Any:
    """A tangent/cotangent as a user rule sees it."""
    if type(t) is ad.Zero:
        return SymbolicZero(t.aval) if symbolic_zeros else ad.instantiate_zeros(t)
    return t


def _type_str(aval: AbstractValue) -> str:
    return aval.strip_weak_type().str_short(short_dtypes=False)


def _same_type(a: AbstractValue, b: AbstractValue) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _eval_body(*args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _lower_body(ctx: Any, *args: Any, call_jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return mlir.jaxpr_subcomp(
        ctx.module_context, call_jaxpr.jaxpr, call_jaxpr.consts, args, ctx.dim_var_values
    )


def _body_abstract_eval(*avals: Any, call_jaxpr: ClosedJaxpr, **_: Any):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _unbatched(aval: AbstractValue, dim: int | None) -> AbstractValue:
    if dim is None:
        return aval
    return aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1 :])


def _batched(aval: AbstractValue, size: Any) -> AbstractValue:
    return aval.update(shape=(size, *aval.shape))


class _BatchScope:
    """Runs a rule under a fresh batch trace of `axis_data` (with the axis name bound)."""

    def __init__(self, axis_data: batching.AxisData):
        self.axis_data = axis_data

    def __enter__(self) -> batching.BatchTrace:
        name = self.axis_data.name
        self._env = axis_env.extend_axis_env(
            [(name, self.axis_data.size)] if name is not None else ()
        )
        self._env.__enter__()
        self._trace = batching.BatchTrace(current_trace(), self.axis_data)
        return self._trace.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._trace.__exit__(*exc)
        self._env.__exit__(*exc)


def _wrap(trace: batching.BatchTrace, x: Any, dim: int | None) -> Any:
    return x if dim is None else batching.BatchTracer(trace, x, dim)


def _at_front(axis_data: batching.AxisData, trace: batching.BatchTrace, x: Any) -> Any:
    """An output of a rule run under `trace`, as a value batched along axis 0."""
    val, dim = trace.to_batch_info(x)
    return batching.bdim_at_front(val, dim, axis_data.size)


class _UserRule:
    """A user's custom rule (a custom_jvp's jvp, a custom_vjp's fwd) over flat values,
    with what checking its results against the function needs. Printed as its name."""

    def __init__(
        self,
        rule: Callable[..., Any],
        fun_name: str,
        nondiff_argnums: tuple[int, ...],
        nondiff: _Nondiff,
        in_tree: Any,
        out_tree: Any,
        out_avals: Sequence[AbstractValue],
        symbolic_zeros: bool,
    ):
        self.rule = rule
        self.fun_name = fun_name
        self.name = _fun_name(rule)
        self.nondiff_argnums = nondiff_argnums
        self.nondiff = nondiff
        self.num_nondiff = len(nondiff.dyn_pos)
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.out_avals = list(out_avals)
        self.symbolic_zeros = symbolic_zeros

    def __str__(self) -> str:
        return self.name


# ---------------------------------------------------------------------------
# custom_jvp


class _JVPRule(_UserRule):
    """The user's JVP rule over flat values: what `custom_jvp_call` carries as `jvp_jaxpr_fun`.

    Called as `rule(nondiff_values, primals, tangents)` with flat lists
    (tangents may be `ad.Zero`); returns flat `(primals_out, tangents_out)`
    (tangents may be `ad.Zero`). Printed as the rule's name.
    """

    def __call__(
        self, nondiff_values: Sequence[Any], primals: Sequence[Any], tangents: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        primals_tree = tree_unflatten(self.in_tree, primals)
        tangents_tree = tree_unflatten(
            self.in_tree, [_tangent_in(t, self.symbolic_zeros) for t in tangents]
        )
        static = self.nondiff.rebuild(nondiff_values) if self.nondiff_argnums else []
        out = self.rule(*static, primals_tree, tangents_tree)
        if not (isinstance(out, tuple | list) and len(out) == 2):
            raise TypeError(
                f"Custom JVP rule {self.name} for function {self.fun_name} must produce a pair "
                "(list or tuple of length two) representing primal and tangent outputs, but got "
                f"{out!r}."
            )
        primal_out, tangent_out = out
        p_leaves, p_tree = tree_flatten(primal_out)
        t_leaves, t_tree = tree_flatten(tangent_out)
        if p_tree != self.out_tree:
            raise TypeError(
                f"Custom JVP rule {self.name} for function {self.fun_name} must produce a primal "
                f"output with the same container (pytree) structure as the output of the "
                f"custom_jvp-decorated function {self.fun_name}, but got {p_tree} for the rule's "
                f"primal output and {self.out_tree} for the function's output."
            )
        if t_tree != p_tree:
            raise TypeError(
                f"Custom JVP rule {self.name} for function {self.fun_name} must produce primal "
                "and tangent outputs with equal container (pytree) structures, but got "
                f"{p_tree} and {t_tree} respectively."
            )
        tangents_out = []
        for p, t, want in zip(p_leaves, t_leaves, self.out_avals):
            p_aval = get_aval(p)
            if not _same_type(p_aval, want):
                raise TypeError(
                    f"Custom JVP rule {self.name} for function {self.fun_name} must produce "
                    "primal outputs with the shapes and dtypes of the function's outputs. "
                    f"Expected {_type_str(want)} but got {_type_str(p_aval)}."
                )
            t_want = ad.tangent_aval(want)
            if isinstance(t, SymbolicZero) or type(t) is ad.Zero or _is_float0(t_want):
                tangents_out.append(ad.Zero(t_want))
                continue
            t_aval = get_aval(t)
            if not _same_type(t_aval, t_want):
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with corresponding "
                    f"shapes and dtypes. Expected {_type_str(t_want)} (tangent type of "
                    f"{_type_str(want)}) but got {_type_str(t_aval)}."
                )
            tangents_out.append(t)
        return p_leaves, tangents_out

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedJVPRule(self, axis_data, in_dims)


class _BatchedJVPRule:
    """A JVP rule applied to a batch: runs the inner rule under a batch trace.

    `in_dims` (0 or None) covers the operands of the batched `custom_jvp_call`
    after its leading `num_consts - num_nondiff` hoisted consts; every output
    comes out batched along axis 0, like the batched body.
    """

    def __init__(self, inner: Any, axis_data: batching.AxisData, in_dims: Sequence[int | None]):
        self.inner = inner
        self.axis_data = axis_data
        self.in_dims = list(in_dims)
        self.num_nondiff = inner.num_nondiff
        self.fun_name = inner.fun_name
        self.out_avals = [_batched(a, axis_data.size) for a in inner.out_avals]

    def __str__(self) -> str:
        return str(self.inner)

    def __call__(
        self, nondiff_values: Sequence[Any], primals: Sequence[Any], tangents: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        nd_dims = self.in_dims[: self.num_nondiff]
        p_dims = self.in_dims[self.num_nondiff :]
        with _BatchScope(self.axis_data) as trace:
            nd = [_wrap(trace, x, d) for x, d in zip(nondiff_values, nd_dims)]
            ps = [_wrap(trace, x, d) for x, d in zip(primals, p_dims)]
            ts = [
                ad.Zero(_unbatched(t.aval, d)) if type(t) is ad.Zero else _wrap(trace, t, d)
                for t, d in zip(tangents, p_dims)
            ]
            p_out, t_out = self.inner(nd, ps, ts)
            p_out = [_at_front(self.axis_data, trace, x) for x in p_out]
            t_out = [
                ad.Zero(_batched(t.aval, self.axis_data.size))
                if type(t) is ad.Zero
                else _at_front(self.axis_data, trace, t)
                for t in t_out
            ]
        return p_out, t_out

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedJVPRule(self, axis_data, in_dims)


custom_jvp_call_p = Primitive("custom_jvp_call")
custom_jvp_call_p.multiple_results = True
custom_jvp_call_p.def_effectful_abstract_eval(_body_abstract_eval)
custom_jvp_call_p.def_impl(_eval_body)
custom_jvp_call_p.print_params = lambda params: {
    "name": _Name(params["jvp_jaxpr_fun"].fun_name),
    "call_jaxpr": params["call_jaxpr"],
    "jvp": _Name(str(params["jvp_jaxpr_fun"])),
    "symbolic_zeros": params["symbolic_zeros"],
}
mlir.register_lowering(custom_jvp_call_p, _lower_body)


def _custom_jvp_call_jvp(
    primals: list,
    tangents: list,
    *,
    call_jaxpr: ClosedJaxpr,
    jvp_jaxpr_fun: Any,
    num_consts: int,
    symbolic_zeros: bool,
) -> tuple[list, list]:
    n_hoisted = num_consts - jvp_jaxpr_fun.num_nondiff
    if any(type(t) is not ad.Zero for t in tangents[:n_hoisted]):
        raise CustomJVPException()
    # Non-differentiable arguments: their tangents are ignored (stop_gradient).
    return jvp_jaxpr_fun(primals[n_hoisted:num_consts], primals[num_consts:], tangents[num_consts:])


ad.primitive_jvps[custom_jvp_call_p] = _custom_jvp_call_jvp


def _move_to_front(args: Sequence[Any], dims: Sequence[int | None]) -> list[Any]:
    return [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]


def _batch_custom_call(
    prim: Primitive,
    batched_rules: Callable[[Sequence[int | None]], dict[str, Any]],
    axis_data: batching.AxisData,
    args: list,
    dims: list,
    params: dict[str, Any],
) -> tuple[list, list]:
    """The batching rule of `custom_jvp_call` and `custom_vjp_call`.

    The body is batched with `batch_jaxpr` (operands moved to axis 0), and
    `batched_rules(in_dims)` gives the params holding the custom rules, wrapped
    to run under a batch trace.
    """
    if all(d is None for d in dims):
        outs = prim.bind(*args, **params)
        return outs, [None] * len(outs)
    args = _move_to_front(args, dims)
    in_dims = [None if d is None else 0 for d in dims]
    body, out_dims = batching.batch_jaxpr(params["call_jaxpr"], axis_data, in_dims, True)
    outs = prim.bind(*args, **{**params, "call_jaxpr": body, **batched_rules(in_dims)})
    return outs, out_dims


def _custom_jvp_call_batch(
    axis_data: batching.AxisData, args: list, dims: list, **params: Any
) -> tuple[list, list]:
    rule = params["jvp_jaxpr_fun"]
    n_hoisted = params["num_consts"] - rule.num_nondiff

    def batched_rules(in_dims: Sequence[int | None]) -> dict[str, Any]:
        return {"jvp_jaxpr_fun": rule.batched(axis_data, in_dims[n_hoisted:])}

    return _batch_custom_call(custom_jvp_call_p, batched_rules, axis_data, args, dims, params)


batching.axis_primitive_batchers[custom_jvp_call_p] = _custom_jvp_call_batch


class _CustomFunction:
    """What `custom_jvp` and `custom_vjp` share: the wrapped function, its
    non-differentiable arguments, and binding as a method."""

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.nondiff_argnames = tuple(nondiff_argnames)
        self.symbolic_zeros = False

    if TYPE_CHECKING:  # each subclass binds its own primitive

        def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)


class custom_jvp(_CustomFunction):
    """A function with a custom JVP (forward-mode derivative) rule.

    Use as a decorator, then define the rule with `defjvp` (or `defjvps`).
    Evaluated or transformed by anything but differentiation, the function
    runs as written; under `jvp`, `grad` and friends, the rule is used instead
    of differentiating its body (and higher derivatives differentiate the
    rule).

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated
        (e.g. functions or shapes); they are passed to the rule first, before
        the primals and tangents.
      nondiff_argnames: the same, by parameter name.

    Example:
      >>> @custom_jvp
      ... def f(x):
      ...     return lax.sin(x)
      >>> @f.defjvp
      ... def f_jvp(primals, tangents):
      ...     (x,), (t,) = primals, tangents
      ...     return f(x), lax.cos(x) * t
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Defines the JVP rule: `jvp(*nondiff_args, primals, tangents) -> (out, tangent_out)`.

        Args:
          jvp: takes the tuple of primal inputs and the tuple of their
            tangents (pytrees like the inputs) and returns the primal output
            and its tangent (pytrees like the output).
          symbolic_zeros: pass `SymbolicZero` objects for the tangents of
            inputs that are not being differentiated (instead of arrays of
            zeros); the rule may also return `SymbolicZero`s.

        Returns:
          `jvp`, so that `defjvp` can be used as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Defines the JVP rule by one function per argument.

        Args:
          *jvps: one per positional argument: `fn(tangent, primal_out,
            *primals)` returning that argument's contribution to the output
            tangent, or None when the output does not depend on it.
        """
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
            primal_out = self(*primals)
            terms = [fn(t, primal_out, *primals) for fn, t in zip(jvps, tangents) if fn is not None]
            if not terms:
                return primal_out, zero_from_primal(primal_out)
            total = terms[0]
            for term in terms[1:]:
                total = tree_map(ad.add_tangents, total, term)
            return primal_out, total

        jvp.__name__ = f"{_fun_name(self.fun)}_jvps"
        self.defjvp(jvp)

    @si.api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        if current_trace() is tracing.eval_trace:
            return self.fun(*args)  # nothing to differentiate or stage out
        nums = self.nondiff_argnums
        for i in nums:
            if i >= len(args):
                raise TypeError(
                    f"custom_jvp function {name} has nondiff_argnums={nums} but was called "
                    f"with only {len(args)} positional arguments"
                )
        nondiff = _Nondiff([args[i] for i in nums], traced_ok=True, kind="custom_jvp")
        diff_args = [a for i, a in enumerate(args) if i not in nums]
        closed, hoisted, operands, in_tree, out_tree = _trace_body(
            self.fun, nums, nondiff, diff_args, "custom_jvp"
        )
        rule = _JVPRule(
            self.jvp,
            name,
            nums,
            nondiff,
            in_tree,
            out_tree,
            closed.out_avals,
            self.symbolic_zeros,
        )
        outs = custom_jvp_call_p.bind(
            *hoisted,
            *operands,
            call_jaxpr=closed,
            jvp_jaxpr_fun=rule,
            num_consts=len(hoisted) + rule.num_nondiff,
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_unflatten(out_tree, outs)


# ---------------------------------------------------------------------------
# custom_vjp


class _FwdRule(_UserRule):
    """The user's fwd over flat values: what `custom_vjp_call` carries as `fwd_jaxpr_thunk`.

    Called as `fwd(primals, in_zeros)`, it runs the forward pass under the
    current trace and returns `(primals_out, residual_leaves, residual_tree)`.
    """

    def __call__(
        self, primals: Sequence[Any], in_zeros: Sequence[bool]
    ) -> tuple[list[Any], list[Any], Any]:
        if self.symbolic_zeros:
            primals = [CustomVJPPrimal(p, not z) for p, z in zip(primals, in_zeros)]
        args = tree_unflatten(self.in_tree, primals)
        static = self.nondiff.rebuild([]) if self.nondiff_argnums else []
        out = self.rule(*_merge_args(self.nondiff_argnums, static, args))
        if not (isinstance(out, tuple | list) and len(out) == 2):
            raise TypeError(
                f"Custom VJP fwd rule {self.name} for function {self.fun_name} must produce a "
                "pair (list or tuple of length two) where the first element represents the "
                f"primal output (equal to the output of the custom_vjp-decorated function "
                f"{self.fun_name}) and the second element represents residuals (i.e. values "
                "stored from the forward pass for use on the backward pass), but instead the "
                f"fwd rule output was {out!r}."
            )
        primal_out, res = out
        p_leaves, p_tree = tree_flatten(primal_out)
        if p_tree != self.out_tree:
            raise TypeError(
                f"Custom VJP fwd rule {self.name} for function {self.fun_name} must produce a "
                "pair (list or tuple of length two) where the first element represents the "
                f"primal output (equal to the output of the custom_vjp-decorated function "
                f"{self.fun_name}) and the second element represents residuals (i.e. values "
                "stored from the forward pass for use on the backward pass), but instead the "
                f"fwd rule output's first element had container/pytree structure:\n    {p_tree}\n"
                "while the custom_vjp-decorated function had output container/pytree "
                f"structure:\n    {self.out_tree}."
            )
        for p, want in zip(p_leaves, self.out_avals):
            got = get_aval(p)
            if not _same_type(got, want):
                raise TypeError(
                    f"Custom VJP fwd rule {self.name} for function {self.fun_name} must produce "
                    "primal outputs with the shapes and dtypes of the function's outputs. "
                    f"Expected {_type_str(want)} but got {_type_str(got)}."
                )
        res_leaves, res_tree = tree_flatten(res)
        for r in res_leaves:
            try:
                get_aval(r)
            except TypeError:
                raise TypeError(
                    f"Custom VJP fwd rule {self.name} for function {self.fun_name} produced a "
                    f"residual that is not an array: {r!r} of type {type(r).__name__}. Residuals "
                    "must be arrays (or pytrees of arrays)."
                ) from None
        return p_leaves, res_leaves, res_tree

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedFwd(self, axis_data, in_dims)


class _BatchedFwd:
    """A fwd rule applied to a batch: every output and residual comes out batched at 0."""

    def __init__(self, inner: Any, axis_data: batching.AxisData, in_dims: Sequence[int | None]):
        self.inner = inner
        self.axis_data = axis_data
        self.in_dims = list(in_dims)
        self.fun_name = inner.fun_name

    def __str__(self) -> str:
        return str(self.inner)

    def __call__(
        self, primals: Sequence[Any], in_zeros: Sequence[bool]
    ) -> tuple[list[Any], list[Any], Any]:
        with _BatchScope(self.axis_data) as trace:
            ps = [_wrap(trace, x, d) for x, d in zip(primals, self.in_dims)]
            p_out, res, res_tree = self.inner(ps, in_zeros)
            p_out = [_at_front(self.axis_data, trace, x) for x in p_out]
            res = [_at_front(self.axis_data, trace, x) for x in res]
        return p_out, res, res_tree

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedFwd(self, axis_data, in_dims)


class _BwdRule:
    """The user's bwd over flat values: what `custom_vjp_call` carries as `bwd`.

    Called as `bwd(res_tree, res_leaves, cts_out)` (cotangents may be
    `ad.Zero`); returns one cotangent per differentiable input leaf (`ad.Zero`
    where the user returned None or a `SymbolicZero`).
    """

    def __init__(
        self,
        bwd: Callable[..., Any],
        fun_name: str,
        nondiff_argnums: tuple[int, ...],
        nondiff: _Nondiff,
        in_tree: Any,
        in_avals: Sequence[AbstractValue],
        out_tree: Any,
        symbolic_zeros: bool,
    ):
        self.bwd = bwd
        self.fun_name = fun_name
        self.name = _fun_name(bwd)
        self.nondiff_argnums = nondiff_argnums
        self.nondiff = nondiff
        self.in_tree = in_tree
        self.in_avals = list(in_avals)
        self.out_tree = out_tree
        self.symbolic_zeros = symbolic_zeros

    def __str__(self) -> str:
        return self.name

    def __call__(self, res_tree: Any, res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        cts_tree = tree_unflatten(self.out_tree, [_tangent_in(c, self.symbolic_zeros) for c in cts])
        static = self.nondiff.rebuild([]) if self.nondiff_argnums else []
        out = self.bwd(*static, tree_unflatten(res_tree, res), cts_tree)
        n_args = len(self.in_tree.children())
        if isinstance(out, list):
            out = tuple(out)
        if not isinstance(out, tuple) or len(out) != n_args:
            got = f"a tuple of length {len(out)}" if isinstance(out, tuple) else type(out).__name__
            raise TypeError(
                f"Custom VJP bwd rule {self.name} for function {self.fun_name} must produce a "
                "tuple of length equal to the number of arguments to the primal function "
                f"({n_args}), but got {got}."
            )
        try:
            leaves = _flatten_with_none(self.in_tree, out)
        except _StructureError:
            raise TypeError(
                f"Custom VJP bwd rule {self.name} for function {self.fun_name} must produce an "
                "output with the same container (pytree) structure as the args tuple of the "
                f"primal function, and in particular must produce a tuple of length equal to the "
                f"number of arguments to the primal function, but got bwd output structure "
                f"{tree_structure(out)} for primal input structure {self.in_tree}."
            ) from None
        cts_in = []
        for i, (ct, aval) in enumerate(zip(leaves, self.in_avals)):
            want = ad.tangent_aval(aval)
            if ct is None or isinstance(ct, SymbolicZero) or type(ct) is ad.Zero:
                cts_in.append(ad.Zero(want))
                continue
            if _is_float0(want):
                cts_in.append(ad.Zero(want))  # integer inputs have no cotangent
                continue
            ct_aval = get_aval(ct)
            if not _same_type(ct_aval, want):
                raise ValueError(
                    "Custom VJP bwd rule must produce an output with the same shape/dtypes as "
                    f"the args tuple of the primal function. At output leaf {i} the bwd rule "
                    f"{self.name} produced an output of shape/dtype {_type_str(ct_aval)} "
                    f"corresponding to an input of shape/dtype {_type_str(aval)}."
                )
            extra: frozenset[str] = getattr(ct_aval, "vma", frozenset()) - getattr(
                want, "vma", frozenset()
            )
            if extra:  # varies where the input did not (inside shard_map)
                raise ValueError(
                    "Custom VJP bwd rule must produce an output with the same type as the args "
                    f"tuple of the primal function, but at output[{i}] the bwd rule produced an "
                    f"output of type {ct_aval.str_short()} corresponding to an input of type "
                    f"{want.str_short()}, so the manual axis types do not match"
                )
            cts_in.append(core_vma.cast_to(ct, getattr(want, "vma", frozenset())))
        return cts_in

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedBwd(self, axis_data, in_dims)


class _StructureError(Exception):
    pass


def _flatten_with_none(treedef: Any, tree: Any) -> list[Any]:
    """The leaves of `tree` at `treedef`'s leaves, where a None may stand for any subtree."""
    if tree is None:
        return [None] * treedef.num_leaves
    if treedef_is_leaf(treedef):
        return [tree]
    kids, kids_def = tree_flatten(tree, is_leaf=lambda x: x is not tree)
    children = treedef.children()
    if kids_def.node_data() != treedef.node_data() or len(kids) != len(children):
        raise _StructureError
    return [leaf for sub, kid in zip(children, kids) for leaf in _flatten_with_none(sub, kid)]


class _BatchedBwd:
    """A bwd rule applied to a batch: residuals and cotangents arrive batched at 0.

    Input cotangents leave batched at 0 for inputs batched in the primal call
    and summed over the batch for unbatched ones.
    """

    def __init__(self, inner: Any, axis_data: batching.AxisData, in_dims: Sequence[int | None]):
        self.inner = inner
        self.axis_data = axis_data
        self.in_dims = list(in_dims)

    def __str__(self) -> str:
        return str(self.inner)

    def __call__(self, res_tree: Any, res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        size = self.axis_data.size
        with _BatchScope(self.axis_data) as trace:
            rs = [_wrap(trace, r, 0) for r in res]
            cs = [
                ad.Zero(_unbatched(c.aval, 0)) if type(c) is ad.Zero else _wrap(trace, c, 0)
                for c in cts
            ]
            outs = self.inner(res_tree, rs, cs)
            infos = [c if type(c) is ad.Zero else trace.to_batch_info(c) for c in outs]
        result = []
        for info, want in zip(infos, self.in_dims):
            if isinstance(info, ad.Zero):
                result.append(info if want is None else ad.Zero(_batched(info.aval, size)))
                continue
            val, dim = info
            result.append(batching.matchaxis(self.axis_data.name, size, dim, want, val, True))
        return result

    def batched(self, axis_data: batching.AxisData, in_dims: Sequence[int | None]) -> Any:
        return _BatchedBwd(self, axis_data, in_dims)


class _OutTrees:
    """`custom_vjp_call`'s `out_trees`: `out_trees() -> (out_tree, None)`, as a thunk.

    The residual structure is known only once `fwd` has run; our rules carry
    it with the residuals instead.
    """

    def __init__(self, out_tree: Any):
        self.out_tree = out_tree

    def __call__(self) -> tuple[Any, Any]:
        return self.out_tree, None

    def __repr__(self) -> str:
        return f"out_trees({self.out_tree})"


custom_vjp_call_p = Primitive("custom_vjp_call")
custom_vjp_call_p.multiple_results = True
custom_vjp_call_p.def_effectful_abstract_eval(_body_abstract_eval)
custom_vjp_call_p.def_impl(_eval_body)
custom_vjp_call_p.print_params = lambda params: {
    "name": _Name(params["fwd_jaxpr_thunk"].fun_name),
    "bwd": _Name(str(params["bwd"])),
    "call_jaxpr": params["call_jaxpr"],
    "fwd": _Name(str(params["fwd_jaxpr_thunk"])),
    "symbolic_zeros": params["symbolic_zeros"],
}
mlir.register_lowering(custom_vjp_call_p, _lower_body)


_JVP_OF_CUSTOM_VJP = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


class _BoundBwd:
    """A bwd rule with the residual structure of one forward pass (`custom_lin`'s `bwd`)."""

    __slots__ = ("bwd", "res_tree")

    def __init__(self, bwd: Any, res_tree: Any):
        self.bwd = bwd
        self.res_tree = res_tree

    def __call__(self, res: Sequence[Any], cts: Sequence[Any]) -> list[Any]:
        return self.bwd(self.res_tree, res, cts)

    def __str__(self) -> str:
        return str(self.bwd)


def _custom_vjp_call_jvp(
    primals: list,
    tangents: list,
    *,
    call_jaxpr: ClosedJaxpr,
    fwd_jaxpr_thunk: Any,
    bwd: Any,
    num_consts: int,
    out_trees: Any,
    symbolic_zeros: bool,
) -> tuple[list, list]:
    if any(type(t) is not ad.Zero for t in tangents[:num_consts]):
        raise CustomVJPException()
    args, args_t = primals[num_consts:], tangents[num_consts:]
    in_zeros = [type(t) is ad.Zero for t in args_t]
    primals_out, res, res_tree = fwd_jaxpr_thunk(args, in_zeros)
    out_avals = [ad.tangent_aval(a) for a in call_jaxpr.out_avals]
    tangents_out = custom_lin_p.bind(
        *res,
        *[t for t in args_t if type(t) is not ad.Zero],
        num_res=len(res),
        bwd=_BoundBwd(bwd, res_tree),
        out_avals=tuple(out_avals),
        in_zeros=tuple(in_zeros),
        symbolic_zeros=symbolic_zeros,
    )
    tangents_out = [ad.Zero(a) if _is_float0(a) else t for a, t in zip(out_avals, tangents_out)]
    return primals_out, tangents_out


ad.primitive_jvps[custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_vjp_call_batch(
    axis_data: batching.AxisData, args: list, dims: list, **params: Any
) -> tuple[list, list]:
    num_consts = params["num_consts"]

    def batched_rules(in_dims: Sequence[int | None]) -> dict[str, Any]:
        arg_dims = in_dims[num_consts:]
        return {
            "fwd_jaxpr_thunk": params["fwd_jaxpr_thunk"].batched(axis_data, arg_dims),
            "bwd": params["bwd"].batched(axis_data, arg_dims),
        }

    return _batch_custom_call(custom_vjp_call_p, batched_rules, axis_data, args, dims, params)


batching.axis_primitive_batchers[custom_vjp_call_p] = _custom_vjp_call_batch


# custom_lin: the linear map `tangents -> tangents` of a custom_vjp function, known
# only through its transpose (`bwd`).

custom_lin_p = Primitive("custom_lin")
custom_lin_p.multiple_results = True
custom_lin_p.print_params = lambda params: {
    "bwd": _Name(str(params["bwd"])),
    "in_zeros": list(params["in_zeros"]),
    "num_res": params["num_res"],
    "symbolic_zeros": params["symbolic_zeros"],
}


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals: Any, out_avals: tuple, **_: Any) -> list:
    return list(out_avals)


def _custom_lin_impl(*args: Any, **params: Any) -> Any:
    raise TypeError(_JVP_OF_CUSTOM_VJP)


def _custom_lin_lowering(ctx: Any, *args: Any, **params: Any) -> Any:
    raise TypeError(_JVP_OF_CUSTOM_VJP)


def _custom_lin_forward_mode(*args: Any, **params: Any) -> Any:
    # Reached only by forward mode (a jvp of the jvp, or a vmap of the jvp).
    raise TypeError(_JVP_OF_CUSTOM_VJP)


custom_lin_p.def_impl(_custom_lin_impl)
mlir.register_lowering(custom_lin_p, _custom_lin_lowering)
ad.primitive_jvps[custom_lin_p] = _custom_lin_forward_mode
batching.primitive_batchers[custom_lin_p] = _custom_lin_forward_mode


def _custom_lin_transpose(
    cts: Sequence[Any],
    *args: Any,
    num_res: int,
    bwd: Any,
    out_avals: tuple,
    in_zeros: tuple,
    symbolic_zeros: bool,
) -> list[Any]:
    res = list(args[:num_res])
    cts_in = bwd(res, list(cts))
    nonzero = partition_list(in_zeros, cts_in)[0]
    return [None] * num_res + nonzero


ad.primitive_transposes[custom_lin_p] = _custom_lin_transpose


class custom_vjp(_CustomFunction):
    """A function with a custom VJP (reverse-mode derivative) rule.

    Use as a decorator, then define the rule with `defvjp(fwd, bwd)`.
    Evaluated or transformed by anything but differentiation, the function
    runs as written; under `vjp`, `grad` and friends, `fwd` runs instead and
    `bwd` computes the input cotangents. Forward mode (`jvp`) is not
    available for such a function (a TypeError, as in JAX).

    Args:
      fun: the function.
      nondiff_argnums: positions of arguments that are not differentiated and
        are not arrays (functions, shapes...); they are passed first to both
        `fwd` and `bwd`.
      nondiff_argnames: the same, by parameter name.

    Example:
      >>> @custom_vjp
      ... def f(x):
      ...     return lax.sin(x)
      >>> f.defvjp(lambda x: (f(x), lax.cos(x)), lambda cos_x, g: (cos_x * g,))
    """

    def __init__(
        self,
        fun: Callable[..., Any],
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: Sequence[str] = (),
    ):
        super().__init__(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.optimize_remat = False

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """Defines the VJP rule as a forward and a backward pass.

        Args:
          fwd: `fwd(*nondiff_args, *args) -> (output, residuals)`: the
            function's output and any pytree of arrays to keep for `bwd`.
          bwd: `bwd(*nondiff_args, residuals, output_cotangent) ->
            input_cotangents`, a tuple with one entry per (differentiable)
            argument; None stands for a zero cotangent (of a whole argument
            or of any subtree of one).
          symbolic_zeros: `fwd` receives `CustomVJPPrimal(value, perturbed)`
            objects instead of its arguments, and `bwd` receives
            `SymbolicZero`s for zero output cotangents.
          optimize_remat: accepted for compatibility; no effect here.
        """
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat

    @si.api_boundary
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        name = _fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs)
        nums = self.nondiff_argnums
        for i in nums:
            if i >= len(args):
                raise TypeError(
                    f"custom_vjp function {name} has nondiff_argnums={nums} but was called "
                    f"with only {len(args)} positional arguments"
                )
        nondiff = _Nondiff([args[i] for i in nums], traced_ok=False, kind="custom_vjp")
        if current_trace() is tracing.eval_trace:
            return self.fun(*args)  # nothing to differentiate or stage out
        diff_args = [a for i, a in enumerate(args) if i not in nums]
        closed, hoisted, operands, in_tree, out_tree = _trace_body(
            self.fun, nums, nondiff, diff_args, "custom_vjp"
        )
        in_avals = closed.in_avals[len(hoisted) :]
        fwd = _FwdRule(
            self.fwd, name, nums, nondiff, in_tree, out_tree, closed.out_avals, self.symbolic_zeros
        )
        bwd = _BwdRule(
            self.bwd, name, nums, nondiff, in_tree, in_avals, out_tree, self.symbolic_zeros
        )
        outs = custom_vjp_call_p.bind(
            *hoisted,
            *operands,
            call_jaxpr=closed,
            fwd_jaxpr_thunk=fwd,
            bwd=bwd,
            num_consts=len(hoisted),
            out_trees=_OutTrees(out_tree),
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_unflatten(out_tree, outs)
