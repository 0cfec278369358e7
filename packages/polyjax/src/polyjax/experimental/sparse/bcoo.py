"""`BCOO`: batched coordinate format, its primitives and operations.

A `BCOO` array of shape ``batch + sparse + dense`` (``n_batch``, ``n_sparse``
and ``n_dense`` dimensions) stores ``nse`` entries per batch element:
``data`` of shape ``batch + (nse,) + dense`` and ``indices`` of shape
``batch + (nse, n_sparse)``, as in JAX. A batch dimension of ``data`` or
``indices`` may be 1 (broadcast). Padding entries have out-of-range indices
(`fromdense` uses the dimension sizes) and are dropped by every operation.

The primitives (``bcoo_todense_p``, ``bcoo_fromdense_p``, ``bcoo_extract_p``,
``bcoo_dot_general_p``, ...) have jvp, transpose and batching rules: under
`vmap` the batched operands become one more batch dimension, so ``vmap`` of a
function building a `BCOO` returns a `BCOO` with ``n_batch + 1``, and `grad`
reaches ``data``. Operations that change the sparsity structure (slicing,
reshaping, concatenating, products of two sparse arrays) find the new
structure from the indices alone (so it does not depend on the stored values,
and derivatives flow through ``data``); their ``nse`` is the bound JAX uses
(e.g. a slice keeps ``nse``). They cost a dense array of the result's shape.

Example:
  >>> import polyjax.numpy as jnp
  >>> from polyjax.experimental import sparse
  >>> m = sparse.BCOO.fromdense(jnp.array([[0.0, 1.0], [2.0, 0.0]]))
  >>> m
  BCOO(float32[2, 2], nse=2)
  >>> m @ jnp.array([1.0, 10.0])
  Array([10.,  2.], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax import lax, tree_util
from polyjax.experimental.sparse._base import JAXSparse, nse_from
from polyjax.experimental.sparse._primitive import sparse_primitive
from polyjax.experimental.sparse.util import (
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    SparseInfo,
)
from polyjax_interpreters import ad, batching

__all__ = [
    "BCOO",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_conv_general_dilated",
    "bcoo_dot_general",
    "bcoo_dot_general_p",
    "bcoo_dot_general_sampled",
    "bcoo_dot_general_sampled_p",
    "bcoo_dynamic_slice",
    "bcoo_extract",
    "bcoo_extract_p",
    "bcoo_fromdense",
    "bcoo_fromdense_p",
    "bcoo_gather",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_sort_indices_p",
    "bcoo_spdot_general_p",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_sum_duplicates_p",
    "bcoo_todense",
    "bcoo_todense_p",
    "bcoo_transpose",
    "bcoo_transpose_p",
    "bcoo_update_layout",
]


# --- layout helpers (on buffers: arrays or tracers)


def _dims(indices_shape: Sequence[int], shape: Sequence[int]) -> tuple[int, int, int]:
    """(n_batch, n_sparse, n_dense) of a BCOO of `shape` with indices of `indices_shape`."""
    n_batch = len(indices_shape) - 2
    n_sparse = int(indices_shape[-1])
    return n_batch, n_sparse, len(shape) - n_batch - n_sparse


def _flat_indices(indices: Any, shape: Sequence[int]) -> Any:
    """Indices of the ``n_batch=0`` form: ``(B * nse, n_batch + n_sparse)``, int32."""
    n_batch, n_sparse, _ = _dims(indices.shape, shape)
    batch, nse = tuple(shape[:n_batch]), indices.shape[-2]
    indices = jnp.broadcast_to(indices.astype(np.int32), batch + (nse, n_sparse))
    coords = [lax.broadcasted_iota(np.int32, batch + (nse, 1), d) for d in range(n_batch)]
    full = jnp.concatenate([*coords, indices], axis=-1) if coords else indices
    return full.reshape((math.prod(batch) * nse, n_batch + n_sparse))


def _flat_data(data: Any, indices_shape: Sequence[int], shape: Sequence[int]) -> Any:
    """Data of the ``n_batch=0`` form: ``(B * nse,) + dense``."""
    n_batch, _, n_dense = _dims(indices_shape, shape)
    batch, nse = tuple(shape[:n_batch]), indices_shape[-2]
    dense = tuple(shape[len(shape) - n_dense :])
    data = jnp.broadcast_to(data, batch + (nse,) + dense)
    return data.reshape((math.prod(batch) * nse,) + dense)


def _columns(idx: Any, which: Sequence[int]) -> tuple[Any, ...]:
    return tuple(idx[:, k] for k in which)


def _check_bcoo_layout(data_shape: tuple, indices_shape: tuple, shape: tuple) -> None:
    if len(indices_shape) < 2:
        raise ValueError(f"BCOO: indices must have at least 2 dimensions, got {indices_shape}.")
    n_batch, n_sparse, n_dense = _dims(indices_shape, shape)
    if n_dense < 0 or len(data_shape) != n_batch + 1 + n_dense:
        raise ValueError(
            f"BCOO: data of shape {data_shape} and indices of shape {indices_shape} "
            f"do not describe an array of shape {shape}."
        )
    nse = indices_shape[-2]
    batch = shape[:n_batch]
    for name, s in (("data", data_shape[:n_batch]), ("indices", indices_shape[:n_batch])):
        if any(d not in (1, b) for d, b in zip(s, batch)):
            raise ValueError(f"BCOO: {name} batch dimensions {s} do not match shape {shape}.")
    if data_shape[n_batch] != nse or tuple(data_shape[n_batch + 1 :]) != tuple(
        shape[len(shape) - n_dense :]
    ):
        raise ValueError(
            f"BCOO: data of shape {data_shape} does not match indices of shape "
            f"{indices_shape} for an array of shape {shape}."
        )


# --- bcoo_todense_p / bcoo_extract_p / bcoo_fromdense_p


def _todense_impl(data: Any, indices: Any, *, spinfo: SparseInfo) -> Any:
    shape = tuple(spinfo.shape)
    flat = _flat_data(data, indices.shape, shape)
    idx = _flat_indices(indices, shape)
    if idx.shape[1] == 0:
        return jnp.sum(flat, axis=0).astype(data.dtype)
    out = jnp.zeros(shape, data.dtype)
    return out.at[_columns(idx, range(idx.shape[1]))].add(flat, mode="drop")


def _extract_impl(indices: Any, mat: Any, *, assume_unique: bool = True) -> Any:
    n_batch, _, n_dense = _dims(indices.shape, mat.shape)
    idx = _flat_indices(indices, mat.shape)
    nse = indices.shape[-2]
    batch, dense = tuple(mat.shape[:n_batch]), tuple(mat.shape[mat.ndim - n_dense :])
    if idx.shape[1] == 0:
        flat = jnp.broadcast_to(mat, (idx.shape[0],) + dense)
    else:
        flat = mat.at[_columns(idx, range(idx.shape[1]))].get(mode="fill", fill_value=0)
    if not assume_unique and idx.shape[1]:
        # Only the first of repeated indices keeps the value (the others hold 0).
        flat = flat * _first_occurrence(idx).reshape((-1,) + (1,) * len(dense))
    return flat.reshape(batch + (nse,) + dense)


def _first_occurrence(idx: Any) -> Any:
    """Whether each row of `idx` is the first of its value (quadratic: for small nse)."""
    same = jnp.all(idx[:, None, :] == idx[None, :, :], axis=-1)
    earlier = jnp.tril(same, k=-1)
    return ~jnp.any(earlier, axis=1)


def _fromdense_impl(
    mat: Any, *, nse: int, n_batch: int, n_dense: int, index_dtype: Any
) -> list[Any]:
    shape = tuple(mat.shape)
    n_sparse = len(shape) - n_batch - n_dense
    sparse_shape = shape[n_batch : n_batch + n_sparse]

    def one(m: Any) -> tuple[Any, Any]:
        if n_sparse == 0:
            data = jnp.zeros((nse,) + m.shape, m.dtype)
            return (data.at[0].set(m) if nse else data), jnp.zeros((nse, 0), index_dtype)
        mask = m != 0
        if n_dense:
            mask = jnp.any(mask, axis=tuple(range(n_sparse, m.ndim)))
        where = jnp.nonzero(mask, size=nse, fill_value=sparse_shape)
        data = m.at[where].get(mode="fill", fill_value=0)
        return data, jnp.stack(where, axis=1).astype(index_dtype)

    if n_batch == 0:
        return list(one(mat))
    batch = shape[:n_batch]
    data, idx = polyjax.vmap(one)(mat.reshape((math.prod(batch),) + shape[n_batch:]))
    return [data.reshape(batch + data.shape[1:]), idx.reshape(batch + idx.shape[1:])]


def _to_front(x: Any, d: Any, size: int | None = None) -> Any:
    """`x` with its batch dimension first (a new one of size 1 where it has none)."""
    if d is None or d is batching.not_mapped:
        return jnp.expand_dims(x, 0) if size is None else jnp.broadcast_to(x, (size,) + x.shape)
    return jnp.moveaxis(x, d, 0)


def _batch_size(args: Sequence[Any], dims: Sequence[Any]) -> int:
    return next(
        a.shape[d] for a, d in zip(args, dims) if d is not None and d is not batching.not_mapped
    )


def _todense_batch(args: Sequence[Any], dims: Sequence[Any], *, spinfo: SparseInfo) -> Any:
    size = _batch_size(args, dims)
    data, indices = (_to_front(a, d) for a, d in zip(args, dims))
    info = spinfo._replace(shape=(size, *spinfo.shape))
    return bcoo_todense_p.bind(data, indices, spinfo=info), 0


def _extract_batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
    size = _batch_size(args, dims)
    indices = _to_front(args[0], dims[0])
    mat = _to_front(args[1], dims[1], size)
    return bcoo_extract_p.bind(indices, mat, **params), 0


def _fromdense_batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
    params = dict(params, n_batch=params["n_batch"] + 1)
    return bcoo_fromdense_p.bind(jnp.moveaxis(args[0], dims[0], 0), **params), [0, 0]


def _todense_transpose(ct: Any, data: Any, indices: Any, *, spinfo: SparseInfo) -> list[Any]:
    if ad.is_undefined_primal(indices):
        raise ValueError("bcoo_todense: cannot transpose with respect to the indices.")
    ct = ad.instantiate_zeros(ct)
    out = bcoo_extract_p.bind(indices, ct, assume_unique=True)
    shape = data.aval.shape
    if out.shape != tuple(shape):  # data broadcast over a batch dimension
        axes = tuple(i for i, (a, b) in enumerate(zip(out.shape, shape)) if a != b)
        out = jnp.sum(out, axis=axes, keepdims=True)
    return [out, None]


def _extract_transpose(ct: Any, indices: Any, mat: Any, **params: Any) -> list[Any]:
    ct = ad.instantiate_zeros(ct)
    info = SparseInfo(tuple(mat.aval.shape))
    return [None, bcoo_todense_p.bind(ct, indices, spinfo=info)]


def _fromdense_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
    data, indices = bcoo_fromdense_p.bind(primals[0], **params)
    (t,) = tangents
    data_dot = (
        ad.Zero.from_primal_value(data)
        if type(t) is ad.Zero
        else bcoo_extract_p.bind(indices, t, assume_unique=True)
    )
    return [data, indices], [data_dot, ad.Zero.from_primal_value(indices)]


bcoo_todense_p = sparse_primitive(
    "bcoo_todense",
    _todense_impl,
    linear=(0,),
    transpose=_todense_transpose,
    batching_rule=_todense_batch,
)
bcoo_extract_p = sparse_primitive(
    "bcoo_extract",
    _extract_impl,
    linear=(1,),
    transpose=_extract_transpose,
    batching_rule=_extract_batch,
)
bcoo_fromdense_p = sparse_primitive(
    "bcoo_fromdense",
    _fromdense_impl,
    multiple_results=True,
    jvp=_fromdense_jvp,
    batching_rule=_fromdense_batch,
)


# --- bcoo_dot_general_p: sparse times dense, for any dimension numbers


def _dot_general_impl(
    lhs_data: Any,
    lhs_indices: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    lhs_spinfo: SparseInfo,
    preferred_element_type: Any,
) -> Any:
    shape = tuple(lhs_spinfo.shape)
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (list(map(int, d)) for d in (lc, rc, lb, rb))
    dtype = preferred_element_type or jnp.result_type(lhs_data.dtype, rhs.dtype)
    data = _flat_data(lhs_data, lhs_indices.shape, shape).astype(dtype)
    idx = _flat_indices(lhs_indices, shape)
    rhs = rhs.astype(dtype)
    ns = idx.shape[1]  # lhs dimensions held by the indices (batch and sparse)
    pair = dict(zip(lc, rc)) | dict(zip(lb, rb))
    # The rhs slices that each stored element meets: gathered at its coordinates.
    gathered = [k for k in range(ns) if k in pair]
    g_rhs = [pair[k] for k in gathered]
    rest = [r for r in range(rhs.ndim) if r not in g_rhs]
    moved = jnp.transpose(rhs, g_rhs + rest)
    if gathered:
        rhs_g = moved.at[_columns(idx, gathered)].get(mode="fill", fill_value=0)
    else:
        rhs_g = jnp.broadcast_to(moved, (idx.shape[0], *moved.shape))
    dense_c = [(k, r) for k, r in zip(lc, rc) if k >= ns]
    dense_b = [(k, r) for k, r in zip(lb, rb) if k >= ns]
    d_ax, r_ax = (lambda k: 1 + k - ns), (lambda r: 1 + rest.index(r))
    per_element = lax.dot_general(
        data,
        rhs_g,
        (
            ([d_ax(k) for k, _ in dense_c], [r_ax(r) for _, r in dense_c]),
            ([0] + [d_ax(k) for k, _ in dense_b], [0] + [r_ax(r) for _, r in dense_b]),
        ),
    )
    # Each element's product lands at its coordinates in the output's batch/free dimensions.
    lhs_free = [k for k in range(len(shape)) if k not in lc and k not in lb]
    out_axis = {k: i for i, k in enumerate(lb)} | {k: len(lb) + i for i, k in enumerate(lhs_free)}
    rhs_free = [r for r in range(rhs.ndim) if r not in rc and r not in rb]
    out_shape = (
        [shape[k] for k in lb] + [shape[k] for k in lhs_free] + [rhs.shape[r] for r in rhs_free]
    )
    placed = [k for k in range(ns) if k not in lc]
    if not placed:
        return jnp.sum(per_element, axis=0)
    positions = [out_axis[k] for k in placed]
    front = list(range(len(positions)))
    out = jnp.moveaxis(jnp.zeros(out_shape, dtype), positions, front)
    out = out.at[_columns(idx, placed)].add(per_element, mode="drop")
    return jnp.moveaxis(out, front, positions)


def _mapped(d: Any) -> bool:
    return d is not None and d is not batching.not_mapped


def _dot_general_batch(
    args: Sequence[Any],
    dims: Sequence[Any],
    *,
    dimension_numbers: Any,
    lhs_spinfo: SparseInfo,
    preferred_element_type: Any,
) -> Any:
    """The mapped sparse operand gains a batch dimension; a mapped rhs one is batch or free."""
    data, indices, rhs = args
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_mapped = _mapped(dims[0]) or _mapped(dims[1])
    shape = tuple(lhs_spinfo.shape)
    if lhs_mapped:
        size = _batch_size(args[:2], dims[:2])
        data, indices = _to_front(data, dims[0]), _to_front(indices, dims[1])
        shape = (size, *shape)
        lc, lb = tuple(d + 1 for d in lc), tuple(d + 1 for d in lb)
    r = dims[2] if _mapped(dims[2]) else None
    if r is not None:
        rc, rb = (tuple(d + (d >= r) for d in ds) for ds in (rc, rb))
    if lhs_mapped and r is not None:
        lb, rb, out_dim = (0, *lb), (r, *rb), 0
    elif lhs_mapped:
        out_dim = len(lb)  # the first free dimension of the lhs
    else:
        n_lhs_free = len(shape) - len(lc) - len(lb)
        rhs_free = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
        out_dim = len(lb) + n_lhs_free + rhs_free.index(r)
    out = bcoo_dot_general_p.bind(
        data,
        indices,
        rhs,
        dimension_numbers=((lc, rc), (lb, rb)),
        lhs_spinfo=lhs_spinfo._replace(shape=shape),
        preferred_element_type=preferred_element_type,
    )
    return out, out_dim


bcoo_dot_general_p = sparse_primitive(
    "bcoo_dot_general", _dot_general_impl, linear=(0, 2), batching_rule=_dot_general_batch
)


def _dot_general_sampled_impl(lhs: Any, rhs: Any, indices: Any, *, dimension_numbers: Any) -> Any:
    return _extract_impl(indices, lax.dot_general(lhs, rhs, dimension_numbers))


bcoo_dot_general_sampled_p = sparse_primitive(
    "bcoo_dot_general_sampled", _dot_general_sampled_impl, linear=(0, 1)
)


def _structure(indices: Any, shape: Sequence[int], dense_shape: Sequence[int]) -> Any:
    """1.0 where the entries stored at `indices` lie in an array of `shape`, else 0.0."""
    ones = jnp.ones(indices.shape[:-1] + tuple(dense_shape), np.float32)
    return _todense_impl(ones, indices, spinfo=SparseInfo(tuple(shape)))


def _spdot_general_impl(
    lhs_data: Any,
    lhs_indices: Any,
    rhs_data: Any,
    rhs_indices: Any,
    *,
    dimension_numbers: Any,
    lhs_spinfo: SparseInfo,
    rhs_spinfo: SparseInfo,
    out_nse: int,
) -> list[Any]:
    def dense_part(indices: Any, info: SparseInfo) -> tuple[int, ...]:
        return tuple(info.shape[len(info.shape) - _dims(indices.shape, info.shape)[2] :])

    lhs_s = _structure(lhs_indices, lhs_spinfo.shape, dense_part(lhs_indices, lhs_spinfo))
    rhs_s = _structure(rhs_indices, rhs_spinfo.shape, dense_part(rhs_indices, rhs_spinfo))
    mask = lax.dot_general(lhs_s, rhs_s, dimension_numbers) != 0
    _, indices = _fromdense_impl(
        mask.astype(np.float32), nse=out_nse, n_batch=0, n_dense=0, index_dtype=lhs_indices.dtype
    )
    lhs = _todense_impl(lhs_data, lhs_indices, spinfo=lhs_spinfo)
    rhs = _todense_impl(rhs_data, rhs_indices, spinfo=rhs_spinfo)
    return [_extract_impl(indices, lax.dot_general(lhs, rhs, dimension_numbers)), indices]


bcoo_spdot_general_p = sparse_primitive(
    "bcoo_spdot_general", _spdot_general_impl, linear=(0, 2), multiple_results=True
)


# --- bcoo_transpose_p, bcoo_sort_indices_p, bcoo_sum_duplicates_p


def _check_permutation(permutation: Sequence[int], n_batch: int, n_sparse: int, ndim: int) -> None:
    perm = tuple(permutation)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"bcoo_transpose: {perm} is not a permutation of {ndim} axes.")
    parts = (perm[:n_batch], perm[n_batch : n_batch + n_sparse], perm[n_batch + n_sparse :])
    bounds = ((0, n_batch), (n_batch, n_batch + n_sparse), (n_batch + n_sparse, ndim))
    for part, (lo, hi) in zip(parts, bounds):
        if any(not lo <= p < hi for p in part):
            raise ValueError(
                f"bcoo_transpose: permutation {perm} mixes batch, sparse and dense axes "
                f"(n_batch={n_batch}, n_sparse={n_sparse})."
            )


def _transpose_impl(
    data: Any, indices: Any, *, permutation: tuple[int, ...], spinfo: SparseInfo
) -> list[Any]:
    n_batch, n_sparse, _ = _dims(indices.shape, spinfo.shape)
    perm = list(permutation)
    batch_perm = perm[:n_batch]
    sparse_perm = [p - n_batch for p in perm[n_batch : n_batch + n_sparse]]
    dense_perm = [n_batch + 1 + p - n_batch - n_sparse for p in perm[n_batch + n_sparse :]]
    data = jnp.transpose(data, batch_perm + [n_batch] + dense_perm)
    indices = jnp.transpose(indices, batch_perm + [n_batch, n_batch + 1])
    return [data, indices[..., sparse_perm] if n_sparse else indices]


bcoo_transpose_p = sparse_primitive(
    "bcoo_transpose", _transpose_impl, linear=(0,), multiple_results=True
)


def _keys(idx: Any, sparse_shape: Sequence[int]) -> tuple[Any, int]:
    """Row-major positions of the (nse, n_sparse) `idx`; out-of-range entries get the size."""
    size = math.prod(sparse_shape)
    bounds = jnp.array(sparse_shape, np.int32)
    valid = jnp.all((idx >= 0) & (idx < bounds), axis=1)
    strides = np.array([math.prod(sparse_shape[k + 1 :]) for k in range(len(sparse_shape))])
    key = jnp.sum(idx.astype(np.int32) * strides.astype(np.int32), axis=1)
    return jnp.where(valid, key, size), size


def _unkeys(key: Any, sparse_shape: Sequence[int], dtype: Any) -> Any:
    size = math.prod(sparse_shape)
    cols = []
    for k, n in enumerate(sparse_shape):
        stride = math.prod(sparse_shape[k + 1 :])
        cols.append(jnp.where(key < size, (key // stride) % n, n))
    return jnp.stack(cols, axis=1).astype(dtype)


def _per_batch(fn: Any, data: Any, indices: Any, shape: Sequence[int]) -> list[Any]:
    """`fn(data, indices)` on each batch element (buffers broadcast to the batch shape)."""
    n_batch, n_sparse, n_dense = _dims(indices.shape, shape)
    batch, nse = tuple(shape[:n_batch]), indices.shape[-2]
    dense = tuple(shape[len(shape) - n_dense :])
    if n_batch == 0:
        return list(fn(data, indices))
    data = jnp.broadcast_to(data, batch + (nse,) + dense).reshape((-1, nse) + dense)
    indices = jnp.broadcast_to(indices, batch + (nse, n_sparse)).reshape((-1, nse, n_sparse))
    out_d, out_i = polyjax.vmap(fn)(data, indices)
    return [out_d.reshape(batch + out_d.shape[1:]), out_i.reshape(batch + out_i.shape[1:])]


def _sort_indices_impl(data: Any, indices: Any, *, spinfo: SparseInfo) -> list[Any]:
    n_batch, n_sparse, _ = _dims(indices.shape, spinfo.shape)
    sparse_shape = tuple(spinfo.shape[n_batch : n_batch + n_sparse])

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        if n_sparse == 0:
            return d, i
        order = jnp.argsort(_keys(i, sparse_shape)[0], stable=True)
        return d[order], i[order]

    return _per_batch(one, data, indices, spinfo.shape)


bcoo_sort_indices_p = sparse_primitive(
    "bcoo_sort_indices", _sort_indices_impl, linear=(0,), multiple_results=True
)


def _sum_duplicates_impl(data: Any, indices: Any, *, spinfo: SparseInfo, nse: int) -> list[Any]:
    n_batch, n_sparse, n_dense = _dims(indices.shape, spinfo.shape)
    sparse_shape = tuple(spinfo.shape[n_batch : n_batch + n_sparse])

    def one(d: Any, i: Any) -> tuple[Any, Any]:
        if n_sparse == 0:
            total = jnp.sum(d, axis=0, keepdims=True)
            return jnp.zeros((nse,) + d.shape[1:], d.dtype).at[:1].set(total[:nse]), i[:nse]
        key, size = _keys(i, sparse_shape)
        order = jnp.argsort(key, stable=True)
        sorted_key = key[order]
        first = jnp.concatenate([jnp.ones(1, bool), sorted_key[1:] != sorted_key[:-1]])
        slot = jnp.cumsum(first.astype(np.int32)) - 1
        slot = jnp.where(sorted_key < size, slot, nse)  # padding is dropped
        out_key = jnp.full((nse,), size, np.int32).at[slot].set(sorted_key, mode="drop")
        out_d = jnp.zeros((nse,) + d.shape[1:], d.dtype).at[slot].add(d[order], mode="drop")
        return out_d, _unkeys(out_key, sparse_shape, i.dtype)

    return _per_batch(one, data, indices, spinfo.shape)


bcoo_sum_duplicates_p = sparse_primitive(
    "bcoo_sum_duplicates", _sum_duplicates_impl, linear=(0,), multiple_results=True
)


# --- the BCOO class


class BCOO(JAXSparse):
    """A sparse array in batched coordinate format.

    Args:
      args: ``(data, indices)``: ``data`` of shape ``batch + (nse,) + dense`` and
        integer ``indices`` of shape ``batch + (nse, n_sparse)``.
      shape: the dense shape ``batch + sparse + dense``.
      indices_sorted: whether the indices are in row-major order in each batch.
      unique_indices: whether no index repeats in a batch.

    Raises:
      ValueError: the buffers' shapes do not describe an array of `shape`.

    Example:
      >>> import numpy as np
      >>> from polyjax.experimental import sparse
      >>> m = sparse.BCOO((np.array([1.0, 2.0]), np.array([[0, 1], [1, 0]])), shape=(2, 2))
      >>> m.todense()
      Array([[0., 1.],
             [2., 0.]], dtype=float32)
    """

    def __init__(
        self,
        args: tuple[Any, Any],
        *,
        shape: Sequence[int],
        indices_sorted: bool = False,
        unique_indices: bool = False,
    ) -> None:
        data, indices = args
        self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        _check_bcoo_layout(tuple(self.data.shape), tuple(self.indices.shape), self.shape)

    @property
    def n_batch(self) -> int:
        ndim = getattr(self.indices, "ndim", None)  # pytree utilities may hold other leaves
        return self._leaf_n_batch if ndim is None else ndim - 2

    @property
    def n_sparse(self) -> int:
        return int(self.indices.shape[-1])

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def _nse_axis_size(self) -> int:
        return self.indices.shape[-2]

    @property
    def _info(self) -> SparseInfo:
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    def _layout_suffix(self) -> str:
        extra = f", n_batch={self.n_batch}" if self.n_batch else ""
        return extra + (f", n_dense={self.n_dense}" if self.n_dense else "")

    def tree_flatten(self) -> tuple[tuple[Any, Any], tuple[Any, ...]]:
        return (self.data, self.indices), (*self._info, self.n_batch)

    @classmethod
    def tree_unflatten(cls, aux: tuple[Any, ...], children: Sequence[Any]) -> BCOO:
        """Rebuilds from the leaves, which need not be arrays (pytree utilities pass others).

        Leaves with more leading dimensions than the flattened array had (the
        outputs of `vmap`) add batch dimensions to the shape.
        """
        shape, indices_sorted, unique_indices, n_batch = aux
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        extra = getattr(obj.indices, "ndim", n_batch + 2) - 2 - n_batch
        if extra > 0:
            shape = tuple(obj.indices.shape[:extra]) + tuple(shape)
        elif extra < 0:  # inside `vmap`: the mapped batch dimensions are gone
            shape = tuple(shape)[-extra:]
        obj.shape = tuple(shape)
        obj.indices_sorted, obj.unique_indices = indices_sorted, unique_indices
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
    ) -> BCOO:
        """`bcoo_fromdense`."""
        return bcoo_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = np.int32) -> BCOO:
        """The `BCOO` of a `scipy.sparse` matrix (its coordinate entries, in its order)."""
        coo = mat.tocoo()
        indices = np.stack([coo.row, coo.col], axis=1).astype(index_dtype)
        return cls((coo.data, indices), shape=coo.shape)

    def todense(self) -> Any:
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """`bcoo_transpose` (axes reversed by default)."""
        axes = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=axes)

    def reshape(self, *args: Any, **kwargs: Any) -> BCOO:
        """`bcoo_reshape` to the shape given."""
        shape = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        shape = kwargs.get("new_sizes", shape)
        return bcoo_reshape(self, new_sizes=tuple(shape))

    def sum(self, axis: int | Sequence[int] | None = None) -> Any:
        """`bcoo_reduce_sum` over `axis`; over every axis (the default), a dense scalar."""
        axes = range(self.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        out = bcoo_reduce_sum(self, axes=tuple(axes))
        return out.todense() if out.ndim == 0 else out

    def __getitem__(self, idx: Any) -> BCOO:
        """Basic indexing (integers and slices), as a `BCOO` without batch or dense dimensions."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        if not all(isinstance(i, (int, np.integer, slice)) or i is Ellipsis for i in idx):
            raise TypeError(
                f"BCOO indexing: only integers, slices and ... are supported, got {idx}."
            )
        fn = lambda x: x[idx]  # noqa: E731
        out_shape = polyjax.eval_shape(fn, polyjax.ShapeDtypeStruct(self.shape, self.dtype)).shape
        return _restructure([self], fn, nse=min(_total(self), math.prod(out_shape)))

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """`bcoo_sum_duplicates`; with `remove_zeros` and concrete values, zero sums are dropped.

        Example:
          >>> import numpy as np
          >>> m = BCOO((np.array([1.0, 0.0, 2.0]), np.array([[0], [1], [0]])), shape=(2,))
          >>> m.sum_duplicates(), m.sum_duplicates(remove_zeros=False)
          (BCOO(float32[2], nse=1), BCOO(float32[2], nse=2))
        """
        if remove_zeros and nse is None:
            try:
                dense = np.asarray(self.todense())
            except Exception:  # traced: the zeros cannot be found
                dense = None
            if dense is not None:
                return bcoo_fromdense(
                    dense,
                    nse=_count_nse(dense, self.n_batch, self.n_dense),
                    n_batch=self.n_batch,
                    n_dense=self.n_dense,
                    index_dtype=self.indices.dtype,
                )
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """`bcoo_sort_indices`."""
        return bcoo_sort_indices(self)

    def update_layout(
        self,
        *,
        n_batch: int | None = None,
        n_dense: int | None = None,
        on_inefficient: str | None = "error",
    ) -> BCOO:
        """`bcoo_update_layout`."""
        return bcoo_update_layout(
            self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient
        )

    def astype(self, dtype: Any) -> BCOO:
        """The same entries, converted to `dtype`."""
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape, **self._flags())

    def _flags(self) -> dict[str, bool]:
        return {"indices_sorted": self.indices_sorted, "unique_indices": self.unique_indices}

    def __neg__(self) -> BCOO:
        return BCOO((-self.data, self.indices), shape=self.shape, **self._flags())

    def __pos__(self) -> BCOO:
        return self

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            return bcoo_multiply_sparse(self, other)
        return bcoo_multiply_dense(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> BCOO:
        if isinstance(other, JAXSparse):
            return NotImplemented
        return bcoo_multiply_dense(self, 1 / jnp.asarray(other))

    def __add__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            return _add_sparse(self, other)
        return self.todense() + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return self + (-other)

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __matmul__(self, other: Any) -> Any:
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return _matmul(other, self)


tree_util.register_pytree_node(
    BCOO,
    lambda m: m.tree_flatten(),
    BCOO.tree_unflatten,
)


# --- public functions


def _as_bcoo(mat: Any, what: str) -> BCOO:
    if isinstance(mat, BCOO):
        return mat
    if isinstance(mat, JAXSparse) and hasattr(mat, "to_bcoo"):
        return mat.to_bcoo()
    raise TypeError(f"{what}: expected a BCOO array, got {type(mat).__name__}.")


def _count_nse(mat: Any, n_batch: int, n_dense: int) -> int:
    m = np.asarray(mat)
    mask = m != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(m.ndim - n_dense, m.ndim)))
    if n_batch:
        mask = mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1)
        return int(mask.max()) if mask.size else 0
    return int(mask.sum())


