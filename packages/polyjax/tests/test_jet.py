"""`polyjax.experimental.jet.jet` against closed-form Taylor series."""

from __future__ import annotations

import math

import numpy as np
import pytest

import polyjax.numpy as jnp
from polyjax.experimental.jet import jet


def test_jet_closed_forms():
    # sin along x(t) = 1 + t: the derivatives cycle cos, -sin, -cos.
    y, terms = jet(jnp.sin, (1.0,), ((1.0, 0.0, 0.0),))
    np.testing.assert_allclose(
        [float(y), *map(float, terms)],
        [math.sin(1), math.cos(1), -math.sin(1), -math.cos(1)],
        rtol=1e-6,
    )
    # A product along a curve with a second-order term: (2 + t)(3 + t^2 / 2).
    _, terms = jet(lambda x, y: x * y, (2.0, 3.0), ((1.0, 0.0), (0.0, 1.0)))
    assert [float(t) for t in terms] == pytest.approx([3.0, 2.0])
    # Pytree outputs: a list of terms per leaf; plain Taylor coefficients on request.
    _, tree = jet(lambda x: {"a": x**3}, (2.0,), ((1.0, 0.0, 0.0),))
    assert [float(t) for t in tree["a"]] == pytest.approx([12.0, 12.0, 6.0])
    _, coeffs = jet(jnp.exp, (0.0,), ((1.0, 0.0, 0.0),), factorial_scaled=False)
    assert [float(t) for t in coeffs] == pytest.approx([1.0, 0.5, 1 / 6])
    _, arr = jet(jnp.exp, (jnp.ones(2),), ([jnp.ones(2), jnp.zeros(2)],))
    np.testing.assert_allclose(np.asarray(arr), np.e * np.ones((2, 2)), rtol=1e-6)
    with pytest.raises(ValueError, match="inconsistent"):
        jet(jnp.sin, (1.0, 2.0), ((1.0, 0.0), (1.0,)))
