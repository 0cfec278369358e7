"""`polyjax.numpy.linalg`: NumPy's `numpy.linalg` with JAX's semantics.

Every function takes stacks of matrices (leading batch dimensions) and is built
on the LAPACK primitives of `lax.linalg`, so it runs under `jit`, `vmap` and
`grad`. Operands must be arrays or scalars (lists are refused, as in JAX), and
become inexact: bools and integers take the default float dtype (float32, or
float64 under ``jax_enable_x64``). Results keep that dtype, except that
eigenvalues of general matrices are always complex (complex64 for 32-bit
input), and singular values, norms and Hermitian eigenvalues are real.

Decisions (details in docs/numpy.md, "Linear algebra and FFT"):

- `solve` and `inv` factor ``a`` once (LU with partial pivoting) inside
  `lax.custom_linear_solve`, so derivatives are solves with the same factors;
  a singular matrix gives ``inf``/``nan`` rather than an error.
- `det` has its own jvp, ``tr(adj(a) da)``, with the adjugate read off the LU
  factors; it stays finite for singular matrices of rank ``n - 1``.
- `slogdet` (``method="lu"`` or ``"qr"``) has the jvp
  ``Re tr(a^{-1} da)`` (and a phase for complex signs).
- `pinv` has the closed-form jvp of the pseudo-inverse (constant rank).
- `cholesky`, `eigh` and `eigvalsh` symmetrize their input by default
  (``(a + a^H) / 2``), so derivatives are those of a symmetric function.

Example:
  >>> import polyjax.numpy as jnp
  >>> jnp.linalg.solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.array([1.0, 1.0]))
  Array([0.5 , 0.25], dtype=float32)
"""

from __future__ import annotations

import operator
import string
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy.lax import _sorting
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.numpy import (
    _creation,
    _einsum,
    _indexing,
    _manipulation,
    _matrices,
    _predicates,
    _products,
    _reductions,
    _selection,
    _ufuncs,
    _ufuncs_math,
)
from polyjax_numpy.numpy import _linalg_util as _lu
from polyjax_numpy.numpy import _util as _u

