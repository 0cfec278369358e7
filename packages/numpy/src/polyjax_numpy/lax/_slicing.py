"""Indexing primitives: slices at run-time positions, gathers and scatters.

    dynamic_slice         f32[10], i32[] -> f32[3]          (start known only at run time)
    dynamic_update_slice  f32[10], f32[3], i32[] -> f32[10] (writes a block at a start)
    gather                f32[3,4], i32[5,1] -> f32[5,4]    (one slice per index vector)
    scatter(-add/-sub/-mul/-min/-max)
                          f32[3,4], i32[5,1], f32[5,4] -> f32[3,4]

Start indices are scalars, one per operand axis. As in XLA (and JAX), they are
*clamped* so that the whole slice stays inside the operand: a start of 9 for a
slice of size 3 along an axis of size 10 reads elements 7, 8, 9. The functions
(not the primitives) first wrap negative Python-style indices once, by adding
the axis size.

The `*_in_dim` helpers act along one axis and are built on the primitives.

`gather` and the scatters take XLA's dimension numbers (the index vector is
always the last axis of the indices) and a `GatherScatterMode` for windows that
leave the operand: CLIP clamps them (XLA's gather does so natively; a CLIP
scatter clamps its indices first), FILL_OR_DROP returns a fill value from a
gather (a mask over the clamped gather) and drops such scatter updates (XLA's
scatter does so natively). `gather`'s `mode=None` is PROMISE_IN_BOUNDS, the
scatters' FILL_OR_DROP (as in JAX); neither wraps negative indices. Derivatives
pair them: gather's transpose is a scatter-add, scatter-add's a gather. vmap
turns batched operands and indices into the batching dimensions of the
dimension numbers; a batching axis is sliced with size 1, or 0 when the batch
is empty (gather accepts either on any batching axis, as JAX does).
"""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._dim_value import dim_as_value
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._elementwise import add as _add
from polyjax_numpy.lax._elementwise import bitwise_and as _bitwise_and
from polyjax_numpy.lax._elementwise import clamp as _clamp
from polyjax_numpy.lax._elementwise import div as _div
from polyjax_numpy.lax._elementwise import eq as _eq_op
from polyjax_numpy.lax._elementwise import ge as _ge_op
from polyjax_numpy.lax._elementwise import le as _le_op
from polyjax_numpy.lax._elementwise import lt as _lt
from polyjax_numpy.lax._elementwise import min_max_hlo as _min_max_hlo
from polyjax_numpy.lax._elementwise import mul as _mul
from polyjax_numpy.lax._elementwise import ne as _ne_op
from polyjax_numpy.lax._elementwise import neg as _neg
from polyjax_numpy.lax._elementwise import rem as _rem
from polyjax_numpy.lax._elementwise import select_n as _select_n
from polyjax_numpy.lax._reductions import reduce_min as _reduce_min
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    canonicalize_axis,
    concatenate,
    full,
    slice_in_dim,
    squeeze,
)

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "gather_p",
    "scatter",
    "scatter_add",
    "scatter_add_p",
    "scatter_apply",
    "scatter_max",
    "scatter_max_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_p",
    "scatter_sub",
    "scatter_sub_p",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "index_in_dim",
    "index_take",
    "slice_in_dim",
]


# ---------------------------------------------------------------------------
# Shared helpers


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


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
            if wrap and i < 0:
                if type(d) is not int:  # the wrapped index is known only at run time
                    out.append(_dim_as(d + i, dtype))
                    continue
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
    """The axis size `d` as a scalar of `dtype` (a symbolic size is computed at run time)."""
    return _convert_element_type(dim_as_value(d), dtype)


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


def _dynamic_slice_lowering(ctx, x, *indices, slice_sizes):
    aval_out = ctx.avals_out[0]
    if not all(type(s) is int for s in slice_sizes):
        return [_real_dynamic_slice(ctx, x, indices, slice_sizes)]
    return [
        hlo.DynamicSliceOp(
            x, list(indices), list(slice_sizes), results=[mlir.aval_to_ir_type(aval_out)]
        ).result
    ]


def _real_dynamic_slice(ctx, x, indices, slice_sizes) -> ir.Value:
    """dynamic_slice with symbolic slice sizes: `real_dynamic_slice` from clamped starts.

    The starts are clamped to `[0, operand size - slice size]` as dynamic_slice's
    are; `limit = start + size` is the form shape refinement turns back into a
    static `dynamic_slice` once the sizes are known.
    """
    i32 = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    starts = [
        hlo.reshape(i32, hlo.convert(ir.RankedTensorType.get([], i32.element_type), i))
        for i in indices
    ]
    start = starts[0] if len(starts) == 1 else hlo.concatenate(starts, 0)
    sizes = mlir.shape_tensor(ctx, slice_sizes)
    room = hlo.subtract(mlir.shape_tensor(ctx, ctx.avals_in[0].shape), sizes)
    zero = mlir.ir_constant(np.zeros(len(slice_sizes), np.int32))
    start = hlo.clamp(zero, start, room)
    ones = mlir.ir_constant(np.ones(len(slice_sizes), np.int32))
    result_type = mlir.aval_to_ir_type(ctx.avals_out[0])
    return hlo.RealDynamicSliceOp(result_type, x, start, hlo.add(start, sizes), ones).result


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


def _batching_slice_size(size: Any) -> int:
    """The slice size along a batching axis of length `size`: 1, or 0 for an empty batch."""
    return 0 if sd.definitely_equal(size, 0) else 1


def _batch_size(args, dims) -> Any:
    return next(_shape(x)[d] for x, d in zip(args, dims) if d is not batching.not_mapped)


def _index_vectors(indices, dims, size) -> Any:
    """Batched scalar start indices stacked into `[batch, n]` index vectors."""
    cols = [
        broadcast_in_dim(batching.bdim_at_front(i, d, size), (size, 1), (0,))
        for i, d in zip(indices, dims)
    ]
    return concatenate(cols, 1)


