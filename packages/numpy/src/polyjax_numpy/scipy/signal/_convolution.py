"""N-dimensional convolution and correlation, as `scipy.signal`'s.

`convolve` is one `lax.conv_general_dilated` of `in1` with the flipped `in2`
as a single-channel kernel (XLA's convolution is a correlation); `correlate`
is `convolve` with the flipped, conjugated `in2`, as SciPy defines it. The
padding chooses the output:

- "full": every overlap, `n + m - 1` along each axis;
- "same": the size of `in1`, centred on the full output (starting at `(m - 1) // 2`);
- "valid": complete overlaps only, `|n - m| + 1`: one input must be at least
  as large as the other along every axis (they are swapped if `in2` is).

`fftconvolve` multiplies the inputs' discrete Fourier transforms, zero-padded
to the full size, along the chosen axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import _convolution
from polyjax_numpy.numpy import _util as _u

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]

_MODES = ("full", "same", "valid")


def _check_mode(name: str, mode: str) -> None:
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}.")


def _operands(name: str, in1: Any, in2: Any) -> tuple[Any, Any]:
    _u.check_arraylike(name, in1, in2)
    in1, in2 = (jnp.asarray(x) for x in _u.promote_dtypes_numeric(in1, in2))
    if in1.ndim != in2.ndim:
        raise ValueError(
            f"{name}: in1 and in2 should have the same dimensionality, got shapes {in1.shape} "
            f"and {in2.shape}."
        )
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {in1.shape} and {in2.shape}.")
    return in1, in2


def _valid_order(name: str, in1: Any, in2: Any) -> tuple[Any, Any]:
    """`(in1, in2)`, swapped if `in2` is the larger, for "valid" mode."""
    if all(n >= m for n, m in zip(in1.shape, in2.shape)):
        return in1, in2
    if all(m >= n for n, m in zip(in1.shape, in2.shape)):
        return in2, in1
    raise ValueError(
        f"{name}: for 'valid' mode, one input must be at least as large as the other in every "
        f"dimension, got shapes {in1.shape} and {in2.shape}."
    )


def _output_window(
    mode: str, shape1: Sequence[int], shape2: Sequence[int], late_centre: bool = False
) -> list:
    """The `(start, size)` of the output in the coordinates of the full convolution.

    "same" starts at `(m - 1) // 2`, or at `m // 2` with `late_centre` (SciPy's
    `correlate2d`, which centres an even kernel one sample later than `correlate`).
    """
    if mode == "full":
        return [(0, n + m - 1) for n, m in zip(shape1, shape2)]
    if mode == "same":
        return [((m // 2 if late_centre else (m - 1) // 2), n) for n, m in zip(shape1, shape2)]
    return [(m - 1, n - m + 1) for n, m in zip(shape1, shape2)]


def _convolve_direct(
    name: str, in1: Any, in2: Any, mode: str, precision: Any, late_centre: bool = False
) -> Any:
    if mode == "valid":
        in1, in2 = _valid_order(name, in1, in2)
    if in1.ndim == 0:
        return in1 * in2
    window = _output_window(mode, in1.shape, in2.shape, late_centre)
    # Full output index i needs padding m - 1 on the left; a window [start, start + size)
    # of it needs padding m - 1 - start on the left and the rest on the right.
    padding = [
        (m - 1 - start, start + size - n)
        for (start, size), n, m in zip(window, in1.shape, in2.shape)
    ]
    kernel = jnp.flip(in2)
    out = _convolution.conv_general_dilated(
        in1[None, None], kernel[None, None], (1,) * in1.ndim, padding, precision=precision
    )
    return out[0, 0]


def convolve(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The N-dimensional convolution of `in1` and `in2`.

    Args:
      in1, in2: non-empty arrays of one rank (bools are promoted to integers;
        integers stay integers, as in SciPy).
      mode: "full", "same" or "valid" (see the module docstring).
      method: "auto" or "direct" (a lax convolution), or "fft" (`fftconvolve`).
      precision: the `lax` precision of the convolution.

    Returns:
      The convolution, of the common dtype of the inputs.

    Raises:
      ValueError: inputs of different ranks or empty, an unknown `mode` or
        `method`, or "valid" shapes where neither input contains the other.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
      Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    _check_mode("convolve", mode)
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"convolve: method must be 'auto', 'direct' or 'fft', got {method!r}.")
    in1, in2 = _operands("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_direct("convolve", in1, in2, mode, precision)


def _reverse_and_conj(x: Any) -> Any:
    x = jnp.flip(x)
    return jnp.conj(x) if jnp.iscomplexobj(x) else x


def correlate(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", method: str = "auto", precision: Any = None
) -> Any:
    """The N-dimensional cross-correlation of `in1` and `in2`.

    `z[k] = sum_l in1[l] conj(in2[l - k + K])`: the convolution of `in1` with
    `in2` flipped along every axis and conjugated. Arguments are those of
    `convolve`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> signal.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
      Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    _check_mode("correlate", mode)
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"correlate: method must be 'auto', 'direct' or 'fft', got {method!r}.")
    in1, in2 = _operands("correlate", in1, in2)
    if method == "fft":
        return fftconvolve(in1, _reverse_and_conj(in2), mode=mode)
    return _convolve_direct("correlate", in1, _reverse_and_conj(in2), mode, precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}: only boundary='fill' with fillvalue=0 is supported.")
    if _u.ndim(in1) != 2 or _u.ndim(in2) != 2:
        raise ValueError(
            f"{name}() only supports 2-dimensional inputs, got shapes {_u.shape(in1)} and "
            f"{_u.shape(in2)}."
        )


