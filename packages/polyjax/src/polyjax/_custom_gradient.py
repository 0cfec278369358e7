"""`closure_convert` and `custom_gradient`: derivative rules written as closures.

`closure_convert(fun, *example_args)` traces `fun` and hoists the traced values
it closes over (tracers of enclosing transformations) into explicit extra
arguments: it returns `(converted, consts)` with
`converted(*args, *consts) == fun(*args)`. That is what a `custom_vjp` rule
needs, since a backward function may not close over values being
differentiated.

`custom_gradient(fun)` takes a function returning `(value, vjp)`, where
`vjp(g)` gives the cotangents of the positional arguments, and makes it a
`custom_vjp` function: the forward pass closure-converts `vjp`, so its
closed-over values travel as residuals and the backward pass replays it.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> @custom_gradient
  ... def f(x):
  ...     return x**2, lambda g: (g * x,)
  >>> float(polyjax.grad(f)(np.float32(3.0)))
  3.0
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import register_pytree_node, tree_flatten, tree_unflatten
from polyjax_interpreters.custom_derivatives import custom_vjp

__all__ = ["closure_convert", "custom_gradient"]


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list]:
    """Hoists the traced values `fun` closes over into extra arguments.

    Args:
      fun: a function of arrays (pytrees allowed) returning a pytree of arrays.
      *example_args: arguments (or `ShapeDtypeStruct`\\ s) with the types
        `fun` will be called with.

    Returns:
      `(converted, consts)`: `consts` lists the tracers `fun` closes over
      (empty when it closes over none), and `converted(*args, *consts)`
      computes `fun(*args)`.

    Example:
      >>> import numpy as np
      >>> converted, consts = closure_convert(lambda x: x * 2.0, np.float32(1.0))
      >>> converted(np.float32(3.0), *consts)
      Array(6., dtype=float32)
    """
    flat_args, in_tree = tree_flatten(example_args)
    out_tree_box: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        outs, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, list(flat))))
        out_tree_box.append(out_tree)
        return outs

    closed = trace_to_jaxpr(flat_fun, [get_aval(a) for a in flat_args])
    (out_tree,) = out_tree_box
    hoisted = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
    consts = [closed.consts[i] for i in hoisted]
    n_args = len(flat_args)

    def converted(*args_and_consts: Any) -> Any:
        args, extra = args_and_consts[: len(example_args)], args_and_consts[len(example_args) :]
        if len(extra) != len(consts):
            raise TypeError(
                f"the converted function takes {len(example_args)} arguments and "
                f"{len(consts)} constants, got {len(args_and_consts)} values."
            )
        flat, tree = tree_flatten(args)
        if tree != in_tree or len(flat) != n_args:
            raise TypeError(
                f"the converted function expects arguments structured as {in_tree}, got {tree}."
            )
        all_consts = list(closed.consts)
        for i, value in zip(hoisted, extra):
            all_consts[i] = value
        return tree_unflatten(out_tree, eval_jaxpr(closed.jaxpr, all_consts, *flat))

    return converted, consts


class _Static:
    """A pytree with no leaves carrying a Python value (a residual that is not an array)."""

    def __init__(self, value: Any):
        self.value = value


register_pytree_node(_Static, lambda s: ((), s.value), lambda value, _: _Static(value))


def custom_gradient(fun: Callable[..., tuple[Any, Callable[..., Any]]]) -> Callable[..., Any]:
    """Makes `fun`, which returns `(value, vjp)`, differentiate through its `vjp`.

    Args:
      fun: a function of positional array arguments returning `(value, vjp)`,
        where `vjp(g)` takes a cotangent shaped like `value` and returns one
        cotangent per positional argument (a tuple; a bare value for a single
        argument).

    Returns:
      A function returning `value`, whose reverse-mode derivative is `vjp`.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> @custom_gradient
      ... def clip_gradient(x):
      ...     return x, lambda g: (polyjax.numpy.clip(g, -1.0, 1.0),)
      >>> float(polyjax.grad(lambda x: 5.0 * clip_gradient(x))(np.float32(2.0)))
      1.0
    """

    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> tuple[Any, Any]:
        value, vjp = fun(*args)
        converted, consts = closure_convert(vjp, value)
        return value, (consts, _Static((converted, len(args))))

    def bwd(res: Any, g: Any) -> tuple:
        consts, static = res
        converted, n_args = static.value
        cts = converted(g, *consts)
        if n_args == 1 and not isinstance(cts, tuple | list):
            cts = (cts,)
        return tuple(cts)

    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(wrapped)
