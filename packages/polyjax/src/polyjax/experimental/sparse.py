"""`polyjax.experimental.sparse`: sparse arrays (`BCOO`, `BCSR`) and `sparsify`.

`BCOO` holds `nse` stored entries: ``data[nse]`` and ``indices[nse, ndim]``;
`BCSR` holds a matrix's ``data[nse]``, column ``indices[nse]`` and row
pointers ``indptr[rows + 1]``. Both are pytrees (`data` and the index arrays
are leaves), so they cross `jit`, `vmap` (over `data`) and `grad` (with
respect to `data`). Padding entries (when `nse` exceeds the nonzeros) have
out-of-range indices, as in JAX, and are dropped by every operation.

This implementation stores unbatched arrays only (JAX's ``n_batch`` and
``n_dense`` are 0 here). Products with dense arrays (``@``, `dot`) scatter the
stored entries' contributions, so they cost ``O(nse * other dimensions)``.

`sparsify(f)` evaluates `f`'s jaxpr with sparse operands kept sparse through
the operations that preserve sparsity (products by dense arrays and scalars,
negation, transposition, sums) and densified for any other primitive.

Example:
  >>> import polyjax.numpy as jnp
  >>> from polyjax.experimental import sparse
  >>> m = sparse.BCOO.fromdense(jnp.array([[0.0, 1.0], [2.0, 0.0]]))
  >>> m @ jnp.array([1.0, 10.0])
  Array([10.,  2.], dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax_core.jaxpr import Literal

__all__ = [
    "BCOO",
    "BCSR",
    "JAXSparse",
    "bcoo_fromdense",
    "bcoo_todense",
    "bcsr_fromdense",
    "bcsr_todense",
    "sparsify",
    "todense",
]


def _nse_from(mat: Any, nse: int | None) -> int:
    if nse is not None:
        return int(nse)
    try:
        return int(np.count_nonzero(np.asarray(mat)))
    except Exception as e:  # a tracer: the number of entries must be static
        raise ValueError(
            "fromdense: nse must be given when the matrix is traced (under jit or vmap)."
        ) from e


class JAXSparse:
    """The base class of the sparse array types."""

    data: Any
    shape: tuple[int, ...]
    # NumPy operators defer to ours (``ndarray @ sparse`` calls `__rmatmul__`).
    __array_ufunc__ = None

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nse(self) -> int:
        return int(self.data.shape[-1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype}{list(self.shape)}, nse={self.nse})"

    def __matmul__(self, other: Any) -> Any:
        return _coo_matmul(self._coo(), jnp.asarray(other))

    def __rmatmul__(self, other: Any) -> Any:
        rows, cols = self._coo()[1].T
        coo = (self.data, jnp.stack([cols, rows], axis=1), self.shape[::-1])
        other = jnp.asarray(other)
        return jnp.moveaxis(_coo_matmul(coo, jnp.moveaxis(other, -1, 0)), 0, -1)

    def todense(self) -> Any:
        """The dense array."""
        data, indices, shape = self._coo()
        out = jnp.zeros(shape, data.dtype)
        return out.at[tuple(indices.T)].add(data, mode="drop")


def _coo_matmul(coo: tuple, dense: Any) -> Any:
    """``sparse @ dense`` for a sparse matrix in COO form and `dense` of shape ``[k, ...]``."""
    data, indices, shape = coo
    if len(shape) != 2 or dense.ndim < 1 or dense.shape[0] != shape[1]:
        raise ValueError(
            f"sparse matmul: shapes {tuple(shape)} and {tuple(dense.shape)} are not aligned."
        )
    rows, cols = indices[:, 0], indices[:, 1]
    gathered = dense.at[cols].get(mode="fill", fill_value=0)
    dtype = jnp.result_type(data.dtype, dense.dtype)
    contrib = data.astype(dtype).reshape((-1,) + (1,) * (dense.ndim - 1)) * gathered
    out = jnp.zeros((shape[0], *dense.shape[1:]), dtype)
    return out.at[rows].add(contrib, mode="drop")


class BCOO(JAXSparse):
    """A sparse array in coordinate format: ``(data, indices)`` and its `shape`.

    Args:
      args: ``(data, indices)``: ``data[nse]`` and int32 ``indices[nse, ndim]``.
      shape: the dense shape.
    """

    def __init__(self, args: tuple[Any, Any], *, shape: tuple[int, ...]) -> None:
        self.data, self.indices = args
        self.shape = tuple(int(d) for d in shape)

    def _coo(self) -> tuple:
        return self.data, self.indices, self.shape

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCOO:
        """The entries of `mat` that are not zero (`nse` of them: padded, or required under jit)."""
        mat = jnp.asarray(mat)
        nse = _nse_from(mat, nse)
        idx = jnp.nonzero(mat, size=nse, fill_value=mat.shape)
        indices = (
            jnp.stack(idx, axis=1).astype(index_dtype)
            if mat.ndim
            else jnp.zeros((nse, 0), index_dtype)
        )
        data = mat.at[idx].get(mode="fill", fill_value=0)
        return cls((data, indices), shape=mat.shape)

    @property
    def T(self) -> BCOO:
        return self.transpose()

    def transpose(self, axes: Any = None) -> BCOO:
        """The transposed array (axes reversed by default)."""
        axes = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        return BCOO(
            (self.data, self.indices[:, list(axes)]), shape=tuple(self.shape[a] for a in axes)
        )

    def __neg__(self) -> BCOO:
        return BCOO((-self.data, self.indices), shape=self.shape)

    def __mul__(self, other: Any) -> BCOO:
        other = jnp.asarray(other)
        if other.ndim == 0:
            return BCOO((self.data * other, self.indices), shape=self.shape)
        dense = jnp.broadcast_to(other, self.shape)
        values = dense.at[tuple(self.indices.T)].get(mode="fill", fill_value=0)
        return BCOO((self.data * values, self.indices), shape=self.shape)

    __rmul__ = __mul__

    def sum(self, axis: Any = None) -> Any:
        """The sum over `axis` (all axes by default), dense."""
        if axis is None:
            return jnp.sum(self.data)
        return jnp.sum(self.todense(), axis=axis)

    def to_bcsr(self) -> BCSR:
        """The same matrix in compressed-row format."""
        return BCSR.fromdense(self.todense(), nse=self.nse)


tree_util.register_pytree_node(
    BCOO, lambda m: ((m.data, m.indices), m.shape), lambda shape, c: BCOO(tuple(c), shape=shape)
)


class BCSR(JAXSparse):
    """A sparse matrix in compressed-row format: ``(data, indices, indptr)`` and its `shape`."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: tuple[int, ...]) -> None:
        self.data, self.indices, self.indptr = args
        self.shape = tuple(int(d) for d in shape)
        if len(self.shape) != 2:
            raise ValueError(f"BCSR: only matrices are supported, got shape {self.shape}.")

    def _rows(self) -> Any:
        positions = jnp.arange(self.data.shape[-1])
        return jnp.searchsorted(self.indptr, positions, side="right") - 1

    def _coo(self) -> tuple:
        rows = self._rows()
        inside = rows < self.shape[0]
        cols = jnp.where(inside, self.indices, self.shape[1])
        return self.data, jnp.stack([rows, cols], axis=1), self.shape

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCSR:
        """The entries of the matrix `mat` that are not zero, in row-major order."""
        mat = jnp.asarray(mat)
        if mat.ndim != 2:
            raise ValueError(f"BCSR.fromdense: expected a matrix, got shape {mat.shape}.")
        nse = _nse_from(mat, nse)
        rows, cols = jnp.nonzero(mat, size=nse, fill_value=mat.shape)
        data = mat.at[rows, cols].get(mode="fill", fill_value=0)
        indptr = jnp.searchsorted(rows, jnp.arange(mat.shape[0] + 1), side="left")
        return cls((data, cols.astype(index_dtype), indptr.astype(index_dtype)), shape=mat.shape)

    def to_bcoo(self) -> BCOO:
        """The same matrix in coordinate format."""
        data, indices, shape = self._coo()
        return BCOO((data, indices.astype(self.indices.dtype)), shape=shape)

    @property
    def T(self) -> BCOO:
        return self.to_bcoo().T


