"""`jnp.fft`: every transform against `numpy.fft` over dtypes, shapes, lengths, axes and
norms; JAX's result dtypes; derivatives (the transforms are linear, so order-2 checks
exercise their transposes); jit against eager; vmap against a loop; errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import config
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import fft

f32, f64, c64, c128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
bf16 = np.dtype(ml_dtypes.bfloat16)
rng = np.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]


def _rand(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.dtype(bool):
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _close(actual, expected, dtype=c64, scale=1.0):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected), (actual.shape, np.shape(expected))
    tol = scale * (1e-4 if np.dtype(dtype) in (f32, c64) else 1e-10)
    np.testing.assert_allclose(
        actual, expected, rtol=tol, atol=tol * max(1.0, np.abs(expected).max(initial=0))
    )


ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("norm", NORMS)
def test_one_axis_transforms_match_numpy(name, norm):
    real_input = name in ("rfft", "ihfft")
    x = _rand((3, 8), f32 if real_input else c64)
    ours, theirs = getattr(fft, name), getattr(np.fft, name)
    for n, axis in [(None, -1), (5, -1), (11, -1), (None, 0), (4, 0)]:
        out = ours(x, n=n, axis=axis, norm=norm)
        expected = theirs(x, n=n, axis=axis, norm=norm)
        assert out.dtype == (f32 if name in ("irfft", "hfft") else c64)
        _close(out, expected, scale=10)


@pytest.mark.parametrize("dtype", [f32, c64, np.int32, np.uint8, bool, bf16, np.float16])
def test_input_dtypes_follow_jax(dtype):
    x = _rand((2, 6), dtype)
    wide = x.astype(np.complex128)
    out = fft.fft(x)
    assert out.dtype == c64  # complex64 by default, whatever the input
    _close(out, np.fft.fft(wide), scale=100 if np.dtype(dtype) in (bf16, np.float16) else 1)
    if np.dtype(dtype).kind != "c":
        out = fft.rfft(x)
        assert out.dtype == c64
        _close(
            out, np.fft.rfft(wide.real), scale=100 if np.dtype(dtype) in (bf16, np.float16) else 1
        )
        assert fft.irfft(x).dtype == f32


def test_x64_dtypes():
    x = _rand((8,), f64)
    assert fft.fft(x).dtype == c64  # float64 is canonicalized without x64
    with config.enable_x64(True):
        assert fft.fft(x).dtype == c128
        assert fft.rfft(x).dtype == c128
        assert fft.irfft(x.astype(c128)).dtype == f64
        assert fft.fft(x.astype(np.float32)).dtype == c64
        assert fft.fft(np.arange(4)).dtype == c128  # integers count as the default float
        _close(fft.fftn(x.reshape(2, 4)), np.fft.fftn(x.reshape(2, 4)), c128)
        assert fft.fftfreq(4).dtype == f64


@pytest.mark.parametrize(
    "name", ["fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2"]
)
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_multi_axis_transforms_match_numpy(name, norm):
    x = _rand((2, 3, 4, 6), f32 if name.startswith("rfft") else c64)
    ours, theirs = getattr(fft, name), getattr(np.fft, name)
    two = name.endswith("2")
    cases = [dict(), dict(axes=(0, 2)), dict(s=(5, 4), axes=(-1, 1)), dict(axes=(-3, -1))]
    if not two:
        cases += [dict(s=(3, 8)), dict(axes=(0, 1, 2, 3))]  # more than XLA's three axes
    for kwargs in cases:
        out = ours(x, norm=norm, **kwargs)
        with np.errstate(all="ignore"):
            if "s" in kwargs and "axes" not in kwargs:
                kwargs = dict(kwargs, axes=tuple(range(x.ndim - len(kwargs["s"]), x.ndim)))
            expected = theirs(x, norm=norm, **kwargs)
        _close(out, expected, scale=10)


def test_round_trips():
    x = _rand((3, 5, 7), f32)
    _close(fft.irfftn(fft.rfftn(x), s=x.shape), x, f32)
    _close(fft.ifft2(fft.fft2(x)).real, x, f32)
    _close(fft.irfft(fft.rfft(x, axis=1), n=5, axis=1), x, f32)
    _close(fft.ihfft(fft.hfft(x[..., :4], n=6)), x[..., :4].astype(c64), c64)


def test_empty_batch_and_axes():
    x = np.zeros((0, 4), c64)
    assert fft.fft(x).shape == (0, 4)
    assert fft.rfft(np.zeros((0, 4), f32)).shape == (0, 3)
    x = _rand((2, 3), c64)
    _close(fft.fftn(x, axes=()), x.astype(c64))


def test_frequencies():
    for n in (1, 4, 7):
        for d in (1.0, 0.25):
            _close(fft.fftfreq(n, d), np.fft.fftfreq(n, d), f32)
            _close(fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), f32)
    assert fft.fftfreq(4).dtype == f32
    assert fft.fftfreq(4, dtype=np.float16).dtype == np.float16
    assert fft.rfftfreq(5, dtype=jnp.bfloat16).dtype == bf16
    traced = jit(lambda d: fft.fftfreq(6, d))(np.float32(0.5))  # d may be traced
    _close(traced, np.fft.fftfreq(6, 0.5), f32)
    with pytest.raises(TypeError, match="n must be an integer"):
        fft.fftfreq(4.0)
    with pytest.raises(ValueError, match="n must be positive"):
        fft.rfftfreq(0)


@pytest.mark.parametrize("axes", [None, 0, (1,), (0, 2), -1])
def test_shifts(axes):
    x = _rand((3, 4, 5), f32)
    _close(fft.fftshift(x, axes), np.fft.fftshift(x, axes), f32)
    _close(fft.ifftshift(x, axes), np.fft.ifftshift(x, axes), f32)
    _close(fft.ifftshift(fft.fftshift(x, axes), axes), x, f32)


def test_grads():
    with config.enable_x64(True):
        x = _rand((3, 6), f64)
        z = _rand((3, 6), c128)
        for fun, arg in [
            (fft.fft, z),
            (lambda v: fft.ifft(v, n=8, norm="ortho"), z),
            (fft.rfft, x),
            (lambda v: fft.irfft(v, n=7), z[:, :4]),
            (lambda v: fft.irfft(v), z[:, :4]),
            (lambda v: fft.hfft(v, norm="forward"), z),
            (fft.ihfft, x),
            (lambda v: fft.fftn(v, s=(4, 5)), z),
            (lambda v: fft.rfftn(v, norm="ortho"), x),
            (lambda v: fft.irfftn(v, s=(3, 6)), z[:, :4]),
            (lambda v: jnp.abs(fft.fft2(v)) ** 2, z),  # a non-linear function of a transform
        ]:
            check_grads(fun, (arg,), order=2)
        check_grads(lambda v: fft.fftshift(v), (x,), order=1)


def test_jit_matches_eager_and_vmap_matches_a_loop():
    x = _rand((4, 3, 8), f32)

    def transforms(v):
        return (
            fft.rfft(v),
            fft.irfft(fft.rfft(v), n=8),
            fft.fftn(v, axes=(0, 1)),
            fft.hfft(v.astype(c64), n=6, norm="ortho"),
            fft.fftshift(v),
        )

    for e, j in zip(transforms(x), jit(transforms)(x)):
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-5, atol=1e-5)
    for out, expected in zip(vmap(transforms)(x), zip(*[transforms(v) for v in x])):
        np.testing.assert_allclose(
            np.asarray(out), np.stack([np.asarray(e) for e in expected]), rtol=1e-5, atol=1e-5
        )


def test_errors():
    x = _rand((4, 4), c64)
    with pytest.raises(ValueError, match="Invalid norm value 'unitary'"):
        fft.fft(x, norm="unitary")
    with pytest.raises(ValueError, match="repeated axes"):
        fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match=r"invalid number of FFT data points \(0\)"):
        fft.fft(x, n=0)
    with pytest.raises(ValueError, match=r"invalid number of FFT data points \(0\)"):
        fft.irfft(x[:, :1])  # the default length 2 * (1 - 1) is 0
    with pytest.raises(ValueError, match="s and axes must have the same length"):
        fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="only real valued inputs"):
        fft.rfft(x)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        fft.fft([1.0, 2.0])
    with pytest.raises(TypeError, match="s must be a sequence of integers"):
        fft.fftn(x, s=(2.5, 2))
    with pytest.raises(ValueError, match="out of bounds|axis"):
        fft.fft(x, axis=2)
