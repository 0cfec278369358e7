"""polyjax.scipy.signal against scipy.signal: convolve/correlate (N-D, modes,
methods, dtypes), convolve2d/correlate2d, fftconvolve with axes, detrend.
Derivatives by check_grads, jit against eager, vmap against a loop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal as osp

from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy.scipy import signal

RNG = np.random.default_rng(0)
SHAPES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((2, 3), (4, 5)), ((4, 5, 3), (2, 2, 2))]


def _data(shape, dtype=np.float32):
    x = RNG.normal(size=shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_nd_against_scipy(shapes, fn):
    a, b = _data(shapes[0]), _data(shapes[1])
    for mode in ("full", "same", "valid"):
        if mode == "valid" and not (
            all(n >= m for n, m in zip(*shapes)) or all(m >= n for n, m in zip(*shapes))
        ):
            continue
        ref = getattr(osp, fn)(a.astype(float), b.astype(float), mode)
        for method in ("direct", "fft"):
            out = getattr(signal, fn)(a, b, mode, method=method)
            assert out.shape == ref.shape and out.dtype == np.float32, (mode, method)
            np.testing.assert_allclose(out, ref, atol=2e-5, err_msg=f"{mode} {method}")


@pytest.mark.parametrize(
    "dtype,expected", [(np.int32, np.int32), (np.bool_, np.int32), (np.complex64, np.complex64)]
)
def test_dtypes(dtype, expected):
    a = (_data((6,), dtype) if dtype == np.complex64 else RNG.integers(0, 3, 6)).astype(dtype)
    b = (_data((3,), dtype) if dtype == np.complex64 else RNG.integers(0, 3, 3)).astype(dtype)
    for fn in ("convolve", "correlate"):
        out = getattr(signal, fn)(a, b)
        assert out.dtype == expected
        # SciPy convolves bools as bools; JAX's promotion makes them integers.
        ref = getattr(osp, fn)(*(x.astype(int) if dtype == np.bool_ else x for x in (a, b)))
        np.testing.assert_allclose(out, ref.astype(expected), atol=1e-5)
    assert signal.fftconvolve(np.int32([1, 2]), np.int32([3, 4])).dtype == np.float32


@pytest.mark.parametrize("kernel_shape", [(3, 2), (2, 4), (7, 8)])
def test_2d_functions(kernel_shape):
    a, b = _data((5, 6)), _data(kernel_shape)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(
            signal.convolve2d(a, b, mode), osp.convolve2d(a, b, mode), atol=2e-5
        )
        np.testing.assert_allclose(
            signal.correlate2d(a, b, mode), osp.correlate2d(a, b, mode), atol=2e-5
        )
    with pytest.raises(NotImplementedError, match="boundary='fill'"):
        signal.convolve2d(a, b, boundary="wrap")
    with pytest.raises(NotImplementedError, match="fillvalue=0"):
        signal.correlate2d(a, b, fillvalue=1.0)
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        signal.convolve2d(a[0], b[0])


def test_fftconvolve_axes():
    a, b = _data((3, 8)), _data((1, 4))
    for mode in ("full", "same", "valid"):
        out = signal.fftconvolve(a, b, mode=mode, axes=1)
        np.testing.assert_allclose(out, osp.fftconvolve(a, b, mode=mode, axes=1), atol=2e-5)
    c = _data((3, 8)) + 1j * _data((3, 8))
    np.testing.assert_allclose(
        signal.fftconvolve(c.astype(np.complex64), b, axes=[1]),
        osp.fftconvolve(c, b, axes=[1]),
        atol=2e-5,
    )
    with pytest.raises(ValueError, match="must broadcast along axis 0"):
        signal.fftconvolve(a, _data((2, 4)), axes=1)


def test_scalars_and_errors():
    np.testing.assert_allclose(signal.convolve(2.0, 3.0), 6.0)
    with pytest.raises(ValueError, match="same dimensionality"):
        signal.convolve(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="one input must be at least as large"):
        signal.convolve(np.ones((2, 3)), np.ones((3, 2)), "valid")
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        signal.correlate(np.ones(0), np.ones(3))
    with pytest.raises(ValueError, match="mode must be one of"):
        signal.convolve(np.ones(3), np.ones(3), "bad")
    with pytest.raises(ValueError, match="method must be"):
        signal.correlate(np.ones(3), np.ones(3), method="bad")
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        signal.convolve([1.0, 2.0], np.ones(2))


def test_detrend():
    x = (np.arange(10.0) ** 2 + RNG.normal(size=10)).astype(np.float32)
    np.testing.assert_allclose(signal.detrend(x), osp.detrend(x), atol=2e-4)
    np.testing.assert_allclose(signal.detrend(x, bp=[3, 6]), osp.detrend(x, bp=[3, 6]), atol=2e-4)
    m = _data((4, 6))
    for axis in (0, 1):
        for kind in ("linear", "constant"):
            np.testing.assert_allclose(
                signal.detrend(m, axis=axis, type=kind),
                osp.detrend(m, axis=axis, type=kind),
                atol=2e-5,
            )
    assert signal.detrend(np.arange(4)).dtype == np.float32
    with pytest.raises(ValueError, match="type must be"):
        signal.detrend(x, type="quadratic")
    with pytest.raises(ValueError, match="breakpoints must be in"):
        signal.detrend(x, bp=20)


def test_grads_jit_vmap():
    a, b = _data((6,)), _data((3,))
    check_grads(
        lambda a, b: (signal.convolve(a, b, "same"), signal.fftconvolve(a, b)), (a, b), order=2
    )
    check_grads(lambda a: signal.detrend(a, bp=3), (a,), order=2)
    f = jit(lambda a, b: signal.correlate(a, b, "valid"))
    np.testing.assert_allclose(f(a, b), signal.correlate(a, b, "valid"), rtol=1e-6)
    batch = _data((4, 6))
    out = vmap(lambda x: signal.convolve(x, b))(batch)
    np.testing.assert_allclose(out, np.stack([signal.convolve(x, b) for x in batch]), rtol=1e-5)


# ---------------------------------------------------------------------------
# Spectral analysis

SIG = RNG.normal(size=(3, 50)).astype(np.float32)
SIG2 = RNG.normal(size=(3, 50)).astype(np.float32)


def _assert_all_close(ours, ref, atol=1e-5):
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r, atol=atol, rtol=1e-4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nperseg": 16},
        {"nperseg": 16, "noverlap": 4, "nfft": 20, "detrend": "linear"},
        {"nperseg": 10, "boundary": "even", "padded": False},
        {"nperseg": 8, "boundary": None, "return_onesided": False},
        {"nperseg": 8, "boundary": "odd", "window": ("tukey", 0.3)},
        {"nperseg": 8, "boundary": "constant", "window": np.hamming(8)},
    ],
)
def test_stft(kwargs):
    ours = signal.stft(SIG, **kwargs)
    ref = osp.stft(SIG.astype(float), **{"window": "hann", **kwargs})
    _assert_all_close(ours, ref)
    assert ours[2].dtype == np.complex64 and ours[0].dtype == np.float32


def test_stft_axis_and_complex():
    _assert_all_close(
        signal.stft(SIG.T, nperseg=16, axis=0), osp.stft(SIG.T, window="hann", nperseg=16, axis=0)
    )
    xc = (SIG + 1j * SIG2).astype(np.complex64)
    # Complex signals give two-sided transforms (SciPy warns and does the same).
    with pytest.warns(UserWarning, match="Input data is complex"):
        ref = osp.stft(xc, window="hann", nperseg=16)
    _assert_all_close(signal.stft(xc, nperseg=16), ref)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"nperseg": 16},
        {"nperseg": 16, "scaling": "spectrum", "average": "median"},
        {"nperseg": 10, "noverlap": 2, "nfft": 12, "detrend": "linear"},
        {"nperseg": 16, "return_onesided": False, "fs": 100.0},
        {},  # nperseg 256 is cut to the signal's length
    ],
)
def test_csd_and_welch(kwargs):
    with warnings.catch_warnings():
        # SciPy warns when it cuts nperseg to the signal's length.
        warnings.simplefilter("ignore", UserWarning)
        ref_csd = osp.csd(SIG, SIG2, window="hann", **kwargs)
        ref_welch = osp.welch(SIG, window="hann", **kwargs)
    ours = signal.csd(SIG, SIG2, **kwargs)
    assert ours[1].dtype == np.complex64
    _assert_all_close(ours, ref_csd)
    ours = signal.welch(SIG, **kwargs)
    assert ours[1].dtype == np.float32
    _assert_all_close(ours, ref_welch)


def test_istft():
    for kwargs in ({"nperseg": 16}, {"nperseg": 16, "noverlap": 12, "nfft": 32}, {"nperseg": 10}):
        _, _, z = osp.stft(SIG[0].astype(float), window="hann", **kwargs)
        ours = signal.istft(z.astype(np.complex64), **kwargs)
        _assert_all_close(ours, osp.istft(z, window="hann", **kwargs))
        # The round trip recovers the signal (the padding at the end is extra).
        _, back = signal.istft(signal.stft(SIG, **kwargs)[2], **kwargs)
        np.testing.assert_allclose(back[..., :50], SIG, atol=1e-5)
    xc = (SIG[0] + 1j * SIG2[0]).astype(np.complex64)
    _, _, z = osp.stft(xc, window="hann", nperseg=16, return_onesided=False)
    _assert_all_close(
        signal.istft(z.astype(np.complex64), nperseg=16, input_onesided=False),
        osp.istft(z, window="hann", nperseg=16, input_onesided=False),
    )


def test_spectral_errors_jit_vmap():
    with pytest.raises(ValueError, match="noverlap must be in"):
        signal.stft(SIG, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft must be at least nperseg"):
        signal.welch(SIG, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="nperseg .* must equal the length of the window"):
        signal.stft(SIG, window=np.ones(8), nperseg=16)
    with pytest.raises(ValueError, match="boundary must be one of"):
        signal.stft(SIG, boundary="bad")
    with pytest.raises(ValueError, match="scaling must be"):
        signal.csd(SIG, SIG2, scaling="bad")
    with pytest.raises(ValueError, match="Zxx has 5 frequencies"):
        signal.istft(np.ones((5, 3), np.complex64), nperseg=16)
    f = jit(lambda x: signal.welch(x, nperseg=16)[1])
    np.testing.assert_allclose(f(SIG), signal.welch(SIG, nperseg=16)[1], rtol=1e-5)
    batched = vmap(lambda x: signal.stft(x, nperseg=16)[2])(SIG)
    np.testing.assert_allclose(batched, signal.stft(SIG, nperseg=16)[2], rtol=1e-5, atol=1e-6)
