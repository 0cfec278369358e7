"""Sorting: `sort` (several operands, lexicographic keys), `sort_key_val` and `top_k`.

    sort[dimension=0 is_stable=True num_keys=1]   f32[5], i32[5] -> f32[5], i32[5]
    top_k[k=2]                                    f32[3,5] -> f32[3,2], i32[3,2]

`sort` orders all its operands by the first `num_keys` of them, compared
lexicographically, so the other operands travel along with the keys. The order
is NumPy's: NaNs (of either sign) go last and `-0.0 == 0.0`; complex numbers
compare by real part, then imaginary part. `top_k` returns the `k` largest
entries of the last axis in descending order with their indices; NaN counts as
the largest value and ties keep the smaller index first.

Derivatives: sorting permutes, so the tangents of all operands are sorted with
the same keys (one more `sort` whose non-key operands are the tangents). That
`sort` is linear in its non-key operands; its transpose applies the inverse
permutation, itself a sort of the cotangents keyed by the permutation.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, broadcasted_iota

__all__ = ["sort", "sort_key_val", "sort_p", "top_k", "top_k_p"]


# ---------------------------------------------------------------------------
# The comparator shared by sort and top_k


def _float_lt(a: ir.Value, b: ir.Value) -> ir.Value:
    # a < b with NaN after every number (NaN == NaN for the tie test below).
    b_nan = mlir.compare_hlo(b, b, "NE")
    a_num = mlir.compare_hlo(a, a, "EQ")
    return hlo.or_(mlir.compare_hlo(a, b, "LT"), hlo.and_(b_nan, a_num))


def _float_eq(a: ir.Value, b: ir.Value) -> ir.Value:
    both_nan = hlo.and_(mlir.compare_hlo(a, a, "NE"), mlir.compare_hlo(b, b, "NE"))
    return hlo.or_(mlir.compare_hlo(a, b, "EQ"), both_nan)


def _lt_eq(a: ir.Value, b: ir.Value, dtype: np.dtype) -> list[tuple[ir.Value, ir.Value]]:
    """(less-than, equal) pairs of the components that order `a` and `b`, most significant first."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        parts = [(hlo.real(a), hlo.real(b)), (hlo.imag(a), hlo.imag(b))]
        return [(_float_lt(x, y), _float_eq(x, y)) for x, y in parts]
    if dtypes.issubdtype(dtype, np.inexact):
        return [(_float_lt(a, b), _float_eq(a, b))]
    return [(mlir.compare_hlo(a, b, "LT"), mlir.compare_hlo(a, b, "EQ"))]


def _lexicographic_lt(pairs: list[tuple[ir.Value, ir.Value]]) -> ir.Value:
    result = pairs[-1][0]
    for lt, eq in reversed(pairs[:-1]):
        result = hlo.or_(lt, hlo.and_(eq, result))
    return result


def _sort_hlo(
    operands: Sequence[ir.Value],
    avals: Sequence[ShapedArray],
    dimension: int,
    is_stable: bool,
    num_keys: int,
    descending: bool = False,
) -> list[ir.Value]:
    types = [mlir.aval_to_ir_type(a) for a in avals]
    op = hlo.SortOp(types, list(operands), dimension=dimension, is_stable=is_stable)
    scalars = [ir.RankedTensorType.get([], mlir.dtype_to_ir_type(a.dtype)) for a in avals]
    block = op.comparator.blocks.append(*[t for t in scalars for _ in (0, 1)])
    with ir.InsertionPoint(block):
        pairs = []
        for i in range(num_keys):
            a, b = block.arguments[2 * i], block.arguments[2 * i + 1]
            if descending:
                a, b = b, a
            pairs += _lt_eq(a, b, avals[i].dtype)
        hlo.ReturnOp([_lexicographic_lt(pairs)])
    return list(op.results)


# ---------------------------------------------------------------------------
# sort

sort_p = Primitive("sort")
sort_p.multiple_results = True


def sort(
    operand: Any | Sequence[Any],
    dimension: int = -1,
    is_stable: bool = True,
    num_keys: int = 1,
) -> Any:
    """Sorts `operand` (or several operands together) along `dimension`.

    Args:
      operand: an array, or a sequence of arrays of one shape.
      dimension: the axis to sort along (negative counts from the end).
      is_stable: whether equal keys keep their relative order.
      num_keys: how many of the operands (the first ones) are the sort keys,
        compared lexicographically.

    Returns:
      The sorted array, or a tuple of the sorted operands when a sequence is given.

    Example:
      >>> import numpy as np
      >>> sort(np.float32([3, np.nan, 1]))
      Array([ 1.,  3., nan], dtype=float32)
    """
    if isinstance(operand, (list, tuple)):
        operands = tuple(operand)
        single = False
    else:
        operands, single = (operand,), True
    if not operands:
        raise TypeError("sort requires at least one operand")
    ndim = len(np.shape(operands[0])) if not hasattr(operands[0], "ndim") else operands[0].ndim
    dim = operator.index(dimension)
    if ndim and dim < 0:
        dim += ndim
    out = sort_p.bind(
        *operands, dimension=dim, is_stable=bool(is_stable), num_keys=operator.index(num_keys)
    )
    return out[0] if single else tuple(out)


