"""`fill_diagonal`: a copy of an array with its main diagonal `a[i, ..., i]` replaced.

NumPy writes in place; JAX arrays are immutable, so as in JAX the caller must
pass `inplace=False` and use the returned copy. The values of `val` are taken
in order (flattened) and repeated cyclically, or cut short, to fill the
diagonal; `wrap=True` (NumPy's wrapped diagonal of tall matrices) is not
supported, as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray
from polyjax_numpy.numpy._index_update import at
from polyjax_numpy.numpy._manipulation import ravel, take_axis


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """`a` with its main diagonal set to `val` (cycled or cut to the diagonal's length).

    Args:
      a: an array of rank 2 or more (all axes of one length when rank > 2).
      val: a scalar or array of values, flattened.
      wrap: not supported (must be False).
      inplace: must be False: the updated copy is returned.

    Raises:
      ValueError: `inplace` is True, `a` has rank < 2 or unequal axes, or `val` is empty.
      NotImplementedError: `wrap` is True.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fill_diagonal(jnp.zeros((3, 3), int), jnp.array([1, 2]), inplace=False)
      Array([[1, 0, 0],
             [0, 2, 0],
             [0, 0, 1]], dtype=int32)
    """
    if inplace:
        raise ValueError(
            "JAX arrays are immutable, so jnp.fill_diagonal cannot modify its input in place. "
            "Pass inplace=False to get the updated copy instead."
        )
    if wrap:
        raise NotImplementedError("jnp.fill_diagonal does not support wrap=True")
    _u.check_arraylike("fill_diagonal", a, val)
    arr = asarray(a)
    shape = _u.shape(arr)
    if len(shape) < 2:
        raise ValueError(f"jnp.fill_diagonal: array must be at least 2-d, got shape {shape}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError(
            f"jnp.fill_diagonal: all dimensions of input must be of equal length, got {shape}"
        )
    n = min(shape)
    values = ravel(_u.convert(asarray(val), _u.dtype(arr)))
    m = _u.shape(values)[0]
    if n == 0:
        return arr
    if m == 0:
        raise ValueError("jnp.fill_diagonal: val must not be empty")
    diagonal = take_axis(values, np.arange(n) % m, 0)
    index = np.arange(n)
    return at(arr)[(index,) * len(shape)].set(_shape_ops.reshape(diagonal, (n,)))


__all__ = ["fill_diagonal"]