__all__ = [
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


class EigResult(NamedTuple):
    """What `eig` returns."""

    eigenvalues: Any
    eigenvectors: Any


class EighResult(NamedTuple):
    """What `eigh` returns."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """What `qr` returns (except with ``mode="r"``)."""

    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """What `slogdet` returns."""

    sign: Any
    logabsdet: Any


class SVDResult(NamedTuple):
    """What `svd` returns with ``compute_uv=True``."""

    U: Any
    S: Any
    Vh: Any


# ---------------------------------------------------------------------------
# Solves and inverses


def solve(a: Any, b: Any) -> Any:
    """Solves the linear system ``a @ x == b``.

    JAX implementation of `numpy.linalg.solve`.

    Args:
      a: ``[..., N, N]`` coefficient matrices.
      b: ``[N]`` (one right-hand side, for every matrix of the stack) or
        ``[..., N, M]``; the batch dimensions of `a` and `b` broadcast together.

    Returns:
      `x`: ``[..., N]`` for a 1-D `b`, else ``[..., N, M]``. A singular `a` gives
      ``inf`` or ``nan`` values.

    Raises:
      ValueError: `a` is not square, or the sizes of `a` and `b` do not match.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.solve(jnp.array([[2.0, 0.0], [1.0, 4.0]]), jnp.array([2.0, 9.0]))
      Array([1., 2.], dtype=float32)
    """
    a, b = _lu.operands("solve", a, b)
    _lu.check_matrix("solve", a, square=True)
    n = _u.shape(a)[-1]
    vector = _u.ndim(b) == 1
    if vector:
        b = _manipulation.expand_dims(b, -1)
    if _u.ndim(b) < 2 or _u.shape(b)[-2] != n:
        raise ValueError(
            f"solve: b must have shape ({n},) or (..., {n}, M) for a of shape "
            f"{_u.shape(a)}, got shape {_u.shape(b if not vector else b[..., 0])}"
        )
    a, b = _lu.broadcast_batch(a, b)
    x = _lu.solve_square(a, b)
    return x[..., 0] if vector else x


def inv(a: Any) -> Any:
    """The inverse of square matrices.

    JAX implementation of `numpy.linalg.inv`: ``solve(a, I)``.

    Args:
      a: ``[..., N, N]``.

    Returns:
      ``a^{-1}`` (``inf``/``nan`` for a singular matrix).

    Raises:
      ValueError: `a` is not a stack of square matrices.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
      Array([[0.5 , 0.  ],
             [0.  , 0.25]], dtype=float32)
    """
    (a,) = _lu.operands("inv", a)
    _lu.check_matrix("inv", a, square=True)
    return _lu.solve_square(a, _lu.identity_like(a))


def _pivot_sign(pivots: Any, dtype: Any) -> Any:
    """The determinant (+1 or -1) of the permutation that LAPACK's row swaps make."""
    k = _u.shape(pivots)[-1]
    swaps = _ufuncs.not_equal(pivots, _creation.arange(k, dtype=_u.dtype(pivots)))
    odd = _ufuncs.remainder(_reductions.sum(swaps, axis=-1), 2)
    return _u.convert(1 - 2 * odd, dtype)


def _exclusive_products(d: Any) -> Any:
    """``p[..., i] = prod_{j != i} d[..., j]``, without dividing (so zeros are fine)."""
    n = _u.shape(d)[-1]
    rows = _selection.where(np.eye(n, dtype=bool), _u.scalar_like(1, d), d[..., None, :])
    return _reductions.prod(rows, axis=-1)


@custom_jvp
def _det(a: Any) -> Any:
    lu_, pivots, _ = lax_linalg.lu(a)
    return _pivot_sign(pivots, _u.dtype(a)) * _reductions.prod(_lu.matrix_diagonal(lu_), axis=-1)


@_det.defjvp
def _det_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # d det(a) = tr(adj(a) da). With a = P^T L U: adj(a) = det(P) adj(U) L^{-1} P. Let U~ be
    # U with each exactly-zero pivot d_k replaced by 1 (invertible); then
    #   adj(U) = prod(d) U~^{-1} + U~^{-1} diag(w) U~^{-1},  w_k = [d_k == 0] prod_{j != k} d_j,
    # which is adj(U) whatever the rank: the first term is it when no pivot is zero, the
    # second when exactly one is, and both vanish when two or more are.
    (a,), (da,) = primals, tangents
    lu_, pivots, perm = lax_linalg.lu(a)
    d = _lu.matrix_diagonal(lu_)
    zero = _ufuncs.equal(d, 0)
    n = _u.shape(a)[-1]
    u_tilde = lu_ + _selection.where(zero, _u.scalar_like(1, d), _u.scalar_like(0, d))[
        ..., None
    ] * np.eye(n, dtype=_u.dtype(a))
    prod_d = _reductions.prod(d, axis=-1)
    w = _selection.where(zero, _exclusive_products(d), _u.scalar_like(0, d))
    z = lax_linalg.triangular_solve(
        lu_, _lu.permute_rows(da, perm), left_side=True, lower=True, unit_diagonal=True
    )
    y = lax_linalg.triangular_solve(u_tilde, z, left_side=True, lower=False)
    y_u = lax_linalg.triangular_solve(u_tilde, y, left_side=False, lower=False)
    tangent = prod_d * _reductions.sum(_lu.matrix_diagonal(y), axis=-1) + _reductions.sum(
        w * _lu.matrix_diagonal(y_u), axis=-1
    )
    sign = _pivot_sign(pivots, _u.dtype(a))
    return sign * prod_d, sign * tangent


def det(a: Any) -> Any:
    """The determinant of square matrices.

    JAX implementation of `numpy.linalg.det`, from the LU factorization. Its
    derivative ``tr(adj(a) da)`` reads the adjugate off the same factors, so it is
    finite for singular matrices too (exactly, for rank ``N - 1``).

    Args:
      a: ``[..., N, N]``.

    Returns:
      ``[...]`` determinants (1 for ``N == 0``).

    Raises:
      ValueError: `a` is not a stack of square matrices.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.det(jnp.array([[2.0, 1.0], [4.0, 3.0]]))
      Array(2., dtype=float32)
    """
    (a,) = _lu.operands("det", a)
    _lu.check_matrix("det", a, square=True)
    if _u.shape(a)[-1] == 0:
        return _creation.ones(_u.shape(a)[:-2], _u.dtype(a))
    return _det(a)


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    lu_, pivots, _ = lax_linalg.lu(a)
    return _slogdet_from_diagonal(_lu.matrix_diagonal(lu_), _pivot_sign(pivots, _u.dtype(a)))


def _slogdet_qr(a: Any) -> tuple[Any, Any]:
    # a = Q R with Q a product of Householder reflectors H = I - tau v v^H, each of
    # determinant -tau / conj(tau) (1 where tau == 0: no reflection).
    h, taus = lax_linalg.geqrf_p.bind(a)
    reflects = _ufuncs.not_equal(taus, 0)
    safe = _selection.where(reflects, taus, _u.scalar_like(1, taus))
    dets = _selection.where(reflects, -safe / _manipulation.conj(safe), _u.scalar_like(1, taus))
    return _slogdet_from_diagonal(_lu.matrix_diagonal(h), _reductions.prod(dets, axis=-1))


def _slogdet_from_diagonal(d: Any, sign: Any) -> tuple[Any, Any]:
    """The sign and log|det| of ``sign * prod(d)``; (0, -inf) when a `d` is 0."""
    absd = _ufuncs.abs(d)
    singular = _reductions.any(_ufuncs.equal(d, 0), axis=-1)
    sign = sign * _reductions.prod(_ufuncs.sign(d), axis=-1)
    logdet = _reductions.sum(_ufuncs_math.log(absd), axis=-1)
    sign = _selection.where(singular, _u.scalar_like(0, sign), sign)
    logdet = _selection.where(singular, _u.scalar_like(-np.inf, logdet), logdet)
    return sign, logdet


_SLOGDET_METHODS = {"lu": _slogdet_lu, "qr": _slogdet_qr}


def _slogdet_core(method: str, a: Any) -> tuple[Any, Any]:
    return _SLOGDET_METHODS[method](a)


_slogdet = custom_jvp(_slogdet_core, nondiff_argnums=(0,))


@_slogdet.defjvp
def _slogdet_jvp(method: str, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # d log det(a) = tr(a^{-1} da): its real part moves log|det|, its imaginary part the
    # phase of a complex sign.
    (a,), (da,) = primals, tangents
    sign, logdet = _slogdet(method, a)
    t = _reductions.sum(_lu.matrix_diagonal(_lu.solve_square(a, da)), axis=-1)
    if _lu.is_complex(a):
        sign_dot = sign * _u.convert(_ufuncs.multiply(1j, _manipulation.imag(t)), _u.dtype(a))
        return (sign, logdet), (sign_dot, _manipulation.real(t))
    return (sign, logdet), (_creation.zeros_like(sign), t)


def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    """The sign and the natural logarithm of the absolute value of determinants.

    JAX implementation of `numpy.linalg.slogdet`.

    Args:
      a: ``[..., N, N]``.
      method: ``"lu"`` (default: LU factorization) or ``"qr"`` (QR factorization).

    Returns:
      ``SlogdetResult(sign, logabsdet)``, each ``[...]``: `sign` of `a`'s dtype
      (unit modulus for complex `a`), `logabsdet` real; ``(0, -inf)`` for a
      singular matrix, so that ``det(a) == sign * exp(logabsdet)``.

    Raises:
      ValueError: `a` is not a stack of square matrices, or an unknown `method`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.slogdet(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
      SlogdetResult(sign=Array(-1., dtype=float32), logabsdet=Array(0.6931472, dtype=float32))
    """
    (a,) = _lu.operands("slogdet", a)
    _lu.check_matrix("slogdet", a, square=True)
    method = "lu" if method is None else method
    if method not in _SLOGDET_METHODS:
        raise ValueError(f"slogdet: unknown method {method!r}; use 'lu' or 'qr'")
    batch = _u.shape(a)[:-2]
    if _u.shape(a)[-1] == 0:
        zeros = _creation.zeros(batch, _lu.real_dtype(_u.dtype(a)))
        return SlogdetResult(_creation.ones(batch, _u.dtype(a)), zeros)
    return SlogdetResult(*_slogdet(method, a))


# ---------------------------------------------------------------------------
# Decompositions


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of Hermitian positive-definite matrices.

    JAX implementation of `numpy.linalg.cholesky`.

    Args:
      a: ``[..., N, N]``.
      upper: return the upper factor ``U`` (``a == U^H @ U``) instead of the lower
        one ``L`` (``a == L @ L^H``).
      symmetrize_input: factor ``(a + a^H) / 2`` (JAX's default), so that the
        derivative is that of a function of Hermitian matrices; otherwise only the
        lower triangle of `a` is read, as NumPy does.

    Returns:
      The triangular factor; all ``nan`` where `a` is not positive definite (NumPy
      raises `LinAlgError`, which a traced value cannot do).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 5.0]]))
      Array([[2., 0.],
             [1., 2.]], dtype=float32)
    """
    (a,) = _lu.operands("cholesky", a)
    _lu.check_matrix("cholesky", a, square=True)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _lu.mH(factor) if upper else factor


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices.

    JAX implementation of `numpy.linalg.eig` (LAPACK ``geev``; CPU only).

    Args:
      a: ``[..., N, N]``.

    Returns:
      ``EigResult(eigenvalues, eigenvectors)``: ``[..., N]`` eigenvalues in LAPACK's
      order, and unit-norm eigenvectors in the columns of ``[..., N, N]``. Both are
      always complex (complex64 for 32-bit input), unlike NumPy's real results for
      real spectra. Only the eigenvalues are differentiable.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.eig(jnp.array([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
      Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    (a,) = _lu.operands("eig", a)
    _lu.check_matrix("eig", a, square=True)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """Eigenvalues of general square matrices (complex; see `eig`).

    JAX implementation of `numpy.linalg.eigvals`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.eigvals(jnp.array([[0.0, -1.0], [1.0, 0.0]]))
      Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    (a,) = _lu.operands("eigvals", a)
    _lu.check_matrix("eigvals", a, square=True)
    (w,) = lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


