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

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcasted_iota,
    slice_in_dim,
    transpose,
)
from polyjax_numpy.lax._sorting import sort, top_k

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]


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
    return _bind(operand, k, reduction_dimension, recall_target, True,
                 reduction_input_size_override, aggregate_to_topk)  # fmt: skip


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
    return _bind(operand, k, reduction_dimension, recall_target, False,
                 reduction_input_size_override, aggregate_to_topk)  # fmt: skip


# --- the primitive


def _bind(operand, k, reduction_dimension, recall_target, is_max_k, size_override, aggregate):
    _, dim, k = _check(operand, k, reduction_dimension)
    values, indices = approx_top_k_p.bind(
        operand,
        k=k,
        reduction_dimension=dim,
        recall_target=float(recall_target),
        is_max_k=bool(is_max_k),
        reduction_input_size_override=int(size_override),
        aggregate_to_topk=bool(aggregate),
    )
    return values, indices


def _abstract_eval(operand: ShapedArray, *, k: int, reduction_dimension: int, **params) -> list:
    shape = list(operand.shape)
    shape[reduction_dimension] = k
    return [ShapedArray(shape, operand.dtype), ShapedArray(shape, np.dtype(np.int32))]


def _composed(operand: Any, *, k: int, reduction_dimension: int, is_max_k: bool, **params):
    pick = (lambda x: top_k(x, k)) if is_max_k else (lambda x: _smallest(x, k))
    return list(_along_last(pick, operand, reduction_dimension))


def _jvp(primals: list, tangents: list, **params: Any) -> tuple:
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, **params)
    if type(t) is ad.Zero:
        return [values, indices], [ad.Zero.from_primal_value(values)] + [
            ad.Zero.from_primal_value(indices)
        ]

    def chosen(pair: tuple) -> tuple:
        # The tangent at the chosen indices, along the last axis: a one-hot product.
        t_last, idx_last = pair
        shape = get_aval(t_last).shape
        nd, kk = len(shape), get_aval(idx_last).shape[-1]
        mask_shape = (*shape, kk)
        positions = broadcasted_iota(np.int32, mask_shape, nd - 1)
        picked = broadcast_in_dim(idx_last, mask_shape, (*range(nd - 1), nd))
        onehot = ew.convert_element_type(ew.eq(positions, picked), get_aval(t_last).dtype)
        t_b = broadcast_in_dim(t_last, mask_shape, tuple(range(nd)))
        return reduce_sum(ew.mul(t_b, onehot), (nd - 1,)), idx_last

    dim = params["reduction_dimension"]
    ndim = get_aval(x).ndim
    perm = (*(a for a in range(ndim) if a != dim), dim)
    back = tuple(int(i) for i in np.argsort(perm))
    t_out, _ = chosen((transpose(t, perm), transpose(indices, perm)))
    return [values, indices], [transpose(t_out, back), ad.Zero.from_primal_value(indices)]


def _batch(args: list, dims: list, *, reduction_dimension: int, **params: Any) -> tuple:
    (x,), (d,) = args, dims
    x = batching.moveaxis(x, d, 0)
    out = approx_top_k_p.bind(x, reduction_dimension=reduction_dimension + 1, **params)
    return out, [0, 0]


approx_top_k_p = standard_primitive(
    "approx_top_k",
    _abstract_eval,
    mlir.lower_fun(_composed, multiple_results=True),
    multiple_results=True,
    jvp=_jvp,
    batching=_batch,
)