def sort_key_val(
    keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
) -> tuple[Any, Any]:
    """Sorts `keys` along `dimension` and moves `values` (of the same shape) with them.

    Example:
      >>> k, v = sort_key_val(np.float32([3, 1, 2]), np.int32([0, 1, 2]))
      >>> v
      Array([1, 2, 0], dtype=int32)
    """
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def _sort_abstract_eval(*operands: ShapedArray, dimension, is_stable, num_keys):
    shapes = {tuple(o.shape) for o in operands}
    if len(shapes) != 1:
        raise TypeError(
            "sort requires all operands to have the same shape, got "
            + ", ".join(o.str_short() for o in operands)
        )
    ndim = operands[0].ndim
    if not 0 <= dimension < max(ndim, 1) or ndim == 0:
        raise ValueError(f"Invalid dimension {dimension} for sort of rank-{ndim} operands")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and {len(operands)}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    return _sort_hlo(operands, ctx.avals_in, dimension, is_stable, num_keys)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # The primal and tangent sorts must permute identically, so ties are broken
    # stably in both.
    keys = list(primals[:num_keys])
    out = sort_p.bind(*primals, dimension=dimension, is_stable=True, num_keys=num_keys)
    live = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
    tangents_out = [ad.Zero.from_primal_value(o) for o in out]
    if live:
        sorted_ts = sort_p.bind(
            *keys,
            *[tangents[i] for i in live],
            dimension=dimension,
            is_stable=True,
            num_keys=num_keys,
        )[num_keys:]
        for i, t in zip(live, sorted_ts):
            tangents_out[i] = t
    return out, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    keys = operands[:num_keys]
    if any(ad.is_undefined_primal(k) for k in keys):
        raise NotImplementedError("sort is not linear in its keys")
    aval = get_aval(keys[0])
    iota = broadcasted_iota(np.int32, aval.shape, dimension)
    # perm[i] is where the i-th sorted element came from; sorting the cotangents by
    # perm sends each one back there.
    perm = sort_p.bind(*keys, iota, dimension=dimension, is_stable=True, num_keys=num_keys)[-1]
    undefined = [i for i in range(num_keys, len(operands)) if ad.is_undefined_primal(operands[i])]
    cts_in: list[Any] = [None] * len(operands)
    if undefined:
        live = [ad.instantiate_zeros(cts[i]) for i in undefined]
        back = sort_p.bind(perm, *live, dimension=dimension, is_stable=True, num_keys=1)[1:]
        for i, c in zip(undefined, back):
            cts_in[i] = c
    return cts_in


def _sort_batch(args, dims, *, dimension, is_stable, num_keys):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    args = [batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
    out = sort_p.bind(*args, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return out, [0] * len(out)


define_rules(
    sort_p,
    _sort_abstract_eval,
    _sort_lowering,
    jvp=_sort_jvp,
    transpose=_sort_transpose,
    batching=_sort_batch,
)


# ---------------------------------------------------------------------------
# top_k

top_k_p = Primitive("top_k")
top_k_p.multiple_results = True


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The `k` largest entries along the last axis of `operand`, and their indices.

    Args:
      operand: an array of rank 1 or more.
      k: how many entries to keep (at most the size of the last axis).

    Returns:
      `(values, indices)`: the values in descending order (NaN first) and their int32
      indices in the last axis (the smaller index first among equal values).
    """
    return tuple(top_k_p.bind(operand, k=operator.index(k)))


def _top_k_abstract_eval(operand: ShapedArray, *, k):
    if operand.ndim < 1:
        raise ValueError("top_k operand must have rank >= 1")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    n = operand.shape[-1]
    if type(n) is int and k > n:
        raise ValueError(f"k argument to top_k must be no larger than minor dimension {n}; got {k}")
    shape = (*operand.shape[:-1], k)
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, np.int32)]


def _top_k_lowering(ctx, x, *, k):
    aval = ctx.avals_in[0]
    dim = aval.ndim - 1
    idx_aval = aval.update(dtype=np.dtype(np.int32), weak_type=False)
    iota = mlir.iota(ctx, idx_aval, dim)
    vals, idx = _sort_hlo([x, iota], [aval, idx_aval], dim, True, 1, descending=True)
    start = [0] * aval.ndim
    limit = [*mlir.eval_dynamic_shape(ctx, aval.shape[:-1]), k]
    if not all(type(d) is int for d in limit):
        raise NotImplementedError("top_k lowering with symbolic leading dimensions")
    strides = [1] * aval.ndim
    return [hlo.slice(v, start, limit, strides) for v in (vals, idx)]


def _top_k_jvp(primals, tangents, *, k):
    (x,), (t,) = primals, tangents
    vals, idx = top_k_p.bind(x, k=k)
    if type(t) is ad.Zero:
        return [vals, idx], [ad.Zero.from_primal_value(vals), ad.Zero.from_primal_value(idx)]
    # The tangent at the chosen indices, as a product with a one-hot mask (n x k per row):
    # made of linear primitives, so its transpose comes for free.
    shape = get_aval(x).shape
    nd = len(shape)
    mask_shape = (*shape, k)
    positions = broadcasted_iota(np.int32, mask_shape, nd - 1)
    chosen = broadcast_in_dim(idx, mask_shape, (*range(nd - 1), nd))
    tdtype = get_aval(t).dtype
    onehot = _ew.convert_element_type(_ew.eq(positions, chosen), tdtype)
    t_b = broadcast_in_dim(t, mask_shape, tuple(range(nd)))
    t_out = reduce_sum(_ew.mul(t_b, onehot), (nd - 1,))
    return [vals, idx], [t_out, ad.Zero.from_primal_value(idx)]


def _top_k_batch(args, dims, *, k):
    (x,), (bd,) = args, dims
    if bd == x.ndim - 1:
        x = batching.moveaxis(x, bd, 0)
        bd = 0
    return top_k_p.bind(x, k=k), [bd, bd]


define_rules(top_k_p, _top_k_abstract_eval, _top_k_lowering, jvp=_top_k_jvp, batching=_top_k_batch)