def _zero_index(indices) -> Any:
    dtype = get_aval(indices[0]).dtype if indices else np.int32
    return _convert_element_type(0, dtype)


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    operand, *indices = args
    op_bd, *idx_bds = dims
    if all(d is batching.not_mapped for d in idx_bds):
        zero = _zero_index(indices)
        new_indices = [*indices[:op_bd], zero, *indices[op_bd:]]
        sizes = (*slice_sizes[:op_bd], _shape(operand)[op_bd], *slice_sizes[op_bd:])
        return dynamic_slice_p.bind(operand, *new_indices, slice_sizes=sizes), op_bd
    # Batched starts: a gather of one clamped window per batch element.
    size = _batch_size(args, dims)
    vecs = _index_vectors(indices, idx_bds, size)
    n = len(slice_sizes)
    window = tuple(range(1, n + 1))
    if op_bd is batching.not_mapped:
        dn = GatherDimensionNumbers(window, (), tuple(range(n)))
        sizes = tuple(slice_sizes)
    else:
        operand = batching.moveaxis(operand, op_bd, 0)
        dn = GatherDimensionNumbers(window, (), window, (0,), (0,))
        sizes = (_batching_slice_size(size), *slice_sizes)
    out = gather(operand, vecs, dn, sizes, mode=GatherScatterMode.CLIP, indices_are_sorted=True)
    return out, 0


define_rules(
    dynamic_slice_p,
    _dynamic_slice_abstract_eval,
    _dynamic_slice_lowering,
    jvp=_dynamic_slice_jvp,
    transpose=_dynamic_slice_transpose,
    batching=_dynamic_slice_batch,
)


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


def _dynamic_update_slice_lowering(ctx, x, update, *indices):
    aval_out = ctx.avals_out[0]
    return [
        hlo.DynamicUpdateSliceOp(
            x, update, list(indices), results=[mlir.aval_to_ir_type(aval_out)]
        ).result
    ]


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
        zero = _zero_index(indices)
        return dynamic_update_slice_p.bind(operand, update, zero, *indices), 0
    # Batched starts: a scatter of one clamped window per batch element (the
    # batch axes of operand and indices paired, so windows never overlap).
    size = _batch_size(args, dims)
    vecs = _index_vectors(indices, idx_bds, size)
    operand = batching.bdim_at_front(operand, op_bd, size)
    update = batching.bdim_at_front(update, up_bd, size)
    window = tuple(range(1, len(indices) + 1))
    dn = ScatterDimensionNumbers(window, (), window, (0,), (0,))
    out = scatter(
        operand,
        vecs,
        update,
        dn,
        mode=GatherScatterMode.CLIP,
        unique_indices=True,
        indices_are_sorted=True,
    )
    return out, 0


define_rules(
    dynamic_update_slice_p,
    _dynamic_update_slice_abstract_eval,
    _dynamic_update_slice_lowering,
    jvp=_dynamic_update_slice_jvp,
    transpose=_dynamic_update_slice_transpose,
    batching=_dynamic_update_slice_batch,
)


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


# ---------------------------------------------------------------------------
# gather


class GatherScatterMode(enum.Enum):
    """How `gather` and `scatter` treat indices whose window leaves the operand.

    CLIP: starts are clamped so that the window fits (as `dynamic_slice`).
    FILL_OR_DROP: a gather returns `fill_value` for such a window; a scatter
      drops such an update.
    PROMISE_IN_BOUNDS: the caller promises all windows are in bounds (a gather
      then clamps, as XLA does; a scatter's out-of-bounds updates are dropped).
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """Parses `"clip"`, `"fill"` (or `"drop"`), `"promise_in_bounds"`; None is fill."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


class GatherDimensionNumbers(NamedTuple):
    """Describes a `gather` (the index vector is the last axis of the indices).

    Attributes:
      offset_dims: the output axes that hold the slice's axes (sorted).
      collapsed_slice_dims: operand axes sliced with size 1 and dropped.
      start_index_map: for each index component, the operand axis it starts.
      operand_batching_dims: operand axes that pair with
        `start_indices_batching_dims` (sliced with size 1 and dropped).
      start_indices_batching_dims: the indices' axes paired with them.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """Describes a `scatter` (the index vector is the last axis of the indices).

    Attributes:
      update_window_dims: the axes of `updates` that are window axes (sorted).
      inserted_window_dims: operand axes the window has size 1 in (not in updates).
      scatter_dims_to_operand_dims: for each index component, its operand axis.
      operand_batching_dims: operand axes paired with `scatter_indices_batching_dims`.
      scatter_indices_batching_dims: the indices' axes paired with them.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


def _tuple_fields(nt: Any) -> Any:
    return type(nt)(*(tuple(operator.index(i) for i in f) for f in nt))


def _default_fill(dtype: Any) -> Any:
    if isinstance(dtype, dtypes.ExtendedDType):
        return None  # extended arrays fill with their data's default (see _extended)
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if dtype == np.dtype(bool):
        return True
    info = dtypes.iinfo(dtype)
    return info.min if dtypes.issubdtype(dtype, np.signedinteger) else info.max


