"""`lax.linalg` on CPU (LAPACK custom calls): values against NumPy/SciPy, check_grads,
vmap against a loop, jit against eager."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from polyjax_core import config, make_jaxpr
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy.lax import linalg

rng = np.random.default_rng(0)
f32, f64, c64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64)


def _rand(shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _spd(shape, dtype):
    a = _rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _tri(shape, dtype, lower):
    a = _rand(shape, dtype)
    a = np.tril(a) if lower else np.triu(a)
    n = shape[-1]
    return (a + 2 * n * np.eye(n)).astype(dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (f32, c64) else 1e-10


# ---------------------------------------------------------------------------
# cholesky


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (0, 2, 2), (1, 1)])
def test_cholesky_values(dtype, shape):
    x = _spd(shape, dtype)
    out = np.asarray(linalg.cholesky(x))
    assert out.dtype == dtype
    if x.size:
        np.testing.assert_allclose(out, np.linalg.cholesky(x), rtol=_tol(dtype), atol=_tol(dtype))


def _assert_failed_factor(out, lower):
    """JAX's failed factorization: NaN (``nan+nanj``) on and below (above) the
    diagonal, an exact +0 in the other triangle."""
    out = np.asarray(out)
    n = out.shape[-1]
    keep = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
    assert np.isnan(out.real[..., keep]).all()
    if out.dtype.kind == "c":
        assert np.isnan(out.imag[..., keep]).all()
    zeros = out[..., ~keep]
    assert (zeros == 0).all() and not np.signbit(zeros.real).any()


def test_cholesky_failure_is_nan():
    x = _spd((3, 3, 3), f32)
    x[1] = -np.eye(3)
    out = np.asarray(linalg.cholesky(x))
    _assert_failed_factor(out[1], lower=True)
    assert np.isfinite(out[[0, 2]]).all()


_NOT_PD = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def _cholesky_entry_points():
    from polyjax_numpy.numpy import linalg as jla
    from polyjax_numpy.scipy import linalg as sla_

    return {
        "lax": (linalg.cholesky, True),
        "jnp": (jla.cholesky, True),
        "jnp_upper": (lambda a: jla.cholesky(a, upper=True), False),
        "scipy": (sla_.cholesky, False),
        "scipy_lower": (lambda a: sla_.cholesky(a, lower=True), True),
        "cho_factor": (lambda a: sla_.cho_factor(a)[0], False),
        "cho_factor_lower": (lambda a: sla_.cho_factor(a, lower=True)[0], True),
    }


@pytest.mark.parametrize("entry", list(_cholesky_entry_points()))
@pytest.mark.parametrize("dtype", [f32, f64, c64])
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
def test_cholesky_of_non_positive_definite_sweep(entry, dtype, mode):
    # Every Cholesky entry point, as JAX: NaN in the factor's triangle, zeros elsewhere;
    # positive definite matrices of the same batch are unaffected.
    fun, lower = _cholesky_entry_points()[entry]
    with config.enable_x64(dtype == f64):
        good = _spd((3, 3), dtype)
        x = np.stack([good, _NOT_PD.astype(dtype), -np.eye(3, dtype=dtype)])
        if mode == "eager":
            out = np.asarray(fun(x[1]))[None]
            out = np.concatenate([np.asarray(fun(x[0]))[None], out, np.asarray(fun(x[2]))[None]])
        elif mode == "jit":
            out = np.stack([np.asarray(jit(fun)(m)) for m in x])
        else:
            out = np.asarray(vmap(fun)(x))
    assert out.dtype == dtype
    _assert_failed_factor(out[1:], lower)
    expect = np.linalg.cholesky(good)
    expect = expect if lower else np.conj(expect.T)
    np.testing.assert_allclose(out[0], expect, rtol=_tol(dtype), atol=_tol(dtype))


def test_qr_of_nan_keeps_r_triangular():
    # R is selected from the factored matrix, so its lower triangle is an exact +0
    # even where the input is NaN or the elimination leaves -0.
    x = np.array([[1.0, np.nan, 0.0], [np.nan, 1.0, 0.0], [0.0, 0.0, 2.0]], f32)
    _, r = linalg.qr(x)
    low = np.asarray(r)[np.tri(3, k=-1, dtype=bool)]
    assert (low == 0).all() and not np.signbit(low).any()
    s = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 2.0]], f32)
    _, r = linalg.qr(s)
    assert not np.signbit(np.asarray(r)[np.tri(3, k=-1, dtype=bool)]).any()


def test_cholesky_reads_lower_triangle_without_symmetrize():
    x = _spd((3, 3), f32)
    garbage = x + np.triu(np.full((3, 3), 100.0, np.float32), 1)
    out = np.asarray(linalg.cholesky(garbage, symmetrize_input=False))
    np.testing.assert_allclose(out, np.linalg.cholesky(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [f32, c64])
def test_cholesky_grads(dtype):
    x = _spd((2, 3, 3), dtype)
    check_grads(linalg.cholesky, (x,), order=2, atol=5e-2, rtol=5e-2)


def test_cholesky_vmap_and_jit():
    xs = _spd((4, 3, 3), f32)
    xs_t = np.moveaxis(xs, 0, 2)  # batched at axis 2
    out = np.asarray(vmap(linalg.cholesky, in_axes=2)(xs_t))
    want = np.stack([np.asarray(linalg.cholesky(x)) for x in xs])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jit(linalg.cholesky)(xs)), want, rtol=1e-6, atol=1e-6)


def test_cholesky_errors():
    with pytest.raises(ValueError, match="must have shape"):
        make_jaxpr(linalg.cholesky)(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError):
        make_jaxpr(linalg.cholesky)(np.ones((2, 2), np.int32))


# ---------------------------------------------------------------------------
# triangular_solve

FLAGS = [
    # left_side, lower, transpose_a, conjugate_a, unit_diagonal
    (True, True, False, False, False),
    (True, False, True, False, False),
    (False, True, False, False, True),
    (False, False, True, True, False),
    (True, True, True, True, False),
    (True, False, False, True, True),
]


def _op(a, transpose_a, conjugate_a, unit_diagonal, lower):
    a = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        a = a - np.diag(np.diag(a)) + np.eye(a.shape[-1])
    if conjugate_a:
        a = np.conj(a)
    return a.T if transpose_a else a


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("flags", FLAGS)
def test_triangular_solve_values(dtype, flags):
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = flags
    a = _rand((4, 4), dtype) + 8 * np.eye(4, dtype=dtype)  # both triangles filled
    b = _rand((4, 3) if left_side else (3, 4), dtype)
    x = np.asarray(
        linalg.triangular_solve(
            a,
            b,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )
    )
    op = _op(a, transpose_a, conjugate_a, unit_diagonal, lower)
    want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
    np.testing.assert_allclose(x, want, rtol=1e-4, atol=1e-4)
    if left_side and not conjugate_a and not unit_diagonal:
        ref = sla.solve_triangular(a, b, lower=lower, trans=int(transpose_a))
        np.testing.assert_allclose(x, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("flags", FLAGS[:4])
def test_triangular_solve_grads(dtype, flags):
    left_side, lower, transpose_a, conjugate_a, unit_diagonal = flags
    a = _tri((2, 3, 3), dtype, lower)
    b = _rand((2, 3, 2) if left_side else (2, 2, 3), dtype)

    def f(a, b):
        return linalg.triangular_solve(
            a,
            b,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )

    check_grads(f, (a, b), order=2, atol=5e-2, rtol=5e-2)


def test_triangular_solve_vmap():
    a = _tri((3, 4, 4), f32, lower=True)
    b = _rand((4, 2), f32)
    f = lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True)  # noqa: E731
    out = np.asarray(vmap(f, in_axes=(0, None))(a, b))
    want = np.stack([np.asarray(f(ai, b)) for ai in a])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    bs = _rand((4, 2, 3), f32)  # batched at axis 2
    out = np.asarray(vmap(f, in_axes=(0, 2))(a, bs))
    want = np.stack([np.asarray(f(a[i], bs[:, :, i])) for i in range(3)])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jit(f)(a[0], b)), np.asarray(f(a[0], b)), rtol=1e-6, atol=1e-6
    )


def test_triangular_solve_errors():
    a = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError):
        make_jaxpr(lambda a, b: linalg.triangular_solve(a, b, left_side=True))(
            a, np.ones((2, 3), np.float32)
        )
    with pytest.raises(TypeError):
        make_jaxpr(linalg.triangular_solve)(a, np.ones((3, 3), np.float64).astype(np.complex64))


def test_x64():
    with config.enable_x64(True):
        x = _spd((2, 3, 3), f64)
        np.testing.assert_allclose(
            np.asarray(linalg.cholesky(x)), np.linalg.cholesky(x), rtol=1e-12, atol=1e-12
        )
        check_grads(linalg.cholesky, (x,), order=1)


# ---------------------------------------------------------------------------
# lu


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5)])
def test_lu_values(dtype, shape):
    x = _rand(shape, dtype)
    lu, pivots, perm = (np.asarray(o) for o in linalg.lu(x))
    m, n = shape[-2:]
    k = min(m, n)
    assert pivots.shape == (*shape[:-2], k) and perm.shape == (*shape[:-2], m)
    assert pivots.dtype == np.int32 and perm.dtype == np.int32
    for idx in np.ndindex(shape[:-2]):
        l_ = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        u_ = np.triu(lu[idx])[:k, :]
        np.testing.assert_allclose(x[idx][perm[idx]], l_ @ u_, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(pivots[idx], sla.lu_factor(x[idx])[1])


def test_lu_pivots_to_permutation():
    pivots = np.array([[2, 2, 2], [0, 2, 2]], np.int32)
    perm = np.asarray(linalg.lu_pivots_to_permutation(pivots, 4))
    np.testing.assert_array_equal(perm, [[2, 0, 1, 3], [0, 2, 1, 3]])


@pytest.mark.parametrize("dtype", [f32, c64])
def test_lu_grads_and_vmap(dtype):
    x = _rand((2, 3, 3), dtype)
    check_grads(jit(lambda a: linalg.lu(a)[0]), (x[:1],), order=1, atol=5e-2, rtol=5e-2)
    xs = np.moveaxis(x, 0, 1)
    outs = vmap(linalg.lu, in_axes=1)(xs)
    for out, i in zip(outs, range(3)):
        want = np.stack([np.asarray(linalg.lu(a)[i]) for a in x])
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# eigh


@pytest.mark.parametrize("dtype", [f32, c64])
def test_eigh(dtype):
    a = _rand((2, 4, 4), dtype)
    x = a + np.conj(np.swapaxes(a, -1, -2))
    v, w = (np.asarray(o) for o in linalg.eigh(x))
    assert w.dtype == np.finfo(dtype).dtype
    np.testing.assert_allclose(w, np.linalg.eigvalsh(x), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(x @ v, v * w[..., None, :], rtol=1e-4, atol=1e-4)
    check_grads(jit(lambda s: linalg.eigh(s)[1]), (x[:1],), order=1, atol=5e-2, rtol=5e-2)
    if dtype == f32:  # real eigenvectors are defined up to sign: differentiate v * v
        f = jit(lambda s: (lambda v: v * v)(linalg.eigh(s)[0]))
        check_grads(f, (x[:1],), order=1, atol=5e-2, rtol=5e-2)
    ws = np.asarray(vmap(lambda s: linalg.eigh(s)[1])(x))
    np.testing.assert_allclose(ws, w, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# qr and householder_product


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_qr_values(dtype, shape, full_matrices):
    x = _rand(shape, dtype)
    q, r = (np.asarray(o) for o in linalg.qr(x, full_matrices=full_matrices))
    qn, rn = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    assert q.shape == qn.shape and r.shape == rn.shape
    np.testing.assert_allclose(q @ r, x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.abs(q), np.abs(qn), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(r, np.triu(r))


@pytest.mark.parametrize("dtype", [f32, c64])
def test_qr_grads_and_vmap(dtype):
    x = _rand((2, 4, 3), dtype)
    f = jit(lambda a: linalg.qr(a, full_matrices=False))
    check_grads(f, (x[:1],), order=1, atol=5e-2, rtol=5e-2)
    qs, rs = vmap(lambda a: linalg.qr(a), in_axes=2)(np.moveaxis(x, 0, 2))
    q, r = linalg.qr(x)
    np.testing.assert_allclose(np.asarray(qs), np.asarray(q), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(rs), np.asarray(r), rtol=1e-6, atol=1e-6)


def test_householder_product():
    x = _rand((5, 3), f32)
    (qr_, tau), _ = sla.qr(x, mode="raw")
    q = np.asarray(linalg.householder_product(qr_.astype(np.float32), tau.astype(np.float32)))
    np.testing.assert_allclose(q, np.linalg.qr(x)[0], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# svd


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(5, 3), (2, 3, 4)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_values(dtype, shape, full_matrices):
    x = _rand(shape, dtype)
    u, s, vh = (np.asarray(o) for o in linalg.svd(x, full_matrices=full_matrices))
    un, sn, vhn = np.linalg.svd(x, full_matrices=full_matrices)
    assert u.shape == un.shape and vh.shape == vhn.shape and s.dtype == np.finfo(dtype).dtype
    np.testing.assert_allclose(s, sn, rtol=1e-4, atol=1e-4)
    k = s.shape[-1]
    np.testing.assert_allclose(
        (u[..., :k] * s[..., None, :]) @ vh[..., :k, :], x, rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("shape", [(3, 0), (0, 3), (2, 4, 0), (0, 0)])
@pytest.mark.parametrize("full_matrices", [False, True])
def test_svd_of_empty_matrices(shape, full_matrices):
    # LAPACK rejects these shapes: no singular values; identity (full) or empty vectors.
    x = np.zeros(shape, c64)
    got = jit(lambda a: linalg.svd(a, full_matrices=full_matrices))(x)
    for g, w in zip(got, np.linalg.svd(x, full_matrices=full_matrices)):
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_array_equal(np.asarray(g), w)
    assert got[1].dtype == f32
    assert linalg.svd(x, compute_uv=False).shape == shape[:-2] + (0,)


def test_svd_grads_and_vmap():
    x = _rand((4, 3), f32)
    f = jit(lambda a: linalg.svd(a, compute_uv=False))
    check_grads(f, (x,), order=1, atol=5e-2, rtol=5e-2)
    xs = _rand((3, 4, 3), f32)
    out = np.asarray(vmap(lambda a: linalg.svd(a, compute_uv=False))(xs))
    np.testing.assert_allclose(out, np.linalg.svd(xs, compute_uv=False), rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------------------
# tridiagonal_solve


def test_tridiagonal_solve():
    m = 4
    dl, du, b = _rand((2, m), f32), _rand((2, m), f32), _rand((2, m, 3), f32)
    d = (4 + _rand((2, m), f32)).astype(f32)
    x = np.asarray(linalg.tridiagonal_solve(dl, d, du, b))
    for i in range(2):
        a = np.diag(d[i]) + np.diag(dl[i][1:], -1) + np.diag(du[i][:-1], 1)
        np.testing.assert_allclose(x[i], np.linalg.solve(a, b[i]), rtol=1e-4, atol=1e-4)
    check_grads(jit(linalg.tridiagonal_solve), (dl, d, du, b), order=1, atol=5e-2, rtol=5e-2)
    out = np.asarray(vmap(linalg.tridiagonal_solve, in_axes=(0, 0, 0, None))(dl, d, du, b[0]))
    want = np.stack(
        [np.asarray(linalg.tridiagonal_solve(dl[i], d[i], du[i], b[0])) for i in range(2)]
    )
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------
# eig


def _check_eig(x, w, vl, vr, tol):
    """Eigenvalues as a set against NumPy; ``x vr = vr w``, ``vl^H x = w vl^H``, unit norms."""
    for idx in np.ndindex(x.shape[:-2]):
        np.testing.assert_allclose(
            np.sort_complex(w[idx]), np.sort_complex(np.linalg.eigvals(x[idx])), rtol=tol, atol=tol
        )
    np.testing.assert_allclose(x @ vr, vr * w[..., None, :], rtol=tol, atol=tol)
    vl_h = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vl_h @ x, w[..., :, None] * vl_h, rtol=tol, atol=tol)
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [f32, c64, f64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 2, 2), (2, 0, 0)])
def test_eig_values(dtype, shape):
    with config.enable_x64(dtype == f64):
        x = _rand(shape, dtype)
        w, vl, vr = (np.asarray(o) for o in linalg.eig(x))
    want = np.result_type(dtype, np.complex64)
    assert w.dtype == vl.dtype == vr.dtype == want
    assert w.shape == shape[:-1] and vl.shape == vr.shape == shape
    _check_eig(x, w, vl, vr, 10 * _tol(dtype))


@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("right", [False, True])
def test_eig_outputs(left, right):
    x = _rand((3, 3), f32)
    out = linalg.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    assert len(out) == 1 + left + right
    w_all, vl_all, vr_all = (np.asarray(o) for o in linalg.eig(x))
    np.testing.assert_array_equal(np.asarray(out[0]), w_all)
    if left:
        np.testing.assert_allclose(np.asarray(out[1]), vl_all, rtol=1e-5, atol=1e-5)
    if right:
        np.testing.assert_allclose(np.asarray(out[-1]), vr_all, rtol=1e-5, atol=1e-5)


def test_eig_failure_is_nan():
    x = _rand((3, 2, 2), f32)
    x[1, 0, 1] = np.inf
    for out in linalg.eig(x):
        out = np.asarray(out)
        # complex NaN is nan+nanj, as in JAX
        assert np.isnan(out[1].real).all() and np.isnan(out[1].imag).all()
        assert np.isfinite(out[[0, 2]]).all()


def test_eig_vmap_and_jit():
    xs = _rand((3, 4, 4), f32)
    want = [np.asarray(o) for o in linalg.eig(xs)]
    outs = vmap(linalg.eig, in_axes=2)(np.moveaxis(xs, 0, 2))
    loop = [np.stack(o) for o in zip(*[[np.asarray(v) for v in linalg.eig(x)] for x in xs])]
    for out, w, lw in zip(outs, want, loop):
        np.testing.assert_allclose(np.asarray(out), lw, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(w, lw, rtol=1e-6, atol=1e-6)
    for out, w in zip(jit(linalg.eig)(xs), want):
        np.testing.assert_allclose(np.asarray(out), w, rtol=1e-6, atol=1e-6)


def _eigvals(a):
    return linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def test_eig_eigenvalue_grads():
    # Own seeded draws: the shared RNG's state depends on test order, and a draw with
    # nearly equal eigenvalues makes finite differences miss the tolerance.
    r = np.random.default_rng(1234)
    x = r.standard_normal((2, 3, 3)).astype(f32)
    check_grads(jit(_eigvals), (x,), order=1, atol=5e-2, rtol=5e-2)
    with config.enable_x64(True):
        for dtype in (f64, np.dtype(np.complex128)):
            a = r.standard_normal((4, 4))
            if dtype.kind == "c":
                a = a + 1j * r.standard_normal((4, 4))
            check_grads(jit(_eigvals), (a.astype(dtype),), order=2, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("left, right", [(False, True), (True, False), (True, True)])
def test_eig_eigenvector_grads(left, right):
    def f(a):
        return linalg.eig(
            a,
            compute_left_eigenvectors=left,
            compute_right_eigenvectors=right,
            enable_eigvec_derivs=True,
        )

    with config.enable_x64(True):
        order = 2 if left and right else 1  # one second-order case keeps the test fast
        check_grads(jit(f), (_rand((4, 4), np.complex128),), order=order, atol=1e-5, rtol=1e-5)
        # A real matrix's eigenvectors of a complex pair are fixed up to sign: use v * v.
        g = jit(lambda a: [v * v for v in f(a)[1:]])
        check_grads(g, (_rand((4, 4), f64),), order=1, atol=1e-5, rtol=1e-5)


def test_eig_eigenvector_grads_need_opt_in():
    from polyjax_interpreters.ad import jvp

    x = _rand((3, 3), f32)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jvp(lambda a: linalg.eig(a, compute_left_eigenvectors=False), (x,), (x,))


def test_eig_errors():
    with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
        make_jaxpr(linalg.eig)(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="int32"):
        make_jaxpr(linalg.eig)(np.ones((2, 2), np.int32))
    with pytest.raises(NotImplementedError, match="MAGMA"):
        linalg.eig(np.eye(2, dtype=np.float32), implementation=linalg.EigImplementation.MAGMA)
    with pytest.raises(ValueError):
        linalg.eig(np.eye(2, dtype=np.float32), implementation="bogus")
    w = linalg.eig(np.eye(2, dtype=np.float32), implementation="lapack")[0]
    np.testing.assert_allclose(np.asarray(w), [1, 1])


def test_algorithm_enums():
    x = _rand((3, 3), f32)
    s = linalg.svd(x, compute_uv=False, algorithm=linalg.SvdAlgorithm.DEFAULT)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(x, compute_uv=False), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="algorithm"):
        linalg.svd(x, algorithm=linalg.SvdAlgorithm.JACOBI)
    sym = x + x.T
    w = linalg.eigh(sym, implementation=linalg.EighImplementation.QR)[1]
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(sym), rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="implementation"):
        linalg.eigh(sym, implementation=linalg.EighImplementation.QDWH)
    assert {e.name for e in linalg.EigImplementation} == {"CUSOLVER", "MAGMA", "LAPACK"}
