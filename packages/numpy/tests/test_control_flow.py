"""Control flow: cond/switch, scan, while_loop, fori_loop, map, associative_scan.

Values are checked against Python loops and NumPy, derivatives with
`check_grads`, vmap against a loop over the examples (a batched predicate too),
jit against eager.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

f32 = np.float32


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(f32)


# ---------------------------------------------------------------------------
# cond / switch


def _piecewise(x):
    return lax.cond(lax.reduce_sum(x, (0,)) > 0, lambda x: x * x * 3.0, lambda x: lax.sin(x), x)


@pytest.mark.parametrize("pred", [True, False, 0, 2])
def test_cond_values(pred):
    x = _rand(3)
    got = lax.cond(pred, lambda x: x * 3.0, lambda x: -x, x)
    np.testing.assert_allclose(np.asarray(got), x * 3 if pred else -x, rtol=1e-6)


@pytest.mark.parametrize("index", [-1, 0, 1, 2, 7])
def test_switch_values_clamps(index):
    x = _rand(3)
    fns = [lambda x: x + 1.0, lambda x: x * 2.0, lambda x: lax.sin(x)]
    want = [x + 1, x * 2, np.sin(x)][min(max(index, 0), 2)]
    got = lax.switch(np.int32(index), fns, x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_cond_pytree_operands_and_closure():
    x, y = _rand(2), _rand(2, seed=1)
    c = np.float32(4.0)

    def f(x, y):
        return lax.cond(
            x[0] > -2,
            lambda t: {"a": t[0] * c, "b": t[1]},
            lambda t: {"a": t[1], "b": t[0]},
            (x, y),
        )

    out = jit(f)(x, y)
    np.testing.assert_allclose(np.asarray(out["a"]), x * 4, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out["b"]), y, rtol=1e-6)


def test_cond_branch_type_mismatch():
    with pytest.raises(TypeError, match="identical types"):
        lax.cond(True, lambda x: x, lambda x: x.astype(np.int32), _rand(2))
    with pytest.raises(TypeError, match="structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, _rand(2))


def test_cond_printed_jaxpr():
    text = str(make_jaxpr(lambda p, x: lax.cond(p, lambda x: x * 3.0, lambda x: -x, x))(True, 2.0))
    assert "cond[" in text and "branches=(" in text
    assert "neg" in text and "mul" in text
    assert "convert_element_type[new_dtype=int32" in text


@pytest.mark.parametrize("positive", [True, False])
def test_cond_grads(positive):
    x = np.abs(_rand(3)) + 0.5
    check_grads(_piecewise, (x if positive else -x,), order=2)


def test_cond_grad_closed_over():
    x = np.float32(2.0)
    g = ad.grad(lambda y: lax.cond(x > 1, lambda z: z * y * y, lambda z: z, x))(np.float32(5))
    np.testing.assert_allclose(g, 20.0)


def test_cond_vmap_batched_predicate():
    xs = _rand(6, 3)
    got = batching.vmap(_piecewise)(xs)
    want = np.stack([np.asarray(_piecewise(x)) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    g = batching.vmap(ad.grad(lambda x: lax.reduce_sum(_piecewise(x), (0,))))(xs)
    want_g = np.stack([6 * x if x.sum() > 0 else np.cos(x) for x in xs])
    np.testing.assert_allclose(np.asarray(g), want_g, rtol=1e-5)


def test_cond_vmap_unbatched_predicate():
    xs = _rand(5, 2)
    f = lambda p, x: lax.switch(p, [lambda x: x, lambda x: x * 2.0, lambda x: -x], x)  # noqa: E731
    got = batching.vmap(f, in_axes=(None, 0))(np.int32(2), xs)
    np.testing.assert_allclose(np.asarray(got), -xs)
    got = batching.vmap(f, in_axes=(0, 1))(np.array([0, 1], np.int32), xs)
    np.testing.assert_allclose(np.asarray(got), np.stack([xs[:, 0], xs[:, 1] * 2]))


def test_cond_jit_matches_eager():
    x = _rand(4)
    np.testing.assert_allclose(np.asarray(jit(_piecewise)(x)), np.asarray(_piecewise(x)))