gather_p = Primitive("gather")


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value: Any = None,
) -> Any:
    """Slices of `operand` of shape `slice_sizes` at the starts in `start_indices`.

    Args:
      operand: an array.
      start_indices: an integer array whose last axis is the index vector.
      dimension_numbers: a `GatherDimensionNumbers`.
      slice_sizes: the size of the slice along each operand axis.
      unique_indices, indices_are_sorted: promises passed on to XLA.
      mode: a `GatherScatterMode` or one of "clip", "fill" (or "drop"),
        "promise_in_bounds". None is "promise_in_bounds" (as in JAX; unlike
        the scatters, whose None is "fill"). Indices are never wrapped: a
        negative start is out of bounds.
      fill_value: the value of out-of-bounds slices in "fill" mode (default:
        NaN for inexact types, the minimum of signed, the maximum of unsigned
        integers, True for bools); ignored in the other modes.

    Returns:
      The gathered array: the batch axes of the indices interleaved with the
      slice's `offset_dims`.

    Example:
      >>> dn = GatherDimensionNumbers((), (0,), (0,))
      >>> gather(np.float32([1, 2, 3]), np.int32([[2], [0]]), dn, (1,))
      Array([3., 1.], dtype=float32)
    """
    dnums = _tuple_fields(dimension_numbers)
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    dtype = get_aval(operand).dtype
    if mode is GatherScatterMode.FILL_OR_DROP:
        fill_value = _default_fill(dtype) if fill_value is None else fill_value
        fill_value = None if fill_value is None else _python_scalar(fill_value, dtype)
    else:
        fill_value = None
    return gather_p.bind(
        operand,
        start_indices,
        dimension_numbers=dnums,
        slice_sizes=sd.canonicalize_shape(slice_sizes, "gather slice_sizes"),
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=mode,
        fill_value=fill_value,
    )


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """Points of `src`: entry ``n`` takes ``src[..., idxs[0][n], ..., idxs[1][n], ...]``
    with ``idxs[j]`` indexing axis ``axes[j]`` (the other axes are kept whole).

    Indices wrap around their axis (``-1`` is the last entry), as with a
    floor modulo by the axis size.

    Args:
      src: an array.
      idxs: one 1-D integer array (all of one length ``N``) per axis in `axes`.
      axes: distinct axes of `src`.

    Returns:
      An array of shape ``(N, *kept)``, where `kept` lists the sizes of the axes of
      `src` not in `axes`, in order.

    Raises:
      ValueError: if `idxs` and `axes` differ in length or an index array is not 1-D.

    Example:
      >>> x = np.arange(12, dtype=np.float32).reshape(3, 4)
      >>> index_take(x, (np.int32([2, -1]),), (0,)).shape
      (2, 4)
    """
    idxs, axes = tuple(idxs), tuple(operator.index(a) for a in axes)
    shape = get_aval(src).shape
    if len(idxs) != len(axes) or not idxs:
        raise ValueError(
            f"index_take needs one index array per axis, got {len(idxs)} index arrays for "
            f"axes {axes}"
        )
    if any(get_aval(i).ndim != 1 for i in idxs):
        raise ValueError(
            "index_take index arrays must be 1-D, got shapes "
            f"{[tuple(get_aval(i).shape) for i in idxs]}"
        )
    dtype = _index_dtype(idxs)
    columns = []
    for i, ax in zip(idxs, axes):
        n = _dim_as(shape[ax], dtype)
        r = _rem(_convert_element_type(i, dtype), n)
        columns.append(_select_n(_lt(r, _convert_element_type(0, dtype)), r, _add(r, n)))
    indices = concatenate([broadcast_in_dim(c, (*get_aval(c).shape, 1), (0,)) for c in columns], 1)
    slice_sizes = [1 if d in axes else size for d, size in enumerate(shape)]
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
        collapsed_slice_dims=tuple(sorted(axes)),
        start_index_map=axes,
    )
    return gather(src, indices, dnums, slice_sizes, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


def _python_scalar(value: Any, dtype: Any) -> Any:
    """`value` as a hashable Python scalar of `dtype`'s kind (a primitive parameter)."""
    if np.ndim(value) != 0:
        raise TypeError(f"fill_value must be a scalar, got shape {np.shape(value)}")
    if dtypes.issubdtype(dtype, np.complexfloating):
        return complex(value)
    if dtypes.issubdtype(dtype, np.floating):
        return float(value)
    if np.dtype(dtype) == np.dtype(bool):
        return bool(value)
    return int(value)


def _sorted_unique(name: str, what: str, dims: Sequence[int], rank: int) -> None:
    if tuple(dims) != tuple(sorted(set(dims))):
        raise TypeError(
            f"{name} {what} in dimension numbers must be sorted and unique; got {dims}."
        )
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(f"{name} {what} in dimension numbers out of bounds; got {dims}.")


def _gather_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    *,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: tuple,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    fill_value: Any,
) -> ShapedArray:
    dn = dimension_numbers
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"gather indices must be of integer type, got {indices.dtype.name}.")
    if indices.ndim < 1:
        raise TypeError("gather indices must have at least one axis (the index vector).")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(
            f"gather slice_sizes must have the same length as the operand's rank; got "
            f"slice_sizes {slice_sizes} for operand shape {operand.shape}."
        )
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(
            "gather start_index_map must have as many entries as the index vector; got "
            f"start_index_map {dn.start_index_map} for indices shape {indices.shape}."
        )
    batch_rank = indices.ndim - 1
    out_rank = batch_rank + len(dn.offset_dims)
    _sorted_unique("gather", "offset_dims", dn.offset_dims, out_rank)
    _sorted_unique("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim)
    _sorted_unique("gather", "operand_batching_dims", dn.operand_batching_dims, operand.ndim)
    for d in dn.start_index_map:
        if not 0 <= d < operand.ndim:
            raise TypeError(f"gather start_index_map out of bounds: {dn.start_index_map}.")
    if len(set(dn.start_index_map)) != len(dn.start_index_map):
        raise TypeError(f"gather start_index_map must be unique; got {dn.start_index_map}.")
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise TypeError("gather collapsed_slice_dims and operand_batching_dims must be disjoint.")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise TypeError(
            "gather operand_batching_dims and start_indices_batching_dims must have the same "
            "length."
        )
    for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
        if not 0 <= idd < batch_rank:
            raise TypeError(
                "gather start_indices_batching_dims out of bounds: "
                f"{dn.start_indices_batching_dims}."
            )
        if not sd.definitely_equal(operand.shape[od], indices.shape[idd]):
            raise TypeError(
                "gather operand_batching_dims and start_indices_batching_dims must have the "
                f"same sizes; got operand shape {operand.shape}, indices shape {indices.shape}."
            )
    for d, (s, n) in enumerate(zip(slice_sizes, operand.shape)):
        if d in dn.operand_batching_dims:
            # A batching axis is indexed by its position, never sliced: its size is
            # 0 or 1 whatever the axis' length (vmap over an empty batch gives 1
            # on an axis of length 0, as in JAX; the lowering clamps it).
            if s not in (0, 1):
                raise TypeError(
                    f"gather slice_sizes of operand_batching_dims must be 0 or 1; got "
                    f"slice_sizes {slice_sizes} for operand_batching_dims "
                    f"{dn.operand_batching_dims}."
                )
            continue
        if not (_ge(s, 0) and _ge(n, s)):
            raise TypeError(
                f"gather slice_sizes must be in [0, operand size]; got slice_sizes {slice_sizes} "
                f"for operand shape {operand.shape}."
            )
        if d in dn.collapsed_slice_dims and not _ge(1, s):
            raise TypeError(
                f"gather slice_sizes of collapsed dimensions must be at most 1; got "
                f"slice_sizes {slice_sizes}."
            )
    window = [
        s
        for d, s in enumerate(slice_sizes)
        if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims
    ]
    if len(window) != len(dn.offset_dims):
        raise TypeError(
            "gather offset_dims must have one entry per operand axis that is neither collapsed "
            f"nor batching; got offset_dims {dn.offset_dims} and slice_sizes {slice_sizes}."
        )
    batch_shape = iter(indices.shape[:-1])
    window_it = iter(window)
    out = tuple(
        next(window_it) if i in dn.offset_dims else next(batch_shape) for i in range(out_rank)
    )
    return ShapedArray(out, operand.dtype, operand.weak_type)


def _gather_hlo(ctx, x, indices, dn, slice_sizes, indices_are_sorted, aval_out):
    # StableHLO bounds every slice size by the axis length, batching axes too.
    shape = ctx.avals_in[0].shape
    slice_sizes = [
        0 if d in dn.operand_batching_dims and sd.definitely_equal(shape[d], 0) else s
        for d, s in enumerate(slice_sizes)
    ]
    attr = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims),
        collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map),
        index_vector_dim=len(ctx.avals_in[1].shape) - 1,
    )
    if not all(type(s) is int for s in slice_sizes):
        # Symbolic window sizes are an operand; shape refinement makes it a static gather.
        return hlo.DynamicGatherOp(
            x,
            indices,
            mlir.shape_tensor(ctx, slice_sizes),
            attr,
            indices_are_sorted=indices_are_sorted,
            results=[mlir.aval_to_ir_type(aval_out)],
        ).result
    return hlo.GatherOp(
        x,
        indices,
        attr,
        list(slice_sizes),
        indices_are_sorted=indices_are_sorted,
        results=[mlir.aval_to_ir_type(aval_out)],
    ).result


