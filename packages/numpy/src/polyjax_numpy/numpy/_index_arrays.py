"""Index arrays: `diag_indices`, `tril_indices`, `triu_indices` (and their `_from` forms),
`mask_indices`, `ravel_multi_index`, `unravel_index`.

The triangle and diagonal indices depend only on static sizes: they are
computed on the host and returned as int32 arrays (constants under `jit`).
`ravel_multi_index` and `unravel_index` are arithmetic on traced indices;
`ravel_multi_index(..., mode="raise")` checks bounds, so it needs concrete
indices, while "wrap" and "clip" work under transformations. Unlike NumPy,
`unravel_index` accepts negative indices and clips out-of-range ones (JAX's
rule: no data-dependent errors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int, ones, static_shape
from polyjax_numpy.numpy._manipulation import broadcast_arrays
from polyjax_numpy.numpy._selection import nonzero_static


def _int32_arrays(arrays: Sequence[np.ndarray]) -> tuple[Any, ...]:
    return tuple(asarray(np.asarray(a, np.int32)) for a in arrays)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """The indices of the main diagonal of an `ndim`-dimensional array of side `n`.

    Raises:
      ValueError: `n` or `ndim` is negative.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.diag_indices(2)
      (Array([0, 1], dtype=int32), Array([0, 1], dtype=int32))
    """
    n = concrete_int(n, "'n' argument of jnp.diag_indices")
    ndim = concrete_int(ndim, "'ndim' argument of jnp.diag_indices")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return _int32_arrays([np.arange(n)] * ndim)


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """The main diagonal's indices of `arr`, whose dimensions must all be equal (>= 2 of them).

    Example:
      >>> import polyjax.numpy as jnp
      >>> len(jnp.diag_indices_from(jnp.zeros((3, 3, 3))))
      3
    """
    _u.check_arraylike("diag_indices_from", arr)
    shape = _u.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError(f"All dimensions of input must be of equal length, got {shape}")
    return diag_indices(shape[0], len(shape))


def _triangle_indices(n: Any, k: Any, m: Any, fun_name: str, lower: bool) -> tuple[Any, ...]:
    n = concrete_int(n, f"'n' argument of jnp.{fun_name}")
    k = concrete_int(k, f"'k' argument of jnp.{fun_name}")
    m = n if m is None else concrete_int(m, f"'m' argument of jnp.{fun_name}")
    if n < 0 or m < 0:
        raise ValueError(f"jnp.{fun_name}: sizes must be non-negative, got n={n}, m={m}")
    found = np.tril_indices(n, k, m) if lower else np.triu_indices(n, k, m)
    return _int32_arrays(found)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The (row, column) indices of the lower triangle (at and below diagonal `k`) of an
    `n` by `m` matrix.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.tril_indices(2)
      (Array([0, 1, 1], dtype=int32), Array([0, 0, 1], dtype=int32))
    """
    return _triangle_indices(n, k, m, "tril_indices", lower=True)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """The (row, column) indices of the upper triangle (at and above diagonal `k`) of an
    `n` by `m` matrix.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.triu_indices(2)
      (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    return _triangle_indices(n, k, m, "triu_indices", lower=False)


def _matrix_shape(arr: Any, fun_name: str) -> tuple[Any, Any]:
    _u.check_arraylike(fun_name, arr)
    shape = _u.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"jnp.{fun_name}: input array must be 2-d, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`tril_indices` for the shape of the 2-D `arr`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> [i.shape for i in jnp.tril_indices_from(jnp.zeros((2, 3)))]
      [(3,), (3,)]
    """
    n, m = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """`triu_indices` for the shape of the 2-D `arr`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> [i.shape for i in jnp.triu_indices_from(jnp.zeros((2, 3)))]
      [(5,), (5,)]
    """
    n, m = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def mask_indices(
    n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *, size: int | None = None
) -> tuple[Any, Any]:
    """The indices of the nonzero entries of `mask_func(ones((n, n)), k)`.

    Args:
      n: the side of the square matrix.
      mask_func: a function like `jnp.triu` or `jnp.tril`.
      k: passed on to `mask_func`.
      size: the static number of indices (needed when the mask is traced, e.g. under
        `jit`); missing entries are 0.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.mask_indices(2, jnp.triu)
      (Array([0, 0, 1], dtype=int32), Array([0, 1, 1], dtype=int32))
    """
    n = concrete_int(n, "'n' argument of jnp.mask_indices")
    mask = mask_func(ones((n, n)), k)
    i, j = nonzero_static(mask, size=size, name="mask_indices")
    return i, j


