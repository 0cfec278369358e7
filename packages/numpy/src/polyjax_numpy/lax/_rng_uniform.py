"""`rng_uniform`: XLA's stateful uniform random numbers (`stablehlo.rng`).

Unlike `jax.random`, this generator is not reproducible: each execution draws
new values from the backend's internal state. Values are in `[a, b)`; both
bounds are scalars of one dtype (floats, or integers). It has no derivative
(its tangent is zero) and batches as one draw of the batched shape.

Example:
  >>> import numpy as np
  >>> x = rng_uniform(np.float32(0), np.float32(1), (3,))
  >>> x.shape, bool(((0 <= x) & (x < 1)).all())
  ((3,), True)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._shape_rules import match_python_scalars

__all__ = ["rng_uniform", "rng_uniform_p"]


def _abstract_eval(a: ShapedArray, b: ShapedArray, *, shape: tuple[int, ...]) -> ShapedArray:
    if a.shape or b.shape:
        raise TypeError(f"rng_uniform: a and b must be scalars, got shapes {a.shape}, {b.shape}.")
    if a.dtype != b.dtype:
        raise TypeError(f"rng_uniform: a and b must have one dtype, got {a.dtype} and {b.dtype}.")
    if a.dtype.kind not in "fiu":
        raise TypeError(f"rng_uniform: a and b must be floats or integers, got {a.dtype}.")
    return ShapedArray(shape, a.dtype)


def _lowering(ctx: Any, a: Any, b: Any, *, shape: tuple[int, ...]) -> list[Any]:
    dims = mlir.ir_constant(np.array(shape, np.int64))
    return [hlo.rng(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM"))]


def _batch(args, dims, *, shape):
    if any(d is not batching.not_mapped for d in dims):
        raise NotImplementedError("rng_uniform: batched bounds are not supported.")
    return rng_uniform_p.bind(*args, shape=shape), batching.not_mapped


rng_uniform_p = standard_primitive(
    "rng_uniform", _abstract_eval, _lowering, jvp="zero", batching=_batch
)


def rng_uniform(a: Any, b: Any, shape: Sequence[int]) -> Any:
    """Stateful uniform random numbers in `[a, b)` (see the module docstring).

    Args:
      a: the lower bound, a scalar.
      b: the upper bound, a scalar of `a`'s dtype (a Python scalar takes it).
      shape: the result's shape.

    Returns:
      An array of `shape` and the bounds' dtype.

    Raises:
      TypeError: the bounds are not scalars of one real dtype.
    """
    a, b = match_python_scalars((a, b))
    return rng_uniform_p.bind(a, b, shape=tuple(operator.index(d) for d in shape))
