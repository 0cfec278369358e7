"""Primitives that move data without computing on it: shape, layout and slicing ops.

Each primitive here keeps its operand's element type and only changes where the
elements sit:

    broadcast_in_dim   f32[3] -> f32[2,3]          (copies along new or size-1 axes)
    reshape            f32[2,3] -> f32[6]          (same elements, row-major order)
    transpose          f32[2,3] -> f32[3,2]
    squeeze            f32[1,3] -> f32[3]          (drops size-1 axes)
    slice              f32[10] -> f32[3]           (static start/limit/stride)
    concatenate        f32[2], f32[3] -> f32[5]
    split              f32[5] -> f32[2], f32[3]    (the inverse of concatenate)
    pad                f32[3] -> f32[7]            (edge and interior padding, negative ok)
    rev                f32[3] -> f32[3]            (reverses axes)
    iota               -> i32[4]                   (0, 1, 2, ... along one axis)
    empty              -> f32[2,3]                 (values unspecified; zeros today)

`expand_dims`, `broadcast`, `collapse`, `full` and `full_like` are functions built
on these; `broadcast_shapes` computes NumPy's broadcast of shapes.

Shape rules accept symbolic dimensions (`polyjax_core.symbolic_dims`): sizes are
compared with `definitely_equal` (equal for every value of the dimension variables),
and lowering switches to StableHLO's dynamic ops (`dynamic_iota`,
`real_dynamic_slice`, `dynamic_pad`, dynamic broadcast and reshape) when a shape is
not constant.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes, mesh_context
from polyjax_core import symbolic_dims as sd
from polyjax_core import vma as core_vma
from polyjax_core.abstract_values import ShapedArray, ShapeDtypeStruct, get_aval
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters.array import Array
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._elementwise import select_n as _select_n
from polyjax_numpy.lax._elementwise import sub as _sub
from polyjax_numpy.lax._shape_rules import match_python_scalars

__all__ = [
    "broadcast",
    "broadcast_in_dim",
    "broadcast_in_dim_p",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "collapse",
    "concatenate",
    "concatenate_p",
    "empty",
    "empty_p",
    "expand_dims",
    "full",
    "full_like",
    "iota",
    "iota_p",
    "pad",
    "pad_p",
    "reshape",
    "reshape_p",
    "rev",
    "rev_p",
    "slice",
    "slice_in_dim",
    "slice_p",
    "split",
    "split_p",
    "squeeze",
    "squeeze_p",
    "transpose",
    "transpose_p",
]

# ---------------------------------------------------------------------------
# Shared helpers


def _is_array(x: Any) -> bool:
    """Whether `x` is already a polyjax array value (so an identity op may return it)."""
    return isinstance(x, Array | Tracer)


def _aval(x: Any) -> ShapedArray:
    return get_aval(x)


def canonicalize_axis(axis: Any, ndim: int) -> int:
    """`axis` as a non-negative int, counting negative axes from the end.

    Raises:
      ValueError: if `axis` is out of range for an array of rank `ndim`.
    """
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def _int_tuple(xs: Any, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(x) for x in xs)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {xs!r}.") from None


def _dim_tuple(xs: Any, what: str) -> tuple[Any, ...]:
    """A tuple of ints or symbolic dimensions (may be negative, unlike shapes)."""
    out = []
    for x in xs:
        if isinstance(x, sd.DimExpr):
            out.append(x)
        else:
            try:
                out.append(operator.index(x))
            except TypeError:
                raise TypeError(
                    f"{what} must be a sequence of integers or symbolic dimensions, got {xs!r}."
                ) from None
    return tuple(out)


def _is_static(shape: Sequence[Any]) -> bool:
    return all(type(d) is int for d in shape)


def _result_type(ctx: Any) -> ir.Type:
    return mlir.aval_to_ir_type(ctx.avals_out[0])


def _dims_tensor(ctx: Any, dims: Sequence[Any]) -> ir.Value:
    """A 1-D i64 tensor of (possibly symbolic, possibly negative) sizes or indices."""
    return mlir.shape_tensor(ctx, dims)


def _shape(x: Any) -> tuple:
    return get_aval(x).shape


def _zero_scalar(x: Any) -> Any:
    """A rank-0 zero of `x`'s dtype and weak type (a literal under a trace)."""
    aval = get_aval(x)
    return _convert_element_type(0, aval.dtype, aval.weak_type)


def _inverse_permutation(perm: Sequence[int]) -> tuple[int, ...]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)


def _reduce_sum(x: Any, axes: tuple[int, ...]) -> Any:
    """`reduce_sum` (looked up late: the reductions module builds on this one)."""
    if not axes:
        return x
    return sr.ops.reduce_sum(x, axes)


# ---------------------------------------------------------------------------
# broadcast_in_dim

broadcast_in_dim_p = Primitive("broadcast_in_dim")


def broadcast_in_dim(
    operand: Any,
    shape: Sequence[Any],
    broadcast_dimensions: Sequence[int],
    *,
    out_sharding: Any = None,
) -> Any:
    """Broadcasts `operand` to `shape`, mapping its axes to `broadcast_dimensions`.

    Args:
      operand: an array.
      shape: the result shape (ints or symbolic dimensions).
      broadcast_dimensions: for each axis of `operand`, the result axis it becomes
        (strictly increasing). Each operand axis has size 1 or the size of that
        result axis.
      out_sharding: the result's sharding (explicit mode: its type's sharding).

    Returns:
      An array of shape `shape` and the dtype of `operand`.

    Example:
      >>> broadcast_in_dim(np.float32([1, 2]), (3, 2), (1,)).shape
      (3, 2)
    """
    shape = sd.canonicalize_shape(shape, "broadcast_in_dim shape")
    dims = _int_tuple(broadcast_dimensions, "broadcast_in_dim broadcast_dimensions")
    if (
        _is_array(operand)
        and out_sharding is None
        and sd.definitely_equal_shape(operand.shape, shape)
        and dims == tuple(range(len(shape)))
    ):
        return operand
    return broadcast_in_dim_p.bind(
        operand, broadcast_dimensions=dims, shape=shape, sharding=out_sharding
    )


