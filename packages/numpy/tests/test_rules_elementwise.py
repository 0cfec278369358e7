"""jvp, transpose and batching rules of the elementwise and complex lax primitives.

Derivatives are checked with `check_grads` (finite differences, forward and
reverse mode, up to order 2) at points away from kinks and branch cuts, plus a
few exact values (ties of max/min, abs at 0, pow at 0) against hand-computed
NumPy oracles. `vmap(f)` is checked against a Python loop over the examples.

Everything runs eagerly: each (primitive, shape, dtype) compiles one cached
executable that the many evaluations of `check_grads` share, so inputs use a
few shapes only: () and (3,) for examples, (2, 3) / (3, 2) for batches.
"""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import dtypes
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

# A breadth sweep: the main test run has it; the isolated re-run of this package skips it.
pytestmark = pytest.mark.sweep

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, c64, i32 = np.dtype(np.float32), np.dtype(np.complex64), np.dtype(np.int32)
float0 = dtypes.float0

rng = np.random.default_rng(0)


def _points(lo: float, hi: float, shape: tuple, dtype=f32) -> np.ndarray:
    """Evenly spread points of (lo, hi), so that no two coincide (no ties, no kinks)."""
    n = int(np.prod(shape))
    vals = np.linspace(lo, hi, n + 2)[1:-1]
    return rng.permutation(vals).reshape(shape).astype(dtype)


def _cpoints(shape: tuple, lo=0.3, hi=0.9) -> np.ndarray:
    """Complex points in the first quadrant, off every branch cut."""
    return (_points(lo, hi, shape) + 1j * _points(0.2, 0.6, shape)).astype(c64)


def _ones(x):
    return np.ones(np.shape(x), np.asarray(x).dtype)


# ---------------------------------------------------------------------------
# Unary operations: derivatives

# (name, function, domain, complex too?)
UNARY = [
    ("neg", lax.neg, (-2, 2), True),
    ("abs", lax.abs, (0.2, 2), True),
    ("abs_neg", lax.abs, (-2, -0.2), False),
    ("exp", lax.exp, (-1, 1), True),
    ("exp2", lax.exp2, (-1, 1), True),
    ("log", lax.log, (0.5, 2), True),
    ("log1p", lax.log1p, (-0.5, 1), True),
    ("expm1", lax.expm1, (-1, 1), True),
    ("sin", lax.sin, (-2, 2), True),
    ("cos", lax.cos, (-2, 2), True),
    ("tan", lax.tan, (-1, 1), True),
    ("tanh", lax.tanh, (-2, 2), True),
    ("logistic", lax.logistic, (-2, 2), True),
    ("sqrt", lax.sqrt, (0.5, 2), True),
    ("rsqrt", lax.rsqrt, (0.5, 2), True),
    ("cbrt", lax.cbrt, (0.5, 2), False),
    ("cbrt_neg", lax.cbrt, (-2, -0.5), False),
    ("asin", lax.asin, (-0.7, 0.7), True),
    ("acos", lax.acos, (-0.7, 0.7), True),
    ("atan", lax.atan, (-2, 2), True),
    ("sinh", lax.sinh, (-2, 2), True),
    ("cosh", lax.cosh, (-2, 2), True),
    ("asinh", lax.asinh, (-2, 2), True),
    ("acosh", lax.acosh, (1.5, 3), True),
    ("atanh", lax.atanh, (-0.7, 0.7), True),
    ("erf", lax.erf, (-1.5, 1.5), False),
    ("erfc", lax.erfc, (-1.5, 1.5), False),
    ("erf_inv", lax.erf_inv, (-0.7, 0.7), False),
    ("square", lax.square, (-2, 2), True),
    ("reciprocal", lax.reciprocal, (0.5, 2), True),
    ("integer_pow3", lambda x: lax.integer_pow(x, 3), (-2, 2), True),
    ("integer_pow-2", lambda x: lax.integer_pow(x, -2), (0.5, 2), True),
    ("integer_pow1", lambda x: lax.integer_pow(x, 1), (-2, 2), False),
    ("integer_pow0", lambda x: lax.integer_pow(x, 0), (-2, 2), False),
    ("sin_accuracy", lambda x: lax.sin(x, accuracy=lax.AccuracyMode.HIGHEST), (-2, 2), False),
]
UNARY_IDS = [u[0] for u in UNARY]


