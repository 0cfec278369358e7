"""`approx_max_k` / `approx_min_k`: the k largest or smallest entries along one axis.

JAX's versions trade recall for speed on TPU; on CPU (polyjax's backend) they
are exact, and so are these: `approx_max_k` is `top_k` along the reduction
axis and `approx_min_k` a stable ascending sort of (value, index) pairs cut at
`k`. Both are compositions of primitives that have every rule, so they
differentiate and batch like those (JAX binds one `approx_top_k` primitive;
polyjax has no such primitive object, as docs/lax.md records). NaNs count as
the largest values, as in JAX. `recall_target`,
`reduction_input_size_override` and `aggregate_to_topk` are accepted and do not
change the exact result (JAX on CPU returns a longer, partially reduced
result when `aggregate_to_topk=False`; polyjax always returns `k` entries).

Example:
  >>> import numpy as np
  >>> approx_max_k(np.array([1.0, 4.0, 2.0], np.float32), 2)
  (Array([4., 2.], dtype=float32), Array([1, 2], dtype=int32))
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax._shape_ops import broadcasted_iota, slice_in_dim, transpose
from polyjax_numpy.lax._sorting import sort, top_k

__all__ = ["approx_max_k", "approx_min_k"]


def _check(operand: Any, k: int, reduction_dimension: int) -> tuple[Any, int, int]:
    aval = get_aval(operand)
    if not (np.issubdtype(aval.dtype, np.floating) or aval.dtype.name == "bfloat16"):
        raise ValueError(f"operand must be a floating type, got {aval.dtype}.")
    if not -aval.ndim <= reduction_dimension < aval.ndim:
        raise IndexError(
            f"reduction_dimension {reduction_dimension} is out of bounds for an operand of "
            f"rank {aval.ndim}."
        )
    dim = reduction_dimension % aval.ndim
    k = operator.index(k)
    if not 0 <= k <= aval.shape[dim]:
        raise ValueError(
            f"k must be smaller than the size of reduction_dim {aval.shape[dim]}, got {k}"
        )
    return aval, dim, k


def _along_last(fun, operand: Any, dim: int) -> tuple[Any, Any]:
    """Applies `fun` along the last axis after moving axis `dim` there, then moves it back."""
    ndim = get_aval(operand).ndim
    perm = (*(a for a in range(ndim) if a != dim), dim)
    back = tuple(int(i) for i in np.argsort(perm))
    values, indices = fun(transpose(operand, perm))
    return transpose(values, back), transpose(indices, back)


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The `k` largest entries of `operand` along `reduction_dimension`, and their indices.

    Args:
      operand: a floating-point array.
      k: how many entries to keep (at most the size of the reduction axis).
      reduction_dimension: the axis reduced.
      recall_target: the recall JAX's TPU algorithm aims for (exact here).
      reduction_input_size_override: JAX's size hint for sharded inputs (unused here).
      aggregate_to_topk: JAX's choice of a final exact top-k (always made here).

    Returns:
      `(values, indices)`, sorted by decreasing value, the reduction axis cut to
      `k`; the indices are int32.

    Raises:
      ValueError: the operand is not floating point, or `k` exceeds the axis size.
      IndexError: `reduction_dimension` is out of bounds.

    Example:
      >>> import numpy as np
      >>> approx_max_k(np.array([[1.0, 3.0], [4.0, 2.0]], np.float32), 1,
      ...              reduction_dimension=0)[1]
      Array([[1, 0]], dtype=int32)
    """
    _, dim, k = _check(operand, k, reduction_dimension)
    return _along_last(lambda x: top_k(x, k), operand, dim)


def _smallest(x: Any, k: int) -> tuple[Any, Any]:
    ndim = get_aval(x).ndim
    index = broadcasted_iota(np.int32, get_aval(x).shape, ndim - 1)
    values, indices = sort((x, index), dimension=ndim - 1, is_stable=True, num_keys=1)
    return slice_in_dim(values, 0, k, axis=ndim - 1), slice_in_dim(indices, 0, k, axis=ndim - 1)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> tuple[Any, Any]:
    """The `k` smallest entries of `operand` along `reduction_dimension`, and their indices.

    Ties keep the order of their indices; NaNs sort last.

    Args:
      operand: a floating-point array.
      k: how many entries to keep (at most the size of the reduction axis).
      reduction_dimension: the axis reduced.
      recall_target: the recall JAX's TPU algorithm aims for (exact here).
      reduction_input_size_override: JAX's size hint for sharded inputs (unused here).
      aggregate_to_topk: JAX's choice of a final exact top-k (always made here).

    Returns:
      `(values, indices)`, sorted by increasing value, the reduction axis cut to
      `k`; the indices are int32.

    Raises:
      ValueError: the operand is not floating point, or `k` exceeds the axis size.
      IndexError: `reduction_dimension` is out of bounds.

    Example:
      >>> import numpy as np
      >>> approx_min_k(np.array([3.0, 1.0, 2.0], np.float32), 2)
      (Array([1., 2.], dtype=float32), Array([1, 2], dtype=int32))
    """
    _, dim, k = _check(operand, k, reduction_dimension)
    return _along_last(lambda x: _smallest(x, k), operand, dim)