def _broadcast_in_dim_abstract_eval(
    operand: ShapedArray, *, shape: tuple, broadcast_dimensions: tuple, sharding: Any
) -> ShapedArray:
    dims = broadcast_dimensions
    if operand.ndim != len(dims):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
            f"got broadcast_dimensions {dims} for operand ndim {operand.ndim}."
        )
    if len(shape) < operand.ndim:
        raise TypeError(
            "broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand ndim {operand.ndim} and target broadcast ndim "
            f"{len(shape)}."
        )
    if not all(0 <= d < len(shape) for d in dims):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
            f"{dims} for operand ndim {operand.ndim} and shape {shape}."
        )
    if any(a >= b for a, b in zip(dims, dims[1:])):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {dims}"
        )
    for op_d, d in zip(operand.shape, dims):
        if not (sd.definitely_equal(op_d, 1) or sd.definitely_equal(op_d, shape[d])):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                "their corresponding dimensions in the target broadcast shape; got operand of "
                f"shape {operand.shape}, target broadcast shape {shape}, broadcast_dimensions "
                f"{dims} "
            )
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_print_params(params: dict) -> dict:
    # JAX shows the broadcast dimensions only (when there are any; the shape is the
    # output's type), and the sharding only when there is one.
    return {
        k: v
        for k, v in params.items()
        if (k == "broadcast_dimensions" and v) or (k == "sharding" and v is not None)
    }


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding):
    return [mlir.broadcast_in_dim(ctx, x, ctx.avals_out[0], broadcast_dimensions)]


# Autodiff and vmap. broadcast_in_dim is linear: its transpose sums the cotangent
# over the axes the broadcast created (new axes, and size-1 axes that were stretched).


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
    aval = operand.aval
    kept = set(broadcast_dimensions)
    stretched = {
        d
        for d, size in zip(broadcast_dimensions, aval.shape)
        if sd.definitely_equal(size, 1) and not sd.definitely_equal(shape[d], 1)
    }
    summed = tuple(d for d in range(len(shape)) if d not in kept or d in stretched)
    return [reshape(_reduce_sum(ct, summed), aval.shape)]


def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions, sharding):
    # The batch axis goes right after the result axis of the operand axis before it,
    # which keeps broadcast_dimensions increasing without moving the operand's axes.
    (x,), (bd,) = args, dims
    out_bd = broadcast_dimensions[bd - 1] + 1 if bd > 0 else 0
    out_dims = (
        *broadcast_dimensions[:bd],
        out_bd,
        *(d + 1 for d in broadcast_dimensions[bd:]),
    )
    out_shape = (*shape[:out_bd], _shape(x)[bd], *shape[out_bd:])
    out = broadcast_in_dim_p.bind(
        x, shape=out_shape, broadcast_dimensions=out_dims, sharding=sharding
    )
    return out, out_bd


define_rules(
    broadcast_in_dim_p,
    _broadcast_in_dim_abstract_eval,
    _broadcast_in_dim_lowering,
    print_params=_broadcast_in_dim_print_params,
    batching=_broadcast_in_dim_batch,
    linear_transpose=_broadcast_in_dim_transpose,
)


def broadcast(operand: Any, sizes: Sequence[Any], *, out_sharding: Any = None) -> Any:
    """Adds leading axes of sizes `sizes` to `operand` (`broadcast_in_dim` to `sizes + shape`).

    Example:
      >>> broadcast(np.float32([1, 2]), (3,)).shape
      (3, 2)
    """
    sizes = sd.canonicalize_shape(sizes, "broadcast sizes")
    if not sizes and _is_array(operand) and out_sharding is None:
        return operand
    shape = _aval(operand).shape
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return broadcast_in_dim(operand, sizes + shape, dims, out_sharding=out_sharding)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """Adds leading size-1 axes to `x` until it has rank `rank` (as NumPy broadcasting does)."""
    ndim = len(_aval(x).shape)
    if ndim == rank:
        return x
    return broadcast(x, (1,) * (rank - ndim))


# ---------------------------------------------------------------------------
# reshape

reshape_p = Primitive("reshape")


