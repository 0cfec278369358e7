"""The Schur-based functions and the special matrices of `polyjax.scipy.linalg`
against scipy.linalg (and the defining identities of each decomposition)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl

from polyjax_core import config
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.scipy import linalg

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)).astype(np.float32)
TOL = 5e-5


def _np(x):
    return np.asarray(x)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur_rsf2csf(dtype):
    a = (A + (1j * A.T if dtype == np.complex64 else 0)).astype(dtype)
    t, z = map(_np, linalg.schur(a))
    assert t.dtype == dtype
    np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=TOL)
    np.testing.assert_allclose(z.conj().T @ z, np.eye(4), atol=TOL)
    assert np.all(np.tril(t, -2 if dtype == np.float32 else -1) == 0)
    if dtype == np.float32:
        tc, zc = map(_np, linalg.rsf2csf(t, z))
        assert tc.dtype == np.complex64 and np.all(np.tril(tc, -1) == 0)
        np.testing.assert_allclose(zc @ tc @ zc.conj().T, a, atol=TOL)
        tc2, _ = map(_np, linalg.schur(a, output="complex"))
        np.testing.assert_allclose(
            np.sort_complex(np.diag(tc2)), np.sort_complex(np.diag(tc)), atol=TOL
        )
    # The lax primitive batches.
    ts, _ = vmap(lax_linalg.schur)(np.stack([a, 2 * a]))
    np.testing.assert_allclose(_np(ts)[1], _np(lax_linalg.schur(2 * a)[0]), atol=1e-4)
    with pytest.raises(ValueError, match="output"):
        linalg.schur(a, output="bad")


def test_hessenberg_funm_sylvester():
    h, q = map(_np, linalg.hessenberg(A, calc_q=True))
    np.testing.assert_allclose(h, sl.hessenberg(A), atol=TOL)
    np.testing.assert_allclose(q @ h @ q.T, A, atol=TOL)
    assert np.all(np.tril(_np(linalg.hessenberg(A)), -2) == 0)
    f, err = linalg.funm(A, jnp.exp, disp=False)
    np.testing.assert_allclose(_np(f), sl.expm(A), atol=1e-4)
    assert float(err) < 1e-5
    b = RNG.normal(size=(3, 3)).astype(np.float32)
    c = RNG.normal(size=(4, 3)).astype(np.float32)
    x = linalg.solve_sylvester(A, b, c)
    assert x.dtype == np.float32
    np.testing.assert_allclose(_np(x), sl.solve_sylvester(A, b, c), atol=1e-4)
    eye = np.eye(2, dtype=np.float32)
    assert np.all(np.isnan(_np(linalg.solve_sylvester(eye, -eye, eye))))
    with pytest.raises(ValueError, match="C must have shape"):
        linalg.solve_sylvester(A, b, c.T)


def test_eigh_tridiagonal_qr_multiply():
    d, e = RNG.normal(size=5), RNG.normal(size=4)
    with config.enable_x64(True):
        w, v = linalg.eigh_tridiagonal(d, e)
        ew, ev = sl.eigh_tridiagonal(d, e)
        np.testing.assert_allclose(_np(w), ew, atol=1e-12)
        np.testing.assert_allclose(np.abs(_np(v)), np.abs(ev), atol=1e-10)
        wi = linalg.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 2))
        np.testing.assert_allclose(_np(wi), ew[1:3], atol=1e-12)
        check_grads(lambda d: linalg.eigh_tridiagonal(d, e, eigvals_only=True), (d,), 1)
    with pytest.raises(NotImplementedError):
        linalg.eigh_tridiagonal(d, e, select="v", select_range=(0.0, 1.0))
    a, c = RNG.normal(size=(4, 3)), RNG.normal(size=(2, 4))
    for mode, cc in [("right", c), ("left", c.T[:3])]:
        got, r = linalg.qr_multiply(a.astype(np.float32), cc.astype(np.float32), mode=mode)
        want, wr = sl.qr_multiply(a, cc, mode=mode)
        np.testing.assert_allclose(np.abs(_np(got)), np.abs(want), atol=TOL)
        np.testing.assert_allclose(np.abs(_np(r)), np.abs(wr), atol=TOL)
    with pytest.raises(ValueError, match="not compatible"):
        linalg.qr_multiply(a, c.T)


def test_special_matrices():
    a = np.array([1.0, 2.0, 3.0, 4.5], np.float32)
    for mode in ("full", "same", "valid"):
        for n in (2, 6):
            np.testing.assert_array_equal(
                _np(linalg.convolution_matrix(a, n, mode)), sl.convolution_matrix(a, n, mode)
            )
    assert linalg.convolution_matrix(np.int32([1, 2]), 3).dtype == np.int32
    for n in (1, 3, 6):
        np.testing.assert_allclose(_np(linalg.dft(n, "sqrtn")), sl.dft(n, "sqrtn"), atol=1e-6)
        np.testing.assert_allclose(_np(linalg.helmert(n, full=True)), sl.helmert(n, True), 1e-6)
        np.testing.assert_allclose(_np(linalg.invhilbert(n)), sl.invhilbert(n), 1e-6)
        for kind in ("symmetric", "lower", "upper"):
            np.testing.assert_array_equal(_np(linalg.pascal(n, kind)), sl.pascal(n, kind))
            np.testing.assert_array_equal(_np(linalg.invpascal(n, kind)), sl.invpascal(n, kind))
        c = np.arange(1.0, n + 2, dtype=np.float32)
        np.testing.assert_array_equal(_np(linalg.fiedler_companion(c)), sl.fiedler_companion(c))
    assert linalg.pascal(3).dtype == np.float32 and linalg.dft(2).dtype == np.complex64
    np.testing.assert_array_equal(_np(linalg.hadamard(8)), sl.hadamard(8))
    np.testing.assert_array_equal(_np(linalg.fiedler(a)), sl.fiedler(a))
    np.testing.assert_array_equal(_np(linalg.leslie(a, a[:3])), sl.leslie(a, a[:3]))
    with pytest.raises(ValueError, match="power of 2"):
        linalg.hadamard(3)
    with pytest.raises(ValueError, match="positive integer"):
        linalg.convolution_matrix(a, 0)
    # Operand-built matrices trace and differentiate.
    np.testing.assert_array_equal(_np(jit(linalg.fiedler)(a)), sl.fiedler(a))
    g = grad(lambda f: jnp.sum(linalg.leslie(f, f[:3]) ** 2))(a)
    np.testing.assert_allclose(_np(g), 2 * a + np.r_[2 * a[:3], 0], 1e-6)
