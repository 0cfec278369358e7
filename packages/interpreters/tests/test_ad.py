"""Tests of automatic differentiation (ad.py) on the toy primitives of conftest.

NumPy gives the expected derivatives; jaxprs are inspected to check that
symbolic zeros are never materialized and that the primal part of a
linearization does not leak into the linear part.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import dtypes, make_jaxpr
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit

from . import test_batching  # noqa: F401 (registers the toys' batching rules)
from .conftest import TOY as toy

f32 = np.float32


def prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def all_prims(jaxpr):
    """Primitive names of `jaxpr` and of every jaxpr nested in its params."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    out = []
    for e in jaxpr.eqns:
        out.append(e.primitive.name)
        for v in e.params.values():
            if hasattr(v, "eqns"):
                out += all_prims(v)
    return out


def floats(xs):
    return tuple(float(x) for x in xs)


def arr(*shape, start=0.5):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=f32) / 4 + start).reshape(shape)


def f_np(x):  # the reference of f below
    return np.sum(np.sin(x * x))


def f(x):
    return toy.sum(toy.sin(toy.mul(x, x)))


def df_np(x):
    return np.cos(x * x) * 2 * x


# ---------------------------------------------------------------------------
# Forward mode


def test_jvp_matches_analytic():
    x = np.linspace(-1, 1, 5, dtype=f32)
    t = np.linspace(0.5, 2, 5, dtype=f32)
    y, dy = ad.jvp(lambda x: toy.sin(toy.mul(x, x)), (x,), (t,))
    np.testing.assert_allclose(y, np.sin(x * x), rtol=1e-6)
    np.testing.assert_allclose(dy, np.cos(x * x) * 2 * x * t, rtol=1e-5)


def test_jvp_pytrees_and_aux():
    x = {"a": f32(0.5), "b": [f32(2.0)]}
    t = {"a": f32(1.0), "b": [f32(0.0)]}

    def g(p):
        return {"out": toy.mul(p["a"], p["b"][0])}, toy.sin(p["a"])

    out, tout, aux = ad.jvp(g, (x,), (t,), has_aux=True)
    assert tout["out"] == pytest.approx(2.0)
    assert out["out"] == pytest.approx(1.0)
    assert aux == pytest.approx(np.sin(0.5))
    assert not isinstance(aux, ad.JVPTracer)


def test_jvp_of_jvp_is_second_derivative():
    def d_sin(x):
        return ad.jvp(toy.sin, (x,), (f32(1.0),))[1]

    _, dd = ad.jvp(d_sin, (f32(0.7),), (f32(1.0),))
    assert dd == pytest.approx(-np.sin(0.7), rel=1e-5)


def test_symbolic_zero_tangent_records_nothing():
    x = np.ones(3, f32)

    def g(x, y, t):
        zero = ad.Zero.from_primal_value(y)
        h = lambda x, y: [toy.add(toy.sin(x), toy.cos(y))]  # noqa: E731
        return ad.jvp_flat(h, (x, y), (t, zero))[1]

    # cos y is the primal; its tangent (sin y, mul, neg) is never computed
    assert prims(make_jaxpr(g)(x, x, x)) == ["sin", "cos", "mul", "cos", "add"]


def test_constants_are_not_differentiated():
    # An equation whose inputs all have zero tangents is bound as it is.
    c = arr(3)
    closed = make_jaxpr(lambda x, t: ad.jvp(lambda x: toy.mul(x, toy.sin(c)), (x,), (t,)))(c, c)
    assert prims(closed) == ["sin", "mul", "mul"]