def reshape(
    operand: Any,
    new_sizes: Sequence[Any],
    dimensions: Sequence[int] | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Reshapes `operand` to `new_sizes`, optionally transposing it first.

    Args:
      operand: an array.
      new_sizes: the result shape; its size must equal the operand's.
      dimensions: if given, a permutation of the operand's axes applied before the
        reshape (the elements are read in this axis order).
      out_sharding: the result's sharding (explicit mode: its type's sharding).

    Returns:
      The reshaped array.

    Example:
      >>> reshape(np.arange(6, dtype=np.float32), (2, 3)).shape
      (2, 3)
    """
    new_sizes = sd.canonicalize_shape(new_sizes, "reshape new_sizes")
    shape = _aval(operand).shape
    same_dims = dimensions is None or tuple(dimensions) == tuple(range(len(shape)))
    dims = None if same_dims else _int_tuple(dimensions, "reshape dimensions")
    if (
        _is_array(operand)
        and dims is None
        and out_sharding is None
        and sd.definitely_equal_shape(shape, new_sizes)
    ):
        return operand
    return reshape_p.bind(operand, dimensions=dims, new_sizes=new_sizes, sharding=out_sharding)


def _reshape_abstract_eval(
    operand: ShapedArray, *, new_sizes: tuple, dimensions: tuple | None, sharding: Any
) -> ShapedArray:
    if not all(sd.is_symbolic_dim(d) or d >= 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    old_size, new_size = sd.shape_size(operand.shape), sd.shape_size(new_sizes)
    if not sd.definitely_equal(old_size, new_size):
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} (of total size "
            f"{new_size}) for shape {operand.shape} (of total size {old_size})."
        )
    if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got dimensions "
            f"{dimensions} for shape {operand.shape}."
        )
    return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_lowering(ctx, x, *, new_sizes, dimensions, sharding):
    aval_in = ctx.avals_in[0]
    if dimensions is not None:
        shape = tuple(aval_in.shape[d] for d in dimensions)
        x = _transpose_hlo(x, aval_in.update(shape=shape), dimensions)
    return [mlir.reshape(ctx, x, ctx.avals_out[0])]


# Autodiff and vmap. reshape is linear; its transpose reshapes back (and undoes
# the axis permutation `dimensions` when there is one).


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
    aval = operand.aval
    if dimensions is None:
        return [reshape(ct, aval.shape)]
    permuted = tuple(aval.shape[d] for d in dimensions)
    return [transpose(reshape(ct, permuted), _inverse_permutation(dimensions))]


def _reshape_batch(args, dims, *, new_sizes, dimensions, sharding):
    # Read the batch axis first, then the others in the order the reshape reads them:
    # one reshape with a permutation, no separate transpose.
    (x,), (bd,) = args, dims
    order = tuple(range(len(_shape(x)) - 1)) if dimensions is None else dimensions
    perm = (bd,) + tuple(d + (d >= bd) for d in order)
    out_dims = None if perm == tuple(range(len(_shape(x)))) else perm
    out = reshape_p.bind(
        x, new_sizes=(_shape(x)[bd], *new_sizes), dimensions=out_dims, sharding=sharding
    )
    return out, 0


define_rules(
    reshape_p,
    _reshape_abstract_eval,
    _reshape_lowering,
    batching=_reshape_batch,
    linear_transpose=_reshape_transpose,
)


def _compute_newshape(shape: Sequence[Any], newshape: Any) -> tuple[Any, ...]:
    """`newshape` with its single -1 (if any) replaced by the size that fits `shape`.

    Used by the `.reshape` method (as `jnp.reshape`), not by `lax.reshape`.
    """
    if sd.is_dim(newshape):
        newshape = (newshape,)
    newshape = tuple(d if sd.is_symbolic_dim(d) else operator.index(d) for d in newshape)
    unknown = [i for i, d in enumerate(newshape) if type(d) is int and d == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if any(type(d) is int and d < -1 for d in newshape):
        raise ValueError(f"Invalid shape {newshape}: negative dimensions other than -1.")
    if unknown:
        known = tuple(d for i, d in enumerate(newshape) if i != unknown[0])
        try:
            missing = sd.divide_shape_sizes(shape, known)
        except sd.InconclusiveDimensionOperation as e:
            if _is_static(shape) and _is_static(known):
                raise TypeError(
                    f"cannot reshape array of shape {tuple(shape)} (size "
                    f"{sd.shape_size(shape)}) into shape {newshape}"
                ) from None
            raise e
        newshape = newshape[: unknown[0]] + (missing,) + newshape[unknown[0] + 1 :]
    if not sd.definitely_equal(sd.shape_size(shape), sd.shape_size(newshape)):
        raise TypeError(
            f"cannot reshape array of shape {tuple(shape)} (size {sd.shape_size(shape)}) into "
            f"shape {newshape} (size {sd.shape_size(newshape)})"
        )
    return newshape


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merges the axes ``start_dimension:stop_dimension`` of `operand` into one.

    The merged axis lists the elements in row-major order (a C-order reshape). The
    bounds are read as a Python slice of the axes: negative values count from the
    end, `stop_dimension` None means the last axis, and an empty range inserts an
    axis of size 1.

    Raises:
      TypeError: if a bound is not an integer.

    Example:
      >>> collapse(np.zeros((2, 3, 4), np.float32), 0, 2).shape
      (6, 4)
    """
    shape = _aval(operand).shape
    start = operator.index(start_dimension)
    stop = None if stop_dimension is None else operator.index(stop_dimension)
    lo, hi, _ = builtins.slice(start, stop).indices(len(shape))
    hi = max(lo, hi)
    size = sd.shape_size(shape[lo:hi])
    return reshape(operand, (*shape[:lo], size, *shape[hi:]))


# ---------------------------------------------------------------------------
# transpose