def convolve2d(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """The convolution of two 2-D arrays (`convolve` restricted to rank 2).

    Args:
      in1, in2: 2-D arrays.
      mode: "full", "same" or "valid".
      boundary: only "fill" (zero padding) is supported, as in JAX.
      fillvalue: only 0 is supported.
      precision: the `lax` precision of the convolution.

    Raises:
      NotImplementedError: another boundary or fill value.
      ValueError: inputs that are not 2-D (and the errors of `convolve`).
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return convolve(in1, in2, mode=mode, precision=precision)


def correlate2d(
    in1: ArrayLike,
    in2: ArrayLike,
    mode: str = "full",
    boundary: str = "fill",
    fillvalue: Any = 0,
    precision: Any = None,
) -> Any:
    """The cross-correlation of two 2-D arrays.

    `correlate` restricted to rank 2, except that "same" centres an even-sized
    `in2` one sample later, as SciPy's `correlate2d` does. Arguments are those
    of `convolve2d`.
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    _check_mode("correlate2d", mode)
    in1, in2 = _operands("correlate2d", in1, in2)
    kernel = _reverse_and_conj(in2)
    return _convolve_direct("correlate2d", in1, kernel, mode, precision, late_centre=True)


def fftconvolve(
    in1: ArrayLike, in2: ArrayLike, mode: str = "full", axes: int | Sequence[int] | None = None
) -> Any:
    """Convolution through the fast Fourier transform, along `axes` (all by default).

    Along the other axes the inputs broadcast (sizes equal or 1), as in SciPy.
    Results are inexact (the transform's dtype).

    Args:
      in1, in2: non-empty arrays of one rank.
      mode: "full", "same" or "valid", along `axes`.
      axes: the axes to convolve along.

    Raises:
      ValueError: as `convolve`, or axes along which the inputs do not broadcast.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import signal
      >>> signal.fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).round(5)
      Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    _check_mode("fftconvolve", mode)
    in1, in2 = _operands("fftconvolve", in1, in2)
    (in1, in2) = (jnp.asarray(x) for x in _u.promote_dtypes_inexact(in1, in2))
    if in1.ndim == 0:
        return in1 * in2
    axes = _u.reduction_axes(axes, in1.ndim)
    for ax in range(in1.ndim):
        n, m = in1.shape[ax], in2.shape[ax]
        if ax not in axes and n != m and 1 not in (n, m):
            raise ValueError(
                f"fftconvolve: in1 and in2 must broadcast along axis {ax}, which is not "
                f"convolved, got shapes {in1.shape} and {in2.shape}."
            )
    if mode == "valid":
        swap = all(in2.shape[a] >= in1.shape[a] for a in axes) and any(
            in2.shape[a] > in1.shape[a] for a in axes
        )
        if not swap and not all(in1.shape[a] >= in2.shape[a] for a in axes):
            raise ValueError(
                "fftconvolve: for 'valid' mode, one input must be at least as large as the "
                f"other along every axis, got shapes {in1.shape} and {in2.shape}."
            )
        if swap:
            in1, in2 = in2, in1
    sizes = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
    if jnp.iscomplexobj(in1) or jnp.iscomplexobj(in2):
        spectrum = jnp.fft.fftn(in1, sizes, axes) * jnp.fft.fftn(in2, sizes, axes)
        full = jnp.fft.ifftn(spectrum, sizes, axes)
    else:
        spectrum = jnp.fft.rfftn(in1, sizes, axes) * jnp.fft.rfftn(in2, sizes, axes)
        full = jnp.fft.irfftn(spectrum, sizes, axes)
    window = _output_window(mode, [in1.shape[a] for a in axes], [in2.shape[a] for a in axes])
    index = [slice(None)] * full.ndim
    for a, (start, size) in zip(axes, window):
        index[a] = slice(start, start + size)
    return full[tuple(index)]
