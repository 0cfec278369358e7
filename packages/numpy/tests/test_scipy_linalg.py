"""`polyjax.scipy.linalg` against `scipy.linalg`: values (float32, complex64), batches,
the triangle each function reads, derivatives (check_grads), jit against eager, vmap
against a loop, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from _jnp_helpers import normal_data

from polyjax_core import config
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy.scipy import linalg

f32, f64, c64, c128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
rng = np.random.default_rng(0)


def _rand(shape, dtype):
    return normal_data(rng, shape, dtype)


def _well_conditioned(shape, dtype):
    return (_rand(shape, dtype) + 2 * shape[-1] * np.eye(shape[-1])).astype(dtype)


def _hpd(shape, dtype):
    a = _rand(shape, dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def _close(actual, expected, dtype=f32, scale=1.0):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    tol = scale * (1e-4 if np.dtype(dtype) in (f32, c64) else 1e-10)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def _junk_other_triangle(a, lower):
    """`a` with garbage in the triangle a function must not read."""
    junk = np.full(a.shape, 55.0, a.dtype)
    return np.tril(a) + np.triu(junk, 1) if lower else np.triu(a) + np.tril(junk, -1)


# ---------------------------------------------------------------------------
# Solves


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular(dtype, lower, trans):
    a = _well_conditioned((4, 4), dtype)
    tri = np.tril(a) if lower else np.triu(a)
    b = _rand((4, 3), dtype)
    expected = sla.solve_triangular(tri, b, trans=trans, lower=lower)
    _close(
        linalg.solve_triangular(_junk_other_triangle(a, lower), b, trans=trans, lower=lower),
        expected,
        dtype,
    )
    expected = sla.solve_triangular(tri, b[:, 0], trans=trans, lower=lower, unit_diagonal=True)
    out = linalg.solve_triangular(tri, b[:, 0], trans=trans, lower=lower, unit_diagonal=True)
    _close(out, expected, dtype, scale=10)


def test_solve_triangular_batches():
    a = np.tril(_well_conditioned((2, 3, 3), f32))
    b = _rand((2, 3), f32)  # b.ndim == a.ndim - 1: a batch of vectors
    expected = np.stack([sla.solve_triangular(m, v, lower=True) for m, v in zip(a, b)])
    _close(linalg.solve_triangular(a, b, lower=True), expected)
    b = _rand((5, 1, 3, 2), f32)  # batch dimensions broadcast
    out = linalg.solve_triangular(a, b, lower=True)
    assert out.shape == (5, 2, 3, 2)
    _close(out[3, 1], sla.solve_triangular(a[1], b[3, 0], lower=True))


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_family_reads_one_triangle(dtype, lower):
    a = _hpd((3, 3), dtype)
    junk = _junk_other_triangle(a, lower)
    _close(linalg.cholesky(junk, lower=lower), sla.cholesky(a, lower=lower), dtype, scale=10)
    c, low = linalg.cho_factor(junk, lower=lower)
    assert low is lower
    _close(c, sla.cholesky(a, lower=lower), dtype, scale=10)
    b = _rand((3, 2), dtype)
    _close(
        linalg.cho_solve((c, low), b),
        sla.cho_solve(sla.cho_factor(a, lower=lower), b),
        dtype,
        scale=10,
    )
    _close(linalg.cho_solve((c, low), b[:, 0]), np.linalg.solve(a, b[:, 0]), dtype, scale=10)
    bad = np.asarray(linalg.cholesky(-a))  # NaN in the upper triangle, zeros below
    assert np.isnan(np.triu(bad)[np.triu_indices(len(a))]).all()
    assert (bad[np.tril_indices(len(a), -1)] == 0).all()


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_lu(dtype, shape):
    a = _rand(shape, dtype)
    for ours, theirs in zip(linalg.lu(a), sla.lu(a)):
        assert ours.dtype == dtype
        _close(ours, theirs, dtype)
    for ours, theirs in zip(linalg.lu(a, permute_l=True), sla.lu(a, permute_l=True)):
        _close(ours, theirs, dtype)
    lu_, piv = linalg.lu_factor(a)
    lu_np, piv_np = sla.lu_factor(a)
    _close(lu_, lu_np, dtype)
    np.testing.assert_array_equal(np.asarray(piv), piv_np)
    assert piv.dtype == np.int32


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_solve(dtype, trans):
    a = _well_conditioned((2, 4, 4), dtype)
    b = _rand((2, 4, 3), dtype)
    factors = linalg.lu_factor(a)
    out = linalg.lu_solve(factors, b, trans=trans)
    expected = np.stack([sla.lu_solve(sla.lu_factor(m), v, trans=trans) for m, v in zip(a, b)])
    _close(out, expected, dtype, scale=10)
    _close(linalg.lu_solve(factors, b[..., 0], trans=trans), expected[..., 0], dtype, scale=10)


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve(dtype, assume_a, lower):
    a = _hpd((4, 4), dtype)
    if assume_a == "sym":
        a = (a + a.T) / 2  # complex symmetric, not Hermitian
    given = a if assume_a == "gen" else _junk_other_triangle(a, lower)
    b = _rand((4, 2), dtype)
    expected = sla.solve(a, b, assume_a=assume_a, lower=lower)
    _close(linalg.solve(given, b, assume_a=assume_a, lower=lower), expected, dtype, scale=10)
    _close(
        linalg.solve(given, b[:, 1], assume_a=assume_a, lower=lower),
        expected[:, 1],
        dtype,
        scale=10,
    )


def test_inv_and_det():
    a = _well_conditioned((2, 3, 3), f32)
    _close(linalg.inv(a), np.linalg.inv(a))
    _close(linalg.det(a), np.linalg.det(a), scale=100)


# ---------------------------------------------------------------------------
# Decompositions


@pytest.mark.parametrize("shape", [(4, 3), (3, 4)])
def test_qr_modes(shape):
    a = _rand(shape, f32)
    for mode in ("full", "economic"):
        q, r = linalg.qr(a, mode=mode)
        q_np, r_np = sla.qr(a, mode=mode)
        assert q.shape == q_np.shape and r.shape == r_np.shape
        np.testing.assert_allclose(np.asarray(q @ r), a, atol=1e-5)
        _close(np.abs(np.asarray(r)), np.abs(r_np))
    (r,) = linalg.qr(a, mode="r")
    _close(np.abs(np.asarray(r)), np.abs(sla.qr(a, mode="r")[0]))
    (h, tau), r = linalg.qr(a, mode="raw")
    (h_np, tau_np), r_np = sla.qr(a, mode="raw")
    _close(h, h_np)
    _close(tau, tau_np)
    _close(r, r_np)


@pytest.mark.parametrize("dtype", [f32, c64])
def test_svd_and_eigh(dtype):
    a = _rand((4, 3), dtype)
    u, s, vh = linalg.svd(a)
    assert (u.shape, s.shape, vh.shape) == ((4, 4), (3,), (3, 3))
    _close(s, sla.svd(a, compute_uv=False), dtype, scale=10)
    _close(
        linalg.svd(a, compute_uv=False, lapack_driver="gesvd"),
        sla.svd(a, compute_uv=False),
        dtype,
        10,
    )
    h = _hpd((3, 3), dtype)
    for lower in (True, False):
        junk = _junk_other_triangle(h, lower)
        w, v = linalg.eigh(junk, lower=lower)
        _close(w, sla.eigh(h, eigvals_only=True), dtype, scale=100)
        np.testing.assert_allclose(np.asarray(h @ v), np.asarray(v * w), atol=1e-3)
        _close(
            linalg.eigh(junk, lower=lower, eigvals_only=True),
            sla.eigh(h, eigvals_only=True),
            dtype,
            100,
        )


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
def test_polar(side, shape):
    a = _rand(shape, f32)
    u, p = linalg.polar(a, side=side)
    u_np, p_np = sla.polar(a, side=side)
    _close(u, u_np, scale=10)
    _close(p, p_np, scale=10)
    _close(linalg.polar(a, side=side, method="svd")[0], u_np, scale=10)


# ---------------------------------------------------------------------------
# Matrix functions


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_expm(dtype, scale):
    a = (scale * _rand((2, 4, 4), dtype) / 4).astype(dtype)
    expected = np.stack(
        [sla.expm(m.astype(np.complex128 if dtype == c64 else np.float64)) for m in a]
    )
    out = np.asarray(linalg.expm(a))
    assert out.dtype == dtype
    np.testing.assert_allclose(
        out, expected, rtol=2e-4 * max(1, scale), atol=1e-5 * np.abs(expected).max()
    )
    tri = np.triu(a[0])
    _close(linalg.expm(tri, upper_triangular=True), sla.expm(tri), dtype, scale=10 * max(1, scale))


def test_expm_edge_cases():
    _close(linalg.expm(np.zeros((3, 3), f32)), np.eye(3))
    assert linalg.expm(np.zeros((0, 0), f32)).shape == (0, 0)
    big = np.diag(np.float32([100.0, -100.0]))  # needs 5 squarings
    assert np.isnan(np.asarray(linalg.expm(big, max_squarings=3))).all()
    assert np.isfinite(np.asarray(linalg.expm(big / 10, max_squarings=3))).all()
    with config.enable_x64(True):
        a = _rand((3, 3), f64)
        _close(linalg.expm(a), sla.expm(a), f64, scale=100)


def test_expm_grads_and_frechet():
    with config.enable_x64(True):
        a = _rand((3, 3), f64)
        e = _rand((3, 3), f64)
        assert np.abs(3 * a).sum(0).max() > 5.4  # so that expm squares
        check_grads(linalg.expm, (3 * a,), order=2)
        exp_a, frechet = linalg.expm_frechet(a, e)
        exp_np, frechet_np = sla.expm_frechet(a, e)
        _close(exp_a, exp_np, f64, scale=100)
        _close(frechet, frechet_np, f64, scale=100)
        _close(linalg.expm_frechet(a, e, compute_expm=False), frechet_np, f64, scale=100)
    check_grads(linalg.expm, (_rand((2, 2), c64),), order=1, atol=5e-2, rtol=5e-2)


def test_sqrtm():
    a = _hpd((3, 3), f32)
    out = linalg.sqrtm(a)
    assert out.dtype == c64  # always complex, as JAX's
    _close(out, sla.sqrtm(a.astype(f64)), c64, scale=10)
    negative = np.float32([[-4.0, 0.0], [0.0, 9.0]])
    _close(linalg.sqrtm(negative), np.diag([2j, 3.0]), c64)
    batch = np.stack([a, 2 * a])
    _close(linalg.sqrtm(batch)[1], sla.sqrtm(2 * a.astype(f64)), c64, scale=10)


# ---------------------------------------------------------------------------
# Special matrices


def test_special_matrices():
    c, r = np.arange(1, 4), np.arange(10, 15)
    _close(linalg.toeplitz(c, r), sla.toeplitz(c, r))
    cc = np.array([1 + 2j, 3, 4j], c64)
    _close(linalg.toeplitz(cc), sla.toeplitz(cc), c64)
    _close(linalg.hankel(c, r), sla.hankel(c, r))
    _close(linalg.hankel(c), sla.hankel(c))
    _close(linalg.circulant(c), sla.circulant(c))
    _close(linalg.companion(np.float32([2, -3, 1, 5])), sla.companion(np.float32([2, -3, 1, 5])))
    _close(linalg.hilbert(4), sla.hilbert(4))
    assert linalg.hilbert(4).dtype == f32
    assert linalg.toeplitz(c).dtype == np.int32
    # Leading dimensions are batch dimensions.
    batch = np.stack([c, 2 * c])
    _close(linalg.toeplitz(batch, r)[1], sla.toeplitz(2 * c, r))
    _close(linalg.circulant(batch)[1], sla.circulant(2 * c))


def test_block_diag():
    blocks = [
        np.ones((2, 2), f32),
        np.float32(3),
        np.arange(3, dtype=np.int32),
        np.zeros((1, 0), f32),
    ]
    out = linalg.block_diag(*blocks)
    _close(out, sla.block_diag(*blocks))
    assert out.dtype == f32
    assert linalg.block_diag().shape == (1, 0)
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        linalg.block_diag(np.ones((1, 1, 1)))


# ---------------------------------------------------------------------------
# Transformations and errors


def test_grads():
    with config.enable_x64(True):
        a = _well_conditioned((3, 3), f64)
        spd = _hpd((3, 3), f64)
        b = _rand((3, 2), f64)
        check_grads(
            lambda a, b: linalg.solve_triangular(a, b, lower=True, trans=1), (a, b), order=2
        )
        check_grads(lambda a: linalg.cholesky(a, lower=False), (spd,), order=2)
        check_grads(
            lambda c, b: linalg.cho_solve((c, True), b), (np.linalg.cholesky(spd), b), order=1
        )
        check_grads(lambda a, b: linalg.solve(a, b, assume_a="pos"), (spd, b), order=1)
        check_grads(lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b, trans=2), (a, b), order=1)
        check_grads(lambda a: linalg.lu(a)[1:], (a,), order=1)
        check_grads(lambda a: linalg.eigh(a, eigvals_only=True), (spd,), order=1)
        check_grads(lambda a: linalg.polar(a)[1], (a,), order=1)


def test_jit_and_vmap():
    a = _well_conditioned((3, 3, 3), f32)
    b = _rand((3, 3, 2), f32)

    def several(a, b):
        return (
            linalg.solve(a, b),
            linalg.cho_solve(linalg.cho_factor(a @ a.T, lower=True), b),
            linalg.lu_solve(linalg.lu_factor(a), b, trans=1),
            linalg.expm(a / 10),
            linalg.toeplitz(b[..., 0]),
        )

    for e, j in zip(several(a, b), jit(several)(a, b)):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-5, atol=1e-5)
    for out, loop in zip(vmap(several)(a, b), zip(*[several(x, y) for x, y in zip(a, b)])):
        np.testing.assert_allclose(
            np.asarray(out), np.stack([np.asarray(v) for v in loop]), rtol=1e-4, atol=1e-4
        )


def test_errors():
    a = np.eye(3, dtype=f32)
    with pytest.raises(ValueError, match="square"):
        linalg.solve_triangular(np.ones((2, 3)), np.ones(2))
    with pytest.raises(ValueError, match=r"b must have shape \(\.\.\., 3\) or \(\.\.\., 3, K\)"):
        linalg.solve(a, np.ones(4))
    with pytest.raises(ValueError, match="trans"):
        linalg.solve_triangular(a, np.ones(3), trans=3)
    with pytest.raises(ValueError, match="assume_a"):
        linalg.solve(a, np.ones(3), assume_a="banded")
    with pytest.raises(ValueError, match="mode"):
        linalg.qr(a, mode="reduced")
    with pytest.raises(NotImplementedError, match="pivoting"):
        linalg.qr(a, pivoting=True)
    with pytest.raises(NotImplementedError, match="generalized"):
        linalg.eigh(a, np.eye(3))
    with pytest.raises(ValueError, match="side"):
        linalg.polar(a, side="up")
    with pytest.raises(ValueError, match="same shape"):
        linalg.expm_frechet(a, np.ones((2, 2)))
    with pytest.raises(ValueError, match="two coefficients"):
        linalg.companion(np.ones(1))
    with pytest.raises(ValueError, match="lu_solve: trans"):
        linalg.lu_solve(linalg.lu_factor(a), np.ones(3), trans=3)