def bcoo_fromdense(
    mat: Any,
    *,
    nse: int | None = None,
    n_batch: int = 0,
    n_dense: int = 0,
    index_dtype: Any = np.int32,
) -> BCOO:
    """The `BCOO` array holding the nonzero entries of the dense `mat`.

    Args:
      mat: a dense array.
      nse: the number of stored entries per batch element (the padding entries
        have out-of-range indices); required when `mat` is traced.
      n_batch: leading dimensions stored as batch dimensions.
      n_dense: trailing dimensions stored densely in each entry.
      index_dtype: the integer type of the indices.

    Returns:
      A `BCOO` with row-major sorted, unique indices.

    Raises:
      ValueError: `nse` missing under a trace, or dimensions that do not fit `mat`.

    Example:
      >>> import numpy as np
      >>> m = bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0]]), n_batch=1)
      >>> m, m.indices.shape
      (BCOO(float32[3, 2], nse=1, n_batch=1), (3, 1, 1))
    """
    mat = jnp.asarray(mat)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(
            f"bcoo_fromdense: n_batch={n_batch} and n_dense={n_dense} do not fit an array "
            f"of shape {tuple(mat.shape)}."
        )
    nse = nse_from(lambda: _count_nse(mat, n_batch, n_dense), nse, "bcoo_fromdense")
    data, indices = bcoo_fromdense_p.bind(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=np.dtype(index_dtype)
    )
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat: BCOO) -> Any:
    """The dense array of the `BCOO` `mat` (repeated indices add up).

    Example:
      >>> import numpy as np
      >>> bcoo_todense(BCOO((np.array([1.0, 2.0]), np.array([[1], [1]])), shape=(3,)))
      Array([0., 3., 0.], dtype=float32)
    """
    mat = _as_bcoo(mat, "bcoo_todense")
    return bcoo_todense_p.bind(mat.data, mat.indices, spinfo=mat._info)


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """The entries of the dense `arr` at the indices of `sparr`, as a `BCOO` like it.

    Args:
      sparr: gives the indices.
      arr: a dense array of `sparr`'s shape.
      assume_unique: whether `sparr`'s indices do not repeat (default: its
        `unique_indices`); if False, a repeated index keeps the value once.

    Example:
      >>> import numpy as np
      >>> s = bcoo_fromdense(np.eye(2))
      >>> bcoo_extract(s, np.array([[5.0, 6.0], [7.0, 8.0]])).data
      Array([5., 8.], dtype=float32)
    """
    sparr = _as_bcoo(sparr, "bcoo_extract")
    arr = jnp.asarray(arr)
    if tuple(arr.shape) != sparr.shape:
        raise ValueError(f"bcoo_extract: arr of shape {arr.shape} != sparr's shape {sparr.shape}.")
    unique = sparr.unique_indices if assume_unique is None else bool(assume_unique)
    data = bcoo_extract_p.bind(sparr.indices, arr, assume_unique=unique)
    return BCOO((data, sparr.indices), shape=sparr.shape, **sparr._flags())


