"""The `scipy.linalg` functions built on the Schur and Hessenberg decompositions.

- `schur`, `hessenberg`: LAPACK's ``gees`` / ``gehrd`` (`lax.linalg.schur`,
  `lax.linalg.hessenberg`); like JAX, not differentiable.
- `rsf2csf`: Givens rotations that zero each subdiagonal entry of the real
  Schur form's 2x2 blocks, from the bottom up (one rotation per position,
  applied where the entry is not negligible).
- `funm`: Parlett's recurrence on the complex Schur form,
  ``F[i, j] = (T[i, j] (F[j, j] - F[i, i]) + sum_k (T[i, k] F[k, j] - F[i, k] T[k, j]))
  / (T[j, j] - T[i, i])``, one superdiagonal at a time; it needs distinct
  eigenvalues (repeated ones give inf/NaN, as SciPy warns).
- `solve_sylvester`: Bartels-Stewart: with ``A = U R U^H`` and ``B = V S V^H``
  (complex Schur forms), ``R Y + Y S = U^H C V`` is solved column by column by
  triangular solves.
- `eigh_tridiagonal`: `eigh` of the dense tridiagonal matrix (differentiable).
- `qr_multiply`: the economic `qr`, then the product.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import _schur as lax_schur
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy import linalg as np_linalg


def _square(name: str, a: Any, complex_ok: bool = True) -> Any:
    _u.check_arraylike(name, a)
    (a,) = _u.promote_dtypes_inexact(jnp.asarray(a))
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name}: expected a square matrix, got shape {a.shape}.")
    return a


def _complex_dtype(dtype: Any) -> Any:
    return jnp.result_type(dtype, np.complex64)


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """The Schur decomposition ``a = z @ t @ z^H``.

    Args:
      a: a square matrix.
      output: "real" (quasi triangular `t` for real `a`) or "complex" (triangular `t`).

    Returns:
      ``(t, z)``.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> t, z = linalg.schur(np.float32([[1, 2], [0, 3]]))
      >>> t
      Array([[1., 2.],
             [0., 3.]], dtype=float32)
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}.")
    a = _square("schur", a)
    if output == "complex":
        a = a.astype(_complex_dtype(a.dtype))
    return lax_schur.schur(a)


def hessenberg(
    a: Any, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> Any:
    """The upper Hessenberg form ``h = q^H @ a @ q`` of a square matrix.

    Returns:
      `h`, or ``(h, q)`` with `calc_q`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.hessenberg(np.float32([[1, 2], [3, 4]]))
      Array([[1., 2.],
             [3., 4.]], dtype=float32)
    """
    del overwrite_a, check_finite
    a = _square("hessenberg", a)
    n = a.shape[0]
    packed, taus = lax_schur.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    if n <= 1:
        return h, jnp.eye(n, dtype=a.dtype)
    q_inner = lax_linalg.householder_product(packed[1:, :-1], taus)
    q = jnp.eye(n, dtype=a.dtype).at[1:, 1:].set(q_inner)
    return h, q


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """Converts a real Schur form ``(T, Z)`` into the complex one.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> t, z = linalg.rsf2csf(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))
      >>> t
      Array([[1.+0.j, 0.+0.j],
             [0.+0.j, 1.+0.j]], dtype=complex64)
    """
    del check_finite
    T, Z = _square("rsf2csf", T), _square("rsf2csf", Z)
    if T.shape != Z.shape:
        raise ValueError(f"rsf2csf: T and Z must have the same shape, got {T.shape} and {Z.shape}.")
    dtype = _complex_dtype(jnp.result_type(T.dtype, Z.dtype))
    return _rsf2csf(T.astype(dtype), Z.astype(dtype))


@jit
def _rsf2csf(T: Any, Z: Any) -> tuple[Any, Any]:
    n, dtype = T.shape[0], T.dtype
    eps = np.finfo(dtype).eps
    for m in range(n - 1, 0, -1):
        sub = T[m, m - 1]
        block = T[m - 1 : m + 1, m - 1 : m + 1]
        # The eigenvalue of the 2x2 block nearest T[m, m], shifted by it.
        tr = block[0, 0] + block[1, 1]
        det = block[0, 0] * block[1, 1] - block[0, 1] * block[1, 0]
        root = jnp.sqrt(tr * tr / 4 - det)
        mu = tr / 2 + root - T[m, m]
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(sub) ** 2)
        active = jnp.abs(sub) > eps * (jnp.abs(block[0, 0]) + jnp.abs(block[1, 1]))
        safe_r = jnp.where(active, r, 1.0)
        c, s = mu / safe_r, sub / safe_r
        g = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        g = jnp.where(active, g, jnp.eye(2, dtype=dtype))
        gh = jnp.conj(g.T)
        T = T.at[m - 1 : m + 1, m - 1 :].set(g @ T[m - 1 : m + 1, m - 1 :])
        T = T.at[: m + 1, m - 1 : m + 1].set(T[: m + 1, m - 1 : m + 1] @ gh)
        Z = Z.at[:, m - 1 : m + 1].set(Z[:, m - 1 : m + 1] @ gh)
        T = T.at[m, m - 1].set(jnp.where(active, 0, T[m, m - 1]))
    return jnp.triu(T), Z


