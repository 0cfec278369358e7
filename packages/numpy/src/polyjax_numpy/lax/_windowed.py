"""Windowed reductions: `reduce_window` and the pooling primitives.

    reduce_window_max[window_dimensions=(2, 2) window_strides=(2, 2) padding=((0, 0), (0, 0))
                      base_dilation=(1, 1) window_dilation=(1, 1)]   f32[4,4] -> f32[2,2]

Each output element reduces one window of the operand. The operand is first
dilated (`base_dilation - 1` holes between elements), then padded
(`padding[i] = (low, high)`, filled with the reduction's identity); the window
has `window_dimensions` taps spaced by `window_dilation`, and moves by
`window_strides`. `padding` may also be "VALID" or "SAME".

`reduce_window_sum` is linear; its transpose is a window sum of the cotangent
spread out by the strides. The jvp of `reduce_window_max/min` takes, in each
window, the tangent at the position of the chosen element
(`select_and_gather_add`); the transpose of that sends each cotangent back to
where the window's maximum was (`select_and_scatter_add`, the max-pooling
gradient, lowered to `stablehlo.select_and_scatter`). A general
`reduce_window` with a user computation lowers the computation's jaxpr as the
region (no derivative rule); so does the general `select_and_scatter` (select
and scatter jaxprs, as JAX's params; no derivative rule, as in JAX).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._reductions import (
    _combiner_hlo,
    _identity,
    _is_identity,
    _trace_computation,
)
from polyjax_numpy.lax._shape_ops import pad, slice

__all__ = [
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add",
    "select_and_scatter_add_p",
    "select_and_scatter_p",
]


# ---------------------------------------------------------------------------
# Window geometry


def _dilate(d: int, k: int) -> int:
    return 0 if d == 0 else (d - 1) * k + 1


def _window_out_shape(
    shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple[int, ...]:
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(
        shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        if type(d) is not int:
            # A symbolic axis is supported when the window leaves it alone (batch axes).
            if (w, s, lo, hi, bd) != (1, 1, 0, 0, 1):
                raise NotImplementedError(
                    "windowed reductions that window a symbolic dimension are not supported"
                )
            out.append(d)
            continue
        padded = _dilate(d, bd) + lo + hi
        span = _dilate(w, wd)
        out.append(max(0, (padded - span) // s + 1) if padded >= span else 0)
    return tuple(out)


def _check_params(name: str, operand: ShapedArray, params: dict) -> None:
    nd = operand.ndim
    for key in ("window_dimensions", "window_strides", "padding", "base_dilation",
                "window_dilation"):  # fmt: skip
        if len(params[key]) != nd:
            raise TypeError(
                f"{name}: {key} must have one entry per operand dimension ({nd}), got {params[key]}"
            )
    for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if any(v < 1 for v in params[key]):
            raise TypeError(f"{name}: {key} must be positive, got {params[key]}")


def _pads_from_string(
    shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: str,
    base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> tuple[tuple[int, int], ...]:
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding}")
    pads = []
    for d, w, s, bd, wd in zip(shape, window_dimensions, window_strides, base_dilation,
                               window_dilation):  # fmt: skip
        d, w = _dilate(d, bd), _dilate(w, wd)
        out = -(-d // s)
        total = max(0, (out - 1) * s + w - d)
        small, big = total // 2, total - total // 2
        pads.append((big, small) if kind == "SAME_LOWER" else (small, big))
    return tuple(pads)


def _canonical_params(
    shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None,
    padding: str | Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None,
    window_dilation: Sequence[int] | None,
) -> dict:
    nd = len(shape)
    wdims = tuple(operator.index(w) for w in window_dimensions)
    strides = tuple(operator.index(s) for s in window_strides) if window_strides else (1,) * nd
    bdil = tuple(operator.index(b) for b in base_dilation) if base_dilation else (1,) * nd
    wdil = tuple(operator.index(w) for w in window_dilation) if window_dilation else (1,) * nd
    if isinstance(padding, str):
        pads = _pads_from_string(shape, wdims, strides, padding, bdil, wdil)
    else:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    return dict(
        window_dimensions=wdims,
        window_strides=strides,
        padding=pads,
        base_dilation=bdil,
        window_dilation=wdil,
    )


def _i64_attr(values: Sequence[int]) -> Any:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _padding_attr(padding: Sequence[tuple[int, int]]) -> ir.DenseIntElementsAttr:
    arr = np.asarray(padding, np.int64).reshape(len(padding), 2)
    return ir.DenseIntElementsAttr.get(
        arr, type=ir.RankedTensorType.get(list(arr.shape), ir.IntegerType.get_signless(64))
    )


def _scalar_type(dtype: Any) -> ir.Type:
    return ir.RankedTensorType.get([], mlir.dtype_to_ir_type(dtype))


def _reduce_window_hlo(
    operands: Sequence[ir.Value],
    inits: Sequence[ir.Value],
    out_avals: Sequence[ShapedArray],
    body: Callable[..., Sequence[ir.Value]],
    *,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
) -> list[ir.Value]:
    op = hlo.ReduceWindowOp(
        [mlir.aval_to_ir_type(a) for a in out_avals],
        list(operands),
        list(inits),
        window_dimensions=_i64_attr(window_dimensions),
        window_strides=_i64_attr(window_strides),
        base_dilations=_i64_attr(base_dilation),
        window_dilations=_i64_attr(window_dilation),
        padding=_padding_attr(padding),
    )
    scalars = [_scalar_type(a.dtype) for a in out_avals]
    block = op.regions[0].blocks.append(*scalars, *scalars)
    with ir.InsertionPoint(block):
        hlo.ReturnOp(list(body(*block.arguments)))
    return list(op.results)


# ---------------------------------------------------------------------------
# reduce_window_sum / max / min


def _make_monoid(kind: str, chooser: Primitive | None = None, **rules: Any) -> Primitive:
    """The windowed reduction by `kind`, with its `rules`; the jvp of a max or min
    takes each window's tangent where `chooser` (`ge`, `le`) picks the operand."""
    name = f"reduce_window_{kind}"
    prim = Primitive(name)
    if chooser is not None:
        rules["jvp"] = functools.partial(_chooser_jvp, chooser, prim)

    def abstract_eval(operand: ShapedArray, **params) -> ShapedArray:
        _check_params(name, operand, params)
        if kind == "sum" and operand.dtype == np.dtype(bool):
            raise TypeError(f"{name} does not accept dtype bool")
        shape = _window_out_shape(operand.shape, **params)
        return ShapedArray(shape, operand.dtype, operand.weak_type)

    def lowering(ctx, x, **params):
        dtype = ctx.avals_in[0].dtype
        init = mlir.ir_constant(np.asarray(_identity(kind, dtype), dtype))
        return _reduce_window_hlo([x], [init], ctx.avals_out, _combiner_hlo(kind, dtype), **params)

    batch = functools.partial(_window_batch, prim)
    define_rules(prim, abstract_eval, lowering, batching=batch, **rules)
    return prim


