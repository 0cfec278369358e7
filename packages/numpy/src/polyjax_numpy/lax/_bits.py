"""Bit-level operations and general reductions.

- `population_count`, `clz`: per-element bit counts of integers (zero tangents);
- `nextafter`: the next representable float from `x1` towards `x2`;
- `bitcast_convert_type`: reinterpret the bits as another dtype; a change of
  width adds (narrower) or removes (wider) a trailing axis of the width ratio;
- `reduce_precision`: round to a float format of `exponent_bits` and
  `mantissa_bits` (linear: tangents and cotangents are rounded the same way);
- `reduce_and/or/xor`: bitwise (or logical) reductions over axes;
- `reduce`: a reduction with a user computation, using the differentiable
  `reduce_sum/max/min` primitives when the computation is `add`/`max`/`min`
  started from its identity; otherwise the general `reduce` primitive, whose
  derivative differentiates a pairwise tree of the computation.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax import _reductions as _red
from polyjax_numpy.lax import _shape_ops as _so
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax import _sharding_constraint as _sc
from polyjax_numpy.lax._declare import define_rules

__all__ = [
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "clz",
    "clz_p",
    "nextafter",
    "nextafter_p",
    "population_count",
    "population_count_p",
    "reduce",
    "reduce_and",
    "reduce_and_p",
    "reduce_or",
    "reduce_or_p",
    "reduce_p",
    "reduce_precision",
    "reduce_precision_p",
    "reduce_xor",
    "reduce_xor_p",
]


# ---------------------------------------------------------------------------
# population_count, clz, nextafter

population_count_p = _ew._unop("population_count", sr.INT, hlo.popcnt, jvp="zero")
clz_p = _ew._unop("clz", sr.INT, hlo.count_leading_zeros, jvp="zero")
# No jvp, as in JAX: differentiating nextafter raises. A zero jvp was wrong, since
# nextafter(x1, x2) moves with x1: `spacing(x) = nextafter(x, inf) - x` got -1.
nextafter_p = _ew._binop("nextafter", sr.FLOAT, chlo.next_after)


def population_count(x: Any) -> Any:
    """The number of set bits in each element of the integer array `x`."""
    return population_count_p.bind(x)


def clz(x: Any) -> Any:
    """The number of leading zero bits in each element of the integer array `x`."""
    return clz_p.bind(x)


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable value after `x1` in the direction of `x2` (elementwise)."""
    return _ew._binary(nextafter_p, x1, x2)


# ---------------------------------------------------------------------------
# bitcast_convert_type

bitcast_convert_type_p = Primitive("bitcast_convert_type")


def _bitcast_rule(operand: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    old = operand.dtype
    if old != new_dtype and any(d == np.dtype(bool) or d.kind == "c" for d in (old, new_dtype)):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            f"operand and destination types match. Got operand dtype={old}, "
            f"new_dtype={new_dtype!r}. Consider using the arr.view() method instead."
        )
    a, b = old.itemsize, new_dtype.itemsize
    shape = tuple(operand.shape)
    if a > b:
        shape = (*shape, a // b)
    elif a < b:
        if not shape or shape[-1] != b // a:
            raise TypeError(
                f"Attempting to convert array of shape {shape} from {old} of size {a} to "
                f"dtype {new_dtype} of size {b}, but the last dimension must be {b // a}"
            )
        shape = shape[:-1]
    return ShapedArray(shape, new_dtype)


def _bitcast_lowering(ctx, x, *, new_dtype):
    return [hlo.bitcast_convert(mlir.aval_to_ir_type(ctx.avals_out[0]), x)]


def _bitcast_batch(args, dims, *, new_dtype):
    (x,), (bd,) = args, dims
    x = batching.moveaxis(x, bd, 0)
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), 0


