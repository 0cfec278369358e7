"""`polyjax.experimental.ode.odeint`: adaptive Dormand-Prince integration with adjoint gradients.

The solution is advanced by the Dormand-Prince 5(4) pair (7 stages, first same
as last): each step's embedded 4th-order solution estimates the local error,
the step is accepted when the RMS of ``err / (atol + rtol * max(|y0|, |y1|))``
is at most 1, and the next step size is ``0.9 * ratio^(-1/5)`` times the
current one (between 0.2 and 10 times it). Steps are shortened to land exactly
on each requested time, so no interpolation is needed.

The derivative is the adjoint method (a `custom_vjp`): the state, its
cotangent and the parameters' cotangents are integrated backwards together
between consecutive output times, with the same solver and tolerances.
`func` may be any function of ``(y, t, *args)`` on pytrees; values it closes
over are constants to differentiation (pass them in `args` to differentiate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax import lax
from polyjax.flatten_util import ravel_pytree
from polyjax.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# Dormand-Prince 5(4) Butcher tableau.
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])


def _step(f: Callable, y: Any, f0: Any, t: Any, dt: Any) -> tuple[Any, Any, Any]:
    """One Dormand-Prince step: ``(y1, f(y1, t + dt), error estimate)``."""
    ks = [f0]
    for i in range(1, 7):
        yi = y + dt * sum(float(a) * k for a, k in zip(_A[i], ks) if a)
        ks.append(f(yi, t + float(_C[i]) * dt))
    y1 = y + dt * sum(float(b) * k for b, k in zip(_B5, ks) if b)
    err = dt * sum(float(b5 - b4) * k for b5, b4, k in zip(_B5, _B4, ks))
    return y1, ks[-1], err


def _error_ratio(err: Any, y0: Any, y1: Any, rtol: float, atol: float) -> Any:
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((err / tol) ** 2))


def _initial_step(f: Callable, t0: Any, y0: Any, f0: Any, rtol: float, atol: float) -> Any:
    """Hairer and Wanner's starting step (Solving ODEs I, II.4)."""
    scale = atol + jnp.abs(y0) * rtol
    d0, d1 = jnp.linalg.norm(y0 / scale), jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1 / 5),
    )
    return jnp.minimum(100 * h0, h1)


def _integrate(f: Callable, y0: Any, ts: Any, rtol, atol, mxstep, hmax) -> Any:
    """The flat solution at every time in `ts` (``[len(ts), n]``)."""
    f0 = f(y0, ts[0])
    dt0 = _initial_step(f, ts[0], y0, f0, rtol, atol)

    def to_target(carry, target):
        def cond(state):
            _, _, t, _, steps = state
            return (t < target) & (steps < mxstep)

        def body(state):
            y, fy, t, dt, steps = state
            h = jnp.minimum(jnp.minimum(dt, target - t), hmax)
            y1, f1, err = _step(f, y, fy, t, h)
            ratio = _error_ratio(err, y, y1, rtol, atol)
            accept = ratio <= 1
            factor = jnp.clip(0.9 * jnp.where(ratio > 0, ratio, 1e-10) ** (-0.2), 0.2, 10.0)
            # A step shortened to land on the target does not shrink the next one.
            new_dt = jnp.where(accept & (h < dt), dt, h * factor)
            y, fy = jnp.where(accept, y1, y), jnp.where(accept, f1, fy)
            t = jnp.where(accept, jnp.where(h == target - t, target, t + h), t)
            return y, fy, t, new_dt, steps + 1

        y, fy, t, dt, steps = lax.while_loop(cond, body, (*carry, 0))
        y = jnp.where(t < target, jnp.full_like(y, jnp.nan), y)  # mxstep ran out
        return (y, fy, t, dt), y

    _, ys = lax.scan(to_target, (y0, f0, ts[0], dt0), ts[1:])
    return jnp.concatenate([y0[None], ys])


