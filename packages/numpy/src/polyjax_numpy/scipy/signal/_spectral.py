"""Short-time Fourier analysis: `stft`, `istft`, `csd`, `welch`, as SciPy computes them.

A signal is cut into segments of `nperseg` samples that start every
`nperseg - noverlap` samples (a gather with a static index table), each
segment is detrended and multiplied by the window, and transformed with an
FFT of length `nfft`:

- `stft` returns the transforms, scaled by `1 / sum(window)`;
- `csd` averages `conj(X) Y` over the segments (mean, or median with SciPy's
  bias correction), scaled to a density (`1 / (fs sum(window^2))`) or a
  spectrum (`1 / sum(window)^2`), with the one-sided bins doubled; `welch` is
  `csd(x, x)`;
- `istft` inverts `stft` by overlap-adding the windowed inverse transforms and
  dividing by the overlap-added squared window.

Windows named by a string or tuple come from `scipy.signal.get_window` (a
host constant); an array is used as it is. Every size is static, so all four
functions work under `jit` and `vmap`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.signal._detrend import detrend as _detrend

__all__ = ["csd", "istft", "stft", "welch"]


def _window(name: str, window: Any, nperseg: int | None, length: int, default: int) -> Any:
    """The window as a host array, and the segment length it implies."""
    if isinstance(window, str | tuple):
        if nperseg is None:
            nperseg = default
        nperseg = min(nperseg, length) if length else nperseg
        if nperseg < 1:
            raise ValueError(f"{name}: nperseg must be a positive integer, got {nperseg}.")
        from scipy.signal import get_window

        return np.asarray(get_window(window, nperseg)), nperseg
    win = np.asarray(window)
    if win.ndim != 1:
        raise ValueError(f"{name}: window must be 1-D, got shape {win.shape}.")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError(
            f"{name}: nperseg ({nperseg}) must equal the length of the window ({win.shape[0]})."
        )
    return win, win.shape[0]


def _overlap_and_nfft(name: str, nperseg: int, noverlap: int | None, nfft: int | None):
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if not 0 <= noverlap < nperseg:
        raise ValueError(
            f"{name}: noverlap must be in [0, nperseg) = [0, {nperseg}), got {noverlap}."
        )
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"{name}: nfft must be at least nperseg ({nperseg}), got {nfft}.")
    return noverlap, nfft


def _extend(x: Any, n: int, boundary: str | None) -> Any:
    """`x` extended by `n` samples at both ends of its last axis."""
    if boundary is None or n == 0:
        return x
    if boundary == "zeros":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    if boundary == "constant":
        return jnp.concatenate(
            [jnp.repeat(x[..., :1], n, -1), x, jnp.repeat(x[..., -1:], n, -1)], -1
        )
    left = jnp.flip(x[..., 1 : n + 1], -1)
    right = jnp.flip(x[..., -n - 1 : -1], -1)
    if boundary == "odd":
        left = 2 * x[..., :1] - left
        right = 2 * x[..., -1:] - right
    return jnp.concatenate([left, x, right], -1)


def _segments(x: Any, nperseg: int, step: int) -> Any:
    """The segments of the last axis of `x`: shape `(..., n_segments, nperseg)`."""
    count = (x.shape[-1] - nperseg) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(nperseg)[None]
    return x[..., index]


def _detrend_segments(segments: Any, detrend: Any) -> Any:
    if detrend is False or detrend is None:
        return segments
    if callable(detrend):
        return detrend(segments)
    return _detrend(segments, axis=-1, type=detrend)


def _transform(segments: Any, nfft: int, onesided: bool) -> Any:
    if onesided:
        return jnp.fft.rfft(segments, n=nfft, axis=-1)
    return jnp.fft.fft(segments, n=nfft, axis=-1)


def _check_onesided(name: str, x: Any, return_onesided: bool) -> bool:
    if return_onesided and jnp.iscomplexobj(x):
        # SciPy warns and falls back to a two-sided spectrum for complex data.
        return False
    return return_onesided


def _frequencies(nfft: int, fs: float, onesided: bool) -> Any:
    freqs = np.fft.rfftfreq(nfft, 1 / fs) if onesided else np.fft.fftfreq(nfft, 1 / fs)
    return freqs


def stft(
    x: ArrayLike,
    fs: float = 1.0,
    window: Any = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
) -> tuple[Any, Any, Any]:
    """The short-time Fourier transform of `x` along `axis`.

    Args:
      x: the signal.
      fs: the sampling frequency.
      window: a window name (or `(name, parameter)` tuple) for
        `scipy.signal.get_window`, or the window itself (an array of length
        `nperseg`).
      nperseg: the segment length (at most the signal's length).
      noverlap: samples shared by consecutive segments (default `nperseg // 2`).
      nfft: the FFT length (default `nperseg`; at least `nperseg`).
      detrend: False, "constant", "linear" or a function of the segments.
      return_onesided: only the non-negative frequencies, for real `x`.
      boundary: how to extend `x` by `nperseg // 2` samples at both ends first:
        "zeros", "even", "odd", "constant" or None.
      padded: zero-pad the end so that the last segment is complete.
      axis: the time axis of `x`.

    Returns:
      `(f, t, Zxx)`: the frequencies, the segment times, and the transforms,
      with the frequency axis in place of `axis` and the segments last.

    Raises:
      ValueError: inconsistent `nperseg`, `noverlap`, `nfft` or window, or an
        unknown `boundary`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> f, t, z = signal.stft(np.ones(16), nperseg=8)
      >>> z.shape
      (5, 5)
    """
    if boundary not in (None, "zeros", "even", "odd", "constant"):
        raise ValueError(
            "stft: boundary must be one of None, 'zeros', 'even', 'odd', 'constant', "
            f"got {boundary!r}."
        )
    _u.check_arraylike("stft", x)
    (x,) = _u.promote_dtypes_inexact(jnp.asarray(x))
    x = jnp.moveaxis(x, axis, -1)
    win, nperseg = _window("stft", window, nperseg, x.shape[-1], 256)
    noverlap, nfft = _overlap_and_nfft("stft", nperseg, noverlap, nfft)
    step = nperseg - noverlap
    onesided = _check_onesided("stft", x, return_onesided)
    x = _extend(x, nperseg // 2, boundary)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)])
    segments = _detrend_segments(_segments(x, nperseg, step), detrend)
    win = jnp.asarray(win, x.real.dtype)
    z = _transform(segments * win, nfft, onesided) / jnp.sum(win)
    z = jnp.swapaxes(z, -1, -2)  # (..., frequencies, segments)
    z = jnp.moveaxis(z, -2, axis if axis >= 0 else axis - 1)
    times = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    dtype = x.real.dtype
    return jnp.asarray(_frequencies(nfft, fs, onesided), dtype), jnp.asarray(times, dtype), z


def _median_bias(n: int) -> float:
    """The bias of the median of `n` exponential variables relative to their mean."""
    k = np.arange(1, (n - 1) // 2 + 1)
    return float(1 + np.sum(1.0 / (2 * k + 1) - 1.0 / (2 * k)))


def csd(
    x: ArrayLike,
    y: ArrayLike,
    fs: float = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The cross power spectral density of `x` and `y` by Welch's method.

    Args:
      x, y: the signals (broadcast against each other).
      fs, window, nperseg, noverlap, nfft, detrend, return_onesided, axis: as
        `stft` (here `nperseg` defaults to 256, at most the signal's length,
        and `detrend` to "constant").
      scaling: "density" (V^2/Hz) or "spectrum" (V^2).
      average: "mean" or "median" (of the real and imaginary parts, with
        SciPy's bias correction).

    Returns:
      `(f, Pxy)`: the frequencies and the cross spectral density along `axis`.

    Raises:
      ValueError: an unknown `scaling` or `average`, or as `stft`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> f, p = signal.csd(np.ones(16), np.ones(16), nperseg=8, detrend=False)
      >>> p[:2]
      Array([5.3333335+0.j, 2.6666667+0.j], dtype=complex64)
    """
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"csd: scaling must be 'density' or 'spectrum', got {scaling!r}.")
    if average not in ("mean", "median"):
        raise ValueError(f"csd: average must be 'mean' or 'median', got {average!r}.")
    _u.check_arraylike("csd", x, y)
    x, y = (jnp.moveaxis(jnp.asarray(v), axis, -1) for v in _u.promote_dtypes_inexact(x, y))
    shape = jnp.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    length = max(x.shape[-1], y.shape[-1])
    if x.shape[-1] != y.shape[-1]:
        # SciPy zero-pads the shorter signal to the longer one.
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, length - x.shape[-1])])
        y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, length - y.shape[-1])])
    x = jnp.broadcast_to(x, (*shape, length))
    y = jnp.broadcast_to(y, (*shape, length))
    win, nperseg = _window("csd", window, nperseg, length, 256)
    noverlap, nfft = _overlap_and_nfft("csd", nperseg, noverlap, nfft)
    step = nperseg - noverlap
    onesided = _check_onesided("csd", x, return_onesided) and not jnp.iscomplexobj(y)
    win = jnp.asarray(win, x.real.dtype)
    transforms = [
        _transform(_detrend_segments(_segments(v, nperseg, step), detrend) * win, nfft, onesided)
        for v in (x, y)
    ]
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    else:
        scale = 1.0 / jnp.sum(win) ** 2
    pxy = jnp.conj(transforms[0]) * transforms[1] * scale
    if onesided:
        # The negative frequencies fold onto the positive ones (not DC, nor Nyquist).
        last = -1 if nfft % 2 == 0 else None
        pxy = pxy.at[..., 1:last].multiply(2)
    n_segments = pxy.shape[-2]
    if average == "median":
        if jnp.iscomplexobj(pxy):
            pxy = jnp.median(pxy.real, axis=-2) + 1j * jnp.median(pxy.imag, axis=-2)
        else:
            pxy = jnp.median(pxy, axis=-2)
        pxy = pxy / _median_bias(n_segments)
    else:
        pxy = jnp.mean(pxy, axis=-2)
    pxy = jnp.moveaxis(pxy, -1, axis)
    return jnp.asarray(_frequencies(nfft, fs, onesided), x.real.dtype), pxy


