"""The rarer `polyjax.scipy.special` functions against scipy.special.

Oracles: SciPy in float64 for values (our float32 results within a few ulps
times the conditioning; float64 ones under x64 to near machine precision where
the algorithm reaches it), `check_grads` for derivatives.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as osp

from polyjax_core import config
from polyjax_interpreters.ad import grad
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy import special

F32 = np.float32


def _close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(
        np.asarray(actual, np.float64 if np.isrealobj(actual) else None),
        expected,
        rtol=rtol,
        atol=atol,
    )


X = np.array([-3.0, -0.7, 0.0, 0.4, 1.0, 2.5, 6.0, 30.0])


@pytest.mark.parametrize("x64", [False, True])
def test_wofz_dawsn_fresnel(x64):
    z = np.array([1 + 1j, -1 - 2j, 3.0, 0.5j, 10 + 0.1j, -3 + 2j, 1e3 + 1j])
    tol = 1e-13 if x64 else 2e-6
    with config.enable_x64(x64):
        zin = z if x64 else z.astype(np.complex64)
        xin = X if x64 else X.astype(F32)
        w = special.wofz(zin)
        assert w.dtype == (np.complex128 if x64 else np.complex64)
        _close(w, osp.wofz(z), tol)
        _close(special.dawsn(xin), osp.dawsn(X), tol, 1e-7 if not x64 else 0)
        s, c = special.fresnel(xin)
        es, ec = osp.fresnel(X)
        _close(s, es, tol, tol)
        _close(c, ec, tol, tol)
    assert special.wofz(F32(1.0)).dtype == np.complex64  # real input, complex output


def test_sici_spence():
    x = np.array([-10.0, -1.0, 0.5, 2.0, 3.9, 4.1, 10.0, 100.0])
    si, ci = special.sici(x.astype(F32))
    esi, eci = osp.sici(x)
    _close(si, esi, 2e-6)
    _close(ci, eci, 5e-6, 1e-7)
    si0, ci0 = special.sici(F32(0.0))
    assert float(si0) == 0 and float(ci0) == -np.inf
    y = np.array([-1.0, 0.0, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 10.0, 100.0])
    with config.enable_x64(True):
        _close(special.spence(y), osp.spence(y), 1e-14, 1e-15)
    _close(special.spence(y.astype(F32)), osp.spence(y), 2e-6, 1e-7)


def test_owens_t_boxcox_comb():
    h = np.array([-1.0, 0.0, 0.5, 2.0, 5.0])[:, None]
    a = np.array([-2.0, 0.0, 0.3, 1.0, 1.5, 10.0])
    with config.enable_x64(True):
        _close(special.owens_t(h, a), osp.owens_t(h, a), 1e-12, 1e-15)
    x = np.array([0.5, 2.0, 10.0])[:, None]
    lam = np.array([-1.0, 0.0, 1e-6, 0.5, 2.0])
    _close(special.boxcox(x.astype(F32), lam.astype(F32)), osp.boxcox(x, lam), 2e-6)
    _close(special.boxcox1p(x.astype(F32), lam.astype(F32)), osp.boxcox1p(x, lam), 2e-6)
    assert float(special.boxcox1p(F32(1e-8), F32(0.5))) == pytest.approx(1e-8, rel=1e-6)
    n = np.array([5.0, 5.5, 2.0, -1.0, 30.0])
    _close(special.comb(n.astype(F32), F32(2.0)), osp.comb(n, 2.0), 2e-6)
    _close(special.comb(F32(5), F32(2), repetition=True), 15.0, 2e-6)
    assert special.comb(5, 2).dtype == np.float32


def test_hypergeometric():
    with config.enable_x64(True):
        x = np.array([-30.0, -5.0, -1.0, 0.0, 0.5, 2.0, 10.0, 50.0])
        for a, b in [(1.0, 2.0), (0.3, 1.7), (-1.5, 2.5)]:
            _close(special.hyp1f1(a, b, x), osp.hyp1f1(a, b, x), 1e-13)
        x = np.array([-5.0, -0.5, 0.0, 0.3, 0.6, 0.9, 0.99, 1.0])
        for a, b, c in [(0.3, 1.7, 2.2), (-1.5, 2.5, 1.3), (2.5, 1.2, 4.1)]:
            _close(special.hyp2f1(a, b, c, x), osp.hyp2f1(a, b, c, x), 1e-12)
        assert np.isnan(float(special.hyp2f1(1.0, 1.0, 1.0, 1.5)))


def test_bessel_jn_sph_harm_y():
    z = np.array([-3.0, 0.0, 1e-3, 0.5, 2.0, 10.0, 20.0])
    j = special.bessel_jn(z.astype(F32), v=4)
    assert j.shape == (5, 7)
    _close(j, osp.jv(np.arange(5)[:, None], z), 0, 2e-6)
    with pytest.raises(ValueError, match="v >= 0"):
        special.bessel_jn(z, v=-1)
    n = np.array([0, 1, 2, 2, 3, 3, 5, 5, 2])
    m = np.array([0, 1, 1, -1, -2, 3, -4, 2, 3])
    th, ph = np.linspace(0.1, 3.0, 9), np.linspace(-1.0, 4.0, 9)
    y = special.sph_harm_y(n, m, th.astype(F32), ph.astype(F32))
    assert y.dtype == np.complex64
    _close(y, osp.sph_harm_y(n, m, th, ph), 0, 2e-6)
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(n, m, th, ph, diff_n=1)
    f = jit(lambda t: special.sph_harm_y(n, m, t, ph, n_max=5))
    _close(f(th.astype(F32)), osp.sph_harm_y(n, m, th, ph), 0, 2e-6)


GRADS = {
    "dawsn": (lambda x: special.dawsn(x), (0.7,)),
    "fresnel": (lambda x: special.fresnel(x)[0] + 2 * special.fresnel(x)[1], (0.8,)),
    "sici": (lambda x: special.sici(x)[0] + special.sici(x)[1], (1.3,)),
    "sici_large": (lambda x: special.sici(x)[0] - special.sici(x)[1], (6.0,)),
    "spence": (special.spence, (1.7,)),
    "boxcox": (special.boxcox, (2.0, 0.5)),
    "wofz": (lambda x: jnp.real(special.wofz(x * (1 + 0.5j))), (0.9,)),
    "bessel_jn": (lambda x: special.bessel_jn(x, v=2)[2], (1.5,)),
}


# Reverse mode through the long summation loops costs seconds of compilation; their
# forward derivatives check the same rules.
REV = {"dawsn", "fresnel", "sici", "spence", "wofz", "boxcox"}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(name):
    f, args = GRADS[name]
    modes = ("fwd", "rev") if name in REV else ("fwd",)
    with config.enable_x64(True):
        # jit: one compilation per derivative instead of many small eager ones.
        check_grads(jit(f), tuple(np.float64(a) for a in args), order=1, modes=modes)


def test_derivative_identities():
    """Derivatives of the series- and quadrature-based functions against closed forms
    (one compilation each, where `check_grads` would take several)."""
    a, b, c, x = 0.7, 1.2, 2.1, 0.4
    with config.enable_x64(True):
        d2f1 = jit(grad(special.hyp2f1, argnums=3))(a, b, c, x)
        assert float(d2f1) == pytest.approx(
            a * b / c * osp.hyp2f1(a + 1, b + 1, c + 1, x), rel=1e-10
        )
        d1f1 = jit(grad(special.hyp1f1, argnums=2))(a, 1.9, -0.6)
        assert float(d1f1) == pytest.approx(a / 1.9 * osp.hyp1f1(a + 1, 2.9, -0.6), rel=1e-10)
        h, s = 0.6, 1.7
        dh, da = jit(grad(special.owens_t, argnums=(0, 1)))(h, s)
        want_da = np.exp(-h * h * (1 + s * s) / 2) / (2 * np.pi * (1 + s * s))
        want_dh = -np.exp(-h * h / 2) / np.sqrt(2 * np.pi) * osp.erf(s * h / np.sqrt(2)) / 2
        assert (float(dh), float(da)) == pytest.approx((want_dh, want_da), rel=1e-10)
        dn = jit(grad(special.comb))(5.5, 2.0)
        want = osp.comb(5.5, 2.0) * (osp.digamma(6.5) - osp.digamma(4.5))
        assert float(dn) == pytest.approx(want, rel=1e-10)


def test_transforms():
    x = np.array([0.5, 1.5, 2.5], F32)
    _close(vmap(special.dawsn)(x), osp.dawsn(x.astype(float)), 2e-6)
    _close(jit(special.spence)(x), osp.spence(x.astype(float)), 2e-6)
    # spence's derivative is log(x) / (1 - x), -1 at x = 1.
    assert float(grad(special.spence)(F32(1.0))) == pytest.approx(-1.0)
