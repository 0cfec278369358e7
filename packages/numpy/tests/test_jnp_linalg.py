"""`jnp.linalg`: values against `numpy.linalg` (float32, complex64; float64 under x64),
batched and empty shapes, JAX's dtype rules, derivatives (check_grads, order 2 where
the function is smooth), jit against eager, vmap against a loop, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import normal_data

from polyjax_core import config, make_jaxpr
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import linalg as la

f32, f64, c64, c128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
rng = np.random.default_rng(0)


def _rand(shape, dtype):
    return normal_data(rng, shape, dtype)


def _well_conditioned(shape, dtype):
    """Random matrices with a dominant diagonal (so inverses are tame)."""
    n = shape[-1]
    return (_rand(shape, dtype) + 2 * n * np.eye(n)).astype(dtype)


def _hpd(shape, dtype):
    a = _rand(shape, dtype)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (f32, c64) else 1e-10


def _close(actual, expected, dtype, scale=1.0):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=scale * _tol(dtype), atol=scale * _tol(dtype))


SQUARE_SHAPES = [(3, 3), (2, 4, 4), (2, 1, 2, 2), (1, 1), (0, 3, 3), (0, 0)]


# ---------------------------------------------------------------------------
# Solves, inverses, determinants


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", SQUARE_SHAPES)
def test_inv_det_slogdet_match_numpy(dtype, shape):
    a = _well_conditioned(shape, dtype) if shape[-1] else np.zeros(shape, dtype)
    inv = la.inv(a)
    assert inv.dtype == dtype
    _close(inv, np.linalg.inv(a), dtype)
    det = la.det(a)
    assert det.dtype == dtype
    _close(det, np.linalg.det(a), dtype, scale=10 * max(1, shape[-1]) ** 2)
    for method in ("lu", "qr"):
        sign, logdet = la.slogdet(a, method=method)
        expected_sign, expected_logdet = np.linalg.slogdet(a)
        assert sign.dtype == dtype and logdet.dtype == np.finfo(dtype).dtype
        _close(sign, expected_sign, dtype, scale=10)
        _close(logdet, expected_logdet, dtype, scale=10)


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 3), (3,)),  # one vector
        ((3, 3), (3, 2)),
        ((2, 3, 3), (3,)),  # a 1-D b is one right-hand side for every matrix
        ((2, 3, 3), (2, 3, 4)),
        ((2, 1, 3, 3), (4, 3, 1)),  # batch dimensions broadcast
        ((3, 3), (0, 3, 2)),
        ((0, 0), (0, 2)),
    ],
)
@pytest.mark.parametrize("dtype", [f32, c64])
def test_solve_matches_numpy(a_shape, b_shape, dtype):
    a = _well_conditioned(a_shape, dtype) if a_shape[-1] else np.zeros(a_shape, dtype)
    b = _rand(b_shape, dtype)
    expected = (
        np.linalg.solve(a, b) if len(b_shape) > 1 else np.linalg.solve(a, b[..., None])[..., 0]
    )
    _close(la.solve(a, b), expected, dtype)


def test_operands_become_inexact_with_jax_dtypes():
    a = np.array([[2, 1], [1, 3]], np.int32)
    assert la.inv(a).dtype == f32
    assert la.det(a.astype(bool)).dtype == f32
    assert la.solve(a, np.array([1, 2], np.int8)).dtype == f32
    assert la.eigvals(a).dtype == c64  # always complex
    assert la.svdvals(a.astype(c64)).dtype == f32  # singular values are real
    assert la.norm(a.astype(c64)).dtype == f32
    assert la.matrix_rank(a).dtype == np.int32
    # float64 is canonicalized without x64, kept with it.
    assert la.det(a.astype(f64)).dtype == f32
    with config.enable_x64(True):
        assert la.det(a.astype(f64)).dtype == f64
        assert la.eigvals(a.astype(f64)).dtype == c128
        assert la.inv(a).dtype == jnp.sin(a).dtype  # jnp's rule for integers


def test_det_of_singular_matrices_and_its_gradient():
    # Rank n-1: the gradient is the cofactor matrix (adj(a)^T), also where the zero pivot
    # is not the last one; rank n-2: the gradient is zero.
    cases = {
        "rank1_2x2": np.array([[1.0, 2.0], [2.0, 4.0]]),
        "zero_column": np.array([[0.0, 1.0], [0.0, 1.0]]),
        "rank2_3x3": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]),
    }

    def cofactors(m):
        n = m.shape[0]
        out = np.empty_like(m)
        for i in range(n):
            for j in range(n):
                minor = np.delete(np.delete(m, i, 0), j, 1)
                out[i, j] = (-1) ** (i + j) * np.linalg.det(minor)
        return out

    for name, m in cases.items():
        m = m.astype(f32)
        assert abs(float(la.det(m))) < 1e-5, name
        g = np.asarray(grad(la.det)(m))
        np.testing.assert_allclose(g, cofactors(m.astype(f64)), atol=1e-4, err_msg=name)
    g = np.asarray(grad(la.det)(np.zeros((3, 3), f32)))
    np.testing.assert_array_equal(g, 0)


def test_slogdet_of_singular_matrix():
    # LU finds the exact zero pivot, as NumPy does; QR leaves a rounding-sized diagonal.
    a = np.array([[1.0, 2.0], [2.0, 4.0]], f32)
    sign, logdet = la.slogdet(a)
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    assert np.linalg.slogdet(a) == (0.0, -np.inf)
    sign, logdet = la.slogdet(np.zeros((2, 2), f32), method="qr")
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    assert float(la.slogdet(a, method="qr").logabsdet) < -10


@pytest.mark.parametrize("dtype", [f64, c128])
def test_grads_of_solves_and_determinants(dtype):
    # Second-order checks compile many small programs: order 2 where it adds a new rule
    # (the custom_linear_solve of inv/solve, det's and slogdet's own jvps), real only.
    order = 2 if dtype == f64 else 1
    with config.enable_x64(True):
        a = _well_conditioned((2, 3, 3), dtype)
        b = _rand((2, 3, 2), dtype)
        check_grads(la.inv, (a,), order=order)
        check_grads(la.solve, (a, b), order=1)
        check_grads(lambda a, b: la.solve(a, b[0, :, 0]), (a, b), order=1)
        check_grads(la.det, (a,), order=order)
        check_grads(lambda x: la.slogdet(x).logabsdet, (a,), order=order)
        check_grads(lambda x: la.slogdet(x, method="qr").logabsdet, (a,), order=1)
        if dtype == c128:  # the phase of the sign moves too
            check_grads(lambda x: la.slogdet(x).sign, (a,), order=1)


def test_grads_in_float32():
    a = _well_conditioned((2, 3, 3), f32)
    check_grads(la.inv, (a,), order=1, atol=5e-2, rtol=5e-2)
    check_grads(la.det, (a,), order=1, atol=5e-2, rtol=5e-2)


# ---------------------------------------------------------------------------
# Decompositions


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_cholesky(dtype, shape):
    a = _hpd(shape, dtype)
    lower = la.cholesky(a)
    _close(lower, np.linalg.cholesky(a), dtype, scale=10)
    upper = la.cholesky(a, upper=True)
    _close(upper, np.linalg.cholesky(a, upper=True), dtype, scale=10)
    # JAX symmetrizes by default; without it only the lower triangle is read, as NumPy does.
    junk = a + np.triu(np.full(shape, 100.0, dtype), 1)
    _close(la.cholesky(junk, symmetrize_input=False), np.linalg.cholesky(a), dtype, scale=10)
    if shape[0]:
        bad = -a
        out = np.asarray(la.cholesky(bad))  # NaN in the lower triangle, zeros above
        assert np.isnan(out[..., np.tri(shape[-1], dtype=bool)]).all()
        assert (out[..., ~np.tri(shape[-1], dtype=bool)] == 0).all()


@pytest.mark.parametrize("dtype", [f32, c64])
def test_eigh_and_eigvalsh(dtype):
    a = _hpd((2, 4, 4), dtype)
    w, v = la.eigh(a)
    ew = np.linalg.eigvalsh(a)
    _close(w, ew, dtype, scale=100)
    assert w.dtype == np.finfo(dtype).dtype
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w[..., None, :]), atol=1e-3)
    _close(la.eigvalsh(a), ew, dtype, scale=100)
    # UPLO picks the triangle read without symmetrize_input.
    junk = np.tril(a) + np.triu(np.full(a.shape, 7.0, dtype), 1)
    _close(la.eigvalsh(junk, "L", symmetrize_input=False), ew, dtype, scale=100)
    junk_u = np.triu(a) + np.tril(np.full(a.shape, 7.0, dtype), -1)
    _close(la.eigh(junk_u, UPLO="U", symmetrize_input=False).eigenvalues, ew, dtype, scale=100)


@pytest.mark.parametrize("dtype", [f32, c64])
def test_eig_and_eigvals(dtype):
    a = _rand((2, 4, 4), dtype)
    w, v = la.eig(a)
    assert w.dtype == v.dtype == np.result_type(dtype, c64)
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w[..., None, :]), atol=1e-4)
    np.testing.assert_allclose(
        np.sort_complex(np.asarray(la.eigvals(a))), np.sort_complex(np.linalg.eigvals(a)), atol=1e-4
    )


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(3, 5), (2, 5, 3), (4, 4), (0, 2, 3)])
def test_svd(dtype, shape):
    a = _rand(shape, dtype)
    s_np = np.linalg.svd(a, compute_uv=False)
    _close(la.svdvals(a), s_np, dtype, scale=10)
    _close(la.svd(a, compute_uv=False), s_np, dtype, scale=10)
    for full in (True, False):
        u, s, vh = la.svd(a, full_matrices=full)
        u_np, _, vh_np = np.linalg.svd(a, full_matrices=full)
        assert u.shape == u_np.shape and vh.shape == vh_np.shape
        k = min(shape[-2:])
        rebuilt = (
            np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :] @ np.asarray(vh)[..., :k, :]
        )
        np.testing.assert_allclose(rebuilt, a, atol=1e-4)


@pytest.mark.parametrize("dtype", [f32, c64])
def test_svd_hermitian(dtype):
    a = _rand((2, 4, 4), dtype)
    a = a + np.conj(np.swapaxes(a, -1, -2))  # Hermitian, indefinite
    u, s, vh = la.svd(a, hermitian=True)
    _close(s, np.linalg.svd(a, compute_uv=False), dtype, scale=100)
    np.testing.assert_allclose(np.asarray(u * s[..., None, :] @ vh), a, atol=1e-4)
    _close(
        la.svd(a, hermitian=True, compute_uv=False), np.linalg.svd(a, compute_uv=False), dtype, 100
    )


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (0, 2, 2)])
def test_qr_modes(dtype, shape):
    a = _rand(shape, dtype)
    for mode in ("reduced", "complete"):
        q, r = la.qr(a, mode=mode)
        q_np, r_np = np.linalg.qr(a, mode=mode)
        assert q.shape == q_np.shape and r.shape == r_np.shape
        np.testing.assert_allclose(np.asarray(q @ r), a, atol=1e-4)
        np.testing.assert_allclose(np.abs(np.asarray(r)), np.abs(r_np), atol=1e-4)
        np.testing.assert_allclose(np.asarray(r), np.triu(np.asarray(r)))
    r_only = la.qr(a, mode="r")
    np.testing.assert_allclose(
        np.abs(np.asarray(r_only)), np.abs(np.linalg.qr(a, mode="r")), atol=1e-4
    )
    h, tau = la.qr(a, mode="raw")  # JAX's layout: not transposed
    assert h.shape == shape and tau.shape == (*shape[:-2], min(shape[-2:]))
    if len(shape) == 2:
        h_np, tau_np = np.linalg.qr(a, mode="raw")
        np.testing.assert_allclose(np.asarray(h), h_np.T, atol=1e-4)
        np.testing.assert_allclose(np.asarray(tau), tau_np, atol=1e-4)


@pytest.mark.parametrize("dtype", [f64, c128])
def test_grads_of_decompositions(dtype):
    order = 2 if dtype == f64 else 1
    with config.enable_x64(True):
        spd = _hpd((2, 3, 3), dtype)
        a = _rand((2, 4, 3), dtype)
        check_grads(la.cholesky, (spd,), order=order)
        check_grads(la.eigvalsh, (spd,), order=order)
        check_grads(la.svdvals, (a,), order=order)

        def smallest_eigenprojector(x):  # independent of the eigenvectors' phases
            v = la.eigh(x).eigenvectors[..., :1]
            return v @ jnp.conj(jnp.swapaxes(v, -1, -2))

        check_grads(smallest_eigenprojector, (spd,), order=1)

        def svd_projectors(x):  # gauge-invariant functions of U and Vh
            u, _, vh = la.svd(x, full_matrices=False)
            u, vh = u[..., :, :1], vh[..., :1, :]
            return u @ jnp.conj(jnp.swapaxes(u, -1, -2)), jnp.conj(jnp.swapaxes(vh, -1, -2)) @ vh

        check_grads(svd_projectors, (a,), order=1)
        check_grads(svd_projectors, (jnp.swapaxes(a, -1, -2),), order=1)
        if dtype == f64:  # real singular vectors are unique up to a sign, which steps keep
            check_grads(lambda x: la.svd(x, full_matrices=False), (a,), order=1)
        check_grads(la.pinv, (a,), order=order)
        check_grads(lambda x: la.pinv(x, hermitian=True), (spd,), order=1)
        check_grads(la.eigvals, (_well_conditioned((3, 3), dtype),), order=1)


# ---------------------------------------------------------------------------
# Norms, rank, condition numbers, pseudo-inverse, least squares


VECTOR_ORDS = [None, 2, 1, -1, 0, 3.5, np.inf, -np.inf]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", [f32, c64])
def test_norm_matches_numpy(dtype):
    x = _rand((2, 3, 4), dtype)
    for ord in VECTOR_ORDS:
        for axis in (0, -1):
            for keepdims in (False, True):
                expected = np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
                out = la.norm(x, ord=ord, axis=axis, keepdims=keepdims)
                assert out.dtype == np.finfo(dtype).dtype
                _close(out, expected, dtype, scale=10)
        _close(la.norm(x[0, 0], ord=ord), np.linalg.norm(x[0, 0], ord=ord), dtype, scale=10)
    for ord in MATRIX_ORDS:
        for axes in ((1, 2), (2, 0)):
            for keepdims in (False, True):
                expected = np.linalg.norm(x, ord=ord, axis=axes, keepdims=keepdims)
                _close(la.norm(x, ord=ord, axis=axes, keepdims=keepdims), expected, dtype, scale=10)
        _close(la.norm(x[0], ord=ord), np.linalg.norm(x[0], ord=ord), dtype, scale=10)
        if ord is not None:
            _close(la.matrix_norm(x, ord=ord), np.linalg.matrix_norm(x, ord=ord), dtype, scale=10)
    _close(la.norm(x), np.linalg.norm(x), dtype)
    _close(la.norm(x, keepdims=True), np.linalg.norm(x, keepdims=True), dtype)


@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
@pytest.mark.parametrize("ord", [2, 1, np.inf, 0.5])
def test_vector_norm(axis, ord):
    x = _rand((2, 3, 4), f32)
    for keepdims in (False, True):
        expected = np.linalg.vector_norm(x, axis=axis, ord=ord, keepdims=keepdims)
        _close(la.vector_norm(x, axis=axis, ord=ord, keepdims=keepdims), expected, f32, scale=10)


def test_norm_of_empty_and_zero_arrays():
    assert float(la.norm(np.zeros((0,), f32))) == 0.0
    np.testing.assert_array_equal(np.asarray(la.norm(np.zeros((2, 0), f32), axis=1)), [0, 0])
    assert float(la.norm(np.zeros((3, 3), f32), "nuc")) == 0.0


def test_grads_of_norms():
    with config.enable_x64(True):
        x = _rand((3, 4), f64)
        for ord in (None, 1, 3.0, np.inf):
            check_grads(lambda v, o=ord: la.norm(v, ord=o, axis=1), (x,), order=1 + (ord is None))
        for ord in ("fro", "nuc", 2, 1, np.inf):
            check_grads(lambda m, o=ord: la.norm(m, ord=o), (x,), order=1 + (ord == "nuc"))
        check_grads(lambda v: la.vector_norm(v, axis=None), (_rand((3,), c128),), order=1)


def test_matrix_rank():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], f32)
    assert int(la.matrix_rank(a)) == 2 == np.linalg.matrix_rank(a)
    stack = np.stack([a, np.eye(3, dtype=f32), np.zeros((3, 3), f32)])
    np.testing.assert_array_equal(np.asarray(la.matrix_rank(stack)), [2, 3, 0])
    # rtol is relative to the largest singular value; tol is JAX's alias of it.
    b = np.diag(np.float32([1.0, 1e-3, 1e-6]))
    assert int(la.matrix_rank(b)) == 3
    assert int(la.matrix_rank(b, rtol=1e-4)) == 2 == np.linalg.matrix_rank(b, rtol=1e-4)
    assert int(la.matrix_rank(b, tol=1e-2)) == 1
    np.testing.assert_array_equal(
        np.asarray(la.matrix_rank(np.stack([b, b]), rtol=np.float32([1e-4, 1e-2]))), [2, 1]
    )
    assert int(la.matrix_rank(b + b.T, hermitian=True)) == 3
    assert (
        int(la.matrix_rank(np.float32([0, 0]))) == 0
        and int(la.matrix_rank(np.float32([0, 2]))) == 1
    )
    np.testing.assert_array_equal(np.asarray(la.matrix_rank(np.zeros((2, 0, 3), f32))), [0, 0])
    with pytest.raises(ValueError, match="only one of rtol and tol"):
        la.matrix_rank(b, rtol=1e-3, tol=1e-3)


@pytest.mark.parametrize("dtype", [f32, c64])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 3, 2)])
def test_pinv(dtype, shape):
    a = _rand(shape, dtype)
    _close(la.pinv(a), np.linalg.pinv(a), dtype, scale=100)
    # The cutoff: JAX's default is 10 * max(M, N) * eps, and rcond is an alias of rtol.
    singular = np.array([[1.0, 0.0], [0.0, 1e-8]], f32)
    np.testing.assert_allclose(np.asarray(la.pinv(singular)), [[1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(
        np.asarray(la.pinv(singular, rtol=0.0)), np.linalg.pinv(singular, rtol=0.0), rtol=1e-5
    )
    np.testing.assert_allclose(
        np.asarray(la.pinv(singular, rcond=1e-9)), np.asarray(la.pinv(singular, rtol=1e-9))
    )
    h = _hpd((3, 3), dtype)
    _close(la.pinv(h, hermitian=True), np.linalg.pinv(h, hermitian=True), dtype, scale=100)
    with pytest.raises(ValueError, match="only one of rtol and rcond"):
        la.pinv(a, rtol=1e-3, rcond=1e-3)


def test_lstsq():
    a = _rand((5, 3), f32)
    b = _rand((5, 2), f32)
    x, resid, rank, s = la.lstsq(a, b)
    x_np, resid_np, rank_np, s_np = np.linalg.lstsq(a, b)
    _close(x, x_np, f32, scale=10)
    _close(resid, resid_np, f32, scale=10)
    assert int(rank) == rank_np and rank.dtype == np.int32
    _close(s, s_np, f32, scale=10)
    x1, resid1, _, _ = la.lstsq(a, b[:, 0])
    _close(x1, x_np[:, 0], f32, scale=10)
    assert resid1.shape == () and np.isclose(float(resid1), resid_np[0], rtol=1e-4)
    # A rank-deficient system: NumPy's residuals are empty, JAX's are computed.
    deficient = np.concatenate([a[:, :2], a[:, :1]], axis=1)
    x, resid, rank, _ = la.lstsq(deficient, b)
    x_np, _, rank_np, _ = np.linalg.lstsq(deficient, b)
    _close(x, x_np, f32, scale=100)
    assert int(rank) == 2 == rank_np and resid.shape == (2,)
    assert la.lstsq(deficient, b, numpy_resid=True)[1].shape == (0,)
    _close(la.lstsq(a, b, numpy_resid=True)[1], np.linalg.lstsq(a, b)[1], f32, scale=10)
    with pytest.raises(TypeError, match="concrete rank"):
        jit(lambda a, b: la.lstsq(a, b, numpy_resid=True))(a, b)
    with config.enable_x64(True):
        check_grads(lambda a, b: la.lstsq(a, b)[0], (a.astype(f64), b.astype(f64)), order=1)


@pytest.mark.parametrize("p", [None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"])
def test_cond(p):
    a = _rand((2, 3, 3), f32)
    _close(la.cond(a, p), np.linalg.cond(a, p), f32, scale=1000)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], f32)
    value = float(la.cond(singular, p))
    assert value < 1e-6 if p == -2 else (value == np.inf or value > 1e6)
    assert np.isnan(float(la.cond(np.full((2, 2), np.nan, f32), p)))


# ---------------------------------------------------------------------------
# Products and tensor functions


def test_matrix_power():
    a = np.array([[1, 1], [0, 1]], np.int32)
    for n in (0, 1, 2, 5):
        out = la.matrix_power(a, n)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), np.linalg.matrix_power(a, n))
    b = _well_conditioned((2, 3, 3), f32)
    for n in (-3, -1, 3, 4):
        _close(la.matrix_power(b, n), np.linalg.matrix_power(b, n), f32, scale=100)
    with pytest.raises(TypeError, match="exponent must be an integer"):
        la.matrix_power(b, 1.5)
    with pytest.raises(ValueError, match="square"):
        la.matrix_power(np.ones((2, 3)), 2)


def test_multi_dot_matches_numpy_and_picks_the_cheap_order():
    arrays = [_rand((10,), f32), _rand((10, 30), f32), _rand((30, 5), f32), _rand((5, 60), f32)]
    _close(la.multi_dot(arrays), np.linalg.multi_dot(arrays), f32, scale=100)
    _close(la.multi_dot(arrays[1:]), np.linalg.multi_dot(arrays[1:]), f32, scale=100)
    last = [*arrays[1:3], _rand((5,), f32)]
    _close(la.multi_dot(last), np.linalg.multi_dot(last), f32, scale=100)
    # A (10x100) B (100x5) C (5x50): (A B) C costs 7500 multiplications, A (B C) 75000.
    a, b, c = np.ones((10, 100), f32), np.ones((100, 5), f32), np.ones((5, 50), f32)
    jaxpr = make_jaxpr(la.multi_dot)([a, b, c])
    dots = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "dot_general"]
    assert len(dots) == 2 and tuple(dots[0].outvars[0].aval.shape) == (10, 5)
    with pytest.raises(ValueError, match="at least two"):
        la.multi_dot([a])
    with pytest.raises(ValueError, match="array 1 must be 2-D"):
        la.multi_dot([a, np.ones(100, f32), c])


def test_tensorinv_and_tensorsolve():
    a = _well_conditioned((6, 6), f32).reshape(6, 2, 3)
    _close(la.tensorinv(a, ind=1), np.linalg.tensorinv(a, ind=1), f32, scale=10)
    b4 = _well_conditioned((6, 6), f32).reshape(2, 3, 6)
    _close(la.tensorinv(b4, ind=2), np.linalg.tensorinv(b4, ind=2), f32, scale=10)
    rhs = _rand((2, 3), f32)
    _close(la.tensorsolve(b4, rhs), np.linalg.tensorsolve(b4, rhs), f32, scale=10)
    moved = np.moveaxis(b4, 2, 0)  # (6, 2, 3): moving axis 0 to the end restores b4
    expected = np.linalg.tensorsolve(moved, rhs, axes=(0,))
    _close(la.tensorsolve(moved, rhs, axes=(0,)), expected, f32, 10)
    with pytest.raises(ValueError, match="prod"):
        la.tensorinv(np.ones((2, 3)), ind=1)
    with pytest.raises(ValueError, match="positive"):
        la.tensorinv(a, ind=0)
    with pytest.raises(ValueError, match="b.shape"):
        la.tensorsolve(np.ones((2, 3, 4)), np.ones((2, 3)))


def test_array_api_wrappers_match_numpy_linalg():
    x = _rand((2, 3, 3), f32)
    y = _rand((2, 3, 3), f32)
    _close(la.matmul(x, y), np.linalg.matmul(x, y), f32)
    _close(la.tensordot(x, y[0], axes=1), np.linalg.tensordot(x, y[0], axes=1), f32)
    _close(la.vecdot(x, y, axis=0), np.linalg.vecdot(x, y, axis=0), f32)
    _close(la.trace(x, offset=1), np.linalg.trace(x, offset=1), f32)
    _close(la.diagonal(x, offset=-1), np.linalg.diagonal(x, offset=-1), f32)
    _close(la.matrix_transpose(x), np.linalg.matrix_transpose(x), f32)
    _close(la.cross(x, y, axis=1), np.linalg.cross(x, y, axis=1), f32)
    _close(la.outer(x[0, 0], y[0, 1]), np.linalg.outer(x[0, 0], y[0, 1]), f32)
    with pytest.raises(ValueError, match="size 3"):
        la.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="1-D"):
        la.outer(x, y)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        la.trace(np.ones(3))


# ---------------------------------------------------------------------------
# Transformations


def test_jit_matches_eager():
    a = _well_conditioned((2, 3, 3), f32)
    b = _rand((2, 3, 2), f32)

    def many(a, b):
        return {
            "solve": la.solve(a, b),
            "inv": la.inv(a),
            "det": la.det(a),
            "slogdet": la.slogdet(a),
            "eigh": la.eigh(a).eigenvalues,
            "svd": la.svdvals(a),
            "pinv": la.pinv(b),
            "norm": la.norm(a, "nuc", axis=(1, 2)),
            "qr": la.qr(a, mode="r"),
            "rank": la.matrix_rank(a),
            "cond": la.cond(a, 1),
            "power": la.matrix_power(a, 3),
        }

    eager, jitted = many(a, b), jit(many)(a, b)
    for key in eager:
        for e, j in zip(np.atleast_1d(eager[key]), np.atleast_1d(jitted[key])):
            np.testing.assert_allclose(
                np.asarray(j), np.asarray(e), rtol=1e-5, atol=1e-5, err_msg=key
            )


def test_vmap_matches_a_loop():
    a = _well_conditioned((4, 3, 3), f32)
    b = _rand((4, 3), f32)
    for fun in (
        la.det,
        la.inv,
        la.eigvalsh,
        la.svdvals,
        lambda m: la.slogdet(m).logabsdet,
        la.pinv,
    ):
        out = np.asarray(vmap(fun)(a))
        np.testing.assert_allclose(
            out, np.stack([np.asarray(fun(m)) for m in a]), rtol=1e-5, atol=1e-5
        )
    out = np.asarray(vmap(la.solve, in_axes=(0, 0))(a, b))
    np.testing.assert_allclose(
        out, np.stack([np.asarray(la.solve(m, v)) for m, v in zip(a, b)]), rtol=1e-5
    )
    out = np.asarray(vmap(la.solve, in_axes=(None, 0))(a[0], b))
    np.testing.assert_allclose(out, np.stack([np.asarray(la.solve(a[0], v)) for v in b]), rtol=1e-5)
    out = np.asarray(vmap(grad(la.det))(a))
    np.testing.assert_allclose(out, np.stack([np.asarray(grad(la.det)(m)) for m in a]), rtol=1e-4)


# ---------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "fun",
    [la.inv, la.det, la.slogdet, la.cholesky, la.eig, la.eigvals, la.eigh, la.eigvalsh],
)
def test_square_matrix_errors(fun):
    with pytest.raises(
        ValueError, match=r"square matrices of shape \(\.\.\., N, N\), got shape \(2, 3\)"
    ):
        fun(np.ones((2, 3), f32))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fun(np.ones(3, f32))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        fun([[1.0, 0.0], [0.0, 1.0]])


def test_argument_errors():
    a = np.eye(3, dtype=f32)
    with pytest.raises(ValueError, match=r"b must have shape \(3,\) or \(\.\.\., 3, M\)"):
        la.solve(a, np.ones(4, f32))
    with pytest.raises(ValueError, match="b must have shape"):
        la.solve(a, np.ones((2, 3), f32))
    with pytest.raises(ValueError, match="UPLO"):
        la.eigh(a, UPLO="X")
    with pytest.raises(ValueError, match="unsupported mode 'full'"):
        la.qr(a, mode="full")
    with pytest.raises(ValueError, match="unknown method 'cholesky'"):
        la.slogdet(a, method="cholesky")
    with pytest.raises(ValueError, match="invalid norm order 'fro' for vectors"):
        la.norm(np.ones(3), "fro")
    with pytest.raises(ValueError, match="invalid norm order 3 for matrices"):
        la.norm(a, 3)
    with pytest.raises(ValueError, match="1-D or 2-D x"):
        la.norm(np.ones((2, 2, 2)), 2)
    with pytest.raises(ValueError, match="two distinct axes"):
        la.norm(a, axis=(0, 0))
    with pytest.raises(ValueError, match="a must be 2-D"):
        la.lstsq(np.ones((2, 3, 3)), np.ones(3))
    with pytest.raises(ValueError, match="same first dimension"):
        la.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(TypeError, match="float16"):
        la.inv(np.eye(2, dtype=np.float16))
    with pytest.raises(NotImplementedError, match="subset_by_index"):
        la.svd(a, subset_by_index=(0, 1))