def _in_bounds_mask(indices: Any, bounds: Sequence[Any]) -> Any:
    """Whether each index vector (last axis) lies in `[0, bounds[k]]` componentwise."""
    idx_aval = get_aval(indices)
    batch_shape = idx_aval.shape[:-1]
    if not bounds:
        return full(batch_shape, True, np.bool_)
    dtype = idx_aval.dtype
    if np.dtype(dtype).itemsize < 4:
        dtype = np.dtype(np.int32) if dtypes.issubdtype(dtype, np.signedinteger) else np.uint32
        indices = _convert_element_type(indices, dtype)
    upper = _bounds_vector(bounds, dtype, idx_aval.shape)
    ok = _bitwise_and(_ge_op(indices, _convert_element_type(0, dtype)), _le_op(indices, upper))
    ok = _convert_element_type(ok, np.int32)
    return _ne_op(_reduce_min(ok, (idx_aval.ndim - 1,)), _convert_element_type(0, np.int32))


def _bounds_vector(bounds: Sequence[Any], dtype: Any, shape: tuple) -> Any:
    """`bounds` (ints or symbolic sizes) along the last axis of an array of `shape`."""
    if all(type(v) is int for v in bounds):
        vec = np.asarray(bounds, dtype)
    else:
        vec = concatenate([broadcast_in_dim(_dim_as(v, dtype), (1,), ()) for v in bounds], 0)
    return broadcast_in_dim(vec, shape, (len(shape) - 1,))


