"""Reductions over axes: `reduce_sum/max/min/prod` and `argmax/argmin`.

Each reduction primitive takes the `axes` to reduce (non-negative, unique) and
drops them from the shape:

    reduce_sum[axes=(0,) out_sharding=None]   f32[3,4] -> f32[4]
    argmax[axes=(1,) index_dtype=int32]        f32[3,4] -> i32[3]

They lower to `stablehlo.reduce` with a one-op region starting from the
operation's identity (0 for sums, -inf for max of floats, ...), so reducing an
empty axis gives the identity. `argmax`/`argmin` reduce (value, index) pairs
together: a NaN beats every number (NumPy returns the first NaN), and on ties
the smaller index wins, which makes the region commutative as XLA requires.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import config, dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.aval_sharding import sharding_of
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, mlir
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax import _sharding_constraint as _sc
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, pad, reshape, slice_in_dim

__all__ = [
    "argmax",
    "argmax_p",
    "argmin",
    "argmin_p",
    "reduce_max",
    "reduce_max_p",
    "reduce_min",
    "reduce_min_p",
    "reduce_prod",
    "reduce_prod_p",
    "reduce_sum",
    "reduce_sum_p",
]


def _axes_tuple(axes: Any) -> tuple[int, ...]:
    try:
        return tuple(operator.index(a) for a in axes)
    except TypeError:
        raise TypeError(f"reduction axes must be a sequence of integers, got {axes!r}.") from None


def _check_axes(operand: ShapedArray, axes: tuple[int, ...]) -> None:
    if not all(0 <= a < operand.ndim for a in axes):
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for {operand.str_short()}."
        )
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")


def _reduced_shape(shape: tuple, axes: tuple[int, ...]) -> tuple:
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _scalar_type(dtype: Any) -> ir.Type:
    return ir.RankedTensorType.get([], mlir.dtype_to_ir_type(dtype))


def _reduce_hlo(
    operands: Sequence[ir.Value],
    init_values: Sequence[ir.Value],
    axes: Sequence[int],
    out_avals: Sequence[ShapedArray],
    body: Callable[..., Sequence[ir.Value]],
) -> list[ir.Value]:
    """`stablehlo.reduce` of `operands` over `axes` with the region `body(*accs, *xs)`.

    `out_avals` are the types of the reduced operands, one per operand.
    """
    out_types = [mlir.aval_to_ir_type(a) for a in out_avals]
    op = hlo.ReduceOp(out_types, list(operands), list(init_values), list(axes))
    scalar_types = [_scalar_type(a.dtype) for a in out_avals]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        hlo.ReturnOp(list(body(*block.arguments)))
    return list(op.results)


# ---------------------------------------------------------------------------
# reduce_sum / reduce_prod / reduce_max / reduce_min


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The value that `kind` reductions start from (and return for empty axes).

    `kind` is "sum", "prod", "max" or "min"; windowed and cumulative reductions
    share this.
    """
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype == np.dtype(bool):
        return kind == "min"  # max starts at False, min at True
    if dtypes.issubdtype(dtype, np.complexfloating):
        # Lexicographic order: below every complex number is (-inf, -inf), not -inf+0j.
        inf = -np.inf if kind == "max" else np.inf
        return complex(inf, inf)
    if dtypes.issubdtype(dtype, np.inexact):
        return -np.inf if kind == "max" else np.inf
    info = dtypes.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _is_identity(init: Any, kind: str, dtype: np.dtype) -> bool:
    """Whether `init` is known (not traced) to be the identity of `kind` reductions of `dtype`.

    `lax.reduce` and `lax.reduce_window` then use the differentiable primitives.
    """
    try:
        value = np.asarray(init)
    except Exception:  # a tracer: not known to be the identity
        return False
    return value.shape == () and bool(value == np.asarray(_identity(kind, dtype), dtype))