def _canonical_dims(dimension_numbers: Any) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    return (tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb)))


def _check_dot_shapes(lhs_shape: tuple, rhs_shape: tuple, dims: tuple) -> None:
    (lc, rc), (lb, rb) = dims
    for a, b in ((lc, rc), (lb, rb)):
        if len(a) != len(b) or any(lhs_shape[i] != rhs_shape[j] for i, j in zip(a, b)):
            raise TypeError(
                f"bcoo_dot_general: dimension numbers {dims} do not match shapes "
                f"{lhs_shape} and {rhs_shape}."
            )


def _dense_times_sparse(lhs: Any, rhs: BCOO, dims: tuple, preferred: Any) -> Any:
    (lc, rc), (lb, rb) = dims
    out = bcoo_dot_general_p.bind(
        rhs.data,
        rhs.indices,
        lhs,
        dimension_numbers=((rc, lc), (rb, lb)),
        lhs_spinfo=rhs._info,
        preferred_element_type=preferred,
    )
    nb = len(lb)
    n_sparse_free = rhs.ndim - len(rc) - len(rb)
    n_dense_free = lhs.ndim - len(lc) - len(lb)
    perm = (
        list(range(nb))
        + list(range(nb + n_sparse_free, nb + n_sparse_free + n_dense_free))
        + list(range(nb, nb + n_sparse_free))
    )
    return jnp.transpose(out, perm)


