"""`polyjax.example_libraries`: `optimizers` against their update rules written in
NumPy, and `stax` layers against direct computations and their declared shapes."""

from __future__ import annotations

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax.example_libraries import optimizers, stax

X0 = np.array([1.0, -2.0, 0.5], np.float32)
G = np.array([0.3, -0.1, 2.0], np.float32)


def _numpy_steps(name, n):
    """`n` steps of each optimizer with the constant gradient `G`, in NumPy."""
    x, a, b = X0.astype(np.float64), np.zeros(3), np.zeros(3)
    for i in range(n):
        g = G.astype(np.float64)
        if name == "sgd":
            x = x - 0.1 * g
        elif name == "momentum":
            a = 0.9 * a + g
            x = x - 0.1 * a
        elif name == "nesterov":
            a = 0.9 * a + g
            x = x - 0.1 * (0.9 * a + g)
        elif name == "adagrad":
            a = a + g * g
            b = 0.1 * g / np.sqrt(a) + 0.9 * b
            x = x - 0.1 * b
        elif name == "rmsprop":
            a = 0.9 * a + 0.1 * g * g
            x = x - 0.1 * g / np.sqrt(a + 1e-8)
        elif name == "adam":
            a = 0.1 * g + 0.9 * a
            b = 0.001 * g * g + 0.999 * b
            x = x - 0.1 * (a / (1 - 0.9 ** (i + 1))) / (np.sqrt(b / (1 - 0.999 ** (i + 1))) + 1e-8)
        elif name == "adamax":
            a = 0.1 * g + 0.9 * a
            b = np.maximum(0.999 * b, np.abs(g))
            x = x - 0.1 / (1 - 0.9 ** (i + 1)) * a / (b + 1e-8)
    return x


@pytest.mark.parametrize(
    "name, args",
    [
        ("sgd", (0.1,)),
        ("momentum", (0.1, 0.9)),
        ("nesterov", (0.1, 0.9)),
        ("adagrad", (0.1,)),
        ("rmsprop", (0.1,)),
        ("adam", (0.1,)),
        ("adamax", (0.1,)),
    ],
)
def test_optimizer_rules(name, args):
    init, update, get_params = getattr(optimizers, name)(*args)
    state = init({"x": X0})
    step = polyjax.jit(lambda i, s: update(i, {"x": jnp.asarray(G)}, s))
    for i in range(3):
        state = step(i, state)
    np.testing.assert_allclose(np.asarray(get_params(state)["x"]), _numpy_steps(name, 3), rtol=2e-5)


def test_optimizers_minimize_and_state_roundtrip():
    params = {"w": jnp.ones((2, 3)), "b": [jnp.zeros(3)]}

    def loss(p):
        return jnp.sum((p["w"] - 2) ** 2) + jnp.sum((p["b"][0] + 1) ** 2)

    for opt in (optimizers.sm3(0.5), optimizers.rmsprop_momentum(0.01), optimizers.adam(0.1)):
        init, update, get_params = opt
        step = polyjax.jit(
            lambda i, s, update=update, get_params=get_params: update(
                i, polyjax.grad(loss)(get_params(s)), s
            )
        )
        state = init(params)
        for i in range(100):
            state = step(i, state)
        assert float(loss(get_params(state))) < 1e-2
    restored = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
    assert restored.tree_def == state.tree_def
    np.testing.assert_array_equal(
        np.asarray(get_params(restored)["w"]), np.asarray(get_params(state)["w"])
    )
    with pytest.raises(TypeError, match="tree structure"):
        update(0, {"w": jnp.ones((2, 3))}, state)


def test_schedules_and_utilities():
    assert float(optimizers.exponential_decay(1.0, 10, 0.5)(20)) == pytest.approx(0.25)
    assert float(optimizers.inverse_time_decay(1.0, 10, 1.0, staircase=True)(15)) == pytest.approx(
        0.5
    )
    assert float(optimizers.polynomial_decay(1.0, 10, 0.1)(5)) == pytest.approx(0.55)
    assert float(optimizers.polynomial_decay(1.0, 10, 0.1)(50)) == pytest.approx(0.1)
    sched = optimizers.piecewise_constant([10, 20], [1.0, 0.5, 0.1])
    assert [float(sched(i)) for i in (5, 15, 25)] == pytest.approx([1.0, 0.5, 0.1])
    with pytest.raises(ValueError, match="one more value"):
        optimizers.piecewise_constant([10], [1.0])
    assert optimizers.make_schedule(0.3)(7) == 0.3
    tree = {"a": jnp.array([3.0, 4.0]), "b": jnp.array([0.0])}
    assert float(optimizers.l2_norm(tree)) == pytest.approx(5.0)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(np.asarray(clipped["a"]), [0.6, 0.8], rtol=1e-6)


def test_stax_network_shapes_and_values():
    key = polyjax.random.key(0)
    init, apply = stax.serial(
        stax.Conv(4, (3, 3), padding="SAME"),
        stax.BatchNorm(),
        stax.Relu,
        stax.MaxPool((2, 2), (2, 2)),
        stax.AvgPool((2, 2), padding="SAME"),
        stax.Flatten,
        stax.Dense(3),
        stax.LogSoftmax,
    )
    x = polyjax.random.normal(key, (2, 8, 8, 1))
    shape, params = init(key, x.shape)
    out = polyjax.jit(apply)(params, x)
    assert shape == out.shape == (2, 3)
    np.testing.assert_allclose(np.exp(np.asarray(out)).sum(-1), 1.0, rtol=1e-5)
    (W, b) = stax.Dense(2)[0](key, (1, 3))[1]
    np.testing.assert_allclose(
        np.asarray(stax.Dense(2)[1]((W, b), jnp.ones((1, 3)))),
        np.asarray(W).sum(0)[None] + np.asarray(b),
        rtol=1e-6,
    )
    init2, apply2 = stax.serial(
        stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity), stax.FanInConcat()
    )
    shape2, params2 = init2(key, (4, 3))
    assert shape2 == apply2(params2, jnp.ones((4, 3))).shape == (4, 6)
    init3, apply3 = stax.Conv1DTranspose(2, (3,), strides=(2,))
    shape3, params3 = init3(key, (1, 5, 3))
    assert shape3 == apply3(params3, jnp.ones((1, 5, 3))).shape
    pooled = stax.SumPool((2,), spec="NWC")[1]((), jnp.ones((1, 4, 1)))
    np.testing.assert_array_equal(np.asarray(pooled)[0, :, 0], [2.0, 2.0, 2.0])


def test_stax_dropout():
    _, apply = stax.Dropout(0.5)
    out = np.asarray(apply((), jnp.ones(1000), rng=polyjax.random.key(0)))
    assert set(np.unique(out)) <= {0.0, 2.0} and 400 < (out > 0).sum() < 600
    np.testing.assert_array_equal(
        np.asarray(stax.Dropout(0.5, mode="test")[1]((), jnp.ones(3))), 1.0
    )
    with pytest.raises(ValueError, match="PRNG key"):
        apply((), jnp.ones(3))
