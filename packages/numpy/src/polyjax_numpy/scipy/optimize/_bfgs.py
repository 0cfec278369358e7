"""The BFGS quasi-Newton method, staged out as one `lax.while_loop`.

Each iteration steps along `p = -H g`, where `H` approximates the inverse
Hessian, by a step length from the strong-Wolfe line search (which makes
`y . s > 0`, so the update keeps `H` positive definite), then updates

    H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T,   rho = 1 / (y . s),

with `s` the step and `y` the change of gradient. `H` starts as the identity.
The iteration stops when the gradient's norm is below `gtol`, after `maxiter`
iterations, or when a line search fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from polyjax_interpreters.ad import value_and_grad
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.optimize._line_search import line_search

# BFGS status codes (as JAX's): 0 converged, 1 maxiter reached, 3 a line search
# failed to shrink its interval, 4 not a descent direction, 5 a line search ran
# out of evaluations.
CONVERGED = 0
MAXITER = 1


class BFGSResults(NamedTuple):
    """The state of a BFGS minimization, also its final result.

    Attributes:
      converged: whether the gradient norm fell below `gtol`.
      failed: whether a line search failed.
      k: iterations done.
      nfev, ngev: evaluations of the function and of its gradient.
      x_k, f_k, g_k: the current point, its value and gradient.
      H_k: the current inverse Hessian approximation.
      old_old_fval: the value at the previous point.
      status: 0 converged, 1 maxiter reached, 3/4/5 line search failures.
      line_search_status: the last line search's status.
    """

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def norm(g: Any, order: float) -> Any:
    """The vector norm of `g` used by the convergence tests (`inf`: the largest magnitude)."""
    if order == np.inf:
        return jnp.max(jnp.abs(g))
    if order == -np.inf:
        return jnp.min(jnp.abs(g))
    return jnp.sum(jnp.abs(g) ** order) ** (1 / order)


def minimize_bfgs(
    fun: Callable[[Any], Any],
    x0: Any,
    maxiter: int | None = None,
    norm_order: float = np.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> BFGSResults:
    """Minimizes `fun` from `x0` with BFGS.

    Args:
      fun: `x -> scalar`, differentiable.
      x0: the starting point, a vector.
      maxiter: the most iterations (default `200 * x0.size`).
      norm_order: the order of the gradient norm compared with `gtol`.
      gtol: the gradient norm below which the minimization has converged.
      line_search_maxiter: the most function evaluations of one line search.

    Returns:
      The final `BFGSResults`.
    """
    if maxiter is None:
        maxiter = 200 * x0.size
    fg = value_and_grad(fun)
    f0, g0 = fg(x0)
    n = x0.shape[0]
    eye = jnp.eye(n, dtype=x0.dtype)
    init = BFGSResults(
        converged=norm(g0, norm_order) < gtol,
        failed=jnp.zeros((), bool),
        k=jnp.zeros((), jnp.int32),
        nfev=jnp.ones((), jnp.int32),
        ngev=jnp.ones((), jnp.int32),
        nhev=jnp.zeros((), jnp.int32),
        x_k=x0,
        f_k=f0,
        g_k=g0,
        H_k=eye,
        old_old_fval=f0 + jnp.linalg.norm(g0) / 2,
        status=jnp.zeros((), jnp.int32),
        line_search_status=jnp.zeros((), jnp.int32),
    )

    def cond(s: BFGSResults) -> Any:
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s: BFGSResults) -> BFGSResults:
        p = -(s.H_k @ s.g_k)
        ls = line_search(fg, s.x_k, p, s.f_k, s.g_k, maxiter=line_search_maxiter)
        step = ls.a * p
        x_new = s.x_k + step
        y = ls.g - s.g_k
        rho = 1 / jnp.dot(y, step)
        left = eye - rho * jnp.outer(step, y)
        h_new = left @ s.H_k @ left.T + rho * jnp.outer(step, step)
        # A failed search leaves the state as it was; a zero curvature keeps H.
        keep = ls.failed
        h_new = jnp.where(jnp.isfinite(rho), h_new, s.H_k)
        return BFGSResults(
            converged=~keep & (norm(ls.g, norm_order) < gtol),
            failed=keep,
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.nfev,
            nhev=s.nhev,
            x_k=jnp.where(keep, s.x_k, x_new),
            f_k=jnp.where(keep, s.f_k, ls.f),
            g_k=jnp.where(keep, s.g_k, ls.g),
            H_k=jnp.where(keep, s.H_k, h_new),
            old_old_fval=s.f_k,
            status=jnp.where(keep, ls.status, s.status).astype(jnp.int32),
            line_search_status=ls.status,
        )

    s = lax.while_loop(cond, body, init)
    status = jnp.where(s.converged, CONVERGED, jnp.where(s.failed, s.status, MAXITER)).astype(
        jnp.int32
    )
    return s._replace(status=status)