def _trace_computation(
    computation: Callable[..., Any],
    operands: Sequence[Any],
    init_values: Sequence[Any],
    single: bool,
) -> tuple[list[Any], ClosedJaxpr]:
    """The init values in the operands' dtypes, and `computation` traced on their scalars.

    `computation` combines two scalars (`single`) or two tuples of scalars; the
    jaxpr takes the two groups flat, one after the other.
    """
    init_vals = [
        _ew._convert_element_type(i, get_aval(o).dtype, False) if not hasattr(i, "aval") else i
        for i, o in zip(init_values, operands)
    ]
    scalar_avals = [ShapedArray((), get_aval(i).dtype) for i in init_vals]

    def flat(*xs: Any) -> list[Any]:
        n = len(xs) // 2
        a, b = xs[:n], xs[n:]
        out = computation(a[0], b[0]) if single else computation(tuple(a), tuple(b))
        return [out] if single else list(out)

    return init_vals, trace_to_jaxpr(flat, scalar_avals * 2)


def _combiner_hlo(kind: str, dtype: np.dtype) -> Callable[[ir.Value, ir.Value], list]:
    """The region of a `kind` reduction of `dtype`: two scalars in, their combination out.

    Bools reduce with or/and; complex max/min compare lexicographically (see
    `_elementwise.min_max_hlo`).
    """
    is_bool = dtype == np.dtype(bool)

    def combine(a: ir.Value, b: ir.Value) -> list:
        if kind == "sum":
            return [hlo.add(a, b)]
        if kind == "prod":
            return [hlo.multiply(a, b)]
        if is_bool:
            return [(hlo.or_ if kind == "max" else hlo.and_)(a, b)]
        return [_ew.min_max_hlo(kind, a, b, dtype)]

    return combine


_NARROW_FLOATS = frozenset({np.dtype(np.float16), np.dtype(dtypes.bfloat16)})


def _check_f16_reduction(name: str, operand: ShapedArray) -> None:
    # Sums accumulate in the operand's type: `jax_allow_f16_reductions=False` refuses
    # 16-bit float ones (jnp.sum widens them first, so it is unaffected).
    if not config.allow_f16_reductions.value:
        raise ValueError(
            f"{name} on operand {operand.str_short(short_dtypes=True)} is not allowed when "
            "jax_allow_f16_reductions=False."
        )


