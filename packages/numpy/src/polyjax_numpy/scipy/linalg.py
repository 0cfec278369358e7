"""`polyjax.scipy.linalg`: SciPy's `scipy.linalg` with JAX's semantics.

Like `polyjax.numpy.linalg` (whose solves and decompositions these functions
share), everything takes stacks of matrices (leading batch dimensions), works
under `jit`, `vmap` and `grad`, and makes its operands inexact. SciPy's
``overwrite_*`` and ``check_finite`` arguments are accepted and ignored.

Decisions (details in docs/scipy.md):

- Right-hand sides ``b`` of `solve`, `solve_triangular`, `cho_solve` and
  `lu_solve` are vectors when ``b.ndim == a.ndim - 1``, else matrices.
- Functions that SciPy documents as reading one triangle (`cholesky`,
  `cho_factor`, `eigh`, `solve` with ``assume_a`` "sym"/"her"/"pos") read it
  here too: the Hermitian matrix is built from that triangle first, so values
  match SciPy for any input and derivatives are those of the triangle.
- `expm`: Padé approximant (degree 7 for 32-bit, 13 for 64-bit types) with
  scaling and squaring; the squarings run as a fixed-length loop
  (`max_squarings` steps, each a no-op once done), so `expm` is differentiable
  in both modes, to any order. `expm_frechet` uses the block-matrix identity.
- `sqrtm` diagonalizes with `eig`: complex results, valid for diagonalizable
  matrices. `polar` uses the SVD for both methods.
- The Schur-based functions (`schur`, `rsf2csf`, `hessenberg`, `funm`,
  `solve_sylvester`), `eigh_tridiagonal` and `qr_multiply` live in
  `_schur_based.py`; the size-only and operand-built special matrices in
  `_special_matrices.py`.

Example:
  >>> from polyjax_numpy.scipy import linalg
  >>> linalg.expm(np.zeros((2, 2), np.float32))
  Array([[1., 0.],
         [0., 1.]], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters.jit import jit
from polyjax_numpy.lax import _while
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.numpy import (
    _creation,
    _joining,
    _manipulation,
    _matrices,
    _products,
    _selection,
    _ufuncs,
    _ufuncs_math,
)
from polyjax_numpy.numpy import _linalg_util as _lu
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy import linalg as np_linalg
from polyjax_numpy.scipy._schur_based import (
    eigh_tridiagonal,
    funm,
    hessenberg,
    qr_multiply,
    rsf2csf,
    schur,
    solve_sylvester,
)
from polyjax_numpy.scipy._special_matrices import (
    convolution_matrix,
    dft,
    fiedler,
    fiedler_companion,
    hadamard,
    helmert,
    invhilbert,
    invpascal,
    leslie,
    pascal,
)

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]


def _rhs(name: str, a: Any, b: Any) -> tuple[Any, Any, bool]:
    """`a`, `b` with `b` as matrices (``[..., N, K]``) of `a`'s batch, and whether `b`
    was a (stack of) vectors."""
    n = _u.shape(a)[-1]
    vector = _u.ndim(b) == _u.ndim(a) - 1
    if vector:
        b = _manipulation.expand_dims(b, -1)
    if _u.ndim(b) < 2 or _u.shape(b)[-2] != n:
        raise ValueError(
            f"{name}: b must have shape (..., {n}) or (..., {n}, K) for a of shape "
            f"{_u.shape(a)}, got shape {_u.shape(b)[:-1] if vector else _u.shape(b)}"
        )
    a, b = _lu.broadcast_batch(a, b)
    return a, b, vector


def _hermitian_from_triangle(a: Any, lower: bool, conjugate: bool = True) -> Any:
    """The Hermitian (`conjugate`) or symmetric matrix whose `lower` (or upper) triangle
    is that of `a`; the imaginary part of a Hermitian diagonal is dropped, as LAPACK does."""
    tri = _matrices.tril(a) if lower else _matrices.triu(a)
    strict = _matrices.tril(a, -1) if lower else _matrices.triu(a, 1)
    other = _lu.mH(strict) if conjugate else _lu.mT(strict)
    full = tri + other
    if conjugate and _lu.is_complex(a):
        diag = _manipulation.imag(_lu.matrix_diagonal(full))
        full = full - 1j * _u.convert(diag[..., None], _u.dtype(a)) * np.eye(
            _u.shape(a)[-1], dtype=_u.dtype(a)
        )
    return full


# ---------------------------------------------------------------------------
# Triangular and Cholesky solves


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug: Any = None,
    check_finite: bool = True,
) -> Any:
    """Solves ``op(a) @ x == b`` for triangular `a`.

    JAX implementation of `scipy.linalg.solve_triangular`.

    Args:
      a: ``[..., N, N]``; only its `lower` (or upper) triangle is read.
      b: ``[..., N]`` or ``[..., N, K]`` (batch dimensions broadcast with `a`'s).
      trans: ``op``: 0 or "N" (``a``), 1 or "T" (``a^T``), 2 or "C" (``a^H``).
      lower: whether `a` is lower triangular.
      unit_diagonal: assume ones on the diagonal (which is not read).
      overwrite_b, debug, check_finite: ignored.

    Returns:
      `x`, of `b`'s shape.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.solve_triangular(np.float32([[2, 0], [1, 1]]), np.float32([2, 3]), lower=True)
      Array([1., 2.], dtype=float32)
    """
    a, b = _lu.operands("solve_triangular", a, b)
    _lu.check_matrix("solve_triangular", a, square=True)
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    t = _TRANS[trans]
    a, b, vector = _rhs("solve_triangular", a, b)
    x = lax_linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=t > 0,
        conjugate_a=t == 2,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vector else x


def cholesky(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The Cholesky factor of Hermitian positive-definite matrices.

    JAX implementation of `scipy.linalg.cholesky`.

    Args:
      a: ``[..., N, N]``; only the triangle of the requested factor is read.
      lower: return ``L`` (``a == L @ L^H``) rather than ``U`` (``a == U^H @ U``).
      overwrite_a, check_finite: ignored.

    Returns:
      The factor, its other triangle zero; all NaN where `a` is not positive definite.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.cholesky(np.float32([[4, 2], [2, 5]]))
      Array([[2., 1.],
             [0., 2.]], dtype=float32)
    """
    (a,) = _lu.operands("cholesky", a)
    _lu.check_matrix("cholesky", a, square=True)
    factor = lax_linalg.cholesky(_hermitian_from_triangle(a, lower))
    return factor if lower else _lu.mH(factor)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, bool]:
    """The Cholesky factorization for `cho_solve`: ``(cholesky(a, lower), lower)``.

    JAX implementation of `scipy.linalg.cho_factor` (the factor's other triangle is
    zero, where SciPy leaves arbitrary values).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> c, lower = linalg.cho_factor(np.float32([[4, 2], [2, 5]]))
      >>> lower
      False
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False, check_finite: bool = True
) -> Any:
    """Solves ``a @ x == b`` from the Cholesky factorization of `cho_factor`.

    JAX implementation of `scipy.linalg.cho_solve`.

    Args:
      c_and_lower: ``(c, lower)`` as `cho_factor` returns them.
      b: ``[..., N]`` or ``[..., N, K]``.
      overwrite_b, check_finite: ignored.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> a = np.float32([[4, 2], [2, 5]])
      >>> linalg.cho_solve(linalg.cho_factor(a), a @ np.float32([1, 2]))
      Array([1., 2.], dtype=float32)
    """
    c, lower = c_and_lower
    c, b = _lu.operands("cho_solve", c, b)
    _lu.check_matrix("cho_solve", c, what="c", square=True)
    c, b, vector = _rhs("cho_solve", c, b)
    # a = L L^H: solve with L then L^H (with U = L^H: U^H then U).
    first = dict(transpose_a=not lower, conjugate_a=not lower)
    second = dict(transpose_a=lower, conjugate_a=lower)
    y = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, **first)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, **second)
    return x[..., 0] if vector else x


# ---------------------------------------------------------------------------
# LU


def lu(
    a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[Any, ...]:
    """LU decomposition with partial pivoting: ``a == p @ l @ u``.

    JAX implementation of `scipy.linalg.lu`.

    Args:
      a: ``[..., M, N]``.
      permute_l: return ``(p @ l, u)`` instead of ``(p, l, u)``.
      overwrite_a, check_finite: ignored.

    Returns:
      ``(p, l, u)``: the permutation matrix ``[..., M, M]`` (of `a`'s dtype), the
      unit lower triangular ``[..., M, K]`` and the upper triangular ``[..., K, N]``
      factors, ``K = min(M, N)``; or ``(p @ l, u)``.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> p, l, u = linalg.lu(np.float32([[1, 2], [3, 4]]))
      >>> u
      Array([[3.       , 4.       ],
             [0.       , 0.6666666]], dtype=float32)
    """
    (a,) = _lu.operands("lu", a)
    _lu.check_matrix("lu", a)
    lu_, _, perm = lax_linalg.lu(a)
    m, n = _u.shape(a)[-2:]
    k = min(m, n)
    dtype = _u.dtype(a)
    l_ = _matrices.tril(lu_[..., :, :k], -1) + np.eye(m, k, dtype=dtype)
    u_ = _matrices.triu(lu_[..., :k, :])
    if permute_l:
        return _lu.permute_rows(l_, perm, inverse=True), u_
    # p[j, i] = 1 where row i of l @ u is row j of a, i.e. perm[i] == j.
    rows = _creation.arange(m, dtype=np.int32)[:, None]
    p = _u.convert(_ufuncs.equal(perm[..., None, :], rows), dtype)
    return p, l_, u_


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """LU factors in LAPACK's packed form, for `lu_solve`.

    JAX implementation of `scipy.linalg.lu_factor`.

    Returns:
      ``(lu, piv)``: ``l`` (unit diagonal implicit) below the diagonal and ``u`` on
      and above it; ``piv`` (int32, 0-based): row ``i`` was swapped with ``piv[i]``.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.lu_factor(np.float32([[1, 2], [3, 4]]))[1]
      Array([1, 1], dtype=int32)
    """
    (a,) = _lu.operands("lu_factor", a)
    _lu.check_matrix("lu_factor", a)
    lu_, piv, _ = lax_linalg.lu(a)
    return lu_, piv


def lu_solve(
    lu_and_piv: tuple[Any, Any],
    b: Any,
    trans: int = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
) -> Any:
    """Solves ``op(a) @ x == b`` from the factors of `lu_factor`.

    JAX implementation of `scipy.linalg.lu_solve`.

    Args:
      lu_and_piv: ``(lu, piv)`` of a square matrix, as `lu_factor` returns them.
      b: ``[..., N]`` or ``[..., N, K]``.
      trans: 0 (``a``), 1 (``a^T``) or 2 (``a^H``).
      overwrite_b, check_finite: ignored.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> a = np.float32([[1, 2], [3, 4]])
      >>> linalg.lu_solve(linalg.lu_factor(a), np.float32([5, 11]))
      Array([1., 2.], dtype=float32)
    """
    lu_, piv = lu_and_piv
    lu_, b = _lu.operands("lu_solve", lu_, b)
    _lu.check_matrix("lu_solve", lu_, what="lu", square=True)
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    n = _u.shape(lu_)[-1]
    if _u.shape(piv)[-1:] != (n,):
        raise ValueError(f"lu_solve: piv must have shape (..., {n}), got {_u.shape(piv)}")
    perm = lax_linalg.lu_pivots_to_permutation(_u.convert(piv, np.dtype(np.int32)), n)
    lu_, b, vector = _rhs("lu_solve", lu_, b)
    perm = _manipulation.broadcast_to(perm, _u.shape(lu_)[:-1])
    x = _lu.lu_solve_factored(lu_, perm, b, trans)
    return x[..., 0] if vector else x


# ---------------------------------------------------------------------------
# Solves, inverses, determinants


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(
    a: Any,
    b: Any,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
) -> Any:
    """Solves ``a @ x == b`` for square `a`.

    JAX implementation of `scipy.linalg.solve`.

    Args:
      a: ``[..., N, N]``.
      b: ``[..., N]`` or ``[..., N, K]``.
      lower: with ``assume_a`` "sym", "her" or "pos", read the lower (else the upper)
        triangle of `a`.
      assume_a: "gen" (LU), "sym" / "her" (symmetric / Hermitian: LU of the matrix
        built from one triangle) or "pos" (positive definite: Cholesky).
      overwrite_a, overwrite_b, debug, check_finite: ignored.

    Returns:
      `x`, of `b`'s shape (``inf``/``nan`` for a singular `a`).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.solve(np.float32([[4, 0], [0, 1]]), np.float32([4, 2]), assume_a="pos")
      Array([1., 2.], dtype=float32)
    """
    assume_a = "gen" if assume_a is None else assume_a
    if assume_a not in _ASSUME_A:
        raise ValueError(f"solve: assume_a must be one of {_ASSUME_A}, got {assume_a!r}")
    a, b = _lu.operands("solve", a, b)
    _lu.check_matrix("solve", a, square=True)
    if assume_a == "pos":
        return cho_solve(cho_factor(a, lower=lower), b)
    if assume_a != "gen":
        a = _hermitian_from_triangle(a, lower, conjugate=assume_a == "her")
    a, b, vector = _rhs("solve", a, b)
    x = _lu.solve_square(a, b)
    return x[..., 0] if vector else x


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of square matrices (`polyjax.numpy.linalg.inv`).

    JAX implementation of `scipy.linalg.inv`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.inv(np.float32([[2, 0], [0, 4]]))
      Array([[0.5 , 0.  ],
             [0.  , 0.25]], dtype=float32)
    """
    return np_linalg.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of square matrices (`polyjax.numpy.linalg.det`).

    JAX implementation of `scipy.linalg.det`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.det(np.float32([[2, 1], [4, 3]]))
      Array(2., dtype=float32)
    """
    return np_linalg.det(a)


# ---------------------------------------------------------------------------
# Decompositions


def qr(
    a: Any,
    overwrite_a: bool = False,
    lwork: Any = None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
) -> Any:
    """QR decomposition ``a == q @ r``.

    JAX implementation of `scipy.linalg.qr`.

    Args:
      a: ``[..., M, N]``.
      mode: "full" (`q` ``[..., M, M]``, `r` ``[..., M, N]``), "economic" (`q`
        ``[..., M, K]``, `r` ``[..., K, N]``, ``K = min(M, N)``), "r" (the full `r`
        alone, in a 1-tuple) or "raw" (``((h, tau), r)``: LAPACK's Householder form
        ``[..., M, N]``, its scales ``[..., K]`` and the economic `r`).
      pivoting: not supported (must be False).
      overwrite_a, lwork, check_finite: ignored.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> q, r = linalg.qr(np.float32([[0, 1], [2, 3]]))
      >>> r
      Array([[-2., -3.],
             [ 0., -1.]], dtype=float32)
    """
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    modes = ("full", "economic", "r", "raw")
    if mode not in modes:
        raise ValueError(f"qr: mode must be one of {modes}, got {mode!r}")
    (a,) = _lu.operands("qr", a)
    _lu.check_matrix("qr", a)
    if mode == "raw":
        h, tau = lax_linalg.geqrf_p.bind(a)
        k = min(_u.shape(a)[-2:])
        return (h, tau), _matrices.triu(h[..., :k, :])
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
) -> Any:
    """Singular value decomposition ``a == u @ diag(s) @ vh``.

    JAX implementation of `scipy.linalg.svd` (always LAPACK's ``gesdd``).

    Returns:
      ``(u, s, vh)``, or `s` alone when not `compute_uv`; see
      `polyjax.numpy.linalg.svd`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.svd(np.float32([[3, 0], [0, -4]]), compute_uv=False)
      Array([4., 3.], dtype=float32)
    """
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    out = np_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals: Any = None,
    type: int = 1,  # noqa: A002 - SciPy's name
    check_finite: bool = True,
) -> Any:
    """Eigenvalues and eigenvectors of Hermitian matrices (the standard problem only).

    JAX implementation of `scipy.linalg.eigh`.

    Args:
      a: ``[..., N, N]``; only its `lower` (or upper) triangle is read.
      b: must be None (the generalized problem is not supported).
      lower: which triangle of `a` to read.
      eigvals_only: return the eigenvalues alone.
      eigvals: must be None (no subsets).
      overwrite_a, overwrite_b, turbo, type, check_finite: ignored.

    Returns:
      ``(w, v)``: ascending real eigenvalues and eigenvectors in the columns of `v`;
      or `w` alone.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.eigh(np.float32([[2, 1], [1, 2]]), eigvals_only=True)
      Array([1., 3.], dtype=float32)
    """
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b is not None) is not supported")
    if eigvals is not None:
        raise NotImplementedError("eigh: eigvals (a subset of eigenvalues) is not supported")
    (a,) = _lu.operands("eigh", a)
    _lu.check_matrix("eigh", a, square=True)
    v, w = lax_linalg.eigh(_hermitian_from_triangle(a, lower))
    return w if eigvals_only else (w, v)


def polar(
    a: Any,
    side: str = "right",
    *,
    method: str = "qdwh",
    eps: Any = None,
    max_iterations: Any = None,
) -> tuple[Any, Any]:
    """The polar decomposition ``a == u @ p`` (right) or ``a == p @ u`` (left).

    JAX implementation of `scipy.linalg.polar`. Both methods ("qdwh", JAX's
    default, and "svd") compute it from the SVD ``a = W diag(s) V^H``:
    ``u = W V^H``, and ``p = V diag(s) V^H`` (right) or ``W diag(s) W^H`` (left).
    `eps` and `max_iterations` (QDWH's) are ignored.

    Returns:
      ``(u, p)``: `u` ``[..., M, N]`` with orthonormal columns (rows if ``N > M``),
      `p` Hermitian positive semidefinite, ``[..., N, N]`` (right) or
      ``[..., M, M]`` (left).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> u, p = linalg.polar(np.float32([[2, 0], [0, -3]]))
      >>> p
      Array([[2., 0.],
             [0., 3.]], dtype=float32)
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: method must be 'qdwh' or 'svd', got {method!r}")
    (a,) = _lu.operands("polar", a)
    _lu.check_matrix("polar", a)
    w, s, vh = lax_linalg.svd(a, full_matrices=False)
    u = _products.matmul(w, vh)
    s = _u.convert(s, _u.dtype(a))[..., None, :]
    if side == "right":
        p = _products.matmul(_lu.mH(vh) * s, vh)
    else:
        p = _products.matmul(w * s, _lu.mH(w))
    return u, p


# ---------------------------------------------------------------------------
# Matrix functions


# Padé degree and the largest 1-norm it is accurate for (Higham 2005, "The scaling and
# squaring method for the matrix exponential revisited", Table 2.3), by precision.
_PADE = {32: (7, 3.925724783138660), 64: (13, 5.371920351148152)}


def _pade_coefficients(m: int) -> list[float]:
    """The coefficients ``c_j`` of the numerator ``p(x) = sum_j c_j x^j`` of the [m/m]
    Padé approximant of ``exp`` (the denominator is ``p(-x)``)."""
    f = math.factorial
    return [f(2 * m - j) * f(m) / (f(2 * m) * f(j) * f(m - j)) for j in range(m + 1)]


def _even_polynomial(coefficients: list[float], powers: list[Any]) -> Any:
    """``sum_k c_k B^k`` for ``B = A^2`` given ``powers = [I, B, B^2, B^3]`` (at most
    seven coefficients: the terms past ``B^3`` are grouped as ``B^3 (c_4 B + ...)``)."""
    low = sum(c * p for c, p in zip(coefficients[:4], powers))
    if len(coefficients) > 4:
        high = sum(c * p for c, p in zip(coefficients[4:], powers[1:]))
        low = low + _products.matmul(powers[3], high, precision="highest")
    return low


def _expm_pade(a: Any, m: int, upper_triangular: bool) -> Any:
    c = _pade_coefficients(m)
    eye = _lu.identity_like(a)
    mm = lambda x, y: _products.matmul(x, y, precision="highest")  # noqa: E731
    a2 = mm(a, a)
    a4 = mm(a2, a2)
    powers = [eye, a2, a4, mm(a2, a4)]
    odd = mm(a, _even_polynomial(c[1::2], powers))
    even = _even_polynomial(c[0::2], powers)
    p, q = even + odd, even - odd
    if upper_triangular:
        return lax_linalg.triangular_solve(q, p, left_side=True, lower=False)
    return _lu.solve_square(q, p)


def _expm_core(a: Any, upper_triangular: bool, max_squarings: int) -> Any:
    real = _lu.real_dtype(_u.dtype(a))
    m, theta = _PADE[64 if real == np.dtype(np.float64) else 32]
    norm1 = np_linalg.norm(a, ord=1, axis=(-2, -1))
    s = _ufuncs_math.ceil(_ufuncs_math.log2(norm1 / theta))
    s = _u.convert(_ufuncs.maximum(s, 0), real)  # NaN for non-finite a stays NaN
    scale = _u.convert(_ufuncs.power(_u.scalar_like(2, s), -s), _u.dtype(a))
    r = _expm_pade(a * scale[..., None, None], m, upper_triangular)
    steps = s[..., None, None]

    def square(i: Any, r: Any) -> Any:
        squared = _products.matmul(r, r, precision="highest")
        return _selection.where(_u.convert(i, real) < steps, squared, r)

    r = _while.fori_loop(0, int(max_squarings), square, r)
    too_many = _ufuncs.greater(steps, max_squarings)
    return _selection.where(too_many, _u.scalar_like(np.nan, r), r)


# The squaring loop is a `fori_loop`, traced anew on every call: under `jit`, an eager
# `expm` compiles once per shape.
_expm = jit(_expm_core, static_argnums=(1, 2))


def expm(a: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential ``sum_k a^k / k!``.

    JAX implementation of `scipy.linalg.expm`: a Padé approximant of ``a / 2^s``
    squared `s` times, ``s = max(0, ceil(log2(|a|_1 / theta)))`` (degree 7 and
    ``theta = 3.93`` for 32-bit types, degree 13 and ``theta = 5.37`` for 64-bit
    ones). The squarings are a loop of `max_squarings` steps (each a no-op past
    `s`), so the function is differentiable in forward and reverse mode.

    Args:
      a: ``[..., N, N]``.
      upper_triangular: `a` is upper triangular (the Padé solve is then triangular).
      max_squarings: the most squarings; a matrix that needs more gives NaN.

    Returns:
      ``exp(a)``, of `a`'s shape and (inexact) dtype.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.expm(np.float32([[0, 1], [0, 0]]))
      Array([[1., 1.],
             [0., 1.]], dtype=float32)
    """
    (a,) = _lu.operands("expm", a)
    _lu.check_matrix("expm", a, square=True)
    if _u.shape(a)[-1] == 0:
        return a
    return _expm(a, bool(upper_triangular), int(max_squarings))


def expm_frechet(
    A: Any, E: Any, method: str | None = None, compute_expm: bool = True, check_finite: bool = True
) -> Any:
    """The Fréchet derivative of `expm` at `A` in the direction `E`.

    JAX implementation of `scipy.linalg.expm_frechet`, from the block identity
    ``expm([[A, E], [0, A]]) == [[expm(A), L(A, E)], [0, expm(A)]]`` (for every
    `method`: None, "SPS" or "blockEnlarge").

    Returns:
      ``(expm(A), L)`` if `compute_expm`, else `L`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.expm_frechet(np.zeros((1, 1), np.float32), np.ones((1, 1), np.float32))
      (Array([[1.]], dtype=float32), Array([[1.]], dtype=float32))
    """
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}")
    A, E = _lu.operands("expm_frechet", A, E)
    _lu.check_matrix("expm_frechet", A, what="A", square=True)
    if _u.shape(A) != _u.shape(E):
        raise ValueError(
            f"expm_frechet: A and E must have the same shape, got {_u.shape(A)} and {_u.shape(E)}"
        )
    n = _u.shape(A)[-1]
    zero = _creation.zeros_like(A)
    top = _joining.concatenate([A, E], axis=-1)
    bottom = _joining.concatenate([zero, A], axis=-1)
    big = expm(_joining.concatenate([top, bottom], axis=-2))
    exp_a, frechet = big[..., :n, :n], big[..., :n, n:]
    return (exp_a, frechet) if compute_expm else frechet


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal matrix square root ``X`` with ``X @ X == A``.

    JAX implementation of `scipy.linalg.sqrtm`. polyjax diagonalizes `A` with
    `eig` (``A = V diag(w) V^{-1}``, ``X = V diag(sqrt(w)) V^{-1}``) where JAX uses
    a Schur decomposition, so `A` must be diagonalizable (defective matrices give
    inaccurate or non-finite results). As in JAX, the result is always complex.
    `blocksize` is ignored. Not differentiable (the eigenvectors are not).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.sqrtm(np.float32([[4, 0], [0, 9]]))
      Array([[2.+0.j, 0.+0.j],
             [0.+0.j, 3.+0.j]], dtype=complex64)
    """
    (A,) = _lu.operands("sqrtm", A)
    _lu.check_matrix("sqrtm", A, what="A", square=True)
    w, v = lax_linalg.eig(A, compute_left_eigenvectors=False)
    root = _ufuncs_math.sqrt(w)
    # X = (V diag(root)) V^{-1}, i.e. X^T = V^{-T} (V diag(root))^T.
    xt = _lu.solve_square(_lu.mT(v), _lu.mT(v * root[..., None, :]))
    return _lu.mT(xt)


# ---------------------------------------------------------------------------
# Special matrices


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of `arrs` (0-D and 1-D arrays count as one row).

    JAX implementation of `scipy.linalg.block_diag`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.block_diag(np.float32([[1, 2]]), np.float32(3))
      Array([[1., 2., 0.],
             [0., 0., 3.]], dtype=float32)
    """
    if not arrs:
        return _creation.zeros((1, 0))
    _u.check_arraylike("block_diag", *arrs)
    arrs = _u.promote_dtypes(*(_creation.asarray(a) for a in arrs))
    blocks = []
    for i, a in enumerate(arrs):
        if _u.ndim(a) > 2:
            raise ValueError(
                f"block_diag: arguments must have at most 2 dimensions, argument {i} has "
                f"shape {_u.shape(a)}"
            )
        blocks.append(_manipulation.reshape(a, (1, -1)) if _u.ndim(a) < 2 else a)
    total = sum(_u.shape(b)[1] for b in blocks)
    rows, before = [], 0
    for b in blocks:
        height, width = _u.shape(b)
        left = _creation.zeros((height, before), _u.dtype(b))
        right = _creation.zeros((height, total - before - width), _u.dtype(b))
        rows.append(_joining.concatenate([left, b, right], axis=1))
        before += width
    return _joining.concatenate(rows, axis=0)


def _index_matrix(values: Any, index: np.ndarray) -> Any:
    """``values[..., index]`` for a static integer matrix `index`."""
    flat = _manipulation.take_axis(values, _creation.asarray(index.ravel()), axis=-1)
    return _manipulation.reshape(flat, (*_u.shape(values)[:-1], *index.shape))


def _vectors(name: str, *args: Any) -> list[Any]:
    _u.check_arraylike(name, *args)
    out = _u.promote_dtypes(*(_creation.asarray(a) for a in args))
    for a in out:
        if _u.ndim(a) < 1:
            raise ValueError(f"{name}: the arguments must have at least 1 dimension")
    return out


def _batch_broadcast(c: Any, r: Any) -> tuple[Any, Any]:
    batch = _manipulation.broadcast_shapes(_u.shape(c)[:-1], _u.shape(r)[:-1])
    return (
        _manipulation.broadcast_to(c, (*batch, _u.shape(c)[-1])),
        _manipulation.broadcast_to(r, (*batch, _u.shape(r)[-1])),
    )


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column `c` and first row `r`.

    JAX implementation of `scipy.linalg.toeplitz`: ``out[i, j] = c[i - j]`` for
    ``i >= j``, else ``r[j - i]`` (``r[0]`` is ignored; default ``r = conj(c)``).
    Leading dimensions of `c` and `r` are batch dimensions.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.toeplitz(np.int32([1, 2, 3]), np.int32([1, 4]))
      Array([[1, 4],
             [2, 1],
             [3, 2]], dtype=int32)
    """
    if r is None:
        (c,) = _vectors("toeplitz", c)
        r = _manipulation.conj(c)
    else:
        c, r = _vectors("toeplitz", c, r)
    c, r = _batch_broadcast(c, r)
    m, n = _u.shape(c)[-1], _u.shape(r)[-1]
    # values = [r[n-1], ..., r[1], c[0], ..., c[m-1]]; out[i, j] = values[i - j + n - 1].
    values = _joining.concatenate([_manipulation.flip(r[..., 1:], -1), c], axis=-1)
    index = np.arange(m)[:, None] - np.arange(n)[None, :] + n - 1
    return _index_matrix(values, index)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column `c` and last row `r`.

    JAX implementation of `scipy.linalg.hankel`: ``out[i, j] = c[i + j]`` for
    ``i + j < M``, else ``r[i + j - M + 1]`` (``r[0]`` is ignored; default: zeros).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.hankel(np.int32([1, 2, 3]))
      Array([[1, 2, 3],
             [2, 3, 0],
             [3, 0, 0]], dtype=int32)
    """
    if r is None:
        (c,) = _vectors("hankel", c)
        r = _creation.zeros_like(c)
    else:
        c, r = _vectors("hankel", c, r)
    c, r = _batch_broadcast(c, r)
    m, n = _u.shape(c)[-1], _u.shape(r)[-1]
    values = _joining.concatenate([c, r[..., 1:]], axis=-1)
    return _index_matrix(values, np.arange(m)[:, None] + np.arange(n)[None, :])


def circulant(c: Any) -> Any:
    """The circulant matrix with first column `c`: ``out[i, j] = c[(i - j) % N]``.

    JAX implementation of `scipy.linalg.circulant` (leading dimensions batch).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.circulant(np.int32([1, 2, 3]))
      Array([[1, 3, 2],
             [2, 1, 3],
             [3, 2, 1]], dtype=int32)
    """
    (c,) = _vectors("circulant", c)
    n = _u.shape(c)[-1]
    return _index_matrix(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients `a` (highest first).

    JAX implementation of `scipy.linalg.companion`: the first row is
    ``-a[1:] / a[0]``, the subdiagonal ones; its eigenvalues are the roots.

    Raises:
      ValueError: fewer than two coefficients.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.companion(np.float32([1, -3, 2]))
      Array([[ 3., -2.],
             [ 1.,  0.]], dtype=float32)
    """
    (a,) = _vectors("companion", a)
    n = _u.shape(a)[-1]
    if n < 2:
        raise ValueError(f"companion: a needs at least two coefficients, got shape {_u.shape(a)}")
    (a,) = _u.promote_dtypes_inexact(a)
    first = -a[..., 1:] / a[..., :1]
    below = np.eye(n - 2, n - 1, dtype=_u.dtype(a))
    below = _manipulation.broadcast_to(below, (*_u.shape(a)[:-1], n - 2, n - 1))
    return _joining.concatenate([first[..., None, :], below], axis=-2)


def hilbert(n: int) -> Any:
    """The Hilbert matrix ``1 / (i + j + 1)`` of order `n` (default float dtype).

    JAX implementation of `scipy.linalg.hilbert`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.hilbert(2)
      Array([[1.        , 0.5       ],
             [0.5       , 0.33333334]], dtype=float32)
    """
    n = int(n)
    i = np.arange(n)
    values = 1.0 / (i[:, None] + i[None, :] + 1)
    return _creation.asarray(values, dtype=dtypes.default_float_dtype())