def _insert_unit_window(params: dict, bd: int) -> dict:
    def ins(key, v):
        t = list(params[key])
        t.insert(bd, v)
        return tuple(t)

    out = dict(params)
    for key in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        out[key] = ins(key, 1)
    out["padding"] = ins("padding", (0, 0))
    return out


def _window_batch(prim: Primitive, args, dims, **params):
    (x,), (bd,) = args, dims
    return prim.bind(x, **_insert_unit_window(params, bd)), bd


def _reduce_window_sum_transpose(ct, operand, **params):
    aval = operand.aval
    ct = ad.instantiate_zeros(ct)
    out_shape = get_aval(ct).shape
    cfg = []
    for d, w, s, (lo, _), bd, wd, o in zip(
        aval.shape,
        params["window_dimensions"],
        params["window_strides"],
        params["padding"],
        params["base_dilation"],
        params["window_dilation"],
        out_shape,
    ):
        # ct_in[p] = sum over taps k of (ct spread out by the strides)[p + lo - k*wd]:
        # a window sum of the spread cotangent, padded so that it lines up.
        span = _dilate(w, wd)
        before = span - 1 - lo
        after = _dilate(d, bd) + span - 1 - before - _dilate(o, s)
        cfg.append((before, after, s - 1))
    spread = pad(ct, _ew._convert_element_type(0, aval.dtype, aval.weak_type), cfg)
    nd = aval.ndim
    summed = reduce_window_sum_p.bind(
        spread,
        window_dimensions=params["window_dimensions"],
        window_strides=(1,) * nd,
        padding=((0, 0),) * nd,
        base_dilation=(1,) * nd,
        window_dilation=params["window_dilation"],
    )
    if any(b != 1 for b in params["base_dilation"]):
        limits = tuple(get_aval(summed).shape)
        summed = slice(summed, (0,) * nd, limits, params["base_dilation"])
    return [summed]


