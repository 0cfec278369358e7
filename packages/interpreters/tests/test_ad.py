"""Tests of automatic differentiation (ad.py) on the toy primitives of conftest."""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import dtypes, make_jaxpr
from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters import ad

f32 = np.float32


def prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_jvp_matches_analytic(toy):
    x = np.linspace(-1, 1, 5, dtype=f32)
    t = np.linspace(0.5, 2, 5, dtype=f32)
    y, dy = ad.jvp(lambda x: toy.sin(toy.mul(x, x)), (x,), (t,))
    np.testing.assert_allclose(y, np.sin(x * x), rtol=1e-6)
    np.testing.assert_allclose(dy, np.cos(x * x) * 2 * x * t, rtol=1e-5)


def test_jvp_pytrees_and_aux(toy):
    x = {"a": f32(0.5), "b": [f32(2.0)]}
    t = {"a": f32(1.0), "b": [f32(0.0)]}

    def f(p):
        return {"out": toy.mul(p["a"], p["b"][0])}, toy.sin(p["a"])

    out, tout, aux = ad.jvp(f, (x,), (t,), has_aux=True)
    assert tout["out"] == pytest.approx(2.0)
    assert out["out"] == pytest.approx(1.0)
    assert aux == pytest.approx(np.sin(0.5))
    assert not isinstance(aux, ad.JVPTracer)


def test_symbolic_zero_tangent_records_nothing(toy):
    x = np.ones(3, f32)

    def f(x, y, t):
        zero = ad.Zero.from_primal_value(y)
        g = lambda x, y: [toy.add(toy.sin(x), toy.cos(y))]  # noqa: E731
        return ad.jvp_flat(g, (x, y), (t, zero))[1]

    closed = make_jaxpr(f)(x, x, x)
    # cos y is the primal; its tangent (sin y, neg, mul) is never computed
    assert prims(closed) == ["sin", "cos", "mul", "cos", "add"]


def test_jvp_errors(toy):
    with pytest.raises(TypeError, match="must be tuples or lists"):
        ad.jvp(toy.sin, f32(1.0), f32(1.0))
    with pytest.raises(TypeError, match="same tree structure"):
        ad.jvp(toy.sin, (f32(1.0),), ([f32(1.0)],))
    with pytest.raises(TypeError, match="expected tangent dtype float0"):
        ad.jvp(lambda x: x, (np.int32(1),), (f32(1.0),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        ad.jvp(toy.sin, (np.ones(3, f32),), (np.ones(4, f32),))


def test_int_inputs_get_float0_tangents(toy):
    def f(x, n):
        return toy.mul(x, toy.convert(n, new_dtype=np.dtype(f32))), n

    n = np.int32(3)
    (y, m), (dy, dm) = ad.jvp(f, (f32(2.0), n), (f32(1.0), np.zeros((), dtypes.float0)))
    assert dy == pytest.approx(3.0)
    assert dm.dtype == dtypes.float0


def test_add_any(toy):
    a = ShapedArray((2,), f32)
    closed = make_jaxpr(lambda x, y: ad.add_tangents(x, y))(np.ones(2, f32), np.ones(2, f32))
    assert prims(closed) == ["add_any"]
    assert closed.out_avals == [a]
    np.testing.assert_array_equal(ad.add_any_p.bind(np.ones(2, f32), np.ones(2, f32)), [2, 2])
    z = ad.Zero(a)
    assert ad.add_tangents(z, 5) == 5 and ad.add_tangents(5, z) == 5
    np.testing.assert_array_equal(ad.instantiate_zeros(z), np.zeros(2, f32))
