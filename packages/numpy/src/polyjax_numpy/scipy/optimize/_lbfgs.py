"""Limited-memory BFGS (experimental, as in JAX), staged out as one `lax.while_loop`.

Instead of a dense inverse Hessian, the last `maxcor` steps `s_i` and gradient
changes `y_i` are kept (newest last), and `H g` is applied by the two-loop
recursion (Nocedal and Wright, algorithm 7.4), starting from the scaled
identity `gamma I` with `gamma = s.y / y.y` of the newest pair. Steps come
from the strong-Wolfe line search.

It stops when the gradient norm is below `gtol` or the relative decrease of
`f` is at most `ftol` (both count as converged), or when a budget runs out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from polyjax_interpreters.ad import value_and_grad
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.optimize._bfgs import norm
from polyjax_numpy.scipy.optimize._line_search import line_search

# L-BFGS status codes: 0 converged (gradient norm), 1 maxiter reached, 2 maxfun
# reached, 3 maxgrad reached, 4 converged (relative decrease of f below ftol),
# 5 a line search failed.
CONVERGED = 0
MAXITER = 1
MAXFUN = 2
MAXGRAD = 3
FTOL = 4
LINE_SEARCH_FAILED = 5


class LBFGSResults(NamedTuple):
    """The state of an L-BFGS minimization, also its final result.

    Attributes:
      converged: whether a convergence test passed (`gtol` or `ftol`).
      failed: whether a line search failed.
      k: iterations done.
      nfev, ngev: evaluations of the function and of its gradient.
      x_k, f_k, g_k: the current point, its value and gradient.
      s_history, y_history, rho_history: the kept pairs (newest last) and
        `1 / (y . s)` of each (0 marks an empty slot).
      gamma: the scale of the initial inverse Hessian.
      status: see the module's status codes.
      ls_status: the last line search's status.
    """

    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _two_loop(g: Any, s_hist: Any, y_hist: Any, rho: Any, gamma: Any) -> Any:
    """`H g` for the L-BFGS inverse Hessian of the history (empty slots have `rho = 0`)."""
    m = s_hist.shape[0]
    q = g
    alphas = []
    for i in reversed(range(m)):
        a = rho[i] * jnp.dot(s_hist[i], q)
        q = q - a * y_hist[i]
        alphas.append(a)
    r = gamma * q
    for i, a in zip(range(m), reversed(alphas)):
        b = rho[i] * jnp.dot(y_hist[i], r)
        r = r + s_hist[i] * (a - b)
    return r


def minimize_lbfgs(
    fun: Callable[[Any], Any],
    x0: Any,
    maxiter: int | None = None,
    norm_order: float = np.inf,
    maxcor: int = 10,
    ftol: float = 2.220446049250313e-09,
    gtol: float = 1e-05,
    maxfun: int | None = None,
    maxgrad: int | None = None,
    maxls: int = 20,
) -> LBFGSResults:
    """Minimizes `fun` from `x0` with L-BFGS.

    Args:
      fun: `x -> scalar`, differentiable.
      x0: the starting point, a vector.
      maxiter: the most iterations (default `200 * x0.size`).
      norm_order: the order of the gradient norm compared with `gtol`.
      maxcor: how many correction pairs to keep.
      ftol: converged when `(f_prev - f) / max(|f_prev|, |f|, 1) <= ftol`.
      gtol: converged when the gradient norm is at most `gtol`.
      maxfun, maxgrad: the most function and gradient evaluations (no limit if None).
      maxls: the most function evaluations of one line search.

    Returns:
      The final `LBFGSResults`.
    """
    if maxiter is None:
        maxiter = 200 * x0.size
    big = np.iinfo(np.int32).max
    maxfun = big if maxfun is None else maxfun
    maxgrad = big if maxgrad is None else maxgrad
    fg = value_and_grad(fun)
    f0, g0 = fg(x0)
    n = x0.shape[0]
    dtype = x0.dtype
    init = LBFGSResults(
        converged=norm(g0, norm_order) <= gtol,
        failed=jnp.zeros((), bool),
        k=jnp.zeros((), jnp.int32),
        nfev=jnp.ones((), jnp.int32),
        ngev=jnp.ones((), jnp.int32),
        x_k=x0,
        f_k=f0,
        g_k=g0,
        s_history=jnp.zeros((maxcor, n), dtype),
        y_history=jnp.zeros((maxcor, n), dtype),
        rho_history=jnp.zeros((maxcor,), dtype),
        gamma=jnp.ones((), dtype),
        status=jnp.zeros((), jnp.int32),
        ls_status=jnp.zeros((), jnp.int32),
    )

    def cond(s: LBFGSResults) -> Any:
        return ~s.converged & ~s.failed & (s.k < maxiter) & (s.nfev < maxfun) & (s.ngev < maxgrad)

    def body(s: LBFGSResults) -> LBFGSResults:
        p = -_two_loop(s.g_k, s.s_history, s.y_history, s.rho_history, s.gamma)
        ls = line_search(fg, s.x_k, p, s.f_k, s.g_k, maxiter=maxls)
        step = ls.a * p
        y = ls.g - s.g_k
        curvature = jnp.dot(y, step)
        # Pairs without positive curvature would spoil H: they are not kept.
        usable = ~ls.failed & (curvature > 0)
        rho = jnp.where(usable, 1 / jnp.where(usable, curvature, 1), 0)

        def push(history, new):
            shifted = jnp.concatenate([history[1:], new[None]], axis=0)
            return jnp.where(usable, shifted, history)

        gamma = jnp.where(usable, curvature / jnp.dot(y, y), s.gamma)
        decrease = (s.f_k - ls.f) / jnp.maximum(jnp.maximum(jnp.abs(s.f_k), jnp.abs(ls.f)), 1)
        by_gradient = norm(ls.g, norm_order) <= gtol
        by_value = decrease <= ftol
        keep = ls.failed
        status = jnp.where(
            keep,
            LINE_SEARCH_FAILED,
            jnp.where(by_gradient, CONVERGED, jnp.where(by_value, FTOL, s.status)),
        )
        return LBFGSResults(
            converged=~keep & (by_gradient | by_value),
            failed=keep,
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.nfev,
            x_k=jnp.where(keep, s.x_k, s.x_k + step),
            f_k=jnp.where(keep, s.f_k, ls.f),
            g_k=jnp.where(keep, s.g_k, ls.g),
            s_history=push(s.s_history, step),
            y_history=push(s.y_history, y),
            rho_history=push(s.rho_history, rho),
            gamma=gamma,
            status=status.astype(jnp.int32),
            ls_status=ls.status,
        )

    s = lax.while_loop(cond, body, init)
    status = jnp.where(
        s.converged | s.failed,
        s.status,
        jnp.where(
            s.k >= maxiter,
            MAXITER,
            jnp.where(s.nfev >= maxfun, MAXFUN, jnp.where(s.ngev >= maxgrad, MAXGRAD, s.status)),
        ),
    )
    return s._replace(status=status.astype(jnp.int32))
