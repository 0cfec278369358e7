"""Toy primitives for core's tests, evaluated with NumPy.

Core knows no real operations; these stand in for lax. The `toy` fixture also
registers `+`, `*`, `-` and `[]` on tracers for the duration of a test and
restores whatever was registered before, so these toys never leak into other
packages' tests running in the same process.
"""

import types

import numpy as np
import pytest
from hypothesis import settings

from polyjax_core import tracing
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.dtypes import result_type
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.symbolic_dims import broadcast_shapes

# Hypothesis's per-example deadline is a timing assertion: on a loaded CI machine
# it fails tests whose results are right. Examples are judged by what they compute.
settings.register_profile("polyjax", deadline=None)
settings.load_profile("polyjax")


def _unary(name, fn):
    p = Primitive(name)
    p.def_impl(fn)
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    return p


def _binary(name, fn):
    p = Primitive(name)
    p.def_impl(lambda x, y: np.asarray(fn(x, y), result_type(x, y)))
    p.def_abstract_eval(
        lambda x, y: ShapedArray(
            broadcast_shapes(x.shape, y.shape),
            result_type(x, y),
            weak_type=x.weak_type and y.weak_type,
        )
    )
    return p


sin_p = _unary("sin", np.sin)
cos_p = _unary("cos", np.cos)
add_p = _binary("add", np.add)
mul_p = _binary("mul", np.multiply)
sub_p = _binary("sub", np.subtract)

reduce_sum_p = Primitive("reduce_sum")
reduce_sum_p.def_impl(lambda x, *, axes: np.sum(x, axis=axes).astype(x.dtype))
reduce_sum_p.def_abstract_eval(
    lambda x, *, axes: ShapedArray(
        tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype
    )
)

# A higher-order primitive in the initial style: the body is a ClosedJaxpr param.
call_p = Primitive("toy_call")
call_p.multiple_results = True
call_p.def_impl(lambda *args, jaxpr: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args))
call_p.def_abstract_eval(lambda *avals, jaxpr: jaxpr.out_avals)

# Several sub-jaxprs in a tuple param, like cond's branches.
switch_p = Primitive("toy_switch")
switch_p.multiple_results = True
switch_p.def_impl(
    lambda i, *args, branches: eval_jaxpr(branches[int(i)].jaxpr, branches[int(i)].consts, *args)
)
switch_p.def_abstract_eval(lambda i, *avals, branches: branches[0].out_avals)


@pytest.fixture
def toy():
    saved = dict(tracing._tracer_methods)
    tracing.register_tracer_method("__add__", lambda x, y: add_p.bind(x, y))
    tracing.register_tracer_method("__radd__", lambda x, y: add_p.bind(y, x))
    tracing.register_tracer_method("__mul__", lambda x, y: mul_p.bind(x, y))
    tracing.register_tracer_method("__rmul__", lambda x, y: mul_p.bind(y, x))
    tracing.register_tracer_method("__sub__", lambda x, y: sub_p.bind(x, y))
    try:
        yield types.SimpleNamespace(
            sin=sin_p,
            cos=cos_p,
            add=add_p,
            mul=mul_p,
            sub=sub_p,
            reduce_sum=reduce_sum_p,
            call=call_p,
            switch=switch_p,
        )
    finally:
        tracing._tracer_methods.clear()
        tracing._tracer_methods.update(saved)