def _chooser_jvp(select_prim: Primitive, prim: Primitive, primals, tangents, **params):
    # The tangent in each window is the one where the operand is chosen.
    (x,), (t,) = primals, tangents
    ans = prim.bind(x, **params)
    if type(t) is ad.Zero:
        return ans, ad.Zero.from_primal_value(ans)
    return ans, select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)


reduce_window_sum_p = _make_monoid("sum", linear_transpose=_reduce_window_sum_transpose)
reduce_window_max_p = _make_monoid("max", chooser=_ew.ge_p)
reduce_window_min_p = _make_monoid("min", chooser=_ew.le_p)


# ---------------------------------------------------------------------------
# select_and_gather_add: in each window, the tangent where the operand is chosen

select_and_gather_add_p = Primitive("select_and_gather_add")


def _sga_abstract_eval(tangents: ShapedArray, operand: ShapedArray, *, select_prim, **params):
    if tuple(tangents.shape) != tuple(operand.shape):
        raise TypeError("select_and_gather_add: tangents and operand must have one shape")
    _check_params("select_and_gather_add", operand, params)
    return ShapedArray(_window_out_shape(operand.shape, **params), tangents.dtype)


def _select_direction(select_prim: Primitive) -> str:
    return {"ge": "GE", "le": "LE", "gt": "GT", "lt": "LT"}[select_prim.name]


def _sga_lowering(ctx, t, x, *, select_prim, **params):
    t_aval, x_aval = ctx.avals_in
    direction = _select_direction(select_prim)
    kind = "max" if direction in ("GE", "GT") else "min"
    inits = [
        mlir.ir_constant(np.asarray(_identity(kind, x_aval.dtype), x_aval.dtype)),
        mlir.ir_constant(np.zeros((), t_aval.dtype)),
    ]
    out = ctx.avals_out[0]

    def body(ax, at, bx, bt):
        pick_a = mlir.compare_hlo(ax, bx, direction)
        return [hlo.select(pick_a, ax, bx), hlo.select(pick_a, at, bt)]

    outs = _reduce_window_hlo([x, t], inits, [out.update(dtype=x_aval.dtype), out], body, **params)
    return [outs[1]]


def _sga_jvp(primals, tangents, *, select_prim, **params):
    (t, x), (tt, _) = primals, tangents
    ans = select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)
    if type(tt) is ad.Zero:
        return ans, ad.Zero.from_primal_value(ans)
    return ans, select_and_gather_add_p.bind(tt, x, select_prim=select_prim, **params)


def _no_dilation(name: str, params: dict) -> None:
    if any(b != 1 for b in params["base_dilation"]) or any(
        w != 1 for w in params["window_dilation"]
    ):
        raise NotImplementedError(
            f"{name}: the transpose (the gradient of max/min pooling) is not implemented "
            "with base or window dilation"
        )


def _sga_transpose(ct, t, x, *, select_prim, **params):
    if ad.is_undefined_primal(x):
        raise NotImplementedError("select_and_gather_add is not linear in its operand")
    _no_dilation("select_and_gather_add", params)
    ct = ad.instantiate_zeros(ct)
    out = select_and_scatter_add_p.bind(
        ct,
        x,
        select_prim=select_prim,
        window_dimensions=params["window_dimensions"],
        window_strides=params["window_strides"],
        padding=params["padding"],
    )
    return [out, None]


def _sga_batch(args, dims, *, select_prim, **params):
    (t, x), (tb, xb) = args, dims
    size = t.shape[tb] if tb is not None else x.shape[xb]
    t, x = batching.bdim_at_front(t, tb, size), batching.bdim_at_front(x, xb, size)
    new = _insert_unit_window(params, 0)
    return select_and_gather_add_p.bind(t, x, select_prim=select_prim, **new), 0