define_rules(
    bitcast_convert_type_p, _bitcast_rule, _bitcast_lowering, jvp="zero", batching=_bitcast_batch
)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterprets the bits of `operand` as `new_dtype`.

    Args:
      operand: an array (not bool).
      new_dtype: the dtype to reinterpret as. When it is narrower, the result gets a
        trailing axis of size `itemsize ratio`; when wider, `operand`'s last axis must
        have that size and is removed.
    """
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


# ---------------------------------------------------------------------------
# reduce_precision

reduce_precision_p = Primitive("reduce_precision")


def _reduce_precision_rule(operand: ShapedArray, *, exponent_bits, mantissa_bits):
    sr.check_dtypes("reduce_precision", (operand,), (sr.FLOAT,))
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError("reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _reduce_precision_lowering(ctx, x, *, exponent_bits, mantissa_bits):
    return [hlo.reduce_precision(x, exponent_bits, mantissa_bits)]


def _reduce_precision_transpose(ct, operand, *, exponent_bits, mantissa_bits):
    ct = ad.instantiate_zeros(ct)
    return [reduce_precision_p.bind(ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)]


define_rules(
    reduce_precision_p,
    _reduce_precision_rule,
    _reduce_precision_lowering,
    linear_transpose=_reduce_precision_transpose,
    batching="vectorized",
)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Rounds `operand` to the float format of `exponent_bits` and `mantissa_bits`.

    The result keeps `operand`'s dtype; e.g. `(8, 7)` rounds float32 to bfloat16
    values and `(5, 10)` to float16 values (overflowing to infinity).
    """
    return reduce_precision_p.bind(
        operand,
        exponent_bits=operator.index(exponent_bits),
        mantissa_bits=operator.index(mantissa_bits),
    )


# ---------------------------------------------------------------------------
# reduce_and / reduce_or / reduce_xor


def _make_bitwise_reduction(kind: str) -> tuple[Primitive, Callable]:
    name = f"reduce_{kind}"
    prim = Primitive(name)
    combine = {"and": hlo.and_, "or": hlo.or_, "xor": hlo.xor}[kind]

    def abstract_eval(operand: ShapedArray, *, axes: tuple) -> ShapedArray:
        sr.check_dtypes(name, (operand,), (sr.BOOL_OR_INT,))
        _red._check_axes(operand, axes)
        return ShapedArray(_red._reduced_shape(operand.shape, axes), operand.dtype)

    def lowering(ctx, x, *, axes):
        dtype = ctx.avals_in[0].dtype
        init = np.asarray(-1 if kind == "and" else 0).astype(dtype)
        if dtype == np.dtype(bool):
            init = np.asarray(kind == "and")
        return _red._reduce_hlo(
            [x], [mlir.ir_constant(init)], axes, ctx.avals_out, lambda a, b: [combine(a, b)]
        )

    define_rules(
        prim,
        abstract_eval,
        lowering,
        jvp="zero",
        batching=functools.partial(_red._reduction_batch, prim),
    )

    def fun(operand: Any, axes: Sequence[int]) -> Any:
        return prim.bind(operand, axes=_red._axes_tuple(axes))

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"""The bitwise (logical for bool) {kind} of `operand` over `axes`."""
    return prim, fun


reduce_and_p, reduce_and = _make_bitwise_reduction("and")
reduce_or_p, reduce_or = _make_bitwise_reduction("or")
reduce_xor_p, reduce_xor = _make_bitwise_reduction("xor")


# ---------------------------------------------------------------------------
# General reduce with a user computation

reduce_p = Primitive("reduce")
reduce_p.multiple_results = True


def _reduce_abstract_eval(*args, computation, dimensions):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    shapes = {tuple(o.shape) for o in operands}
    if len(shapes) != 1:
        raise TypeError("reduce operands must all have the same shape")
    for o in operands:
        _red._check_axes(o, dimensions)
    shape = _red._reduced_shape(operands[0].shape, dimensions)
    return [ShapedArray(shape, i.dtype) for i in inits]


def _reduce_lowering(ctx, *args, computation, dimensions):
    n = len(args) // 2

    def body(*scalars):
        return mlir.jaxpr_subcomp(
            ctx.module_context,
            computation.jaxpr,
            computation.consts,
            scalars,
            ctx.dim_var_values,
        )

    return _red._reduce_hlo(args[:n], args[n:], dimensions, ctx.avals_out, body)


