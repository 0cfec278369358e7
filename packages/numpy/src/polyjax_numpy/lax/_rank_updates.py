"""Low-rank updates of symmetric matrices: `cholesky_update` and `symmetric_product`.

`cholesky_update_p` gives the upper Cholesky factor of ``R^T R + w w^T`` from
the factor `R` of ``R^T R`` and a vector `w` in O(n^2) operations: one
Givens-like rotation per row, which folds `w` into the row and carries the
remainder to the next rows (a `fori_loop` over the rows, every batch element
at once).

`symmetric_product_p` is BLAS's ``syrk``: ``alpha * a @ a^T + beta * c``, for
floating dtypes (as JAX).

Both are lowered as compositions of other primitives (their lowering is the
composition, so the primitive shows in jaxprs as in JAX). Neither has a
derivative, as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._dot import batch_matmul
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.lax._reflectors import batch_at_front
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcasted_iota,
    expand_dims,
    full_like,
    squeeze,
    transpose,
)
from polyjax_numpy.lax._slicing import dynamic_slice, dynamic_update_slice
from polyjax_numpy.lax._while import fori_loop

__all__ = [
    "cholesky_update",
    "cholesky_update_p",
    "symmetric_product",
    "symmetric_product_p",
]

_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


# --- cholesky_update


def _cholesky_update_abstract_eval(r: ShapedArray, w: ShapedArray) -> ShapedArray:
    if np.dtype(r.dtype) not in _REAL or np.dtype(w.dtype) != np.dtype(r.dtype):
        raise TypeError(
            "cholesky_update needs r_matrix and w_vector of one dtype, float32 or float64, got "
            f"{r.dtype} and {w.dtype}"
        )
    if r.ndim < 2 or r.shape[-1] != r.shape[-2] or tuple(w.shape) != tuple(r.shape[:-1]):
        raise ValueError(
            "cholesky_update needs r_matrix: [..., n, n] and w_vector: [..., n], got "
            f"{tuple(r.shape)} and {tuple(w.shape)}"
        )
    return ShapedArray(r.shape, r.dtype)


def _cholesky_update_composed(r: Any, w: Any) -> Any:
    aval = get_aval(r)
    nb, n = aval.ndim - 2, aval.shape[-1]
    if 0 in tuple(aval.shape):
        return r
    cols = broadcasted_iota(np.int32, (*aval.shape[:-2], n), nb)

    def row_step(k: Any, carry: tuple) -> tuple:
        r, w = carry
        zeros = (np.int32(0),) * nb
        row = squeeze(dynamic_slice(r, (*zeros, k, np.int32(0)), (*aval.shape[:-2], 1, n)), (nb,))
        pick = ew.eq(cols, k)
        r_kk = _take(row, pick, nb)
        w_k = _take(w, pick, nb)
        radius = ew.sqrt(ew.add(ew.mul(r_kk, r_kk), ew.mul(w_k, w_k)))
        c, s = ew.div(radius, r_kk), ew.div(w_k, r_kk)
        after = ew.gt(cols, k)
        rotated = ew.div(ew.add(row, ew.mul(s, w)), c)
        new_row = ew.select_n(after, ew.select_n(pick, row, _spread(radius, n, nb)), rotated)
        new_w = ew.select_n(after, w, ew.sub(ew.mul(c, w), ew.mul(s, new_row)))
        r = dynamic_update_slice(r, expand_dims(new_row, (nb,)), (*zeros, k, np.int32(0)))
        return r, new_w

    r, _ = fori_loop(0, n, row_step, (r, w))
    return r


def _take(x: Any, pick: Any, nb: int) -> Any:
    """The element `pick` marks in each vector of `x` ([..., n] -> [..., 1])."""
    return expand_dims(reduce_sum(ew.select_n(pick, full_like(x, 0), x), (nb,)), (nb,))


def _spread(x: Any, n: int, nb: int) -> Any:
    shape = (*get_aval(x).shape[:-1], n)
    return broadcast_in_dim(x, shape, tuple(range(nb + 1)))


cholesky_update_p = standard_primitive(
    "cholesky_update",
    _cholesky_update_abstract_eval,
    mlir.lower_fun(_cholesky_update_composed, multiple_results=False),
)
batching.primitive_batchers[cholesky_update_p] = batch_at_front(cholesky_update_p, False)


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The Cholesky factor of a rank-1 update: `R'` with ``R'^T R' = R^T R + w w^T``.

    Args:
      r_matrix: ``[..., n, n]``, upper triangular Cholesky factors `R` (float32 or
        float64) with a positive diagonal.
      w_vector: ``[..., n]``, the update vectors `w`.

    Returns:
      The upper triangular factor of ``R^T R + w w^T`` (positive diagonal), in
      O(n^2) operations.

    Raises:
      TypeError: the dtypes differ or are not float32/float64.
      ValueError: the shapes do not fit.

    Example:
      >>> import numpy as np
      >>> cholesky_update(np.eye(2, dtype=np.float32), np.array([0.0, 0.0], np.float32))
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    return cholesky_update_p.bind(r_matrix, w_vector)


# --- symmetric_product


def _symmetric_product_abstract_eval(
    a: ShapedArray, c: ShapedArray, *, alpha: float, beta: float
) -> ShapedArray:
    if not dtypes.issubdtype(a.dtype, np.floating) or np.dtype(c.dtype) != np.dtype(a.dtype):
        raise TypeError(
            "symmetric_product needs a_matrix and c_matrix of one floating dtype (as JAX), "
            f"got {a.dtype} and {c.dtype}"
        )
    n = a.shape[-2] if a.ndim >= 2 else None
    if a.ndim < 2 or c.ndim != a.ndim or tuple(c.shape) != (*a.shape[:-2], n, n):
        raise ValueError(
            "symmetric_product needs a_matrix: [..., n, k] and c_matrix: [..., n, n], got "
            f"{tuple(a.shape)} and {tuple(c.shape)}"
        )
    return ShapedArray(c.shape, c.dtype)


def _symmetric_product_composed(a: Any, c: Any, *, alpha: float, beta: float) -> Any:
    dtype = get_aval(a).dtype
    product = batch_matmul(a, _mT(a))
    return ew.add(ew.mul(np.asarray(alpha, dtype), product), ew.mul(np.asarray(beta, dtype), c))


symmetric_product_p = standard_primitive(
    "symmetric_product",
    _symmetric_product_abstract_eval,
    mlir.lower_fun(_symmetric_product_composed, multiple_results=False),
)
batching.primitive_batchers[symmetric_product_p] = batch_at_front(symmetric_product_p, False)


def symmetric_product(
    a_matrix: Any,
    c_matrix: Any,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    symmetrize_output: bool = False,
) -> Any:
    """``alpha * a @ a^T + beta * c`` (BLAS ``syrk``), for symmetric `c`.

    Args:
      a_matrix: ``[..., n, k]``.
      c_matrix: ``[..., n, n]``, of `a_matrix`'s dtype.
      alpha, beta: the scales (Python numbers).
      symmetrize_output: return ``(out + out^T) / 2``, exactly symmetric.

    Returns:
      ``[..., n, n]``.

    Raises:
      TypeError: the dtypes differ or are not floating.
      ValueError: the shapes do not fit.

    Example:
      >>> import numpy as np
      >>> a = np.array([[1.0], [2.0]], np.float32)
      >>> symmetric_product(a, np.eye(2, dtype=np.float32), alpha=2.0, beta=1.0)
      Array([[3., 4.],
             [4., 9.]], dtype=float32)
    """
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
    if symmetrize_output:
        half = np.asarray(0.5, get_aval(out).dtype)
        out = ew.mul(half, ew.add(out, _mT(out)))
    return out
