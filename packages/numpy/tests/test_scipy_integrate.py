"""polyjax.scipy.integrate.trapezoid against scipy.integrate.trapezoid."""

from __future__ import annotations

import numpy as np
import scipy.integrate as osp

from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy import integrate


def test_trapezoid():
    y = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    x = np.cumsum(np.abs(y[0]) + 0.1)
    for kwargs in ({}, {"dx": 0.5}, {"x": x}, {"axis": 0}, {"x": x[:3], "axis": 0}):
        np.testing.assert_allclose(
            integrate.trapezoid(y, **kwargs), osp.trapezoid(y, **kwargs), rtol=1e-5
        )
    assert integrate.trapezoid(np.arange(4)).dtype == np.float32
    assert integrate.trapezoid is jnp.trapezoid