define_rules(
    select_and_gather_add_p,
    _sga_abstract_eval,
    _sga_lowering,
    jvp=_sga_jvp,
    transpose=_sga_transpose,
    batching=_sga_batch,
)


# ---------------------------------------------------------------------------
# select_and_scatter_add: each source value goes to where its window's choice is

select_and_scatter_add_p = Primitive("select_and_scatter_add")


def select_and_scatter_add(
    source: Any,
    operand: Any,
    select_prim: Primitive,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
) -> Any:
    """Adds each element of `source` at the position its window of `operand` selects.

    Args:
      source: an array of the windowed output's shape (the cotangent of a max pool).
      operand: the pooled array.
      select_prim: `lax.ge_p` (the window's maximum) or `lax.le_p` (its minimum).
      window_dimensions, window_strides, padding: the window, as for `reduce_window`.

    Returns:
      An array of `operand`'s shape and `source`'s dtype.
    """
    params = _canonical_params(np.shape(operand), window_dimensions, window_strides, padding,
                               None, None)  # fmt: skip
    del params["base_dilation"], params["window_dilation"]
    return select_and_scatter_add_p.bind(source, operand, select_prim=select_prim, **params)


def _ones(nd: int) -> tuple[int, ...]:
    return (1,) * nd


def _ssa_abstract_eval(source: ShapedArray, operand: ShapedArray, *, select_prim, **params):
    nd = operand.ndim
    full = dict(params, base_dilation=_ones(nd), window_dilation=_ones(nd))
    _check_params("select_and_scatter_add", operand, full)
    expected = _window_out_shape(operand.shape, **full)
    if tuple(source.shape) != expected:
        raise TypeError(
            f"select_and_scatter_add: source shape {source.shape} does not match the "
            f"windowed shape {expected}"
        )
    return ShapedArray(operand.shape, source.dtype)


def _ssa_lowering(ctx, source, operand, *, select_prim, **params):
    s_aval, x_aval = ctx.avals_in
    direction = _select_direction(select_prim)
    op = hlo.SelectAndScatterOp(
        mlir.aval_to_ir_type(ctx.avals_out[0]),
        operand,
        source,
        mlir.ir_constant(np.zeros((), s_aval.dtype)),
        window_dimensions=_i64_attr(params["window_dimensions"]),
        window_strides=_i64_attr(params["window_strides"]),
        padding=_padding_attr(params["padding"]),
    )
    xs = _scalar_type(x_aval.dtype)
    block = op.select.blocks.append(xs, xs)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        hlo.ReturnOp([mlir.compare_hlo(a, b, direction)])
    ss = _scalar_type(s_aval.dtype)
    block = op.scatter.blocks.append(ss, ss)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        hlo.ReturnOp([hlo.add(a, b)])
    return [op.result]


def _ssa_jvp(primals, tangents, *, select_prim, **params):
    (s, x), (st, _) = primals, tangents
    ans = select_and_scatter_add_p.bind(s, x, select_prim=select_prim, **params)
    if type(st) is ad.Zero:
        return ans, ad.Zero.from_primal_value(ans)
    return ans, select_and_scatter_add_p.bind(st, x, select_prim=select_prim, **params)


def _ssa_transpose(ct, s, x, *, select_prim, **params):
    if ad.is_undefined_primal(x):
        raise NotImplementedError("select_and_scatter_add is not linear in its operand")
    nd = len(params["window_dimensions"])
    out = select_and_gather_add_p.bind(
        ad.instantiate_zeros(ct),
        x,
        select_prim=select_prim,
        base_dilation=_ones(nd),
        window_dilation=_ones(nd),
        **params,
    )
    return [out, None]


def _ssa_batch(args, dims, *, select_prim, **params):
    (s, x), (sb, xb) = args, dims
    size = s.shape[sb] if sb is not None else x.shape[xb]
    s, x = batching.bdim_at_front(s, sb, size), batching.bdim_at_front(x, xb, size)
    nd = x.ndim - 1
    full = _insert_unit_window(dict(params, base_dilation=_ones(nd), window_dilation=_ones(nd)), 0)
    del full["base_dilation"], full["window_dilation"]
    return select_and_scatter_add_p.bind(s, x, select_prim=select_prim, **full), 0