def bcoo_dot_general(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`lax.dot_general` where one or both operands are `BCOO` arrays.

    Args:
      lhs: a `BCOO` or dense array.
      rhs: a `BCOO` or dense array.
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``.
      precision: accepted for JAX's signature.
      preferred_element_type: the result's dtype.
      out_sharding: accepted for JAX's signature (must be None).

    Returns:
      A dense array if one operand is dense; a `BCOO` if both are sparse.

    Example:
      >>> import numpy as np
      >>> m = bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
      >>> bcoo_dot_general(m, np.array([1.0, 10.0]), dimension_numbers=(([1], [0]), ([], [])))
      Array([10.,  2.], dtype=float32)
    """
    del precision
    if out_sharding is not None:
        raise NotImplementedError("bcoo_dot_general: out_sharding is not supported.")
    dims = _canonical_dims(dimension_numbers)
    preferred = None if preferred_element_type is None else np.dtype(preferred_element_type)
    if isinstance(lhs, JAXSparse) and isinstance(rhs, JAXSparse):
        lhs, rhs = _as_bcoo(lhs, "bcoo_dot_general"), _as_bcoo(rhs, "bcoo_dot_general")
        _check_dot_shapes(lhs.shape, rhs.shape, dims)
        return _spdot_general(lhs, rhs, dims, preferred)
    if isinstance(lhs, JAXSparse):
        lhs, rhs = _as_bcoo(lhs, "bcoo_dot_general"), jnp.asarray(rhs)
        _check_dot_shapes(lhs.shape, tuple(rhs.shape), dims)
        return bcoo_dot_general_p.bind(
            lhs.data,
            lhs.indices,
            rhs,
            dimension_numbers=dims,
            lhs_spinfo=lhs._info,
            preferred_element_type=preferred,
        )
    if isinstance(rhs, JAXSparse):
        lhs, rhs = jnp.asarray(lhs), _as_bcoo(rhs, "bcoo_dot_general")
        _check_dot_shapes(tuple(lhs.shape), rhs.shape, dims)
        return _dense_times_sparse(lhs, rhs, dims, preferred)
    return lax.dot_general(lhs, rhs, dims, preferred_element_type=preferred_element_type)


def _spdot_general(lhs: BCOO, rhs: BCOO, dims: tuple, preferred: Any) -> BCOO:
    out_shape = _dot_shape(lhs.shape, rhs.shape, dims)
    total = lambda m: m.nse * math.prod(m.shape[: m.n_batch])  # noqa: E731
    out_nse = min(total(lhs) * total(rhs), math.prod(out_shape))
    data, indices = bcoo_spdot_general_p.bind(
        lhs.data,
        lhs.indices,
        rhs.data,
        rhs.indices,
        dimension_numbers=dims,
        lhs_spinfo=lhs._info,
        rhs_spinfo=rhs._info,
        out_nse=out_nse,
    )
    if preferred is not None:
        data = data.astype(preferred)
    return BCOO((data, indices), shape=out_shape, indices_sorted=True, unique_indices=True)


def _dot_shape(lhs_shape: tuple, rhs_shape: tuple, dims: tuple) -> tuple[int, ...]:
    """The shape of ``dot_general`` of operands of these shapes."""
    (lc, rc), (lb, rb) = dims
    lf = [d for i, d in enumerate(lhs_shape) if i not in lc and i not in lb]
    rf = [d for i, d in enumerate(rhs_shape) if i not in rc and i not in rb]
    return tuple([lhs_shape[i] for i in lb] + lf + rf)


def _matmul(lhs: Any, rhs: Any) -> Any:
    """``lhs @ rhs`` with NumPy's rules (one operand at least sparse; leading dimensions equal)."""
    if not isinstance(lhs, JAXSparse):
        lhs = jnp.asarray(lhs)
    if not isinstance(rhs, JAXSparse):
        rhs = jnp.asarray(rhs)
    lshape, rshape = tuple(lhs.shape), tuple(rhs.shape)
    lnd, rnd = len(lshape), len(rshape)
    r_axis = 0 if rnd == 1 else rnd - 2
    if lnd == 0 or rnd == 0 or lshape[-1] != rshape[r_axis]:
        raise ValueError(f"sparse matmul: shapes {lshape} and {rshape} are not aligned.")
    both_batched = lnd > 2 and rnd > 2
    if (both_batched and lshape[:-2] != rshape[:-2]) or (lnd == 2 and rnd > 2):
        raise ValueError(
            f"sparse matmul: shapes {lshape} and {rshape}: leading dimensions must be equal."
        )
    batch = list(range(lnd - 2)) if both_batched else []
    return bcoo_dot_general(lhs, rhs, dimension_numbers=(([lnd - 1], [r_axis]), (batch, batch)))


def bcoo_dot_general_sampled(A: Any, B: Any, indices: Any, *, dimension_numbers: Any) -> Any:
    """The entries of ``dot_general(A, B)`` at `indices` (the data of a `BCOO` result).

    Example:
      >>> import numpy as np
      >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
      >>> dims = (([1], [0]), ([], []))
      >>> bcoo_dot_general_sampled(a, a, np.array([[0, 1]]), dimension_numbers=dims)
      Array([10.], dtype=float32)
    """
    A, B, indices = jnp.asarray(A), jnp.asarray(B), jnp.asarray(indices)
    return bcoo_dot_general_sampled_p.bind(
        A, B, indices, dimension_numbers=_canonical_dims(dimension_numbers)
    )


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """`mat` with its axes permuted (batch, sparse and dense axes each among themselves).

    Example:
      >>> import numpy as np
      >>> m = bcoo_fromdense(np.array([[0.0, 1.0], [0.0, 0.0]]))
      >>> bcoo_transpose(m, permutation=(1, 0)).todense()
      Array([[0., 0.],
             [1., 0.]], dtype=float32)
    """
    mat = _as_bcoo(mat, "bcoo_transpose")
    perm = tuple(int(p) for p in permutation)
    _check_permutation(perm, mat.n_batch, mat.n_sparse, mat.ndim)
    data, indices = bcoo_transpose_p.bind(mat.data, mat.indices, permutation=perm, spinfo=mat._info)
    shape = tuple(mat.shape[p] for p in perm)
    return BCOO((data, indices), shape=shape, unique_indices=mat.unique_indices)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """`mat` with its entries in row-major order of their indices (padding last)."""
    mat = _as_bcoo(mat, "bcoo_sort_indices")
    data, indices = bcoo_sort_indices_p.bind(mat.data, mat.indices, spinfo=mat._info)
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices
    )