def test_jvp_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        ad.jvp(toy.sin, f32(1.0), f32(1.0))
    with pytest.raises(TypeError, match="same tree structure"):
        ad.jvp(toy.sin, (f32(1.0),), ([f32(1.0)],))
    with pytest.raises(TypeError, match="expected tangent dtype float0, but got tangent dtype"):
        ad.jvp(lambda x: x, (np.int32(1),), (f32(1.0),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        ad.jvp(toy.sin, (np.ones(3, f32),), (np.ones(4, f32),))


def test_jvp_int_inputs_and_outputs_have_float0_tangents():
    def g(x, n):
        return toy.mul(x, toy.convert(n, new_dtype=np.dtype(f32))), n

    n = np.int32(3)
    (_, m), (dy, dm) = ad.jvp(g, (f32(2.0), n), (f32(1.0), np.zeros((), dtypes.float0)))
    assert dy == pytest.approx(3.0)
    assert m == 3 and dm.dtype == dtypes.float0 and dm.shape == ()


def test_tangent_aval():
    assert ad.tangent_aval(ShapedArray((2,), f32)) == ShapedArray((2,), f32)
    assert ad.tangent_aval(ShapedArray((2,), np.int32)) == ShapedArray((2,), dtypes.float0)
    assert ad.tangent_aval(ShapedArray((), np.bool_)).dtype == dtypes.float0
    assert repr(ad.Zero(ShapedArray((3,), f32))) == "Zero(float32[3])"


# ---------------------------------------------------------------------------
# add_any and the rule-writing helpers


def test_add_any():
    a = ShapedArray((2,), f32)
    closed = make_jaxpr(ad.add_tangents)(np.ones(2, f32), np.ones(2, f32))
    assert prims(closed) == ["add_any"]
    assert closed.out_avals == [a]
    np.testing.assert_array_equal(ad.add_any_p.bind(np.ones(2, f32), np.ones(2, f32)), [2, 2])
    np.testing.assert_array_equal(jit(ad.add_tangents)(arr(2), arr(2)), 2 * arr(2))
    z = ad.Zero(a)
    assert ad.add_tangents(z, 5) == 5 and ad.add_tangents(5, z) == 5
    np.testing.assert_array_equal(ad.instantiate_zeros(z), np.zeros(2, f32))
    assert ad.instantiate_zeros(7) == 7


def test_add_any_rules():
    x, y = arr(3), arr(3, start=2.0)
    _, t = ad.jvp(ad.add_tangents, (x, y), (x, y))
    np.testing.assert_allclose(t, x + y)
    cts = ad.vjp(ad.add_tangents, x, y)[1](np.ones(3, f32))
    np.testing.assert_array_equal(cts[0], np.ones(3))
    np.testing.assert_array_equal(cts[1], np.ones(3))


def test_add_any_batching(toy_array_ops):
    xs = np.arange(6, dtype=f32).reshape(2, 3)
    out = batching.vmap(ad.add_tangents, in_axes=(0, 1))(xs, xs.T.copy())
    np.testing.assert_array_equal(out, 2 * xs)
    out = batching.vmap(ad.add_tangents, in_axes=(0, None))(xs, xs[0])
    np.testing.assert_array_equal(out, xs + xs[0])


def _np_primitive(name, impl, multiple_results=False):
    p = Primitive(name)
    p.multiple_results = multiple_results
    p.def_impl(impl)
    p.def_abstract_eval(lambda *avals, **_: list(avals) if multiple_results else avals[0])
    return p


exp_p = _np_primitive("exp", np.exp)
ad.defjvp2(exp_p, lambda g, ans, x: toy.mul(g, ans))
floor_p = _np_primitive("floor", np.floor)
ad.defjvp_zero(floor_p)
scale_p = _np_primitive("scale", lambda x, *, k: x * f32(k))
ad.deflinear2(scale_p, lambda ct, x, *, k: [scale_p.bind(ct, k=k)])
swap_p = _np_primitive("swap", lambda x, y: [y, x], multiple_results=True)
ad.deflinear(swap_p, lambda cts: [cts[1], cts[0]])
nojvp_p = _np_primitive("nojvp", np.sin)


def test_defjvp2_and_defjvp_zero():
    y, t = ad.jvp(exp_p.bind, (f32(0.5),), (f32(2.0),))
    assert t == pytest.approx(2 * np.exp(0.5))
    _, t = ad.jvp(floor_p.bind, (f32(2.5),), (f32(1.0),))
    assert t == 0 and t.dtype == f32
    assert ad.grad(lambda x: toy.add(floor_p.bind(x), x))(f32(2.5)) == 1


def test_deflinear_and_deflinear2():
    x, y = f32(2.0), f32(3.0)
    _, (ta, tb) = ad.jvp(lambda x, y: swap_p.bind(x, y), (x, y), (f32(1.0), f32(5.0)))
    assert floats((ta, tb)) == (5.0, 1.0)
    _, vjp_fn = ad.vjp(lambda x, y: swap_p.bind(x, y), x, y)
    assert floats(vjp_fn([f32(7.0), f32(11.0)])) == (11.0, 7.0)
    assert ad.grad(lambda x: scale_p.bind(x, k=4.0))(x) == 4.0
    # a symbolic zero cotangent gives zeros without calling the transpose function
    assert ad.grad(lambda x, y: swap_p.bind(x, y)[0], argnums=1)(x, y) == 1.0


def test_missing_rules_name_primitive_and_transformation():
    with pytest.raises(
        NotImplementedError, match="differentiation \\(jvp\\) rule for primitive 'nojvp'"
    ):
        ad.jvp(nojvp_p.bind, (f32(1.0),), (f32(1.0),))
    with pytest.raises(NotImplementedError, match="transpose rule for primitive 'exp'"):
        ad.linear_transpose(exp_p.bind, f32(1.0))(f32(1.0))


# ---------------------------------------------------------------------------
# backward_pass


def test_backward_pass_forwards_known_values_and_skips_zero_cotangents():
    c = np.full(3, 0.3, f32)
    # a:x (linear), b:z (known). out0 = x * sin(z) * c ; out1 = neg x
    closed = trace_to_jaxpr(
        lambda x, z: [toy.mul(x, toy.mul(toy.sin(z), c)), toy.neg(x)],
        [ShapedArray((3,), f32)] * 2,
    )
    x_aval = ShapedArray((3,), f32)
    z = arr(3)
    ct0 = np.ones(3, f32)

    def transpose(z, ct0):
        cts = ad.backward_pass(
            closed.jaxpr, closed.consts, [ad.UndefinedPrimal(x_aval), z], [ct0, ad.Zero(x_aval)]
        )
        assert cts[1] is None
        return cts[0]

    np.testing.assert_allclose(transpose(z, ct0), np.sin(z) * c, rtol=1e-6)
    # `neg` (whose cotangent is a symbolic zero) is not transposed at all
    assert prims(make_jaxpr(transpose)(z, ct0)) == ["sin", "mul", "mul"]


def test_backward_pass_accumulates_with_add_any():
    # x is used three times: its cotangents are summed
    g = ad.linear_transpose(lambda x: toy.add(toy.neg(x), toy.add(x, x)), f32(1.0))
    assert floats(g(f32(2.0))) == (2.0,)
    assert prims(make_jaxpr(g)(f32(2.0))).count("add_any") == 2


# ---------------------------------------------------------------------------
# grad and value_and_grad


def test_grad_matches_numpy():
    x = arr(4)
    np.testing.assert_allclose(ad.grad(f)(x), df_np(x), rtol=1e-5)
    v, g = ad.value_and_grad(f)(x)
    assert v == pytest.approx(f_np(x), rel=1e-6)
    np.testing.assert_allclose(g, df_np(x), rtol=1e-5)


def test_grad_of_python_scalar_is_weakly_typed():
    g = ad.grad(lambda x: toy.mul(x, x))(3.0)
    assert float(g) == 6.0 and g.dtype == f32 and g.aval.weak_type


def test_grad_argnums_and_pytrees():
    def loss(params, x):
        return toy.sum(toy.mul(toy.sin(toy.mul(params["w"], x)), params["b"][0]))

    params = {"w": arr(3), "b": [arr(3, start=1.0)]}
    x = arr(3, start=-1.0)
    gp = ad.grad(loss)(params, x)
    assert set(gp) == {"w", "b"} and isinstance(gp["b"], list)
    np.testing.assert_allclose(gp["w"], np.cos(params["w"] * x) * x * params["b"][0], rtol=1e-5)
    np.testing.assert_allclose(gp["b"][0], np.sin(params["w"] * x), rtol=1e-5)
    gp2, gx = ad.grad(loss, argnums=(0, 1))(params, x)
    np.testing.assert_allclose(
        gx, np.cos(params["w"] * x) * params["w"] * params["b"][0], rtol=1e-5
    )
    np.testing.assert_allclose(gp2["w"], gp["w"])
    (gx_neg,) = ad.grad(loss, argnums=(-1,))(params, x)
    np.testing.assert_allclose(gx_neg, gx)


def test_grad_with_kwargs_is_not_differentiated():
    g = ad.grad(lambda x, *, y: toy.mul(x, y))(f32(2.0), y=f32(5.0))
    assert float(g) == 5.0


def test_grad_has_aux():
    def g(x):
        return toy.sum(toy.mul(x, x)), {"aux": toy.sin(x)}

    x = arr(3)
    grads, aux = ad.grad(g, has_aux=True)(x)
    np.testing.assert_allclose(grads, 2 * x)
    np.testing.assert_allclose(aux["aux"], np.sin(x), rtol=1e-6)
    (v, aux2), grads2 = ad.value_and_grad(g, has_aux=True)(x)
    assert v == pytest.approx(np.sum(x * x))
    np.testing.assert_allclose(aux2["aux"], aux["aux"])
    np.testing.assert_allclose(grads2, grads)
    with pytest.raises(TypeError, match="has_aux=True requires the function to return a pair"):
        ad.grad(lambda x: toy.mul(x, x), has_aux=True)(f32(1.0))


def test_grad_python_control_flow_on_concrete_values():
    def g(x, y):
        if float(x) > 0:
            return toy.mul(x, y)
        return toy.sin(y)

    assert floats(ad.grad(g, argnums=(0, 1))(f32(2.0), f32(3.0))) == (3.0, 2.0)
    assert ad.grad(g, argnums=1)(f32(-2.0), f32(0.0)) == pytest.approx(1.0)


def test_grad_errors():
    with pytest.raises(
        TypeError,
        match=r"Gradient only defined for scalar-output functions. "
        r"Output had shape: \(3,\).",
    ):
        ad.grad(toy.sin)(arr(3))
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* but got int32"):
        ad.grad(lambda x: toy.convert(x, new_dtype=np.dtype(np.int32)))(f32(1.0))
    with pytest.raises(
        TypeError,
        match="grad requires real-valued outputs .* but got complex64. "
        "For holomorphic differentiation, pass holomorphic=True",
    ):
        ad.grad(lambda x: toy.convert(x, new_dtype=np.dtype(np.complex64)))(f32(1.0))
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs .*int32"):
        ad.grad(lambda n: toy.convert(n, new_dtype=np.dtype(f32)))(np.int32(2))
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        ad.grad(toy.sin, holomorphic=True)(f32(1.0))
    with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
        ad.grad(toy.mul, argnums=2)(f32(1.0), f32(1.0))
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
        ad.grad(toy.sin, argnums="x")


def test_grad_allow_int_gives_float0():
    def g(x, n):
        return toy.mul(x, toy.convert(n, new_dtype=np.dtype(f32)))

    gx, gn = ad.grad(g, argnums=(0, 1), allow_int=True)(f32(2.0), np.int32(3))
    assert float(gx) == 3.0
    assert gn.dtype == dtypes.float0 and gn.shape == ()


def test_grad_holomorphic():
    c64 = np.complex64
    z = c64(1 + 2j)
    g = ad.grad(lambda z: toy.mul(z, z), holomorphic=True)(z)
    assert g == pytest.approx(2 * z)


def test_higher_order_grad():
    g3 = ad.grad(ad.grad(ad.grad(toy.sin)))
    assert g3(f32(0.4)) == pytest.approx(-np.cos(0.4), rel=1e-5)


def test_grad_only_differentiates_argnums():
    # the cosine of y is a constant for grad w.r.t. x: no sin/neg for its derivative
    def g(x, y):
        return toy.sum(toy.mul(toy.sin(x), toy.cos(y)))

    x, y = arr(3), arr(3, start=1.0)
    closed = make_jaxpr(ad.grad(g))(x, y)
    assert prims(closed).count("sin") == 1 and "neg" not in prims(closed)
    np.testing.assert_allclose(ad.grad(g)(x, y), np.cos(x) * np.cos(y), rtol=1e-5)


# ---------------------------------------------------------------------------
# linearize and vjp


def test_linearize_evaluates_only_the_linear_part():
    x = arr(3)
    y, f_jvp = ad.linearize(f, x)
    assert y == pytest.approx(f_np(x), rel=1e-6)
    t = arr(3, start=2.0)
    np.testing.assert_allclose(f_jvp(t), np.sum(df_np(x) * t), rtol=1e-5)
    # the sines and cosines were computed once, by the linearization
    assert set(prims(make_jaxpr(f_jvp)(t))) <= {"mul", "add_any", "reduce_sum"}


def test_linearize_has_aux_and_errors():
    y, f_jvp, aux = ad.linearize(lambda x: (toy.sin(x), toy.cos(x)), f32(0.3), has_aux=True)
    assert aux == pytest.approx(np.cos(0.3))
    assert f_jvp(f32(2.0)) == pytest.approx(2 * np.cos(0.3))
    with pytest.raises(ValueError, match="inconsistent with the original primal values"):
        f_jvp(arr(3))


def test_vjp_pytrees_and_aux():
    def g(x, y):
        return {"p": toy.mul(x, y), "s": toy.sin(x)}, "aux"

    x, y = arr(3), arr(3, start=2.0)
    out, vjp_fn, aux = ad.vjp(g, x, y, has_aux=True)
    assert aux == "aux"
    np.testing.assert_allclose(out["p"], x * y)
    ct = {"p": np.ones(3, f32), "s": np.full(3, 2.0, f32)}
    cx, cy = vjp_fn(ct)
    np.testing.assert_allclose(cx, y + 2 * np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(cy, x)


def test_vjp_errors():
    _, vjp_fn = ad.vjp(lambda x: (x, toy.sin(x)), arr(3))
    with pytest.raises(ValueError, match="unexpected tree structure of argument to vjp"):
        vjp_fn([arr(3), arr(3)])
    with pytest.raises(ValueError, match="Shape of cotangent input to vjp pullback function"):
        vjp_fn((arr(3), arr(4)))
    with pytest.raises(TypeError, match="Type of cotangent input to vjp pullback function"):
        vjp_fn((arr(3), np.ones(3, np.int32)))
    with pytest.raises(TypeError, match="must be called with a single argument"):
        vjp_fn(arr(3), arr(3))


def test_vjp_int_input_gets_float0_cotangent():
    _, vjp_fn = ad.vjp(
        lambda x, n: toy.mul(x, toy.convert(n, new_dtype=np.dtype(f32))), f32(2.0), np.int32(3)
    )
    cx, cn = vjp_fn(f32(1.0))
    assert float(cx) == 3.0 and cn.dtype == dtypes.float0


def test_vjp_zero_cotangent_for_unused_output_is_not_transposed():
    def g(x):
        return toy.sin(x), toy.neg(x)

    def pull(x, ct):
        lin, _ = ad._linearize_flat(lambda x: list(g(x)), [x])
        return lin.transpose([ct, ad.Zero(ShapedArray((3,), f32))])

    closed = make_jaxpr(pull)(arr(3), arr(3))
    assert prims(closed).count("neg") == 1  # the primal: its transpose is not taken


# ---------------------------------------------------------------------------
# jit composition


def test_grad_of_jit_and_jit_of_grad():
    x = arr(4)
    np.testing.assert_allclose(ad.grad(jit(f))(x), df_np(x), rtol=1e-5)
    np.testing.assert_allclose(jit(ad.grad(f))(x), df_np(x), rtol=1e-5)
    np.testing.assert_allclose(jit(ad.grad(jit(f)))(x), df_np(x), rtol=1e-5)
    np.testing.assert_allclose(ad.grad(ad.grad(jit(toy.sin)))(f32(0.3)), -np.sin(0.3), rtol=1e-5)


def test_jit_of_grad_lowers_to_one_module():
    text = jit(ad.grad(f)).lower(arr(4)).as_text()
    assert text.count("module @") == 1 and text.count("func.func") == 1
    assert "stablehlo.cosine" in text and "stablehlo.sine" in text


def test_grad_of_jit_splits_into_known_and_linear_jits():
    closed = make_jaxpr(ad.grad(jit(f)))(arr(3))
    names = [e.params["name"] for e in closed.jaxpr.eqns if e.primitive.name == "jit"]
    assert names == ["jvp(f)", "transpose(jvp(f))"]
    # the transposed jit recomputes no sine/cosine: they are residuals
    transposed = closed.jaxpr.eqns[-1].params["jaxpr"]
    assert not {"sin", "cos"} & set(prims(transposed))


def test_jvp_of_jit_keeps_zero_tangents_symbolic():
    g = jit(lambda x, y: toy.mul(toy.sin(x), toy.cos(y)))

    def tangent(x, y, t):
        return ad.jvp_flat(lambda x, y: [g(x, y)], (x, y), (t, ad.Zero.from_primal_value(y)))[1]

    closed = make_jaxpr(tangent)(arr(3), arr(3), arr(3))
    (jvp_eqn,) = closed.jaxpr.eqns
    assert jvp_eqn.params["name"] == "jvp(<lambda>)"
    assert len(jvp_eqn.invars) == 3  # x, y and the tangent of x only
    assert "neg" not in all_prims(closed)  # no derivative of cos y
    closed = make_jaxpr(ad.grad(lambda x, y: toy.sum(g(x, y))))(arr(3), arr(3))
    assert "neg" not in all_prims(closed)


def test_grad_of_jitted_closure_over_traced_value():
    def g(x):
        return jit(lambda y: toy.mul(y, x))(x)

    assert float(ad.grad(g)(f32(3.0))) == 6.0
    assert float(ad.grad(ad.grad(g))(f32(3.0))) == 2.0


def test_jvp_and_linear_transpose_of_jit():
    g = jit(lambda x: toy.mul(x, f32(3.0)))
    assert float(ad.jvp(g, (f32(1.0),), (f32(2.0),))[1]) == 6.0
    assert floats(ad.linear_transpose(g, f32(1.0))(f32(2.0))) == (6.0,)


# ---------------------------------------------------------------------------
# stop_gradient, linear_transpose


def test_stop_gradient():
    assert float(ad.grad(lambda x: toy.mul(x, ad.stop_gradient(x)))(f32(3.0))) == 3.0
    assert float(ad.grad(jit(lambda x: toy.mul(x, ad.stop_gradient(x))))(f32(3.0))) == 3.0
    tree = {"a": f32(1.0), "n": np.int32(2)}
    out = ad.stop_gradient(tree)
    assert out["n"] is tree["n"]
    # A 64-bit host integer passes through canonicalized (int32 without x64), as in JAX.
    wide = ad.stop_gradient(np.arange(3, dtype=np.int64))
    assert wide.dtype == dtypes.canonicalize_dtype(np.int64)
    np.testing.assert_array_equal(wide, np.arange(3))
    closed = make_jaxpr(ad.stop_gradient)(tree)
    assert prims(closed) == ["stop_gradient"]
    ys = batching.vmap(ad.stop_gradient)(arr(3))
    np.testing.assert_array_equal(ys, arr(3))
    np.testing.assert_array_equal(jit(ad.stop_gradient)(arr(3)), arr(3))


def test_linear_transpose():
    c = arr(3, start=2.0)

    def lin(x, y):
        return {"o": toy.add(toy.mul(x, c), toy.neg(y))}

    f_t = ad.linear_transpose(lin, arr(3), arr(3))
    cx, cy = f_t({"o": np.ones(3, f32)})
    np.testing.assert_allclose(cx, c)
    np.testing.assert_allclose(cy, -np.ones(3))
    with pytest.raises(TypeError, match="cotangent tree does not match"):
        f_t(np.ones(3, f32))
    with pytest.raises(TypeError, match="cotangent type does not match"):
        f_t({"o": np.ones(4, f32)})
    with pytest.raises(TypeError, match="linear_transpose only supports"):
        ad.linear_transpose(lambda n: toy.convert(n, new_dtype=np.dtype(f32)), np.int32(1))
    # an unused input gets zeros
    assert floats(ad.linear_transpose(lambda x, y: x, f32(1.0), f32(1.0))(f32(2.0))) == (2.0, 0.0)


# ---------------------------------------------------------------------------
# Jacobians (vmap over the linear map)


@pytest.fixture
def toy_array_ops():
    saved = dict(vars(batching._ops))
    batching.register_array_ops(
        transpose=toy.transpose,
        broadcast_in_dim=toy.broadcast_in_dim,
        reshape=toy.reshape,
        reduce_sum=toy.reduce_axes,
    )
    for prim in (toy.add_p, toy.mul_p, ad.add_any_p):
        if prim not in batching.primitive_batchers:
            batching.primitive_batchers[prim] = _equal_shape_rule(prim)
    for prim in (toy.sin_p, toy.cos_p, toy.neg_p):
        if prim not in batching.primitive_batchers:
            batching.defvectorized(prim)
    batching.primitive_batchers.setdefault(toy.sum_p, _sum_rule)
    batching.primitive_batchers.setdefault(toy.bcast_p, _bcast_rule)
    yield
    for name in ("transpose", "broadcast_in_dim", "reshape", "reduce_sum"):
        setattr(batching._ops, name, saved.get(name))


def _sum_rule(args, dims):
    (x,), (d,) = args, dims
    ndim = len(batching._shape(x))
    return toy.reduce_axes(x, [i for i in range(ndim) if i != d]), 0


def _bcast_rule(args, dims, *, shape):
    (x,) = args  # a batch of scalars, at 0
    return toy.broadcast_in_dim(x, (batching._shape(x)[0], *shape), (0,)), 0


def _equal_shape_rule(prim):
    def rule(args, dims, **params):
        size = next(np.shape(x)[d] for x, d in zip(args, dims) if d is not None)
        args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        return prim.bind(*args, **params), 0

    return rule


# The toy array ops are linear: their rules, for Jacobians of Jacobians.
ad.deflinear2(toy.reshape_p, lambda ct, x, *, new_sizes: [toy.reshape(ct, x.aval.shape)])
ad.deflinear2(
    toy.transpose_p,
    lambda ct, x, *, permutation: [toy.transpose(ct, np.argsort(permutation))],
)
ad.deflinear2(
    toy.broadcast_in_dim_p,
    lambda ct, x, *, shape, broadcast_dimensions: [
        toy.reduce_axes(ct, [i for i in range(len(shape)) if i not in broadcast_dimensions])
    ],
)
ad.deflinear2(
    toy.reduce_axes_p,
    lambda ct, x, *, axes: [
        toy.broadcast_in_dim(
            ct, x.aval.shape, [i for i in range(len(x.aval.shape)) if i not in axes]
        )
    ],
)


def g_np(x):
    return np.sin(x) * x


def g(x):
    return toy.mul(toy.sin(x), x)


def jac_g_np(x):
    return np.diag(np.cos(x) * x + np.sin(x))


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev, ad.jacobian])
def test_jacobians(jac, toy_array_ops):
    x = arr(3)
    np.testing.assert_allclose(jac(g)(x), jac_g_np(x), rtol=1e-5, atol=1e-7)
    # matrix input, pytree output: blocks of shape out_shape + in_shape
    xm = arr(2, 2)
    out = jac(lambda x: {"a": g(x), "b": toy.neg(x)})(xm)
    assert out["a"].shape == (2, 2, 2, 2)
    expected = np.diag((np.cos(xm) * xm + np.sin(xm)).ravel()).reshape(2, 2, 2, 2)
    np.testing.assert_allclose(out["a"], expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out["b"], -np.eye(4).reshape(2, 2, 2, 2))


@pytest.mark.parametrize("jac", [ad.jacfwd, ad.jacrev])
def test_jacobian_argnums_and_aux(jac, toy_array_ops):
    x, y = arr(3), arr(3, start=2.0)
    jx, jy = jac(lambda x, y: toy.mul(x, y), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(jx, np.diag(y))
    np.testing.assert_allclose(jy, np.diag(x))
    # a zero block (no dependence on y) is zeros, without computing it
    jy0 = jac(lambda x, y: toy.sin(x), argnums=1)(x, y)
    np.testing.assert_array_equal(jy0, np.zeros((3, 3)))
    j, aux = jac(lambda x: (toy.neg(x), "aux"), has_aux=True)(x)
    assert aux == "aux"
    np.testing.assert_allclose(j, -np.eye(3))


def test_hessian(toy_array_ops):
    x = arr(3)
    h = ad.hessian(lambda x: toy.sum(toy.mul(toy.mul(x, x), x)))(x)
    np.testing.assert_allclose(h, np.diag(6 * x), rtol=1e-5)


def test_jacobian_dtype_errors(toy_array_ops):
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        ad.jacfwd(toy.neg)(np.ones(2, np.int32))
    with pytest.raises(TypeError, match="jacrev requires real- or complex-valued inputs"):
        ad.jacrev(toy.neg)(np.ones(2, np.int32))
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        ad.jacrev(lambda x: toy.convert(x, new_dtype=np.dtype(np.int32)))(arr(2))


# ---------------------------------------------------------------------------
# Composition with vmap and jit, in any order


@pytest.mark.parametrize(
    "transform",
    [
        lambda h: batching.vmap(ad.grad(h)),
        lambda h: batching.vmap(ad.grad(jit(h))),
        lambda h: jit(batching.vmap(ad.grad(h))),
        lambda h: batching.vmap(jit(ad.grad(h))),
    ],
    ids=["vmap-grad", "vmap-grad-jit", "jit-vmap-grad", "vmap-jit-grad"],
)
def test_vmap_of_grad(transform, toy_array_ops):
    xs = arr(4, 3)
    out = transform(f)(xs)
    np.testing.assert_allclose(out, df_np(xs), rtol=1e-5)


@pytest.mark.parametrize("inner_jit", [False, True])
def test_grad_of_vmap(inner_jit, toy_array_ops):
    def loss(xs):
        per_row = batching.vmap(jit(f) if inner_jit else f)(xs)
        return toy.reduce_axes(per_row, (0,))

    xs = arr(4, 3)
    np.testing.assert_allclose(ad.grad(loss)(xs), df_np(xs), rtol=1e-5)
    np.testing.assert_allclose(jit(ad.grad(loss))(xs), df_np(xs), rtol=1e-5)


def test_jvp_of_vmap_and_vmap_of_jvp(toy_array_ops):
    xs, ts = arr(4, 3), arr(4, 3, start=1.0)
    vsin = batching.vmap(toy.sin)
    _, t1 = ad.jvp(vsin, (xs,), (ts,))
    _, t2 = batching.vmap(lambda x, t: ad.jvp(toy.sin, (x,), (t,)))(xs, ts)
    np.testing.assert_allclose(t1, np.cos(xs) * ts, rtol=1e-6)
    np.testing.assert_allclose(t2, t1, rtol=1e-6)


def test_escaped_jvp_tracer_is_an_error():
    from polyjax_core.errors import UnexpectedTracerError

    leaked = []

    def g(x):
        leaked.append(x)
        return toy.sin(x)

    ad.jvp(g, (f32(1.0),), (f32(1.0),))
    with pytest.raises(UnexpectedTracerError):
        toy.sin(leaked[0])


def test_vjp_and_linearize_functions_are_pytrees_of_residuals():
    from polyjax_core.tree_util import tree_leaves

    x = arr(3)
    _, vjp_fn = ad.vjp(lambda x: toy.sin(toy.mul(x, x)), x)
    assert tree_leaves(vjp_fn)  # the residuals
    ct = arr(3, start=1.0)
    (expected,) = vjp_fn(ct)
    (through_jit,) = jit(lambda f, ct: f(ct))(vjp_fn, ct)
    np.testing.assert_allclose(through_jit, expected, rtol=1e-6)
    np.testing.assert_allclose(expected, np.cos(x * x) * 2 * x * ct, rtol=1e-5)
    _, f_jvp = ad.linearize(lambda x: toy.sin(toy.mul(x, x)), x)
    np.testing.assert_allclose(jit(lambda f, t: f(t))(f_jvp, ct), f_jvp(ct), rtol=1e-6)


def test_linearize_prunes_unused_tangent_equations():
    def g(x):
        toy.cos(x)  # its tangent (sin, mul, neg) is dead
        return toy.mul(toy.sin(x), x)

    _, f_jvp = ad.linearize(g, f32(0.5))
    assert "neg" not in prims(make_jaxpr(f_jvp)(f32(1.0)))
    assert float(f_jvp(f32(1.0))) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5), rel=1e-6)