transpose_p = Primitive("transpose")


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permutes the axes of `operand`: result axis `i` is operand axis `permutation[i]`.

    Example:
      >>> transpose(np.zeros((2, 3), np.float32), (1, 0)).shape
      (3, 2)
    """
    permutation = _int_tuple(permutation, "transpose permutation")
    if permutation == tuple(range(len(permutation))) and _is_array(operand):
        if len(permutation) == operand.ndim:
            return operand
    return transpose_p.bind(operand, permutation=permutation)


def _transpose_abstract_eval(operand: ShapedArray, *, permutation: tuple) -> ShapedArray:
    if sorted(permutation) != list(range(operand.ndim)):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {operand.shape}."
        )
    shape = tuple(operand.shape[i] for i in permutation)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _transpose_hlo(x: ir.Value, aval_out: ShapedArray, permutation: Sequence[int]) -> ir.Value:
    return hlo.TransposeOp(x, list(permutation), results=[mlir.aval_to_ir_type(aval_out)]).result


def _transpose_lowering(ctx, x, *, permutation):
    return [_transpose_hlo(x, ctx.avals_out[0], permutation)]


# Autodiff and vmap: transpose is linear, and its transpose is the inverse permutation.


def _transpose_transpose(ct, operand, *, permutation):
    return [transpose(ct, _inverse_permutation(permutation))]


def _transpose_batch(args, dims, *, permutation):
    (x,), (bd,) = args, dims
    perm = (bd,) + tuple(p + (p >= bd) for p in permutation)
    return transpose(x, perm), 0


define_rules(
    transpose_p,
    _transpose_abstract_eval,
    _transpose_lowering,
    batching=_transpose_batch,
    linear_transpose=_transpose_transpose,
)


# ---------------------------------------------------------------------------
# squeeze / expand_dims

squeeze_p = Primitive("squeeze")


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Removes the size-1 axes `dimensions` (negative axes count from the end).

    Example:
      >>> squeeze(np.zeros((1, 3, 1), np.float32), (0, -1)).shape
      (3,)
    """
    ndim = len(_aval(array).shape)
    dims = tuple(sorted(canonicalize_axis(d, ndim) for d in dimensions))
    if not dims and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def _squeeze_abstract_eval(operand: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"dimensions are not unique: {dimensions}")
    if not all(0 <= d < operand.ndim for d in dimensions):
        raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
    if any(not sd.definitely_equal(operand.shape[d], 1) for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={operand.shape} and dimensions={dimensions}"
        )
    shape = tuple(d for i, d in enumerate(operand.shape) if i not in dimensions)
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _squeeze_lowering(ctx, x, *, dimensions):
    return [mlir.reshape(ctx, x, ctx.avals_out[0])]


# Autodiff and vmap: squeeze is linear, and its transpose puts the size-1 axes back.


def _squeeze_transpose(ct, operand, *, dimensions):
    return [reshape(ct, operand.aval.shape)]


def _squeeze_batch(args, dims, *, dimensions):
    (x,), (bd,) = args, dims
    new_dims = tuple(d + (d >= bd) for d in dimensions)
    out_bd = bd - sum(d < bd for d in dimensions)
    return squeeze_p.bind(x, dimensions=new_dims), out_bd


define_rules(
    squeeze_p,
    _squeeze_abstract_eval,
    _squeeze_lowering,
    batching=_squeeze_batch,
    linear_transpose=_squeeze_transpose,
)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Inserts size-1 axes at `dimensions` (positions in the result; negative ok).

    Example:
      >>> expand_dims(np.zeros(3, np.float32), (0, -1)).shape
      (1, 3, 1)
    """
    dimensions = _int_tuple(dimensions, "expand_dims dimensions")
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    shape = _aval(array).shape
    ndim_out = len(shape) + len(dimensions)
    dims = sorted(canonicalize_axis(d, ndim_out) for d in dimensions)
    if len(set(dims)) != len(dims):  # e.g. 0 and -ndim_out
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    result: list[Any] = list(shape)
    for d in dims:
        result.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(result), kept)


# ---------------------------------------------------------------------------
# iota / full

iota_p = Primitive("iota")


def broadcasted_iota(
    dtype: Any, shape: Sequence[Any], dimension: int, *, out_sharding: Any = None
) -> Any:
    """An array of `shape` whose values count 0, 1, 2, ... along axis `dimension`.

    Example:
      >>> broadcasted_iota(np.int32, (2, 3), 1).shape
      (2, 3)
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = sd.canonicalize_shape(shape, "broadcasted_iota shape")
    dimension = canonicalize_axis(dimension, len(shape))
    return iota_p.bind(dimension=dimension, dtype=dtype, shape=shape, sharding=out_sharding)


def iota(dtype: Any, size: Any, *, out_sharding: Any = None) -> Any:
    """The 1-D array `[0, 1, ..., size - 1]` of `dtype` (like `np.arange(size)`).

    Example:
      >>> iota(np.int32, 4).shape
      (4,)
    """
    return broadcasted_iota(dtype, (size,), 0, out_sharding=out_sharding)


def _iota_abstract_eval(*, dtype: Any, shape: tuple, dimension: int, sharding: Any):
    dtypes.check_user_dtype_supported(dtype, "iota")
    if not 0 <= dimension < len(shape):
        raise ValueError(
            "iota dimension must be between 0 and len(shape), got "
            f"dimension={dimension} for shape {shape}"
        )
    return ShapedArray(shape, dtype)


def _iota_lowering(ctx, *, dtype, shape, dimension, sharding):
    aval_out = ctx.avals_out[0]
    if aval_out.dtype == np.dtype(bool):
        # StableHLO's iota has no i1 variant: count in i8 and compare with 0.
        counted = mlir.iota(ctx, aval_out.update(dtype=np.int8), dimension)
        zero = mlir.full_like_aval(ctx, 0, aval_out.update(dtype=np.int8))
        return [mlir.compare_hlo(counted, zero, "NE", "SIGNED")]
    return [mlir.iota(ctx, aval_out, dimension)]


# Autodiff and vmap: iota has no operands, so its tangent is zero and it is never
# batched (under vmap it is created once and broadcast where combined with batched values).


def _iota_batch(args, dims, **params):
    return iota_p.bind(**params), batching.not_mapped


define_rules(iota_p, _iota_abstract_eval, _iota_lowering, jvp="zero", batching=_iota_batch)


