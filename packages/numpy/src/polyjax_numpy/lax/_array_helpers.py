"""Small array helpers of `jax.lax` composed from the structural primitives.

`tile`, `stack`, `unstack` and `broadcast_like` need no primitive of their own:
they are `broadcast_in_dim`, `reshape`, `concatenate` and `index_in_dim`
applied with the right dimension numbers, so every transformation already
handles them. (JAX binds its own `tile`/`stack`/`unstack` primitives; polyjax
leaves those three primitive objects out, as docs/lax.md records.)

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
from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax._dim_value import dim_as_value
from polyjax_numpy.lax._elementwise import convert_element_type
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, concatenate, expand_dims, reshape
from polyjax_numpy.lax._slicing import index_in_dim

__all__ = ["broadcast_like", "dtype", "shape_as_value", "stack", "tile", "unstack"]


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
    # Each axis d becomes a pair (r, d) of a new broadcast axis and the old one.
    wide = tuple(s for r, d in zip(reps, aval.shape) for s in (r, d))
    out = broadcast_in_dim(operand, wide, tuple(range(1, 2 * aval.ndim, 2)))
    return reshape(out, tuple(r * d for r, d in zip(reps, aval.shape)))


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
    axis = _canonical_axis(axis, avals[0].ndim + 1, "lax.stack")
    return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


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
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(aval.shape[axis]))


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