def test_jvp_jaxpr_and_transpose_jaxpr():
    a = ShapedArray((3,), f32)
    closed = trace_to_jaxpr(lambda x, y: [toy.mul(toy.sin(x), y), toy.cos(y)], [a, a])
    jvp_closed, out_nz = ad.jvp_jaxpr(closed, [True, False], instantiate=False)
    assert out_nz == [True, False]  # cos y has a zero tangent
    assert [v.aval for v in jvp_closed.jaxpr.invars] == [a, a, a]  # x, y, dx
    assert len(jvp_closed.jaxpr.outvars) == 3
    assert ad.jvp_jaxpr(closed, [True, False], instantiate=False)[0] is jvp_closed  # cached
    inst, out_nz = ad.jvp_jaxpr(closed, [True, False], instantiate=[False, True])
    assert out_nz == [True, True] and len(inst.jaxpr.outvars) == 4

    lin = trace_to_jaxpr(lambda c, t: [toy.mul(t, c), toy.neg(t)], [a, a])
    transposed, ct_nz = ad.transpose_jaxpr(lin, [False, True], [True, False])
    assert ct_nz == [True]
    assert "neg" not in prims(transposed)  # its cotangent is a symbolic zero
    c, ct = arr(3), arr(3, start=2.0)
    (out,) = eval_jaxpr(transposed.jaxpr, transposed.consts, c, ct)
    np.testing.assert_allclose(out, c * ct)