def full(shape: Sequence[Any], fill_value: Any, dtype: Any = None, *, sharding: Any = None):
    """An array of `shape` filled with the scalar `fill_value`.

    Args:
      shape: the result shape.
      fill_value: a scalar; it is cast to `dtype`.
      dtype: the element type; by default that of `fill_value` (a Python scalar gives
        a weakly-typed result, as in JAX).
      sharding: the result's sharding (explicit mode: its type's sharding).

    Example:
      >>> full((2, 3), 1.0, np.float32).shape
      (2, 3)
    """
    shape = sd.canonicalize_shape(shape, "full shape")
    fill_shape = _aval(fill_value).shape
    if fill_shape:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape {fill_shape}."
        )
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "full")
    weak_type = dtype is None and dtypes.is_weakly_typed(fill_value)
    dtype = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(fill_value))
    value = _convert_element_type(fill_value, dtype, weak_type)
    return broadcast(value, shape, out_sharding=sharding)


def full_like(
    x: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Sequence[Any] | None = None,
    sharding: Any = None,
) -> Any:
    """An array like `x` (its shape and dtype unless given) filled with `fill_value`.

    A weakly-typed `x` gives a weakly-typed result when `dtype` is None.

    Example:
      >>> full_like(np.zeros((2,), np.int32), 7).dtype
      dtype('int32')
    """
    # A ShapeDtypeStruct stands for an array of its type (never weak, as in JAX).
    aval = ShapedArray(x.shape, x.dtype) if isinstance(x, ShapeDtypeStruct) else _aval(x)
    fill_shape = aval.shape if shape is None else sd.canonicalize_shape(shape, "full_like")
    value_shape = _aval(fill_value).shape
    if value_shape:
        raise TypeError(
            f"full must be called with scalar fill_value, got fill_value.shape {value_shape}."
        )
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "full_like")
    weak_type = dtype is None and aval.weak_type
    dtype = dtypes.canonicalize_dtype(aval.dtype if dtype is None else dtype)
    # Converting the scalar (not the filled array) keeps the weak type without an op.
    value = _convert_element_type(fill_value, dtype, weak_type)
    typed = aval.aval_sharding
    if sharding is None and shape is None and typed is not None:  # explicit mode: like `x`
        sharding = mesh_context.abstract_sharding(typed.mesh, typed.spec)
    # Inside shard_map the result is typed like `x`: varying over the same manual axes.
    return core_vma.cast_to(broadcast(value, fill_shape, out_sharding=sharding), aval.vma)


def broadcast_shapes(*shapes: Sequence[Any]) -> tuple[Any, ...]:
    """The shape NumPy broadcasting gives `shapes` (aligned on the right; size 1 stretches).

    Raises:
      ValueError: if the shapes do not broadcast; the message lists them.

    Example:
      >>> broadcast_shapes((3, 1), (4,))
      (3, 4)
    """
    shapes = [sd.canonicalize_shape(s, "broadcast_shapes") for s in shapes]
    if len(shapes) == 1:
        return shapes[0]
    return sd.broadcast_shapes(*shapes)


# empty: an array whose values do not matter. It has no operands, so no tangent and
# no batching; it lowers to zeros (StableHLO cannot leave an array uninitialized).