@pytest.mark.parametrize("name,fun,domain,cplx", UNARY, ids=UNARY_IDS)
def test_unary_grads_f32(name, fun, domain, cplx):
    check_grads(fun, (_points(*domain, (3,)),), order=2)


UNARY_C64 = [u for u in UNARY if u[3]]


@pytest.mark.parametrize("name,fun,domain,cplx", UNARY_C64, ids=[u[0] for u in UNARY_C64])
def test_unary_grads_c64(name, fun, domain, cplx):
    check_grads(fun, (_cpoints((3,)),), order=2)


@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "log", "logistic", "sqrt", "square"])
def test_unary_grads_rank0_and_bf16(name):
    fun, domain = {u[0]: (u[1], u[2]) for u in UNARY}[name]
    check_grads(fun, (_points(*domain, ()),), order=2)
    check_grads(fun, (_points(*domain, (3,), bf16),), order=1)


def test_lgamma_digamma_polygamma_derivatives():
    # lgamma' = digamma, digamma' = polygamma(1, .), polygamma(m, .)' = polygamma(m + 1, .)
    import scipy.special

    x = _points(0.5, 3, (3,))
    check_grads(lax.lgamma, (x,), order=2)
    check_grads(lax.digamma, (x,), order=2)
    check_grads(lambda v: lax.polygamma(2.0, v), (x,), order=1)
    _, t = ad.jvp(lax.digamma, (x,), (_ones(x),))
    np.testing.assert_allclose(np.asarray(t), scipy.special.polygamma(1, x), rtol=1e-5)
    m = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(
        np.asarray(vmap(lax.polygamma)(m, x)), scipy.special.polygamma([1, 2, 3], x), rtol=1e-5
    )


