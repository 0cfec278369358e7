"""The special matrices of `scipy.linalg` that `linalg.py` does not build itself.

Those that depend only on their size (`dft`, `hadamard`, `helmert`,
`invhilbert`, `pascal`, `invpascal`) are computed on the host exactly (Python
integers for the binomials and the inverse Hilbert matrix) and rounded once
to the result's dtype, so they carry no rounding error beyond that. Those built
from operands (`convolution_matrix`, `fiedler`, `fiedler_companion`,
`leslie`) are gathers and scatters of those operands and work under `jit`.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u


def _size(name: str, n: Any, positive: bool = True) -> int:
    n = operator.index(n)
    if n < (1 if positive else 0):
        raise ValueError(f"{name}: n must be a positive integer; got {n}.")
    return n


def _float_dtype(dtype: Any = None) -> Any:
    return dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.float_)


def _vector(name: str, a: Any, what: str = "a") -> Any:
    _u.check_arraylike(name, a)
    a = jnp.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"{name}: {what} must be one-dimensional, got shape {a.shape}.")
    return a


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix `A` with ``A @ v == convolve(a, v, mode)`` for vectors `v` of length `n`.

    Args:
      a: the 1-D kernel.
      n: the length of the vectors it multiplies.
      mode: "full", "same" or "valid", as in `numpy.convolve`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.convolution_matrix(np.int32([1, 2]), 3)
      Array([[1, 0, 0],
             [2, 1, 0],
             [0, 2, 1],
             [0, 0, 2]], dtype=int32)
    """
    n = _size("convolution_matrix", n)
    a = _vector("convolution_matrix", a)
    m = a.shape[0]
    if m == 0:
        raise ValueError("convolution_matrix: a must not be empty.")
    if mode not in ("full", "same", "valid"):
        raise ValueError(
            f"convolution_matrix: mode must be 'full', 'same' or 'valid', got {mode!r}."
        )
    rows = np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]  # full: A[i, j] = a[i - j]
    if mode == "same":
        start = (min(m, n) - 1) // 2
        rows = rows[start : start + max(m, n)]
    elif mode == "valid":
        rows = rows[min(m, n) - 1 : max(m, n)]
    inside = (rows >= 0) & (rows < m)
    values = a[np.clip(rows, 0, m - 1)]
    return jnp.where(inside, values, jnp.zeros_like(values))


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The discrete Fourier transform matrix, ``F[j, k] = exp(-2 pi i j k / n)``.

    Args:
      n: its size.
      scale: None, "sqrtn" (divide by `sqrt(n)`) or "n" (divide by `n`).
      dtype: a complex dtype (default: the default complex type).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.dft(2)
      Array([[ 1.+0.0000000e+00j,  1.+0.0000000e+00j],
             [ 1.+0.0000000e+00j, -1.-1.2246469e-16j]], dtype=complex64)
    """
    n = _size("dft", n)
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}.")
    dtype = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.complex_)
    jk = np.outer(np.arange(n), np.arange(n)) % n  # exact phases: reduce j k mod n first
    m = np.exp(-2j * np.pi * jk / n)
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return jnp.asarray(m.astype(dtype))


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix ``F[i, j] = |a[i] - a[j]|``.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.fiedler(np.int32([1, 4, 2]))
      Array([[0, 3, 1],
             [3, 0, 2],
             [1, 2, 0]], dtype=int32)
    """
    a = _vector("fiedler", a)
    return jnp.abs(a[:, None] - a[None, :])


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix of the polynomial with coefficients `a` (highest first).

    A pentadiagonal matrix whose eigenvalues are the polynomial's roots, built from
    `c = a[1:] / a[0]`: row 0 holds `-c[0], -c[1], 1`; each further even row `i` holds
    `-c[i]` at column `i - 1`, `-c[i + 1]` at `i + 1` and 1 at `i + 2`; odd row `i` has a
    single 1 at column `max(i - 2, 0)` (entries past the edge are dropped).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.fiedler_companion(np.float32([1, 2, 3, 4]))
      Array([[-2., -3.,  1.],
             [ 1.,  0.,  0.],
             [ 0., -4.,  0.]], dtype=float32)
    """
    a = _vector("fiedler_companion", a)
    (a,) = _u.promote_dtypes_inexact(a)
    if a.shape[0] <= 2:
        return jnp.reshape(-a[1:] / a[0], (a.shape[0] - 1,) * 2) if a.shape[0] else a
    c = -a[1:] / a[0]
    n = c.shape[0]
    rows, cols, src = [], [], []  # src: index into c, or -1 for a one
    for i in range(n):
        if i % 2 == 0:
            entries = [(max(i - 1, 0), i), (i + 1, i + 1), (i + 2, -1)]
        else:
            entries = [(max(i - 2, 0), -1)]
        for col, k in entries:
            if col < n and k < n:
                rows.append(i), cols.append(col), src.append(k)
    src_arr = np.array(src)
    values = jnp.where(src_arr >= 0, c[np.maximum(src_arr, 0)], jnp.ones((), c.dtype))
    return jnp.zeros((n, n), c.dtype).at[np.array(rows), np.array(cols)].set(values)


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Sylvester-Hadamard matrix of size `n` (a power of 2) with entries +1 and -1.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.hadamard(2)
      Array([[ 1,  1],
             [ 1, -1]], dtype=int32)
    """
    n = _size("hadamard", n)
    if n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h.astype(dtypes.canonicalize_dtype(dtype)))


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix: orthonormal contrasts (its first row, with `full`, is uniform).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.helmert(2)
      Array([[ 0.70710677, -0.70710677]], dtype=float32)
    """
    n = _size("helmert", n)
    h = np.zeros((n, n))
    h[0] = 1 / math.sqrt(n)
    for k in range(1, n):
        h[k, :k] = 1 / math.sqrt(k * (k + 1))
        h[k, k] = -k / math.sqrt(k * (k + 1))
    return jnp.asarray((h if full else h[1:]).astype(_float_dtype()))


def invhilbert(n: int) -> Any:
    """The inverse of the `n` x `n` Hilbert matrix, from its exact integer entries.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.invhilbert(2)
      Array([[ 4., -6.],
             [-6., 12.]], dtype=float32)
    """
    n = _size("invhilbert", n)
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = (
                (-1) ** s
                * (s + 1)
                * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1)
                * math.comb(s, i) ** 2
            )
    return jnp.asarray(out.astype(np.float64).astype(_float_dtype()))


def _pascal_lower(n: int) -> np.ndarray:
    return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)


def _kind(name: str, kind: str | None) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{name}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}.")
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix of binomial coefficients ("symmetric", "lower" or "upper").

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.pascal(3)
      Array([[1., 1., 1.],
             [1., 2., 3.],
             [1., 3., 6.]], dtype=float32)
    """
    n = _size("pascal", n)
    kind = _kind("pascal", kind)
    low = _pascal_lower(n)
    out = {"lower": low, "upper": low.T, "symmetric": low.dot(low.T)}[kind]
    return jnp.asarray(np.asarray(out, np.float64).astype(_float_dtype()))


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of `pascal(n, kind)`, from its exact integer entries.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.invpascal(3)
      Array([[ 3., -3.,  1.],
             [-3.,  5., -2.],
             [ 1., -2.,  1.]], dtype=float32)
    """
    n = _size("invpascal", n)
    kind = _kind("invpascal", kind)
    signs = np.array([[(-1) ** (i + j) for j in range(n)] for i in range(n)], dtype=object)
    inv_low = _pascal_lower(n) * signs  # the inverse of the lower factor flips alternate signs
    out = {"lower": inv_low, "upper": inv_low.T, "symmetric": inv_low.T.dot(inv_low)}[kind]
    return jnp.asarray(np.asarray(out, np.float64).astype(_float_dtype()))


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities `f` on the first row, survival rates `s` below the diagonal.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.leslie(np.float32([1, 2, 3]), np.float32([0.5, 0.25]))
      Array([[1.  , 2.  , 3.  ],
             [0.5 , 0.  , 0.  ],
             [0.  , 0.25, 0.  ]], dtype=float32)
    """
    f, s = _vector("leslie", f, "f"), _vector("leslie", s, "s")
    n = f.shape[0]
    if n < 1 or s.shape[0] != n - 1:
        raise ValueError(
            f"leslie: f must be non-empty and s one shorter, got {f.shape[0]} and {s.shape[0]}."
        )
    f, s = _u.promote_dtypes(f, s)
    out = jnp.zeros((n, n), f.dtype).at[0].set(f)
    return out.at[np.arange(1, n), np.arange(n - 1)].set(s)