def _parlett(t: Any, f_diag: Any) -> Any:
    """`f(t)` for upper triangular `t` with distinct diagonal, given `f` of its diagonal."""
    n = t.shape[0]
    f = jnp.diag(f_diag)
    for p in range(1, n):
        for i in range(n - p):
            j = i + p
            s = t[i, j] * (f[j, j] - f[i, i])
            if p > 1:
                s = s + t[i, i + 1 : j] @ f[i + 1 : j, j] - f[i, i + 1 : j] @ t[i + 1 : j, j]
            f = f.at[i, j].set(s / (t[j, j] - t[i, i]))
    return f


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """The matrix function `func(A)`, for `func` applied elementwise to eigenvalues.

    Args:
      A: a square matrix (with distinct eigenvalues: Parlett's recurrence).
      func: a function of a complex array, applied to the Schur form's diagonal.
      disp: return only the result (True) or ``(result, errest)``.

    Returns:
      The complex `func(A)`; with ``disp=False`` also ``errest``, the relative
      residual ``||T F - F T||_1 / ||F||_1`` of the triangular problem (it is 0
      for an exact `F`, since `F` commutes with `T`).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.funm(np.float32([[1, 0], [0, 2]]), lambda x: x * x)
      Array([[1.+0.j, 0.+0.j],
             [0.+0.j, 4.+0.j]], dtype=complex64)
    """
    A = _square("funm", A)
    t, z = schur(A, output="complex")
    # One compiled program for the recurrence (it is O(n^2) small operations).
    f = jit(lambda t: _parlett(t, func(jnp.diagonal(t))))(t)
    result = z @ f @ jnp.conj(z.T)
    if disp:
        return result
    err = np_linalg.norm(t @ f - f @ t, 1) / np_linalg.norm(f, 1)
    return result, err


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8) -> Any:
    """Solves the Sylvester equation ``A @ X + X @ B = C``.

    Args:
      A: ``[m, m]``; B: ``[n, n]``; C: ``[m, n]``.
      method: only "schur" (Bartels-Stewart).
      tol: where some ``|lambda_i(A) + mu_j(B)| < tol`` the equation is (near)
        singular and the result is NaN (as JAX).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.solve_sylvester(2 * np.eye(2, dtype=np.float32),
      ...                        3 * np.eye(2, dtype=np.float32), np.ones((2, 2), np.float32))
      Array([[0.2, 0.2],
             [0.2, 0.2]], dtype=float32)
    """
    if method != "schur":
        raise ValueError(f"solve_sylvester: method must be 'schur', got {method!r}.")
    A, B = _square("solve_sylvester", A), _square("solve_sylvester", B)
    _u.check_arraylike("solve_sylvester", C)
    A, B, C = _u.promote_dtypes_inexact(A, B, jnp.asarray(C))
    m, n = A.shape[0], B.shape[0]
    if C.shape != (m, n):
        raise ValueError(f"solve_sylvester: C must have shape {(m, n)}, got {C.shape}.")
    r, u = schur(A, output="complex")
    s, v = schur(B, output="complex")
    x = _bartels_stewart(r, u, s, v, C, tol)
    return x if _u.issubdtype_of(C, np.complexfloating) else jnp.real(x)


