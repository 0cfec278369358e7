"""`optimization_barrier`: values that the compiler may not look through.

    optimization_barrier   f32[3], i32[] -> f32[3], i32[]   (the same values)

The primitive returns its operands unchanged and lowers to
``stablehlo.optimization_barrier``: every output is computed before any
operation that uses one of them, XLA does not merge computations across it
(common-subexpression elimination, fusion) and it orders operations that read
the outputs after those that produced the inputs. Outside a compiled function it
does nothing.

Rules: the barrier is the identity, so it is linear; its jvp puts the tangents
behind a barrier of their own (the primal outputs must not wait on the
tangents, and stay known under partial evaluation), its transpose puts the
cotangents behind one, and vmap applies it to the batched values.
"""

from __future__ import annotations

from typing import Any

from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import ad
from polyjax_numpy.lax._declare import define_rules

__all__ = ["optimization_barrier", "optimization_barrier_p"]

optimization_barrier_p = Primitive("optimization_barrier")
optimization_barrier_p.multiple_results = True


def optimization_barrier(operand: Any, /) -> Any:
    """Returns `operand` (a pytree of arrays) unchanged, behind a compiler barrier.

    Inside `jit`, the outputs are computed before any operation that uses them,
    and the compiler does not fuse or deduplicate computations across the barrier
    (rematerialization relies on this).

    Example:
      >>> def f(x):
      ...     return optimization_barrier(sin(x)) + sin(x)  # two sin computations
    """
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _abstract_eval(*avals: ShapedArray) -> list[ShapedArray]:
    return list(avals)


def _lowering(ctx: Any, *args: Any) -> list:
    if not args:
        return []
    return list(hlo.OptimizationBarrierOp(list(args)).results)


def _barrier_nonzero(values: list) -> list:
    """The barrier applied to the values that are not symbolic zeros."""
    live = [v for v in values if type(v) is not ad.Zero]
    outs = iter(optimization_barrier_p.bind(*live) if live else [])
    return [v if type(v) is ad.Zero else next(outs) for v in values]


def _jvp(primals: list, tangents: list) -> tuple[list, list]:
    return optimization_barrier_p.bind(*primals), _barrier_nonzero(list(tangents))


def _transpose(cts: list, *args: Any) -> list:
    # Output i is input i: only the linear inputs get a cotangent.
    out = iter(_barrier_nonzero([ct for ct, a in zip(cts, args) if ad.is_undefined_primal(a)]))
    return [next(out) if ad.is_undefined_primal(a) else None for a in args]


def _batch(args: list, dims: list) -> tuple[list, list]:
    return optimization_barrier_p.bind(*args), list(dims)


define_rules(
    optimization_barrier_p,
    _abstract_eval,
    _lowering,
    jvp=_jvp,
    transpose=_transpose,
    batching=_batch,
)