empty_p = Primitive("empty")


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of `shape` and `dtype` whose values are unspecified (zeros, today).

    Use it where every element is overwritten before it is read.

    Example:
      >>> empty((2, 3), np.float32).shape
      (2, 3)
    """
    if sd.is_dim(shape):
        shape = (shape,)
    shape = sd.canonicalize_shape(shape, "empty shape")
    dtypes.check_user_dtype_supported(dtype, "empty")
    dtype = dtypes.canonicalize_dtype(dtype)
    return empty_p.bind(dtype=dtype, out_sharding=out_sharding, shape=shape)


def _empty_abstract_eval(*, shape: tuple, dtype: Any, out_sharding: Any) -> ShapedArray:
    if out_sharding is not None:
        raise NotImplementedError("empty: out_sharding is not supported yet")
    return ShapedArray(shape, dtype)


def _empty_lowering(ctx: mlir.LoweringRuleContext, **params: Any) -> list:
    return [mlir.full_like_aval(ctx, 0, ctx.avals_out[0])]


def _empty_batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    # No operands: one unbatched value serves every member of the batch.
    return empty_p.bind(**params), batching.not_mapped


define_rules(empty_p, _empty_abstract_eval, _empty_lowering, jvp="zero", batching=_empty_batch)


# ---------------------------------------------------------------------------
# slice

slice_p = Primitive("slice")


def slice(  # noqa: A001 - lax's name
    operand: Any,
    start_indices: Sequence[Any],
    limit_indices: Sequence[Any],
    strides: Sequence[Any] | None = None,
) -> Any:
    """The elements of `operand` from `start_indices` up to `limit_indices` by `strides`.

    Args:
      operand: an array.
      start_indices: per axis, the first index (0 <= start).
      limit_indices: per axis, one past the last index (start <= limit <= size).
      strides: per axis, the step (>= 1); None means all 1.

    Example:
      >>> slice(np.arange(10, dtype=np.int32), (1,), (8,), (3,)).shape
      (3,)
    """
    start = _dim_tuple(start_indices, "slice start_indices")
    limit = _dim_tuple(limit_indices, "slice limit_indices")
    strides_ = None if strides is None else _dim_tuple(strides, "slice strides")
    if strides_ is not None and all(type(s) is int and s == 1 for s in strides_):
        strides_ = None
    shape = _aval(operand).shape
    if (
        _is_array(operand)
        and strides_ is None
        and all(type(s) is int and s == 0 for s in start)
        and sd.definitely_equal_shape(limit, shape)
    ):
        return operand
    return slice_p.bind(operand, limit_indices=limit, start_indices=start, strides=strides_)


def slice_in_dim(
    operand: Any,
    start_index: int | None,
    limit_index: int | None,
    stride: int = 1,
    axis: int = 0,
) -> Any:
    """`slice` along the single axis `axis` (negative indices count from the end)."""
    shape = _aval(operand).shape
    axis = canonicalize_axis(axis, len(shape))
    d = shape[axis]
    start = 0 if start_index is None else start_index
    limit = d if limit_index is None else limit_index
    if type(start) is int and start < 0:
        start = start + d
    if type(limit) is int and limit < 0:
        limit = limit + d
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def _ceil_div(a: Any, b: Any) -> Any:
    return -((-a) // b)


def _slice_abstract_eval(
    operand: ShapedArray, *, start_indices: tuple, limit_indices: tuple, strides: tuple | None
) -> ShapedArray:
    ndim, shape = operand.ndim, operand.shape
    for name, idx in (("start_indices", start_indices), ("limit_indices", limit_indices)):
        if len(idx) != ndim:
            raise TypeError(
                f"slice {name} must have length equal to the number of dimensions of the "
                f"operand, got indices {idx} for operand shape {shape}."
            )
    if strides is not None and len(strides) != ndim:
        raise TypeError(
            "slice strides must have length equal to the number of dimensions of the "
            f"operand, got strides {strides} for operand shape {shape}."
        )
    if not all(_ge(d, lim) for d, lim in zip(shape, limit_indices)):
        raise TypeError(
            "slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {shape}."
        )
    if not all(_ge(s, 0) for s in start_indices):
        raise TypeError(
            "slice start_indices must be greater than or equal to zero, got start_indices "
            f"{start_indices}."
        )
    if not all(_ge(lim, s) for s, lim in zip(start_indices, limit_indices)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    diff = tuple(lim - s for s, lim in zip(start_indices, limit_indices))
    if strides is None:
        out = diff
    else:
        if not all(_ge(s, 1) for s in strides):
            raise TypeError(f"slice strides must be positive, got {strides}")
        out = tuple(_ceil_div(d, s) for d, s in zip(diff, strides))
    return ShapedArray(out, operand.dtype, operand.weak_type)


def _ge(a: Any, b: Any) -> bool:
    """`a >= b`, for ints or symbolic dimensions (inconclusive symbolic comparisons raise)."""
    if type(a) is int and type(b) is int:
        return a >= b
    return bool(a >= b) if sd.is_symbolic_dim(a) else bool(b <= a)


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    strides = (1,) * len(start_indices) if strides is None else strides
    if _is_static(start_indices) and _is_static(limit_indices) and _is_static(strides):
        return [
            hlo.SliceOp(
                x,
                list(start_indices),
                list(limit_indices),
                list(strides),
                results=[_result_type(ctx)],
            ).result
        ]
    return [
        hlo.RealDynamicSliceOp(
            _result_type(ctx),
            x,
            _dims_tensor(ctx, start_indices),
            _dims_tensor(ctx, limit_indices),
            _dims_tensor(ctx, strides),
        ).result
    ]


# Autodiff and vmap. slice is linear; its transpose scatters the cotangent back into
# zeros of the operand's shape, which is a pad: `start` zeros before, `stride - 1`
# between neighbours, and what is left after.


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
    aval = operand.aval
    strides = (1,) * aval.ndim if strides is None else strides
    config = tuple(
        (lo, size - lo - sd.dilate_dim(n, s), s - 1)
        for lo, size, n, s in zip(start_indices, aval.shape, _shape(ct), strides)
    )
    return [pad(ct, _zero_scalar(ct), config)]


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (bd,) = args, dims

    def insert(xs, value):
        return (*xs[:bd], value, *xs[bd:])

    out = slice_p.bind(
        x,
        start_indices=insert(start_indices, 0),
        limit_indices=insert(limit_indices, _shape(x)[bd]),
        strides=None if strides is None else insert(strides, 1),
    )
    return out, bd


define_rules(
    slice_p,
    _slice_abstract_eval,
    _slice_lowering,
    batching=_slice_batch,
    linear_transpose=_slice_transpose,
)


# ---------------------------------------------------------------------------
# concatenate

concatenate_p = Primitive("concatenate")


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Joins `operands` along axis `dimension` (their other axes must agree).

    Example:
      >>> concatenate([np.zeros(2, np.float32), np.ones(3, np.float32)], 0).shape
      (5,)
    """
    operands = list(operands)
    if not operands:
        raise ValueError("concatenate requires a non-empty sequence of arrays")
    dimension = operator.index(dimension)
    if len(operands) == 1 and _is_array(operands[0]):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


def _concatenate_abstract_eval(*operands: ShapedArray, dimension: int) -> ShapedArray:
    if len({o.dtype for o in operands}) != 1:
        names = ", ".join(o.dtype.name for o in operands)
        raise TypeError(f"concatenate requires arguments to have the same dtypes, got {names}.")
    if len({o.ndim for o in operands}) != 1:
        shapes = ", ".join(str(o.shape) for o in operands)
        raise TypeError(
            f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}."
        )
    shapes = [o.shape for o in operands]
    if not 0 <= dimension < operands[0].ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            f"{', '.join(map(str, shapes))}."
        )
    first = shapes[0]
    for s in shapes[1:]:
        if not all(
            sd.definitely_equal(a, b) for i, (a, b) in enumerate(zip(first, s)) if i != dimension
        ):
            raise TypeError(
                "Cannot concatenate arrays with shapes that differ in dimensions other than "
                f"the one being concatenated: concatenating along dimension {dimension} for "
                f"shapes {', '.join(map(str, shapes))}."
            )
    size = sum((s[dimension] for s in shapes[1:]), first[dimension])
    out_shape = first[:dimension] + (size,) + first[dimension + 1 :]
    weak = all(o.weak_type for o in operands)
    return ShapedArray(out_shape, operands[0].dtype, weak)


