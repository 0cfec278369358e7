"""A tour of `jit`: compile a small neural network, run it on XLA, and look inside.

The same program runs under JAX by changing the first import to
``import jax``. It shows

1. a function written with `lax` operations and `Array` operators, compiled by
   `jit` and checked against NumPy;
2. its jaxpr (what tracing records) and its StableHLO (what XLA compiles);
3. the compile cache: the second call of the same shapes does not recompile;
4. eager operations, which run one primitive at a time.

Run it with:
    python3 -m pip install uv==0.13.8 && uv run --locked python examples/jit_tour.py
"""

import time

import numpy as np

import polyjax as jax
from polyjax import lax

# -- 1. A function: a two-layer perceptron with a softmax over classes. ------


def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)  # subtract the max: exp cannot overflow
    e = lax.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def predict(params, x):
    h = lax.tanh(x @ params["w1"] + params["b1"])
    return softmax(h @ params["w2"] + params["b2"])


rng = np.random.default_rng(0)
params = {
    "w1": rng.normal(size=(4, 8)).astype(np.float32),
    "b1": np.zeros(8, np.float32),
    "w2": rng.normal(size=(8, 3)).astype(np.float32),
    "b2": np.zeros(3, np.float32),
}
x = rng.normal(size=(2, 4)).astype(np.float32)

predict_jit = jax.jit(predict)

start = time.perf_counter()
probs = predict_jit(params, x)  # traced, lowered, compiled, run
first = time.perf_counter() - start
print("predict(params, x) =")
print(probs)


def predict_np(params, x):
    h = np.tanh(x @ params["w1"] + params["b1"])
    z = h @ params["w2"] + params["b2"]
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


np.testing.assert_allclose(np.asarray(probs), predict_np(params, x), rtol=1e-5, atol=1e-6)
print("matches NumPy; each row sums to", np.asarray(probs).sum(axis=-1))

# -- 2. What jit sees (the jaxpr) and what XLA gets (StableHLO). --------------

print("\nThe jaxpr of predict:")
print(jax.make_jaxpr(predict)(params, x))

print("\nIts StableHLO module:")
print(predict_jit.lower(params, x).as_text())

# -- 3. The cache: same shapes and dtypes, no new compilation. ---------------

start = time.perf_counter()
predict_jit(params, x * 2.0).block_until_ready()
second = time.perf_counter() - start
print(f"first call {first * 1e3:.1f} ms (compiles), second call {second * 1e3:.3f} ms (cached)")

# -- 4. Eager operations: each runs as its own small compiled program. -------

y = jax.device_put(np.arange(4, dtype=np.float32))
print("\neager:", y, "->", lax.sin(y) * 2 + 1)
print("on", y.device, "| devices:", jax.devices())