def _gather_lowering(
    ctx,
    x,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    # XLA's gather clamps out-of-bounds starts, which is CLIP (and is allowed for
    # PROMISE_IN_BOUNDS); FILL_OR_DROP masks the clamped result.
    if mode is not GatherScatterMode.FILL_OR_DROP:
        return [
            _gather_hlo(
                ctx,
                x,
                indices,
                dimension_numbers,
                slice_sizes,
                indices_are_sorted,
                ctx.avals_out[0],
            )
        ]
    return _gather_fill_lowering(
        ctx,
        x,
        indices,
        dimension_numbers=dimension_numbers,
        slice_sizes=slice_sizes,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        fill_value=fill_value,
    )


def _gather_fill(
    operand,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    fill_value,
):
    dn = dimension_numbers
    shape = get_aval(operand).shape
    bounds = [shape[d] - slice_sizes[d] for d in dn.start_index_map]
    mask = _in_bounds_mask(indices, bounds)
    out = gather_p.bind(
        operand,
        indices,
        dimension_numbers=dn,
        slice_sizes=slice_sizes,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=GatherScatterMode.CLIP,
        fill_value=None,
    )
    out_shape = get_aval(out).shape
    batch_positions = tuple(i for i in range(len(out_shape)) if i not in dn.offset_dims)
    mask = broadcast_in_dim(mask, out_shape, batch_positions)
    fill = full(out_shape, fill_value, get_aval(operand).dtype)
    return _select_n(mask, fill, out)


_gather_fill_lowering = mlir.lower_fun(_gather_fill, multiple_results=False)


# Autodiff. gather is linear in the operand (out-of-bounds slices in fill mode
# have a zero tangent). Its transpose adds the cotangent's slices back into zeros
# of the operand's shape, with the matching scatter_add (same mode: clipped
# starts land where they were read from; dropped ones contribute nothing).


def _gather_params_for_tangent(params: dict) -> dict:
    if params["mode"] is GatherScatterMode.FILL_OR_DROP:
        return {**params, "fill_value": 0}
    return params


def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    out = gather_p.bind(operand, indices, **params)
    t = tangents[0]
    if type(t) is ad.Zero or not dtypes.issubdtype(get_aval(out).dtype, np.inexact):
        return out, ad.Zero.from_primal_value(out)
    return out, gather_p.bind(t, indices, **_gather_params_for_tangent(params))


def _gather_transpose(
    ct,
    operand,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    indices_are_sorted,
    unique_indices,
    mode,
    fill_value,
):
    assert ad.is_undefined_primal(operand) and not ad.is_undefined_primal(indices)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    dn = dimension_numbers
    sdn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )
    zeros = _zeros(operand.aval)
    out = scatter_add_p.bind(
        zeros,
        indices,
        ct,
        dimension_numbers=sdn,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
        update_jaxpr=None,
        update_consts=(),
    )
    return [out, None]


def _shift(dims: Sequence[int], by: int = 1) -> tuple[int, ...]:
    return tuple(d + by for d in dims)


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, **params):
    operand, indices = args
    op_bd, idx_bd = dims
    dn = dimension_numbers
    if idx_bd is batching.not_mapped:
        # The batch axis becomes a leading window axis of every slice.
        operand = batching.moveaxis(operand, op_bd, 0)
        new_dn = GatherDimensionNumbers(
            offset_dims=(0, *_shift(dn.offset_dims)),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        sizes = (_shape(operand)[0], *slice_sizes)
        out = gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes, **params)
        return out, 0
    indices = batching.moveaxis(indices, idx_bd, 0)
    if op_bd is batching.not_mapped:
        # A new leading batch axis of the indices: a new leading output axis.
        new_dn = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims),
        )
        out = gather_p.bind(
            operand, indices, dimension_numbers=new_dn, slice_sizes=slice_sizes, **params
        )
        return out, 0
    # Both batched: pair the two batch axes as batching dimensions.
    operand = batching.moveaxis(operand, op_bd, 0)
    new_dn = GatherDimensionNumbers(
        offset_dims=_shift(dn.offset_dims),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
        start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)),
    )
    sizes = (_batching_slice_size(_shape(operand)[0]), *slice_sizes)
    out = gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes, **params)
    return out, 0


define_rules(
    gather_p,
    _gather_abstract_eval,
    _gather_lowering,
    jvp=_gather_jvp,
    transpose=_gather_transpose,
    batching=_gather_batch,
)


# ---------------------------------------------------------------------------
# scatter, scatter_add, scatter_mul, scatter_min, scatter_max, scatter_apply
#
# One primitive per way of combining an update with the operand's element. The
# parameters follow JAX: `update_jaxpr`/`update_consts` carry a user combiner
# (`scatter_apply`); they are None/() for the named kinds.


def _scatter_abstract_eval(
    operand: ShapedArray,
    indices: ShapedArray,
    updates: ShapedArray,
    *,
    dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: bool,
    unique_indices: bool,
    mode: GatherScatterMode,
    update_jaxpr: Any,
    update_consts: Any,
) -> ShapedArray:
    dn = dimension_numbers
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"scatter indices must be of integer type, got {indices.dtype.name}.")
    if indices.ndim < 1:
        raise TypeError("scatter indices must have at least one axis (the index vector).")
    if operand.dtype != updates.dtype:
        raise TypeError(
            "scatter operand and updates must have the same dtype, got "
            f"{operand.dtype.name} and {updates.dtype.name}."
        )
    _sorted_unique("scatter", "update_window_dims", dn.update_window_dims, updates.ndim)
    _sorted_unique("scatter", "inserted_window_dims", dn.inserted_window_dims, operand.ndim)
    _sorted_unique("scatter", "operand_batching_dims", dn.operand_batching_dims, operand.ndim)
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(
            "scatter scatter_dims_to_operand_dims must have as many entries as the index "
            f"vector; got {dn.scatter_dims_to_operand_dims} for indices shape {indices.shape}."
        )
    for d in dn.scatter_dims_to_operand_dims:
        if not 0 <= d < operand.ndim or d in dn.operand_batching_dims:
            raise TypeError(
                "scatter scatter_dims_to_operand_dims must be operand axes that are not "
                f"batching axes; got {dn.scatter_dims_to_operand_dims}."
            )
    if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise TypeError(
            "scatter operand_batching_dims and scatter_indices_batching_dims must have the "
            "same length."
        )
    n_window = operand.ndim - len(dn.inserted_window_dims) - len(dn.operand_batching_dims)
    if len(dn.update_window_dims) != n_window:
        raise TypeError(
            "scatter update_window_dims must have one entry per operand axis that is neither "
            f"inserted nor batching; got {dn.update_window_dims} for operand shape "
            f"{operand.shape}."
        )
    scatter_shape = tuple(d for i, d in enumerate(updates.shape) if i not in dn.update_window_dims)
    if not sd.definitely_equal_shape(scatter_shape, indices.shape[:-1]):
        raise TypeError(
            "scatter updates' scatter axes must match the indices' batch axes; got updates "
            f"shape {updates.shape} and indices shape {indices.shape}."
        )
    window_operand_dims = [
        d
        for d in range(operand.ndim)
        if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims
    ]
    for ud, od in zip(dn.update_window_dims, window_operand_dims):
        if not _ge(operand.shape[od], updates.shape[ud]):
            raise TypeError(
                "scatter update window is larger than the operand; got updates shape "
                f"{updates.shape} for operand shape {operand.shape}."
            )
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_window_sizes(operand_shape, updates_shape, dn) -> list[Any]:
    """The window's size along each operand axis (1 on inserted and batching axes)."""
    sizes = []
    it = iter(dn.update_window_dims)
    for d in range(len(operand_shape)):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(updates_shape[next(it)])
    return sizes


