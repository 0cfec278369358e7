"""polyjax.scipy.special against scipy.special.

Oracles: SciPy's functions in float64 for values (float32 results within a few
ulps of them; float64 results, under x64, to near machine precision for the
functions written for accuracy), closed forms where SciPy itself is the less
accurate one (`betaln` of large arguments), `check_grads` for derivatives,
and JAX's promotion rules for dtypes.
"""

from __future__ import annotations

import decimal
import functools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.special as osp

from polyjax_core import config
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy import special

X = np.concatenate([np.linspace(-5.3, 10.0, 31), [0.5, 1.0, 2.0, 30.0]]).astype(np.float32)
POS = (np.abs(X) + 0.1).astype(np.float32)
U = np.linspace(0.0, 1.0, 41).astype(np.float32)
XG = np.array([0.3, 1.7, 4.2], np.float32)  # points for derivative checks

# name -> (argument in float32, tolerance in float32)
UNARY = {
    "gammaln": (X, 2e-5),
    "gamma": (X[X < 30], 1e-4),  # exp(gammaln) amplifies gammaln's error by |gammaln|
    "gammasgn": (X, 0),
    "loggamma": (X, 2e-5),
    "digamma": (X, 2e-5),
    "erf": (X, 2e-6),
    "erfc": (X, 2e-5),
    "erfcx": (X, 2e-5),
    "erfinv": (2 * U - 1, 2e-5),
    "ndtr": (X, 2e-5),
    "ndtri": (U, 2e-5),
    "log_ndtr": (X, 2e-5),
    "expit": (X, 2e-6),
    "logit": (U, 2e-5),
    "i0": (X, 2e-5),
    "i0e": (X, 2e-5),
    "i1": (X, 2e-5),
    "i1e": (X, 2e-5),
    "entr": (X, 2e-6),
}

# name -> (a, b, tolerance in float32), broadcast (n, 1) against (1, m)
BINARY = {
    "betaln": (POS[:, None], POS[None, ::3], 2e-5),
    "beta": (POS[:15, None], POS[None, :12:2], 1e-4),
    "gammainc": (POS[:, None], POS[None, ::3], 2e-5),
    "gammaincc": (POS[:, None], POS[None, ::3], 2e-5),
    "xlogy": (X[:, None], POS[None, ::3], 2e-6),
    "xlog1py": (X[:, None], POS[None, ::3], 2e-6),
    "rel_entr": (X[:, None], X[None, ::3], 2e-6),
    "kl_div": (X[:, None], X[None, ::3], 2e-6),
    "poch": (POS[:15, None], np.array([[-1.5, 0.0, 1.0, 2.5]], np.float32), 1e-4),
    "polygamma": (np.arange(4.0, dtype=np.float32)[:, None], POS[None], 2e-5),
    "zeta": (POS[:, None] + 1.1, POS[None, ::3], 2e-5),
}


@functools.cache
def _jit(name):
    """`special.<name>` under jit: one compilation per shape instead of one per operation."""
    return jit(getattr(special, name))


