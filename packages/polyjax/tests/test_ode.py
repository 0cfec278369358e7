"""`polyjax.experimental.ode.odeint` against scipy.integrate.solve_ivp, with
adjoint gradients checked by finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import polyjax
import polyjax.numpy as jnp
from polyjax.experimental.ode import odeint
from polyjax.test_util import check_grads


def _lotka_volterra(y, t, a, b):
    return jnp.stack([a * y[0] - b * y[0] * y[1], -y[1] + y[0] * y[1] + 0.1 * jnp.sin(t)])


TS = np.linspace(0.0, 2.0, 4)
Y0 = np.array([1.0, 0.5])


def test_odeint_against_solve_ivp_and_grads():
    with polyjax.enable_x64(True):
        ys = odeint(_lotka_volterra, Y0, TS, 1.1, 0.4)
        ref = solve_ivp(
            lambda t, y: np.asarray(_lotka_volterra(y, t, 1.1, 0.4)),
            (TS[0], TS[-1]),
            Y0,
            t_eval=TS,
            rtol=1e-12,
            atol=1e-12,
        )
        np.testing.assert_allclose(np.asarray(ys), ref.y.T, rtol=1e-6, atol=1e-8)

        def loss(y0, ts, a, b):
            return jnp.sum(odeint(_lotka_volterra, y0, ts, a, b) ** 2)

        check_grads(
            polyjax.jit(loss), (Y0, TS, 1.1, 0.4), order=1, modes=("rev",), atol=1e-4, rtol=1e-4
        )


def test_odeint_pytrees_float32_and_errors():
    def f(y, t):
        return {"u": -y["u"], "v": [y["v"][0] * 0]}

    out = odeint(f, {"u": jnp.ones(2), "v": [jnp.float32(3)]}, TS.astype(np.float32))
    assert out["u"].shape == (4, 2) and out["u"].dtype == np.float32
    np.testing.assert_allclose(np.asarray(out["u"][:, 0]), np.exp(-TS), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out["v"][0]), 3.0)
    # mxstep too small for the interval: NaN rather than a wrong value.
    short = odeint(lambda y, t: -50 * y, jnp.float32(1), jnp.float32([0, 1]), mxstep=3)
    assert np.isnan(float(short[1]))
    with pytest.raises(TypeError, match="arrays or scalars"):
        odeint(lambda y, t, f: f(y), jnp.float32(1), TS, jnp.sin)