tree_util.register_pytree_node(
    BCSR,
    lambda m: ((m.data, m.indices, m.indptr), m.shape),
    lambda shape, c: BCSR(tuple(c), shape=shape),
)


def bcoo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCOO:
    """`BCOO.fromdense`."""
    return BCOO.fromdense(mat, nse=nse, index_dtype=index_dtype)


def bcoo_todense(mat: BCOO) -> Any:
    """`BCOO.todense`."""
    return mat.todense()


def bcsr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCSR:
    """`BCSR.fromdense`."""
    return BCSR.fromdense(mat, nse=nse, index_dtype=index_dtype)


def bcsr_todense(mat: BCSR) -> Any:
    """`BCSR.todense`."""
    return mat.todense()


def todense(arr: Any) -> Any:
    """`arr` densified if it is sparse, else unchanged."""
    return arr.todense() if isinstance(arr, JAXSparse) else arr


# --- sparsify


def _dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, **params: Any) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = params.get("preferred_element_type")
    plain = not lb and not rb
    if (
        plain
        and isinstance(lhs, JAXSparse)
        and lhs.ndim == 2
        and tuple(lc) == (1,)
        and tuple(rc) == (0,)
    ):
        out = lhs @ todense(rhs)
    elif (
        plain
        and isinstance(rhs, JAXSparse)
        and rhs.ndim == 2
        and tuple(rc) == (0,)
        and tuple(lc) == (lhs.ndim - 1,)
    ):
        out = todense(lhs) @ rhs
    else:
        out = polyjax.lax.dot_general(todense(lhs), todense(rhs), dimension_numbers)
    return out if out_dtype is None else out.astype(out_dtype)