def _concatenate_lowering(ctx, *xs, dimension):
    return [hlo.ConcatenateOp(list(xs), dimension, results=[_result_type(ctx)]).result]


# Autodiff and vmap. concatenate is linear in every operand; the transpose slices
# each linear operand's piece out of the cotangent.


def _concatenate_transpose(ct, *operands, dimension):
    cts: list[Any] = []
    start: Any = 0
    for o in operands:
        size = (o.aval if ad.is_undefined_primal(o) else _aval(o)).shape[dimension]
        if ad.is_undefined_primal(o):
            cts.append(slice_in_dim(ct, start, start + size, axis=dimension))
        else:
            cts.append(None)
        start = start + size
    return cts


def _concatenate_batch(args, dims, *, dimension):
    size = next(_shape(x)[d] for x, d in zip(args, dims) if d is not batching.not_mapped)
    xs = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + 1), 0


define_rules(
    concatenate_p,
    _concatenate_abstract_eval,
    _concatenate_lowering,
    batching=_concatenate_batch,
    linear_transpose=_concatenate_transpose,
)


# ---------------------------------------------------------------------------
# split: the inverse of concatenate, one primitive with a result per piece

split_p = Primitive("split")
split_p.multiple_results = True


def split(operand: Any, sizes: Sequence[Any], axis: int = 0) -> list[Any]:
    """Cuts `operand` along `axis` into consecutive pieces of the given `sizes`.

    Args:
      operand: an array.
      sizes: the pieces' sizes along `axis`; they must sum to ``operand.shape[axis]``.
      axis: the axis cut (negative counts from the end).

    Returns:
      A list of ``len(sizes)`` arrays.

    Raises:
      ValueError: if a size is negative or the sizes do not sum to the axis' size.

    Example:
      >>> [p.shape for p in split(np.zeros((5, 2), np.float32), (2, 3))]
      [(2, 2), (3, 2)]
    """
    axis = canonicalize_axis(axis, _aval(operand).ndim)
    sizes = _dim_tuple(sizes, "split sizes")
    return split_p.bind(operand, axis=axis, sizes=sizes)


def _split_abstract_eval(operand: ShapedArray, *, sizes: tuple, axis: int) -> list[ShapedArray]:
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"split axis {axis} is out of bounds for rank {operand.ndim}")
    if not all(_ge(s, 0) for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    total = sum(sizes[1:], sizes[0]) if sizes else 0
    if not sd.definitely_equal(total, operand.shape[axis]):
        raise ValueError(
            f"Sum of sizes {total} must be equal to dimension {axis} of the operand shape "
            f"{tuple(operand.shape)}"
        )
    shape = operand.shape
    return [
        ShapedArray((*shape[:axis], s, *shape[axis + 1 :]), operand.dtype, operand.weak_type)
        for s in sizes
    ]


def _split_lowering(ctx, x, *, sizes, axis):
    outs = []
    start: Any = 0
    for aval, size in zip(ctx.avals_out, sizes):
        starts = [0] * aval.ndim
        limits = list(ctx.avals_in[0].shape)
        starts[axis], limits[axis] = start, start + size
        piece_ctx = ctx.replace(avals_out=[aval])
        (out,) = _slice_lowering(
            piece_ctx, x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=None
        )
        outs.append(out)
        start = start + size
    return outs


# Autodiff and vmap: split is linear; its transpose concatenates the cotangents
# (zeros for the pieces that have none).


def _split_transpose(cts, operand, *, sizes, axis):
    aval = operand.aval
    pieces = [ad.instantiate_zeros(ct) for ct in cts]
    if not pieces:  # no pieces: the axis is empty
        return [full(aval.shape, 0, aval.dtype)]
    return [concatenate_p.bind(*pieces, dimension=axis)]


def _split_batch(args, dims, *, sizes, axis):
    (x,), (bd,) = args, dims
    out = split_p.bind(x, axis=axis + (bd <= axis), sizes=sizes)
    return out, [bd] * len(out)


define_rules(
    split_p,
    _split_abstract_eval,
    _split_lowering,
    batching=_split_batch,
    linear_transpose=_split_transpose,
)


# ---------------------------------------------------------------------------
# pad

pad_p = Primitive("pad")


def pad(operand: Any, padding_value: Any, padding_config: Sequence[Sequence[Any]]) -> Any:
    """Pads `operand` with the scalar `padding_value`.

    Args:
      operand: an array.
      padding_value: a scalar of the operand's dtype (or a Python scalar).
      padding_config: per axis, `(low, high, interior)`: elements added before, after,
        and between neighbouring elements. `low` and `high` may be negative (cutting
        elements off); `interior` must be non-negative.

    Example:
      >>> pad(np.float32([1, 2]), np.float32(0), [(1, 2, 1)]).shape
      (6,)
    """
    config = tuple(tuple(_dim_tuple(c, "pad padding_config")) for c in padding_config)
    if any(len(c) != 3 for c in config):
        raise TypeError(
            f"pad padding_config must be a sequence of (low, high, interior) triples, got "
            f"{padding_config}."
        )
    # A Python scalar padding value takes the operand's dtype (weakly), as in lax.add.
    operand, padding_value = match_python_scalars((operand, padding_value))
    return pad_p.bind(operand, padding_value, padding_config=config)


def _pad_abstract_eval(
    operand: ShapedArray, padding_value: ShapedArray, *, padding_config: tuple
) -> ShapedArray:
    if operand.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{operand.dtype.name} and {padding_value.dtype.name}."
        )
    if padding_value.ndim != 0:
        raise TypeError(f"pad padding_value must be a scalar, got shape {padding_value.shape}.")
    if len(padding_config) != operand.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {operand.shape}"
        )
    if not all(_ge(i, 0) for _, _, i in padding_config):
        raise ValueError(
            f"padding_config interior must be nonnegative, got padding_config {padding_config}"
        )
    out = tuple(
        lo + hi + sd.dilate_dim(d, interior + 1)
        for d, (lo, hi, interior) in zip(operand.shape, padding_config)
    )
    if not all(_ge(d, 0) for d in out):
        raise ValueError(
            f"Dimension size after padding is not at least 0, got result shape {out}, for "
            f"padding_config {padding_config} and operand shape {operand.shape}"
        )
    weak = operand.weak_type and padding_value.weak_type
    return ShapedArray(out, operand.dtype, weak)


