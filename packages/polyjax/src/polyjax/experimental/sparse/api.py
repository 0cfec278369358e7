"""Constructors and conversions for every format: `empty`, `eye`, `todense`, `todense_p`."""

from __future__ import annotations

from typing import Any

import numpy as np

import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax.experimental.sparse import bcoo as _bcoo
from polyjax.experimental.sparse import bcsr as _bcsr
from polyjax.experimental.sparse._base import JAXSparse
from polyjax.experimental.sparse._primitive import sparse_primitive

__all__ = ["empty", "eye", "todense", "todense_p"]


def _todense_impl(*leaves: Any, tree: Any) -> Any:
    return tree_util.tree_unflatten(tree, leaves).todense()


todense_p = sparse_primitive("todense", _todense_impl, linear=(0,))


def todense(arr: Any) -> Any:
    """The dense array of a sparse array of any format; a dense array unchanged.

    Example:
      >>> import numpy as np
      >>> from polyjax.experimental import sparse
      >>> todense(sparse.BCSR.fromdense(np.eye(2)))
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    if isinstance(arr, JAXSparse):
        leaves, tree = tree_util.tree_flatten(arr)
        return todense_p.bind(*leaves, tree=tree)
    return jnp.asarray(arr)


_FORMATS = {"bcoo": _bcoo.BCOO, "bcsr": _bcsr.BCSR}


def _format(sparse_format: str) -> Any:
    if sparse_format not in _FORMATS:
        raise ValueError(f"sparse_format must be one of {sorted(_FORMATS)}, got {sparse_format!r}.")
    return _FORMATS[sparse_format]


def empty(
    shape: Any,
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> JAXSparse:
    """An all-zero sparse array with no stored entries.

    Args:
      shape: its shape.
      dtype: its dtype (default float32).
      index_dtype: the indices' dtype.
      sparse_format: ``'bcoo'`` or ``'bcsr'``.
      **kwds: `n_batch` and `n_dense`, as in `fromdense`.
    """
    cls = _format(sparse_format)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    dtype = np.dtype(dtype or np.float32)
    n_batch, n_dense = int(kwds.pop("n_batch", 0)), int(kwds.pop("n_dense", 0))
    if kwds:
        raise TypeError(f"empty: unexpected arguments {sorted(kwds)}.")
    return cls.fromdense(
        jnp.zeros(shape, dtype), nse=0, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense
    )


def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    index_dtype: Any = "int32",
    sparse_format: str = "bcoo",
    **kwds: Any,
) -> JAXSparse:
    """The sparse matrix with ones on diagonal `k` (``N x M``).

    Args:
      N: rows.
      M: columns (default `N`).
      k: the diagonal (positive: above the main one).
      dtype: the values' dtype (default float32).
      index_dtype: the indices' dtype.
      sparse_format: ``'bcoo'`` or ``'bcsr'``.
    """
    cls = _format(sparse_format)
    M = N if M is None else int(M)
    N, k = int(N), int(k)
    nse = max(0, min(N, M - k) if k >= 0 else min(N + k, M))
    return cls.fromdense(
        jnp.eye(N, M, k, dtype=dtype or np.float32), nse=nse, index_dtype=index_dtype, **kwds
    )
