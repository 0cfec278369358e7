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


# ---------------------------------------------------------------------------
# Registered Taylor rules (jet_rules and the def* helpers)


@pytest.fixture
def rules():
    from polyjax.experimental import jet as jet_module

    saved = dict(jet_module.jet_rules)
    yield jet_module
    jet_module.jet_rules.clear()
    jet_module.jet_rules.update(saved)


def _f(x, d):
    # Several primitives, a pytree argument and an integer index (no series).
    return {"y": jnp.sin(x[d["i"]]) * x[0] - jnp.tanh(d["z"])}


def _jet_of_f(order=2):
    x = jnp.asarray([0.3, -0.7], jnp.float32)
    d = {"i": jnp.int32(1), "z": jnp.float32(0.4)}
    xs = [jnp.asarray([1.0, 0.5], jnp.float32), jnp.asarray([0.2, -0.1], jnp.float32), x * 0]
    dz = [jnp.float32(1.0), jnp.float32(0.0), jnp.float32(0.3)]
    series = (xs[:order], [{"i": jnp.int32(0), "z": z} for z in dz[:order]])
    return jet(_f, (x, d), series)


def test_registered_rules_are_used_and_agree_with_nested_derivatives(rules):
    from polyjax import lax

    expected_y, expected = _jet_of_f()  # no rules: nested derivatives of the whole function
    calls = []

    def sin_deriv(x):
        calls.append("sin")
        return lax.cos(x)

    rules.def_deriv(lax.sin_p, sin_deriv)
    rules.def_comp(lax.tanh_p, lambda z: 1.0 - 2.0 / (jnp.exp(2.0 * z) + 1.0))
    rules.deflinear(lax.neg_p)
    y, terms = _jet_of_f()
    assert calls  # the rule of sin ran
    np.testing.assert_allclose(y["y"], expected_y["y"], rtol=1e-6)
    np.testing.assert_allclose(terms["y"], expected["y"], rtol=2e-5, atol=1e-6)


def test_a_registered_rule_decides_the_series(rules):
    from polyjax import lax

    rules.defzero(lax.exp_p)  # a wrong rule on purpose: it shows that rules are consulted
    y, terms = jet(jnp.exp, (jnp.float32(0.0),), ((jnp.float32(1.0), jnp.float32(0.0)),))
    assert float(y) == 1.0 and [float(t) for t in terms] == [0.0, 0.0]
    # A rule written by hand: exp's derivatives are exp times the curve's (to first order).
    rules.jet_rules[lax.exp_p] = lambda primals, series, **params: (
        lax.exp(primals[0]),
        [
            lax.exp(primals[0]) * series[0][0],
            lax.exp(primals[0]) * (series[0][1] + series[0][0] ** 2),
        ],
    )
    _, terms = jet(jnp.exp, (jnp.float32(0.0),), ((jnp.float32(2.0), jnp.float32(1.0)),))
    assert [float(t) for t in terms] == [2.0, 5.0]
    assert rules.fact(4) == 24
