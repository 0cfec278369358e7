"""polyjax.custom_batching: user-defined vmap rules, as in ``jax.custom_batching``.

`custom_vmap(fun)` makes a function whose behaviour under `vmap` is given by a
rule: ``f.def_vmap(rule)`` with
``rule(axis_size, in_batched, *args) -> (out, out_batched)``, where the batched
arguments carry the mapped axis first and `in_batched` / `out_batched` are
pytrees of bools shaped like the arguments / outputs. Outside `vmap` the
function runs as written.

A call binds the primitive `custom_vmap_call`, which holds the traced
function and the rule; `jit` inlines the function, `vmap` calls the rule,
and forward- and reverse-mode derivatives differentiate the function itself
(its tangents are batched by ordinary `vmap`, not by the rule). Values closed
over must not be batched: pass them as arguments.

`sequential_vmap(fun)` is a `custom_vmap` whose rule runs `fun` once per
batch element (`lax.map`): for functions that cannot be vectorized.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> @custom_vmap
  ... def f(x):
  ...     return x + 1.0
  >>> @f.def_vmap
  ... def rule(axis_size, in_batched, x):
  ...     return x * 10.0, in_batched[0]
  >>> f(np.float32(1.0)), polyjax.vmap(f)(np.ones(2, np.float32))
  (Array(2., dtype=float32), Array([10., 10.], dtype=float32))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from polyjax import (
    _runtime,  # noqa: F401  (operators on traced values)
    lax,
)
from polyjax import numpy as jnp
from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_map, tree_unflatten
from polyjax_interpreters import ad, batching, mlir

__all__ = ["custom_vmap", "sequential_vmap"]

custom_vmap_call_p = Primitive("custom_vmap_call")
custom_vmap_call_p.multiple_results = True


def _run(*args: Any, call_jaxpr: Any, num_consts: int, hoisted: tuple, **_: Any) -> list[Any]:
    consts, flat = args[:num_consts], args[num_consts:]
    all_consts = list(call_jaxpr.consts)
    for i, value in zip(hoisted, consts):
        all_consts[i] = value
    return eval_jaxpr(call_jaxpr.jaxpr, all_consts, *flat)


def _abstract_eval(*avals: Any, call_jaxpr: Any, **_: Any) -> list[Any]:
    return [v.aval for v in call_jaxpr.jaxpr.outvars]


def _batch(args, dims, *, call_jaxpr, num_consts, hoisted, rule, in_tree, out_tree):
    if any(d is not batching.not_mapped for d in dims[:num_consts]):
        raise NotImplementedError(
            "custom_vmap: the function closes over a batched value; pass it as an argument."
        )
    flat, flat_dims = args[num_consts:], dims[num_consts:]
    size = next(get_aval(x).shape[d] for x, d in zip(flat, flat_dims) if d is not None)
    # The rule sees arrays (not the NumPy values a caller may have passed), mapped axis first.
    moved = [
        jnp.asarray(x if d is None else batching.moveaxis(x, d, 0)) for x, d in zip(flat, flat_dims)
    ]
    in_batched = tree_unflatten(in_tree, [d is not None for d in flat_dims])
    outs, out_batched = rule(size, in_batched, *tree_unflatten(in_tree, moved))
    flat_outs, tree = tree_flatten(outs)
    if tree != out_tree:
        raise TypeError(
            f"custom_vmap rule must return outputs structured as the function's ({out_tree}), "
            f"got {tree}."
        )
    flat_batched = _broadcast_prefix(out_batched, outs)
    return flat_outs, [0 if b else batching.not_mapped for b in flat_batched]


def _broadcast_prefix(batched: Any, outs: Any) -> list[bool]:
    """`out_batched` given as a bool for a whole subtree, expanded to the leaves of `outs`."""
    if isinstance(batched, bool):
        return [batched] * len(tree_flatten(outs)[0])
    if isinstance(batched, list | tuple) and isinstance(outs, list | tuple):
        return [b for sub_b, sub_o in zip(batched, outs) for b in _broadcast_prefix(sub_b, sub_o)]
    if isinstance(batched, dict) and isinstance(outs, dict):
        return [b for k in outs for b in _broadcast_prefix(batched[k], outs[k])]
    flat = tree_flatten(batched)[0]
    return [bool(b) for b in flat]


def _jvp(primals, tangents, *, call_jaxpr, num_consts, hoisted, **params):
    tangents = [ad.instantiate_zeros(t) for t in tangents]
    fixed = dict(call_jaxpr=call_jaxpr, num_consts=num_consts, hoisted=hoisted)
    outs = custom_vmap_call_p.bind(*primals, **fixed, **params)

    def run(*xs):
        return _run(*xs, **fixed)

    _, tangents_out = ad.jvp(run, list(primals), tangents)
    return outs, list(tangents_out)


# Registered as any library registers a primitive's rules (polyjax.interpreters).
custom_vmap_call_p.def_impl(_run)
custom_vmap_call_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(custom_vmap_call_p, mlir.lower_fun(_run))
ad.primitive_jvps[custom_vmap_call_p] = _jvp
batching.primitive_batchers[custom_vmap_call_p] = _batch


class custom_vmap:  # noqa: N801  (JAX's name)
    """A function with a custom `vmap` rule (see the module docstring).

    Attributes:
      fun: the function.
      vmap_rule: the rule given by `def_vmap` (None until then).
    """

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        """Sets the rule `rule(axis_size, in_batched, *args) -> (out, out_batched)`; returns it."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError("custom_vmap functions take positional arguments only.")
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {self.__name__} using def_vmap."
            )
        flat, in_tree = tree_flatten(args)
        tree_box: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            outs, out_tree = tree_flatten(self.fun(*tree_unflatten(in_tree, list(xs))))
            tree_box.append(out_tree)
            return outs

        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat])
        # Traced values the function closes over become explicit operands; their
        # places among the jaxpr's constants are filled at each evaluation.
        hoisted = tuple(i for i, c in enumerate(closed.consts) if isinstance(c, Tracer))
        consts = [closed.consts[i] for i in hoisted]
        kept = [None if isinstance(c, Tracer) else c for c in closed.consts]
        outs = custom_vmap_call_p.bind(
            *consts,
            *flat,
            call_jaxpr=type(closed)(closed.jaxpr, kept),
            num_consts=len(consts),
            hoisted=hoisted,
            rule=self.vmap_rule,
            in_tree=in_tree,
            out_tree=tree_box[0],
        )
        return tree_unflatten(tree_box[0], outs)


def sequential_vmap(fun: Callable[..., Any]) -> custom_vmap:
    """`fun` as a `custom_vmap` whose batching rule loops over the batch with `lax.map`.

    Args:
      fun: a function of positional array arguments.

    Returns:
      The `custom_vmap` function: under `vmap`, `fun` runs once per batch element
      (unbatched arguments are shared) and the results are stacked.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> f = sequential_vmap(lambda x: x.sum())
      >>> polyjax.vmap(f)(np.ones((3, 2), np.float32))
      Array([2., 2., 2.], dtype=float32)
    """
    f = custom_vmap(fun)

    @f.def_vmap
    def rule(axis_size: int, in_batched: Any, *args: Any) -> tuple[Any, Any]:
        flags = tree_flatten(in_batched)[0]
        flat, tree = tree_flatten(args)
        mapped = [x for x, b in zip(flat, flags) if b]

        def one(xs: Any) -> Any:
            it = iter(xs)
            return fun(*tree_unflatten(tree, [next(it) if b else x for x, b in zip(flat, flags)]))

        outs = lax.map(one, mapped)
        return outs, tree_map(lambda _: True, outs)

    return f