def _scalar_ir_type(dtype: Any):
    from jaxlib.mlir import ir

    return ir.RankedTensorType.get([], mlir.dtype_to_ir_type(dtype))


def _combiner_hlo(kind: str, dtype: Any):
    def combine(x, y):
        if kind == "add":
            return hlo.add(x, y) if dtype != np.dtype(bool) else hlo.or_(x, y)
        if kind == "sub":
            return hlo.subtract(x, y)
        if kind == "mul":
            return hlo.multiply(x, y) if dtype != np.dtype(bool) else hlo.and_(x, y)
        if kind in ("min", "max"):
            return _min_max_hlo(kind, x, y, dtype)
        return y  # replace

    return combine


def _scatter_hlo(ctx, kind, operand, indices, updates, params):
    from jaxlib.mlir import ir

    dn = params["dimension_numbers"]
    aval_out = ctx.avals_out[0]
    attr = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=len(ctx.avals_in[1].shape) - 1,
    )
    op = hlo.ScatterOp(
        [mlir.aval_to_ir_type(aval_out)],
        [operand],
        indices,
        [updates],
        attr,
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
    )
    scalar = _scalar_ir_type(aval_out.dtype)
    block = op.update_computation.blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        x, y = block.arguments
        if params["update_jaxpr"] is not None:
            jaxpr = params["update_jaxpr"]
            (out,) = mlir.jaxpr_subcomp(
                ctx.module_context, jaxpr.jaxpr, jaxpr.consts, [x, y], ctx.dim_var_values
            )
        else:
            out = _combiner_hlo(kind, np.dtype(aval_out.dtype))(x, y)
        hlo.ReturnOp([out])
    return op.result


def _clamp_scatter_indices(operand, indices, updates, dn):
    """Indices clamped so that every window fits in the operand (CLIP mode)."""
    idx_aval = get_aval(indices)
    sizes = _scatter_window_sizes(_shape(operand), _shape(updates), dn)
    shape = _shape(operand)
    upper = [shape[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims]
    if not upper:
        return indices
    dtype = idx_aval.dtype
    if np.dtype(dtype).itemsize < 4:  # bounds may not fit a narrow index type
        dtype = np.dtype(np.int32)
        indices = _convert_element_type(indices, dtype)
    upper_b = _bounds_vector(upper, dtype, idx_aval.shape)
    lower_b = full(idx_aval.shape, 0, dtype)
    return _clamp(lower_b, indices, upper_b)


def _scatter_batch(prim, args, dims, *, dimension_numbers, **params):
    # All three to the front (broadcasting the unmapped ones), then the batch
    # axes of operand and indices become a pair of batching dimensions.
    size = _batch_size(args, dims)
    operand, indices, updates = (batching.bdim_at_front(x, d, size) for x, d in zip(args, dims))
    dn = dimension_numbers
    new_dn = ScatterDimensionNumbers(
        update_window_dims=_shift(dn.update_window_dims),
        inserted_window_dims=_shift(dn.inserted_window_dims),
        scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
        scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
    )
    return prim.bind(operand, indices, updates, dimension_numbers=new_dn, **params), 0


# Autodiff of the scatters. The helpers below read the window back out of an
# operand-shaped value with the gather matching a scatter.


def _gather_of_scatter(x, indices, updates_shape, params, fill_value=0):
    """The gather reading, at each update element, the operand element it lands on."""
    dn = params["dimension_numbers"]
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
    mode = params["mode"]
    return gather_p.bind(
        x,
        indices,
        dimension_numbers=gdn,
        slice_sizes=tuple(_scatter_window_sizes(_shape(x), updates_shape, dn)),
        indices_are_sorted=params["indices_are_sorted"],
        unique_indices=params["unique_indices"],
        mode=mode,
        fill_value=fill_value if mode is GatherScatterMode.FILL_OR_DROP else None,
    )


def _is_float(x: Any) -> bool:
    return dtypes.issubdtype(get_aval(x).dtype, np.inexact)


def _no_apply(params: dict) -> None:
    if params["update_jaxpr"] is not None:
        raise NotImplementedError("differentiation of scatter_apply is not implemented")


# scatter_add and scatter_sub are linear in the operand and the updates together.


def _scatter_additive_jvp(prim, primals, tangents, **params):
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    out = prim.bind(operand, indices, updates, **params)
    if (type(t_op) is ad.Zero and type(t_up) is ad.Zero) or not _is_float(out):
        return out, ad.Zero.from_primal_value(out)
    t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
    return out, prim.bind(t_op, indices, t_up, **params)


def _scatter_additive_transpose(prim, ct, operand, indices, updates, **params):
    assert not ad.is_undefined_primal(indices)
    up_aval = updates.aval if ad.is_undefined_primal(updates) else get_aval(updates)
    if type(ct) is ad.Zero:
        return [
            ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None,
            None,
            ad.Zero(up_aval) if ad.is_undefined_primal(updates) else None,
        ]
    ct_op = ct if ad.is_undefined_primal(operand) else None
    ct_up = None
    if ad.is_undefined_primal(updates):
        ct_up = _gather_of_scatter(ct, indices, up_aval.shape, params)
        if prim is scatter_sub_p:
            ct_up = _neg(ct_up)
    return [ct_op, None, ct_up]


def _scatter_mul_jvp(primals, tangents, **params):
    _no_apply(params)
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    if (type(t_op) is ad.Zero and type(t_up) is ad.Zero) or not _is_float(out):
        return out, ad.Zero.from_primal_value(out)
    terms = []
    if type(t_op) is not ad.Zero:
        terms.append(scatter_mul_p.bind(t_op, indices, updates, **params))
    if type(t_up) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients with respect to updates are only implemented if "
                "`unique_indices=True`"
            )
        placed = scatter_add_p.bind(_zeros(get_aval(operand)), indices, t_up, **params)
        terms.append(_mul(operand, placed))
    return out, terms[0] if len(terms) == 1 else _add(*terms)


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if ad.is_undefined_primal(updates):
        raise NotImplementedError("scatter_mul is not linear in its updates")
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None, None]
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