def _count_unique(mat: BCOO) -> int:
    idx = np.asarray(mat.indices)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    bounds = np.array(mat.shape[n_batch : n_batch + n_sparse])
    rows = idx.reshape((-1,) + idx.shape[n_batch:]) if n_batch else idx[None]
    counts = [len({tuple(r) for r in b if np.all((r >= 0) & (r < bounds))}) for b in rows]
    return max(counts, default=0)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """`mat` with repeated indices summed, sorted, and padding at the end.

    Args:
      mat: a `BCOO` array.
      nse: the stored entries of the result (default: the number of distinct
        indices, or `mat.nse` under a trace).

    Example:
      >>> import numpy as np
      >>> m = BCOO((np.array([1.0, 2.0, 3.0]), np.array([[1], [0], [1]])), shape=(2,))
      >>> s = bcoo_sum_duplicates(m)
      >>> s, s.data
      (BCOO(float32[2], nse=2), Array([2., 4.], dtype=float32))
    """
    mat = _as_bcoo(mat, "bcoo_sum_duplicates")
    if nse is None:
        try:
            nse = _count_unique(mat)
        except Exception:  # traced indices: keep the size
            nse = mat.nse
    data, indices = bcoo_sum_duplicates_p.bind(
        mat.data, mat.indices, spinfo=mat._info, nse=int(nse)
    )
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


