"""`polyjax.numpy.fft`: NumPy's discrete Fourier transforms with JAX's semantics.

Every transform is `lax.fft` (``stablehlo.fft``) over the requested axes, which
are moved to the end for it and back after. XLA transforms at most three axes
at a time, so more axes are done in groups of three (the real-to-complex axis,
the last one, in the group that `lax.fft`'s ``RFFT``/``IRFFT`` handles).

Dtypes (JAX's rules): complex transforms return complex64, or complex128 for
64-bit input under ``jax_enable_x64``; bools and integers count as float32 (or
float64 with x64). `rfft` refuses complex input; `irfft`/`hfft` return reals.

Sizes: `n` / `s` crop or zero-pad each transformed axis before the transform
(for `irfft`, the output length; its input axis is cropped or padded to
``n // 2 + 1``). `norm`: ``"backward"`` (None: forward unscaled, inverse
``1/N``), ``"ortho"`` (both ``1/sqrt(N)``) or ``"forward"`` (forward ``1/N``).

Example:
  >>> import polyjax.numpy as jnp
  >>> jnp.fft.fft(jnp.array([1.0, 2.0, 3.0, 4.0]))
  Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.lax import _fft
from polyjax_numpy.lax import _shape_ops as lax_shape
from polyjax_numpy.lax._fft import FftType
from polyjax_numpy.numpy import _creation, _manipulation, _ufuncs
from polyjax_numpy.numpy import _util as _u

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = (None, "backward", "ortho", "forward")
_INVERSE = (FftType.IFFT, FftType.IRFFT)


def _check_norm(norm: str | None) -> None:
    if norm not in _NORMS:
        raise ValueError(
            f'Invalid norm value {norm!r}; should be None, "backward", "ortho" or "forward".'
        )


def _swap_direction(norm: str | None) -> str:
    """The norm that makes an inverse transform act like the matching forward one."""
    _check_norm(norm)
    return {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}[norm]


def _resize(x: Any, axis: int, n: int) -> Any:
    """`x` cropped or zero-padded at the end of `axis` to length `n`."""
    size = _u.shape(x)[axis]
    if size == n:
        return x
    if size > n:
        return lax_shape.slice_in_dim(x, 0, n, axis=axis)
    config_ = [(0, 0, 0)] * _u.ndim(x)
    config_[axis] = (0, n - size, 0)
    return lax_shape.pad(x, np.zeros((), _u.dtype(x)), config_)


def _transform_group(x: Any, fft_type: FftType, axes: Sequence[int], lengths: Sequence[int]) -> Any:
    """`lax.fft` over `axes` (at most three), moved to the end and back."""
    nd = _u.ndim(x)
    trailing = tuple(range(nd - len(axes), nd))
    x = _manipulation.moveaxis(x, axes, trailing)
    x = _fft.fft(x, fft_type, lengths)
    return _manipulation.moveaxis(x, trailing, axes)


def _transform(x: Any, fft_type: FftType, axes: list[int], lengths: list[int]) -> Any:
    # Groups of three axes, the last group ending with the last axis: RFFT turns it
    # complex first, IRFFT turns it real last, and the other groups are complex.
    groups = [slice(max(0, stop - 3), stop) for stop in range(len(axes), 0, -3)]
    if fft_type == FftType.IRFFT:
        groups.reverse()
    for g in groups:
        typ = fft_type
        if g.stop != len(axes):  # not the group with the real axis
            typ = {FftType.RFFT: FftType.FFT, FftType.IRFFT: FftType.IFFT}.get(typ, typ)
        x = _transform_group(x, typ, axes[g], lengths[g])
    return x


def _fft_nd(
    name: str,
    fft_type: FftType,
    a: Any,
    s: Sequence[int] | None,
    axes: Sequence[int] | None,
    norm: str | None,
) -> Any:
    _u.check_arraylike(name, a)
    _check_norm(norm)
    a = _creation.asarray(a)
    nd = _u.ndim(a)
    if s is not None:
        try:
            s = [operator.index(n) for n in s]
        except TypeError:
            raise TypeError(f"{name}: s must be a sequence of integers, got {s!r}") from None
    if axes is None:
        axes = list(range(nd)) if s is None else list(range(nd - len(s), nd))
    else:
        axes = [_u.canonicalize_axis(operator.index(ax), nd) for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name} does not support repeated axes, got axes {tuple(axes)}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {s} and {axes}")
    if s is None:
        s = [_u.shape(a)[ax] for ax in axes]
        if fft_type == FftType.IRFFT and axes:
            s[-1] = 2 * (s[-1] - 1)
    for n in s:
        if n < 1:
            raise ValueError(f"{name}: invalid number of FFT data points ({n}) specified")
    in_sizes = list(s)
    if fft_type == FftType.IRFFT and axes:
        in_sizes[-1] = s[-1] // 2 + 1
    for ax, n in zip(axes, in_sizes):
        a = _resize(a, ax, n)
    out = _transform(a, fft_type, axes, s) if axes else _fft.fft(a, fft_type, ())
    return _normalize(out, fft_type, math.prod(s), norm)


def _normalize(x: Any, fft_type: FftType, n: int, norm: str | None) -> Any:
    if norm in (None, "backward"):
        return x  # lax's inverse transforms already divide by N
    inverse = fft_type in _INVERSE
    if norm == "ortho":
        factor = math.sqrt(n) if inverse else 1 / math.sqrt(n)
    else:  # "forward"
        factor = n if inverse else 1 / n
    return _ufuncs.multiply(x, float(factor))


def _one_axis(n: int | None, axis: int) -> tuple[list[int] | None, list[int]]:
    return (None if n is None else [n]), [axis]


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along `axis`.

    JAX implementation of `numpy.fft.fft`.

    Args:
      a: the input (real input is made complex).
      n: the transform length: `a` is cropped or zero-padded to it (default: its size).
      axis: the axis to transform.
      norm: ``"backward"`` (default), ``"ortho"`` or ``"forward"``.

    Returns:
      A complex array; `axis` has length `n`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.fft(jnp.array([1.0, 1.0, 1.0, 1.0]))
      Array([4.+0.j, 0.+0.j, 0.+0.j, 0.+0.j], dtype=complex64)
    """
    return _fft_nd("fft", FftType.FFT, a, *_one_axis(n, axis), norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional inverse discrete Fourier transform (see `fft`).

    JAX implementation of `numpy.fft.ifft`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.ifft(jnp.array([4.0, 0.0, 0.0, 0.0]))
      Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    return _fft_nd("ifft", FftType.IFFT, a, *_one_axis(n, axis), norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The discrete Fourier transform of real input: the ``n // 2 + 1`` non-negative
    frequencies.

    JAX implementation of `numpy.fft.rfft`.

    Raises:
      ValueError: complex `a`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.rfft(jnp.array([1.0, 2.0, 3.0, 4.0]))
      Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    return _fft_nd("rfft", FftType.RFFT, a, *_one_axis(n, axis), norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of `rfft`: real output of length `n` (default ``2 * (m - 1)``).

    JAX implementation of `numpy.fft.irfft`; the input is cropped or zero-padded to
    ``n // 2 + 1`` frequencies.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.irfft(jnp.array([10.0, -2.0 + 2.0j, -2.0]))
      Array([1., 2., 3., 4.], dtype=float32)
    """
    return _fft_nd("irfft", FftType.IRFFT, a, *_one_axis(n, axis), norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The transform of a signal with Hermitian symmetry, given by its first half.

    JAX implementation of `numpy.fft.hfft`: ``irfft(conj(a), n)`` with the inverse's
    scaling swapped (so ``"backward"`` leaves it unscaled). The output is real, of
    length `n` (default ``2 * (m - 1)``).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.hfft(jnp.array([1.0, 0.0, 0.0]))
      Array([1., 1., 1., 1.], dtype=float32)
    """
    _u.check_arraylike("hfft", a)
    conj = _manipulation.conj(_creation.asarray(a))
    return _fft_nd("hfft", FftType.IRFFT, conj, *_one_axis(n, axis), _swap_direction(norm))


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of `hfft`: ``conj(rfft(a, n))`` with the forward scaling swapped.

    JAX implementation of `numpy.fft.ihfft`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.ihfft(jnp.array([1.0, 1.0, 1.0, 1.0]))
      Array([1.-0.j, 0.-0.j, 0.-0.j], dtype=complex64)
    """
    out = _fft_nd("ihfft", FftType.RFFT, a, *_one_axis(n, axis), _swap_direction(norm))
    return _manipulation.conj(out)


def fftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-dimensional discrete Fourier transform over `axes`.

    JAX implementation of `numpy.fft.fftn`.

    Args:
      a: the input.
      s: the lengths of the transformed axes (crop or zero-pad).
      axes: the axes; default: the last ``len(s)``, or all of them.
      norm: ``"backward"`` (default), ``"ortho"`` or ``"forward"``.

    Raises:
      ValueError: repeated axes, or `s` and `axes` of different lengths.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.fftn(jnp.ones((2, 2)))
      Array([[4.+0.j, 0.+0.j],
             [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _fft_nd("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-dimensional inverse discrete Fourier transform (see `fftn`).

    JAX implementation of `numpy.fft.ifftn`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.ifftn(jnp.array([[4.0, 0.0], [0.0, 0.0]])).real
      Array([[1., 1.],
             [1., 1.]], dtype=float32)
    """
    return _fft_nd("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The N-dimensional transform of real input; the last axis keeps ``s[-1] // 2 + 1``.

    JAX implementation of `numpy.fft.rfftn`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.rfftn(jnp.ones((2, 4))).shape
      (2, 3)
    """
    return _fft_nd("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(
    a: Any,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The inverse of `rfftn` (real output; the last axis has length ``s[-1]``,
    default ``2 * (m - 1)``).

    JAX implementation of `numpy.fft.irfftn`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.irfftn(jnp.fft.rfftn(jnp.ones((2, 4)))).shape
      (2, 4)
    """
    return _fft_nd("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The two-dimensional discrete Fourier transform (`fftn` over `axes`).

    JAX implementation of `numpy.fft.fft2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.fft2(jnp.ones((3, 2, 2)))[0]
      Array([[4.+0.j, 0.+0.j],
             [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _fft_nd("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The two-dimensional inverse discrete Fourier transform (`ifftn` over `axes`).

    JAX implementation of `numpy.fft.ifft2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.ifft2(jnp.array([[4.0, 0.0], [0.0, 0.0]])).real
      Array([[1., 1.],
             [1., 1.]], dtype=float32)
    """
    return _fft_nd("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The two-dimensional transform of real input (`rfftn` over `axes`).

    JAX implementation of `numpy.fft.rfft2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.rfft2(jnp.ones((2, 4))).shape
      (2, 3)
    """
    return _fft_nd("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(
    a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None
) -> Any:
    """The inverse of `rfft2` (`irfftn` over `axes`).

    JAX implementation of `numpy.fft.irfft2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.irfft2(jnp.fft.rfft2(jnp.ones((2, 4)))).shape
      (2, 4)
    """
    return _fft_nd("irfft2", FftType.IRFFT, a, s, axes, norm)


def _frequency_grid(n: int, d: Any, dtype: Any, device: Any, ks: np.ndarray) -> Any:
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    k = _creation.asarray(ks, dtype=dtype, device=device)
    return _ufuncs.true_divide(k, _ufuncs.multiply(d, n))


def _length(name: str, n: Any) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{name}: n must be an integer, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{name}: n must be positive, got {n}")
    return n


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an `n`-point transform with sample spacing `d`.

    JAX implementation of `numpy.fft.fftfreq`: ``[0, 1, ..., -2, -1] / (d * n)``,
    the non-negative frequencies first.

    Args:
      n: the transform length (a positive int).
      d: the sample spacing (may be traced).
      dtype: the result dtype (default: the default float dtype).
      device: where to put the result.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.fftfreq(4)
      Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    n = _length("fftfreq", n)
    ks = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequency_grid(n, d, dtype, device, ks)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of `rfft`: ``[0, 1, ..., n // 2] / (d * n)``.

    JAX implementation of `numpy.fft.rfftfreq` (arguments as `fftfreq`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.rfftfreq(4)
      Array([0.  , 0.25, 0.5 ], dtype=float32)
    """
    n = _length("rfftfreq", n)
    return _frequency_grid(n, d, dtype, device, np.arange(0, n // 2 + 1))


def _shift(name: str, x: Any, axes: Any, sign: int) -> Any:
    _u.check_arraylike(name, x)
    x = _creation.asarray(x)
    nd = _u.ndim(x)
    if axes is None:
        axes = tuple(range(nd))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(_u.canonicalize_axis(ax, nd) for ax in axes)
    if not axes:
        return x
    shifts = tuple(sign * (_u.shape(x)[ax] // 2) for ax in axes)
    return _manipulation.roll(x, shifts, axes)


def fftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """Moves the zero frequency to the middle: rolls each of `axes` (default: all) by
    ``n // 2``.

    JAX implementation of `numpy.fft.fftshift`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.fftshift(jnp.fft.fftfreq(4))
      Array([-0.5 , -0.25,  0.  ,  0.25], dtype=float32)
    """
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: int | Sequence[int] | None = None) -> Any:
    """The inverse of `fftshift`: rolls each of `axes` by ``-(n // 2)``.

    JAX implementation of `numpy.fft.ifftshift`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fft.ifftshift(jnp.array([-0.5, -0.25, 0.0, 0.25]))
      Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    return _shift("ifftshift", x, axes, -1)
