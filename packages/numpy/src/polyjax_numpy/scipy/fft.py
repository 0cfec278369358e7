"""`polyjax.scipy.fft`: SciPy's discrete cosine transforms (type 2), as ``jax.scipy.fft``.

The DCT-II of a length-``N`` signal is one FFT of the same length (Makhoul's
reordering): with ``v = [x_0, x_2, x_4, ..., x_5, x_3, x_1]`` (even samples, then
odd ones backwards), ``y_k = 2 Re(exp(-i pi k / 2N) FFT(v)_k)``. The inverse
undoes each step: ``FFT(v)_k = exp(i pi k / 2N) (y_k - i y_{N-k}) / 2`` (with
``y_N = 0``), an inverse FFT gives ``v``, and ``v`` is unshuffled. Complex input
is transformed as its real and imaginary parts (the transforms are real-linear).

Normalization, as SciPy's: "backward" (None; ``dct`` unscaled, ``idct`` divided by
``2N``), "ortho" (orthonormal: ``y_0`` scaled by ``sqrt(1/4N)``, the others by
``sqrt(1/2N)``) and "forward" (``dct`` divided by ``2N``).

Example:
  >>> from polyjax_numpy.scipy import fft
  >>> fft.dct(np.float32([1, 1, 1, 1]))
  Array([8., 0., 0., 0.], dtype=float32)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_numpy.numpy import _creation, _joining, _manipulation, _ufuncs
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy import fft as np_fft

__all__ = ["dct", "dctn", "idct", "idctn"]

_NORMS = (None, "backward", "ortho", "forward")


def _check(name: str, type: int, norm: str | None) -> None:  # noqa: A002 - SciPy's name
    if type != 2:
        raise NotImplementedError(f"{name}: only the type-2 DCT is supported, got type={type}")
    if norm not in _NORMS:
        raise ValueError(
            f'{name}: norm must be None, "backward", "ortho" or "forward", got {norm!r}'
        )


def _operand(name: str, x: Any) -> Any:
    _u.check_arraylike(name, x)
    (x,) = _u.promote_dtypes_inexact(_creation.asarray(x))
    return x


def _last_axis(x: Any, axis: int, n: int | None, name: str) -> tuple[Any, int]:
    """`x` with `axis` moved last and cropped or zero-padded to `n`."""
    axis = _u.canonicalize_axis(axis, _u.ndim(x))
    x = _manipulation.moveaxis(x, axis, -1)
    if n is not None:
        n = operator.index(n)
        if n < 1:
            raise ValueError(f"{name}: invalid number of data points ({n}) specified")
        x = np_fft._resize(x, _u.ndim(x) - 1, n)
    elif _u.shape(x)[-1] < 1:
        raise ValueError(f"{name}: invalid number of data points (0) specified")
    return x, axis


def _ortho_scale(n: int, dtype: Any) -> np.ndarray:
    scale = np.full(n, math.sqrt(1 / (2 * n)))
    scale[0] = math.sqrt(1 / (4 * n))
    return scale.astype(dtype)


def _twiddle(n: int, sign: int, dtype: Any) -> np.ndarray:
    return np.exp(sign * 1j * np.pi * np.arange(n) / (2 * n)).astype(dtype)


def _on_real_parts(fun: Any, x: Any) -> Any:
    if _u.issubdtype_of(x, np.complexfloating):
        re, im = fun(_manipulation.real(x)), fun(_manipulation.imag(x))
        return re + _u.convert(1j, _u.dtype(x)) * _u.convert(im, _u.dtype(x))
    return fun(x)


def _dct_last(x: Any) -> Any:
    n = _u.shape(x)[-1]
    order = np.concatenate([np.arange(0, n, 2), np.arange(n - 1 - n % 2, 0, -2)])
    v = _manipulation.take_axis(x, _creation.asarray(order), axis=_u.ndim(x) - 1)
    spectrum = np_fft.fft(v)
    w = _twiddle(n, -1, _u.dtype(spectrum))
    return 2 * _manipulation.real(spectrum * w)


def _idct_last(y: Any) -> Any:
    n = _u.shape(y)[-1]
    nd = _u.ndim(y)
    zero = _creation.zeros((*_u.shape(y)[:-1], 1), _u.dtype(y))
    reversed_ = _joining.concatenate([zero, _manipulation.flip(y[..., 1:], -1)], axis=-1)
    cdtype = np.result_type(_u.dtype(y), np.complex64)
    z = _u.convert(y, cdtype) - _u.convert(1j, cdtype) * _u.convert(reversed_, cdtype)
    v = _manipulation.real(np_fft.ifft(z * _twiddle(n, 1, cdtype) / 2))
    # v = [x_0, x_2, ..., x_3, x_1]: x_{2m} = v_m and x_{2m+1} = v_{n-1-m}.
    inverse = np.empty(n, np.int64)
    inverse[0::2] = np.arange((n + 1) // 2)
    inverse[1::2] = n - 1 - np.arange(n // 2)
    return _manipulation.take_axis(v, _creation.asarray(inverse), axis=nd - 1)


def dct(
    x: Any,
    type: int = 2,
    n: int | None = None,
    axis: int = -1,
    norm: str | None = None,  # noqa: A002
) -> Any:
    """The discrete cosine transform (type 2) along `axis`.

    JAX implementation of `scipy.fft.dct`: ``y_k = 2 sum_m x_m cos(pi k (2m + 1) / 2N)``
    (with "backward" normalization).

    Args:
      x: the input (made inexact; complex input is transformed part by part).
      type: the DCT type; only 2 is supported.
      n: the length: `x` is cropped or zero-padded to it along `axis`.
      axis: the axis to transform.
      norm: "backward" (None), "ortho" or "forward".

    Returns:
      The transform, of `x`'s inexact dtype.

    Raises:
      NotImplementedError: a `type` other than 2.

    Example:
      >>> from polyjax_numpy.scipy import fft
      >>> fft.dct(np.float32([1, 1, 1, 1]), norm="ortho")
      Array([2., 0., 0., 0.], dtype=float32)
    """
    _check("dct", type, norm)
    x, axis = _last_axis(_operand("dct", x), axis, n, "dct")
    out = _on_real_parts(_dct_last, x)
    size = _u.shape(out)[-1]
    if norm == "ortho":
        out = out * _ortho_scale(size, _u.dtype(_manipulation.real(out)))
    elif norm == "forward":
        out = _ufuncs.true_divide(out, float(2 * size))
    return _manipulation.moveaxis(out, -1, axis)


def idct(
    x: Any,
    type: int = 2,
    n: int | None = None,
    axis: int = -1,
    norm: str | None = None,  # noqa: A002
) -> Any:
    """The inverse of `dct` (a scaled type-3 DCT) along `axis`.

    JAX implementation of `scipy.fft.idct`; arguments as `dct`.

    Example:
      >>> from polyjax_numpy.scipy import fft
      >>> fft.idct(np.float32([8, 0, 0, 0]))
      Array([1., 1., 1., 1.], dtype=float32)
    """
    _check("idct", type, norm)
    x, axis = _last_axis(_operand("idct", x), axis, n, "idct")
    size = _u.shape(x)[-1]
    if norm == "ortho":
        x = x / _ortho_scale(size, _u.dtype(_manipulation.real(x)))
    elif norm == "forward":
        x = _ufuncs.multiply(x, float(2 * size))
    out = _on_real_parts(_idct_last, x)
    return _manipulation.moveaxis(out, -1, axis)


def _axes_and_sizes(
    name: str, x: Any, s: Sequence[int] | None, axes: Sequence[int] | None
) -> list[tuple[int, int | None]]:
    nd = _u.ndim(x)
    if axes is None:
        axes = range(nd) if s is None else range(nd - len(s), nd)
    axes = [_u.canonicalize_axis(operator.index(ax), nd) for ax in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name} does not support repeated axes, got axes {tuple(axes)}")
    if s is None:
        return [(ax, None) for ax in axes]
    if len(s) != len(axes):
        raise ValueError(f"{name}: s and axes must have the same length, got {s} and {axes}")
    return list(zip(axes, s))


def dctn(
    x: Any,
    type: int = 2,  # noqa: A002
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The multidimensional DCT (type 2): `dct` over each of `axes` (default: all, or
    the last ``len(s)``), with lengths `s`.

    JAX implementation of `scipy.fft.dctn`.

    Example:
      >>> from polyjax_numpy.scipy import fft
      >>> fft.dctn(np.ones((2, 2), np.float32))
      Array([[16.,  0.],
             [ 0.,  0.]], dtype=float32)
    """
    _check("dctn", type, norm)
    x = _operand("dctn", x)
    for ax, n in _axes_and_sizes("dctn", x, s, axes):
        x = dct(x, n=n, axis=ax, norm=norm)
    return x


def idctn(
    x: Any,
    type: int = 2,  # noqa: A002
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: str | None = None,
) -> Any:
    """The inverse of `dctn`: `idct` over each of `axes`.

    JAX implementation of `scipy.fft.idctn`.

    Example:
      >>> from polyjax_numpy.scipy import fft
      >>> fft.idctn(fft.dctn(np.ones((2, 2), np.float32)))
      Array([[1., 1.],
             [1., 1.]], dtype=float32)
    """
    _check("idctn", type, norm)
    x = _operand("idctn", x)
    for ax, n in _axes_and_sizes("idctn", x, s, axes):
        x = idct(x, n=n, axis=ax, norm=norm)
    return x