@jit
def _bartels_stewart(r: Any, u: Any, s: Any, v: Any, C: Any, tol: Any) -> Any:
    """`X` from the complex Schur forms ``A = u r u^H``, ``B = v s v^H``."""
    m, n = r.shape[0], s.shape[0]
    f = jnp.conj(u.T) @ C.astype(r.dtype) @ v
    cols = []
    for k in range(n):
        rhs = f[:, k]
        for j in range(k):
            rhs = rhs - s[j, k] * cols[j]
        shifted = r + s[k, k] * jnp.eye(m, dtype=r.dtype)
        solved = lax_linalg.triangular_solve(shifted, rhs[:, None], left_side=True, lower=False)
        cols.append(solved[:, 0])
    y = jnp.stack(cols, axis=1)
    x = u @ y @ jnp.conj(v.T)
    gaps = jnp.abs(jnp.diagonal(r)[:, None] + jnp.diagonal(s)[None, :])
    return jnp.where(jnp.min(gaps) < tol, jnp.full_like(x, np.nan), x)


def eigh_tridiagonal(
    d: Any,
    e: Any,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range: tuple[float, float] | None = None,
    tol: float | None = None,
    key: Any = None,
) -> Any:
    """Eigenvalues (and vectors) of the real symmetric tridiagonal matrix with diagonal `d`
    and off-diagonal `e`.

    Args:
      d: ``[n]``; e: ``[n - 1]``.
      eigvals_only: return only the (ascending) eigenvalues.
      select: "a" (all) or "i" (the indices `select_range`, inclusive); "v" raises
        `NotImplementedError`, as in JAX (its result size depends on values).
      tol, key: accepted and unused (the dense solver needs neither).

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> linalg.eigh_tridiagonal(np.float32([2, 2]), np.float32([1]), eigvals_only=True)
      Array([1., 3.], dtype=float32)
    """
    del tol, key
    _u.check_arraylike("eigh_tridiagonal", d, e)
    d, e = _u.promote_dtypes_inexact(jnp.asarray(d), jnp.asarray(e))
    if d.ndim != 1 or e.shape != (max(d.shape[0] - 1, 0),):
        raise ValueError(
            f"eigh_tridiagonal: d must be [n] and e [n - 1], got {d.shape} and {e.shape}."
        )
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    if select not in ("a", "i"):
        raise ValueError(f"eigh_tridiagonal: select must be 'a', 'i' or 'v', got {select!r}.")
    n = d.shape[0]
    t = jnp.diag(d) + jnp.diag(e, 1) + jnp.diag(jnp.conj(e), -1)
    w, v = np_linalg.eigh(t)
    if select == "i":
        if select_range is None:
            raise ValueError("eigh_tridiagonal: select='i' needs select_range=(lo, hi).")
        lo, hi = (int(i) for i in select_range)
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh_tridiagonal: select_range {select_range} out of [0, {n}).")
        w, v = w[lo : hi + 1], v[:, lo : hi + 1]
    return w if eigvals_only else (w, v)


def qr_multiply(
    a: Any,
    c: Any,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
) -> tuple[Any, ...]:
    """The product of `Q` (from the economic QR decomposition of `a`) with `c`.

    Args:
      a: ``[M, N]``.
      c: with ``mode="right"``, ``c @ Q`` (`c`'s last axis has length `M`); with
        ``mode="left"``, ``Q @ c`` (`c`'s first axis has length ``min(M, N)``).
      pivoting: also return the column permutation (the identity: QR without pivoting).
      conjugate: use ``conj(Q)``.

    Returns:
      ``(product, R)``, or ``(product, R, P)`` with `pivoting`.

    Example:
      >>> from polyjax_numpy.scipy import linalg
      >>> cq, r = linalg.qr_multiply(np.eye(2, dtype=np.float32), np.float32([1, 2]))
      >>> cq
      Array([1., 2.], dtype=float32)
    """
    del overwrite_a, overwrite_c
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}.")
    _u.check_arraylike("qr_multiply", a, c)
    a, c = _u.promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if a.ndim != 2:
        raise ValueError(f"qr_multiply: a must be a matrix, got shape {a.shape}.")
    q, r = np_linalg.qr(a, mode="reduced")
    if conjugate:
        q = jnp.conj(q)
    m, k = q.shape
    if mode == "right":
        if c.shape[-1] != m:
            raise ValueError(
                f"Array shapes are not compatible for c @ Q operation: a has shape {a.shape} so "
                f"Q has {m} rows, but c has {c.shape[-1]} columns (expected {m})."
            )
        product = c @ q
    else:
        if c.shape[0] != k:
            raise ValueError(
                f"Array shapes are not compatible for Q @ c operation: a has shape {a.shape} so "
                f"Q has {k} columns, but c has {c.shape[0]} rows (expected {k})."
            )
        product = q @ c
    if pivoting:
        return product, r, jnp.arange(a.shape[1], dtype=np.int32)
    return product, r
