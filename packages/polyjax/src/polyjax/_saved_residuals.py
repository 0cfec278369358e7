"""`saved_residuals` / `print_saved_residuals`: what reverse mode keeps from the forward pass.

The residuals of `vjp(f, *args)` are the values its backward pass reads. Each
is an argument of `f`, or the output of one equation of the forward pass;
listing them (with the primitive and source line that made each) shows what
memory a `checkpoint` policy saves.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> f = polyjax.checkpoint(lambda x: polyjax.numpy.sin(polyjax.numpy.sin(x)))
  >>> [what for _, what in saved_residuals(f, np.ones(3, np.float32))]
  ['from the argument x']
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from polyjax_core import source_info as si
from polyjax_core.jaxpr import Var
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.tree_util import tree_flatten, tree_leaves, tree_unflatten
from polyjax_interpreters.ad import vjp

__all__ = ["print_saved_residuals", "saved_residuals"]


def _arg_names(f: Callable[..., Any], args: tuple, kwargs: dict) -> list[str]:
    """One name per flat argument: the parameter's name, with a path for pytree leaves."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
        named = list(bound.arguments.items())
    except (TypeError, ValueError):
        named = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    names = []
    for name, value in named:
        leaves = tree_flatten(value)[0]
        names += [name] if len(leaves) == 1 else [f"{name}[{i}]" for i in range(len(leaves))]
    return names


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[Any, str]]:
    """The residuals `vjp(f, *args)` saves, with where each comes from.

    Args:
      f: a function of arrays.
      *args: its arguments.
      **kwargs: its keyword arguments (not differentiated).

    Returns:
      A list of `(aval, description)`, the description reading "from the argument
      x" or "output of sin from file.py:3 (f)".
    """
    flat_args, in_tree = tree_flatten(args)

    def residuals_of(*flat: Any) -> list[Any]:
        positional = tree_unflatten(in_tree, list(flat))
        _, pullback = vjp(functools.partial(f, **kwargs) if kwargs else f, *positional)
        return tree_leaves(pullback)

    closed = make_jaxpr(residuals_of)(*flat_args)
    jaxpr = closed.jaxpr
    names = _arg_names(f, args, kwargs)
    producers = {id(v): eqn for eqn in jaxpr.eqns for v in eqn.outvars}
    out = []
    for var in jaxpr.outvars:
        if not isinstance(var, Var):
            continue  # a literal: nothing saved
        if var in jaxpr.invars:
            i = jaxpr.invars.index(var)
            out.append((var.aval, f"from the argument {names[i] if i < len(names) else i}"))
        elif id(var) in producers:
            eqn = producers[id(var)]
            where = si.summarize(eqn.source_info)
            out.append((var.aval, f"output of {eqn.primitive.name} from {where}"))
        else:
            out.append((var.aval, "from a constant"))
    return out


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Prints the residuals `vjp(f, *args)` saves, one per line (see `saved_residuals`).

    Args:
      f: a function of arrays.
      *args: its arguments.
      **kwargs: its keyword arguments.
    """
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {what}")
