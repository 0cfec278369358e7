"""Implicit differentiation: `lax.custom_linear_solve` and `lax.custom_root`.

Values are checked against NumPy (`numpy.linalg.solve`, closed-form roots),
derivatives against closed forms (``x' = A^{-1}(b' - A' x)``, the implicit
function theorem) and `check_grads`, vmap against a loop, jit against eager.

The iterative solvers are `while_loop`s, which have no reverse mode: a
gradient that reaches them would fail, so passing gradient tests show that
derivatives come from the implicit rules, not from the iterations.
Solves are meaningful for inexact dtypes only (f32, c64 here; the low
precision floats are checked on values of an elementwise system).
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import dtypes
from polyjax_core.dce import dce_jaxpr
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.tree_util import tree_map
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

f32, c64 = np.float32, np.complex64

M = np.array([[4.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 1.0, 5.0]], f32)  # eigenvalues 2.3..5.5
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 5.0]], f32)  # symmetric positive
B = np.array([1.0, -2.0, 0.5], f32)
W = np.array([0.3, -1.0, 2.0], f32)


def _dot(a, x):
    return lax.dot(a, x)


def _sum(x):
    return lax.reduce_sum(x, tuple(range(np.ndim(x) if not hasattr(x, "aval") else x.aval.ndim)))


def richardson(matvec, b, steps=60, omega=0.25):
    """``x += omega (b - matvec(x))`` in a `while_loop` (no reverse mode): converges for
    the matrices here (spectrum inside the disc ``|1 - omega z| < 1``)."""

    def body(c):
        i, x = c
        return i + 1, tree_map(lambda x, b, ax: x + omega * (b - ax), x, b, matvec(x))

    zero = tree_map(lambda b: b * 0, b)
    return lax.while_loop(lambda c: c[0] < steps, body, (np.int32(0), zero))[1]


def richardson_aux(matvec, b):
    """`richardson` returning ``(x, (steps, residual norm))``."""
    x = richardson(matvec, b)
    r = b - matvec(x)
    return x, (np.int32(60), _sum(r * r))


def lu_solve(a, b):
    """``a^{-1} b`` for one vector `b`, by `lax.linalg.lu` and two triangular solves."""
    n = a.shape[0] if not hasattr(a, "aval") else a.aval.shape[0]
    lu, _, perm = lax.linalg.lu(a)
    dtype = b.dtype if not hasattr(b, "aval") else b.aval.dtype
    p = lax.convert_element_type(
        lax.eq(
            lax.broadcast_in_dim(perm, (n, n), (0,)),
            lax.broadcasted_iota(np.int32, (n, n), 1),
        ),
        dtype,
    )
    pb = lax.reshape(lax.dot(p, b), (n, 1))
    y = lax.linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    x = lax.linalg.triangular_solve(lu, y, left_side=True, lower=False)
    return lax.reshape(x, (n,))


def direct(a):
    """A direct solver of ``a``: ignores the matvec it is given."""
    return lambda matvec, b: lu_solve(a, b)


def solve_iter(a, b):
    """Nonsymmetric `a`, iterative solves of the system and of its transpose."""
    return lax.custom_linear_solve(lambda x: _dot(a, x), b, richardson, richardson)


def solve_sym(a, b):
    return lax.custom_linear_solve(lambda x: _dot(a, x), b, richardson, symmetric=True)


def solve_direct(a, b):
    """Direct solves; the transposed system by a solver of ``a^T`` built by hand."""
    return lax.custom_linear_solve(
        lambda x: _dot(a, x),
        b,
        direct(a),
        transpose_solve=lambda vecmat, y: lu_solve(lax.transpose(a, (1, 0)), y),
    )


SOLVES = {"iterative": solve_iter, "symmetric": solve_sym, "direct": solve_direct}
JITTED = {k: jit(v) for k, v in SOLVES.items()}


def _matrix(kind, dtype=f32):
    a = S if kind == "symmetric" else M
    if dtype == c64:  # a complex symmetric perturbation keeps `S` symmetric
        a = a + 0.2j * np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    return a.astype(dtype)


# ---------------------------------------------------------------------------
# custom_linear_solve: values


@pytest.mark.parametrize("kind", sorted(SOLVES))
@pytest.mark.parametrize("dtype", [f32, c64])
def test_values_match_numpy_and_jit_matches_eager(kind, dtype):
    a, b = _matrix(kind, dtype), (B + (0.5j * W if dtype == c64 else 0)).astype(dtype)
    want = np.linalg.solve(a, b)
    eager = SOLVES[kind](a, b)
    jitted = JITTED[kind](a, b)
    assert eager.dtype == dtype and eager.shape == (3,)
    np.testing.assert_allclose(np.asarray(eager), want, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6, atol=1e-7)


def _diag_solve(d, b):
    """The elementwise system ``d * x == b`` (any shape)."""
    return lax.custom_linear_solve(lambda x: d * x, b, lambda mv, y: y / d, symmetric=True)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
@pytest.mark.parametrize("dtype", [f32, np.float16, dtypes.bfloat16, c64])
def test_elementwise_system_shapes_and_dtypes(shape, dtype):
    rng = np.random.default_rng(0)
    d = (rng.uniform(1.0, 2.0, shape)).astype(dtype)
    b = rng.uniform(-1.0, 1.0, shape).astype(dtype)
    got = _diag_solve(d, b)
    assert got.shape == shape and got.dtype == dtype
    tol = 1e-6 if dtype in (f32, c64) else 2e-2
    want = b.astype(np.complex128) / d.astype(np.complex128)
    np.testing.assert_allclose(np.asarray(got).astype(np.complex128), want, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        np.asarray(jit(_diag_solve)(d, b)).astype(np.complex128), want, rtol=tol, atol=tol
    )


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)])
def test_elementwise_system_derivatives(shape):
    rng = np.random.default_rng(1)
    d = rng.uniform(1.0, 2.0, shape).astype(f32)
    b = rng.uniform(-1.0, 1.0, shape).astype(f32)
    gd, gb = ad.grad(lambda d, b: _sum(_diag_solve(d, b)), argnums=(0, 1))(d, b)
    np.testing.assert_allclose(np.asarray(gd), -b / d**2, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gb), 1 / d, rtol=1e-5)
    check_grads(_diag_solve, (d, b), order=2)


# ---------------------------------------------------------------------------
# custom_linear_solve: derivatives


@pytest.mark.parametrize("kind", sorted(SOLVES))
def test_grad_and_jvp_match_closed_form(kind):
    a = _matrix(kind)
    x = np.linalg.solve(a, B)
    lam = np.linalg.solve(a.T, W)
    ga, gb = ad.grad(lambda a, b: _sum(W * SOLVES[kind](a, b)), argnums=(0, 1))(a, B)
    np.testing.assert_allclose(np.asarray(ga), -np.outer(lam, x), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gb), lam, rtol=1e-4, atol=1e-6)
    da = np.random.default_rng(2).uniform(-1, 1, (3, 3)).astype(f32)
    db = W
    _, t = ad.jvp(SOLVES[kind], (a, B), (da, db))
    np.testing.assert_allclose(np.asarray(t), np.linalg.solve(a, db - da @ x), rtol=1e-4)


@pytest.mark.parametrize("kind", sorted(SOLVES))
def test_check_grads_second_order(kind):
    check_grads(JITTED[kind], (_matrix(kind), B), order=2)


def test_check_grads_complex():
    a, b = _matrix("iterative", c64), (B + 0.5j * W).astype(c64)
    check_grads(JITTED["iterative"], (a, b), order=1)


def test_reverse_mode_without_transpose_solve_raises():
    def f(a, b):
        return lax.custom_linear_solve(lambda x: _dot(a, x), b, richardson)

    # Forward mode needs no transposed solver.
    _, t = ad.jvp(lambda b: f(M, b), (B,), (W,))
    np.testing.assert_allclose(np.asarray(t), np.linalg.solve(M, W), rtol=1e-4)
    with pytest.raises(TypeError, match="transpose_solve required"):
        ad.grad(lambda b: _sum(f(M, b)))(B)
    with pytest.raises(TypeError, match="transpose_solve required"):
        ad.grad(lambda a: _sum(f(a, B)))(M)


def test_transpose_solve_gets_the_transposed_map():
    seen = []

    def transpose_solve(vecmat, y):
        seen.append(vecmat)
        return richardson(vecmat, y)

    def f(b):
        return lax.custom_linear_solve(lambda x: _dot(M, x), b, richardson, transpose_solve)

    g = ad.grad(lambda b: _sum(W * f(b)))(B)
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(M.T, W), rtol=1e-4)
    (vecmat,) = set(seen)
    np.testing.assert_allclose(np.asarray(vecmat(W)), M.T @ W, rtol=1e-6)


def test_solver_constants_are_not_differentiated():
    """Only matvec's closed-over values are differentiated: a solver that scales its
    answer by a traced 1.0 gives the same derivative as one that does not."""

    def f(a, s):
        return lax.custom_linear_solve(
            lambda x: _dot(a, x), B, lambda mv, y: richardson(mv, y) * s, symmetric=True
        )

    gs = ad.grad(lambda s: _sum(f(S, s)))(f32(1.0))
    assert float(gs) == 0.0
    ga = ad.grad(lambda a: _sum(f(a, f32(1.0))))(S)
    x, lam = np.linalg.solve(S, B), np.linalg.solve(S, np.ones(3))
    np.testing.assert_allclose(np.asarray(ga), -np.outer(lam, x), rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------------------
# has_aux, pytrees, vmap, jaxprs


def _with_aux(a, b):
    return lax.custom_linear_solve(
        lambda x: _dot(a, x), b, richardson_aux, richardson_aux, has_aux=True
    )


def test_has_aux_returns_aux_without_derivative():
    x, (steps, res) = _with_aux(M, B)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(M, B), rtol=1e-5)
    assert int(steps) == 60 and float(res) < 1e-10
    xj, (steps_j, _) = jit(_with_aux)(M, B)
    np.testing.assert_allclose(np.asarray(xj), np.asarray(x), rtol=1e-6)
    assert int(steps_j) == 60
    _, (tx, (_, tres)) = ad.jvp(lambda b: _with_aux(M, b), (B,), (W,))
    np.testing.assert_allclose(np.asarray(tx), np.linalg.solve(M, W), rtol=1e-4)
    assert float(tres) == 0.0
    g = ad.grad(lambda b: _sum(_with_aux(M, b)[0]))(B)
    np.testing.assert_allclose(np.asarray(g), np.linalg.solve(M.T, np.ones(3)), rtol=1e-4)


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        lax.custom_linear_solve(lambda x: x, B, lambda mv, y: y, has_aux=True)


def _block_matvec(p):
    """A coupled system on ``{"u": f32[3], "v": f32[]}``."""

    def matvec(x):
        u, v = x["u"], x["v"]
        return {"u": _dot(M, u) + p * v, "v": 4.0 * v + _sum(p * u)}

    return matvec


def _block_dense(p):
    a = np.zeros((4, 4), f32)
    a[:3, :3], a[:3, 3], a[3, :3], a[3, 3] = M, p, p, 4.0
    return a


def _solve_tree(p, b):
    return lax.custom_linear_solve(_block_matvec(p), b, richardson, richardson)


P = np.array([0.2, -0.1, 0.3], f32)
B_TREE = {"u": B, "v": f32(0.7)}


def test_pytree_rhs_values_grads_and_vmap():
    want = np.linalg.solve(_block_dense(P), np.append(B, 0.7))
    for fn in (_solve_tree, jit(_solve_tree)):
        x = fn(P, B_TREE)
        assert set(x) == {"u", "v"} and x["v"].shape == ()
        np.testing.assert_allclose(np.asarray(x["u"]), want[:3], rtol=1e-5)
        np.testing.assert_allclose(float(x["v"]), want[3], rtol=1e-5)
    gb = ad.grad(lambda b: _sum(_solve_tree(P, b)["u"]))(B_TREE)
    lam = np.linalg.solve(_block_dense(P).T, np.array([1, 1, 1, 0], f32))
    np.testing.assert_allclose(np.asarray(gb["u"]), lam[:3], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(float(gb["v"]), lam[3], rtol=1e-4)
    check_grads(jit(_solve_tree), (P, B_TREE), order=1)
    bs = {"u": np.stack([B, W, B + W]), "v": np.array([0.7, -1.0, 0.0], f32)}
    got = batching.vmap(_solve_tree, (None, 0))(P, bs)
    for i in range(3):
        one = _solve_tree(P, {"u": bs["u"][i], "v": bs["v"][i]})
        np.testing.assert_allclose(np.asarray(got["u"][i]), np.asarray(one["u"]), rtol=1e-5)
        np.testing.assert_allclose(float(got["v"][i]), float(one["v"]), rtol=1e-5)


@pytest.mark.parametrize("in_axes", [(None, 0), (0, None), (0, 0), (2, 1)])
def test_vmap_matches_loop(in_axes):
    rng = np.random.default_rng(3)
    As = np.stack([M, M + 0.1 * rng.uniform(-1, 1, (3, 3)).astype(f32), S])
    bs = np.stack([B, W, B - W])
    a_arg = As if in_axes[0] == 0 else (np.moveaxis(As, 0, 2) if in_axes[0] == 2 else M)
    b_arg = bs if in_axes[1] == 0 else (np.moveaxis(bs, 0, 1) if in_axes[1] == 1 else B)
    got = batching.vmap(solve_iter, in_axes)(a_arg, b_arg)
    for i in range(3):
        a = As[i] if in_axes[0] is not None else M
        b = bs[i] if in_axes[1] is not None else B
        np.testing.assert_allclose(np.asarray(got[i]), np.linalg.solve(a, b), rtol=2e-5)


def test_vmap_of_grad_matches_loop():
    bs = np.stack([B, W])
    g = batching.vmap(ad.grad(lambda a, b: _sum(solve_iter(a, b))), (None, 0))(M, bs)
    for i in range(2):
        x, lam = np.linalg.solve(M, bs[i]), np.linalg.solve(M.T, np.ones(3))
        np.testing.assert_allclose(np.asarray(g[i]), -np.outer(lam, x), rtol=1e-4, atol=1e-6)


def test_vmap_has_aux():
    bs = np.stack([B, W])
    x, (steps, res) = batching.vmap(_with_aux, (None, 0))(M, bs)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(M, bs.T).T, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(steps), [60, 60])  # vmap's out_axes=0
    assert res.shape == (2,) and np.asarray(res).max() < 1e-10


def test_printed_jaxpr_and_dce():
    closed = make_jaxpr(lambda a, b: (_with_aux(a, b)[0], b * 2.0))(M, B)
    text = str(closed)
    assert "custom_linear_solve[" in text
    assert "const_lengths=_LinearSolveTuple(matvec=1, vecmat=1, solve=1, transpose_solve=1)" in (
        text
    )
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive is lax.custom_linear_solve_p]
    assert len(eqn.outvars) == 3  # x and the two aux values
    pruned, _ = dce_jaxpr(closed.jaxpr, [True, True])
    (eqn,) = [e for e in pruned.eqns if e.primitive is lax.custom_linear_solve_p]
    assert len(eqn.outvars) == 1  # unused aux dropped
    assert len(eqn.params["jaxprs"].solve.out_avals) == 1
    pruned, _ = dce_jaxpr(closed.jaxpr, [False, True])
    assert all(e.primitive is not lax.custom_linear_solve_p for e in pruned.eqns)


def test_bad_functions_raise():
    with pytest.raises(TypeError, match="matvec\\(\\) output must have the same pytree"):
        lax.custom_linear_solve(lambda x: (x, x), B, richardson)
    with pytest.raises(TypeError, match="solve\\(\\) output must have the same shapes and dtypes"):
        lax.custom_linear_solve(lambda x: x, B, lambda mv, y: lax.reshape(y, (3, 1)))
    with pytest.raises(TypeError, match="solve must be callable"):
        lax.custom_linear_solve(lambda x: x, B, None)
    with pytest.raises(TypeError, match="transpose_solve must be callable"):
        lax.custom_linear_solve(lambda x: x, B, richardson, 3)


# ---------------------------------------------------------------------------
# custom_root


def fixed_point(g, x0, steps=100):
    """Iterates ``x <- x - g(x)`` in a `while_loop` (``g = x - a cos x - b``: a contraction)."""

    def body(c):
        i, x = c
        return i + 1, tree_map(lambda x, r: x - r, x, g(x))

    return lax.while_loop(lambda c: c[0] < steps, body, (np.int32(0), x0))[1]


def scalar_tangent_solve(g, y):
    return y / g(1.0)


ZERO = f32(0.0)


def cos_root(a, b, x0=ZERO):
    """The solution of ``x = a cos(x) + b``."""
    return lax.custom_root(lambda x: x - a * lax.cos(x) - b, x0, fixed_point, scalar_tangent_solve)


def test_root_fixed_point_value_and_grad_closed_form():
    a, b = f32(0.5), f32(0.3)
    x = float(cos_root(a, b))
    assert abs(x - (0.5 * np.cos(x) + 0.3)) < 1e-6
    ga, gb, g0 = ad.grad(cos_root, argnums=(0, 1, 2))(a, b, f32(0.0))
    denom = 1 + 0.5 * np.sin(x)
    np.testing.assert_allclose(float(ga), np.cos(x) / denom, rtol=1e-5)
    np.testing.assert_allclose(float(gb), 1 / denom, rtol=1e-5)
    assert float(g0) == 0.0  # the root does not depend on the initial guess
    np.testing.assert_allclose(float(jit(cos_root)(a, b)), x, rtol=1e-6)


def test_root_check_grads_second_order():
    check_grads(jit(cos_root), (f32(0.5), f32(0.3)), order=2)


def test_root_newton_sqrt_derivatives():
    def sqrt(a):
        newton = lambda f, x0: lax.fori_loop(0, 30, lambda i, x: 0.5 * (x + a / x), x0)
        return lax.custom_root(lambda x: x * x - a, f32(1.0), newton, scalar_tangent_solve)

    a = f32(4.0)
    np.testing.assert_allclose(float(sqrt(a)), 2.0, rtol=1e-6)
    np.testing.assert_allclose(float(ad.grad(sqrt)(a)), 0.25, rtol=1e-5)
    np.testing.assert_allclose(float(ad.grad(ad.grad(sqrt))(a)), -0.25 * 4.0**-1.5, rtol=1e-4)


def test_root_vmap_matches_loop():
    as_, bs = np.array([0.1, 0.5, 0.9], f32), np.array([0.3, -0.2, 1.0], f32)
    got = batching.vmap(cos_root, (0, 0))(as_, bs)
    grads = batching.vmap(ad.grad(cos_root), (0, None))(as_, f32(0.3))
    for i in range(3):
        np.testing.assert_allclose(float(got[i]), float(cos_root(as_[i], bs[i])), rtol=1e-6)
        x = float(cos_root(as_[i], f32(0.3)))
        np.testing.assert_allclose(float(grads[i]), np.cos(x) / (1 + as_[i] * np.sin(x)), rtol=1e-5)


def _vector_root(p, has_aux=False):
    """The root of ``x + 0.1 tanh(C x) - p`` (a 3-vector), by fixed-point iteration."""
    c = M / 4.0

    def f(x):
        return x + 0.1 * lax.tanh(_dot(c, x)) - p

    def tangent_solve(g, y):
        return lu_solve(ad.jacfwd(g)(y), y)

    def solve(f, x0):
        x = fixed_point(f, x0)
        return (x, _sum(f(x) * f(x))) if has_aux else x

    return lax.custom_root(f, p * 0, solve, tangent_solve, has_aux=has_aux)


def test_root_vector_implicit_derivative():
    p = np.array([0.5, -0.3, 0.8], f32)
    x = np.asarray(_vector_root(p))
    c = M / 4.0
    np.testing.assert_allclose(x + 0.1 * np.tanh(c @ x), p, atol=1e-6)
    # dx/dp = (df/dx)^{-1}, df/dx = I + 0.1 diag(sech^2(Cx)) C.
    jx = np.eye(3) + 0.1 * np.diag(1 / np.cosh(c @ x) ** 2) @ c
    jac = ad.jacrev(_vector_root)(p)
    np.testing.assert_allclose(np.asarray(jac), np.linalg.inv(jx), rtol=1e-4, atol=1e-6)
    jac_fwd = ad.jacfwd(_vector_root)(p)
    np.testing.assert_allclose(np.asarray(jac_fwd), np.linalg.inv(jx), rtol=1e-4, atol=1e-6)
    (xa, res) = jit(lambda p: _vector_root(p, has_aux=True))(p)
    np.testing.assert_allclose(np.asarray(xa), x, rtol=1e-6)
    assert float(res) < 1e-10
    g = ad.grad(lambda p: _sum(_vector_root(p, has_aux=True)[0]))(p)
    np.testing.assert_allclose(np.asarray(g), np.linalg.inv(jx).sum(0), rtol=1e-4)


def test_root_pytree_guess():
    """A root of a pair: ``u = a cos(v)``, ``v = b + u / 2``."""

    def root(a, b):
        def f(z):
            u, v = z
            return (u - a * lax.cos(v), v - b - 0.5 * u)

        def tangent_solve(g, y):
            (g00, g10), (g01, g11) = g((f32(1.0), f32(0.0))), g((f32(0.0), f32(1.0)))
            det = g00 * g11 - g01 * g10
            return ((g11 * y[0] - g01 * y[1]) / det, (g00 * y[1] - g10 * y[0]) / det)

        return lax.custom_root(f, (f32(0.0), f32(0.0)), fixed_point, tangent_solve)

    a, b = f32(0.4), f32(0.2)
    u, v = (float(t) for t in root(a, b))
    np.testing.assert_allclose(u, 0.4 * np.cos(v), atol=1e-6)
    np.testing.assert_allclose(v, 0.2 + 0.5 * u, atol=1e-6)
    # Implicit derivative: J_z dz = -J_a da with J_z = [[1, a sin v], [-1/2, 1]].
    jz = np.array([[1, 0.4 * np.sin(v)], [-0.5, 1]])
    du_da, dv_da = np.linalg.solve(jz, [np.cos(v), 0.0])
    ga = ad.grad(lambda a: root(a, b)[0] + 2.0 * root(a, b)[1])(a)
    np.testing.assert_allclose(float(ga), du_da + 2 * dv_da, rtol=1e-5)
    check_grads(root, (a, b), order=1)


def test_root_bad_functions_raise():
    with pytest.raises(TypeError, match="f\\(\\) output must have the same pytree structure"):
        lax.custom_root(lambda x: (x, x), f32(1.0), fixed_point, scalar_tangent_solve)
    with pytest.raises(TypeError, match="solve\\(\\) output must have the same shapes"):
        lax.custom_root(lambda x: x, f32(1.0), lambda f, x: np.int32(1), scalar_tangent_solve)
    with pytest.raises(TypeError, match="tangent_solve must be callable"):
        lax.custom_root(lambda x: x, f32(1.0), fixed_point, None)