def _pad_lowering(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    if all(_is_static(v) for v in (lo, hi, interior)):
        return [
            hlo.PadOp(
                x,
                padding_value,
                list(lo),
                list(hi),
                list(interior),
                results=[_result_type(ctx)],
            ).result
        ]
    return [
        hlo.DynamicPadOp(
            _result_type(ctx),
            x,
            padding_value,
            _dims_tensor(ctx, lo),
            _dims_tensor(ctx, hi),
            _dims_tensor(ctx, interior),
        ).result
    ]


# Autodiff and vmap. pad is linear in (operand, padding_value) together. The
# operand's cotangent is the cotangent with the padding cut off (a pad by the
# negated edges, then a strided slice skipping the interior padding); the padding
# value's is the sum of the rest.


def _pad_transpose(ct, operand, padding_value, *, padding_config):
    op_linear = ad.is_undefined_primal(operand)
    pv_linear = ad.is_undefined_primal(padding_value)
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    unpadded = pad(ct, _zero_scalar(ct), tuple((-low, -high, 0) for low, high in zip(lo, hi)))
    ndim = len(padding_config)
    t_operand = slice(unpadded, (0,) * ndim, _shape(unpadded), tuple(i + 1 for i in interior))
    t_padding_value = None
    if pv_linear:
        all_axes = tuple(range(ndim))
        t_padding_value = _sub(_reduce_sum(ct, all_axes), _reduce_sum(t_operand, all_axes))
    return [t_operand if op_linear else None, t_padding_value]


def _pad_batch(args, dims, *, padding_config):
    (x, padding_value), (x_bd, pv_bd) = args, dims
    if pv_bd is batching.not_mapped:
        config = (*padding_config[:x_bd], (0, 0, 0), *padding_config[x_bd:])
        return pad_p.bind(x, padding_value, padding_config=config), x_bd
    # One padding value per batch element: pad with zeros, then select the padding
    # positions (a mask padded the same way) from the broadcast padding values.
    size = _shape(padding_value)[pv_bd]
    x = batching.bdim_at_front(x, x_bd, size)
    padding_value = batching.moveaxis(padding_value, pv_bd, 0)
    padded = pad_p.bind(x, _zero_scalar(x), padding_config=((0, 0, 0), *padding_config))
    inside = full(_shape(x)[1:], True, np.bool_)
    mask = pad(inside, np.bool_(False), padding_config)
    out_shape = _shape(padded)
    mask = broadcast_in_dim(mask, out_shape, tuple(range(1, len(out_shape))))
    values = broadcast_in_dim(padding_value, out_shape, (0,))
    return _select_n(mask, values, padded), 0


def _pad_jvp(primals, tangents, *, padding_config):
    # As deflinear's rule, but a zero padding-value tangent (the common case: a
    # constant padding value) stays a literal instead of becoming an equation.
    (operand, padding_value), (t_operand, t_padding_value) = primals, tangents
    out = pad_p.bind(operand, padding_value, padding_config=padding_config)
    if type(t_operand) is ad.Zero and type(t_padding_value) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    t_operand = ad.instantiate_zeros(t_operand)
    if type(t_padding_value) is ad.Zero:
        t_padding_value = _zero_scalar(t_operand)
    return out, pad_p.bind(t_operand, t_padding_value, padding_config=padding_config)


define_rules(
    pad_p,
    _pad_abstract_eval,
    _pad_lowering,
    jvp=_pad_jvp,
    batching=_pad_batch,
    linear_transpose=_pad_transpose,
)


# ---------------------------------------------------------------------------
# rev

rev_p = Primitive("rev")


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverses `operand` along the axes `dimensions`.

    Example:
      >>> rev(np.zeros((2, 3), np.float32), (1,)).shape
      (2, 3)
    """
    dims = _int_tuple(dimensions, "rev dimensions")
    if not dims and _is_array(operand):
        return operand
    return rev_p.bind(operand, dimensions=dims)


def _rev_abstract_eval(operand: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"rev dimensions must be unique, got {dimensions}")
    if not all(0 <= d < operand.ndim for d in dimensions):
        raise ValueError(
            "rev dimensions must all be less than operand ndim, got dimensions "
            f"{dimensions} for operand ndim {operand.ndim}"
        )
    return operand


def _rev_lowering(ctx, x, *, dimensions):
    return [hlo.ReverseOp(x, list(dimensions), results=[_result_type(ctx)]).result]


# Autodiff and vmap: rev is linear and its own transpose.


def _rev_transpose(ct, operand, *, dimensions):
    return [rev(ct, dimensions)]


def _rev_batch(args, dims, *, dimensions):
    (x,), (bd,) = args, dims
    return rev_p.bind(x, dimensions=tuple(d + (d >= bd) for d in dimensions)), bd


define_rules(
    rev_p, _rev_abstract_eval, _rev_lowering, batching=_rev_batch, linear_transpose=_rev_transpose
)


# For the derivative rules of `_elementwise`, which this module imports.
sr.ops.broadcast_in_dim = broadcast_in_dim
sr.ops.reshape = reshape
