"""Sparse linear algebra: `spsolve` and `lobpcg_standard`.

`spsolve` solves with the compressed-row matrix densified (an LU solve: its
cost is the dense one); `lobpcg_standard` finds the largest eigenpairs of a
symmetric operator by LOBPCG iterations (block Rayleigh-Ritz on the current
vectors, their residuals and the previous directions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax.experimental.sparse.csr import CSR

__all__ = ["lobpcg_standard", "spsolve"]


def spsolve(
    data: Any, indices: Any, indptr: Any, b: Any, tol: float = 1e-6, reorder: int = 1
) -> Any:
    """The solution `x` of ``A @ x = b`` for the square CSR matrix ``A = (data, indices, indptr)``.

    Args:
      data: the stored values.
      indices: their columns.
      indptr: the row pointers.
      b: the right-hand side vector.
      tol: accepted for JAX's signature (the solve is direct).
      reorder: accepted for JAX's signature.

    Raises:
      ValueError: `b` does not fit the matrix.
    """
    del tol, reorder
    b = jnp.asarray(b)
    n = int(jnp.shape(indptr)[0]) - 1
    if b.shape != (n,):
        raise ValueError(f"spsolve: b of shape {b.shape} does not fit a {n}x{n} matrix.")
    a = CSR((data, indices, indptr), shape=(n, n)).todense()
    return jnp.linalg.solve(a, b.astype(a.dtype))


def _orthonormal(x: Any) -> Any:
    q, _ = jnp.linalg.qr(x)
    return q


def lobpcg_standard(A: Any, X: Any, m: int = 100, tol: Any = None) -> tuple[Any, Any, Any]:
    """The `k` largest eigenvalues and eigenvectors of the symmetric operator `A`.

    Args:
      A: a symmetric matrix (dense or sparse) or a function ``A(X)`` of an
        ``(n, k)`` block.
      X: ``(n, k)`` initial vectors (``n >= 5 k``, as in JAX).
      m: the most iterations.
      tol: the residual norm (relative to the eigenvalue) at which to stop;
        default: 10 n times the dtype's epsilon.

    Returns:
      ``(theta, U, i)``: the `k` eigenvalues in decreasing order, their
      eigenvectors as the columns of `U`, and the iterations run.

    Raises:
      ValueError: `X` is not a tall enough block.
    """
    X = jnp.asarray(X)
    n, k = X.shape
    if n < 5 * k:
        raise ValueError(f"lobpcg_standard: X of shape {X.shape} needs n >= 5 * k.")
    apply: Callable[[Any], Any] = (
        A if callable(A) and not hasattr(A, "shape") else (lambda v: A @ v)
    )
    tol = float(np.finfo(np.dtype(X.dtype)).eps) * 10 * n if tol is None else tol

    def rayleigh_ritz(S: Any) -> tuple[Any, Any]:
        S = _orthonormal(S)
        w, v = jnp.linalg.eigh(S.T @ apply(S))
        order = jnp.argsort(-w)[:k]
        return w[order], S @ v[:, order]

    theta, U = rayleigh_ritz(X)
    P = jnp.zeros_like(U)

    def cond(state: Any) -> Any:
        i, _, _, _, converged = state
        return (i < m) & ~converged

    def body(state: Any) -> Any:
        i, theta, U, P, _ = state
        R = apply(U) - U * theta
        converged = jnp.all(jnp.linalg.norm(R, axis=0) <= tol * jnp.maximum(jnp.abs(theta), 1.0))
        theta_new, U_new = rayleigh_ritz(jnp.concatenate([U, R, P], axis=1))
        P_new = U_new - U @ (U.T @ U_new)
        keep = lambda new, old: jnp.where(converged, old, new)  # noqa: E731
        return i + 1, keep(theta_new, theta), keep(U_new, U), keep(P_new, P), converged

    i, theta, U, _, _ = polyjax.lax.while_loop(
        cond, body, (jnp.int32(0), theta, U, P, jnp.bool_(False))
    )
    return theta, U, i