def _uplo_lower(name: str, UPLO: str | None) -> bool:
    if UPLO is None:
        return True
    if UPLO not in ("L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO == "L"


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues and eigenvectors of Hermitian (real symmetric) matrices.

    JAX implementation of `numpy.linalg.eigh`.

    Args:
      a: ``[..., N, N]``.
      UPLO: ``"L"`` (default) or ``"U"``: the triangle read when not
        `symmetrize_input`.
      symmetrize_input: decompose ``(a + a^H) / 2`` (JAX's default), which reads both
        triangles and makes derivatives those of a function of Hermitian matrices.

    Returns:
      ``EighResult(eigenvalues, eigenvectors)``: real eigenvalues ``[..., N]`` in
      ascending order and orthonormal eigenvectors in the columns of ``[..., N, N]``.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
      Array([1., 3.], dtype=float32)
    """
    (a,) = _lu.operands("eigh", a)
    _lu.check_matrix("eigh", a, square=True)
    lower = _uplo_lower("eigh", UPLO)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """Eigenvalues of Hermitian (real symmetric) matrices, ascending (see `eigh`).

    JAX implementation of `numpy.linalg.eigvalsh`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.eigvalsh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
      Array([1., 3.], dtype=float32)
    """
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def _hermitian_svd(a: Any, compute_uv: bool) -> Any:
    # a = V diag(w) V^H = V diag(|w|) (V diag(sign w))^H: the singular values are |w|,
    # sorted descending with the columns of both factors.
    v, w = lax_linalg.eigh(a)
    s = _ufuncs.abs(w)
    iota = _manipulation.broadcast_to(
        _creation.arange(_u.shape(w)[-1], dtype=np.int32), _u.shape(w)
    )
    _, s, order = _sorting.sort((_ufuncs.negative(s), s, iota), dimension=-1, num_keys=1)
    if not compute_uv:
        return s
    w = _indexing.take_along_axis(w, order, axis=-1)
    cols = _manipulation.broadcast_to(order[..., None, :], _u.shape(v))
    u = _indexing.take_along_axis(v, cols, axis=-1)
    signs = _u.convert(_ufuncs.sign(w), _u.dtype(v))
    return u, s, _lu.mH(u * signs[..., None, :])


def svd(
    a: Any,
    full_matrices: bool = True,
    compute_uv: bool = True,
    hermitian: bool = False,
    subset_by_index: Any = None,
) -> Any:
    """Singular value decomposition ``a == U @ diag(S) @ Vh``.

    JAX implementation of `numpy.linalg.svd` (LAPACK ``gesdd``).

    Args:
      a: ``[..., M, N]``.
      full_matrices: `U` ``[..., M, M]`` and `Vh` ``[..., N, N]``; otherwise
        ``[..., M, K]`` and ``[..., K, N]`` with ``K = min(M, N)``.
      compute_uv: return ``SVDResult(U, S, Vh)``; otherwise only `S`.
      hermitian: `a` is Hermitian: decompose it with `eigh` (the factors are then
        ``[..., N, N]`` whatever `full_matrices`).
      subset_by_index: not supported (must be None).

    Returns:
      ``SVDResult(U, S, Vh)``, or `S` alone: real singular values ``[..., K]`` in
      descending order. Only `S` is differentiable so far.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.svd(jnp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
      Array([4., 3.], dtype=float32)
    """
    (a,) = _lu.operands("svd", a)
    _lu.check_matrix("svd", a, square=hermitian)
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported yet")
    if hermitian:
        out = _hermitian_svd(a, compute_uv)
    else:
        out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return SVDResult(*out) if compute_uv else out


def svdvals(x: Any, /) -> Any:
    """The singular values of matrices, descending (``svd(x, compute_uv=False)``).

    JAX implementation of `numpy.linalg.svdvals`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.svdvals(jnp.array([[3.0, 0.0], [0.0, -4.0]]))
      Array([4., 3.], dtype=float32)
    """
    return svd(x, compute_uv=False)


_QR_MODES = ("reduced", "complete", "r", "raw")


def qr(a: Any, mode: str = "reduced") -> Any:
    """QR decomposition ``a == Q @ R``, `Q` with orthonormal columns, `R` upper triangular.

    JAX implementation of `numpy.linalg.qr`.

    Args:
      a: ``[..., M, N]``.
      mode: ``"reduced"`` (`Q` ``[..., M, K]``, `R` ``[..., K, N]``, ``K = min(M, N)``),
        ``"complete"`` (`Q` ``[..., M, M]``, `R` ``[..., M, N]``), ``"r"`` (the reduced
        `R` alone) or ``"raw"`` (LAPACK's Householder form: ``[..., M, N]`` and the
        scales ``[..., K]``; as JAX, not transposed as NumPy's).

    Returns:
      ``QRResult(Q, R)``, or `R` (``mode="r"``), or ``QRResult(h, tau)`` (``"raw"``).

    Raises:
      ValueError: an unknown `mode`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.qr(jnp.array([[0.0, 1.0], [2.0, 3.0]]), mode="r")
      Array([[-2., -3.],
             [ 0., -1.]], dtype=float32)
    """
    (a,) = _lu.operands("qr", a)
    _lu.check_matrix("qr", a)
    if mode not in _QR_MODES:
        raise ValueError(f"qr: unsupported mode {mode!r}; use one of {', '.join(_QR_MODES)}")
    if mode == "raw":
        return QRResult(*lax_linalg.geqrf_p.bind(a))
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# ---------------------------------------------------------------------------
# Norms, ranks, condition numbers


def _sum_of_squares(x: Any, axis: Any, keepdims: bool) -> Any:
    sq = _manipulation.real(x * _manipulation.conj(x)) if _lu.is_complex(x) else x * x
    return _reductions.sum(sq, axis=axis, keepdims=keepdims)


def _vector_norm(x: Any, ord: Any, axis: int, keepdims: bool) -> Any:
    if ord is None or (not isinstance(ord, str) and ord == 2):
        return _ufuncs_math.sqrt(_sum_of_squares(x, axis, keepdims))
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    absx = _ufuncs.abs(x)
    if ord == np.inf:
        return _reductions.max(absx, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return _reductions.min(absx, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = _ufuncs.not_equal(x, 0)
        return _reductions.sum(nonzero, axis=axis, keepdims=keepdims, dtype=_u.dtype(absx))
    if ord == 1:
        return _reductions.sum(absx, axis=axis, keepdims=keepdims)
    p = _u.scalar_like(ord, absx)
    total = _reductions.sum(_ufuncs.power(absx, p), axis=axis, keepdims=keepdims)
    return _ufuncs.power(total, _ufuncs.reciprocal(p))


def _singular_values_over(x: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    s = svdvals(_manipulation.moveaxis(x, axes, (-2, -1)))
    return s, (lambda y: _manipulation.expand_dims(y, sorted(axes)) if keepdims else y)


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    row, col = axes
    if ord is None or ord == "fro":
        return _ufuncs_math.sqrt(_sum_of_squares(x, axes, keepdims))
    if ord in (1, -1, np.inf, -np.inf) and not isinstance(ord, str):
        # 1: the largest column sum (sum over the rows); inf: the largest row sum.
        summed, reduced = (row, col) if abs(ord) == 1 else (col, row)
        sums = _reductions.sum(_ufuncs.abs(x), axis=summed, keepdims=True)
        pick = _reductions.max if ord > 0 else _reductions.min
        out = pick(sums, axis=reduced, keepdims=True)
        return out if keepdims else _manipulation.squeeze(out, axes)
    if ord in ("nuc", 2, -2):
        s, restore = _singular_values_over(x, axes, keepdims)
        if ord == "nuc":
            return restore(_reductions.sum(s, axis=-1))
        return restore(s[..., 0] if ord == 2 else s[..., -1])
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector or matrix norms.

    JAX implementation of `numpy.linalg.norm`.

    Args:
      x: an array.
      ord: the order. For vectors: None or 2 (Euclidean), ``inf``, ``-inf``, 0 (the
        number of non-zeros), 1 or any other number ``p`` (``sum(|x|^p)^(1/p)``). For
        matrices: None or ``"fro"`` (Frobenius), ``"nuc"`` (sum of singular values),
        1 / -1 (largest / smallest column sum), ``inf`` / ``-inf`` (row sums), 2 / -2
        (largest / smallest singular value).
      axis: None, an int (vector norms) or a pair of ints (matrix norms). None means
        every axis with ``ord=None`` (the 2-norm of the flattened array), else the
        vector norm of a 1-D `x` or the matrix norm of a 2-D `x`.
      keepdims: keep the reduced axes with size 1.

    Returns:
      The norms, of the real dtype of (inexact) `x`.

    Raises:
      ValueError: an `ord` that does not apply, or an `axis` that is neither one
        axis nor two distinct axes.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.norm(jnp.array([3.0, 4.0]))
      Array(5., dtype=float32)
    """
    (x,) = _lu.operands("norm", x)
    nd = _u.ndim(x)
    if axis is None:
        if ord is None:
            out = _ufuncs_math.sqrt(_sum_of_squares(x, None, keepdims))
            return out
        if nd not in (1, 2):
            raise ValueError(
                f"norm: an ord without axis needs a 1-D or 2-D x, got shape {_u.shape(x)}"
            )
        axis = tuple(range(nd))
    axes = (axis,) if not isinstance(axis, tuple | list) else tuple(axis)
    try:
        axes = tuple(_u.canonicalize_axis(operator.index(ax), nd) for ax in axes)
    except TypeError:
        raise TypeError(
            f"norm: axis must be None, an int or a pair of ints, got {axis!r}"
        ) from None
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"norm: axis must be one axis or two distinct axes, got {axis!r}")
    return _matrix_norm(x, ord, axes, keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """Vector norms over `axis` (None: the whole array; a tuple: those axes together).

    JAX implementation of `numpy.linalg.vector_norm`; `ord` as for vectors in `norm`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.vector_norm(jnp.ones((2, 2)), ord=1)
      Array(4., dtype=float32)
    """
    (x,) = _lu.operands("vector_norm", x)
    nd = _u.ndim(x)
    axes = _u.reduction_axes(axis, nd)
    kept = [d for d in range(nd) if d not in axes]
    # The reduced axes become one trailing axis.
    flat = _manipulation.transpose(x, (*kept, *axes))
    flat = _manipulation.reshape(flat, (*[_u.shape(x)[d] for d in kept], -1))
    out = _vector_norm(flat, ord, len(kept), False)
    return _manipulation.expand_dims(out, axes) if keepdims else out


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """Matrix norms over the trailing two axes (`ord` as for matrices in `norm`).

    JAX implementation of `numpy.linalg.matrix_norm`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.matrix_norm(jnp.array([[3.0, 0.0], [0.0, 4.0]]), ord=2)
      Array(4., dtype=float32)
    """
    (x,) = _lu.operands("matrix_norm", x)
    _lu.check_matrix("matrix_norm", x, what="x")
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def _relative_cutoff(name: str, rtol: Any, alias: Any, alias_name: str) -> Any:
    if alias is not None:
        if rtol is not None:
            raise ValueError(f"{name}: give only one of rtol and {alias_name}")
        return alias
    return rtol


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:
    """The rank of matrices: how many singular values exceed ``rtol * max(S)``.

    JAX implementation of `numpy.linalg.matrix_rank`.

    Args:
      M: ``[..., M, N]``; a 0-D or 1-D `M` has rank 1 unless it is all zeros.
      rtol: the relative tolerance (a scalar or ``[...]``); default
        ``max(M, N) * eps``.
      hermitian: `M` is Hermitian (singular values from `eigh`).
      tol: an alias of `rtol` (JAX's), for older code.

    Returns:
      ``[...]`` int32 ranks.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.matrix_rank(jnp.array([[1.0, 2.0], [2.0, 4.0]]))
      Array(1, dtype=int32)
    """
    rtol = _relative_cutoff("matrix_rank", rtol, tol, "tol")
    (M,) = _lu.operands("matrix_rank", M)
    if _u.ndim(M) < 2:
        return _u.convert(_reductions.any(_ufuncs.not_equal(M, 0)), np.dtype(np.int32))
    m, n = _u.shape(M)[-2:]
    if min(m, n) == 0:
        return _creation.zeros(_u.shape(M)[:-2], np.int32)
    s = svd(M, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = max(m, n) * np.finfo(_u.dtype(s)).eps
    rtol = _u.convert(_creation.asarray(rtol), _u.dtype(s))
    cutoff = _ufuncs.multiply(rtol, s[..., 0])[..., None]
    return _reductions.sum(_ufuncs.greater(s, cutoff), axis=-1, dtype=np.int32)


def _pinv_core(hermitian: bool, a: Any, rtol: Any) -> Any:
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = rtol[..., None] * s[..., :1]
    kept = _ufuncs.greater(s, cutoff)
    s_inv = _selection.where(
        kept, 1 / _selection.where(kept, s, _u.scalar_like(1, s)), _u.scalar_like(0, s)
    )
    return _products.matmul(_lu.mH(vh) * _u.convert(s_inv, _u.dtype(a))[..., None, :], _lu.mH(u))


_pinv = custom_jvp(_pinv_core, nondiff_argnums=(0,))


@_pinv.defjvp
def _pinv_jvp(hermitian: bool, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # The derivative of the pseudo-inverse at constant rank (Golub and Pereyra):
    #   dp = -p da p + p p^H da^H (I - a p) + (I - p a) da^H p^H p.
    (a, rtol), (da, _) = primals, tangents
    p = _pinv(hermitian, a, rtol)
    if hermitian:  # the value depends on the Hermitian part of `a` only (see `eigh`)
        da = (da + _lu.mH(da)) / 2
    ph, dah = _lu.mH(p), _lu.mH(da)
    mm = _products.matmul
    left = mm(p, mm(ph, dah - mm(mm(dah, a), p)))
    right = mm(dah, mm(ph, p))
    right = right - mm(p, mm(a, right))
    return p, -mm(mm(p, da), p) + left + right


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse of matrices.

    JAX implementation of `numpy.linalg.pinv`, from the SVD: singular values at most
    ``rtol * max(S)`` count as zero. Its derivative is the closed form of the
    pseudo-inverse's (valid where the rank does not change).

    Args:
      a: ``[..., M, N]``.
      rtol: the relative cutoff (a scalar or ``[...]``); default
        ``10 * max(M, N) * eps`` (JAX's, not NumPy's ``1e-15``).
      hermitian: `a` is Hermitian (decomposed with `eigh`).
      rcond: an alias of `rtol`, for older code.

    Returns:
      ``[..., N, M]``.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.pinv(jnp.array([[2.0, 0.0], [0.0, 0.0]]))
      Array([[0.5, 0. ],
             [0. , 0. ]], dtype=float32)
    """
    rtol = _relative_cutoff("pinv", rtol, rcond, "rcond")
    (a,) = _lu.operands("pinv", a)
    _lu.check_matrix("pinv", a)
    m, n = _u.shape(a)[-2:]
    if m == 0 or n == 0:
        return _creation.zeros((*_u.shape(a)[:-2], n, m), _u.dtype(a))
    rdtype = _lu.real_dtype(_u.dtype(a))
    if rtol is None:
        rtol = 10.0 * max(m, n) * np.finfo(rdtype).eps
    rtol = _manipulation.broadcast_to(_u.convert(_creation.asarray(rtol), rdtype), _u.shape(a)[:-2])
    return _pinv(bool(hermitian), a, rtol)


def lstsq(
    a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = False
) -> tuple[Any, Any, Any, Any]:
    """The least-squares solution of ``a @ x == b``.

    JAX implementation of `numpy.linalg.lstsq`, through the pseudo-inverse (so `x`
    is differentiable in `a` and `b`).

    Args:
      a: ``[M, N]``.
      b: ``[M]`` or ``[M, K]``.
      rcond: singular values at most ``rcond * max(S)`` count as zero; default
        ``max(M, N) * eps``; a negative value means ``eps``.
      numpy_resid: compute the residuals as NumPy does: empty unless `a` has full
        column rank and ``M > N`` (the rank must then be concrete, so not under
        `jit`). Otherwise the residuals are always computed.

    Returns:
      ``(x, resid, rank, s)``: the solution ``[N]`` or ``[N, K]``; the squared
      residual norms ``[]`` or ``[K]``; the int32 rank of `a`; its singular values.

    Raises:
      ValueError: `a` is not 2-D, `b` is not 1-D or 2-D, or their first dimensions
        differ.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x, resid, rank, s = jnp.linalg.lstsq(jnp.array([[1.0], [0.0]]), jnp.array([2.0, 3.0]))
      >>> x, resid
      (Array([2.], dtype=float32), Array(9., dtype=float32))
    """
    a, b = _lu.operands("lstsq", a, b)
    if _u.ndim(a) != 2:
        raise ValueError(f"lstsq: a must be 2-D, got shape {_u.shape(a)}")
    if _u.ndim(b) not in (1, 2):
        raise ValueError(f"lstsq: b must be 1-D or 2-D, got shape {_u.shape(b)}")
    if _u.shape(a)[0] != _u.shape(b)[0]:
        raise ValueError(
            f"lstsq: a and b must have the same first dimension, got shapes {_u.shape(a)} "
            f"and {_u.shape(b)}"
        )
    vector = _u.ndim(b) == 1
    if vector:
        b = b[:, None]
    m, n = _u.shape(a)
    rdtype = _lu.real_dtype(_u.dtype(a))
    eps = np.finfo(rdtype).eps
    if rcond is None:
        rcond = eps * max(m, n)
    else:
        rcond = _creation.asarray(rcond, rdtype)
        rcond = _selection.where(_ufuncs.less(rcond, 0), _u.scalar_like(eps, rcond), rcond)
    if min(m, n) == 0:
        x = _creation.zeros((n, _u.shape(b)[1]), _u.dtype(a))
        s = _creation.zeros((0,), rdtype)
        rank = _creation.asarray(0, np.int32)
    else:
        s = svdvals(a)
        rank = _reductions.sum(_ufuncs.greater(s, rcond * s[0]), dtype=np.int32)
        x = _products.matmul(pinv(a, rtol=rcond), b)
    resid = _sum_of_squares(b - _products.matmul(a, x), 0, False)
    if numpy_resid:
        concrete_rank = _manipulation.concrete_or_none(rank)
        if concrete_rank is None:
            raise TypeError(
                "lstsq: numpy_resid=True needs a concrete rank, which is not known under a "
                "transformation such as jit"
            )
        if int(concrete_rank) < n or m <= n:
            resid = _creation.zeros((0,), rdtype)
    if vector:
        x = x[:, 0]
        if _u.shape(resid) == (1,):
            resid = resid[0]
    return x, resid, rank, s


def cond(x: Any, p: Any = None) -> Any:
    """The condition number of matrices in the norm of order `p`.

    JAX implementation of `numpy.linalg.cond`.

    Args:
      x: ``[..., M, N]`` (square unless `p` is None, 2 or -2).
      p: None or 2 (ratio of extreme singular values), -2 (its inverse), or any
        matrix order of `norm` (``norm(x) * norm(inv(x))``).

    Returns:
      ``[...]``; ``inf`` for singular matrices (NaN only when `x` holds NaN).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.cond(jnp.array([[1.0, 0.0], [0.0, 4.0]]))
      Array(4., dtype=float32)
    """
    (x,) = _lu.operands("cond", x)
    _lu.check_matrix("cond", x, what="x", square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = s[..., 0], s[..., -1]
        r = big / small if p != -2 else small / big
    else:
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    x_has_nan = _reductions.any(_predicates.isnan(x), axis=(-2, -1))
    bad = _ufuncs.logical_and(_predicates.isnan(r), _ufuncs.logical_not(x_has_nan))
    return _selection.where(bad, _u.scalar_like(np.inf, r), r)


# ---------------------------------------------------------------------------
# Products and tensor functions


def matrix_power(a: Any, n: int) -> Any:
    """``a`` raised to the integer power `n` (by repeated squaring).

    JAX implementation of `numpy.linalg.matrix_power`. Integer matrices stay
    integer for ``n >= 0``; a negative `n` inverts `a` first.

    Args:
      a: ``[..., M, M]``.
      n: a Python int (static).

    Returns:
      ``a^n`` (the identity for ``n == 0``).

    Raises:
      TypeError: `n` is not an integer.
      ValueError: `a` is not a stack of square matrices.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.matrix_power(jnp.array([[1, 1], [0, 1]]), 3)
      Array([[1, 3],
             [0, 1]], dtype=int32)
    """
    _u.check_arraylike("matrix_power", a)
    a = _creation.asarray(a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: the exponent must be an integer, got {n!r}") from None
    _lu.check_matrix("matrix_power", a, square=True)
    if n == 0:
        return _lu.identity_like(a)
    if n < 0:
        a, n = inv(a), -n
    result = None
    power = a
    while True:
        if n & 1:
            result = power if result is None else _products.matmul(result, power)
        n >>= 1
        if not n:
            return result
        power = _products.matmul(power, power)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices, in the order with the fewest operations.

    JAX implementation of `numpy.linalg.multi_dot`: one `einsum` whose contraction
    order opt_einsum's dynamic programming picks (optimal for chains).

    Args:
      arrays: two or more arrays; the first may be 1-D (a row vector) and the last
        1-D (a column vector); the others must be 2-D.
      precision: passed to each `dot_general`.

    Returns:
      The product (its vector dimensions dropped, as `matmul` does).

    Raises:
      ValueError: fewer than two arrays, or an array of the wrong rank.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.multi_dot([jnp.ones(2), jnp.ones((2, 3)), jnp.ones(3)])
      Array(6., dtype=float32)
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}")
    _u.check_arraylike("multi_dot", *arrays)
    letters = string.ascii_letters
    if len(arrays) + 1 > len(letters):
        raise ValueError(f"multi_dot: too many arrays ({len(arrays)})")
    specs = []
    last = len(arrays) - 1
    for i, x in enumerate(arrays):
        nd = _u.ndim(x)
        vector_ok = i in (0, last)
        if nd != 2 and not (vector_ok and nd == 1):
            allowed = "1-D or 2-D" if vector_ok else "2-D"
            raise ValueError(f"multi_dot: array {i} must be {allowed}, got shape {_u.shape(x)}")
        if nd == 2:
            specs.append(letters[i] + letters[i + 1])
        else:
            specs.append(letters[i + 1] if i == 0 else letters[i])
    out = ""
    if _u.ndim(arrays[0]) == 2:
        out += letters[0]
    if _u.ndim(arrays[-1]) == 2:
        out += letters[last + 1]
    return _einsum.einsum(",".join(specs) + "->" + out, *arrays, optimize="dp", precision=precision)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of a tensor seen as a square matrix of its first `ind` axes by the rest.

    JAX implementation of `numpy.linalg.tensorinv`.

    Args:
      a: an array with ``prod(a.shape[:ind]) == prod(a.shape[ind:])``.
      ind: how many leading axes index the rows (a positive int).

    Returns:
      An array of shape ``a.shape[ind:] + a.shape[:ind]``.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.tensorinv(2 * jnp.eye(4).reshape(4, 2, 2), ind=1).shape
      (2, 2, 4)
    """
    (a,) = _lu.operands("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    shape = _u.shape(a)
    rows, cols = int(np.prod(shape[:ind])), int(np.prod(shape[ind:]))
    if rows != cols:
        raise ValueError(
            f"tensorinv: prod(a.shape[:ind]) must equal prod(a.shape[ind:]), got shape "
            f"{shape} with ind={ind}"
        )
    out = inv(_manipulation.reshape(a, (rows, cols)))
    return _manipulation.reshape(out, (*shape[ind:], *shape[:ind]))


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> Any:
    """Solves the tensor equation ``tensordot(a, x, x.ndim) == b`` for `x`.

    JAX implementation of `numpy.linalg.tensorsolve`.

    Args:
      a: an array of shape ``b.shape + x.shape`` (after moving `axes` to the end).
      b: the right-hand side.
      axes: axes of `a` to move to the end first.

    Returns:
      `x`, of shape ``a.shape[b.ndim:]``.

    Raises:
      ValueError: the shapes do not form a square system.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.tensorsolve(2 * jnp.eye(4).reshape(2, 2, 4), jnp.ones((2, 2)))
      Array([0.5, 0.5, 0.5, 0.5], dtype=float32)
    """
    a, b = _lu.operands("tensorsolve", a, b)
    if axes is not None:
        nd = _u.ndim(a)
        moved = [_u.canonicalize_axis(ax, nd) for ax in axes]
        a = _manipulation.transpose(a, [d for d in range(nd) if d not in moved] + moved)
    sa, sb = _u.shape(a), _u.shape(b)
    x_shape = sa[len(sb) :]
    size = int(np.prod(x_shape))
    if sa[: len(sb)] != sb or int(np.prod(sb)) != size:
        raise ValueError(
            f"tensorsolve: a must have shape b.shape + x.shape with prod(b.shape) == "
            f"prod(x.shape), got a: {sa}, b: {sb}"
        )
    x = solve(_manipulation.reshape(a, (size, size)), _manipulation.ravel(b))
    return _manipulation.reshape(x, x_shape)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Cross products of 3-vectors along `axis` (other axes broadcast).

    JAX implementation of `numpy.linalg.cross` (the Array API's: 3-vectors only).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
      Array([0., 0., 1.], dtype=float32)
    """
    _u.check_arraylike("cross", x1, x2)
    for name, x in (("x1", x1), ("x2", x2)):
        shape = np.shape(x) if not hasattr(x, "aval") else _u.shape(x)
        if not shape or shape[axis] != 3:
            raise ValueError(
                f"cross: {name} must have size 3 along axis {axis}, got shape {tuple(shape)}"
            )
    return _products.cross(x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors.

    JAX implementation of `numpy.linalg.outer` (1-D operands only).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.outer(jnp.array([1, 2]), jnp.array([3, 4]))
      Array([[3, 4],
             [6, 8]], dtype=int32)
    """
    _u.check_arraylike("outer", x1, x2)
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(
            f"outer: x1 and x2 must be 1-D, got {np.ndim(x1)}-D and {np.ndim(x2)}-D arrays"
        )
    return _products.outer(x1, x2)


def matmul(
    x1: Any, x2: Any, /, *, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """The matrix product (`jnp.matmul`, the Array API's positional-only form).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.matmul(jnp.ones((2, 3)), jnp.ones(3))
      Array([3., 3.], dtype=float32)
    """
    return _products.matmul(
        x1, x2, precision=precision, preferred_element_type=preferred_element_type
    )


def tensordot(
    x1: Any,
    x2: Any,
    /,
    *,
    axes: Any = 2,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The tensor contraction of `jnp.tensordot` (the Array API's form).

    Args:
      x1, x2: the arrays.
      axes: as `jnp.tensordot`'s.
      precision: None, a `lax.Precision` (or name), or a pair of them.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.tensordot(jnp.ones((2, 3)), jnp.ones((3, 4)), axes=1).shape
      (2, 4)
    """
    return _products.tensordot(
        x1,
        x2,
        axes=axes,
        precision=precision,
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The vector dot product along `axis`, conjugating `x1` (`jnp.vecdot`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.vecdot(jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0]))
      Array(11., dtype=float32)
    """
    return _products.vecdot(
        x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
    )


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the `offset` diagonal of the trailing two axes.

    JAX implementation of `numpy.linalg.trace` (``jnp.trace(x, offset, -2, -1)``).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.trace(jnp.ones((2, 3, 3)))
      Array([3., 3.], dtype=float32)
    """
    _u.check_arraylike("trace", x)
    _lu.check_matrix("trace", _creation.asarray(x), what="x")
    return _products.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The `offset` diagonal of the trailing two axes.

    JAX implementation of `numpy.linalg.diagonal`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.diagonal(jnp.array([[1, 2], [3, 4]]))
      Array([1, 4], dtype=int32)
    """
    _u.check_arraylike("diagonal", x)
    _lu.check_matrix("diagonal", _creation.asarray(x), what="x")
    return _matrices.diagonal(x, offset, axis1=-2, axis2=-1)


def matrix_transpose(x: Any, /) -> Any:
    """Transposes the trailing two axes (`jnp.matrix_transpose`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linalg.matrix_transpose(jnp.ones((2, 3))).shape
      (3, 2)
    """
    return _manipulation.matrix_transpose(x)
