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
    (aval_out,) = ctx.avals_out
    zero = mlir.ir_constant(np.zeros((), aval_out.dtype))
    op = hlo.ReduceOp([mlir.aval_to_ir_type(aval_out)], [x], [zero], [0])
    scalar = mlir.aval_to_ir_type(ShapedArray((), aval_out.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    return [op.result]


sum_p = _primitive(
    "reduce_sum",
    lambda x: ShapedArray((), x.dtype, x.weak_type),
    _reduce_sum_lowering,
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


TOY = SimpleNamespace(
    add_p=add_p,
    mul_p=mul_p,
    sin_p=sin_p,
    sum_p=sum_p,
    add=add,
    mul=mul,
    sin=sin_p.bind,
    sum=sum_p.bind,
)


@pytest.fixture
def toy():
    return TOY