def _assert_close(ours, ref, rtol, atol=None):
    ours = np.asarray(ours, np.float64)
    atol = rtol if atol is None else atol
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values(name):
    x, tol = UNARY[name]
    out = _jit(name)(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    _assert_close(out, getattr(osp, name)(x.astype(np.float64)), tol, atol=tol)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values(name):
    a, b, tol = BINARY[name]
    out = _jit(name)(a, b)
    shape = np.broadcast_shapes(a.shape, b.shape)
    assert out.dtype == np.float32 and out.shape == shape
    ref = getattr(osp, name)(a.astype(np.float64), b.astype(np.float64))
    _assert_close(out, ref, tol, atol=tol)


def test_exponential_integrals():
    x = np.concatenate(
        [[0.0, 1e-5, 0.999, 1.0, 1.001, 50.0, 100.0, -1.0], np.linspace(0.01, 30, 25)]
    )
    x32 = x.astype(np.float32)

    def ref32(values):  # SciPy's float64 values rounded to float32 (underflow included)
        return np.asarray(values).astype(np.float32)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        # SciPy warns that it truncates the order 2.5.
        warnings.simplefilter("ignore", RuntimeWarning)
        _assert_close(_jit("exp1")(x32), ref32(osp.exp1(x)), 3e-6, atol=0)
        xi = np.concatenate([x, -x, [19.9, 20.1, 88.0]])
        _assert_close(_jit("expi")(xi.astype(np.float32)), ref32(osp.expi(xi)), 3e-6, atol=0)
        n = np.array([0.0, 1, 2, 5, 40, 2.5, -1])[:, None]
        _assert_close(_jit("expn")(n, x32), ref32(osp.expn(n, x)), 3e-6, atol=0)
        with config.enable_x64(True):
            _assert_close(special.exp1(x), osp.exp1(x), 1e-13, atol=0)
            xi = np.concatenate([x, -x, [39.9, 40.1, 300.0, 700.0]])
            _assert_close(special.expi(xi), osp.expi(xi), 1e-13, atol=0)
            _assert_close(special.expn(n, x), osp.expn(n, x), 1e-13, atol=0)
    check_grads(
        lambda x: (special.exp1(x), special.expi(x), special.expi(-x), special.expn(3, x)),
        (XG,),
        order=2,
    )
    check_grads(lambda x: special.expn(0, x), (XG,), order=1)


def test_other_values():
    _assert_close(_jit("betainc")(2.0, 3.0, U), osp.betainc(2.0, 3.0, U.astype(float)), 2e-6)
    _assert_close(_jit("zeta")(POS + 1.1), osp.zeta(POS.astype(float) + 1.1), 2e-5)
    _assert_close(special.multigammaln(POS + 3, 4), osp.multigammaln(POS + 3.0, 4), 2e-5)
    n = np.arange(-2, 12)
    _assert_close(special.factorial(n), osp.factorial(n), 2e-5)
    _assert_close(special.factorial(2.5), osp.factorial(2.5), 2e-5)
    _assert_close(special.bernoulli(12), osp.bernoulli(12), 1e-6)
    big = special.bernoulli(300)
    assert big.shape == (301,) and np.isinf(big[-1]) and big[-2] == 0  # |B_300| > float max
    m = np.arange(12.0).reshape(3, 4)
    _assert_close(special.softmax(m), osp.softmax(m), 1e-6)
    _assert_close(special.softmax(m, axis=1), osp.softmax(m, axis=1), 1e-6)
    _assert_close(special.log_softmax(m, axis=(0, 1)), osp.log_softmax(m), 1e-6)
    _assert_close(special.logsumexp(m, axis=0), osp.logsumexp(m, axis=0), 1e-6)


def test_special_values():
    inf, nan = np.inf, np.nan
    edge = np.array([0.0, -0.0, -1.0, -2.0, inf, -inf, nan], np.float32)
    _assert_close(_jit("gammasgn")(edge), [1, -1, nan, nan, 1, nan, nan], 0)
    _assert_close(_jit("gamma")(edge[:4]), [inf, -inf, nan, nan], 0)
    _assert_close(_jit("loggamma")(np.float32([-0.5, 0.0])), [nan, inf], 0)
    _assert_close(_jit("ndtri")(np.float32([0, 1, -0.1, 1.1, nan])), [-inf, inf, nan, nan, nan], 0)
    _assert_close(_jit("logit")(np.float32([0, 1, 2])), [-inf, inf, nan], 0)
    _assert_close(_jit("erfinv")(np.float32([-1, 1])), [-inf, inf], 0)
    _assert_close(_jit("erfcx")(np.float32([inf, -30.0])), [0, inf], 0)
    _assert_close(_jit("entr")(np.float32([0, -1, nan])), [0, -inf, nan], 0)
    p = np.float32([0, 0, 1, 1, -1, nan])
    q = np.float32([0, -1, 0, 2, 1, 1])
    _assert_close(_jit("rel_entr")(p, q), osp.rel_entr(p, q), 1e-6)
    _assert_close(_jit("kl_div")(p, q), osp.kl_div(p, q), 1e-6)
    _assert_close(_jit("xlogy")(np.float32([0, 0, 1]), np.float32([0, -1, 0])), [0, 0, -inf], 0)
    _assert_close(_jit("xlog1py")(np.float32([0, 1]), np.float32([-1, -1])), [0, -inf], 0)
    _assert_close(_jit("poch")(np.float32([-2.0, 0.5]), np.float32([0.0, -1.0])), [1, -2], 1e-6)


# ---------------------------------------------------------------------------
# Accuracy in float64 (under x64) where the algorithms are ours


def test_float64_accuracy():
    with config.enable_x64(True):
        p = np.concatenate([[1e-300, 1e-100, 1e-30, 1e-10], np.linspace(1e-3, 1 - 1e-3, 37)])
        p = np.concatenate([p, [1 - 1e-10]])
        out = _jit("ndtri")(p)
        assert out.dtype == np.float64
        _assert_close(out, osp.ndtri(p), 1e-13, atol=0)
        # Below -20 the three-term asymptotic series is within 1e-10 (as in JAX).
        x = np.array([-100.0, -30.0, -20.1, -19.9, -10.5, -5.0, 0.0, 1e-3, 4.9, 9.0, 40.0])
        _assert_close(_jit("log_ndtr")(x), osp.log_ndtr(x), 1e-10, atol=0)
        _assert_close(_jit("log_ndtr")(x[3:]), osp.log_ndtr(x[3:]), 1e-14, atol=1e-300)
        x = np.linspace(-5, 30, 71)
        _assert_close(_jit("erfcx")(x), osp.erfcx(x), 1e-13, atol=0)
        _assert_close(_jit("ndtr")(x / 3 - 5), osp.ndtr(x / 3 - 5), 1e-13, atol=0)
        # B(k, b) = (k-1)! / (b (b+1) ... (b+k-1)) for integer k: exact for any b,
        # where lgamma(b) - lgamma(b + k) loses digits (SciPy's betaln is off by 1e-11).
        for k, b in [(1, 1e6), (3, 1e4), (8, 1e6), (12, 1e12), (9, 30.5)]:
            exact = math.log(math.factorial(k - 1)) - math.fsum(math.log(b + j) for j in range(k))
            _assert_close(_jit("betaln")(float(k), b), exact, 1e-14, atol=0)
            _assert_close(_jit("betaln")(b, float(k)), exact, 1e-14, atol=0)
        # B(1/2, n) = 4^n n! (n-1)! / (2n)!, its logarithm taken in 40 digits.
        for n in (8, 1000):
            f = math.factorial
            ratio = Fraction(4**n * f(n) * f(n - 1), f(2 * n))
            with decimal.localcontext(prec=40):
                exact = float((decimal.Decimal(ratio.numerator) / ratio.denominator).ln())
            _assert_close(_jit("betaln")(0.5, float(n)), exact, 1e-14, atol=0)
        a = np.array([0.5, 3.0, 7.9, 8.0, 20.0])
        _assert_close(_jit("betaln")(a[:, None], a), osp.betaln(a[:, None], a), 1e-13, atol=0)
        x = np.array([0.3, 2.5, -0.5, -1.5, 25.0])
        _assert_close(_jit("gamma")(x), osp.gamma(x), 1e-13, atol=0)
        _assert_close(_jit("gammaln")(x), osp.gammaln(x), 1e-13, atol=0)


def test_float32_tails():
    p = np.float32([1e-30, 1e-20, 1e-10, 1e-5, 0.01, 0.099, 0.101, 0.3, 0.9, 0.99, 0.9999])
    _assert_close(_jit("ndtri")(p), osp.ndtri(p.astype(float)), 2e-6, atol=0)
    x = np.float32([-100.0, -30.0, -10.5, -9.9, -5.0, 0.0, 4.9, 5.1, 8.0])
    _assert_close(_jit("log_ndtr")(x), osp.log_ndtr(x.astype(float)), 2e-6, atol=1e-30)
    x = np.float32([2.0, 5.0, 10.0, 100.0, 1e4])
    _assert_close(_jit("erfcx")(x), osp.erfcx(x.astype(float)), 2e-6, atol=0)


# ---------------------------------------------------------------------------
# dtypes, shapes, errors


@pytest.mark.parametrize(
    "dtype,expected",
    [
        (np.float32, np.float32),
        (np.float16, np.float16),
        (jnp.bfloat16, jnp.bfloat16),
        (np.int32, np.float32),
        (np.uint8, np.float32),
        (np.bool_, np.float32),
    ],
)
def test_result_dtypes(dtype, expected):
    x = np.array([1, 2, 3]).astype(dtype)
    for fn in (special.gammaln, special.ndtr, special.expit):
        out = fn(x)
        assert out.dtype == np.dtype(expected) and not out.weak_type
        tol = 2e-2 if np.dtype(dtype).itemsize == 2 else 2e-5
        ref = getattr(osp, fn.__name__)(x.astype(np.float64))
        _assert_close(out.astype(np.float32), ref, tol)
    assert special.xlogy(x, 2.0).dtype == np.dtype(expected)
    assert special.xlogy(x, np.float32(2)).dtype == np.result_type(expected, np.float32)


def test_weak_types_and_promotion():
    out = special.gammaln(3.0)
    assert out.dtype == np.float32 and out.weak_type and out.shape == ()
    out = special.betainc(2, 3.0, np.float16(0.5))
    assert out.dtype == np.float16 and not out.weak_type
    assert special.gammainc(np.int32(2), np.float32(1.0)).dtype == np.float32
    with config.enable_x64(True):
        assert special.gammaln(np.int64(3)).dtype == np.float64
        assert special.gammaln(np.int32(3)).dtype == jnp.sin(np.int32(3)).dtype
        assert special.zeta(np.float32(2.0)).dtype == np.float32


@pytest.mark.parametrize(
    "shape_a,shape_b", [((), ()), ((0,), (0,)), ((2, 0), (1,)), ((3, 1), (4,)), ((), (2, 3))]
)
def test_broadcast_shapes(shape_a, shape_b):
    a = np.full(shape_a, 2.5, np.float32)
    b = np.full(shape_b, 1.5, np.float32)
    shape = np.broadcast_shapes(shape_a, shape_b)
    for name in ("betaln", "gammainc", "xlogy", "kl_div", "zeta"):
        out = _jit(name)(a, b)
        assert out.shape == shape, name
        _assert_close(out, getattr(osp, name)(a.astype(float), b.astype(float)), 2e-5)
    c = np.full(shape_a, 0.25, np.float32)
    assert _jit("betainc")(a, b, c).shape == np.broadcast_shapes(shape, shape_a)
    assert _jit("ndtri")(c).shape == shape_a


def test_errors():
    with pytest.raises(TypeError, match="gammaln does not support complex"):
        special.gammaln(np.complex64(1))
    with pytest.raises(TypeError, match="betaln requires ndarray or scalar arguments"):
        special.betaln([1.0], 2.0)
    with pytest.raises(NotImplementedError, match="exact=True"):
        special.factorial(3, exact=True)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        special.multigammaln(2.0, 0)
    with pytest.raises(TypeError):
        special.multigammaln(2.0, 1.5)
    with pytest.raises(ValueError, match="n must be non-negative"):
        special.bernoulli(-1)
    with pytest.raises(TypeError, match="series_order must be a Python integer"):
        special.log_ndtr(1.0, series_order=2.0)
    with pytest.raises(ValueError, match=r"series_order must be in \[0, 30\]"):
        special.log_ndtr(1.0, series_order=31)
    with pytest.raises(ConcretizationTypeError):
        jit(special.bernoulli)(3)


# ---------------------------------------------------------------------------
# Derivatives and transformations


def _many(fns):
    return lambda x: tuple(fn(x) for fn in fns)


@pytest.mark.parametrize(
    "group,arg",
    [
        (
            ("gammaln", "gamma", "digamma", "loggamma", "erf", "erfc", "erfcx", "expit", "entr"),
            XG,
        ),
        (("ndtr", "log_ndtr", "i0", "i0e", "i1", "i1e"), XG - 1),
        (("ndtri", "erfinv", "logit"), XG / 5),
    ],
)
def test_unary_grads(group, arg):
    check_grads(_many([getattr(special, n) for n in group]), (arg,), order=2)


def test_binary_grads():
    a, b = XG, XG[::-1] + 0.5
    fns = [special.betaln, special.beta, special.xlogy, special.xlog1py, special.kl_div]
    fns += [special.rel_entr, special.poch]
    check_grads(lambda a, b: tuple(f(a, b) for f in fns), (a, b), order=2)
    # Stirling branches of betaln.
    check_grads(lambda a: (special.betaln(a, 20.0), special.betaln(a + 10, 30.0)), (a,), order=2)
    # gammainc: both arguments to first order (JAX has no derivative of igamma_grad_a), x twice.
    check_grads(lambda a, x: (special.gammainc(a, x), special.gammaincc(a, x)), (a, b), order=1)
    check_grads(lambda x: (special.gammainc(2.0, x), special.gammaincc(2.0, x)), (b,), order=2)
    check_grads(
        lambda x: (
            special.polygamma(1, x),
            special.zeta(3.0, x),
            special.betainc(2.0, 3.0, x / 5),
            special.multigammaln(x + 3, 3),
        ),
        (XG,),
        order=2,
    )


def test_tail_grads():
    # The custom derivatives stay finite and accurate far in the tails.
    x = np.float32([-30.0, -12.0, -3.0])
    check_grads(special.log_ndtr, (x,), order=2)
    check_grads(special.erfcx, (np.float32([-1.0, 2.5, 12.0]),), order=2)
    g = grad(lambda x: special.log_ndtr(x))(np.float32(-1e3))
    np.testing.assert_allclose(g, 1e3, rtol=1e-5)
    # d ndtri / dp = 1 / phi(ndtri(p)).
    p = np.float32([1e-20, 0.5])
    g = vmap(grad(special.ndtri))(p)
    expected = np.sqrt(2 * np.pi) * np.exp(0.5 * osp.ndtri(p.astype(float)) ** 2)
    np.testing.assert_allclose(g, expected, rtol=1e-4)


def test_xlogy_grads_at_zero():
    # d/dy of 0 * log(y) is 0, even at y = 0; d/dx is log(y).
    assert grad(lambda y: special.xlogy(0.0, y))(0.0) == 0
    np.testing.assert_allclose(grad(special.xlogy)(0.0, 2.0), np.log(2.0), rtol=1e-6)
    assert grad(lambda y: special.xlog1py(0.0, y))(-1.0) == 0
    assert np.isfinite(grad(special.entr)(0.5))
    assert np.isfinite(grad(lambda p: special.rel_entr(p, 0.5))(0.0))


def test_jit_and_vmap():
    fns = [special.ndtri, special.log_ndtr, special.gamma, special.erfcx, special.entr]
    x = np.float32([[0.1, 0.5, 0.9], [0.01, 0.3, 0.7]])
    jitted = jit(lambda x: [f(x) for f in fns])(x)
    for f, j in zip(fns, jitted):
        np.testing.assert_allclose(j, f(x), rtol=1e-6, err_msg=f.__name__)
    batched = vmap(lambda a, b: special.betaln(a, b) + special.gammainc(a, b))(x, x[::-1])
    loop = [special.betaln(a, b) + special.gammainc(a, b) for a, b in zip(x, x[::-1])]
    np.testing.assert_allclose(batched, np.stack(loop), rtol=1e-6)
