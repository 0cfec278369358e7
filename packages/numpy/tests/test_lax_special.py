"""Special functions (`igamma`, `igammac`, `igamma_grad_a`, `random_gamma_grad`,
`regularized_incomplete_beta`, `bessel_i0e`, `bessel_i1e`, `zeta`) against
SciPy: values over dtypes and shapes (size-0 and rank-0 included), derivatives
by `check_grads` (float64), `vmap` against a loop, `jit` against eager."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import scipy.special as ss

from polyjax_core import config
from polyjax_interpreters import ad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

f32, f16, bf16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)

rng = np.random.default_rng(0)


def _positive(shape, lo=0.2, hi=12.0):
    return rng.uniform(lo, hi, shape)


def _unit(shape):
    return rng.uniform(0.02, 0.98, shape)


def _random_gamma_grad_ref(a, x):
    # dx/da holding u = P(a, x) fixed, by central differences of the inverse.
    u, h = ss.gammainc(a, x), 1e-6
    return (ss.gammaincinv(a + h, u) - ss.gammaincinv(a - h, u)) / (2 * h)


def _igamma_grad_a_ref(a, x):
    h = 1e-6
    return (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)


# name -> (lax function, scipy reference, operand generators)
CASES = {
    "igamma": (lax.igamma, ss.gammainc, (_positive, _positive)),
    "igammac": (lax.igammac, ss.gammaincc, (_positive, _positive)),
    "igamma_grad_a": (lax.igamma_grad_a, _igamma_grad_a_ref, (_positive, _positive)),
    "random_gamma_grad": (lax.random_gamma_grad, _random_gamma_grad_ref, (_positive, _positive)),
    "regularized_incomplete_beta": (
        lax.regularized_incomplete_beta,
        ss.betainc,
        (_positive, _positive, _unit),
    ),
    "bessel_i0e": (lax.bessel_i0e, ss.i0e, (lambda s: rng.uniform(-60, 60, s),)),
    "bessel_i1e": (lax.bessel_i1e, ss.i1e, (lambda s: rng.uniform(-60, 60, s),)),
    "zeta": (lax.zeta, ss.zeta, (lambda s: rng.uniform(1.5, 6, s), _positive)),
}
RTOL = {f32: 2e-4, f16: 2e-2, bf16: 5e-2}
SHAPES = [(), (0,), (7,)]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [f32, f16, bf16], ids=str)
def test_values_against_scipy(name, dtype):
    fn, ref, gens = CASES[name]
    per_shape = [[g(shape).astype(dtype) for g in gens] for shape in SHAPES]
    # One compiled program for every shape (jit), and eager for one shape.
    outs = jit(lambda groups: [fn(*args) for args in groups])(per_shape)
    if dtype == f32:
        eager = fn(*per_shape[-1])
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(outs[-1]))
    atol = 1e-5 if dtype == f32 else 2e-3
    if name in ("igamma_grad_a", "random_gamma_grad"):
        atol *= 10
    for shape, args, got in zip(SHAPES, per_shape, outs):
        assert got.dtype == dtype and got.shape == shape
        want = ref(*(a.astype(np.float64) for a in args))
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=RTOL[dtype], atol=atol)


def test_edges_and_domain():
    a = np.array([1.0, 2.0, -1.0, 0.0, 3.0, np.nan], f32)
    x = np.array([0.0, np.inf, 1.0, 1.0, -1.0, 1.0], f32)
    # As in XLA, a = 0 is outside the domain (SciPy gives the limit, 1 and 0).
    np.testing.assert_array_equal(np.asarray(lax.igamma(a, x)), [0, 1] + [np.nan] * 4)
    np.testing.assert_array_equal(np.asarray(lax.igammac(a, x)), [1, 0] + [np.nan] * 4)
    x = np.array([0.0, 1.0, 1.5, -0.5, 0.5, 0.5], f32)
    b = np.array([1.0, 2.0, 1.0, 1.0, -1.0, 1.0], f32)
    a = np.array([2.0, 2.0, 1.0, 1.0, 1.0, 0.0], f32)
    np.testing.assert_array_equal(
        np.asarray(lax.regularized_incomplete_beta(a, b, x)), [0, 1] + [np.nan] * 4
    )
    np.testing.assert_allclose(np.asarray(lax.bessel_i0e(np.float32(0))), 1.0)
    # Far tails: the continued fraction keeps precision where 1 - P would not.
    np.testing.assert_allclose(
        np.asarray(lax.igammac(np.float32(2.0), np.float32(60.0))),
        ss.gammaincc(2.0, 60.0),
        rtol=1e-4,
    )


def test_large_shape_parameters():
    # Near x = a the series and fraction need O(sqrt(a)) steps: the loop runs
    # until every element has converged, not a fixed count.
    a = np.array([500.0, 1000.0, 5000.0, 400.0], f32)
    x = np.array([500.0, 990.0, 5000.0, 410.0], f32)
    want = ss.gammainc(a.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(lax.igamma(a, x), np.float64), want, atol=2e-3)
    b = np.array([300.0, 2.0, 1000.0, 50.0], f32)
    t = np.array([0.62, 0.99, 0.83, 0.9], f32)
    want = ss.betainc(a.astype(np.float64), b.astype(np.float64), t.astype(np.float64))
    got = lax.regularized_incomplete_beta(a, b, t)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=2e-3)


def test_python_scalars_and_type_errors():
    assert lax.igamma(2.0, np.float32(1.0)).dtype == f32
    assert lax.regularized_incomplete_beta(1.0, 2.0, np.float32(0.5)).dtype == f32
    x = np.array([0.25, 0.5], f32)
    np.testing.assert_array_equal(
        np.asarray(lax.betainc(2.0, 3.0, x)),
        np.asarray(lax.regularized_incomplete_beta(2.0, 3.0, x)),
    )
    with pytest.raises(TypeError, match="igamma"):
        lax.igamma(np.int32(1), np.int32(2))
    with pytest.raises(TypeError):
        lax.igamma(np.float32(1), np.float16(2))


@pytest.mark.parametrize(
    "fun, args",
    [
        (lambda a, x: lax.igamma(a, x), (1.7, 2.3)),
        (lambda a, x: lax.igamma(a, x), (4.0, 2.5)),
        (lambda a, x: lax.igammac(a, x), (2.5, 6.0)),
        (lambda x, q: lax.zeta(x, q), None),
        (lambda x: lax.bessel_i0e(x), (-1.3,)),
        (lambda x: lax.bessel_i1e(x), (0.7,)),
        (lambda x: lax.regularized_incomplete_beta(2.0, 3.0, x), (0.3,)),
        (lambda x: lax.regularized_incomplete_beta(2.0, 3.0, x), (0.8,)),
    ],
)
def test_grads(fun, args):
    with config.enable_x64(True):
        if args is None:  # zeta: differentiable in q only
            fun, args = (lambda q: lax.zeta(np.float64(3.0), q)), (1.5,)
        args = tuple(np.float64(a) for a in args)
        if len(args) == 2:  # order 1 in a (igamma_grad_a has no derivative), 2 in x
            check_grads(fun, args, order=1, rtol=1e-4)
            a = args[0]
            check_grads(lambda x: fun(a, x), args[1:], order=2, rtol=1e-4)
        else:
            check_grads(fun, args, order=2, rtol=1e-4)


def test_not_differentiable_operands():
    one = np.float32(1.0)
    with pytest.raises(NotImplementedError, match="zeta"):
        ad.jvp(lambda x: lax.zeta(x, one), (np.float32(2.0),), (one,))
    with pytest.raises(NotImplementedError, match="regularized_incomplete_beta"):
        ad.jvp(lambda a: lax.regularized_incomplete_beta(a, one, np.float32(0.5)), (one,), (one,))
    with pytest.raises(NotImplementedError, match="igamma_grad_a"):
        ad.jvp(lambda a: lax.igamma_grad_a(a, one), (one,), (one,))


@pytest.mark.parametrize("name", ["igamma", "regularized_incomplete_beta", "bessel_i0e", "zeta"])
def test_vmap_against_loop(name):
    fn, _, gens = CASES[name]
    args = [g((3, 4)).astype(f32) for g in gens]
    # The first operand is batched along axis 1, the others along 0, the last unbatched.
    in_axes = [1] + [0] * (len(args) - 1)
    bargs = [args[0].T, *args[1:]]
    if len(args) > 1:
        in_axes[-1] = None
        bargs[-1] = args[-1][0]
    got = np.asarray(vmap(fn, in_axes=tuple(in_axes))(*bargs))
    for i in range(3):
        per = [b[:, i] if d == 1 else (b[i] if d == 0 else b) for b, d in zip(bargs, in_axes)]
        np.testing.assert_allclose(got[i], np.asarray(fn(*per)), rtol=1e-5)
