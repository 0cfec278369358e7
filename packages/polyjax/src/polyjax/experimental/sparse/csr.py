"""`CSR` and `CSC`: the legacy compressed-row and compressed-column matrices and their primitives.

A `CSC` matrix is stored as the `CSR` buffers of its transpose. The primitives
compute through `BCOO`'s implementation (the row of each entry found in ``indptr``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax.experimental.sparse import bcsr as _bcsr
from polyjax.experimental.sparse import coo as _coo
from polyjax.experimental.sparse._base import JAXSparse, check_product_operand, nse_from
from polyjax.experimental.sparse._primitive import sparse_primitive
from polyjax.experimental.sparse.util import SparseInfo
from polyjax_interpreters import ad

__all__ = [
    "CSC",
    "CSR",
    "csr_fromdense",
    "csr_fromdense_p",
    "csr_matmat",
    "csr_matmat_p",
    "csr_matvec",
    "csr_matvec_p",
    "csr_todense",
    "csr_todense_p",
]


def _todense_impl(data: Any, indices: Any, indptr: Any, *, shape: tuple[int, ...]) -> Any:
    return _bcsr._todense_impl(data, indices, indptr, spinfo=SparseInfo(tuple(shape)))


def _fromdense_impl(mat: Any, *, nse: int, index_dtype: Any) -> list[Any]:
    return _bcsr._fromdense_impl(mat, nse=nse, n_batch=0, n_dense=0, index_dtype=index_dtype)


def _product_impl(
    data: Any, indices: Any, indptr: Any, B: Any, *, shape: tuple[int, ...], transpose: bool
) -> Any:
    idx = _bcsr.coo_indices(indices, indptr, shape)
    return _coo._product_impl(
        data, idx[:, 0], idx[:, 1], B, spinfo=_coo.COOInfo(tuple(shape)), transpose=transpose
    )


def _fromdense_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    data, indices, indptr = csr_fromdense_p.bind(primals[0], **params)
    (t,) = tangents
    zero = ad.Zero.from_primal_value
    data_dot = zero(data) if type(t) is ad.Zero else _bcsr.bcsr_extract_p.bind(indices, indptr, t)
    return [data, indices, indptr], [data_dot, zero(indices), zero(indptr)]


csr_todense_p = sparse_primitive("csr_todense", _todense_impl, linear=(0,))
csr_fromdense_p = sparse_primitive(
    "csr_fromdense", _fromdense_impl, multiple_results=True, jvp=_fromdense_jvp
)
csr_matvec_p = sparse_primitive("csr_matvec", _product_impl, linear=(0, 3))
csr_matmat_p = sparse_primitive("csr_matmat", _product_impl, linear=(0, 3))


class _Compressed(JAXSparse):
    """What `CSR` and `CSC` share: the buffers ``(data, indices, indptr)`` and `shape`."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]) -> None:
        self.data, self.indices, self.indptr = map(jnp.asarray, args)
        self.shape = tuple(int(d) for d in shape)
        if len(self.shape) != 2:
            raise ValueError(f"{type(self).__name__}: expected a matrix shape, got {self.shape}.")

    def tree_flatten(self) -> tuple[tuple[Any, ...], tuple[int, ...]]:
        return (self.data, self.indices, self.indptr), self.shape

    @classmethod
    def _unflatten(cls, shape: tuple[int, ...], children: Sequence[Any]) -> Any:
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = tuple(shape)
        return obj


class CSR(_Compressed):
    """A sparse matrix in compressed-row format: ``(data, indices, indptr)`` and its `shape`.

    Args:
      args: ``(data, indices, indptr)``: values, their columns, and row pointers.
      shape: the matrix's shape.
    """

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
        """`csr_fromdense`."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        """The dense matrix."""
        return csr_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> CSC:
        """The transposed matrix (a `CSC` of the same buffers)."""
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        return csr_matvec(self, other) if other.ndim == 1 else csr_matmat(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        if other.ndim == 1:
            return csr_matvec(self, other, transpose=True)
        return csr_matmat(self, other.T, transpose=True).T


class CSC(_Compressed):
    """A sparse matrix in compressed-column format: ``(data, indices, indptr)`` and its `shape`.

    Args:
      args: ``(data, indices, indptr)``: values, their rows, and column pointers.
      shape: the matrix's shape.
    """

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSC:
        """The `CSC` matrix of the nonzero entries of `mat`."""
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    def _csr_of_transpose(self) -> CSR:
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def todense(self) -> Any:
        """The dense matrix."""
        return csr_todense(self._csr_of_transpose()).T

    def transpose(self, axes: Sequence[int] | None = None) -> CSR:
        """The transposed matrix (a `CSR` of the same buffers)."""
        return self._csr_of_transpose()

    def __matmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        t = self._csr_of_transpose()
        return (
            csr_matvec(t, other, transpose=True)
            if other.ndim == 1
            else csr_matmat(t, other, transpose=True)
        )

    def __rmatmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        t = self._csr_of_transpose()
        return csr_matvec(t, other) if other.ndim == 1 else csr_matmat(t, other.T).T


for _cls in (CSR, CSC):
    tree_util.register_pytree_node(_cls, lambda m: m.tree_flatten(), _cls._unflatten)


def csr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
    """The `CSR` matrix of the nonzero entries of `mat`.

    Example:
      >>> import numpy as np
      >>> csr_fromdense(np.array([[0.0, 1.0], [2.0, 3.0]])).indptr
      Array([0, 1, 3], dtype=int32)
    """
    mat = jnp.asarray(mat)
    if mat.ndim != 2:
        raise ValueError(f"csr_fromdense: expected a matrix, got shape {mat.shape}.")
    nse = nse_from(lambda: np.count_nonzero(np.asarray(mat)), nse, "csr_fromdense")
    data, indices, indptr = csr_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return CSR((data, indices, indptr), shape=mat.shape)


def csr_todense(mat: CSR) -> Any:
    """The dense matrix of `mat`."""
    return csr_todense_p.bind(mat.data, mat.indices, mat.indptr, shape=mat.shape)


def csr_matvec(mat: CSR, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with `transpose`) for a vector `v`."""
    v = check_product_operand(mat.shape, v, transpose, 1, "csr_matvec")
    return csr_matvec_p.bind(
        mat.data, mat.indices, mat.indptr, v, shape=mat.shape, transpose=bool(transpose)
    )


def csr_matmat(mat: CSR, B: Any, *, transpose: bool = False) -> Any:
    """``mat @ B`` (``mat.T @ B`` with `transpose`) for a matrix `B`."""
    B = check_product_operand(mat.shape, B, transpose, 2, "csr_matmat")
    return csr_matmat_p.bind(
        mat.data, mat.indices, mat.indptr, B, shape=mat.shape, transpose=bool(transpose)
    )