# --- operations that find a new structure from the indices


@dataclasses.dataclass(frozen=True)
class _Op:
    """A dense operation named by value (so that `_restructure`'s compilations are reused).

    ``lax.<name>(*operands, **params)``, or the product, sum or identity of the operands.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    def __call__(self, *xs: Any) -> Any:
        kw = dict(self.params)
        if self.name == "mul":
            return xs[0] * xs[1]
        if self.name == "add":
            return xs[0] + xs[1]
        if self.name == "identity":
            return xs[0]
        if self.name == "concatenate":
            return lax.concatenate(xs, **kw)
        return getattr(lax, self.name)(*xs, **kw)


def _restructure_impl(
    mats: Sequence[BCOO], *, fn: Any, nse: int, n_batch: int, n_dense: int
) -> BCOO:
    structures = [
        bcoo_todense_p.bind(
            jnp.ones(m.data.shape, np.float32), m.indices, spinfo=SparseInfo(m.shape)
        )
        for m in mats
    ]
    mask = fn(*structures)
    index_dtype = mats[0].indices.dtype
    _, indices = bcoo_fromdense_p.bind(
        mask, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=np.dtype(index_dtype)
    )
    dense = fn(*[m.todense() for m in mats])
    data = bcoo_extract_p.bind(indices, dense, assume_unique=True)
    return BCOO((data, indices), shape=dense.shape, indices_sorted=True, unique_indices=True)


_restructure_jit = polyjax.jit(
    _restructure_impl, static_argnames=("fn", "nse", "n_batch", "n_dense")
)


def _restructure(
    mats: Sequence[BCOO], fn: Any, *, nse: int, n_batch: int = 0, n_dense: int = 0
) -> BCOO:
    """The `BCOO` of ``fn(*dense)``, stored where ``fn`` of the operands' structures is nonzero.

    `fn` must map zeros to zeros and move entries without mixing them (slicing,
    reshaping, concatenation, broadcasting), so the structure bounds the result.
    One compiled function per operation and shapes (an `_Op` names it by value).
    """
    return _restructure_jit(list(mats), fn=fn, nse=int(nse), n_batch=n_batch, n_dense=n_dense)


def _total(mat: BCOO) -> int:
    return mat.nse * math.prod(mat.shape[: mat.n_batch])


def _same_layout_nse(mat: BCOO, out_shape: tuple) -> dict[str, int]:
    """Keep `mat`'s nse, n_batch and n_dense where the result has room."""
    nse = min(mat.nse, math.prod(out_shape[mat.n_batch : len(out_shape) - mat.n_dense]) or 0)
    return {"nse": max(nse, 0), "n_batch": mat.n_batch, "n_dense": mat.n_dense}


