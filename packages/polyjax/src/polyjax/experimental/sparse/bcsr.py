"""`BCSR`: batched compressed-row format (matrices, with leading batch dimensions).

``data`` has shape ``batch + (nse,)``, column ``indices`` ``batch + (nse,)`` and
row pointers ``indptr`` ``batch + (rows + 1,)``: the entries of row ``i`` are
``indptr[i]:indptr[i + 1]``. The primitives compute through the coordinate
form (the row of each entry is found in ``indptr``), so they share `BCOO`'s
implementation and rules. This format has no dense dimensions (``n_dense=0``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax.experimental.sparse import bcoo as _bcoo
from polyjax.experimental.sparse._base import JAXSparse, nse_from
from polyjax.experimental.sparse._primitive import sparse_primitive
from polyjax.experimental.sparse.util import SparseInfo
from polyjax_interpreters import ad

__all__ = [
    "BCSR",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_dot_general_p",
    "bcsr_extract",
    "bcsr_extract_p",
    "bcsr_fromdense",
    "bcsr_fromdense_p",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "bcsr_todense_p",
]


def _rows_of(indptr: Any, nse: int) -> Any:
    """The row of each of `nse` entries (the number of rows for padding)."""
    positions = jnp.arange(nse, dtype=indptr.dtype)
    rows = jnp.searchsorted(indptr, positions, side="right") - 1
    return jnp.where(positions < indptr[-1], rows, indptr.shape[0] - 1)


def _batched(fn: Any, n_batch: int, *args: Any) -> Any:
    """`fn` mapped over the `n_batch` leading dimensions of every argument."""
    for _ in range(n_batch):
        fn = polyjax.vmap(fn)
    return fn(*args)


def coo_indices(indices: Any, indptr: Any, shape: Sequence[int]) -> Any:
    """The `BCOO` indices ``batch + (nse, 2)`` of compressed-row buffers."""
    n_batch = indptr.ndim - 1
    n_cols = shape[n_batch + 1]

    def one(ind: Any, ptr: Any) -> Any:
        rows = _rows_of(ptr, ind.shape[0])
        cols = jnp.where(rows < ptr.shape[0] - 1, ind, n_cols)
        return jnp.stack([rows, cols.astype(rows.dtype)], axis=1)

    batch = tuple(shape[:n_batch])
    ind = jnp.broadcast_to(indices, batch + indices.shape[n_batch:])
    ptr = jnp.broadcast_to(indptr, batch + indptr.shape[n_batch:])
    return _batched(one, n_batch, ind, ptr).astype(indices.dtype)


def _todense_impl(data: Any, indices: Any, indptr: Any, *, spinfo: SparseInfo) -> Any:
    coo = coo_indices(indices, indptr, spinfo.shape)
    return _bcoo._todense_impl(data, coo, spinfo=SparseInfo(tuple(spinfo.shape)))


def _fromdense_impl(
    mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> list[Any]:
    data, coo = _bcoo._fromdense_impl(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    n_rows = mat.shape[n_batch]

    def ptr(rows: Any) -> Any:
        return jnp.searchsorted(rows, jnp.arange(n_rows + 1, dtype=rows.dtype), side="left")

    indptr = _batched(ptr, n_batch, coo[..., 0]).astype(index_dtype)
    cols = jnp.where(coo[..., 0] < n_rows, coo[..., 1], 0).astype(index_dtype)
    return [data, cols, indptr]


def _extract_impl(indices: Any, indptr: Any, mat: Any) -> Any:
    return _bcoo._extract_impl(coo_indices(indices, indptr, mat.shape), mat)


def _dot_general_impl(
    data: Any,
    indices: Any,
    indptr: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    lhs_spinfo: SparseInfo,
    preferred_element_type: Any,
) -> Any:
    coo = coo_indices(indices, indptr, lhs_spinfo.shape)
    return _bcoo._dot_general_impl(
        data,
        coo,
        rhs,
        dimension_numbers=dimension_numbers,
        lhs_spinfo=lhs_spinfo,
        preferred_element_type=preferred_element_type,
    )


def _fromdense_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    data, indices, indptr = bcsr_fromdense_p.bind(primals[0], **params)
    (t,) = tangents
    zero = ad.Zero.from_primal_value
    data_dot = zero(data) if type(t) is ad.Zero else bcsr_extract_p.bind(indices, indptr, t)
    return [data, indices, indptr], [data_dot, zero(indices), zero(indptr)]


bcsr_todense_p = sparse_primitive("bcsr_todense", _todense_impl, linear=(0,))
bcsr_extract_p = sparse_primitive("bcsr_extract", _extract_impl, linear=(2,))
bcsr_fromdense_p = sparse_primitive(
    "bcsr_fromdense", _fromdense_impl, multiple_results=True, jvp=_fromdense_jvp
)
bcsr_dot_general_p = sparse_primitive("bcsr_dot_general", _dot_general_impl, linear=(0, 3))


class BCSR(JAXSparse):
    """A sparse matrix (with leading batch dimensions) in compressed-row format.

    Args:
      args: ``(data, indices, indptr)``.
      shape: the dense shape ``batch + (rows, columns)``.
      indices_sorted: whether the columns are sorted in each row.
      unique_indices: whether no entry repeats.

    Example:
      >>> import numpy as np
      >>> m = BCSR((np.array([1.0, 2.0]), np.array([1, 0]), np.array([0, 1, 2])), shape=(2, 2))
      >>> m.todense()
      Array([[0., 1.],
             [2., 0.]], dtype=float32)
    """

    def __init__(
        self,
        args: tuple[Any, Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        data, indices, indptr = args
        self.data, self.indices, self.indptr = map(jnp.asarray, (data, indices, indptr))
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted, self.unique_indices = bool(indices_sorted), bool(unique_indices)
        n_batch = self.indptr.ndim - 1
        if len(self.shape) != n_batch + 2 or self.indptr.shape[-1] != self.shape[n_batch] + 1:
            raise ValueError(
                f"BCSR: indptr of shape {self.indptr.shape} does not fit a matrix of shape "
                f"{self.shape} (n_dense must be 0)."
            )
        if self.data.shape[-1] != self.indices.shape[-1]:
            raise ValueError(
                f"BCSR: data {self.data.shape} and indices {self.indices.shape} differ in nse."
            )

    @property
    def n_batch(self) -> int:
        ndim = getattr(self.indptr, "ndim", None)
        return self._leaf_n_batch if ndim is None else ndim - 1

    n_sparse = 2
    n_dense = 0

    def _layout_suffix(self) -> str:
        return f", n_batch={self.n_batch}" if self.n_batch else ""

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    def tree_flatten(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        return (self.data, self.indices, self.indptr), (*self._info, self.n_batch)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> BCSR:
        """Rebuilds from the leaves (batch dimensions added by `vmap` join the shape)."""
        shape, indices_sorted, unique_indices, n_batch = aux
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        extra = getattr(obj.indptr, "ndim", n_batch + 1) - 1 - n_batch
        if extra > 0:
            shape = tuple(obj.indptr.shape[:extra]) + tuple(shape)
        elif extra < 0:  # inside `vmap`: the mapped batch dimensions are gone
            shape = tuple(shape)[-extra:]
        obj.shape, obj.indices_sorted, obj.unique_indices = (
            tuple(shape),
            indices_sorted,
            unique_indices,
        )
        obj._leaf_n_batch = n_batch + extra
        return obj

    @classmethod
    def fromdense(
        cls,
        mat: Any,
        *,
        nse: int | None = None,
        index_dtype: Any = np.int32,
        n_dense: int = 0,
        n_batch: int = 0,
    ) -> BCSR:
        """`bcsr_fromdense`."""
        return bcsr_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_bcoo(cls, arr: _bcoo.BCOO) -> BCSR:
        """The `BCSR` of a `BCOO` matrix (entries summed and sorted first)."""
        if arr.n_sparse != 2 or arr.n_dense:
            raise ValueError(
                f"BCSR.from_bcoo: expected 2 sparse dimensions and no dense ones, got {arr!r}."
            )
        arr = _bcoo.bcoo_sum_duplicates(arr, nse=arr.nse)
        n_batch, n_rows = arr.n_batch, arr.shape[arr.n_batch]
        rows = arr.indices[..., 0]

        def ptr(r: Any) -> Any:
            return jnp.searchsorted(r, jnp.arange(n_rows + 1, dtype=r.dtype), side="left")

        indptr = _batched(ptr, n_batch, rows)
        cols = jnp.where(rows < n_rows, arr.indices[..., 1], 0)
        return cls(
            (arr.data, cols, indptr), shape=arr.shape, indices_sorted=True, unique_indices=True
        )

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = np.int32) -> BCSR:
        """The `BCSR` of a `scipy.sparse` matrix."""
        csr = mat.tocsr()
        return cls(
            (csr.data, csr.indices.astype(index_dtype), csr.indptr.astype(index_dtype)),
            shape=csr.shape,
        )

    def to_bcoo(self) -> _bcoo.BCOO:
        """The same array in coordinate format."""
        indices = coo_indices(self.indices, self.indptr, self.shape)
        return _bcoo.BCOO(
            (self.data, indices),
            shape=self.shape,
            indices_sorted=self.indices_sorted,
            unique_indices=self.unique_indices,
        )

    def todense(self) -> Any:
        """The dense array."""
        return bcsr_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> _bcoo.BCOO:
        """The transposed array, as a `BCOO`."""
        return self.to_bcoo().transpose(axes)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCSR:
        """`bcsr_sum_duplicates`."""
        return bcsr_sum_duplicates(self, nse=nse)

    def __matmul__(self, other: Any) -> Any:
        return _bcoo._matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _bcoo._matmul(other, self)

    def __mul__(self, other: Any) -> Any:
        return self.to_bcoo() * other

    __rmul__ = __mul__

    def __neg__(self) -> BCSR:
        return BCSR((-self.data, self.indices, self.indptr), shape=self.shape)


tree_util.register_pytree_node(BCSR, lambda m: m.tree_flatten(), BCSR.tree_unflatten)


def bcsr_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = np.int32,
) -> BCSR:
    """The `BCSR` array holding the nonzero entries of the dense `mat`.

    Args:
      mat: a dense array with `n_batch` leading batch dimensions and two more.
      nse: stored entries per batch element (required when `mat` is traced).
      n_batch: the number of batch dimensions.
      n_dense: must be 0.
      index_dtype: the integer type of `indices` and `indptr`.

    Example:
      >>> import numpy as np
      >>> bcsr_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
      BCSR(float32[2, 2], nse=2)
    """
    mat = jnp.asarray(mat)
    if n_dense:
        raise NotImplementedError("bcsr_fromdense: n_dense > 0 is not supported.")
    if mat.ndim != n_batch + 2:
        raise ValueError(
            f"bcsr_fromdense: expected {n_batch} batch dimensions and a matrix, "
            f"got shape {mat.shape}."
        )
    nse = nse_from(lambda: _bcoo._count_nse(mat, n_batch, 0), nse, "bcsr_fromdense")
    data, indices, indptr = bcsr_fromdense_p.bind(
        mat, nse=nse, n_batch=n_batch, n_dense=0, index_dtype=np.dtype(index_dtype)
    )
    return BCSR((data, indices, indptr), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcsr_todense(mat: BCSR) -> Any:
    """The dense array of `mat`."""
    return bcsr_todense_p.bind(mat.data, mat.indices, mat.indptr, spinfo=mat._info)


def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Any:
    """The entries of the dense `mat` at the positions given by `indices` and `indptr` (data)."""
    return bcsr_extract_p.bind(jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(mat))


def bcsr_dot_general(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`lax.dot_general` with a `BCSR` operand (see `bcoo_dot_general`).

    Example:
      >>> import numpy as np
      >>> m = bcsr_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
      >>> bcsr_dot_general(m, np.array([1.0, 10.0]), dimension_numbers=(([1], [0]), ([], [])))
      Array([10.,  2.], dtype=float32)
    """
    if isinstance(lhs, BCSR) and not isinstance(rhs, JAXSparse):
        rhs = jnp.asarray(rhs)
        dims = _bcoo._canonical_dims(dimension_numbers)
        _bcoo._check_dot_shapes(lhs.shape, tuple(rhs.shape), dims)
        preferred = None if preferred_element_type is None else np.dtype(preferred_element_type)
        return bcsr_dot_general_p.bind(
            lhs.data,
            lhs.indices,
            lhs.indptr,
            rhs,
            dimension_numbers=dims,
            lhs_spinfo=lhs._info,
            preferred_element_type=preferred,
        )
    as_coo = lambda x: x.to_bcoo() if isinstance(x, BCSR) else x  # noqa: E731
    return _bcoo.bcoo_dot_general(
        as_coo(lhs),
        as_coo(rhs),
        dimension_numbers=dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None) -> BCSR:
    """`mat` with repeated entries summed and columns sorted in each row."""
    return BCSR.from_bcoo(_bcoo.bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(
    mat: BCSR, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any = None
) -> BCSR:
    """`lax.broadcast_in_dim` of a `BCSR` array (new leading dimensions are batch ones)."""
    out = _bcoo.bcoo_broadcast_in_dim(
        mat.to_bcoo(), shape=shape, broadcast_dimensions=broadcast_dimensions
    )
    return BCSR.from_bcoo(
        _bcoo.bcoo_update_layout(out, n_batch=len(out.shape) - 2, on_inefficient=None)
    )


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """`lax.concatenate` of `BCSR` arrays."""
    out = _bcoo.bcoo_concatenate([m.to_bcoo() for m in operands], dimension=dimension)
    n_batch = operands[0].n_batch
    return BCSR.from_bcoo(_bcoo.bcoo_update_layout(out, n_batch=n_batch, on_inefficient=None))