def ravel_multi_index(
    multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise", order: str = "C"
) -> Any:
    """The flat indices, into an array of shape `dims`, of the multi-indices `multi_index`.

    Args:
      multi_index: one integer array per dimension (broadcast together).
      dims: the array's shape (static).
      mode: "raise" (out-of-range indices raise; needs concrete indices), "wrap"
        (modulo each dimension), "clip" or "ignore" (no bounds handling: the
        strides are applied to the indices as they are, as JAX does).
      order: "C" (row-major) or "F" (column-major).

    Raises:
      ValueError: a wrong number of index arrays, an index out of range in "raise"
        mode, or an unknown mode or order.
      TypeError: non-integer indices.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ravel_multi_index((jnp.array([0, 1]), jnp.array([2, 0])), (2, 3))
      Array([2, 3], dtype=int32)
    """
    dims = static_shape(dims, "'dims' argument of jnp.ravel_multi_index")
    if len(multi_index) != len(dims):
        raise ValueError(
            f"parameter multi_index must be a sequence of length {len(dims)}, got "
            f"{len(multi_index)}"
        )
    _u.check_arraylike("ravel_multi_index", *multi_index)
    indices = [asarray(i) for i in multi_index]
    for i in indices:
        if not _u.issubdtype_of(i, np.integer):
            raise TypeError(f"only int indices permitted, got {_u.dtype(i)}")
    if mode == "raise":
        for i, d in zip(indices, dims):
            host = concrete_or_error(
                np.asarray,
                i,
                "The error occurred because ravel_multi_index was jit-compiled with "
                "mode='raise'. Use mode='wrap' or mode='clip' instead.",
            )
            if ((host < 0) | (host >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        indices = [_floor_mod(i, d) for i, d in zip(indices, dims)]
    elif mode == "clip":
        indices = [
            lax.clamp(_u.scalar_like(0, i), i, _u.scalar_like(max(d - 1, 0), i))
            for i, d in zip(indices, dims)
        ]
    elif mode != "ignore":
        raise ValueError(f"invalid {mode=}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "C":
        strides = np.cumprod((1, *dims[1:][::-1]))[::-1]
    elif order == "F":
        strides = np.cumprod((1, *dims[:-1]))
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    if not indices:
        return asarray(0, dtype=dtypes.default_int_dtype())
    indices = broadcast_arrays(*_u.promote_dtypes(*indices))
    total = lax.mul(indices[0], _u.scalar_like(int(strides[0]), indices[0]))
    for i, s in zip(indices[1:], strides[1:]):
        total = lax.add(total, lax.mul(i, _u.scalar_like(int(s), i)))
    return total


def _floor_mod(i: Any, d: int) -> Any:
    size = _u.scalar_like(d, i)
    return lax.rem(lax.add(lax.rem(i, size), size), size)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The multi-indices, in an array of `shape`, of the flat `indices`.

    Unlike NumPy (JAX's rule), negative indices count from the end and indices out of
    range are clipped to the nearest valid one, so no error depends on the data.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unravel_index(jnp.array([1, 5]), (2, 3))
      (Array([0, 1], dtype=int32), Array([1, 2], dtype=int32))
    """
    _u.check_arraylike("unravel_index", indices)
    indices = asarray(indices)
    if not _u.issubdtype_of(indices, np.integer):
        raise TypeError(f"only int indices permitted, got {_u.dtype(indices)}")
    shape = static_shape(shape, "'shape' argument of jnp.unravel_index")
    if not shape:
        if _u.ndim(indices):
            raise ValueError("multiple indices are not supported for 0-dimensional shapes")
        return ()
    total = int(np.prod(shape))
    size = _u.scalar_like(total, indices)
    i = lax.select_n(lax.lt(indices, _u.scalar_like(0, indices)), indices, lax.add(indices, size))
    i = lax.clamp(_u.scalar_like(0, indices), i, _u.scalar_like(max(total - 1, 0), indices))
    out = []
    for d in reversed(shape):
        dim = _u.scalar_like(max(d, 1), i)
        out.append(lax.rem(i, dim))
        i = lax.div(i, dim)
    return tuple(reversed(out))
