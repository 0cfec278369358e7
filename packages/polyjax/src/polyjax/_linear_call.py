"""`linear_call`: a function linear in some arguments, with a custom transpose.

`linear_call(fun, fun_transpose, residual_args, linear_args)` computes
`fun(residual_args, linear_args)`, which must be linear in `linear_args`.
Transposing it (`linear_transpose`, or the backward pass of `vjp` through a
linear part) calls `fun_transpose(residual_args, cotangent)` instead of
transposing `fun`'s operations; the transpose of that is `fun` again. The call
binds the primitive `linear_call`, which holds both traced functions. It is
not differentiable itself (as in JAX): only transposable.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> f = lambda r, x: x / r
  >>> t = lambda r, ct: ct / r
  >>> div = lambda x: linear_call(f, t, np.float32(3.0), x)
  >>> polyjax.linear_transpose(div, np.float32(1.0))(np.float32(6.0))
  (Array(2., dtype=float32),)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polyjax import _runtime  # noqa: F401  (operators on traced values)
from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad, mlir

__all__ = ["linear_call"]

linear_call_p = Primitive("linear_call")
linear_call_p.multiple_results = True


def _trace(fun: Callable, res_tree: Any, lin_tree: Any, avals: list) -> tuple[Any, Any]:
    """`fun(res, lin)` traced on flat avals: (closed jaxpr, out tree)."""
    n_res = res_tree.num_leaves
    box: list[Any] = []

    def flat(*xs: Any) -> list[Any]:
        res = tree_unflatten(res_tree, list(xs[:n_res]))
        lin = tree_unflatten(lin_tree, list(xs[n_res:]))
        leaves, tree = tree_flatten(fun(res, lin))
        box.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat, avals)
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError(
            "linear_call: fun and fun_transpose may not close over traced values; pass them "
            "as residual_args."
        )
    return closed, box[0]


def _run(*args: Any, callee: Any, **_: Any) -> list[Any]:
    return eval_jaxpr(callee.jaxpr, callee.consts, *args)


def _abstract_eval(*avals: Any, callee: Any, **_: Any) -> list[Any]:
    return [v.aval for v in callee.jaxpr.outvars]


def _bind(
    fun: Any, fun_transpose: Any, res_leaves: Any, lin_leaves: Any, res_tree: Any, lin_tree: Any
) -> tuple[list[Any], Any]:
    """`fun` on the leaves as one `linear_call_p` (traced to its callee): outputs and their tree."""
    avals = [get_aval(x) for x in (*res_leaves, *lin_leaves)]
    closed, out_tree = _trace(fun, res_tree, lin_tree, avals)
    outs = linear_call_p.bind(
        *res_leaves,
        *lin_leaves,
        callee=closed,
        fun=fun,
        fun_transpose=fun_transpose,
        res_tree=res_tree,
        lin_tree=lin_tree,
        out_tree=out_tree,
    )
    return outs, out_tree


def _transpose(cts, *args, callee, fun, fun_transpose, res_tree, lin_tree, out_tree):
    n_res = res_tree.num_leaves
    residuals, linear = args[:n_res], args[n_res:]
    if any(ad.is_undefined_primal(r) for r in residuals):
        raise ValueError("linear_call: cannot transpose with respect to the residual arguments.")
    cts = [ad.instantiate_zeros(c) for c in cts]
    lin_avals = [x.aval if ad.is_undefined_primal(x) else get_aval(x) for x in linear]
    # The transpose is another linear_call, to fun_transpose, with fun as its transpose.
    cts_in, _ = _bind(fun_transpose, fun, residuals, cts, res_tree, out_tree)
    if len(cts_in) != len(lin_avals):
        raise TypeError(
            f"linear_call: fun_transpose returned {len(cts_in)} cotangents for "
            f"{len(lin_avals)} linear arguments."
        )
    return [None] * n_res + list(cts_in)


def _jvp(primals, tangents, **_):
    raise NotImplementedError(
        "linear_call is not differentiable (only transposable): differentiate a function "
        "that calls it through jax.linear_transpose, or use custom_jvp/custom_vjp."
    )


linear_call_p.def_impl(_run)
linear_call_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(linear_call_p, mlir.lower_fun(_run))
ad.primitive_transposes[linear_call_p] = _transpose
ad.primitive_jvps[linear_call_p] = _jvp


def linear_call(
    fun: Callable[[Any, Any], Any],
    fun_transpose: Callable[[Any, Any], Any],
    residual_args: Any,
    linear_args: Any,
) -> Any:
    """`fun(residual_args, linear_args)`, transposed by `fun_transpose` (see the module docstring).

    Args:
      fun: `fun(residuals, linear) -> out`, linear in `linear`.
      fun_transpose: `fun_transpose(residuals, ct_out) -> ct_linear`.
      residual_args: a pytree of arrays the functions depend on non-linearly.
      linear_args: a pytree of arrays `fun` is linear in.

    Returns:
      `fun(residual_args, linear_args)`.
    """
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    outs, out_tree = _bind(fun, fun_transpose, res_leaves, lin_leaves, res_tree, lin_tree)
    return tree_unflatten(out_tree, outs)