def _sparse_rule(prim: Any, args: list, params: dict) -> Any:
    """The sparse result of `prim` where one exists, else None."""
    name = prim.name
    sparse_args = [isinstance(a, BCOO) for a in args]
    if name == "dot_general":
        return _dot_general(*args, **params)
    if name == "mul" and sum(sparse_args) == 1:
        sp, other = (args[0], args[1]) if sparse_args[0] else (args[1], args[0])
        return sp * other
    if name == "neg" and sparse_args[0]:
        return -args[0]
    if name == "transpose" and sparse_args[0]:
        return args[0].transpose(params["permutation"])
    if name == "reduce_sum" and sparse_args[0]:
        axes = tuple(params["axes"])
        return args[0].sum(None if len(axes) == args[0].ndim else axes)
    if name == "convert_element_type" and sparse_args[0]:
        sp = args[0]
        return BCOO((sp.data.astype(params["new_dtype"]), sp.indices), shape=sp.shape)
    return None


def sparsify(f: Callable[..., Any]) -> Callable[..., Any]:
    """`f` evaluated with its sparse arguments kept sparse where the operations allow.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.experimental import sparse
      >>> m = sparse.BCOO.fromdense(jnp.array([[0.0, 1.0], [2.0, 0.0]]))
      >>> sparse.sparsify(lambda a, v: jnp.sum(2 * a @ v))(m, jnp.ones(2))
      Array(6., dtype=float32)
    """

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        is_sparse = lambda x: isinstance(x, JAXSparse)  # noqa: E731
        leaves, tree = tree_util.tree_flatten(args, is_leaf=is_sparse)
        leaves = [x.to_bcoo() if isinstance(x, BCSR) else x for x in leaves]
        stand_ins = [
            polyjax.ShapeDtypeStruct(x.shape, x.dtype) if is_sparse(x) else x for x in leaves
        ]
        closed, out_shape = polyjax.make_jaxpr(
            lambda *xs: f(*tree_util.tree_unflatten(tree, xs)), return_shape=True
        )(*stand_ins)
        jaxpr = closed.jaxpr
        env = dict(zip(jaxpr.constvars, closed.consts))
        env.update(zip(jaxpr.invars, leaves))

        def read(v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v]

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            out = None
            if any(is_sparse(a) for a in ins):
                out = _sparse_rule(eqn.primitive, ins, eqn.params)
                if out is None:
                    ins = [todense(a) for a in ins]
            if out is None:
                out = eqn.primitive.bind(*ins, **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
        outs = [read(v) for v in jaxpr.outvars]
        return tree_util.tree_unflatten(tree_util.tree_structure(out_shape), outs)

    return wrapped