def _scatter_extremal_jvp(prim, primals, tangents, **params):
    # The tangent at a position is the average of the tangents of the values
    # (operand element and updates landing there) equal to the result.
    _no_apply(params)
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    out = prim.bind(operand, indices, updates, **params)
    if (type(t_op) is ad.Zero and type(t_up) is ad.Zero) or not _is_float(out):
        return out, ad.Zero.from_primal_value(out)
    t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
    dtype = get_aval(out).dtype
    add_params = {**params, "update_jaxpr": None, "update_consts": ()}
    op_hit = _eq_op(out, operand)
    up_hit = _eq_op(_gather_of_scatter(out, indices, _shape(updates), params), updates)
    zeros_op, zeros_up = _zeros(get_aval(operand)), _zeros(get_aval(updates))
    count = _add(
        _convert_element_type(op_hit, dtype),
        scatter_add_p.bind(zeros_op, indices, _convert_element_type(up_hit, dtype), **add_params),
    )
    total = _add(
        _select_n(op_hit, zeros_op, t_op),
        scatter_add_p.bind(zeros_op, indices, _select_n(up_hit, zeros_up, t_up), **add_params),
    )
    return out, _div(total, count)


def _scatter_jvp(primals, tangents, **params):
    _no_apply(params)
    operand, indices, updates = primals
    t_op, _, t_up = tangents
    out = scatter_p.bind(operand, indices, updates, **params)
    if (type(t_op) is ad.Zero and type(t_up) is ad.Zero) or not _is_float(out):
        return out, ad.Zero.from_primal_value(out)
    t_op, t_up = ad.instantiate_zeros(t_op), ad.instantiate_zeros(t_up)
    if params["unique_indices"]:
        return out, scatter_p.bind(t_op, indices, t_up, **params)
    # Repeated indices: find which update element won each position by
    # scattering ids (1, 2, ...; 0 means "kept the operand"), then add only the
    # winners' tangents.
    up_shape = _shape(updates)
    dn = params["dimension_numbers"]
    scatter_axes = tuple(i for i in range(len(up_shape)) if i not in dn.update_window_dims)
    n = int(np.prod([up_shape[i] for i in scatter_axes], dtype=np.int64))
    ids_shape = tuple(up_shape[i] for i in scatter_axes)
    ids = _reshape_ids(n, ids_shape)
    ids = broadcast_in_dim(ids, up_shape, scatter_axes)
    i32 = np.dtype(np.int32)
    scattered = scatter_p.bind(full(_shape(operand), 0, i32), indices, ids, **params)
    won = _eq_op(_gather_of_scatter(scattered, indices, up_shape, params, fill_value=0), ids)
    kept = _eq_op(scattered, _convert_element_type(0, i32))
    zeros_op, zeros_up = _zeros(get_aval(operand)), _zeros(get_aval(updates))
    add_params = {**params, "update_jaxpr": None, "update_consts": ()}
    t_out = _add(
        _select_n(kept, zeros_op, t_op),
        scatter_add_p.bind(zeros_op, indices, _select_n(won, zeros_up, t_up), **add_params),
    )
    return out, t_out


def _reshape_ids(n: int, shape: tuple) -> Any:
    from polyjax_numpy.lax._shape_ops import iota, reshape

    ids = _add(iota(np.int32, n), _convert_element_type(1, np.int32))
    return reshape(ids, shape)


def _scatter_transpose(ct, operand, indices, updates, **params):
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    up_aval = updates.aval if ad.is_undefined_primal(updates) else get_aval(updates)
    if type(ct) is ad.Zero:
        return [
            ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None,
            None,
            ad.Zero(up_aval) if ad.is_undefined_primal(updates) else None,
        ]
    ct_op = ct_up = None
    if ad.is_undefined_primal(operand):
        ct_op = scatter_p.bind(ct, indices, _zeros(up_aval), **params)
    if ad.is_undefined_primal(updates):
        ct_up = _gather_of_scatter(ct, indices, up_aval.shape, params)
    return [ct_op, None, ct_up]


def _make_scatter(
    name: str,
    kind: str,
    jvp: Callable,
    transpose: Callable | None = None,
    rules_take_prim: bool = False,
    abstract_eval: Callable = _scatter_abstract_eval,
) -> Primitive:
    """The scatter primitive `name` combining by `kind`, with its rules (given the
    primitive as first argument where `rules_take_prim`)."""
    prim = Primitive(name)
    if rules_take_prim:
        jvp = functools.partial(jvp, prim)
        transpose = transpose and functools.partial(transpose, prim)

    def clipped(operand, indices, updates, **params):
        indices = _clamp_scatter_indices(operand, indices, updates, params["dimension_numbers"])
        return prim.bind(
            operand, indices, updates, **{**params, "mode": GatherScatterMode.PROMISE_IN_BOUNDS}
        )

    clipped_lowering = mlir.lower_fun(clipped, multiple_results=False)

    def lowering(ctx, operand, indices, updates, **params):
        # XLA's scatter drops out-of-bounds windows (FILL_OR_DROP, and allowed
        # for PROMISE_IN_BOUNDS); CLIP clamps the indices first.
        if params["mode"] is GatherScatterMode.CLIP:
            return clipped_lowering(ctx, operand, indices, updates, **params)
        return [_scatter_hlo(ctx, kind, operand, indices, updates, params)]

    batch = functools.partial(_scatter_batch, prim)
    define_rules(prim, abstract_eval, lowering, jvp=jvp, transpose=transpose, batching=batch)
    return prim


