"""`composite`: a function marked as one named operation, with its decomposition.

`composite(decomposition, name, version)` returns a function whose call binds
the primitive `composite` holding the traced decomposition; it lowers to a
`stablehlo.composite "name"` op whose `decomposition` is a private function
of the module, so a backend may replace the whole operation by a kernel of
its own while any other runs the decomposition. Keyword arguments of the call
are static attributes (Python ints become int64, floats float64, bools and
strings stay, NumPy scalars keep their dtype). As in JAX, a composite has no
derivative rule (`ValueError`: wrap it in `custom_jvp`); `vmap` batches the
decomposition and keeps the composite.

Example:
  >>> import numpy as np
  >>> scale = composite(lambda x, *, factor: x * factor, name="my.scale")
  >>> scale(np.arange(3, dtype=np.float32), factor=2.0)
  Array([0., 2., 4.], dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import get_aval
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax._declare import define_rules

__all__ = ["composite", "composite_p"]

composite_p = Primitive("composite")
composite_p.multiple_results = True


def _run(*args: Any, jaxpr: Any, hoisted: tuple, **_: Any) -> list[Any]:
    consts, flat = args[: len(hoisted)], args[len(hoisted) :]
    all_consts = list(jaxpr.consts)
    for i, value in zip(hoisted, consts):
        all_consts[i] = value
    return eval_jaxpr(jaxpr.jaxpr, all_consts, *flat)


def _abstract_eval(*avals: Any, jaxpr: Any, **_: Any) -> list[Any]:
    return [v.aval for v in jaxpr.jaxpr.outvars]


def _lowering(ctx, *args, jaxpr, hoisted, name, version, attributes):
    if ctx.module_context.dim_vars:
        # The decomposition would take the dimension variables as extra arguments.
        return mlir.lower_fun(functools.partial(_run, jaxpr=jaxpr, hoisted=hoisted))(ctx, *args)
    consts = list(jaxpr.consts)
    inner = jaxpr.jaxpr
    if hoisted:
        # Hoisted constants are operands: the decomposition takes them first.
        inner = inner.replace(constvars=[], invars=[*inner.constvars, *inner.invars])
    fn = mlir._lower_private_function(ctx.module_context, name, inner, [] if hoisted else consts)
    op = hlo.CompositeOp(
        [mlir.aval_to_ir_type(a) for a in ctx.avals_out],
        list(args),
        name=ir.StringAttr.get(name),
        composite_attributes=ir.DictAttr.get(
            {k: mlir.scalar_attribute(v, "composite") for k, v in attributes}
        ),
        decomposition=ir.FlatSymbolRefAttr.get(ir.StringAttr(fn.name).value),
        version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version),
    )
    return list(op.results)


def _jvp(primals, tangents, *, name, **_):
    raise ValueError(
        f"JVP rule for composite {name!r} not implemented. You can use `custom_jvp` to add support."
    )


def _batch(args, dims, *, jaxpr, hoisted, name, version, attributes):
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    axes = [None if d is None else 0 for d in dims]
    run = functools.partial(_run, jaxpr=jaxpr, hoisted=hoisted)
    batched = batching.vmap(lambda *xs: run(*xs), in_axes=axes, axis_size=size)
    closed = trace_to_jaxpr(lambda *xs: list(batched(*xs)), [get_aval(x) for x in moved])
    outs = _bind(closed, moved, name, version, attributes)
    return outs, [0] * len(outs)


def _bind(closed: Any, flat: list, name: str, version: int, attributes: tuple) -> list[Any]:
    hoisted = tuple(i for i, c in enumerate(closed.consts) if isinstance(c, Tracer))
    kept = [None if isinstance(c, Tracer) else c for c in closed.consts]
    return composite_p.bind(
        *(closed.consts[i] for i in hoisted),
        *flat,
        jaxpr=type(closed)(closed.jaxpr, kept),
        hoisted=hoisted,
        name=name,
        version=version,
        attributes=attributes,
    )


define_rules(composite_p, _abstract_eval, _lowering, impl=_run, jvp=_jvp, batching=_batch)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Callable[..., Any]:
    """Marks `decomposition` as the composite operation `name` (see the module docstring).

    Args:
      decomposition: a function of array arguments (pytrees allowed) and keyword
        attributes, returning a pytree of arrays.
      name: the operation's name, e.g. ``"my_project.my_op"``.
      version: the operation's version.

    Returns:
      The function: `f(*args, **attributes)` binds `composite`.
    """

    @functools.wraps(decomposition)
    def call(*args: Any, **attributes: Any) -> Any:
        flat, in_tree = tree_flatten(args)
        tree_box: list[Any] = []

        def flat_fun(*xs: Any) -> list[Any]:
            out = decomposition(*tree_unflatten(in_tree, list(xs)), **attributes)
            leaves, out_tree = tree_flatten(out)
            tree_box.append(out_tree)
            return leaves

        closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat])
        outs = _bind(closed, flat, name, int(version), tuple(sorted(attributes.items())))
        return tree_unflatten(tree_box[0], outs)

    return call
