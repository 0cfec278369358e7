"""polyjax.scipy.optimize.minimize against scipy.optimize.minimize.

Oracles: SciPy's BFGS on the same problems (solution, value, roughly the
iteration count), closed-form minimizers of quadratics, the strong Wolfe
conditions for the line search, jit against eager and vmap against a loop.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize as osp

from polyjax_core import config
from polyjax_interpreters.ad import value_and_grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.optimize import OptimizeResults, minimize
from polyjax_numpy.scipy.optimize._line_search import line_search

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
B = np.array([1.0, -2.0, 0.5])


def quadratic(x, a, b):
    return 0.5 * x @ a @ x - b @ x


@pytest.mark.parametrize("x0", [[-1.2, 1.0], [1.3, 0.7, 0.8, 1.9, 1.2]])
def test_bfgs_rosenbrock_float64(x0):
    x0 = np.array(x0)
    ref = osp.minimize(osp.rosen, x0, jac=osp.rosen_der, method="BFGS")
    with config.enable_x64(True):
        res = jit(lambda x: minimize(rosenbrock, x, method="BFGS"))(x0)
        assert isinstance(res, OptimizeResults)
        assert res.x.dtype == np.float64
        assert bool(res.success) and int(res.status) == 0
        np.testing.assert_allclose(res.x, np.ones_like(x0), atol=1e-6)
        np.testing.assert_allclose(res.x, ref.x, atol=2e-6)
        assert float(res.fun) < 1e-12
        assert np.max(np.abs(res.jac)) < 1e-5
        # Same method, different line searches: iteration counts are close.
        assert 0.5 * ref.nit <= int(res.nit) <= 3 * ref.nit
        assert int(res.nfev) == int(res.njev) >= int(res.nit)
        np.testing.assert_allclose(res.hess_inv, res.hess_inv.T, atol=1e-10)


def test_bfgs_quadratic_and_args():
    ref = osp.minimize(quadratic, np.zeros(3), args=(A, B), method="BFGS")
    with config.enable_x64(True):
        res = minimize(quadratic, np.zeros(3), args=(A, B), method="BFGS")
        exact = np.linalg.solve(A, B)
        np.testing.assert_allclose(res.x, exact, atol=1e-7)
        np.testing.assert_allclose(res.x, ref.x, atol=1e-5)
        np.testing.assert_allclose(res.fun, ref.fun, rtol=1e-10)
        assert int(res.nit) <= 2 * ref.nit
        # After n steps along conjugate directions the inverse Hessian is close to A^-1.
        np.testing.assert_allclose(res.hess_inv, np.linalg.inv(A), atol=0.05)


def test_bfgs_float32_jit_matches_eager_and_vmap():
    x0 = np.array([-1.2, 1.0], np.float32)
    solve = jit(lambda x: minimize(rosenbrock, x, method="BFGS"))
    res = solve(x0)
    assert res.x.dtype == np.float32 and bool(res.success)
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-3)
    eager = minimize(rosenbrock, x0, method="BFGS")
    np.testing.assert_allclose(eager.x, res.x, rtol=1e-5, atol=1e-6)
    assert int(eager.nit) == int(res.nit)
    starts = np.array([[-1.2, 1.0], [2.0, 2.0], [0.0, 0.0]], np.float32)
    batched = vmap(lambda x: minimize(rosenbrock, x, method="BFGS"))(starts)
    for i, start in enumerate(starts):
        single = solve(start)
        np.testing.assert_allclose(batched.x[i], single.x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(batched.x, np.ones((3, 2)), atol=1e-3)


def test_status_and_options():
    x0 = np.array([-1.2, 1.0], np.float32)
    res = minimize(rosenbrock, x0, method="bfgs", options={"maxiter": 3})
    assert int(res.nit) == 3 and not bool(res.success) and int(res.status) == 1
    # A loose tolerance stops early; `tol` sets gtol.
    loose = minimize(rosenbrock, x0, method="BFGS", tol=1.0)
    assert bool(loose.success) and np.max(np.abs(loose.jac)) < 1.0
    assert int(loose.nit) < int(minimize(rosenbrock, x0, method="BFGS").nit)
    res = minimize(lambda x: jnp.sum(x**2), np.ones(3), method="BFGS", options={"norm": 2})
    assert bool(res.success) and int(res.nit) == 1
    # Starting at the minimum: converged without iterating.
    res = minimize(lambda x: jnp.sum(x**2), np.zeros(2), method="BFGS")
    assert bool(res.success) and int(res.nit) == 0 and int(res.nfev) == 1


def test_errors():
    with pytest.raises(ValueError, match="method 'nelder-mead' is not supported"):
        minimize(rosenbrock, np.zeros(2), method="nelder-mead")
    with pytest.raises(TypeError, match="method"):
        minimize(rosenbrock, np.zeros(2))
    with pytest.raises(
        ValueError, match=r"x0 must be a vector \(shape \(n,\)\), got shape \(2, 2\)"
    ):
        minimize(rosenbrock, np.zeros((2, 2)), method="BFGS")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        minimize(rosenbrock, np.zeros(2), method="BFGS", options={"bogus": 1})
    with pytest.raises(TypeError, match="args must be a tuple"):
        minimize(quadratic, np.zeros(3), args=[A, B], method="BFGS")


def test_lbfgs():
    with config.enable_x64(True):
        x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2])
        res = jit(lambda x: minimize(rosenbrock, x, method=LBFGS))(x0)
        assert bool(res.success) and res.hess_inv is None
        np.testing.assert_allclose(res.x, np.ones(5), atol=1e-4)
        res = minimize(quadratic, np.zeros(3), args=(A, B), method=LBFGS, options={"gtol": 1e-9})
        np.testing.assert_allclose(res.x, np.linalg.solve(A, B), atol=1e-7)
        res = minimize(rosenbrock, x0, method=LBFGS, options={"maxiter": 2})
        assert int(res.status) == 1 and not bool(res.success)


@pytest.mark.parametrize(
    "fun,x,p",
    [
        (rosenbrock, [-1.2, 1.0], None),  # steepest descent: steps far below 1
        (lambda x: jnp.sum(x**4) - jnp.sum(x), [0.1, 0.2], None),  # the first step is too short
        (lambda x: jnp.sum(jnp.exp(x) - 2 * x), [3.0, -3.0], None),
    ],
)
def test_line_search_strong_wolfe(fun, x, p):
    c1, c2 = 1e-4, 0.9
    with config.enable_x64(True):
        fg = value_and_grad(fun)
        x = jnp.asarray(np.array(x))
        f0, g0 = fg(x)
        p = -g0 if p is None else p
        res = line_search(fg, x, p, f0, g0, c1=c1, c2=c2, maxiter=30)
        assert not bool(res.failed) and int(res.status) == 0
        a = float(res.a)
        f_a, g_a = fg(x + a * p)
        np.testing.assert_allclose(res.f, f_a)
        np.testing.assert_allclose(res.g, g_a)
        assert float(f_a) <= float(f0) + c1 * a * float(g0 @ p)
        assert abs(float(g_a @ p)) <= c2 * abs(float(g0 @ p))


def test_line_search_failures():
    fg = value_and_grad(lambda x: jnp.sum(x**2))
    x = jnp.ones(2)
    f0, g0 = fg(x)
    res = line_search(fg, x, g0, f0, g0)  # uphill
    assert bool(res.failed) and int(res.status) == 4
    # An unbounded direction: the bracketing phase runs out of evaluations.
    fg = value_and_grad(lambda x: -jnp.sum(x))
    res = line_search(fg, x, jnp.ones(2), *fg(x), maxiter=5)
    assert bool(res.failed) and int(res.status) == 5 and int(res.nfev) == 5
