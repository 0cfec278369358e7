"""`qdwh`: the polar decomposition ``x = u @ h`` by QR-based dynamically weighted Halley iterations.

QDWH (Nakatsukasa, Bai and Gygi, 2010) drives every singular value of a scaled
`x` to one, keeping the singular vectors: the limit is the unitary polar factor
`u`, and ``h = u^H x`` the Hermitian positive semidefinite one. Each iteration
is the rational map

    u <- u (a I + b u^H u) (I + c u^H u)^{-1}

whose weights `a`, `b`, `c` come from `l`, a lower bound on the smallest
singular value of `u` (the bound improves each step and tends to one). While
`c` is large the map is computed through a QR decomposition of ``[sqrt(c) u; I]``
(backward stable); once ``c <= 100`` through a Cholesky factorization of
``I + c u^H u`` (cheaper, and stable there). The loop (a `while_loop`) stops
when `u` moves less than ``cbrt(eps)`` (in Frobenius norm) and `l` is within
that of one, or after `max_iterations`.

A composition of other primitives (as in JAX: `qdwh` is a function, not a
primitive), so `jit`, `vmap` and the derivative rules of its parts apply.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._complex import conj
from polyjax_numpy.lax._cond import cond
from polyjax_numpy.lax._dot import batch_matmul
from polyjax_numpy.lax._reductions import reduce_max, reduce_sum
from polyjax_numpy.lax._shape_ops import broadcasted_iota, concatenate, slice, transpose
from polyjax_numpy.lax._while import while_loop

__all__ = ["Factorizations", "qdwh"]


def _H(x: Any) -> Any:
    aval = get_aval(x)
    x = transpose(x, (*range(aval.ndim - 2), aval.ndim - 1, aval.ndim - 2))
    return conj(x) if np.issubdtype(aval.dtype, np.complexfloating) else x


def _eye(n: int, dtype: Any) -> Any:
    rows = broadcasted_iota(np.int32, (n, n), 0)
    cols = broadcasted_iota(np.int32, (n, n), 1)
    return ew.convert_element_type(ew.eq(rows, cols), dtype)


def _scale(s: Any, x: Any) -> Any:
    """The real scalar `s` times `x` (complex `x` included)."""
    return ew.mul(ew.convert_element_type(s, get_aval(x).dtype), x)


def _frobenius(x: Any) -> Any:
    a = ew.abs(x)
    return ew.sqrt(reduce_sum(ew.mul(a, a), (0, 1)))


def _weights(bound: Any) -> tuple[Any, Any, Any]:
    """The dynamically weighted Halley parameters for the lower bound `bound` (`l`)."""
    bound2 = ew.mul(bound, bound)
    dd = ew.cbrt(ew.div(ew.mul(4.0, ew.sub(ew.div(1.0, bound2), 1.0)), bound2))
    sqd = ew.sqrt(ew.add(1.0, dd))
    inner = ew.add(
        ew.sub(8.0, ew.mul(4.0, dd)), ew.div(ew.mul(8.0, ew.sub(2.0, bound2)), ew.mul(bound2, sqd))
    )
    a = ew.add(sqd, ew.div(ew.sqrt(inner), 2.0))
    b = ew.div(ew.mul(ew.sub(a, 1.0), ew.sub(a, 1.0)), 4.0)
    c = ew.sub(ew.add(a, b), 1.0)
    return a, b, c


class Factorizations(NamedTuple):
    """The factorizations the iterations use, given by `linalg` (which defines them)."""

    qr: Callable[..., Any]
    cholesky: Callable[..., Any]
    triangular_solve: Callable[..., Any]


def _qr_step(f: Factorizations, u: Any, a: Any, b: Any, c: Any) -> Any:
    """``(b/c) u + (a - b/c)/sqrt(c) q1 q2^H`` with ``[sqrt(c) u; I] = [q1; q2] r``."""
    m, n = get_aval(u).shape
    dtype = get_aval(u).dtype
    stacked = concatenate([_scale(ew.sqrt(c), u), _eye(n, dtype)], 0)
    q, _ = f.qr(stacked, full_matrices=False)
    q1, q2 = slice(q, (0, 0), (m, n)), slice(q, (m, 0), (m + n, n))
    e = ew.div(b, c)
    return ew.add(_scale(e, u), _scale(ew.div(ew.sub(a, e), ew.sqrt(c)), batch_matmul(q1, _H(q2))))


def _cholesky_step(f: Factorizations, u: Any, a: Any, b: Any, c: Any) -> Any:
    """``(b/c) u + (a - b/c) u z^{-1}`` with ``z = I + c u^H u = L L^H``."""
    n = get_aval(u).shape[1]
    dtype = get_aval(u).dtype
    z = ew.add(_eye(n, dtype), _scale(c, batch_matmul(_H(u), u)))
    chol = f.cholesky(z, symmetrize_input=False)
    # u z^{-1} = u L^{-H} L^{-1}: two triangular solves from the right.
    y = f.triangular_solve(chol, u, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    y = f.triangular_solve(chol, y, left_side=False, lower=True)
    e = ew.div(b, c)
    return ew.add(_scale(e, u), _scale(ew.sub(a, e), y))


def qdwh(
    x: Any,
    factorizations: Factorizations,
    *,
    is_hermitian: bool = False,
    max_iterations: int | None = None,
    eps: float | None = None,
    dynamic_shape: tuple[int, int] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """`linalg.qdwh` (which documents it), with the factorizations it uses."""
    aval = get_aval(x)
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape is not supported")
    if aval.ndim != 2:
        raise ValueError(f"qdwh needs a matrix [m, n], got shape {tuple(aval.shape)}")
    m, n = aval.shape
    if m < n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    dtype = np.dtype(aval.dtype)
    if dtype.kind not in "fc":
        raise ValueError(f"qdwh: data type {dtype} not inexact (a floating or complex matrix)")
    real_dtype = np.finfo(dtype).dtype
    eps = float(np.finfo(dtype).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    tol = np.asarray(np.cbrt(eps), real_dtype)
    one = np.asarray(1.0, real_dtype)

    # ||x||_2 <= sqrt(||x||_1 ||x||_inf): scaled so, every singular value is at most one.
    absx = ew.abs(x)
    norm1 = reduce_max(reduce_sum(absx, (0,)), (0,))
    norm_inf = reduce_max(reduce_sum(absx, (1,)), (0,))
    norm = ew.sqrt(ew.mul(norm1, norm_inf))
    is_zero = ew.eq(norm, np.asarray(0.0, real_dtype))
    u0 = _scale(ew.select_n(is_zero, ew.div(one, norm), one), x)

    def keep_going(state: tuple) -> Any:
        k, _, bound, diff = state
        moving = ew.bitwise_or(ew.gt(diff, tol), ew.gt(ew.abs(ew.sub(one, bound)), tol))
        return ew.bitwise_and(ew.lt(k, np.int32(max_iterations)), moving)

    def step(state: tuple) -> tuple:
        k, u, bound, _ = state
        a, b, c = _weights(bound)
        new_u = cond(
            ew.gt(c, np.asarray(100.0, real_dtype)),
            functools.partial(_qr_step, factorizations),
            functools.partial(_cholesky_step, factorizations),
            u,
            a,
            b,
            c,
        )
        new_l = ew.div(
            ew.mul(bound, ew.add(a, ew.mul(b, ew.mul(bound, bound)))),
            ew.add(one, ew.mul(c, ew.mul(bound, bound))),
        )
        return ew.add(k, 1), new_u, ew.min(new_l, one), _frobenius(ew.sub(new_u, u))

    init = (0, u0, np.asarray(eps, real_dtype), np.asarray(np.inf, real_dtype))
    k, u, bound, diff = while_loop(keep_going, step, init)
    converged = ew.bitwise_and(ew.le(diff, tol), ew.le(ew.abs(ew.sub(one, bound)), tol))
    h = batch_matmul(_H(u), x)
    h = ew.mul(np.asarray(0.5, dtype), ew.add(h, _H(h)))  # exactly Hermitian (real diagonal)
    return u, h, k, converged