def bcoo_slice(
    mat: BCOO,
    *,
    start_indices: Sequence[int],
    limit_indices: Sequence[int],
    strides: Sequence[int] | None = None,
) -> BCOO:
    """`lax.slice` of a `BCOO` array (a `BCOO` with the same nse)."""
    mat = _as_bcoo(mat, "bcoo_slice")
    strides = None if strides is None else tuple(strides)
    fn = _Op(
        "slice",
        (
            ("start_indices", tuple(start_indices)),
            ("limit_indices", tuple(limit_indices)),
            ("strides", strides),
        ),
    )
    out_shape = polyjax.eval_shape(fn, polyjax.ShapeDtypeStruct(mat.shape, mat.dtype)).shape
    return _restructure([mat], fn, **_same_layout_nse(mat, out_shape))


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any], slice_sizes: Sequence[int]) -> BCOO:
    """`lax.dynamic_slice` of a `BCOO` array."""
    mat = _as_bcoo(mat, "bcoo_dynamic_slice")
    fn = lambda x: lax.dynamic_slice(x, list(start_indices), tuple(slice_sizes))  # noqa: E731
    return _restructure([mat], fn, **_same_layout_nse(mat, tuple(slice_sizes)))


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """`lax.rev` of a `BCOO` array."""
    mat = _as_bcoo(operand, "bcoo_rev")
    fn = _Op("rev", (("dimensions", tuple(int(d) for d in dimensions)),))
    return _restructure([mat], fn, **_same_layout_nse(mat, mat.shape))