def _reduce_batch(args, dims, *, computation, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce under vmap with batched initial values")
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    operands = [batching.bdim_at_front(a, d, size) for a, d in zip(args[:n], dims[:n])]
    new_dims = tuple(d + 1 for d in dimensions)
    out = reduce_p.bind(*operands, *args[n:], computation=computation, dimensions=new_dims)
    return out, [0] * len(out)


def _reduce_jvp(primals, tangents, *, computation, dimensions):
    # The derivative of a reduction by an arbitrary (associative) computation: the same
    # reduction written as a tree of elementwise applications of the computation, which
    # `ad.jvp` differentiates. The primal output stays XLA's reduce.
    n = len(primals) // 2
    if any(type(t) is not ad.Zero for t in tangents[n:]):
        raise NotImplementedError(
            "Differentiation of reduce with respect to its initial values is not implemented"
        )
    out = reduce_p.bind(*primals, computation=computation, dimensions=dimensions)
    shape = get_aval(primals[0]).shape
    if not all(isinstance(shape[d], int) for d in dimensions):
        raise NotImplementedError(
            "Differentiation of reduce over symbolic dimensions is not implemented "
            f"(operand shape {shape}, dimensions {dimensions})"
        )
    size = math.prod(shape[d] for d in dimensions)
    if size == 0:  # the initial values, which have no tangent
        return out, [ad.Zero.from_primal_value(o) for o in out]
    kept = tuple(d for d in range(len(shape)) if d not in dimensions)
    kept_shape = tuple(shape[d] for d in kept)
    # the computation is traced on scalars: vmap applies it to arrays, element by element.
    combine = batching.vmap(lambda *ab: eval_jaxpr(computation.jaxpr, computation.consts, *ab))

    def pairwise(xs, ys):
        flat = [_so.reshape(v, (math.prod(get_aval(v).shape),)) for v in (*xs, *ys)]
        return [_so.reshape(c, get_aval(x).shape) for c, x in zip(combine(*flat), xs)]

    def tree(*xs):
        xs = [_so.reshape(_so.transpose(x, (*dimensions, *kept)), (size, *kept_shape)) for x in xs]
        m = size
        while m > 1:
            half = m // 2
            lo = [_so.slice_in_dim(x, 0, half) for x in xs]
            hi = [_so.slice_in_dim(x, half, 2 * half) for x in xs]
            ys = pairwise(lo, hi)
            if m % 2:  # the odd one out joins the next round
                ys = [
                    _so.concatenate([y, _so.slice_in_dim(x, m - 1, m)], 0) for y, x in zip(ys, xs)
                ]
            xs, m = ys, half + m % 2
        return [_so.squeeze(x, (0,)) for x in xs]

    _, tangents_out = ad.jvp(
        tree, list(primals[:n]), [ad.instantiate_zeros(t) for t in tangents[:n]]
    )
    return out, tangents_out


define_rules(
    reduce_p, _reduce_abstract_eval, _reduce_lowering, batching=_reduce_batch, jvp=_reduce_jvp
)

_MONOIDS = {
    _ew.add: ("sum", _red.reduce_sum),
    _ew.mul: ("prod", _red.reduce_prod),
    _ew.max: ("max", _red.reduce_max),
    _ew.min: ("min", _red.reduce_min),
}


def reduce(
    operands: Any,
    init_values: Any,
    computation: Callable[..., Any],
    dimensions: Sequence[int],
    out_sharding: Any = None,
) -> Any:
    """Reduces `operands` over `dimensions` with `computation`, from `init_values`.

    Args:
      operands: an array, or a tuple of arrays of one shape (reduced together).
      init_values: the scalar(s) the reduction starts from, one per operand.
      computation: a function of two scalars (two tuples for tuple operands)
        returning their combination; it should be associative and commutative.
      dimensions: the axes to reduce.
      out_sharding: the result's sharding (explicit mode), of every result. A sum,
        product, max or min is the reduction primitive's ``out_sharding`` (JAX honours
        it only for a sum); another `computation`'s results are resharded to it.

    Returns:
      The reduced array (a tuple for tuple operands).

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import lax
      >>> reduce(np.float32([1, 2, 3]), np.float32(0), lax.add, (0,))
      Array(6., dtype=float32)
    """
    single = not isinstance(operands, (tuple, list))
    ops = [operands] if single else list(operands)
    inits = [init_values] if single else list(init_values)
    dims = tuple(operator.index(d) for d in dimensions)
    if single and computation in _MONOIDS:
        kind, fn = _MONOIDS[computation]
        if _red._is_identity(init_values, kind, get_aval(operands).dtype):
            return fn(operands, dims, out_sharding=out_sharding)
    init_vals, closed = _red._trace_computation(computation, ops, inits, single)
    out = reduce_p.bind(*ops, *init_vals, computation=closed, dimensions=dims)
    if out_sharding is not None:
        out = [_sc.reshard(o, out_sharding) for o in out]
    return out[0] if single else tuple(out)