def welch(
    x: ArrayLike,
    fs: float = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
) -> tuple[Any, Any]:
    """The power spectral density of `x` by Welch's method: the real part of `csd(x, x)`.

    Arguments are those of `csd`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> f, p = signal.welch(np.ones(16), nperseg=8, detrend=False)
      >>> p[:2]
      Array([5.3333335, 2.6666667], dtype=float32)
    """
    freqs, pxx = csd(
        x, x, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average
    )
    return freqs, pxx.real


def istft(
    Zxx: ArrayLike,
    fs: float = 1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
) -> tuple[Any, Any]:
    """The inverse of `stft`, by weighted overlap-add.

    Args:
      Zxx: the transforms, with frequencies along `freq_axis` and segments
        along `time_axis`.
      fs, window, noverlap: as given to `stft`.
      nperseg: the segment length (default: from the number of frequencies).
      nfft: the FFT length (default `nperseg`).
      input_onesided: whether `Zxx` holds the non-negative frequencies only
        (then the result is real).
      boundary: whether `stft` extended the signal (its `boundary` was not
        None): the extension is removed.
      time_axis, freq_axis: the axes of `Zxx`.

    Returns:
      `(t, x)`: the sample times and the signal (its time axis where `time_axis`
      was among the other axes). `t` has the length of the signal (SciPy's has
      the length of the first axis of `x`, the same for 1-D signals).

    Raises:
      ValueError: inconsistent sizes, or equal time and frequency axes.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> _, _, z = signal.stft(np.arange(16.0), nperseg=8)
      >>> _, x = signal.istft(z, nperseg=8)
      >>> np.allclose(x, np.arange(16.0), atol=1e-5)
      True
    """
    _u.check_arraylike("istft", Zxx)
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError(f"istft: Zxx must have at least two dimensions, got shape {z.shape}.")
    time_axis = _u.canonicalize_axis(time_axis, z.ndim)
    freq_axis = _u.canonicalize_axis(freq_axis, z.ndim)
    if time_axis == freq_axis:
        raise ValueError("istft: time_axis and freq_axis must differ.")
    z = jnp.moveaxis(z, (freq_axis, time_axis), (-2, -1))
    n_freqs = z.shape[-2]
    if nperseg is None:
        nperseg = 2 * (n_freqs - 1) if input_onesided else n_freqs
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ValueError(f"istft: nfft must be at least nperseg ({nperseg}), got {nfft}.")
    expected = nfft // 2 + 1 if input_onesided else nfft
    if n_freqs != expected:
        raise ValueError(
            f"istft: Zxx has {n_freqs} frequencies along freq_axis; nfft = {nfft} "
            f"({'one' if input_onesided else 'two'}-sided) needs {expected}."
        )
    win, nperseg = _window("istft", window, nperseg, 0, 256)
    noverlap, nfft = _overlap_and_nfft("istft", nperseg, noverlap, nfft)
    step = nperseg - noverlap
    if input_onesided:
        frames = jnp.fft.irfft(jnp.swapaxes(z, -1, -2), n=nfft, axis=-1)
    else:
        frames = jnp.fft.ifft(jnp.swapaxes(z, -1, -2), n=nfft, axis=-1)
    dtype = frames.real.dtype
    win = jnp.asarray(win, dtype)
    frames = frames[..., :nperseg] * win * jnp.sum(win)
    n_segments = frames.shape[-2]
    length = nperseg + (n_segments - 1) * step
    index = (np.arange(n_segments)[:, None] * step + np.arange(nperseg)[None]).ravel()
    flat = jnp.reshape(frames, (*frames.shape[:-2], n_segments * nperseg))
    x = jnp.zeros((*frames.shape[:-2], length), frames.dtype).at[..., index].add(flat)
    norm = jnp.zeros((length,), dtype).at[index].add(jnp.tile(win * win, n_segments))
    if boundary:
        x = x[..., nperseg // 2 : length - nperseg // 2]
        norm = norm[nperseg // 2 : length - nperseg // 2]
    x = x / jnp.where(norm > 1e-10, norm, 1)
    times = jnp.arange(x.shape[-1], dtype=dtype) / fs
    if z.ndim > 2 and time_axis != z.ndim - 1:
        # The time axis goes back where the segments were (among the other axes).
        x = jnp.moveaxis(x, -1, time_axis - (1 if freq_axis < time_axis else 0))
    return times, x