def bcoo_reshape(
    mat: BCOO,
    *,
    new_sizes: Sequence[int],
    dimensions: Sequence[int] | None = None,
    sharding: Any = None,
) -> BCOO:
    """`lax.reshape` of a `BCOO` array (the result has no batch or dense dimensions)."""
    mat = _as_bcoo(mat, "bcoo_reshape")
    new_sizes = tuple(int(d) for d in new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"bcoo_reshape: cannot reshape {mat.shape} to {new_sizes}.")
    dims = None if dimensions is None else tuple(dimensions)
    fn = _Op("reshape", (("new_sizes", new_sizes), ("dimensions", dims)))
    nse = min(_total(mat) * math.prod(mat.shape[mat.ndim - mat.n_dense :]), math.prod(new_sizes))
    return _restructure([mat], fn, nse=nse)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """`lax.squeeze` of a `BCOO` array."""
    mat = _as_bcoo(arr, "bcoo_squeeze")
    dims = tuple(int(d) % mat.ndim for d in dimensions)
    if any(mat.shape[d] != 1 for d in dims):
        raise ValueError(f"bcoo_squeeze: dimensions {dims} of shape {mat.shape} are not all 1.")
    shape = tuple(s for i, s in enumerate(mat.shape) if i not in dims)
    n_batch = mat.n_batch - sum(d < mat.n_batch for d in dims)
    n_dense = mat.n_dense - sum(d >= mat.ndim - mat.n_dense for d in dims)
    nse = min(mat.nse, math.prod(shape[n_batch : len(shape) - n_dense]))
    return _restructure(
        [mat], _Op("squeeze", (("dimensions", dims),)), nse=nse, n_batch=n_batch, n_dense=n_dense
    )


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any = None
) -> BCOO:
    """`lax.broadcast_in_dim` of a `BCOO` array (new leading dimensions become batch dimensions)."""
    mat = _as_bcoo(mat, "bcoo_broadcast_in_dim")
    shape, bdims = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    new_lead = bdims[0] if bdims else len(shape)
    n_batch = new_lead + mat.n_batch if mat.n_batch or new_lead else 0
    n_dense = mat.n_dense
    fn = _Op("broadcast_in_dim", (("shape", shape), ("broadcast_dimensions", bdims)))
    region = math.prod(shape[n_batch : len(shape) - n_dense])
    # Each entry repeats along the dimensions broadcast in the sparse region.
    in_size = {d: mat.shape[i] for i, d in enumerate(bdims)}
    factor = math.prod(shape[d] // in_size.get(d, 1) for d in range(n_batch, len(shape) - n_dense))
    nse = min(region, mat.nse * factor)
    return _restructure([mat], fn, nse=nse, n_batch=n_batch, n_dense=n_dense)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """`lax.concatenate` of `BCOO` arrays (their stored entries together)."""
    mats = [_as_bcoo(m, "bcoo_concatenate") for m in operands]
    if not mats:
        raise ValueError("bcoo_concatenate: no operands.")
    fn = _Op("concatenate", (("dimension", int(dimension)),))
    n_batch, n_dense = mats[0].n_batch, mats[0].n_dense
    if int(dimension) < n_batch:
        nse = max(m.nse for m in mats)
    else:
        nse = sum(m.nse for m in mats)
    out_shape = polyjax.eval_shape(
        fn, *[polyjax.ShapeDtypeStruct(m.shape, m.dtype) for m in mats]
    ).shape
    nse = min(nse, math.prod(out_shape[n_batch : len(out_shape) - n_dense]))
    return _restructure(mats, fn, nse=nse, n_batch=n_batch, n_dense=n_dense)


def bcoo_gather(
    operand: BCOO,
    start_indices: Any,
    dimension_numbers: Any,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: Any = None,
    fill_value: Any = None,
) -> BCOO:
    """`lax.gather` of a `BCOO` array."""
    mat = _as_bcoo(operand, "bcoo_gather")

    def fn(x: Any) -> Any:
        return lax.gather(
            x,
            start_indices,
            dimension_numbers,
            tuple(slice_sizes),
            mode=mode,
            fill_value=fill_value,
        )

    out_shape = polyjax.eval_shape(fn, polyjax.ShapeDtypeStruct(mat.shape, mat.dtype)).shape
    return _restructure([mat], fn, nse=math.prod(out_shape))


def bcoo_conv_general_dilated(lhs: Any, rhs: Any, **kwargs: Any) -> BCOO:
    """`lax.conv_general_dilated` with `BCOO` operands (the result is a `BCOO`)."""
    sparse = [x for x in (lhs, rhs) if isinstance(x, JAXSparse)]
    if not sparse:
        raise TypeError("bcoo_conv_general_dilated: expected a BCOO operand.")
    fn_dense = lambda a, b: lax.conv_general_dilated(a, b, **kwargs)  # noqa: E731
    out = fn_dense(
        lhs.todense() if isinstance(lhs, JAXSparse) else lhs,
        rhs.todense() if isinstance(rhs, JAXSparse) else rhs,
    )
    try:
        nse = int(np.count_nonzero(np.asarray(out)))
    except Exception:  # traced: every position may be nonzero
        nse = math.prod(out.shape)
    return bcoo_fromdense(out, nse=nse)


def bcoo_multiply_dense(sp_mat: BCOO, v: Any) -> BCOO:
    """The elementwise product of a `BCOO` array and a dense array (broadcast to its shape).

    Example:
      >>> import numpy as np
      >>> m = bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
      >>> bcoo_multiply_dense(m, np.array([10.0, 100.0])).todense()
      Array([[  0., 100.],
             [ 20.,   0.]], dtype=float32)
    """
    mat = _as_bcoo(sp_mat, "bcoo_multiply_dense")
    v = jnp.asarray(v)
    if v.ndim == 0:
        values = v
    else:
        full = jnp.broadcast_to(v, mat.shape)
        values = bcoo_extract_p.bind(mat.indices, full, assume_unique=True)
    return BCOO((mat.data * values, mat.indices), shape=mat.shape, **mat._flags())


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """The elementwise product of two `BCOO` arrays of one shape (stored where both store)."""
    lhs, rhs = _as_bcoo(lhs, "bcoo_multiply_sparse"), _as_bcoo(rhs, "bcoo_multiply_sparse")
    if lhs.shape != rhs.shape:
        raise ValueError(f"bcoo_multiply_sparse: shapes {lhs.shape} and {rhs.shape} differ.")
    nse = min(_total(lhs) * _total(rhs), lhs.size)
    return _restructure([lhs, rhs], _Op("mul"), nse=nse)


def _add_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    if lhs.shape != rhs.shape:
        raise ValueError(f"BCOO addition: shapes {lhs.shape} and {rhs.shape} differ.")
    if lhs.n_batch == rhs.n_batch == 0 and lhs.n_dense == rhs.n_dense:
        data = jnp.concatenate([lhs.data, rhs.data.astype(lhs.dtype)], axis=0)
        return BCOO(
            (data, jnp.concatenate([lhs.indices, rhs.indices.astype(lhs.indices.dtype)])),
            shape=lhs.shape,
        )
    nse = min(_total(lhs) + _total(rhs), lhs.size)
    return _restructure([lhs, rhs], _Op("add"), nse=nse)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum of a `BCOO` array over `axes` (a `BCOO`; summed batch axes are folded in).

    Example:
      >>> import numpy as np
      >>> bcoo_reduce_sum(bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 3.0]])), axes=(0,)).todense()
      Array([2., 4.], dtype=float32)
    """
    mat = _as_bcoo(mat, "bcoo_reduce_sum")
    axes = tuple(sorted({int(a) % mat.ndim for a in axes})) if mat.ndim else ()
    return _reduce_sum_jit(mat, axes=axes)


def _reduce_sum_impl(mat: BCOO, *, axes: tuple[int, ...]) -> BCOO:
    if any(a < mat.n_batch for a in axes):
        mat = _unbatched(mat)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    sparse_axes = [a for a in axes if n_batch <= a < n_batch + n_sparse]
    dense_axes = [a for a in axes if a >= n_batch + n_sparse]
    bounds = jnp.array(mat.shape[n_batch : n_batch + n_sparse], np.int32)
    valid = jnp.all((mat.indices >= 0) & (mat.indices < bounds), axis=-1)
    keep = [k for k in range(n_sparse) if n_batch + k not in sparse_axes]
    kept_bounds = [mat.shape[n_batch + k] for k in keep]
    indices = jnp.where(
        valid[..., None], mat.indices[..., keep], jnp.array(kept_bounds, mat.indices.dtype)
    )
    valid = valid.reshape(valid.shape + (1,) * mat.n_dense)
    data = jnp.where(valid, mat.data, 0)
    if dense_axes:
        data = jnp.sum(data, axis=tuple(a - n_batch - n_sparse + n_batch + 1 for a in dense_axes))
    shape = tuple(s for i, s in enumerate(mat.shape) if i not in axes)
    return BCOO((data, indices.reshape(indices.shape[:-1] + (len(keep),))), shape=shape)


_reduce_sum_jit = polyjax.jit(_reduce_sum_impl, static_argnames=("axes",))


def _unbatched(mat: BCOO) -> BCOO:
    """The same array with its batch dimensions stored as sparse ones (``n_batch=0``)."""
    data = _flat_data(mat.data, mat.indices.shape, mat.shape)
    indices = _flat_indices(mat.indices, mat.shape).astype(mat.indices.dtype)
    return BCOO((data, indices), shape=mat.shape, unique_indices=mat.unique_indices)


def bcoo_update_layout(
    mat: BCOO,
    *,
    n_batch: int | None = None,
    n_dense: int | None = None,
    on_inefficient: str | None = "error",
) -> BCOO:
    """`mat` stored with `n_batch` batch and `n_dense` dense dimensions.

    Args:
      mat: a `BCOO` array.
      n_batch: the new number of batch dimensions (default: unchanged).
      n_dense: the new number of dense dimensions (default: unchanged).
      on_inefficient: ``'error'`` (raise `SparseEfficiencyError`), ``'warn'``
        (`SparseEfficiencyWarning`) or None, where the new layout may store
        more than the old one (more batch or fewer dense dimensions than before
        and more than one element in those dimensions).

    Example:
      >>> import numpy as np
      >>> m = bcoo_fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]), n_batch=1)
      >>> bcoo_update_layout(m, n_batch=0)
      BCOO(float32[2, 2], nse=2)
    """
    mat = _as_bcoo(mat, "bcoo_update_layout")
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(
            f"bcoo_update_layout: on_inefficient={on_inefficient!r} is not one of "
            "'error', 'warn', None."
        )
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(
            f"bcoo_update_layout: n_batch={n_batch}, n_dense={n_dense} do not fit "
            f"shape {mat.shape}."
        )
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if n_batch > mat.n_batch or n_dense > mat.n_dense:
        msg = (
            f"For matrix of shape {mat.shape}, changing (n_batch, n_dense) from "
            f"({mat.n_batch}, {mat.n_dense}) to ({n_batch}, {n_dense}) results in "
            "inefficient storage."
        )
        if on_inefficient == "error":
            raise SparseEfficiencyError(
                msg + " To disable this error, set on_inefficient to 'warn' or None."
            )
        if on_inefficient == "warn":
            warnings.warn(msg, SparseEfficiencyWarning, stacklevel=2)
    grow = (
        math.prod(mat.shape[mat.ndim - mat.n_dense : mat.ndim - n_dense])
        if n_dense < mat.n_dense
        else 1
    )
    region = math.prod(mat.shape[n_batch : mat.ndim - n_dense])
    nse = min(_total(mat) * grow, region)
    return _restructure([mat], _Op("identity"), nse=nse, n_batch=n_batch, n_dense=n_dense)
