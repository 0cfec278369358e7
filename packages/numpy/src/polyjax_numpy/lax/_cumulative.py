"""Cumulative reductions: `cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`.

    cumsum[axis=0 reverse=False]   f32[4,3] -> f32[4,3]

Each is a primitive of its own (transformations see `cumsum`, not a loop); it
lowers to a `stablehlo.reduce_window` whose window covers the whole axis and is
padded by `n - 1` identity elements before (or after, for `reverse`) it.

Derivatives: `cumsum` is linear (its transpose is the reversed `cumsum`). The
others differentiate a log-depth prefix scan written with `pad`/`slice` and the
elementwise op (Hillis-Steele): zero-safe for `cumprod`, tie-splitting like
`max` for `cummax`/`cummin`, and overflow-free for `cumlogsumexp`.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, mlir
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax import _reductions
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._shape_ops import pad, slice_in_dim

__all__ = [
    "cumlogsumexp",
    "cumlogsumexp_p",
    "cummax",
    "cummax_p",
    "cummin",
    "cummin_p",
    "cumprod",
    "cumprod_p",
    "cumsum",
    "cumsum_p",
]


def _identity(kind: str, dtype: np.dtype) -> Any:
    return -np.inf if kind == "logsumexp" else _reductions._identity(kind, dtype)


def _logaddexp(a: Any, b: Any) -> Any:
    # max(a, b) + log1p(exp(-|a - b|)); equal arguments (both infinite included) give
    # a difference of 0 instead of inf - inf.
    m = _ew.max(a, b)
    d = _ew.select_n(_ew.eq(a, b), _ew.sub(a, b), _ew._zeros_like(a))
    return _ew.add(m, _ew.log1p(_ew.exp(_ew.neg(_ew.abs(d)))))


def _logaddexp_hlo(a: ir.Value, b: ir.Value, dtype: np.dtype) -> ir.Value:
    d = hlo.select(
        mlir.compare_hlo(a, b, "EQ"), mlir.ir_constant(np.zeros((), dtype)), hlo.subtract(a, b)
    )
    softplus = hlo.log_plus_one(hlo.exponential(hlo.negate(hlo.abs(d))))
    return hlo.add(hlo.maximum(a, b), softplus)


_COMBINE_EW: dict[str, Callable[[Any, Any], Any]] = {
    "sum": _ew.add,
    "prod": _ew.mul,
    "max": _ew.max,
    "min": _ew.min,
    "logsumexp": _logaddexp,
}


def _prefix_scan(kind: str, x: Any, axis: int, reverse: bool) -> Any:
    """Inclusive prefix combination of `x` along `axis` in log2(n) shifted steps."""
    aval = get_aval(x)
    n = aval.shape[axis]
    op = _COMBINE_EW[kind]
    ident = _ew._convert_element_type(_identity(kind, aval.dtype), aval.dtype, aval.weak_type)
    shift = 1
    while shift < n:
        cfg = [(0, 0, 0)] * aval.ndim
        if reverse:
            part = slice_in_dim(x, shift, n, axis=axis)
            cfg[axis] = (0, shift, 0)
        else:
            part = slice_in_dim(x, 0, n - shift, axis=axis)
            cfg[axis] = (shift, 0, 0)
        x = op(x, pad(part, ident, cfg))
        shift *= 2
    return x


def _dynamic_cumulative(ctx, x, init, axis: int, reverse: bool, combine) -> ir.Value:
    """The cumulative reduction along an axis of symbolic size `n`: a window of `n`
    padded by `n - 1`, as a `stablehlo.dynamic_reduce_window` custom call whose
    sizes are operands; shape refinement turns it into a `reduce_window`."""
    aval = ctx.avals_in[0]
    n, nd = aval.shape[axis], aval.ndim
    scalar = ir.RankedTensorType.get([], mlir.dtype_to_ir_type(aval.dtype))
    mctx = ctx.module_context
    with ir.InsertionPoint(mctx.module.body):
        reducer = func.FuncOp(
            "cumulative_reducer",
            ir.FunctionType.get([scalar, scalar], [scalar]),
            visibility="private",
        )
    reducer_name = mctx.symbol_table.insert(reducer)  # renames on clash
    with ir.InsertionPoint(reducer.add_entry_block()):
        func.ReturnOp(combine(*reducer.arguments, aval.dtype))
    window = [n if d == axis else 1 for d in range(nd)]
    pads = [(0, 0)] * nd
    pads[axis] = (0, n - 1) if reverse else (n - 1, 0)
    ones = mlir.ir_constant(np.ones(nd, np.int32))
    padding = hlo.reshape(
        ir.RankedTensorType.get([nd, 2], ir.IntegerType.get_signless(32)),
        mlir.shape_tensor(ctx, [p for pair in pads for p in pair]),
    )
    op = hlo.CustomCallOp(
        [mlir.aval_to_ir_type(ctx.avals_out[0])],
        [x, init, mlir.shape_tensor(ctx, window), ones, ones, ones, padding],
        call_target_name=ir.StringAttr.get("stablehlo.dynamic_reduce_window"),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2),
        called_computations=ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(reducer_name.value)]),
    )
    return op.result


def _make(
    kind: str, name: str, accepted: str, linear_transpose: Callable | None = None
) -> tuple[Primitive, Callable]:
    """The cumulative-`kind` primitive and its function. A linear one (cumsum) has
    its `linear_transpose`; the others differentiate the prefix scan they compute."""
    prim = Primitive(name)

    def abstract_eval(operand: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if not 0 <= axis < operand.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of rank {operand.ndim}")
        dt = operand.dtype
        ok = {
            "number": dt != np.dtype(bool),
            "any": True,
            "float": dtypes.issubdtype(dt, np.floating),
        }[accepted]
        if not ok:
            raise TypeError(f"{name} does not accept dtype {dt.name}")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)

    def combine(a, b, dtype):
        if kind == "logsumexp":
            return [_logaddexp_hlo(a, b, dtype)]
        return _reductions._combiner_hlo(kind, dtype)(a, b)

    def lowering(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        n = aval.shape[axis]
        nd = aval.ndim
        init = mlir.ir_constant(np.asarray(_identity(kind, aval.dtype), aval.dtype))
        if type(n) is not int:
            return [_dynamic_cumulative(ctx, x, init, axis, reverse, combine)]
        window = [1] * nd
        window[axis] = max(n, 1)
        padding = [[0, 0] for _ in range(nd)]
        padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
        out_type = mlir.aval_to_ir_type(ctx.avals_out[0])
        op = hlo.ReduceWindowOp(
            [out_type],
            [x],
            [init],
            window_dimensions=window,
            window_strides=[1] * nd,
            base_dilations=[1] * nd,
            window_dilations=[1] * nd,
            padding=ir.DenseIntElementsAttr.get(
                np.asarray(padding, np.int64),
                type=ir.RankedTensorType.get([nd, 2], ir.IntegerType.get_signless(64)),
            ),
        )
        scalar = ir.RankedTensorType.get([], mlir.dtype_to_ir_type(aval.dtype))
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.ReturnOp(combine(*block.arguments, aval.dtype))
        return op.results

    def fun(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        nd = len(np.shape(operand)) if not hasattr(operand, "ndim") else operand.ndim
        ax = operator.index(axis)
        if ax < 0:
            ax += nd
        return prim.bind(operand, axis=ax, reverse=bool(reverse))

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"""The cumulative {kind} of `operand` along `axis`.

    Args:
      operand: an array.
      axis: the axis to accumulate along (negative counts from the end).
      reverse: accumulate from the end of the axis towards its start.

    Returns:
      An array of `operand`'s shape and dtype.
    """

    def batch(args, dims, *, axis, reverse):
        (x,), (bd,) = args, dims
        return prim.bind(x, axis=axis + (axis >= bd), reverse=reverse), bd

    if linear_transpose is not None:
        rules = {"linear_transpose": linear_transpose}
    else:
        rules = {"jvp": functools.partial(_scan_jvp, prim, kind)}
    define_rules(prim, abstract_eval, lowering, batching=batch, **rules)
    return prim, fun


def _cumsum_transpose(ct, operand, *, axis, reverse):
    return [cumsum_p.bind(ad.instantiate_zeros(ct), axis=axis, reverse=not reverse)]


def _scan_jvp(prim: Primitive, kind: str, primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    ans = prim.bind(x, axis=axis, reverse=reverse)
    if type(t) is ad.Zero:
        return ans, ad.Zero.from_primal_value(ans)
    _, t_out = ad.jvp(lambda v: _prefix_scan(kind, v, axis, reverse), (x,), (t,))
    return ans, t_out


cumsum_p, cumsum = _make("sum", "cumsum", "number", linear_transpose=_cumsum_transpose)
cumprod_p, cumprod = _make("prod", "cumprod", "number")
cummax_p, cummax = _make("max", "cummax", "any")
cummin_p, cummin = _make("min", "cummin", "any")
cumlogsumexp_p, cumlogsumexp = _make("logsumexp", "cumlogsumexp", "float")
