"""`polyjax.scipy.fft` (type-2 DCTs) against `scipy.fft`: lengths, axes, norms, dtypes,
derivatives, jit against eager, vmap against a loop, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sfft

from polyjax_core import config
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy.scipy import fft

rng = np.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]


def _close(actual, expected, tol=1e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(
        actual, expected, rtol=tol, atol=tol * max(1, np.abs(expected).max())
    )


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("length", [1, 2, 5, 8])
def test_dct_and_idct_match_scipy(norm, length):
    x = rng.standard_normal((3, length)).astype(np.float32)
    for fun in ("dct", "idct"):
        ours, theirs = getattr(fft, fun), getattr(sfft, fun)
        out = ours(x, norm=norm)
        assert out.dtype == np.float32
        _close(out, theirs(x, norm=norm))
        _close(ours(x, n=length + 2, axis=0, norm=norm), theirs(x, n=length + 2, axis=0, norm=norm))
        _close(ours(x, n=max(1, length - 1), norm=norm), theirs(x, n=max(1, length - 1), norm=norm))
    _close(fft.idct(fft.dct(x, norm=norm), norm=norm), x)


def test_multidimensional_transforms():
    x = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for norm in (None, "ortho"):
        _close(fft.dctn(x, norm=norm), sfft.dctn(x, norm=norm), 1e-4)
        _close(fft.idctn(x, norm=norm), sfft.idctn(x, norm=norm), 1e-4)
        kwargs = dict(s=(3, 7), axes=(0, 2), norm=norm)
        _close(fft.dctn(x, **kwargs), sfft.dctn(x, **kwargs), 1e-4)
        _close(fft.idctn(x, **kwargs), sfft.idctn(x, **kwargs), 1e-4)
    _close(fft.dctn(x, s=(2, 3)), sfft.dctn(x, s=(2, 3), axes=(1, 2)), 1e-4)  # the last axes


def test_dtypes():
    assert fft.dct(np.arange(4)).dtype == np.float32
    z = (rng.standard_normal((2, 6)) + 1j * rng.standard_normal((2, 6))).astype(np.complex64)
    out = fft.dct(z)
    assert out.dtype == np.complex64
    _close(out, sfft.dct(z), 1e-4)
    _close(fft.idct(z, axis=0, norm="ortho"), sfft.idct(z, axis=0, norm="ortho"), 1e-4)
    with config.enable_x64(True):
        x = rng.standard_normal(7)
        out = fft.dct(x)
        assert out.dtype == np.float64
        _close(out, sfft.dct(x), 1e-12)


def test_grads_jit_and_vmap():
    with config.enable_x64(True):
        x = rng.standard_normal((3, 5))
        check_grads(lambda v: fft.dct(v, norm="ortho"), (x,), order=2)
        check_grads(lambda v: fft.idctn(v, s=(4, 6)), (x,), order=2)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    f = lambda v: fft.idct(fft.dct(v, n=8), n=6)  # noqa: E731
    _close(jit(f)(x), f(x))
    _close(vmap(f)(x), np.stack([np.asarray(f(v)) for v in x]))


def test_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="only the type-2 DCT"):
        fft.dct(x, type=3)
    with pytest.raises(ValueError, match="norm must be"):
        fft.idct(x, norm="unitary")
    with pytest.raises(ValueError, match="invalid number of data points"):
        fft.dct(x, n=0)
    with pytest.raises(ValueError, match="repeated axes"):
        fft.dctn(x, axes=(1, 1))
    with pytest.raises(ValueError, match="s and axes"):
        fft.idctn(x, s=(2,), axes=(0, 1))
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        fft.dct([1.0, 2.0])
