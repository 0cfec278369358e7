"""`random_bcoo`: a random `BCOO` array."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax.experimental.sparse.bcoo import BCOO, bcoo_sort_indices

__all__ = ["random_bcoo"]


def random_bcoo(
    key: Any,
    shape: Sequence[int],
    *,
    dtype: Any = np.float32,
    indices_dtype: Any = np.int32,
    nse: float | int = 0.2,
    n_batch: int = 0,
    n_dense: int = 0,
    unique_indices: bool = True,
    sorted_indices: bool = False,
    generator: Callable[..., Any] = polyjax.random.uniform,
    **kwds: Any,
) -> BCOO:
    """A `BCOO` array with random indices and values.

    Args:
      key: a PRNG key.
      shape: the array's shape.
      dtype: the values' dtype.
      indices_dtype: the indices' dtype.
      nse: stored entries per batch element, or (between 0 and 1) their
        fraction of the sparse dimensions' size.
      n_batch: batch dimensions.
      n_dense: dense dimensions.
      unique_indices: whether the indices differ within each batch element.
      sorted_indices: whether the indices are sorted.
      generator: draws the values, ``generator(key, shape, dtype, **kwds)``.
      **kwds: passed to `generator`.

    Raises:
      ValueError: a layout that does not fit `shape`, or too many unique entries.
    """
    shape = tuple(operator.index(d) for d in shape)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(
            f"random_bcoo: n_batch={n_batch}, n_dense={n_dense} do not fit shape {shape}."
        )
    batch = shape[:n_batch]
    sparse_shape = shape[n_batch : len(shape) - n_dense]
    dense = shape[len(shape) - n_dense :]
    size = math.prod(sparse_shape)
    nse = int(nse * size) if 0 < nse < 1 else operator.index(nse)
    if unique_indices and nse > size:
        raise ValueError(f"random_bcoo: nse={nse} unique entries do not fit {size} positions.")
    index_key, data_key = polyjax.random.split(key)
    keys = polyjax.random.split(index_key, max(math.prod(batch), 1))

    def positions(k: Any) -> Any:
        return polyjax.random.choice(k, size, (nse,), replace=not unique_indices)

    flat = polyjax.vmap(positions)(keys).reshape(batch + (nse,))
    cols = [(flat // math.prod(sparse_shape[i + 1 :])) % n for i, n in enumerate(sparse_shape)]
    indices = (
        jnp.stack(cols, axis=-1).astype(indices_dtype)
        if cols
        else jnp.zeros(batch + (nse, 0), indices_dtype)
    )
    data = generator(data_key, batch + (nse,) + dense, dtype=dtype, **kwds)
    mat = BCOO((data, indices), shape=shape, unique_indices=unique_indices)
    return bcoo_sort_indices(mat) if sorted_indices else mat
