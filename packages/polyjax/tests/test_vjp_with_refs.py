"""`vjp_fn.with_refs(...)` and the `polyjax.ad` markers, as JAX 0.10.2's."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax.ad import DidntWant, DontWant, GradRef, GradValue


def _f(x, w):
    return jnp.sum(jnp.sin(x) * w)


X = np.array([0.1, 0.5, 1.0], np.float32)
W = np.array([2.0, -1.0, 3.0], np.float32)


def test_targets_route_each_cotangent():
    _, f_vjp = polyjax.vjp(_f, X, W)
    acc = polyjax.new_ref(jnp.ones(3))
    assert f_vjp.with_refs(acc, DontWant())(2.0) == (GradRef(), DidntWant())
    np.testing.assert_allclose(acc[...], 1.0 + 2.0 * np.cos(X) * W, rtol=1e-6)  # added in
    value, skipped = f_vjp.with_refs(GradValue(), DontWant())(2.0)
    np.testing.assert_allclose(value, 2.0 * np.cos(X) * W, rtol=1e-6)
    assert skipped == DidntWant()
    plain = f_vjp(2.0)
    np.testing.assert_allclose(plain[1], 2.0 * np.sin(X), rtol=1e-6)


def test_result_markers_have_no_leaves_and_the_pullback_is_a_pytree():
    assert polyjax.tree.leaves((GradRef(), DidntWant())) == []
    assert polyjax.tree.leaves(DontWant()) == [DontWant()]
    _, f_vjp = polyjax.vjp(_f, X, W)
    through_jit = polyjax.jit(lambda g: g(1.0))(f_vjp)
    np.testing.assert_allclose(through_jit[0], np.cos(X) * W, rtol=1e-6)


def test_wrong_targets_raise_clear_errors():
    _, f_vjp = polyjax.vjp(_f, X, W)
    with pytest.raises(ValueError, match=r"one target .* per primal"):
        f_vjp.with_refs(GradValue())(1.0)
    with pytest.raises(TypeError, match="got int"):
        f_vjp.with_refs(GradValue(), 3)(1.0)
