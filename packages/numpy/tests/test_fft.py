"""`lax.fft`: values against numpy.fft, derivatives (check_grads, order 2), vmap, jit."""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core import config, make_jaxpr
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_numpy.lax import FftType

rng = np.random.default_rng(0)


def _c(shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _r(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _np_fft(x, typ, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if typ == FftType.FFT:
        return np.fft.fftn(x, axes=axes)
    if typ == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes)
    if typ == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=lengths, axes=axes)


# (type, operand shape, fft_lengths)
CASES = [
    (FftType.FFT, (8,), (8,)),
    (FftType.IFFT, (2, 3, 4), (3, 4)),
    (FftType.FFT, (2, 3, 5), (2, 3, 5)),
    (FftType.RFFT, (3, 8), (8,)),
    (FftType.RFFT, (2, 3, 7), (3, 7)),
    (FftType.IRFFT, (3, 5), (8,)),
    (FftType.IRFFT, (2, 3, 4), (3, 7)),
]


def _operand(typ, shape, dtype_r=np.float32, dtype_c=np.complex64):
    if typ == FftType.RFFT:
        return _r(shape, dtype_r)
    return _c(shape, dtype_c)


@pytest.mark.parametrize("typ,shape,lengths", CASES)
def test_values(typ, shape, lengths):
    x = _operand(typ, shape)
    if typ == FftType.IRFFT:
        # A genuine half spectrum, so that numpy and XLA agree on the parts IRFFT drops.
        axes = range(len(shape) - len(lengths), len(shape))
        x = np.fft.rfftn(_r((*shape[:-1], lengths[-1])), axes=axes).astype(np.complex64)
    out = np.asarray(lax.fft(x, typ, lengths))
    want = _np_fft(x, typ, lengths)
    assert out.dtype == (np.float32 if typ == FftType.IRFFT else np.complex64)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("typ,shape,lengths", CASES)
def test_grads(typ, shape, lengths):
    x = _operand(typ, shape)
    check_grads(lambda v: lax.fft(v, typ, lengths), (x,), order=2, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("typ,shape,lengths", CASES)
def test_vmap(typ, shape, lengths):
    xs = np.stack([_operand(typ, shape) for _ in range(3)], axis=1)  # batched at axis 1
    f = lambda v: lax.fft(v, typ, lengths)  # noqa: E731
    out = np.asarray(vmap(f, in_axes=1)(xs))
    want = np.stack([np.asarray(f(xs[:, i])) for i in range(3)])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_jit_matches_eager():
    x = _c((4, 6))
    f = lambda v: lax.fft(lax.fft(v, "fft", (4, 6)), "IFFT", (6,))  # noqa: E731
    np.testing.assert_allclose(np.asarray(jit(f)(x)), np.asarray(f(x)), rtol=1e-6, atol=1e-6)


def test_types_and_errors():
    jaxpr = make_jaxpr(lambda v: lax.fft(v, "rfft", (8,)))(_r((2, 8)))
    assert jaxpr.out_avals[0].shape == (2, 5)
    assert jaxpr.out_avals[0].dtype == np.complex64
    # a real operand of FFT is made complex first; an integer RFFT operand float
    assert lax.fft(np.ones(4, np.float32), FftType.FFT, (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.int32), FftType.RFFT, (4,)).dtype == np.complex64
    assert lax.fft(np.ones(4, np.float32), FftType.FFT, ()).dtype == np.complex64
    with pytest.raises(ValueError, match="only real valued"):
        lax.fft(_c((4,)), "rfft", (4,))
    with pytest.raises(ValueError):
        lax.fft(_c((4,)), "fft", (5,))
    with pytest.raises(ValueError):
        lax.fft(_c((5,)), "irfft", (5,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(_c((4,)), "dct", (4,))
    assert [t.value for t in FftType] == [0, 1, 2, 3]


def test_x64():
    with config.enable_x64(True):
        x = rng.standard_normal((3, 6))
        out = lax.fft(x, "rfft", (6,))
        assert out.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(out), np.fft.rfft(x), rtol=1e-12, atol=1e-12)
        check_grads(lambda v: lax.fft(v, "irfft", (6,)), (np.fft.rfft(x),), order=1)
