"""Toy primitives with lowering rules, so the runtime is tested without polyjax-numpy.

Each toy primitive is what a lax primitive is in miniature: a shape rule, the
eager impl (`dispatch.apply_primitive`) and a StableHLO lowering rule.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pytest
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import dispatch, mlir


def _binary_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"toy binary op needs equal types, got {x} and {y}")
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _primitive(name: str, rule, lowering) -> Primitive:
    p = Primitive(name)
    p.def_abstract_eval(rule)
    p.def_impl(functools.partial(dispatch.apply_primitive, p))
    mlir.register_lowering(p, lowering)
    return p


add_p = _primitive("add", _binary_rule, lambda ctx, x, y: [hlo.add(x, y)])
mul_p = _primitive("mul", _binary_rule, lambda ctx, x, y: [hlo.multiply(x, y)])
sin_p = _primitive("sin", lambda x: x, lambda ctx, x: [hlo.sine(x)])


def _reduce_sum_lowering(ctx, x):
    # The sum of a vector: its one axis reduced.
    return _reduce_axes_lowering(ctx, x, axes=(0,))


sum_p = _primitive(
    "reduce_sum",
    lambda x: ShapedArray((), x.dtype, x.weak_type),
    _reduce_sum_lowering,
)
cos_p = _primitive("cos", lambda x: x, lambda ctx, x: [hlo.cosine(x)])
neg_p = _primitive("neg", lambda x: x, lambda ctx, x: [hlo.negate(x)])
# broadcast a scalar to `shape` (the transpose of reduce_sum)
bcast_p = _primitive(
    "broadcast",
    lambda x, *, shape: ShapedArray(shape, x.dtype, x.weak_type),
    lambda ctx, x, *, shape: [mlir.broadcast_in_dim(ctx, x, ctx.avals_out[0], ())],
)
convert_p = _primitive(
    "convert_element_type",
    lambda x, *, new_dtype: ShapedArray(x.shape, new_dtype),
    lambda ctx, x, *, new_dtype: [mlir.convert_hlo(ctx, x, ctx.avals_in[0], ctx.avals_out[0])],
)


def add(x, y):
    x, y = _match(x, y)
    return add_p.bind(x, y)


def mul(x, y):
    x, y = _match(x, y)
    return mul_p.bind(x, y)


def _match(x, y):
    """Weak Python scalars take the other operand's type (a miniature of lax's rule)."""
    if isinstance(x, int | float) and not isinstance(y, int | float):
        x = np.full(get_aval(y).shape, x, get_aval(y).dtype)
    if isinstance(y, int | float) and not isinstance(x, int | float):
        y = np.full(get_aval(x).shape, y, get_aval(x).dtype)
    return x, y


def _register_ad_rules() -> None:
    """jvp and transpose rules of the toys, written with the helpers lax uses."""
    from polyjax_interpreters import ad

    ad.defjvp(sin_p, lambda g, x: mul_p.bind(g, cos_p.bind(x)))
    ad.defjvp(cos_p, lambda g, x: neg_p.bind(mul_p.bind(g, sin_p.bind(x))))
    ad.deflinear(neg_p, lambda ct: [neg_p.bind(ct)])
    # add is linear, but its jvp keeps a zero tangent symbolic (as lax's add does)
    ad.defjvp(add_p, lambda g, x, y: g, lambda g, x, y: g)
    ad.primitive_transposes[add_p] = lambda ct, x, y: [ct, ct]
    ad.defjvp(mul_p, lambda g, x, y: mul_p.bind(g, y), lambda g, x, y: mul_p.bind(x, g))

    def mul_transpose(ct, x, y):
        if ad.is_undefined_primal(x):
            return [mul_p.bind(ct, y), None]
        return [None, mul_p.bind(x, ct)]

    ad.primitive_transposes[mul_p] = mul_transpose
    ad.deflinear2(sum_p, lambda ct, x: [bcast_p.bind(ct, shape=x.aval.shape)])
    ad.deflinear2(bcast_p, lambda ct, x, *, shape: [sum_p.bind(ct)])

    def convert_jvp(primals, tangents, *, new_dtype):
        (x,), (t,) = primals, tangents
        ans = convert_p.bind(x, new_dtype=new_dtype)
        if type(t) is ad.Zero or not np.issubdtype(new_dtype, np.inexact):
            return ans, ad.Zero.from_primal_value(ans)
        return ans, convert_p.bind(t, new_dtype=new_dtype)

    ad.primitive_jvps[convert_p] = convert_jvp

    def convert_transpose(ct, x, *, new_dtype):
        if type(ct) is ad.Zero:
            return [ad.Zero(ad.tangent_aval(x.aval))]
        return [convert_p.bind(ct, new_dtype=x.aval.dtype)]

    ad.primitive_transposes[convert_p] = convert_transpose


_register_ad_rules()


# Array operations for batching (what lax's transpose/broadcast_in_dim/reshape are to
# polyjax-numpy): NumPy impls (no compile for eager use) and StableHLO lowerings (for jit).


def _numpy_primitive(name: str, impl, rule, lowering) -> Primitive:
    p = Primitive(name)
    p.def_abstract_eval(rule)
    p.def_impl(lambda *args, **params: np.asarray(impl(*map(np.asarray, args), **params)))
    mlir.register_lowering(p, lowering)
    return p


def _out_type(ctx):
    return mlir.aval_to_ir_type(ctx.avals_out[0])


transpose_p = _numpy_primitive(
    "transpose",
    lambda x, *, permutation: np.transpose(x, permutation),
    lambda x, *, permutation: ShapedArray(
        tuple(x.shape[i] for i in permutation), x.dtype, x.weak_type
    ),
    lambda ctx, x, *, permutation: [hlo.transpose(x, list(permutation))],
)
broadcast_in_dim_p = _numpy_primitive(
    "broadcast_in_dim",
    lambda x, *, shape, broadcast_dimensions: np.broadcast_to(
        np.expand_dims(x, [i for i in range(len(shape)) if i not in broadcast_dimensions]),
        shape,
    ),
    lambda x, *, shape, broadcast_dimensions: ShapedArray(shape, x.dtype, x.weak_type),
    lambda ctx, x, *, shape, broadcast_dimensions: [
        hlo.broadcast_in_dim(_out_type(ctx), x, list(broadcast_dimensions))
    ],
)
reshape_p = _numpy_primitive(
    "reshape",
    lambda x, *, new_sizes: np.reshape(x, new_sizes),
    lambda x, *, new_sizes: ShapedArray(new_sizes, x.dtype, x.weak_type),
    lambda ctx, x, *, new_sizes: [hlo.reshape(_out_type(ctx), x)],
)


def _reduce_axes_lowering(ctx, x, *, axes):
    (aval_out,) = ctx.avals_out
    zero = mlir.ir_constant(np.zeros((), aval_out.dtype))
    op = hlo.ReduceOp([mlir.aval_to_ir_type(aval_out)], [x], [zero], list(axes))
    scalar = mlir.aval_to_ir_type(ShapedArray((), aval_out.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return [op.result]


reduce_axes_p = _numpy_primitive(
    "reduce_axes",
    lambda x, *, axes: np.sum(x, axis=tuple(axes)).astype(x.dtype),
    lambda x, *, axes: ShapedArray(
        tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type
    ),
    _reduce_axes_lowering,
)


def transpose(x, permutation):
    return transpose_p.bind(x, permutation=tuple(permutation))


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return broadcast_in_dim_p.bind(
        x, shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions)
    )


def reshape(x, new_sizes):
    return reshape_p.bind(x, new_sizes=tuple(new_sizes))


def reduce_axes(x, axes):
    return reduce_axes_p.bind(x, axes=tuple(axes))


TOY = SimpleNamespace(
    transpose_p=transpose_p,
    broadcast_in_dim_p=broadcast_in_dim_p,
    reshape_p=reshape_p,
    reduce_axes_p=reduce_axes_p,
    transpose=transpose,
    broadcast_in_dim=broadcast_in_dim,
    reshape=reshape,
    reduce_axes=reduce_axes,
    add_p=add_p,
    mul_p=mul_p,
    sin_p=sin_p,
    sum_p=sum_p,
    cos_p=cos_p,
    neg_p=neg_p,
    bcast_p=bcast_p,
    convert_p=convert_p,
    add=add,
    mul=mul,
    sin=sin_p.bind,
    cos=cos_p.bind,
    neg=neg_p.bind,
    sum=sum_p.bind,
    bcast=bcast_p.bind,
    convert=convert_p.bind,
)


@pytest.fixture
def toy():
    return TOY
