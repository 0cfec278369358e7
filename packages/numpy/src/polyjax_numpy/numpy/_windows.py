"""Window functions for signal processing: `bartlett`, `blackman`, `hamming`, `hanning`,
`kaiser`.

The length `M` must be static (it is the result's shape); `M <= 0` gives an
empty window and `M == 1` the window `[1.]`. Results have the default float
dtype. The cosine windows depend on `M` only, so they are computed on the host
in float64 and rounded once (constants under `jit`). `kaiser` is computed with
`jnp.i0`, so its `beta` may be traced and differentiated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._ufuncs import divide, multiply
from polyjax_numpy.numpy._ufuncs_math import i0


def _length(M: Any, name: str) -> int:
    return concrete_int(M, f"'M' argument of jnp.{name}")


def _positions(m: int) -> np.ndarray:
    """The window's sample positions `pi * n / (M - 1)` for `n` from `1 - M` to `M - 1`."""
    return np.pi * np.arange(1 - m, m, 2, dtype=np.float64) / (m - 1)


def _cosine_window(M: Any, name: str, coefficients: tuple[float, ...]) -> Any:
    """`sum_k c[k] * cos(k * pi * n / (M - 1))`: the Hann, Hamming and Blackman family."""
    m = _length(M, name)
    dtype = dtypes.default_float_dtype()
    if m <= 1:
        return asarray(np.ones(max(m, 0)), dtype=dtype)
    x = _positions(m)
    window = sum(c * np.cos(k * x) for k, c in enumerate(coefficients))
    return asarray(window, dtype=dtype)


def bartlett(M: int) -> Any:
    """The Bartlett (triangular) window of `M` points.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.bartlett(5)
      Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
    """
    m = _length(M, "bartlett")
    dtype = dtypes.default_float_dtype()
    if m <= 1:
        return asarray(np.ones(max(m, 0)), dtype=dtype)
    return asarray(1.0 - np.abs(_positions(m)) / np.pi, dtype=dtype)


def blackman(M: int) -> Any:
    """The Blackman window of `M` points: `0.42 + 0.5 cos(x) + 0.08 cos(2x)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.round(jnp.blackman(3), 3)
      Array([-0.,  1., -0.], dtype=float32)
    """
    return _cosine_window(M, "blackman", (0.42, 0.5, 0.08))


def hamming(M: int) -> Any:
    """The Hamming window of `M` points: `0.54 + 0.46 cos(x)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.hamming(3)
      Array([0.08, 1.  , 0.08], dtype=float32)
    """
    return _cosine_window(M, "hamming", (0.54, 0.46))


def hanning(M: int) -> Any:
    """The Hann window of `M` points: `0.5 + 0.5 cos(x)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.hanning(3)
      Array([0., 1., 0.], dtype=float32)
    """
    return _cosine_window(M, "hanning", (0.5, 0.5))


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of `M` points: `i0(beta * sqrt(1 - r**2)) / i0(beta)`, `r` from -1
    to 1.

    Args:
      M: the static number of points.
      beta: the shape parameter (may be traced).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.round(jnp.kaiser(4, 1.5), 2)
      Array([0.61, 0.95, 0.95, 0.61], dtype=float32)
    """
    _u.check_arraylike("kaiser", beta)
    m = _length(M, "kaiser")
    dtype = dtypes.default_float_dtype()
    if m <= 1:
        return asarray(np.ones(max(m, 0)), dtype=dtype)
    r = np.linspace(-1.0, 1.0, m)
    inner = np.sqrt(np.maximum(1.0 - r * r, 0.0)).astype(dtype)
    (beta,) = _u.promote_dtypes_inexact(asarray(beta))
    return divide(i0(multiply(beta, inner)), i0(beta))


__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]