def _make_reduction(
    name: str, kind: str, numbers_only: bool, **rules: Any
) -> tuple[Primitive, Callable]:
    """The primitive `name` reducing by `kind`, with its `rules` (its jvp), and its function."""
    prim = Primitive(name)

    def abstract_eval(operand: ShapedArray, *, axes: tuple, out_sharding: Any) -> ShapedArray:
        if numbers_only and operand.dtype == np.dtype(bool):
            raise TypeError(
                f"{name} does not accept dtype bool. Accepted dtypes are subtypes of number."
            )
        _check_axes(operand, axes)
        if kind == "sum" and operand.dtype in _NARROW_FLOATS:
            _check_f16_reduction(name, operand)
        return ShapedArray(_reduced_shape(operand.shape, axes), operand.dtype, operand.weak_type)

    def lowering(ctx, x, *, axes, out_sharding):
        dtype = ctx.avals_in[0].dtype
        init = mlir.ir_constant(np.asarray(_identity(kind, dtype), dtype))
        return _reduce_hlo([x], [init], axes, ctx.avals_out, _combiner_hlo(kind, dtype))

    batch = functools.partial(_reduction_batch, prim)
    define_rules(prim, abstract_eval, lowering, batching=batch, **rules)

    def reduce(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
        return prim.bind(operand, axes=_axes_tuple(axes), out_sharding=out_sharding)

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"""The {kind} of the elements of `operand` over `axes`.

    Args:
      operand: an array{" of a numeric dtype" if numbers_only else ""}.
      axes: the axes to reduce (unique, each in `[0, operand.ndim)`).
      out_sharding: the result's sharding (explicit mode: its type's sharding).

    Returns:
      An array of `operand`'s dtype, with the `axes` removed from its shape.
      Unlike `jnp.{kind}`, narrow types are not widened for accumulation.
    """
    return prim, reduce


# ---------------------------------------------------------------------------
# Autodiff and vmap rules of the reductions, and their declarations


def _reduction_batch(prim: Primitive, args, dims, *, axes, **params):
    """Any reduction under vmap: the reduced axes skip over the batch axis (an
    ``out_sharding``, of the unbatched result, is applied after)."""
    (x,), (bd,) = args, dims
    new_axes = tuple(a + (a >= bd) for a in axes)
    out_bd = bd - sum(a < bd for a in axes)
    wanted = params.get("out_sharding")
    if wanted is not None:
        params = {**params, "out_sharding": None}
    out = prim.bind(x, axes=new_axes, **params)
    return _sc.batched_out_sharding(out, wanted, out_bd), out_bd


def _kept_axes(ndim: int, axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(i for i in range(ndim) if i not in axes)


# reduce_sum is linear: its transpose broadcasts the cotangent back over the axes.
def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
    aval = operand.aval
    # Explicit mode: the cotangent is sharded as the operand (as JAX types it).
    like = sharding_of(aval)
    return [broadcast_in_dim(ct, aval.shape, _kept_axes(aval.ndim, axes), out_sharding=like)]


# max and min: the tangent flows from the elements equal to the result; ties share it
# equally (the mean of their tangents), which keeps the rule symmetric in the tied
# elements (JAX's choice too). The weights depend on primals only, so the linear part
# is a multiply and a sum.
def _reduce_chooser_jvp(g, ans, operand, *, axes, out_sharding):
    shape = get_aval(operand).shape
    kept = _kept_axes(len(shape), axes)
    ans = broadcast_in_dim(ans, shape, kept)
    at_extremum = _ew.convert_element_type(_ew.eq(operand, ans), get_aval(g).dtype)
    counts = broadcast_in_dim(reduce_sum(at_extremum, axes), shape, kept)
    return reduce_sum(_ew.mul(g, _ew.div(at_extremum, counts)), axes)


# prod: the tangent is sum_i t_i * prod_{j != i} x_j. Dividing the product by x_i would
# fail at zeros, so the product is taken as a balanced tree of pairwise products whose
# tangents follow the product rule: no division, and depth log2(n).
def _reduce_prod_jvp(primals, tangents, *, axes, out_sharding):
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes, out_sharding=out_sharding)
    if type(t) is ad.Zero:
        return ans, ad.Zero.from_primal_value(ans)
    aval = get_aval(x)
    kept = _kept_axes(aval.ndim, axes)
    n = _shape_size(aval.shape[a] for a in axes)
    if type(n) is not int:
        raise NotImplementedError(
            "The derivative of reduce_prod over symbolic-size axes is not implemented."
        )
    rest = tuple(aval.shape[a] for a in kept)
    m = _shape_size(rest)
    perm = tuple(axes) + kept
    xs = reshape(x, (n, m), perm)
    ts = reshape(t, (n, m), perm)
    one = _ew._convert_element_type(1, aval.dtype, aval.weak_type)
    zero = _ew._convert_element_type(0, get_aval(ts).dtype, get_aval(ts).weak_type)
    while n > 1:
        if n % 2:  # complete the last pair with a (1, tangent 0) row
            xs = pad(xs, one, ((0, 1, 0), (0, 0, 0)))
            ts = pad(ts, zero, ((0, 1, 0), (0, 0, 0)))
            n += 1
        h = n // 2
        a, b = slice_in_dim(xs, 0, h), slice_in_dim(xs, h, n)
        ta, tb = slice_in_dim(ts, 0, h), slice_in_dim(ts, h, n)
        xs = _ew.mul(a, b)
        ts = _ew.add(_ew.mul(ta, b), _ew.mul(a, tb))
        n = h
    if n == 0:  # an empty product is 1 whatever the operand: zero tangent
        return ans, ad.Zero.from_primal_value(ans)
    return ans, reshape(ts, rest)


def _shape_size(sizes: Any) -> Any:
    size: Any = 1
    for d in sizes:
        size = size * d
    return size


reduce_sum_p, reduce_sum = _make_reduction(
    "reduce_sum", "sum", numbers_only=True, linear_transpose=_reduce_sum_transpose
)
reduce_prod_p, reduce_prod = _make_reduction(
    "reduce_prod", "prod", numbers_only=True, jvp=_reduce_prod_jvp
)
reduce_max_p, reduce_max = _make_reduction(
    "reduce_max", "max", numbers_only=False, jvp_ans_terms=(_reduce_chooser_jvp,)
)
reduce_min_p, reduce_min = _make_reduction(
    "reduce_min", "min", numbers_only=False, jvp_ans_terms=(_reduce_chooser_jvp,)
)


# ---------------------------------------------------------------------------
# argmax / argmin

argmax_p = Primitive("argmax")
argmin_p = Primitive("argmin")


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    """The index of the largest element of `operand` along `axis` (first one on ties).

    NaN counts as larger than every number, so the index of the first NaN is returned
    when there is one (as `np.argmax` does).

    Args:
      operand: an array.
      axis: the axis to reduce, in `[0, operand.ndim)`; it must not be empty.
      index_dtype: an integer dtype for the result.

    Example:
      >>> argmax(np.float32([1, 3, 3]), 0, np.int32).shape
      ()
    """
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmax_p.bind(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    """The index of the smallest element of `operand` along `axis` (first one on ties).

    NaN counts as smaller than every number here (the first NaN's index is returned,
    as `np.argmin` does).
    """
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return argmin_p.bind(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


def _argminmax_abstract_eval(
    name: str, operand: ShapedArray, *, axes: tuple, index_dtype: Any
) -> ShapedArray:
    (axis,) = axes
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
    size = operand.shape[axis]
    if type(size) is int and size < 1:
        raise ValueError(
            f"{name} requires a non-empty reduction dimension: operand.shape={operand.shape} "
            f"axis={axis}"
        )
    if not dtypes.issubdtype(index_dtype, np.integer):
        raise TypeError(
            f"index_dtype must be an integer type, but got {np.dtype(index_dtype).name}"
        )
    if dtypes.issubdtype(operand.dtype, np.complexfloating):
        # As in JAX, whose argmax compares with lax's comparisons, which refuse complex.
        raise TypeError(
            f"{name} does not accept dtype {operand.dtype.name}. Accepted dtypes are "
            "subtypes of integer, floating, bool."
        )
    return ShapedArray(_reduced_shape(operand.shape, axes), index_dtype)


def _argminmax_lowering(direction: str, ctx, x, *, axes, index_dtype):
    aval_in = ctx.avals_in[0]
    dtype = aval_in.dtype
    (axis,) = axes
    indices = mlir.iota(ctx, aval_in.update(dtype=index_dtype, weak_type=False), axis)
    kind = "max" if direction == "GT" else "min"
    init_val = mlir.ir_constant(np.asarray(_identity(kind, dtype), dtype))
    init_idx = mlir.ir_constant(np.asarray(0, index_dtype))
    is_float = dtypes.issubdtype(dtype, np.inexact)

    def body(acc, acc_i, x, x_i):
        # Pick x when it beats acc: strictly better, or a NaN against a number, or
        # as good (equal, or both NaN) with a smaller index.
        better = mlir.compare_hlo(x, acc, direction)
        same = mlir.compare_hlo(x, acc, "EQ")
        if is_float:
            x_nan = mlir.compare_hlo(x, x, "NE")
            acc_nan = mlir.compare_hlo(acc, acc, "NE")
            better = hlo.or_(better, hlo.and_(x_nan, hlo.not_(acc_nan)))
            same = hlo.or_(same, hlo.and_(x_nan, acc_nan))
        earlier = mlir.compare_hlo(x_i, acc_i, "LT")
        pick = hlo.or_(better, hlo.and_(same, earlier))
        return [hlo.select(pick, x, acc), hlo.select(pick, x_i, acc_i)]

    out_idx = ctx.avals_out[0]
    out_avals = [out_idx.update(dtype=dtype), out_idx]
    return [_reduce_hlo([x, indices], [init_val, init_idx], axes, out_avals, body)[1]]


def _define_argminmax(prim: Primitive, direction: str) -> None:
    # Indices are integers: zero (float0) tangents. Under vmap the axis skips the batch axis.
    define_rules(
        prim,
        functools.partial(_argminmax_abstract_eval, prim.name),
        functools.partial(_argminmax_lowering, direction),
        jvp="zero",
        batching=functools.partial(_reduction_batch, prim),
    )


_define_argminmax(argmax_p, "GT")
_define_argminmax(argmin_p, "LT")


# For the derivative rules of `_elementwise` and `_shape_ops`, which this module imports.
sr.ops.reduce_sum = reduce_sum
