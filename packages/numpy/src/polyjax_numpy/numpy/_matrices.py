"""Matrices defined by their diagonals: `eye`, `identity`, `tri`, `tril`, `triu`, `diag`,
`diagflat`, `diagonal`, `vander`.

Masks come from comparing two `broadcasted_iota`s (the column index minus the
row index is the diagonal number), so sizes may be symbolic and the diagonal
offset `k` of `eye`, `tri`, `tril` and `triu` may be traced. `diagonal` is a
strided slice of the flattened matrices (no gather), so its gradient is a pad.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.lax import _cumulative, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_dim, concrete_int, on_device, zeros_like
from polyjax_numpy.numpy._manipulation import moveaxis, ravel

_I32 = np.dtype(np.int32)


def _offset(k: Any, fun_name: str) -> Any:
    """A diagonal offset: a Python int, or a traced integer scalar (as int32)."""
    if isinstance(k, _u.ARRAY_TYPES):
        if _u.ndim(k) != 0 or not _u.issubdtype_of(k, np.integer):
            raise TypeError(
                f"jnp.{fun_name}: k must be an integer scalar, got {_u.dtype(k)}{_u.shape(k)}"
            )
        return _u.convert(k, _I32)
    return concrete_int(k, f"'k' argument of jnp.{fun_name}")


def _diagonal_number(shape: tuple[Any, Any]) -> Any:
    """The (column - row) index of each position of a matrix of `shape` (int32)."""
    rows = _shape_ops.broadcasted_iota(_I32, shape, 0)
    cols = _shape_ops.broadcasted_iota(_I32, shape, 1)
    return lax.sub(cols, rows)


def _compare_k(shape: tuple[Any, Any], k: Any, compare: Any) -> Any:
    """`compare(column - row, k)` over a matrix of `shape`: a bool mask."""
    if isinstance(k, int):
        k = np.int32(k)
    return compare(_diagonal_number(shape), k)


def _matrix_dims(N: Any, M: Any, fun_name: str) -> tuple[Any, Any]:
    N = concrete_dim(N, f"'N' argument of jnp.{fun_name}")
    M = N if M is None else concrete_dim(M, f"'M' argument of jnp.{fun_name}")
    for name, d in (("N", N), ("M", M)):
        if type(d) is int and d < 0:
            raise ValueError(f"jnp.{fun_name}: negative dimensions are not allowed, got {name}={d}")
    return N, M


def _mask_as(mask: Any, dtype: Any, fun_name: str) -> Any:
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    dtypes.check_user_dtype_supported(dtype, fun_name)
    return _u.convert(mask, dtypes.canonicalize_dtype(dtype))


def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *, device: Any = None) -> Any:
    """A 2-D array with ones on diagonal `k` and zeros elsewhere.

    Args:
      N: the number of rows (static; may be symbolic).
      M: the number of columns (default `N`).
      k: the diagonal: 0 the main one, positive above it, negative below; it may be
        a traced integer.
      dtype: the element type (default float32).
      device: where to put the result.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.eye(2, 3, k=1)
      Array([[0., 1., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    N, M = _matrix_dims(N, M, "eye")
    mask = _compare_k((N, M), _offset(k, "eye"), lax.eq)
    return on_device(_mask_as(mask, dtype, "eye"), device)


def identity(n: int, dtype: Any = None) -> Any:
    """The `n` by `n` identity matrix (`eye(n)`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.identity(2, dtype=int)
      Array([[1, 0],
             [0, 1]], dtype=int32)
    """
    return eye(n, dtype=dtype)


def tri(N: int, M: int | None = None, k: Any = 0, dtype: Any = None) -> Any:
    """A 2-D array with ones at and below diagonal `k`, zeros above.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.tri(3, dtype=int)
      Array([[1, 0, 0],
             [1, 1, 0],
             [1, 1, 1]], dtype=int32)
    """
    N, M = _matrix_dims(N, M, "tri")
    return _mask_as(_compare_k((N, M), _offset(k, "tri"), lax.le), dtype, "tri")


def _triangle(m: Any, k: Any, fun_name: str, compare: Any) -> Any:
    _u.check_arraylike(fun_name, m)
    m = asarray(m)
    shape = _u.shape(m)
    if len(shape) < 2:
        raise ValueError(f"Argument to jax.numpy.{fun_name} must be at least 2D, got {shape}")
    keep = _compare_k(shape[-2:], _offset(k, fun_name), compare)
    keep = _shape_ops.broadcast_in_dim(keep, shape, (len(shape) - 2, len(shape) - 1))
    return lax.select_n(keep, zeros_like(m), m)  # zeros_like: key arrays get zero keys


def tril(m: Any, k: Any = 0) -> Any:
    """`m` with the elements above diagonal `k` of its last two axes set to zero.

    Raises:
      ValueError: `m` has fewer than 2 dimensions.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.tril(jnp.ones((2, 2)))
      Array([[1., 0.],
             [1., 1.]], dtype=float32)
    """
    return _triangle(m, k, "tril", lax.le)


def triu(m: Any, k: Any = 0) -> Any:
    """`m` with the elements below diagonal `k` of its last two axes set to zero.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.triu(jnp.ones((2, 2)))
      Array([[1., 1.],
             [0., 1.]], dtype=float32)
    """
    return _triangle(m, k, "triu", lax.ge)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal `offset` of the matrices in axes `axis1`, `axis2` of `a`.

    The two axes are removed and the diagonal becomes the last axis.

    Raises:
      ValueError: `a` has fewer than 2 dimensions, or `axis1` equals `axis2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.diagonal(jnp.arange(6).reshape(2, 3), offset=1)
      Array([1, 5], dtype=int32)
    """
    _u.check_arraylike("diagonal", a)
    offset = concrete_int(offset, "'offset' argument of jnp.diagonal")
    ndim = _u.ndim(a)
    if ndim < 2:
        raise ValueError(f"diagonal requires an array of at least two dimensions, got {ndim}")
    ax1, ax2 = _u.canonicalize_axis(axis1, ndim), _u.canonicalize_axis(axis2, ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    *batch, n, m = _u.shape(a)
    if type(n) is not int or type(m) is not int:
        raise NotImplementedError(
            f"jnp.diagonal of matrices with symbolic sizes ({n}, {m}) is not supported"
        )
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    # In the row-major flattening, the diagonal's elements are m + 1 apart.
    flat = _shape_ops.reshape(a, (*batch, n * m))
    start = offset if offset >= 0 else -offset * m
    limit = start + (length - 1) * (m + 1) + 1 if length else start
    rank = len(batch)
    starts = [0] * rank + [start if length else 0]
    limits = list(batch) + [limit if length else 0]
    return _shape_ops.slice(flat, starts, limits, [1] * rank + [m + 1])


def diag(v: Any, k: int = 0) -> Any:
    """The matrix with `v` on diagonal `k` (for 1-D `v`), or diagonal `k` of `v` (2-D).

    Raises:
      ValueError: `v` is neither 1-D nor 2-D.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.diag(jnp.array([1, 2]))
      Array([[1, 0],
             [0, 2]], dtype=int32)
    """
    _u.check_arraylike("diag", v)
    k = concrete_int(k, "'k' argument of jnp.diag")
    v = asarray(v)
    ndim = _u.ndim(v)
    if ndim == 2:
        return diagonal(v, offset=k)
    if ndim != 1:
        raise ValueError(f"diag input must be 1d or 2d, got shape {_u.shape(v)}")
    n = _u.shape(v)[0] + abs(k)
    # Row i of the result holds v[i] on diagonal k >= 0; column j holds v[j] for k < 0.
    padded = _shape_ops.pad(v, np.zeros((), _u.dtype(v))[()], [(0, abs(k), 0)])
    spread = _shape_ops.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    on_diagonal = _compare_k((n, n), k, lax.eq)
    return lax.select_n(on_diagonal, _shape_ops.full_like(spread, 0), spread)


def diagflat(v: Any, k: int = 0) -> Any:
    """The matrix with the flattened `v` on diagonal `k`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.diagflat(jnp.array([[1, 2]])).shape
      (2, 2)
    """
    _u.check_arraylike("diagflat", v)
    return diag(ravel(v), k)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of the 1-D `x`: its columns are powers of `x`.

    Column `j` is `x ** (N - 1 - j)` (or `x ** j` if `increasing`); the powers are
    accumulated products, as in NumPy (no `pow`, so the gradient at 0 is finite).

    Args:
      x: a 1-D array.
      N: the number of columns (default `len(x)`); static.
      increasing: whether the powers increase from left to right.

    Raises:
      ValueError: `x` is not 1-D or `N` is negative.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.vander(jnp.array([1, 2, 3]), 3)
      Array([[1, 1, 1],
             [4, 2, 1],
             [9, 3, 1]], dtype=int32)
    """
    _u.check_arraylike("vander", x)
    x = asarray(x)
    if _u.ndim(x) != 1:
        raise ValueError(f"x must be a one-dimensional array, got shape {_u.shape(x)}")
    n = _u.shape(x)[0]
    N = n if N is None else concrete_int(N, "'N' argument of jnp.vander()")
    if N < 0:
        raise ValueError(f"N must be nonnegative, got {N}")
    if _u.is_bool(x):
        x = _u.convert(x, dtypes.default_int_dtype())
    if N == 0:
        return _shape_ops.full((n, 0), np.zeros((), _u.dtype(x))[()])
    ones = _shape_ops.full((n, 1), np.ones((), _u.dtype(x))[()])
    if N == 1:
        out = ones
    else:
        powers = _cumulative.cumprod(_shape_ops.broadcast_in_dim(x, (n, N - 1), (0,)), 1)
        out = _shape_ops.concatenate([ones, powers], 1)
    return out if increasing else _shape_ops.rev(out, (1,))
