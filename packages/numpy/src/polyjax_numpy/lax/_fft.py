"""Fast Fourier transforms: the `fft` primitive and `FftType`.

`fft(x, fft_type, fft_lengths)` transforms the trailing ``len(fft_lengths)``
axes of `x` (leading axes are batch axes) and lowers to ``stablehlo.fft``,
which XLA:CPU runs with its built-in DUCC library:

- ``FFT`` / ``IFFT``: complex to complex, forward or inverse (scaled by ``1/N``);
- ``RFFT``: real to complex, the last axis shrinks to ``n // 2 + 1``;
- ``IRFFT``: complex to real, the inverse of ``RFFT``; the last axis of the
  operand holds ``n // 2 + 1`` values and grows back to ``fft_lengths[-1]``.

Every type is linear over the reals. Under the pairing ``<a, b> = Re(sum(a * b))``
that polyjax's transposes use for complex values, the DFT matrix is symmetric, so
``FFT`` and ``IFFT`` are their own transposes. ``RFFT`` transposes to the real part
of a full ``FFT`` of the cotangent zero-padded to ``n``; ``IRFFT`` to
``conj(RFFT(ct))`` scaled by ``1/N``, doubled on the columns whose conjugate
partners the half spectrum leaves out.

    >>> from polyjax_numpy import lax
    >>> lax.fft(np.array([1, 2, 3, 4], np.complex64), "fft", (4,))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import config, dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax._complex import conj, real
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._elementwise import convert_element_type, mul
from polyjax_numpy.lax._shape_ops import pad

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """The kind of transform `fft` computes (numbered as XLA's `FftType`)."""

    FFT = 0
    """Forward complex-to-complex transform."""
    IFFT = 1
    """Inverse complex-to-complex transform (scaled by ``1/N``)."""
    RFFT = 2
    """Forward real-to-complex transform (the last axis becomes ``n // 2 + 1``)."""
    IRFFT = 3
    """Inverse complex-to-real transform (the last axis becomes ``fft_lengths[-1]``)."""


_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}
_REAL_OF = {v: k for k, v in _COMPLEX_OF.items()}


def _fft_type(fft_type: Any) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            pass
    raise ValueError(f"Unknown FFT type '{fft_type}'")


# ---------------------------------------------------------------------------
# Shape and dtype rule


def _fft_abstract_eval(
    x: ShapedArray, *, fft_type: FftType, fft_lengths: tuple[int, ...]
) -> ShapedArray:
    k = len(fft_lengths)
    if x.ndim < k:
        raise ValueError(
            f"FFT of an array of rank {x.ndim} over {k} axes: fft_lengths={fft_lengths} "
            "has more axes than the operand"
        )
    dtype = np.dtype(x.dtype)
    if fft_type == FftType.RFFT:
        if dtype not in _COMPLEX_OF:
            raise TypeError(f"RFFT needs a float32 or float64 operand, got {dtype.name}")
        out_dtype = _COMPLEX_OF[dtype]
    elif dtype not in _REAL_OF:
        raise TypeError(
            f"{fft_type.name} needs a complex64 or complex128 operand, got {dtype.name}"
        )
    else:
        out_dtype = _REAL_OF[dtype] if fft_type == FftType.IRFFT else dtype
    lead, trail = tuple(x.shape[: x.ndim - k]), tuple(x.shape[x.ndim - k :])
    expected = list(fft_lengths)
    if fft_type == FftType.IRFFT:
        expected[-1] = fft_lengths[-1] // 2 + 1
    if k and tuple(trail) != tuple(expected):
        raise ValueError(
            f"{fft_type.name} with fft_lengths={fft_lengths} needs trailing operand dimensions "
            f"{tuple(expected)}, got {tuple(trail)}"
        )
    out_trail = list(fft_lengths)
    if fft_type == FftType.RFFT:
        out_trail[-1] = fft_lengths[-1] // 2 + 1
    return ShapedArray((*lead, *out_trail), out_dtype, x.weak_type)


def _fft_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, *, fft_type, fft_lengths) -> list:
    (aval_out,) = ctx.avals_out
    return [
        hlo.fft(
            x,
            hlo.FftTypeAttr.get(fft_type.name),
            list(fft_lengths),
            results=[mlir.aval_to_ir_type(aval_out)],
        )
    ]


# ---------------------------------------------------------------------------
# Autodiff and vmap


def _rfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    # ct pairs with the first n//2+1 rows of the (symmetric) DFT matrix: pad it back to
    # n with zeros, apply the full transform, keep the real part (the operand is real).
    n = fft_lengths[-1]
    aval = get_aval(ct)
    padding = [(0, 0, 0)] * (aval.ndim - 1) + [(0, n - (n // 2 + 1), 0)]
    full = pad(ct, np.zeros((), aval.dtype), padding)
    return real(fft_p.bind(full, fft_type=FftType.FFT, fft_lengths=fft_lengths))


def _irfft_transpose(ct: Any, fft_lengths: tuple[int, ...]) -> Any:
    x = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    n = fft_lengths[-1]
    m = n // 2 + 1
    # Columns 1 .. (n-1)//2 stand for themselves and their conjugate partners.
    mask = np.full((m,), 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    aval = get_aval(x)
    scale = (
        (mask / math.prod(fft_lengths)).astype(aval.dtype).reshape((1,) * (aval.ndim - 1) + (m,))
    )
    return mul(conj(x), scale)


def _fft_transpose(ct: Any, x: Any, *, fft_type: FftType, fft_lengths: tuple[int, ...]) -> list:
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fft_batch(args: Sequence[Any], dims: Sequence[Any], *, fft_type, fft_lengths) -> tuple:
    (x,), (bd,) = args, dims
    x = batching.moveaxis(x, bd, 0)
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


fft_p = standard_primitive(
    "fft",
    _fft_abstract_eval,
    _fft_lowering,
    linear_transpose=_fft_transpose,
    batching=_fft_batch,
)


# ---------------------------------------------------------------------------
# Public function


def _inexact(dtype: np.dtype, complex_: bool) -> np.dtype:
    wide = dtype in (np.dtype(np.float64), np.dtype(np.complex128))
    if dtypes.issubdtype(dtype, np.integer) or dtype == np.dtype(bool):
        wide = bool(config.enable_x64.value)
    if complex_:
        return np.dtype(np.complex128 if wide else np.complex64)
    return np.dtype(np.float64 if wide else np.float32)


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """Fast Fourier transform of the trailing ``len(fft_lengths)`` axes of `x`.

    Args:
      x: the operand; leading axes beyond the transformed ones are batch axes. Real
        operands of ``FFT``/``IFFT``/``IRFFT`` are converted to complex, and integer
        operands of ``RFFT`` to floating point.
      fft_type: an `FftType` or one of ``"fft"``, ``"ifft"``, ``"rfft"``, ``"irfft"``.
      fft_lengths: the lengths of the transformed axes (for ``IRFFT``, of the output's).

    Returns:
      The transform: complex for ``FFT``/``IFFT``/``RFFT``, real for ``IRFFT``.

    Raises:
      ValueError: for a complex ``RFFT`` operand, or trailing dimensions that do not
        match `fft_lengths`.
    """
    typ = _fft_type(fft_type)
    dtype = dtypes.dtype(x, canonicalize=True)
    if typ == FftType.RFFT:
        if dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError("only real valued inputs supported for rfft")
        target = _inexact(dtype, complex_=False)
    elif dtypes.issubdtype(dtype, np.complexfloating):
        target = dtype
    else:
        target = _inexact(dtype, complex_=True)
    if target != dtype:
        x = convert_element_type(x, target)
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)
