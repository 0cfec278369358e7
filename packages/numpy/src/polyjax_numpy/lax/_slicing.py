"""Indexing primitives: slices at run-time positions.

    dynamic_slice         f32[10], i32[] -> f32[3]          (start known only at run time)
    dynamic_update_slice  f32[10], f32[3], i32[] -> f32[10] (writes a block at a start)

Start indices are scalars, one per operand axis. As in XLA (and JAX), they are
*clamped* so that the whole slice stays inside the operand: a start of 9 for a
slice of size 3 along an axis of size 10 reads elements 7, 8, 9. The functions
(not the primitives) first wrap negative Python-style indices once, by adding
the axis size.

The `*_in_dim` helpers act along one axis and are built on the primitives.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._elementwise import add as _add
from polyjax_numpy.lax._elementwise import lt as _lt
from polyjax_numpy.lax._elementwise import select_n as _select_n
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    canonicalize_axis,
    concatenate,
    expand_dims,
    full,
    slice_in_dim,
    squeeze,
)

__all__ = [
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "index_in_dim",
    "slice_in_dim",
]


# ---------------------------------------------------------------------------
# Shared helpers


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def _impl(prim: Primitive) -> None:
    prim.def_impl(functools.partial(dispatch.apply_primitive, prim))


def _index_dtype(indices: Sequence[Any]) -> np.dtype:
    """One integer dtype for all start indices (StableHLO wants them alike)."""
    arrays = [np.dtype(get_aval(i).dtype) for i in indices if not isinstance(i, int | np.integer)]
    if arrays and all(d == arrays[0] for d in arrays):
        return arrays[0]
    if any(d.itemsize == 8 for d in arrays):
        return dtypes.canonicalize_dtype(np.int64)
    return np.dtype(np.int32)


def _start_indices(
    operand_shape: Sequence[Any], start_indices: Sequence[Any], wrap: bool = True
) -> list[Any]:
    """Start indices of one dtype, negative ones wrapped once by the axis size."""
    start_indices = list(start_indices)
    if len(start_indices) != len(operand_shape):
        raise TypeError(
            f"Length of slice indices must match number of operand dimensions "
            f"({len(start_indices)} vs {len(operand_shape)})"
        )
    dtype = _index_dtype(start_indices)
    out = []
    for i, d in zip(start_indices, operand_shape):
        if isinstance(i, int | np.integer):
            i = int(i)
            if wrap and i < 0 and type(d) is int:
                i += d
            out.append(_convert_element_type(i, dtype))
            continue
        aval = get_aval(i)
        if aval.ndim != 0 or not dtypes.issubdtype(aval.dtype, np.integer):
            raise TypeError(
                f"index arguments to dynamic_slice must be integer scalars, got {aval.str_short()}"
            )
        i = _convert_element_type(i, dtype)
        if wrap and not dtypes.issubdtype(dtype, np.unsignedinteger):
            i = _select_n(_lt(i, _convert_element_type(0, dtype)), i, _add(i, _dim_as(d, dtype)))
        out.append(i)
    return out


def _dim_as(d: Any, dtype: Any) -> Any:
    if type(d) is int:
        return _convert_element_type(d, dtype)
    raise NotImplementedError("wrapping a negative run-time index along an axis of symbolic size")


def _check_indices(name: str, operand: ShapedArray, indices: Sequence[ShapedArray]) -> None:
    if len(indices) != operand.ndim:
        raise TypeError(
            f"{name}: the number of start indices ({len(indices)}) must equal the rank of "
            f"the operand ({operand.ndim})."
        )
    for i in indices:
        if i.ndim != 0 or not dtypes.issubdtype(i.dtype, np.integer):
            raise TypeError(f"{name}: start indices must be integer scalars, got {i.str_short()}")
    if len({np.dtype(i.dtype) for i in indices}) > 1:
        raise TypeError(
            f"{name}: start indices must have one dtype, got "
            f"{', '.join(i.dtype.name for i in indices)}"
        )


def _ge(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return a >= b
    return bool(a >= b) if sd.is_symbolic_dim(a) else bool(b <= a)


def _zeros(aval: ShapedArray) -> Any:
    return full(aval.shape, 0, aval.dtype)


# ---------------------------------------------------------------------------
# dynamic_slice

dynamic_slice_p = Primitive("dynamic_slice")


def dynamic_slice(
    operand: Any,
    start_indices: Sequence[Any],
    slice_sizes: Sequence[int],
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """The block of `operand` of shape `slice_sizes` starting at `start_indices`.

    Args:
      operand: an array.
      start_indices: one integer scalar (array or Python int) per axis of
        `operand`. Negative indices count from the end (once); then each start
        is clamped into `[0, operand.shape[i] - slice_sizes[i]]`.
      slice_sizes: the static size of the block along each axis.
      allow_negative_indices: whether negative indices are wrapped (if False
        they are clamped to 0).

    Returns:
      An array of shape `slice_sizes` and the dtype of `operand`.

    Example:
      >>> dynamic_slice(np.arange(5, dtype=np.int32), (np.int32(4),), (2,))
      Array([3, 4], dtype=int32)
    """
    shape = _shape(operand)
    indices = _start_indices(shape, start_indices, wrap=allow_negative_indices)
    sizes = sd.canonicalize_shape(slice_sizes, "dynamic_slice slice_sizes")
    return dynamic_slice_p.bind(operand, *indices, slice_sizes=sizes)


def _dynamic_slice_abstract_eval(operand: ShapedArray, *indices: ShapedArray, slice_sizes: tuple):
    _check_indices("dynamic_slice", operand, indices)
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            "dynamic_slice slice_sizes must have the same length as the operand's rank, got "
            f"slice_sizes {slice_sizes} for operand shape {operand.shape}."
        )
    if not all(_ge(d, s) for d, s in zip(operand.shape, slice_sizes)):
        raise TypeError(
            "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{slice_sizes} for operand shape {operand.shape}."
        )
    if not all(_ge(s, 0) for s in slice_sizes):
        raise TypeError(f"slice slice_sizes must be non-negative, got {slice_sizes}.")
    return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


dynamic_slice_p.def_abstract_eval(_dynamic_slice_abstract_eval)
_impl(dynamic_slice_p)


def _dynamic_slice_lowering(ctx, x, *indices, slice_sizes):
    aval_out = ctx.avals_out[0]
    if not all(type(s) is int for s in slice_sizes):
        raise NotImplementedError("dynamic_slice with symbolic slice sizes")
    return [
        hlo.DynamicSliceOp(
            x, list(indices), list(slice_sizes), results=[mlir.aval_to_ir_type(aval_out)]
        ).result
    ]


mlir.register_lowering(dynamic_slice_p, _dynamic_slice_lowering)


# Autodiff. dynamic_slice is linear in the operand; the indices get no tangent.
# Its transpose writes the cotangent into zeros at the same (clamped) start:
# dynamic_update_slice clamps exactly as dynamic_slice does.


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    operand, *indices = primals
    out = dynamic_slice_p.bind(operand, *indices, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, dynamic_slice_p.bind(t, *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, operand, *indices, slice_sizes):
    assert ad.is_undefined_primal(operand)
    assert not any(ad.is_undefined_primal(i) for i in indices)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)] + [None] * len(indices)
    zeros = _zeros(operand.aval)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


def _unstack(x: Any, axis: int) -> list[Any]:
    n = _shape(x)[axis]
    if type(n) is not int:
        raise NotImplementedError(
            "vmap of a dynamic slice with batched indices over a symbolic size"
        )
    return [squeeze(slice_in_dim(x, k, k + 1, axis=axis), (axis,)) for k in range(n)]


def _stack(xs: Sequence[Any], shape: tuple, dtype: Any) -> Any:
    if not xs:
        return full((0, *shape), 0, dtype)
    return concatenate([expand_dims(x, (0,)) for x in xs], 0)


def _batch_size(args, dims) -> Any:
    return next(_shape(x)[d] for x, d in zip(args, dims) if d is not batching.not_mapped)


def _unbatched_loop(prim, args, dims, params, out_aval_shape, dtype):
    # Batched start indices: one slice per batch element, stacked. Simple and
    # correct; a gather would avoid unrolling over the batch.
    size = _batch_size(args, dims)
    moved = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    per = [_unstack(x, 0) for x in moved]
    outs = [prim.bind(*column, **params) for column in zip(*per)]
    return _stack(outs, out_aval_shape, dtype), 0


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    operand, *indices = args
    op_bd, *idx_bds = dims
    if all(d is batching.not_mapped for d in idx_bds):
        zero = _convert_element_type(0, get_aval(indices[0]).dtype) if indices else None
        new_indices = [*indices[:op_bd], zero, *indices[op_bd:]]
        sizes = (*slice_sizes[:op_bd], _shape(operand)[op_bd], *slice_sizes[op_bd:])
        return dynamic_slice_p.bind(operand, *new_indices, slice_sizes=sizes), op_bd
    dtype = get_aval(operand).dtype
    return _unbatched_loop(
        dynamic_slice_p, args, dims, {"slice_sizes": slice_sizes}, slice_sizes, dtype
    )


ad.primitive_jvps[dynamic_slice_p] = _dynamic_slice_jvp
ad.primitive_transposes[dynamic_slice_p] = _dynamic_slice_transpose
batching.primitive_batchers[dynamic_slice_p] = _dynamic_slice_batch


# ---------------------------------------------------------------------------
# dynamic_update_slice

dynamic_update_slice_p = Primitive("dynamic_update_slice")


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any]) -> Any:
    """`operand` with the block `update` written at `start_indices`.

    Args:
      operand: an array.
      update: an array of the operand's dtype and rank, no larger on any axis.
      start_indices: one integer scalar per axis. Negative indices count from
        the end (once); then each start is clamped so that `update` fits.

    Returns:
      An array of the operand's shape and dtype.

    Example:
      >>> dynamic_update_slice(np.zeros(4, np.int32), np.ones(2, np.int32), (3,))
      Array([0, 0, 1, 1], dtype=int32)
    """
    indices = _start_indices(_shape(operand), start_indices)
    return dynamic_update_slice_p.bind(operand, update, *indices)


def _dynamic_update_slice_abstract_eval(
    operand: ShapedArray, update: ShapedArray, *indices: ShapedArray
) -> ShapedArray:
    _check_indices("dynamic_update_slice", operand, indices)
    if operand.dtype != update.dtype:
        raise TypeError(
            "dynamic_update_slice update must have the same dtype as the operand, got "
            f"{update.dtype.name} and {operand.dtype.name}."
        )
    if update.ndim != operand.ndim:
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got update "
            f"shape {update.shape} for operand shape {operand.shape}."
        )
    if not all(_ge(d, u) for d, u in zip(operand.shape, update.shape)):
        raise TypeError(
            "dynamic_update_slice update shape must be smaller than operand shape, got "
            f"update shape {update.shape} for operand shape {operand.shape}."
        )
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


dynamic_update_slice_p.def_abstract_eval(_dynamic_update_slice_abstract_eval)
_impl(dynamic_update_slice_p)


def _dynamic_update_slice_lowering(ctx, x, update, *indices):
    aval_out = ctx.avals_out[0]
    return [
        hlo.DynamicUpdateSliceOp(
            x, update, list(indices), results=[mlir.aval_to_ir_type(aval_out)]
        ).result
    ]


mlir.register_lowering(dynamic_update_slice_p, _dynamic_update_slice_lowering)


# Autodiff. dynamic_update_slice is linear in (operand, update) together. The
# transpose splits the cotangent: the window goes to the update, the rest (the
# window zeroed) to the operand.


def _dynamic_update_slice_jvp(primals, tangents):
    operand, update, *indices = primals
    t_op, t_up = tangents[:2]
    out = dynamic_update_slice_p.bind(operand, update, *indices)
    if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    if not dtypes.issubdtype(get_aval(out).dtype, np.inexact):
        return out, ad.Zero.from_primal_value(out)
    t_op = ad.instantiate_zeros(t_op)
    t_up = ad.instantiate_zeros(t_up)
    return out, dynamic_update_slice_p.bind(t_op, t_up, *indices)


def _dynamic_update_slice_transpose(ct, operand, update, *indices):
    assert not any(ad.is_undefined_primal(i) for i in indices)
    op_aval = operand.aval if ad.is_undefined_primal(operand) else get_aval(operand)
    up_aval = update.aval if ad.is_undefined_primal(update) else get_aval(update)
    none = [None] * len(indices)
    if type(ct) is ad.Zero:
        return [
            ad.Zero(op_aval) if ad.is_undefined_primal(operand) else None,
            ad.Zero(up_aval) if ad.is_undefined_primal(update) else None,
            *none,
        ]
    ct_op = ct_up = None
    if ad.is_undefined_primal(operand):
        ct_op = dynamic_update_slice_p.bind(ct, _zeros(up_aval), *indices)
    if ad.is_undefined_primal(update):
        ct_up = dynamic_slice_p.bind(ct, *indices, slice_sizes=up_aval.shape)
    return [ct_op, ct_up, *none]


def _dynamic_update_slice_batch(args, dims):
    operand, update, *indices = args
    op_bd, up_bd, *idx_bds = dims
    if all(d is batching.not_mapped for d in idx_bds):
        size = _batch_size(args, dims)
        operand = batching.bdim_at_front(operand, op_bd, size)
        update = batching.bdim_at_front(update, up_bd, size)
        zero = _convert_element_type(0, get_aval(indices[0]).dtype) if indices else None
        if zero is None:
            zero = _convert_element_type(0, np.int32)
        return dynamic_update_slice_p.bind(operand, update, zero, *indices), 0
    aval = get_aval(operand)
    shape = (
        aval.shape if op_bd is batching.not_mapped else aval.shape[:op_bd] + aval.shape[op_bd + 1 :]
    )
    return _unbatched_loop(dynamic_update_slice_p, args, dims, {}, shape, aval.dtype)


ad.primitive_jvps[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.primitive_transposes[dynamic_update_slice_p] = _dynamic_update_slice_transpose
batching.primitive_batchers[dynamic_update_slice_p] = _dynamic_update_slice_batch


# ---------------------------------------------------------------------------
# One-axis helpers


def dynamic_slice_in_dim(
    operand: Any, start_index: Any, slice_size: int, axis: int = 0, *, allow_negative_indices=True
) -> Any:
    """`dynamic_slice` of `slice_size` elements along `axis`, whole along the others."""
    shape = _shape(operand)
    axis = canonicalize_axis(axis, len(shape))
    starts: list[Any] = [0] * len(shape)
    sizes = list(shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True) -> Any:
    """The element at `index` along `axis` (a run-time index), the axis kept or dropped."""
    axis = canonicalize_axis(axis, len(_shape(operand)))
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """The element at the static `index` along `axis` (negative counts from the end)."""
    shape = _shape(operand)
    axis = canonicalize_axis(axis, len(shape))
    index = operator.index(index)
    d = shape[axis]
    wrapped = index + d if index < 0 else index
    if type(d) is int and not 0 <= wrapped < d:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {d}")
    out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int) -> Any:
    """`dynamic_update_slice` with the start `start_index` along `axis` and 0 elsewhere."""
    ndim = len(_shape(operand))
    axis = canonicalize_axis(axis, ndim)
    starts: list[Any] = [0] * ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int) -> Any:
    """Writes `update` (the operand's rank, or one less) at `index` along `axis`."""
    ndim = len(_shape(operand))
    axis = canonicalize_axis(axis, ndim)
    if len(_shape(update)) == ndim - 1:
        update = broadcast_in_dim(
            update,
            (*_shape(update)[:axis], 1, *_shape(update)[axis:]),
            tuple(i for i in range(ndim) if i != axis),
        )
    return dynamic_update_slice_in_dim(operand, update, index, axis)