def _make_odeint(f: Callable, rtol, atol, mxstep, hmax) -> Callable:
    """The differentiable solver for flat `f(y, t, *args)`."""

    @polyjax.custom_vjp
    def solve(y0, ts, *args):
        return _integrate(lambda y, t: f(y, t, *args), y0, ts, rtol, atol, mxstep, hmax)

    def fwd(y0, ts, *args):
        ys = solve(y0, ts, *args)
        return ys, (ys, ts, args)

    def bwd(res, g):
        ys, ts, args = res
        ts, g = jnp.asarray(ts), jnp.asarray(g)
        flat_args, unravel_args = ravel_pytree(args)
        n, p = ys.shape[1], flat_args.shape[0]

        def augmented(state, s):
            # Backwards in time: with s = -t, every derivative changes sign.
            y, a = state[:n], state[n : 2 * n]
            ydot, vjp = polyjax.vjp(lambda y, fa: f(y, -s, *unravel_args(fa)), y, flat_args)
            a_y, a_args = vjp(a)
            return jnp.concatenate([-ydot, a_y, a_args])

        def back(carry, i):
            y_bar, args_bar = carry
            state = jnp.concatenate([ys[i], y_bar, args_bar])
            times = jnp.stack([-ts[i], -ts[i - 1]])
            out = _integrate(augmented, state, times, rtol, atol, mxstep, hmax)[1]
            y_bar = out[n : 2 * n] + g[i - 1]
            return (y_bar, out[2 * n :]), None

        steps = jnp.arange(ts.shape[0] - 1, 0, -1)
        (y_bar, args_bar), _ = lax.scan(back, (g[-1], jnp.zeros(p, ys.dtype)), steps)
        f_at = polyjax.vmap(lambda y, t: f(y, t, *args))(ys, ts)
        ts_bar = jnp.sum(f_at * g, axis=1)
        # Moving t[0] moves every later output (not the first, which is y0 itself).
        ts_bar = ts_bar.at[0].set(-jnp.dot(f_at[0], y_bar - g[0]))
        return (y_bar, ts_bar, *unravel_args(args_bar.astype(flat_args.dtype)))

    solve.defvjp(fwd, bwd)
    return solve


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep: float = np.inf,
    hmax: float = np.inf,
) -> Any:
    """Solves ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0``, returning `y` at each of `t`.

    Args:
      func: the right-hand side, a function of the state pytree, the time and `args`.
      y0: the initial state (a pytree of arrays).
      t: increasing 1-D times; the first is the initial time.
      *args: extra arrays passed to `func` (differentiable).
      rtol, atol: relative and absolute local error tolerances.
      mxstep: the most steps between two output times (NaN results past it).
      hmax: the largest step.

    Returns:
      The state at each time, each leaf with a leading axis of ``len(t)``.

    Raises:
      TypeError: an element of `args` is not an array or scalar.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.experimental.ode import odeint
      >>> ys = odeint(lambda y, t: -y, jnp.float32(1), jnp.float32([0, 1]))
      >>> bool(jnp.allclose(ys[1], jnp.exp(-1.0), rtol=1e-5))
      True
    """
    for arg in tree_leaves(args):
        if not (hasattr(arg, "dtype") or isinstance(arg, (int, float, complex, bool))):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg!r}."
            )
    args = tree_map(jnp.asarray, args)
    flat_y0, unravel = ravel_pytree(y0)
    (flat_y0,) = [flat_y0.astype(jnp.result_type(flat_y0.dtype, float))]
    ts = jnp.asarray(t, flat_y0.dtype)

    def flat_func(y, t, *args):
        return ravel_pytree(func(unravel(y), t, *args))[0].astype(y.dtype)

    ys = _make_odeint(flat_func, rtol, atol, mxstep, hmax)(flat_y0, ts, *args)
    return polyjax.vmap(unravel)(ys)