scatter_p = _make_scatter("scatter", "replace", _scatter_jvp, _scatter_transpose)
scatter_add_p = _make_scatter(
    "scatter-add",
    "add",
    _scatter_additive_jvp,
    _scatter_additive_transpose,
    rules_take_prim=True,
)


def _scatter_sub_abstract_eval(operand: ShapedArray, *args: Any, **params: Any) -> ShapedArray:
    if operand.dtype == np.dtype(bool):
        raise TypeError("scatter_sub does not accept bool operands (there is no bool subtraction).")
    return _scatter_abstract_eval(operand, *args, **params)


scatter_sub_p = _make_scatter(
    "scatter-sub",
    "sub",
    _scatter_additive_jvp,
    _scatter_additive_transpose,
    rules_take_prim=True,
    abstract_eval=_scatter_sub_abstract_eval,
)
scatter_mul_p = _make_scatter("scatter-mul", "mul", _scatter_mul_jvp, _scatter_mul_transpose)
scatter_min_p = _make_scatter("scatter-min", "min", _scatter_extremal_jvp, rules_take_prim=True)
scatter_max_p = _make_scatter("scatter-max", "max", _scatter_extremal_jvp, rules_take_prim=True)


def _scatter_params(
    dimension_numbers: ScatterDimensionNumbers,
    indices_are_sorted: Any,
    unique_indices: Any,
    mode: str | GatherScatterMode | None,
    update_jaxpr: Any,
) -> dict[str, Any]:
    """A scatter primitive's parameters, from the public scatter functions' arguments."""
    return {
        "dimension_numbers": _tuple_fields(dimension_numbers),
        "indices_are_sorted": bool(indices_are_sorted),
        "unique_indices": bool(unique_indices),
        "mode": GatherScatterMode.from_any(mode),
        "update_jaxpr": update_jaxpr,
        "update_consts": (),
    }


def _scatter_wrapper(prim: Primitive, name: str):
    def fun(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | GatherScatterMode | None = None,
    ) -> Any:
        params = _scatter_params(dimension_numbers, indices_are_sorted, unique_indices, mode, None)
        return prim.bind(operand, scatter_indices, updates, **params)

    fun.__name__ = fun.__qualname__ = name
    return fun


_SCATTER_DOC = """{what}

    Args:
      operand: the array scattered into.
      scatter_indices: an integer array whose last axis is the index vector.
      updates: the values; its `update_window_dims` are window axes, the others
        match the batch axes of `scatter_indices`.
      dimension_numbers: a `ScatterDimensionNumbers`.
      indices_are_sorted, unique_indices: promises passed on to XLA.
      mode: a `GatherScatterMode` or "clip", "fill"/"drop", "promise_in_bounds";
        None drops out-of-bounds updates.

    Returns:
      An array of the operand's shape and dtype.
    """

scatter = _scatter_wrapper(scatter_p, "scatter")
scatter.__doc__ = _SCATTER_DOC.format(
    what="`operand` with `updates` written at `scatter_indices` (repeated indices: one wins)."
)
scatter_add = _scatter_wrapper(scatter_add_p, "scatter_add")
scatter_add.__doc__ = _SCATTER_DOC.format(what="`operand` plus `updates` added at the indices.")
scatter_sub = _scatter_wrapper(scatter_sub_p, "scatter_sub")
scatter_sub.__doc__ = _SCATTER_DOC.format(
    what="`operand` minus `updates` subtracted at the indices (not for bool)."
)
scatter_mul = _scatter_wrapper(scatter_mul_p, "scatter_mul")
scatter_mul.__doc__ = _SCATTER_DOC.format(what="`operand` times `updates` at the indices.")
scatter_min = _scatter_wrapper(scatter_min_p, "scatter_min")
scatter_min.__doc__ = _SCATTER_DOC.format(what="The minimum of `operand` and `updates` there.")
scatter_max = _scatter_wrapper(scatter_max_p, "scatter_max")
scatter_max.__doc__ = _SCATTER_DOC.format(what="The maximum of `operand` and `updates` there.")


@functools.lru_cache(maxsize=128)
def _apply_jaxpr(func: Any, dtype: np.dtype) -> Any:
    """The update region `(x, _) -> func(x)` of `scatter_apply`, traced once per
    function and dtype (so that repeated eager calls reuse one executable)."""
    scalar = ShapedArray((), dtype)
    return trace_to_jaxpr(lambda x, _: [func(x)], [scalar, scalar])


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Any,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """`operand` with the elementwise function `func` applied at the scattered positions.

    Each position is updated once per index that reaches it (so `func` applied
    twice where an index repeats). `update_shape` is the shape updates would have.

    Example:
      >>> dn = ScatterDimensionNumbers((), (0,), (0,))
      >>> scatter_apply(np.float32([1, 2, 3]), np.int32([[1]]), lambda x: x * 10, dn,
      ...               update_shape=(1,))
      Array([ 1., 20.,  3.], dtype=float32)
    """
    aval = get_aval(operand)
    jaxpr = _apply_jaxpr(func, np.dtype(aval.dtype))
    updates = full(tuple(update_shape), 0, aval.dtype)
    params = _scatter_params(dimension_numbers, indices_are_sorted, unique_indices, mode, jaxpr)
    return scatter_p.bind(operand, scatter_indices, updates, **params)
