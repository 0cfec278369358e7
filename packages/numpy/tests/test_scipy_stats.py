"""polyjax.scipy.stats against scipy.stats.

Oracles: SciPy's distributions in float64 for values (every function of every
distribution, with `loc` and `scale`), SciPy's `mode`, `rankdata` and `sem`,
`check_grads` for derivatives, vmap against a loop and jit against eager.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as osp

from polyjax_core import config
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy import random
from polyjax_numpy.scipy import stats

X = np.linspace(-4, 6, 21).astype(np.float32)
Q = np.linspace(0, 1, 11).astype(np.float32)
LOC, SCALE = np.float32(0.5), np.float32(1.5)

# distribution -> (shape parameters, points to evaluate at)
CONTINUOUS = {
    "norm": ((), X),
    "expon": ((), X),
    "laplace": ((), X),
    "logistic": ((), X),
    "cauchy": ((), X),
    "uniform": ((), X / 4 + 1),
    "gumbel_r": ((), X),
    "gumbel_l": ((), X),
    "t": ((3.5,), X),
    "gamma": ((2.5,), X),
    "chi2": ((3.0,), X),
    "beta": ((2.0, 3.5), X / 4 + 1),
    "pareto": ((2.5,), X),
    "truncnorm": ((-0.5, 1.5), X / 2),
}
CONTINUOUS_CASES = [
    (name, fn) for name in sorted(CONTINUOUS) for fn in getattr(stats, name).__all__
]


@pytest.mark.parametrize("name,fn", CONTINUOUS_CASES)
def test_continuous(name, fn):
    params, x = CONTINUOUS[name]
    if fn in ("ppf", "isf"):
        x = Q
    out = getattr(getattr(stats, name), fn)(x, *params, LOC, SCALE)
    assert out.dtype == np.float32 and out.shape == x.shape
    ref = getattr(getattr(osp, name), fn)(x.astype(np.float64), *params, LOC, SCALE)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize(
    "name,fn,params",
    [
        ("gennorm", "logpdf", (1.5,)),
        ("gennorm", "pdf", (0.7,)),
        ("gennorm", "cdf", (1.5,)),
        ("vonmises", "logpdf", (2.0,)),
        ("vonmises", "pdf", (0.5,)),
        ("wrapcauchy", "logpdf", (0.3,)),
        ("wrapcauchy", "pdf", (0.7,)),
    ],
)
def test_continuous_without_loc_scale(name, fn, params):
    out = getattr(getattr(stats, name), fn)(X, *params)
    ref = getattr(getattr(osp, name), fn)(X.astype(np.float64), *params)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-6)


K = np.concatenate([np.arange(-2.0, 12.0), [2.5]]).astype(np.float32)
DISCRETE = {
    "poisson": (3.0,),
    "bernoulli": (0.3,),
    "binom": (8, 0.3),
    "geom": (0.3,),
    "nbinom": (3.5, 0.3),
    "betabinom": (8, 2.0, 3.0),
}
DISCRETE_CASES = [(name, fn) for name in sorted(DISCRETE) for fn in ("logpmf", "pmf")]
DISCRETE_CASES += [("poisson", "cdf")]


@pytest.mark.parametrize("name,fn", DISCRETE_CASES)
def test_discrete(name, fn):
    params = DISCRETE[name]
    out = getattr(getattr(stats, name), fn)(K, *params, 1)
    assert out.dtype == np.float32 and out.shape == K.shape
    ref = getattr(getattr(osp, name), fn)(K.astype(np.float64), *params, 1)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-6)


def test_bernoulli_cdf_ppf():
    np.testing.assert_allclose(stats.bernoulli.cdf(K, 0.3), osp.bernoulli.cdf(K, 0.3))
    q = np.float32([0, 0.3, 0.7, 0.71, 1, -0.1, 1.1])
    np.testing.assert_array_equal(stats.bernoulli.ppf(q, 0.3), osp.bernoulli.ppf(q, 0.3))


def test_multinomial():
    x = np.float32([[1, 2, 1], [4, 0, 0], [1, 1, 1], [1.5, 1.5, 1], [-1, 4, 1]])
    p = np.float32([0.2, 0.3, 0.5])
    out = stats.multinomial.logpmf(x, 4, p)
    assert out.shape == (5,)
    np.testing.assert_allclose(out, osp.multinomial.logpmf(x, 4, p), rtol=2e-5)
    # Batched n and p broadcast against the counts.
    n = np.float32([4, 4, 3, 4, 4])
    np.testing.assert_allclose(
        stats.multinomial.pmf(x, n, p[None]), osp.multinomial.pmf(x, n, p), rtol=2e-5, atol=1e-7
    )
    with pytest.raises(ValueError, match="axis of outcomes"):
        stats.multinomial.logpmf(np.float32(1), 1, p)


def test_dirichlet():
    alpha = np.float32([1.0, 2.0, 3.0])
    x = np.float32([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3], [0.5, 0.5, 0.0]]).T
    ref = osp.dirichlet.logpdf(x[:, :2], alpha)
    out = stats.dirichlet.logpdf(x, alpha)
    assert out.shape == (3,)
    np.testing.assert_allclose(out[:2], ref, rtol=2e-5)
    assert out[2] == -np.inf  # a zero component with alpha > 1: density 0
    np.testing.assert_allclose(stats.dirichlet.logpdf(x[:2, :2], alpha), ref, rtol=2e-5)
    np.testing.assert_allclose(stats.dirichlet.pdf(x[:, 0], alpha), np.exp(ref[0]), rtol=2e-5)
    off = np.float32([[0.2, 0.3, 0.6], [-0.1, 0.6, 0.5]]).T
    assert np.all(stats.dirichlet.logpdf(off, alpha) == -np.inf)
    with pytest.raises(ValueError, match="alpha must be a vector"):
        stats.dirichlet.logpdf(x, alpha[None])
    with pytest.raises(ValueError, match="3 or 2 components"):
        stats.dirichlet.logpdf(np.ones((4, 2), np.float32) / 4, alpha)


RNG = np.random.default_rng(0)
_A = RNG.normal(size=(3, 3))
COV = (_A @ _A.T + np.eye(3)).astype(np.float32)
MEAN = RNG.normal(size=3).astype(np.float32)
XS = RNG.normal(size=(5, 3)).astype(np.float32)


def test_multivariate_normal():
    mvn = stats.multivariate_normal
    ref = osp.multivariate_normal.logpdf(XS, MEAN, COV)
    out = mvn.logpdf(XS, MEAN, COV)
    assert out.shape == (5,) and out.dtype == np.float32
    np.testing.assert_allclose(out, ref, rtol=2e-5)
    np.testing.assert_allclose(mvn.pdf(XS[0], MEAN, COV), np.exp(ref[0]), rtol=2e-5)
    np.testing.assert_allclose(
        mvn.logpdf(XS, MEAN, 2.0), osp.multivariate_normal.logpdf(XS, MEAN, 2.0), rtol=2e-5
    )
    np.testing.assert_allclose(
        mvn.logpdf(X, 0.5, 2.0), osp.multivariate_normal.logpdf(X, 0.5, 2.0), rtol=2e-5
    )
    # A batch of covariances broadcasts against the points.
    covs = np.stack([COV, 2 * COV])
    out = mvn.logpdf(XS[:, None], MEAN, covs)
    assert out.shape == (5, 2)
    np.testing.assert_allclose(
        out[:, 1], osp.multivariate_normal.logpdf(XS, MEAN, 2 * COV), rtol=2e-5
    )
    with pytest.raises(NotImplementedError, match="allow_singular"):
        mvn.logpdf(XS, MEAN, COV, allow_singular=True)
    with pytest.raises(ValueError, match=r"cov must have shape \(\.\.\., 3, 3\)"):
        mvn.logpdf(XS, MEAN, COV[:2])
    with pytest.raises(ValueError, match="x must have 3 coordinates"):
        mvn.logpdf(XS[:, :2], MEAN, COV)


# ---------------------------------------------------------------------------
# Tails and special values


def test_tails_float64():
    with config.enable_x64(True):
        x = np.array([-40.0, -20.0, -5.0, 0.0, 5.0, 20.0, 40.0])
        np.testing.assert_allclose(stats.norm.logcdf(x), osp.norm.logcdf(x), rtol=1e-10)
        np.testing.assert_allclose(stats.norm.logsf(x), osp.norm.logsf(x), rtol=1e-10)
        np.testing.assert_allclose(stats.norm.sf(x), osp.norm.sf(x), rtol=1e-13, atol=0)
        q = np.array([1e-300, 1e-20, 0.3, 0.5, 0.9])
        np.testing.assert_allclose(stats.norm.isf(q), osp.norm.isf(q), rtol=1e-13, atol=1e-300)
        # A truncation far in the upper tail keeps its precision.
        z = np.array([10.0, 10.5, 11.0, 12.0])
        for fn in ("logpdf", "logcdf", "logsf"):
            ours = getattr(stats.truncnorm, fn)(z, 10.0, 12.0)
            ref = getattr(osp.truncnorm, fn)(z, 10.0, 12.0)
            np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-12, err_msg=fn)
        x = np.array([-1e3, -50.0, 50.0])
        np.testing.assert_allclose(stats.cauchy.cdf(x), osp.cauchy.cdf(x), rtol=1e-13)
        np.testing.assert_allclose(stats.logistic.logcdf(x), osp.logistic.logcdf(x), rtol=1e-13)


def test_special_values():
    inf = np.inf
    np.testing.assert_array_equal(stats.expon.logpdf(np.float32([-1, 0])), [-inf, 0])
    np.testing.assert_array_equal(stats.uniform.ppf(np.float32([-0.1, 1.1])), [np.nan] * 2)
    np.testing.assert_array_equal(stats.cauchy.ppf(np.float32([0, 1])), [-inf, inf])
    np.testing.assert_array_equal(stats.norm.ppf(np.float32([0, 1])), [-inf, inf])
    assert np.isnan(stats.vonmises.logpdf(0.0, -1.0))
    np.testing.assert_array_equal(stats.gamma.cdf(np.float32([-1, 0]), 2.0), [0, 0])
    np.testing.assert_array_equal(stats.beta.sf(np.float32([-1, 2]), 2.0, 3.0), [1, 0])
    np.testing.assert_array_equal(stats.truncnorm.cdf(np.float32([-2, 3]), -1.0, 1.0), [0, 1])


# ---------------------------------------------------------------------------
# dtypes and shapes


def test_dtypes_and_weak_types():
    out = stats.norm.logpdf(np.int32(1))
    assert out.dtype == np.float32 and not out.weak_type
    out = stats.norm.logpdf(1.0)
    assert out.dtype == np.float32 and out.weak_type
    # The result's type does not depend on which operands a formula happens to use.
    out = stats.uniform.logpdf(np.float32([0.5]), 0.0, 2.0)
    assert out.dtype == np.float32 and not out.weak_type
    for dtype in (np.float16, jnp.bfloat16):
        out = stats.norm.cdf(np.array([0.0, 1.0], dtype))
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(out.astype(np.float32), [0.5, 0.8413], rtol=1e-2)
    assert stats.poisson.pmf(np.int32(2), np.float16(2)).dtype == np.float16
    with config.enable_x64(True):
        assert stats.gamma.logpdf(np.float64(1.0), 2.0).dtype == np.float64
    with pytest.raises(TypeError, match="norm.logpdf requires ndarray or scalar arguments"):
        stats.norm.logpdf([1.0])


@pytest.mark.parametrize("shape_x,shape_p", [((), ()), ((0,), ()), ((2, 0), (1,)), ((3, 1), (4,))])
def test_broadcast_shapes(shape_x, shape_p):
    x = np.full(shape_x, 0.5, np.float32)
    p = np.full(shape_p, 2.5, np.float32)
    shape = np.broadcast_shapes(shape_x, shape_p)
    for mod, ref in ((stats.gamma, osp.gamma), (stats.t, osp.t), (stats.poisson, osp.poisson)):
        fn = "logpmf" if mod is stats.poisson else "logpdf"
        out = getattr(mod, fn)(x, p)
        assert out.shape == shape, mod.__name__
        np.testing.assert_allclose(out, getattr(ref, fn)(x, p), rtol=2e-5)
    assert stats.norm.cdf(x, p, p).shape == shape


# ---------------------------------------------------------------------------
# mode, rankdata, sem

INTS = RNG.integers(0, 4, size=(4, 9))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_mode(axis):
    ours, ref = stats.mode(INTS, axis=axis), osp.mode(INTS, axis=axis)
    np.testing.assert_array_equal(ours.mode, ref.mode)
    np.testing.assert_array_equal(ours.count, ref.count)
    assert ours.mode.dtype == np.int32 and ours.count.dtype == np.int32
    kept = stats.mode(INTS, axis=axis, keepdims=True)
    ref = osp.mode(INTS, axis=axis, keepdims=True)
    assert kept.mode.shape == ref.mode.shape


def test_mode_float_ties_and_empty():
    x = np.float32([3.0, 1.0, 3.0, 1.0, 2.0])
    assert stats.mode(x).mode == 1.0  # the smallest of the most frequent
    empty = stats.mode(np.zeros((0, 3), np.float32))
    assert empty.mode.shape == (3,) and np.all(np.isnan(empty.mode)) and np.all(empty.count == 0)
    with pytest.raises(NotImplementedError, match="nan_policy='omit'"):
        stats.mode(x, nan_policy="omit")
    with pytest.raises(ValueError, match="nan_policy must be"):
        stats.mode(x, nan_policy="bad")


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata(method):
    for axis in (None, 0, 1):
        ours = stats.rankdata(INTS, method, axis=axis)
        ref = osp.rankdata(INTS, method, axis=axis)
        np.testing.assert_array_equal(ours, ref)
        assert ours.dtype == (np.float32 if method == "average" else np.int32)
    assert stats.rankdata(np.zeros((0,)), method).shape == (0,)


def test_rankdata_nan_and_errors():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    x[1, 2] = np.nan
    np.testing.assert_array_equal(stats.rankdata(x, axis=1), osp.rankdata(x, axis=1))
    with pytest.raises(ValueError, match="method must be one of"):
        stats.rankdata(x, "bad")


def test_sem():
    x = RNG.normal(size=(4, 6)).astype(np.float32)
    x[0, 2] = np.nan
    for kwargs in ({}, {"axis": 1}, {"axis": None, "ddof": 0}, {"keepdims": True}):
        np.testing.assert_allclose(stats.sem(x, **kwargs), osp.sem(x, **kwargs), rtol=1e-5)
    np.testing.assert_allclose(
        stats.sem(x, axis=1, nan_policy="omit"), osp.sem(x, axis=1, nan_policy="omit"), rtol=1e-5
    )
    assert stats.sem(np.arange(4)).dtype == np.float32
    with pytest.raises(NotImplementedError, match="nan_policy='raise'"):
        stats.sem(x, nan_policy="raise")


# ---------------------------------------------------------------------------
# Derivatives and transformations

XG = np.float32([0.3, 1.7, 4.2])


def test_grads_continuous():
    check_grads(
        lambda x, loc, scale: (
            stats.norm.logpdf(x, loc, scale),
            stats.norm.logcdf(x, loc, scale),
            stats.logistic.logsf(x, loc, scale),
            stats.cauchy.logpdf(x, loc, scale),
            stats.truncnorm.logpdf(x, -1.0, 3.0, loc, scale),
        ),
        (XG, np.float32(0.5), np.float32(1.5)),
        order=2,
    )
    check_grads(
        lambda x, a: (
            stats.gamma.logpdf(x, a),
            stats.t.logpdf(x, a),
            stats.beta.logpdf(x / 5, a, 2.0),
            stats.chi2.logpdf(x, a),
            stats.gamma.cdf(x, 2.0),
        ),
        (XG, XG[::-1]),
        order=2,
    )


def test_grads_discrete_and_multivariate():
    check_grads(
        lambda mu, p: (stats.poisson.logpmf(3.0, mu), stats.binom.logpmf(2.0, 5.0, p)),
        (XG, XG / 5),
        order=2,
    )
    check_grads(
        lambda alpha: stats.dirichlet.logpdf(np.float32([0.2, 0.3, 0.5]), alpha), (XG,), order=2
    )
    check_grads(
        lambda x, mean, cov: stats.multivariate_normal.logpdf(x, mean, cov @ cov.T),
        (XS, MEAN, COV),
        order=2,
    )


def test_jit_and_vmap():
    f = jit(lambda x, m, c: stats.multivariate_normal.logpdf(x, m, c))
    np.testing.assert_allclose(f(XS, MEAN, COV), stats.multivariate_normal.logpdf(XS, MEAN, COV))
    batched = vmap(stats.multivariate_normal.logpdf, in_axes=(0, None, None))(XS, MEAN, COV)
    loop = [stats.multivariate_normal.logpdf(x, MEAN, COV) for x in XS]
    np.testing.assert_allclose(batched, np.stack(loop), rtol=1e-6)
    g = jit(lambda x: (stats.rankdata(x, axis=1), stats.mode(x, axis=1)))
    ranks, (modes, counts) = g(INTS)
    np.testing.assert_array_equal(ranks, osp.rankdata(INTS, axis=1))
    np.testing.assert_array_equal(modes, osp.mode(INTS, axis=1).mode)
    batched = vmap(lambda x: stats.rankdata(x, "min"))(INTS)
    np.testing.assert_array_equal(batched, osp.rankdata(INTS, "min", axis=1))


# ---------------------------------------------------------------------------
# gaussian_kde

KDE_DATA = RNG.normal(size=(2, 30))
KDE_WEIGHTS = RNG.uniform(size=30)
KDE_POINTS = RNG.normal(size=(2, 7))


@pytest.mark.parametrize(
    "bw_method,weighted",
    [(None, False), ("silverman", True), (0.5, True), (lambda kde: 0.3, False)],
)
def test_gaussian_kde(bw_method, weighted):
    weights = KDE_WEIGHTS if weighted else None
    ours = stats.gaussian_kde(KDE_DATA.astype(np.float32), bw_method, weights)
    ref = osp.gaussian_kde(KDE_DATA, bw_method, weights)
    np.testing.assert_allclose(ours.covariance, ref.covariance, rtol=1e-4)
    np.testing.assert_allclose(ours.neff, ref.neff, rtol=1e-5)
    np.testing.assert_allclose(ours.evaluate(KDE_POINTS), ref.evaluate(KDE_POINTS), rtol=1e-4)
    np.testing.assert_allclose(ours.logpdf(KDE_POINTS), ref.logpdf(KDE_POINTS), rtol=1e-4)


def test_gaussian_kde_integrals_resample_and_pytree():
    ours, ref = stats.gaussian_kde(KDE_DATA.astype(np.float32)), osp.gaussian_kde(KDE_DATA)
    mean, cov = np.float32([0.1, -0.2]), np.eye(2, dtype=np.float32)
    np.testing.assert_allclose(
        ours.integrate_gaussian(mean, cov), ref.integrate_gaussian(mean, cov), rtol=1e-4
    )
    other = stats.gaussian_kde(KDE_DATA.astype(np.float32)[:, :10] + 1)
    ref_other = osp.gaussian_kde(KDE_DATA[:, :10] + 1)
    np.testing.assert_allclose(ours.integrate_kde(other), ref.integrate_kde(ref_other), rtol=1e-4)
    one_d = stats.gaussian_kde(KDE_DATA[0].astype(np.float32))
    ref_1d = osp.gaussian_kde(KDE_DATA[0])
    np.testing.assert_allclose(
        one_d.integrate_box_1d(-0.5, 1.0), ref_1d.integrate_box_1d(-0.5, 1.0), rtol=1e-4
    )
    np.testing.assert_allclose(one_d([0.1, 0.2]), ref_1d([0.1, 0.2]), rtol=1e-4)
    samples = ours.resample(random.key(0), (2000,))
    assert samples.shape == (2, 2000)
    # Samples spread like data plus kernel noise: mean near the data's.
    np.testing.assert_allclose(np.mean(samples, axis=1), KDE_DATA.mean(axis=1), atol=0.15)
    # A pytree: it goes through jit, and vmap over points works.
    f = jit(lambda kde, p: kde.logpdf(p))
    np.testing.assert_allclose(f(ours, KDE_POINTS), ours.logpdf(KDE_POINTS), rtol=1e-5)
    with pytest.raises(ValueError, match="must be 1-D"):
        ours.integrate_box_1d(0.0, 1.0)
    with pytest.raises(ValueError, match="weights must have shape"):
        stats.gaussian_kde(KDE_DATA, weights=np.ones(3))
    with pytest.raises(ValueError, match="bw_method must be"):
        stats.gaussian_kde(KDE_DATA, "bad")
    with pytest.raises(NotImplementedError):
        ours.set_bandwidth("scott")
