"""`make_jaxpr`: the user-facing way to see the jaxpr of a Python function."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core import source_info as si
from polyjax_core.abstract_values import ShapeDtypeStruct, shaped_abstractify
from polyjax_core.axis_env import extend_axis_env
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_core.wrapped_fun import debug_info

__all__ = ["make_jaxpr"]


def _static_positions(static_argnums: int | Sequence[int], nargs: int) -> frozenset[int]:
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    positions = set()
    for i in static_argnums:
        i = operator.index(i)
        if not -nargs <= i < nargs:
            raise ValueError(
                f"static_argnums contains {i}, but the function was called with {nargs} "
                "positional arguments"
            )
        positions.add(i % nargs)
    return frozenset(positions)


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None,
    return_shape: bool = False,
) -> Callable[..., Any]:
    """Creates a function that returns the jaxpr of `fun` for example arguments.

    Args:
      fun: the function to trace. Its arguments and results are pytrees of
        arrays and scalars.
      static_argnums: positions of arguments that are passed to `fun` as they
        are (Python values, not traced).
      axis_env: `(name, size)` pairs binding axis names, for tracing functions
        that use collectives outside of `vmap`/`pmap`.
      return_shape: also return a pytree of `ShapeDtypeStruct` with the
        structure of `fun`'s result.

    Returns:
      A function taking the same arguments as `fun` and returning a
      `ClosedJaxpr` (or `(ClosedJaxpr, shape_tree)` with `return_shape`).
      Arguments may be arrays, scalars or `ShapeDtypeStruct`s.

    Example:
      >>> import numpy as np
      >>> from polyjax_core import Primitive
      >>> sin_p = Primitive("sin")
      >>> impl, rule = sin_p.def_impl(np.sin), sin_p.def_abstract_eval(lambda x: x)
      >>> print(make_jaxpr(lambda x: sin_p.bind(x))(np.float32(1.0)))
      { lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
    """

    @functools.wraps(fun)
    @si.api_boundary
    def make_jaxpr_f(*args: Any, **kwargs: Any) -> Any:
        static = _static_positions(static_argnums, len(args))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
        flat_args, in_tree = tree_flatten((dyn_args, kwargs))
        in_avals = [shaped_abstractify(x) for x in flat_args]
        debug = debug_info("make_jaxpr", fun, args, kwargs, tuple(static))
        out_tree_box: list[Any] = []

        def flat_fun(*flat_tracers: Any) -> list[Any]:
            dyn, kw = tree_unflatten(in_tree, flat_tracers)
            it = iter(dyn)
            full = [args[i] if i in static else next(it) for i in range(len(args))]
            out_flat, out_tree = tree_flatten(fun(*full, **kw))
            out_tree_box.append(out_tree)
            return out_flat

        with extend_axis_env(axis_env or ()):
            closed: ClosedJaxpr = trace_to_jaxpr(flat_fun, in_avals, debug)
        if not return_shape:
            return closed
        shapes = [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals
        ]
        return closed, tree_unflatten(out_tree_box[0], shapes)

    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', repr(fun))})"
    return make_jaxpr_f
