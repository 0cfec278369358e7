"""Small array helpers of `jax.lax`: `tile`, `stack`, `unstack`, `broadcast_like`, ...

`tile`, `stack` and `unstack` bind primitives of their own (`tile_p`,
`stack_p`, `unstack_p`, as JAX), each lowered as its composition of
`broadcast_in_dim`, `reshape`, `concatenate` and slicing. All three are
linear: the transpose of `tile` sums the tiles, `stack` and `unstack`
transpose to each other. Under `vmap` the batch moves to the front and the
axis parameters shift by one.

Example:
  >>> import numpy as np
  >>> tile(np.arange(3, dtype=np.float32), (2,)).shape
  (6,)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._dim_value import dim_as_value
from polyjax_numpy.lax._elementwise import convert_element_type
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, concatenate, expand_dims, reshape
from polyjax_numpy.lax._slicing import index_in_dim

__all__ = [
    "broadcast_like",
    "dtype",
    "shape_as_value",
    "stack",
    "stack_p",
    "tile",
    "tile_p",
    "unstack",
    "unstack_p",
]


def _canonical_axis(axis: int, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """Repeats `operand` `reps[i]` times along each axis `i`.

    Args:
      operand: an array.
      reps: one non-negative repetition count per axis of `operand`.

    Returns:
      An array of shape `operand.shape[i] * reps[i]`.

    Raises:
      TypeError: `reps` does not have one entry per axis.
      ValueError: a repetition count is negative.

    Example:
      >>> import numpy as np
      >>> tile(np.array([[1, 2]], np.int32), (2, 2))
      Array([[1, 2, 1, 2],
             [1, 2, 1, 2]], dtype=int32)
    """
    aval = get_aval(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != aval.ndim:
        raise TypeError(
            "reps length must be equal to the ndim of x, got "
            f"len(reps)={len(reps)} and x.ndim={aval.ndim}."
        )
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}.")
    return tile_p.bind(operand, reps=reps)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stacks arrays of one shape and dtype along a new axis `axis`.

    Args:
      operands: a non-empty sequence of arrays of equal shapes and dtypes.
      axis: where the new axis goes (negative counts from the end of the result).

    Returns:
      The stacked array.

    Raises:
      ValueError: `operands` is empty, or their ranks or shapes differ.
      TypeError: their dtypes differ.

    Example:
      >>> import numpy as np
      >>> stack([np.zeros(2, np.float32), np.ones(2, np.float32)], axis=1).shape
      (2, 2)
    """
    operands = list(operands)
    if not operands:
        raise ValueError("lax.stack requires a non-empty sequence of arrays.")
    avals = [get_aval(x) for x in operands]
    if len({a.ndim for a in avals}) != 1:
        shapes = ", ".join(str(a.shape) for a in avals)
        raise ValueError(f"Cannot stack arrays with different numbers of dimensions: got {shapes}.")
    if len({np.dtype(a.dtype) for a in avals}) != 1:
        names = ", ".join(str(a.dtype) for a in avals)
        raise TypeError(f"lax.stack requires arguments to have the same dtypes, got {names}.")
    if len({tuple(a.shape) for a in avals}) != 1:
        shapes = ", ".join(str(a.shape) for a in avals)
        raise ValueError(f"lax.stack requires arrays of one shape, got {shapes}.")
    axis = _canonical_axis(axis, avals[0].ndim + 1, "lax.stack")
    return stack_p.bind(*operands, axis=axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """Splits `x` along `axis` into a tuple of its slices (`axis` removed).

    Args:
      x: an array of rank at least 1.
      axis: the axis to split (negative counts from the end).

    Returns:
      A tuple of `x.shape[axis]` arrays.

    Raises:
      ValueError: `axis` is out of bounds.

    Example:
      >>> import numpy as np
      >>> [a.shape for a in unstack(np.zeros((2, 3), np.float32), axis=1)]
      [(2,), (2,), (2,)]
    """
    aval = get_aval(x)
    axis = _canonical_axis(axis, aval.ndim, "lax.unstack")
    return tuple(unstack_p.bind(x, axis=axis))


# --- the primitives of tile, stack and unstack


def _tile_composed(operand: Any, *, reps: tuple) -> Any:
    # Each axis d becomes a pair (r, d) of a new broadcast axis and the old one.
    shape = get_aval(operand).shape
    wide = tuple(s for r, d in zip(reps, shape) for s in (r, d))
    out = broadcast_in_dim(operand, wide, tuple(range(1, 2 * len(shape), 2)))
    return reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def _tile_transpose(ct: Any, operand: Any, *, reps: tuple) -> list:
    shape = operand.aval.shape
    pairs = reshape(ad.instantiate_zeros(ct), tuple(s for r, d in zip(reps, shape) for s in (r, d)))
    return [reduce_sum(pairs, tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch(args: list, dims: list, *, reps: tuple) -> tuple:
    x = batching.moveaxis(args[0], dims[0], 0)
    return tile_p.bind(x, reps=(1, *reps)), 0


tile_p = standard_primitive(
    "tile",
    lambda x, *, reps: ShapedArray(
        tuple(r * d for r, d in zip(reps, x.shape)), x.dtype, x.weak_type
    ),  # fmt: skip
    mlir.lower_fun(_tile_composed, multiple_results=False),
    linear_transpose=_tile_transpose,
    batching=_tile_batch,
)


def _stack_abstract_eval(*avals: ShapedArray, axis: int) -> ShapedArray:
    shape = list(avals[0].shape)
    shape.insert(axis, len(avals))
    return ShapedArray(tuple(shape), avals[0].dtype, all(a.weak_type for a in avals))


def _stack_transpose(ct: Any, *operands: Any, axis: int) -> list:
    parts = unstack_p.bind(ad.instantiate_zeros(ct), axis=axis)
    return [p if type(x) is ad.UndefinedPrimal else None for p, x in zip(parts, operands)]


def _stack_batch(args: list, dims: list, *, axis: int) -> tuple:
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not batching.not_mapped)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return stack_p.bind(*xs, axis=axis + 1), 0


stack_p = standard_primitive(
    "stack",
    _stack_abstract_eval,
    mlir.lower_fun(
        lambda *xs, axis: concatenate([expand_dims(x, (axis,)) for x in xs], axis),
        multiple_results=False,
    ),
    linear_transpose=_stack_transpose,
    batching=_stack_batch,
)


def _unstack_abstract_eval(x: ShapedArray, *, axis: int) -> list:
    shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
    return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]


def _unstack_transpose(cts: list, x: Any, *, axis: int) -> list:
    return [stack_p.bind(*map(ad.instantiate_zeros, cts), axis=axis)]


def _unstack_batch(args: list, dims: list, *, axis: int) -> tuple:
    x = batching.moveaxis(args[0], dims[0], 0)
    outs = unstack_p.bind(x, axis=axis + 1)
    return outs, [0] * len(outs)


unstack_p = standard_primitive(
    "unstack",
    _unstack_abstract_eval,
    mlir.lower_fun(
        lambda x, axis: [
            index_in_dim(x, i, axis, keepdims=False) for i in range(get_aval(x).shape[axis])
        ]
    ),
    multiple_results=True,
    linear_transpose=_unstack_transpose,
    batching=_unstack_batch,
)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """Broadcasts `arr` to the shape of `like_arr` (NumPy's rules: axes aligned at the end).

    Args:
      arr: the array broadcast.
      like_arr: an array (or anything with a shape) whose shape is the target.

    Returns:
      `arr` broadcast to `like_arr`'s shape, with `arr`'s dtype.

    Example:
      >>> import numpy as np
      >>> broadcast_like(np.float32(1), np.zeros((2, 3))).shape
      (2, 3)
    """
    shape = tuple(np.shape(like_arr)) if not hasattr(like_arr, "shape") else like_arr.shape
    ndim = get_aval(arr).ndim
    if ndim > len(shape):
        raise ValueError(
            f"broadcast_like: cannot broadcast an array of rank {ndim} to shape {shape}."
        )
    return broadcast_in_dim(arr, tuple(shape), tuple(range(len(shape) - ndim, len(shape))))


def dtype(x: Any) -> np.dtype:
    """The dtype polyjax gives `x` as an array (64-bit kinds narrowed unless x64 is on).

    Args:
      x: a value, a scalar type or a dtype-like.

    Returns:
      The canonical dtype.

    Example:
      >>> dtype(1.0)
      dtype('float32')
    """
    return dtypes.dtype(x, canonicalize=True)


def shape_as_value(shape: Sequence[Any]) -> Any:
    """A shape as an int32 vector, symbolic dimensions computed at run time.

    Args:
      shape: a tuple of ints or symbolic dimensions.

    Returns:
      An int32 array of shape `(len(shape),)`.

    Example:
      >>> shape_as_value((2, 3))
      Array([2, 3], dtype=int32)
    """
    shape = tuple(shape)
    if not shape:
        return np.zeros((0,), np.int32)
    parts = [expand_dims(convert_element_type(dim_as_value(d), np.int32), (0,)) for d in shape]
    return concatenate(parts, 0)
