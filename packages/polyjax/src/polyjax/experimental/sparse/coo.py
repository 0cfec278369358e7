"""`COO`: the legacy coordinate-format matrix (``data``, ``row``, ``col``) and its primitives.

Its primitives compute through `BCOO`'s implementation (indices ``[row, col]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax.experimental.sparse import bcoo as _bcoo
from polyjax.experimental.sparse._base import JAXSparse, check_product_operand, nse_from
from polyjax.experimental.sparse._primitive import sparse_primitive
from polyjax.experimental.sparse.util import SparseInfo
from polyjax_interpreters import ad

__all__ = [
    "COO",
    "coo_fromdense",
    "coo_fromdense_p",
    "coo_matmat",
    "coo_matmat_p",
    "coo_matvec",
    "coo_matvec_p",
    "coo_todense",
    "coo_todense_p",
]


class COOInfo(NamedTuple):
    """The shape and ordering of a `COO` matrix (a primitive's hashable param)."""

    shape: tuple[int, ...]
    rows_sorted: bool = False
    cols_sorted: bool = False


def _indices(row: Any, col: Any) -> Any:
    return jnp.stack([row, col.astype(row.dtype)], axis=1)


def _todense_impl(data: Any, row: Any, col: Any, *, spinfo: COOInfo) -> Any:
    return _bcoo._todense_impl(data, _indices(row, col), spinfo=SparseInfo(tuple(spinfo.shape)))


def _fromdense_impl(mat: Any, *, nse: int, index_dtype: Any) -> list[Any]:
    data, idx = _bcoo._fromdense_impl(mat, nse=nse, n_batch=0, n_dense=0, index_dtype=index_dtype)
    return [data, idx[:, 0], idx[:, 1]]


def _product_impl(
    data: Any, row: Any, col: Any, B: Any, *, spinfo: COOInfo, transpose: bool
) -> Any:
    idx = _indices(col, row) if transpose else _indices(row, col)
    shape = tuple(spinfo.shape)[::-1] if transpose else tuple(spinfo.shape)
    dtype = jnp.result_type(data.dtype, B.dtype)
    return _bcoo._dot_general_impl(
        data,
        idx,
        B,
        dimension_numbers=(([1], [0]), ([], [])),
        lhs_spinfo=SparseInfo(shape),
        preferred_element_type=np.dtype(dtype),
    )


def _extract(row: Any, col: Any, mat: Any) -> Any:
    return _bcoo.bcoo_extract_p.bind(_indices(row, col), mat, assume_unique=True)


def _fromdense_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    data, row, col = coo_fromdense_p.bind(primals[0], **params)
    (t,) = tangents
    zero = ad.Zero.from_primal_value
    data_dot = zero(data) if type(t) is ad.Zero else _extract(row, col, t)
    return [data, row, col], [data_dot, zero(row), zero(col)]


coo_todense_p = sparse_primitive("coo_todense", _todense_impl, linear=(0,))
coo_fromdense_p = sparse_primitive(
    "coo_fromdense", _fromdense_impl, multiple_results=True, jvp=_fromdense_jvp
)
coo_matvec_p = sparse_primitive("coo_matvec", _product_impl, linear=(0, 3))
coo_matmat_p = sparse_primitive("coo_matmat", _product_impl, linear=(0, 3))


class COO(JAXSparse):
    """A sparse matrix in coordinate format: ``(data, row, col)`` and its `shape`.

    Args:
      args: ``(data, row, col)``, each of length nse.
      shape: the matrix's shape.
      rows_sorted: whether the entries are sorted by row.
      cols_sorted: whether the entries are sorted by column.
    """

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        rows_sorted: bool = False,
        cols_sorted: bool = False,
    ) -> None:
        self.data, self.row, self.col = map(jnp.asarray, args)
        self.shape = tuple(int(d) for d in shape)
        if len(self.shape) != 2:
            raise ValueError(f"COO: expected a matrix shape, got {self.shape}.")
        self._rows_sorted, self._cols_sorted = bool(rows_sorted), bool(cols_sorted)

    @property
    def _info(self) -> COOInfo:
        return COOInfo(self.shape, self._rows_sorted, self._cols_sorted)

    def tree_flatten(self) -> tuple[tuple[Any, ...], COOInfo]:
        return (self.data, self.row, self.col), self._info

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
        """`coo_fromdense`."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        """The dense matrix."""
        return coo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> COO:
        """The transposed matrix."""
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f"COO.transpose: axes must be (1, 0), got {axes}.")
        return COO(
            (self.data, self.col, self.row),
            shape=self.shape[::-1],
            rows_sorted=self._cols_sorted,
            cols_sorted=self._rows_sorted,
        )

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("COO @ sparse is not supported; use BCOO.")
        other = jnp.asarray(other)
        return coo_matvec(self, other) if other.ndim == 1 else coo_matmat(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        if other.ndim == 1:
            return coo_matvec(self, other, transpose=True)
        return coo_matmat(self, other.T, transpose=True).T


def _unflatten(info: COOInfo, children: Sequence[Any]) -> COO:
    obj = object.__new__(COO)
    obj.data, obj.row, obj.col = children
    obj.shape, obj._rows_sorted, obj._cols_sorted = (
        tuple(info.shape),
        info.rows_sorted,
        info.cols_sorted,
    )
    return obj


tree_util.register_pytree_node(COO, lambda m: m.tree_flatten(), _unflatten)


def coo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
    """The `COO` matrix of the nonzero entries of `mat` (rows sorted).

    Example:
      >>> import numpy as np
      >>> coo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]])).row
      Array([0, 1], dtype=int32)
    """
    mat = jnp.asarray(mat)
    if mat.ndim != 2:
        raise ValueError(f"coo_fromdense: expected a matrix, got shape {mat.shape}.")
    nse = nse_from(lambda: np.count_nonzero(np.asarray(mat)), nse, "coo_fromdense")
    data, row, col = coo_fromdense_p.bind(mat, nse=nse, index_dtype=np.dtype(index_dtype))
    return COO((data, row, col), shape=mat.shape, rows_sorted=True)


def coo_todense(mat: COO) -> Any:
    """The dense matrix of `mat`."""
    return coo_todense_p.bind(mat.data, mat.row, mat.col, spinfo=mat._info)


def coo_matvec(mat: COO, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with `transpose`) for a vector `v`."""
    v = check_product_operand(mat.shape, v, transpose, 1, "coo_matvec")
    return coo_matvec_p.bind(
        mat.data, mat.row, mat.col, v, spinfo=mat._info, transpose=bool(transpose)
    )


def coo_matmat(mat: COO, B: Any, *, transpose: bool = False) -> Any:
    """``mat @ B`` (``mat.T @ B`` with `transpose`) for a matrix `B`."""
    B = check_product_operand(mat.shape, B, transpose, 2, "coo_matmat")
    return coo_matmat_p.bind(
        mat.data, mat.row, mat.col, B, spinfo=mat._info, transpose=bool(transpose)
    )
