"""A line search that finds a step satisfying the strong Wolfe conditions.

Along a descent direction `p` from `x`, with `phi(a) = f(x + a p)`, a step `a`
is accepted when it decreases `f` enough (Armijo) and flattens the slope
enough (curvature):

    phi(a) <= phi(0) + c1 a phi'(0)    and    |phi'(a)| <= c2 |phi'(0)|.

The algorithm is that of Nocedal and Wright (Numerical Optimization, 2nd ed.,
algorithms 3.5 and 3.6): trial steps double from 1 until an interval is
bracketed that must contain an acceptable step, then the interval shrinks
("zoom") around the minimizer of the cubic that interpolates `phi` and
`phi'` at its ends (bisection where the cubic is unusable).

Both phases run in one `lax.while_loop` whose body evaluates `f` and its
gradient once, so the search stages out under jit with a bounded trip count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp

# Status codes of a line search (the BFGS status for its failures).
ZOOM_FAILED = 3
NOT_DESCENT = 4
MAX_ITERATIONS = 5


class LineSearchResults(NamedTuple):
    """The accepted step `a`, `f` and its gradient at `x + a p`, and what it cost."""

    failed: Any
    status: Any
    nit: Any
    nfev: Any
    a: Any
    f: Any
    g: Any


class _State(NamedTuple):
    i: Any
    done: Any
    failed: Any
    status: Any
    zooming: Any
    # The bracketing phase: the previous trial and the next one.
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    a_next: Any
    # The zoom interval: `lo` satisfies the Armijo condition, `hi` bounds it.
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    # The accepted step.
    a_star: Any
    phi_star: Any
    g_star: Any


def _cubic_minimizer(a0, phi0, dphi0, a1, phi1, dphi1) -> Any:
    """The minimizer of the cubic through `(a0, phi0, dphi0)` and `(a1, phi1, dphi1)`."""
    d1 = dphi0 + dphi1 - 3 * (phi0 - phi1) / (a0 - a1)
    radicand = d1 * d1 - dphi0 * dphi1
    d2 = jnp.sign(a1 - a0) * jnp.sqrt(jnp.maximum(radicand, 0))
    a = a1 - (a1 - a0) * (dphi1 + d2 - d1) / (dphi1 - dphi0 + 2 * d2)
    return jnp.where(radicand >= 0, a, jnp.full_like(a, jnp.nan))


def _zoom_trial(s: _State) -> Any:
    lo, hi = jnp.minimum(s.a_lo, s.a_hi), jnp.maximum(s.a_lo, s.a_hi)
    width = hi - lo
    cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.dphi_hi)
    # Keep the trial away from the ends, so that the interval shrinks every step.
    safe = jnp.isfinite(cubic) & (cubic > lo + 0.1 * width) & (cubic < hi - 0.1 * width)
    return jnp.where(safe, cubic, 0.5 * (lo + hi))


def line_search(
    value_and_grad: Callable[[Any], tuple[Any, Any]],
    x: Any,
    p: Any,
    f0: Any,
    g0: Any,
    *,
    c1: float = 1e-4,
    c2: float = 0.9,
    maxiter: int = 20,
) -> LineSearchResults:
    """Finds a step along `p` from `x` that satisfies the strong Wolfe conditions.

    Args:
      value_and_grad: `x -> (f(x), grad f(x))`.
      x: the starting point.
      p: the search direction (a descent direction: `grad f(x) . p < 0`).
      f0, g0: `f(x)` and its gradient.
      c1, c2: the constants of the Armijo and curvature conditions
        (`0 < c1 < c2 < 1`).
      maxiter: the most evaluations of `f` to spend.

    Returns:
      `LineSearchResults`; on failure (`failed`), `status` says why: not a
      descent direction (4), no acceptable step within `maxiter` evaluations (5),
      or a zoom interval that collapsed (3).
    """
    dphi0 = jnp.dot(g0, p)
    dtype = f0.dtype
    zero = jnp.zeros((), dtype)

    def evaluate(a):
        f, g = value_and_grad(x + a * p)
        return f, g, jnp.dot(g, p)

    init = _State(
        i=jnp.zeros((), jnp.int32),
        done=dphi0 >= 0,
        failed=dphi0 >= 0,
        status=jnp.where(dphi0 >= 0, NOT_DESCENT, 0).astype(jnp.int32),
        zooming=jnp.zeros((), bool),
        a_prev=zero,
        phi_prev=f0,
        dphi_prev=dphi0,
        a_next=jnp.ones((), dtype),
        a_lo=zero,
        phi_lo=f0,
        dphi_lo=dphi0,
        a_hi=zero,
        phi_hi=f0,
        dphi_hi=dphi0,
        a_star=zero,
        phi_star=f0,
        g_star=g0,
    )

    def cond(s: _State) -> Any:
        return ~s.done & (s.i < maxiter)

    def body(s: _State) -> _State:
        a = jnp.where(s.zooming, _zoom_trial(s), s.a_next)
        phi, g, dphi = evaluate(a)
        armijo_fails = (phi > f0 + c1 * a * dphi0) | ~jnp.isfinite(phi)
        curvature_holds = jnp.abs(dphi) <= -c2 * dphi0

        # Bracketing: a step that fails Armijo (or rises from the previous one)
        # closes [prev, a]; a step with an upward slope closes [a, prev].
        rises = armijo_fails | ((s.i > 0) & (phi >= s.phi_prev))
        accept_b = ~rises & curvature_holds
        upward = ~rises & ~curvature_holds & (dphi >= 0)
        start_zoom = rises | upward

        # Zoom: a trial that fails Armijo or rises above lo becomes hi; else it
        # is accepted or becomes lo (and hi flips if the slope points back).
        to_hi = armijo_fails | (phi >= s.phi_lo)
        accept_z = ~to_hi & curvature_holds
        flip = ~to_hi & ~curvature_holds & (dphi * (s.a_hi - s.a_lo) >= 0)

        def pick(zoom_value, bracket_value):
            return jnp.where(s.zooming, zoom_value, bracket_value)

        # The zoom interval after this step, for both phases.
        lo_b = (
            jnp.where(rises, s.a_prev, a),
            jnp.where(rises, s.phi_prev, phi),
            jnp.where(rises, s.dphi_prev, dphi),
        )
        hi_b = (
            jnp.where(rises, a, s.a_prev),
            jnp.where(rises, phi, s.phi_prev),
            jnp.where(rises, dphi, s.dphi_prev),
        )
        new_lo_z = ~to_hi & ~accept_z
        lo_z = tuple(
            jnp.where(new_lo_z, new, old)
            for new, old in zip((a, phi, dphi), (s.a_lo, s.phi_lo, s.dphi_lo))
        )
        hi_z = tuple(
            jnp.where(to_hi, new, jnp.where(flip, lo_old, old))
            for new, lo_old, old in zip(
                (a, phi, dphi), (s.a_lo, s.phi_lo, s.dphi_lo), (s.a_hi, s.phi_hi, s.dphi_hi)
            )
        )
        a_lo, phi_lo, dphi_lo = (pick(z, b) for z, b in zip(lo_z, lo_b))
        a_hi, phi_hi, dphi_hi = (pick(z, b) for z, b in zip(hi_z, hi_b))

        accept = pick(accept_z, accept_b)
        # A zoom interval narrower than rounding cannot produce a new step.
        collapsed = s.zooming & (jnp.abs(a_hi - a_lo) <= 1e-6 * jnp.maximum(a_hi, a_lo))
        failed = ~accept & collapsed
        return _State(
            i=s.i + 1,
            done=accept | failed,
            failed=failed,
            status=jnp.where(failed, ZOOM_FAILED, 0).astype(jnp.int32),
            zooming=s.zooming | start_zoom,
            a_prev=a,
            phi_prev=phi,
            dphi_prev=dphi,
            a_next=2 * a,
            a_lo=a_lo,
            phi_lo=phi_lo,
            dphi_lo=dphi_lo,
            a_hi=a_hi,
            phi_hi=phi_hi,
            dphi_hi=dphi_hi,
            a_star=jnp.where(accept, a, s.a_star),
            phi_star=jnp.where(accept, phi, s.phi_star),
            g_star=jnp.where(accept, g, s.g_star),
        )

    s = lax.while_loop(cond, body, init)
    ran_out = ~s.done
    return LineSearchResults(
        failed=s.failed | ran_out,
        status=jnp.where(ran_out, MAX_ITERATIONS, s.status).astype(jnp.int32),
        nit=s.i,
        nfev=s.i,
        a=s.a_star,
        f=s.phi_star,
        g=s.g_star,
    )