# Values of derivatives that finite differences cannot check (at kinks) or that
# are conventions: the NumPy oracle is written out by hand.
def test_derivative_conventions():
    x = np.float32([-1.0, 0.0, 2.0])
    _, t = ad.jvp(lax.abs, (x,), (_ones(x),))
    np.testing.assert_array_equal(t, [-1.0, 1.0, 1.0])  # abs'(0) = 1, as in JAX
    # max/min: the winner gets the derivative, a tie splits it half-half.
    y = np.float32([0.0, 0.0, 0.0])
    g = ad.grad(lambda a, b: lax.reduce_sum(lax.max(a, b), (0,)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(g[0], [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(g[1], [1.0, 0.5, 0.0])
    g = ad.grad(lambda a, b: lax.reduce_sum(lax.min(a, b), (0,)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(g[0], [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(g[1], [0.0, 0.5, 1.0])
    # pow at x = 0: d/dx 0**0 is 0 for an integer 0 (not nan), d/dy 0**y is 0 (log(0)
    # taken as 0).
    zero = np.float32([0.0, 0.0])
    _, tx = ad.jvp(lambda a: lax.pow(a, np.int32([0, 2])), (zero,), (_ones(zero),))
    np.testing.assert_array_equal(tx, [0.0, 0.0])
    _, ty = ad.jvp(lambda b: lax.pow(zero, b), (np.float32([1.0, 2.0]),), (_ones(zero),))
    np.testing.assert_array_equal(ty, [0.0, 0.0])
    # integer exponents of negative bases stay exact: d/dx x**3 = 3 x**2.
    _, t = ad.jvp(lambda a: lax.pow(a, 3), (np.float32([-2.0]),), (np.float32([1.0]),))
    np.testing.assert_allclose(t, [12.0])
    # sign/floor/round: zero derivative everywhere.
    for f in (lax.sign, lax.floor, lax.ceil, lax.round):
        _, t = ad.jvp(f, (x,), (_ones(x),))
        assert type(t) is not ad.Zero  # instantiated for the user
        np.testing.assert_array_equal(t, np.zeros(3, f32))


@pytest.mark.parametrize(
    "fun",
    [
        lax.sign,
        lax.floor,
        lax.ceil,
        lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    ],
    ids=["sign", "floor", "ceil", "round"],
)
def test_zero_derivative_grads(fun):
    check_grads(fun, (np.float32([-1.3, 0.4, 2.2]),), order=2)


# ---------------------------------------------------------------------------
# Non-differentiable outputs: zero / float0 tangents

x3 = np.float32([0.3, -0.5, 1.5])
i3 = np.int32([3, -5, 6])


@pytest.mark.parametrize(
    "fun,args",
    [
        (lax.is_finite, (x3,)),
        (lambda x: lax.lt(x, 0.5), (x3,)),
        (lambda x: lax.eq(x, x), (x3,)),
        (lambda x: lax.ge(x, lax.neg(x)), (x3,)),
        (lambda x: lax.convert_element_type(x, np.int32), (x3,)),
        (lax.bitwise_not, (i3,)),
        (lambda x: lax.bitwise_and(x, 6), (i3,)),
        (lambda x: lax.shift_left(x, 1), (i3,)),
        (lambda x: lax.add(x, x), (i3,)),
        (lambda x: lax.mul(x, x), (i3,)),
        (lambda x: lax.max(x, 0), (i3,)),
        (lambda x: lax.integer_pow(x, 2), (i3,)),
        (lambda x: lax.select_n(lax.lt(x, 0), x, lax.neg(x)), (i3,)),
    ],
    ids=lambda v: "" if isinstance(v, tuple) else None,
)
def test_non_float_outputs_get_float0_tangents(fun, args):
    t_in = tuple(
        _ones(a) if np.asarray(a).dtype == f32 else np.zeros(np.shape(a), float0) for a in args
    )
    out, t = ad.jvp(fun, args, t_in)
    assert t.dtype == float0 and t.shape == np.shape(out)


def test_integer_input_gives_zero_float_tangent():
    out, t = ad.jvp(
        lambda i: lax.convert_element_type(i, np.float32), (i3,), (np.zeros(3, float0),)
    )
    assert t.dtype == f32
    np.testing.assert_array_equal(t, np.zeros(3, f32))
    # and grad with allow_int gives float0 zeros for integer inputs.
    g = ad.grad(
        lambda x, i: lax.reduce_sum(lax.mul(x, lax.convert_element_type(i, np.float32)), (0,)),
        argnums=(0, 1),
        allow_int=True,
    )(x3, i3)
    np.testing.assert_array_equal(g[0], i3.astype(f32))
    assert g[1].dtype == float0


# ---------------------------------------------------------------------------
# Binary operations, with lax's broadcasting of rank-0 and size-1 operands

SHAPES = [((3,), (3,)), ((), (3,)), ((3,), ()), ((1, 3), (2, 3)), ((2, 1), (2, 3))]

# (name, function, domain of x, domain of y, the shapes to try): every broadcasting
# case for the ops with transposes (which sum over stretched axes), a few for the others.
BINARY = [
    ("add", lax.add, (-2, 2), (-2, 2), SHAPES),
    ("sub", lax.sub, (-2, 2), (-2, 2), SHAPES),
    ("mul", lax.mul, (-2, 2), (-2, 2), SHAPES),
    ("div", lax.div, (-2, 2), (0.5, 2), SHAPES),
    ("pow", lax.pow, (0.5, 2), (-1.5, 1.5), SHAPES[:4]),
    ("rem", lax.rem, (0.1, 0.9), (2.2, 3.0), SHAPES[:2]),
    ("atan2", lax.atan2, (-2, 2), (0.5, 2), SHAPES[2:4]),
    ("max", lax.max, (-2, -0.2), (0.2, 2), SHAPES[1:2]),
    ("max_x_wins", lax.max, (0.2, 2), (-2, -0.2), SHAPES[3:4]),
    ("min", lax.min, (-2, -0.2), (0.2, 2), SHAPES[2:3]),
    ("min_y_wins", lax.min, (0.2, 2), (-2, -0.2), SHAPES[:1]),
]
BINARY_CASES = [(*b[:4], shapes) for b in BINARY for shapes in b[4]]


def _case_id(case):
    return f"{case[0]}-{case[4][0]}-{case[4][1]}".replace(" ", "")


@pytest.mark.parametrize("name,fun,dx,dy,shapes", BINARY_CASES, ids=map(_case_id, BINARY_CASES))
def test_binary_grads_f32(name, fun, dx, dy, shapes):
    x, y = _points(*dx, shapes[0]), _points(*dy, shapes[1])
    check_grads(fun, (x, y), order=2)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow"])
def test_binary_grads_c64(name):
    fun = getattr(lax, name)
    check_grads(fun, (_cpoints((3,)), _cpoints(())), order=2)


@pytest.mark.parametrize("name", ["add", "mul", "div"])
def test_binary_grads_bf16(name):
    fun = getattr(lax, name)
    x, y = _points(0.5, 2, (3,), bf16), _points(0.5, 2, (3,), bf16)
    check_grads(fun, (x, y), order=1)


def test_pow_integer_exponent_grads():
    x = _points(-2, -0.5, (3,))
    check_grads(lambda x: lax.pow(x, np.int32([1, 2, 3])), (x,), order=2)
    check_grads(lambda x: lax.pow(x, np.int32(-2)), (x,), order=2)
    # The exponent has a float0 tangent.
    _, t = ad.jvp(lax.pow, (x, np.int32(2)), (_ones(x), np.zeros((), float0)))
    np.testing.assert_allclose(t, 2 * x, rtol=1e-6)


# The transposes of the linear operations, checked through vjp against NumPy:
# cotangents of stretched operands are summed over the stretched axes.
@pytest.mark.parametrize("shapes", SHAPES[1:], ids=lambda s: f"{s[0]}-{s[1]}".replace(" ", ""))
def test_linear_transposes_unbroadcast(shapes):
    x, y = _points(-2, 2, shapes[0]), _points(0.5, 2, shapes[1])
    out_shape = np.broadcast_shapes(x.shape, y.shape)
    ct = _points(-1, 1, out_shape)

    def summed(c, shape):
        c = np.asarray(c, np.float64)
        if not shape:
            return c.sum()
        axes = tuple(i for i, (a, b) in enumerate(zip(shape, c.shape)) if a != b)
        return c.sum(axis=axes, keepdims=True)

    cases = {
        lax.add: (ct, ct),
        lax.sub: (ct, -ct),
    }
    for fun, (cx, cy) in cases.items():
        _, f_vjp = ad.vjp(fun, x, y)
        gx, gy = f_vjp(ct)
        assert gx.shape == x.shape and gy.shape == y.shape
        np.testing.assert_allclose(gx, summed(cx, x.shape), rtol=1e-6)
        np.testing.assert_allclose(gy, summed(cy, y.shape), rtol=1e-6)
    # mul is linear in each operand, div in its numerator: transpose with the other known.
    gx = ad.linear_transpose(lambda a: lax.mul(a, y), x)(ct)[0]
    np.testing.assert_allclose(gx, summed(ct * y, x.shape), rtol=1e-6)
    gy = ad.linear_transpose(lambda b: lax.mul(x, b), y)(ct)[0]
    np.testing.assert_allclose(gy, summed(ct * x, y.shape), rtol=1e-6)
    gx = ad.linear_transpose(lambda a: lax.div(a, y), x)(ct)[0]
    np.testing.assert_allclose(gx, summed(ct / y, x.shape), rtol=1e-6)


def test_linear_ops_under_linear_transpose():
    x = _points(-2, 2, (3,))
    ct = _points(-1, 1, (3,))
    (g,) = ad.linear_transpose(lax.neg, x)(ct)
    np.testing.assert_array_equal(g, -ct)
    (g,) = ad.linear_transpose(lambda a: lax.convert_element_type(a, ml_dtypes.bfloat16), x)(
        ct.astype(bf16)
    )
    assert g.dtype == f32
    np.testing.assert_array_equal(g, ct.astype(bf16).astype(f32))
    with pytest.raises(ValueError, match="linear"):
        ad.linear_transpose(lambda b: lax.div(x, b), x)(ct)


# ---------------------------------------------------------------------------
# select_n, clamp, convert_element_type


def test_select_n_grads():
    a, b, c = _points(-2, 2, (3,)), _points(-2, 2, (3,)), _points(-2, 2, (3,))
    which = np.bool_([True, False, True])
    check_grads(lambda a, b: lax.select_n(which, a, b), (a, b), order=2)
    check_grads(lambda a, b: lax.select_n(np.bool_(False), a, b), (a, b), order=2)
    check_grads(lambda a, b, c: lax.select_n(np.int32([2, 0, 1]), a, b, c), (a, b, c), order=2)
    # one case known, the other differentiated: the transpose routes the cotangent back.
    g = ad.grad(lambda b: lax.reduce_sum(lax.select_n(which, a, lax.mul(b, b)), (0,)))(b)
    np.testing.assert_allclose(g, np.where(which, 2 * b, 0), rtol=1e-6)
    (ga, gb) = ad.linear_transpose(lambda a, b: lax.select_n(which, a, b), a, b)(c)
    np.testing.assert_array_equal(ga, np.where(which, 0, c))
    np.testing.assert_array_equal(gb, np.where(which, c, 0))


@pytest.mark.parametrize(
    "lo,hi",
    [(np.float32(-1), np.float32(1)), (_points(-1.2, -0.8, (3,)), _points(0.8, 1.2, (3,)))],
    ids=["scalar-bounds", "array-bounds"],
)
def test_clamp_grads(lo, hi):
    x = np.float32([-1.5, 0.2, 1.7])
    check_grads(lax.clamp, (lo, x, hi), order=2)
    g_lo, g_x, g_hi = ad.grad(
        lambda lo, x, hi: lax.reduce_sum(lax.clamp(lo, x, hi), (0,)), argnums=(0, 1, 2)
    )(lo, x, hi)
    np.testing.assert_array_equal(g_x, [0, 1, 0])
    np.testing.assert_array_equal(g_lo, 1 if lo.shape == () else [1, 0, 0])
    np.testing.assert_array_equal(g_hi, 1 if hi.shape == () else [0, 0, 1])


def test_convert_element_type_grads():
    x = _points(-2, 2, (3,))
    # (a linear function: a large step keeps float16 rounding out of the differences)
    check_grads(lambda x: lax.convert_element_type(x, np.float16), (x,), 2, atol=1e-2, eps=0.25)
    check_grads(lambda x: lax.convert_element_type(x, np.complex64), (x,), order=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real drops the imaginary part
        check_grads(lambda z: lax.convert_element_type(z, np.float32), (_cpoints((3,)),), 2)
    # the composition through an integer is constant: its derivative is zero.
    f = lambda x: lax.convert_element_type(lax.convert_element_type(x, np.int32), np.float32)
    _, t = ad.jvp(f, (x,), (_ones(x),))
    np.testing.assert_array_equal(t, np.zeros(3, f32))


# ---------------------------------------------------------------------------
# complex, real, imag, conj


def test_complex_parts_grads():
    x, y = _points(-2, 2, (3,)), _points(-2, 2, (3,))
    z = _cpoints((3,))
    check_grads(lax.complex, (x, y), order=2)
    check_grads(lax.complex, (x, np.float32(0.5)), order=2)
    check_grads(lax.complex, (_points(-2, 2, (1, 3)), _points(-2, 2, (2, 3))), order=2)
    check_grads(lax.real, (z,), order=2)
    check_grads(lax.imag, (z,), order=2)
    check_grads(lax.conj, (z,), order=2)
    check_grads(lax.conj, (x,), order=2)  # a real operand becomes complex
    check_grads(lambda z: lax.mul(z, lax.conj(z)), (z,), order=2)


def test_complex_transposes():
    x, y = _points(-2, 2, (3,)), _points(-2, 2, ())
    ct = _cpoints((3,))
    gx, gy = ad.linear_transpose(lax.complex, x, y)(ct)
    np.testing.assert_allclose(gx, ct.real)
    np.testing.assert_allclose(gy, -ct.imag.sum(), rtol=1e-6)
    (g,) = ad.linear_transpose(lax.real, ct)(x)
    np.testing.assert_array_equal(g, x.astype(c64))
    (g,) = ad.linear_transpose(lax.imag, ct)(x)
    np.testing.assert_array_equal(g, (-1j * x).astype(c64))
    (g,) = ad.linear_transpose(lax.conj, ct)(ct)
    np.testing.assert_array_equal(g, np.conj(ct))
    (g,) = ad.linear_transpose(lax.conj, x)(ct)
    np.testing.assert_array_equal(g, ct.real)
    # |z|**2 = z conj(z): the gradient (of a real function of z) is 2 conj(z)... in
    # JAX's convention grad returns conj of the usual Wirtinger gradient: 2 z.
    g = ad.grad(lambda z: lax.real(lax.mul(z, lax.conj(z))))(np.complex64(1 + 2j))
    np.testing.assert_allclose(g, 2 * (1 - 2j), rtol=1e-6)


# ---------------------------------------------------------------------------
# Composition with jit and higher orders


def test_grad_of_jit_and_jit_of_grad():
    def f(x, y):
        return lax.reduce_sum(lax.mul(lax.sin(x), lax.exp(lax.div(y, x))), (0,))

    x, y = _points(0.5, 2, (3,)), _points(-1, 1, (3,))
    g1 = jit(ad.grad(f, argnums=(0, 1)))(x, y)
    g2 = ad.grad(jit(f), argnums=(0, 1))(x, y)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    e = np.exp(yd / xd)
    want_x = np.cos(xd) * e - np.sin(xd) * e * yd / xd**2
    want_y = np.sin(xd) * e / xd
    for g in (g1, g2):
        np.testing.assert_allclose(g[0], want_x, rtol=1e-5)
        np.testing.assert_allclose(g[1], want_y, rtol=1e-5)
    # third derivative of tanh, through jit: 2 tanh' (3 tanh^2 - 1) ... checked numerically.
    d3 = jit(ad.grad(ad.grad(ad.grad(lax.tanh))))(np.float32(0.3))
    t = np.tanh(0.3)
    np.testing.assert_allclose(d3, (1 - t**2) * (6 * t**2 - 2), rtol=1e-5)


# ---------------------------------------------------------------------------
# vmap against a Python loop over the examples


def _loop(fun, args, in_axes):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for i in range(size):
        ex = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        outs.append(np.asarray(fun(*ex)))
    return np.stack(outs)


def _check_vmap(fun, args, in_axes, **tol):
    got = vmap(fun, in_axes=in_axes)(*args)
    want = _loop(fun, args, in_axes)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(
        np.asarray(got, np.float64 if want.dtype != c64 else c64), want, **tol
    )


UNARY_VMAP = [u for u in UNARY if u[0] in (
    "neg", "abs", "exp", "log", "sin", "tanh", "sqrt", "cbrt", "acosh", "erf_inv",
    "integer_pow3", "sin_accuracy", "reciprocal"
)] + [
    ("round", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), (-3, 3), False),
    ("floor", lax.floor, (-3, 3), False),
    ("sign", lax.sign, (-3, 3), False),
    ("is_finite", lax.is_finite, (-3, 3), False),
    ("to_int", lambda x: lax.convert_element_type(x, np.int32), (-3, 3), False),
    ("to_c64", lambda x: lax.convert_element_type(x, np.complex64), (-3, 3), False),
    ("lgamma", lax.lgamma, (0.5, 3), False),
    ("digamma", lax.digamma, (0.5, 3), False),
]  # fmt: skip


@pytest.mark.parametrize("in_axis", [0, 1])
@pytest.mark.parametrize("name,fun,domain,cplx", UNARY_VMAP, ids=[u[0] for u in UNARY_VMAP])
def test_unary_vmap(name, fun, domain, cplx, in_axis):
    shape = (2, 3) if in_axis == 0 else (3, 2)
    _check_vmap(fun, (_points(*domain, shape),), (in_axis,), rtol=1e-6)


def test_unary_vmap_complex_and_int():
    _check_vmap(lax.conj, (_cpoints((2, 3)),), (0,))
    _check_vmap(lax.real, (_cpoints((3, 2)),), (1,))
    _check_vmap(lax.imag, (_cpoints((2, 3)),), (0,))
    _check_vmap(lax.bitwise_not, (np.int32([[1, 2, 3], [4, 5, 6]]),), (1,))


BINARY_VMAP = [
    lax.add, lax.sub, lax.mul, lax.div, lax.rem, lax.pow, lax.atan2, lax.max, lax.min,
    lax.lt, lax.eq, lax.complex,
]  # fmt: skip

# (x shape, y shape, in_axes): mapped/unmapped mixes, rank-0 examples next to arrays.
VMAP_CASES = [
    ((2, 3), (2, 3), (0, 0)),
    ((3, 2), (2, 3), (1, 0)),
    ((2, 3), (3,), (0, None)),
    ((3,), (3, 2), (None, 1)),
    ((2,), (3,), (0, None)),  # scalar examples of x, array y
    ((2,), (2, 3), (0, 0)),
    ((), (2, 3), (None, 0)),
    ((2, 1, 3), (2, 3), (1, None)),  # size-1 examples stretched against y
]


@pytest.mark.parametrize("case", VMAP_CASES, ids=lambda c: str(c).replace(" ", ""))
@pytest.mark.parametrize("fun", BINARY_VMAP, ids=lambda f: f.__name__)
def test_binary_vmap(fun, case):
    xs, ys, in_axes = case
    x, y = _points(0.5, 2, xs), _points(0.6, 2.1, ys)
    _check_vmap(fun, (x, y), in_axes, rtol=1e-6)


def test_integer_binary_vmap():
    x, y = np.int32([[1, 2, 3], [4, 5, 6]]), np.int32([1, 2, 3])
    for fun in (lax.bitwise_and, lax.shift_left, lax.shift_right_arithmetic, lax.rem):
        _check_vmap(fun, (x, y), (0, None))
        _check_vmap(fun, (y, x), (None, 0))


SELECT_CASES = [
    # (which, cases..., in_axes)
    (np.bool_([[True, False, True], [False, False, True]]), (2, 3), (2, 3), (0, 0, 0)),
    (np.bool_([True, False]), (2, 3), (2, 3), (0, 0, 0)),  # scalar which per example
    (np.bool_([True, False]), (3,), (3,), (0, None, None)),
    (np.bool_([True, False]), (3, 2), (3,), (0, 1, None)),
    (np.bool_([True, False, True]), (2, 3), (3,), (None, 0, None)),
    (np.bool_(True), (3, 2), (2, 3), (None, 1, 0)),
    (np.bool_([[True, False, True], [False, False, True]]), (3,), (3,), (0, None, None)),
    (np.bool_([True, False]), (2,), (), (0, 0, None)),
]


@pytest.mark.parametrize("case", SELECT_CASES, ids=lambda c: str(c[-1]).replace(" ", ""))
def test_select_n_vmap(case):
    which, sa, sb, in_axes = case
    a, b = _points(-2, 2, sa), _points(-2, 2, sb)
    _check_vmap(lax.select_n, (which, a, b), in_axes)


def test_select_n_vmap_integer_which():
    which = np.int32([[0, 1, 2], [2, 1, 0]])
    a, b, c = _points(-2, 2, (3,)), _points(-2, 2, (2, 3)), _points(-2, 2, (3, 2))
    _check_vmap(lax.select_n, (which, a, b, c), (0, None, 0, 1))
    _check_vmap(lax.select_n, (np.int32([2, 0]), a, b, c), (0, None, 0, 1))


CLAMP_CASES = [
    ((), (2, 3), (), (None, 0, None)),
    ((2,), (2, 3), (), (0, 0, None)),  # a scalar bound per example
    ((2,), (3,), (2,), (0, None, 0)),
    ((3,), (3, 2), (2, 3), (None, 1, 0)),
    ((2, 3), (3,), (), (0, None, None)),
    ((2,), (), (), (0, None, None)),
]


@pytest.mark.parametrize("case", CLAMP_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_clamp_vmap(case):
    s_lo, s_x, s_hi, in_axes = case
    lo, x, hi = _points(-1.5, -0.5, s_lo), _points(-2, 2, s_x), _points(0.5, 1.5, s_hi)
    _check_vmap(lax.clamp, (lo, x, hi), in_axes)


def test_vmap_of_grad_and_grad_of_vmap():
    x = _points(0.5, 2, (2, 3))
    y = _points(-1, 1, (3,))

    def f(x, y):
        return lax.reduce_sum(lax.mul(lax.log(x), lax.max(y, 0.0)), (0,))

    g = vmap(ad.grad(f), in_axes=(0, None))(x, y)
    want = np.maximum(y, 0) / x
    np.testing.assert_allclose(g, want, rtol=1e-6)
    g = ad.grad(lambda x: lax.reduce_sum(vmap(f, in_axes=(0, None))(x, y), (0,)))(x)
    np.testing.assert_allclose(g, want, rtol=1e-6)


def test_jacobians_of_a_composite_agree():
    # jacfwd is vmap of jvp and jacrev vmap of vjp: the jvp rules' outputs are batched,
    # the transposes too; both must give one Jacobian, and check_grads must agree.
    def f(x):
        a = lax.clamp(np.float32(-1), x, np.float32(1))
        b = lax.select_n(lax.lt(x, 0.5), lax.sin(x), lax.exp(x))
        c = lax.pow(lax.abs(x), lax.cos(x))
        d = lax.max(x, lax.neg(x))
        e = lax.atan2(x, lax.add(lax.square(x), 1.0))
        return lax.add(lax.add(lax.mul(a, b), lax.div(c, d)), e)

    x = np.float32([-1.5, -0.3, 0.4, 0.9, 1.7])
    np.testing.assert_allclose(ad.jacfwd(f)(x), ad.jacrev(f)(x), rtol=1e-5)
    total = lambda x: lax.reduce_sum(f(x), (0,))  # noqa: E731
    np.testing.assert_allclose(ad.jacfwd(ad.jacrev(total))(x), ad.hessian(total)(x), rtol=1e-5)
    check_grads(f, (x,), order=2)


# ---------------------------------------------------------------------------
# Coverage: every primitive of the two modules has its rules

LINEAR = {"neg", "add", "sub", "mul", "div", "convert_element_type", "select_n"}
LINEAR |= {"complex", "real", "imag", "conj"}


def test_every_primitive_has_its_rules():
    from polyjax_core.primitive import Primitive
    from polyjax_interpreters import batching
    from polyjax_numpy.lax import _complex, _elementwise

    prims = {
        p
        for m in (_elementwise, _complex)
        for p in vars(m).values()
        if isinstance(p, Primitive) and p.name != "add_any"
    }
    assert len(prims) == 68  # polygamma and the eq_to/le_to/lt_to comparisons included
    for p in prims:
        assert p in ad.primitive_jvps, p
        assert p in batching.primitive_batchers, p
        assert (p in ad.primitive_transposes) == (p.name in LINEAR), p
