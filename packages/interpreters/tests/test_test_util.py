"""`test_util.check_grads`: correct rules pass, wrong ones are caught.

The functions are built from the toy primitives of conftest (whose jvp and
transpose rules are right), plus a few primitives defined here with rules that
are deliberately wrong in one place: a wrong jvp, a jvp whose own derivative is
wrong (caught at order 2 only), and a linear primitive with a wrong transpose
(caught in reverse mode only).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, dispatch, mlir, test_util
from polyjax_interpreters.test_util import check_grads, check_jvp, check_vjp, numerical_jvp


def _unary(name: str, lowering) -> Primitive:
    p = Primitive(name)
    p.def_abstract_eval(lambda x, **_: x)
    p.def_impl(functools.partial(dispatch.apply_primitive, p))
    mlir.register_lowering(p, lowering)
    return p


# sin with the derivative of -cos: wrong at order 1.
bad_sin_p = _unary("bad_sin", lambda ctx, x: [hlo.sine(x)])
# sin whose derivative uses `bad_cos`, a cos whose own derivative has the wrong sign:
# right at order 1, wrong at order 2.
sin2_p = _unary("sin2", lambda ctx, x: [hlo.sine(x)])
bad_cos_p = _unary("bad_cos", lambda ctx, x: [hlo.cosine(x)])
# x * 3, linear, with a transpose that multiplies by 2: right forward, wrong backward.
triple_p = _unary(
    "triple",
    lambda ctx, x: [hlo.multiply(x, mlir.full_like_aval(ctx, 3, ctx.avals_in[0]))],
)
double_p = _unary(
    "double",
    lambda ctx, x: [hlo.multiply(x, mlir.full_like_aval(ctx, 2, ctx.avals_in[0]))],
)


@pytest.fixture(autouse=True)
def _rules(toy):
    # Registered per test (idempotent): the toys come from conftest's `toy` fixture.
    ad.defjvp(bad_sin_p, lambda g, x: toy.mul(g, toy.neg(toy.cos(x))))
    ad.defjvp(sin2_p, lambda g, x: toy.mul(g, bad_cos_p.bind(x)))
    ad.defjvp(bad_cos_p, lambda g, x: toy.mul(g, toy.sin(x)))  # should be -sin
    ad.deflinear(triple_p, lambda ct: [double_p.bind(ct)])
    ad.deflinear(double_p, lambda ct: [double_p.bind(ct)])


F32 = np.float32
X = np.array([0.3, -1.2, 2.0], F32)
Y = np.array([1.5, 0.25, -0.7], F32)


# ---------------------------------------------------------------------------
# Correct rules pass


@pytest.mark.parametrize("modes", [("fwd",), ("fwd", "rev")])
def test_sin_passes_to_order_2(toy, modes):
    check_grads(toy.sin, (X,), order=2, modes=modes)


def test_binary_and_composite_functions_pass(toy):
    f = lambda x, y: toy.sin(toy.mul(x, toy.add(x, y)))
    check_grads(f, (X, Y), order=2)


def test_pytrees_in_and_out(toy):
    def f(d, y):
        return {"s": toy.sin(d["x"]), "p": (toy.mul(d["x"], y), toy.sum(y))}

    check_grads(f, ({"x": X}, Y), order=2)


def test_integer_inputs_are_held_fixed_and_integer_outputs_need_float0(toy):
    n = np.array([1, 2, 3], np.int32)

    def f(x, n):
        return toy.sin(x), n

    check_grads(f, (X, n), order=2)


def test_scalars_and_python_floats(toy):
    check_grads(lambda x, y: toy.mul(x, y), (F32(1.5), 2.0), order=2)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_low_precision_defaults_are_loose_enough(toy, dtype):
    x = np.linspace(-2.0, 2.0, 7).astype(dtype)
    check_grads(lambda x: toy.mul(toy.sin(x), x), (x,), order=2)


def test_complex_inputs(toy):
    z = np.array([0.5 + 1.0j, -1.0 + 0.25j], np.complex64)
    w = np.array([1.0 - 0.5j, 0.75 + 2.0j], np.complex64)
    check_grads(lambda z, w: toy.sin(toy.mul(z, w)), (z, w), order=2)


# ---------------------------------------------------------------------------
# Wrong rules are caught


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_wrong_jvp_is_caught(modes):
    with pytest.raises(AssertionError, match="JVP|VJP"):
        check_grads(bad_sin_p.bind, (X,), order=1, modes=modes)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_wrong_jvp_is_caught_in_low_precision(dtype):
    x = np.linspace(-2.0, 2.0, 7).astype(dtype)
    with pytest.raises(AssertionError, match="JVP"):
        check_grads(bad_sin_p.bind, (x,), order=1, modes=("fwd",))


@pytest.mark.parametrize("factor, modes", [(1.03, ("fwd",)), (1.15, ("rev",))])
def test_small_errors_are_caught_in_float32(toy, factor, modes):
    # Forward mode compares every element; reverse mode one random inner product,
    # so it needs a larger error to see it through the absolute tolerance.
    p = _unary(f"sin_times_{factor}", lambda ctx, x: [hlo.sine(x)])
    ad.defjvp(p, lambda g, x: toy.mul(g, toy.mul(toy.cos(x), factor)))
    with pytest.raises(AssertionError, match="JVP|VJP"):
        check_grads(p.bind, (X,), order=1, modes=modes)


def test_large_outputs_with_small_derivatives_in_float16(toy):
    # f = 100 + sin(x): rounding of the outputs dominates the finite difference
    x = np.linspace(-2.0, 2.0, 7).astype(np.float16)
    big = np.full(7, 100.0, np.float16)
    check_grads(lambda x: toy.add(big, toy.sin(x)), (x,), order=2)


def test_wrong_second_derivative_passes_order_1_and_fails_order_2():
    check_grads(sin2_p.bind, (X,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="JVP of JVP"):
        check_grads(sin2_p.bind, (X,), order=2, modes=("fwd",))


def test_wrong_transpose_passes_forward_and_fails_reverse():
    check_grads(triple_p.bind, (X,), order=1, modes=("fwd",))
    with pytest.raises(AssertionError, match="VJP"):
        check_grads(triple_p.bind, (X,), order=1, modes=("rev",))


def test_wrong_rule_hidden_by_huge_tolerance_passes():
    check_grads(bad_sin_p.bind, (X,), order=1, modes=("fwd",), atol=10.0, rtol=10.0)


def test_tolerance_dicts_override_by_dtype():
    with pytest.raises(AssertionError):
        check_grads(bad_sin_p.bind, (X,), order=1, modes=("fwd",), atol={np.float64: 10.0})
    check_grads(bad_sin_p.bind, (X,), order=1, modes=("fwd",), atol={np.float32: 10.0}, rtol=10.0)


# ---------------------------------------------------------------------------
# The building blocks


def test_numerical_jvp_matches_the_analytic_derivative():
    # Steps are taken in the inputs' (canonical) dtype, float32 here.
    t = np.array([1.0, -0.5, 2.0], F32)
    got = numerical_jvp(np.sin, (X,), (t,), eps=1e-2)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.cos(X.astype(np.float64)) * t, rtol=1e-4, atol=1e-5)


def test_check_jvp_with_a_handwritten_jvp():
    f = lambda x: np.sin(x)
    check_jvp(f, lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0]), (X,))
    with pytest.raises(AssertionError, match="tangent output"):
        check_jvp(f, lambda p, t: (np.sin(p[0]), np.sin(p[0]) * t[0]), (X,))
    with pytest.raises(AssertionError, match="primal output"):
        check_jvp(f, lambda p, t: (np.cos(p[0]), np.cos(p[0]) * t[0]), (X,))


def test_check_vjp_with_a_handwritten_vjp():
    f = lambda x, y: x * y
    good = lambda x, y: (x * y, lambda ct: (ct * y, ct * x))
    bad = lambda x, y: (x * y, lambda ct: (ct * x, ct * y))
    check_vjp(f, good, (X, Y))
    with pytest.raises(AssertionError, match="VJP"):
        check_vjp(f, bad, (X, Y))


def test_check_vjp_complex_convention():
    # For holomorphic f(z) = c z the vjp is ct * c (no conjugation), as JAX defines it.
    c = np.complex64(2.0 - 1.0j)
    z = np.array([1.0 + 1.0j, -0.5j], np.complex64)
    check_vjp(lambda z: c * z, lambda z: (c * z, lambda ct: (ct * c,)), (z,))
    with pytest.raises(AssertionError):
        check_vjp(lambda z: c * z, lambda z: (c * z, lambda ct: (ct * np.conj(c),)), (z,))


def test_tangent_dtype_is_checked():
    f = lambda x: np.sin(x)
    with pytest.raises(AssertionError, match="dtype"):
        check_jvp(f, lambda p, t: (np.sin(p[0]), (np.cos(p[0]) * t[0]).astype(np.float16)), (X,))


def test_bad_arguments():
    with pytest.raises(ValueError, match="modes"):
        check_grads(np.sin, (X,), 1, modes=("bwd",))
    with pytest.raises(ValueError, match="order"):
        check_grads(np.sin, (X,), 0)


def test_public_names():
    assert set(test_util.__all__) >= {"check_grads", "check_jvp", "check_vjp"}
