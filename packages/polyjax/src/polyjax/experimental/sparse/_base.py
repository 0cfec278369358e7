"""`JAXSparse`, the base class of the sparse formats, and what they share."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import polyjax.numpy as jnp

__all__ = ["JAXSparse", "check_product_operand", "nse_from"]


def nse_from(count: Any, nse: Any, what: str) -> int:
    """`nse` if given, else `count()` (a concrete count of the stored entries needed)."""
    if nse is not None:
        try:
            return int(nse)
        except Exception as e:
            raise ValueError(f"{what}: nse must be a concrete integer, got {nse!r}.") from e
    try:
        return int(count())
    except Exception as e:  # a tracer: the number of entries must be static
        raise ValueError(
            f"{what}: nse must be given when the matrix is traced (under jit or vmap)."
        ) from e


def check_product_operand(shape: Any, other: Any, transpose: bool, ndim: int, what: str) -> Any:
    """`other` as an array, checked to be a `ndim`-D right operand of a matrix of `shape`."""
    other = jnp.asarray(other)
    k = shape[0] if transpose else shape[1]
    if other.ndim != ndim or other.shape[0] != k:
        raise ValueError(
            f"{what}: operand of shape {other.shape} does not fit a matrix of shape "
            f"{shape} (transpose={transpose})."
        )
    return other


class JAXSparse:
    """The base class of the sparse array types (`BCOO`, `BCSR`, `COO`, `CSR`, `CSC`)."""

    data: Any
    shape: tuple[int, ...]
    # NumPy operators defer to ours (``ndarray @ sparse`` calls `__rmatmul__`).
    __array_ufunc__ = None
    __array_priority__ = 2000

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nse(self) -> int:
        return int(self._nse_axis_size())

    def _nse_axis_size(self) -> int:
        return self.data.shape[-1]

    def _layout_suffix(self) -> str:
        return ""

    def __repr__(self) -> str:
        try:
            dtype = np.dtype(self.dtype).name
        except TypeError:
            dtype = str(self.dtype)
        shape = list(self.shape)
        return f"{type(self).__name__}({dtype}{shape}, nse={self.nse}{self._layout_suffix()})"

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def T(self) -> Any:
        return self.transpose()

    def todense(self) -> Any:
        raise NotImplementedError

    def block_until_ready(self) -> JAXSparse:
        """Waits for the buffers' computations; returns `self`."""
        for leaf in self.tree_flatten()[0]:
            leaf.block_until_ready()
        return self

    def tree_flatten(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        raise NotImplementedError