define_rules(
    select_and_scatter_add_p,
    _ssa_abstract_eval,
    _ssa_lowering,
    jvp=_ssa_jvp,
    transpose=_ssa_transpose,
    batching=_ssa_batch,
)


# ---------------------------------------------------------------------------
# General reduce_window with a user computation

reduce_window_p = Primitive("reduce_window")
reduce_window_p.multiple_results = True


def _rw_abstract_eval(*args, jaxpr, **params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    for o in operands:
        _check_params("reduce_window", o, params)
    shape = _window_out_shape(operands[0].shape, **params)
    return [ShapedArray(shape, i.dtype) for i in inits]


def _rw_lowering(ctx, *args, jaxpr, **params):
    n = len(args) // 2

    def body(*scalars):
        return mlir.jaxpr_subcomp(
            ctx.module_context, jaxpr.jaxpr, jaxpr.consts, scalars, ctx.dim_var_values
        )

    return _reduce_window_hlo(args[:n], args[n:], ctx.avals_out, body, **params)


def _rw_batch(args, dims, *, jaxpr, **params):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce_window under vmap with batched initial values")
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    operands = [batching.bdim_at_front(a, d, size) for a, d in zip(args[:n], dims[:n])]
    out = reduce_window_p.bind(*operands, *args[n:], jaxpr=jaxpr, **_insert_unit_window(params, 0))
    return out, [0] * len(out)


def _rw_jvp(primals, tangents, **params):
    raise NotImplementedError(
        "Differentiation of reduce_window with a general computation is not implemented; "
        "use lax.add, lax.max or lax.min as the computation"
    )


define_rules(reduce_window_p, _rw_abstract_eval, _rw_lowering, batching=_rw_batch, jvp=_rw_jvp)

_MONOIDS = {_ew.add: ("sum", reduce_window_sum_p), _ew.max: ("max", reduce_window_max_p),
            _ew.min: ("min", reduce_window_min_p)}  # fmt: skip


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[..., Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Reduces each window of `operand` with `computation`, starting from `init_value`.

    Args:
      operand: an array, or a tuple of arrays of one shape (reduced together).
      init_value: the scalar the reduction starts from (a tuple for tuple operands);
        it also fills the padding.
      computation: a function of two scalars (two tuples for tuple operands)
        returning their combination; `lax.add`, `lax.max` and `lax.min` with their
        identity as `init_value` use the differentiable primitives.
      window_dimensions: the window's size along each axis.
      window_strides: how far the window moves along each axis (default 1).
      padding: "VALID", "SAME", "SAME_LOWER", or one `(low, high)` pair per axis.
      base_dilation: dilation of the operand (default 1).
      window_dilation: spacing of the window's taps (default 1).

    Returns:
      The windowed reduction (a tuple for tuple operands).
    """
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    inits = [init_value] if single else list(init_value)
    shape = np.shape(operands[0]) if not hasattr(operands[0], "shape") else operands[0].shape
    params = _canonical_params(shape, window_dimensions, window_strides, padding, base_dilation,
                               window_dilation)  # fmt: skip
    if single and computation in _MONOIDS:
        kind, prim = _MONOIDS[computation]
        dtype = get_aval(operand).dtype
        if _is_identity(init_value, kind, dtype):
            return prim.bind(operand, **params)
    init_vals, closed = _trace_computation(computation, operands, inits, single)
    out = reduce_window_p.bind(*operands, *init_vals, jaxpr=closed, **params)
    return out[0] if single else tuple(out)


# ---------------------------------------------------------------------------
# General select_and_scatter, with select and scatter computations

select_and_scatter_p = Primitive("select_and_scatter")


def _sas_abstract_eval(operand, source, init_value, **params):
    nd = operand.ndim
    window = {k: params[k] for k in ("window_dimensions", "window_strides", "padding")}
    full = dict(window, base_dilation=_ones(nd), window_dilation=_ones(nd))
    _check_params("select_and_scatter", operand, full)
    expected = _window_out_shape(operand.shape, **full)
    if tuple(source.shape) != expected:
        raise TypeError(
            f"select_and_scatter: source shape {source.shape} does not match the windowed "
            f"shape {expected}"
        )
    if init_value.shape != () or np.dtype(init_value.dtype) != np.dtype(source.dtype):
        raise TypeError(
            "select_and_scatter: init_value must be a scalar of source's dtype, got "
            f"{init_value.str_short()} for {source.str_short()}"
        )
    return ShapedArray(operand.shape, source.dtype)


def _region(ctx, block, jaxpr, consts):
    with ir.InsertionPoint(block):
        outs = mlir.jaxpr_subcomp(
            ctx.module_context, jaxpr, consts, list(block.arguments), ctx.dim_var_values
        )
        hlo.ReturnOp(list(outs))


def _sas_lowering(
    ctx, operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
    scatter_consts, window_dimensions, window_strides, padding,
):  # fmt: skip
    x_aval, s_aval, _ = ctx.avals_in
    op = hlo.SelectAndScatterOp(
        mlir.aval_to_ir_type(ctx.avals_out[0]),
        operand,
        source,
        init_value,
        window_dimensions=_i64_attr(window_dimensions),
        window_strides=_i64_attr(window_strides),
        padding=_padding_attr(padding),
    )
    xs, ss = _scalar_type(x_aval.dtype), _scalar_type(s_aval.dtype)
    _region(ctx, op.select.blocks.append(xs, xs), select_jaxpr, select_consts)
    _region(ctx, op.scatter.blocks.append(ss, ss), scatter_jaxpr, scatter_consts)
    return [op.result]


def _sas_batch(args, dims, **params):
    (x, s, init), (xb, sb, ib) = args, dims
    if ib is not batching.not_mapped:
        raise NotImplementedError("select_and_scatter under vmap with a batched init_value")
    size = get_aval(x).shape[xb] if xb is not batching.not_mapped else get_aval(s).shape[sb]
    x, s = batching.bdim_at_front(x, xb, size), batching.bdim_at_front(s, sb, size)
    nd = get_aval(x).ndim - 1
    full = _insert_unit_window(
        {
            "window_dimensions": params["window_dimensions"],
            "window_strides": params["window_strides"],
            "padding": params["padding"],
            "base_dilation": _ones(nd),
            "window_dilation": _ones(nd),
        },
        0,
    )
    del full["base_dilation"], full["window_dilation"]
    return select_and_scatter_p.bind(x, s, init, **dict(params, **full)), 0


define_rules(select_and_scatter_p, _sas_abstract_eval, _sas_lowering, batching=_sas_batch)


def _select_and_scatter(
    operand: Any,
    select: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    source: Any,
    init_value: Any,
    scatter: Callable[[Any, Any], Any],
) -> Any:
    """Binds `select_and_scatter_p` (JAX's internal helper of the same name and order).

    In each window of `operand`, `select` (a strict order, ``select(a, b)`` meaning
    "keep `a`") picks one element; the window's `source` value is combined with
    `scatter` into the result at that position, which starts as `init_value`.
    No public function of JAX binds the general primitive; `select_and_scatter_add`
    (the windowed reductions' derivative) is the common form. No jvp, as in JAX.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import lax
      >>> _select_and_scatter(np.array([1.0, 3.0, 2.0], np.float32), lax.ge, (2,), (1,),
      ...                     ((0, 0),), np.ones(2, np.float32), np.float32(0), lax.add)
      Array([0., 2., 0.], dtype=float32)
    """
    x_aval, s_aval = get_aval(operand), get_aval(source)
    sel = trace_to_jaxpr(lambda a, b: [select(a, b)], [ShapedArray((), x_aval.dtype)] * 2)
    sca = trace_to_jaxpr(lambda a, b: [scatter(a, b)], [ShapedArray((), s_aval.dtype)] * 2)
    init = _ew.convert_element_type(init_value, s_aval.dtype)
    return select_and_scatter_p.bind(
        operand,
        source,
        init,
        select_jaxpr=sel.jaxpr,
        select_consts=tuple(sel.consts),
        scatter_jaxpr=sca.jaxpr,
        scatter_consts=tuple(sca.consts),
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides),
        padding=tuple(tuple(p) for p in padding),
    )
