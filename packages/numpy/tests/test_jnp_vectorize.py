"""`jnp.vectorize`, `jnp.apply_along_axis` and `jnp.apply_over_axes` against NumPy.

NumPy's versions call the Python function per element or slice; ours trace it
once and batch it with `vmap`, so the functions here are written with `jnp`.
Results are compared with NumPy's on the same data, shapes included
(broadcast loop dimensions, core dimensions, size-0 loops).
"""

from __future__ import annotations

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads


def _close(got, want, tol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _rand(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# ---------------------------------------------------------------------------
# vectorize


def test_vectorize_elementwise_broadcasts():
    def f(x, y):
        return jnp.where(x > y, x - y, 2 * y)

    vf = jnp.vectorize(f)
    x, y = _rand(3, 1, 4), _rand(2, 1, seed=1)
    _close(vf(x, y), np.vectorize(lambda a, b: a - b if a > b else 2 * b)(x, y))
    _close(vf(np.float32(2.0), 1.0), 1.0)
    assert vf(np.zeros((0, 3), np.float32), 1.0).shape == (0, 3)
    # Without a signature the function may return any shape per element.
    out = jnp.vectorize(lambda v: jnp.stack([v, v**2]))(np.arange(3.0))
    assert out.shape == (3, 2)
    _close(out, np.stack([np.arange(3.0), np.arange(3.0) ** 2], axis=1))


@pytest.mark.parametrize(
    "signature,shapes,fun,np_fun",
    [
        ("(n),(n)->()", [(4, 3), (3,)], jnp.dot, np.dot),
        ("(m,n),(n)->(m)", [(2, 1, 3, 4), (5, 4)], jnp.matmul, np.matmul),
        ("(n)->(n)", [(2, 5)], jnp.cumsum, np.cumsum),
        ("(n)->()", [(3, 0)], jnp.sum, np.sum),
        ("(),(k)->(k)", [(2, 1), (3,)], jnp.multiply, np.multiply),
    ],
    ids=["inner", "matvec", "cumsum", "empty-core", "scalar-and-vector"],
)
def test_vectorize_signatures_match_numpy(signature, shapes, fun, np_fun):
    args = [_rand(*s, seed=i) for i, s in enumerate(shapes)]
    got = jnp.vectorize(fun, signature=signature)(*args)
    want = np.vectorize(np_fun, signature=signature)(*args)
    _close(got, want)
    _close(jit(jnp.vectorize(fun, signature=signature))(*args), want)


def test_vectorize_multiple_outputs_excluded_and_keywords():
    def stats(v):
        return jnp.mean(v), jnp.std(v)

    mean, std = jnp.vectorize(stats, signature="(n)->(),()")(_rand(3, 6))
    _close(mean, _rand(3, 6).mean(1))
    _close(std, _rand(3, 6).std(1))

    def power(x, n, *, scale):
        return scale * x**n

    vp = jnp.vectorize(power, excluded={1})
    x = np.arange(4.0, dtype=np.float32)
    _close(vp(x, 2, scale=np.array([[1.0], [3.0]], np.float32)), [x**2, 3 * x**2])
    vs = jnp.vectorize(power, excluded={1, "scale"})
    _close(vs(x, 3, scale=2.0), 2 * x**3)
    # None arguments pass through unchanged.
    calls = []
    vn = jnp.vectorize(lambda x, opt: calls.append(opt) or x + 1)
    _close(vn(x, None), x + 1)
    assert calls == [None]
    # A signature counts the mapped keyword arguments too.
    with pytest.raises(TypeError, match="wrong number of positional arguments"):
        jnp.vectorize(power, signature="()->()", excluded={1})(x, 2, scale=1.0)
    got = jnp.vectorize(power, signature="(),()->()", excluded={1})(x, 2, scale=2.0)
    _close(got, 2 * x**2)


def test_vectorize_is_traced_once():
    calls = []

    def f(x):
        calls.append(type(x).__name__)
        return jnp.sin(x)

    jnp.vectorize(f)(_rand(5, 7))
    assert len(calls) == 1  # vmap traces the function once, not per element


def test_vectorize_errors():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(jnp.dot, signature="(n),(n)->(")
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        jnp.vectorize(jnp.dot, signature="(n),(n)->()")(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)")(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="output shape .* does not match core dimensions"):
        jnp.vectorize(lambda v: v, signature="(n)->()")(np.ones((2, 3)))
    with pytest.raises(TypeError, match="wrong number of output arguments"):
        jnp.vectorize(lambda v: v.sum(), signature="(n)->(),()")(np.ones((2, 3)))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        jnp.vectorize(lambda v: v[:2], signature="(n)->(n)")(np.ones((2, 3)))
    with pytest.raises(TypeError, match="excluded must hold ints and strs"):
        jnp.vectorize(jnp.sin, excluded={1.5})


def test_vectorize_grads():
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    check_grads(dot, (_rand(3, 4), _rand(4, seed=1)), order=2)


# ---------------------------------------------------------------------------
# apply_along_axis and apply_over_axes


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis_matches_numpy(axis):
    x = _rand(2, 3, 4)
    cases = [
        (jnp.sum, np.sum),
        (lambda v: jnp.outer(v, v), lambda v: np.outer(v, v)),
        (lambda v, k: jnp.sort(v)[:k], lambda v, k: np.sort(v)[:k]),
    ]
    for fun, np_fun in cases[:2]:
        _close(jnp.apply_along_axis(fun, axis, x), np.apply_along_axis(np_fun, axis, x))
    fun, np_fun = cases[2]
    _close(jnp.apply_along_axis(fun, axis, x, 2), np.apply_along_axis(np_fun, axis, x, 2))
    got = jnp.apply_along_axis(lambda v, scale: v * scale, axis, x, scale=3.0)
    _close(got, 3 * x)


def test_apply_along_axis_jit_grads_and_errors():
    x = _rand(3, 4)
    f = jit(lambda x: jnp.apply_along_axis(jnp.cumsum, 1, x))
    _close(f(x), np.cumsum(x, axis=1))
    check_grads(lambda x: jnp.apply_along_axis(lambda v: v @ v, 0, x), (x,), order=2)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.apply_along_axis(jnp.sum, 2, x)
    with pytest.raises(TypeError, match="apply_along_axis requires ndarray"):
        jnp.apply_along_axis(jnp.sum, 0, [1, 2])


def test_apply_over_axes_matches_numpy():
    x = _rand(2, 3, 4)
    for axes in (0, [0, 2], (-1, 1), []):
        _close(jnp.apply_over_axes(jnp.sum, x, axes), np.apply_over_axes(np.sum, x, axes))
    _close(
        jnp.apply_over_axes(lambda a, ax: jnp.max(a, ax, keepdims=True), x, [1]),
        x.max(1, keepdims=True),
    )
    with pytest.raises(ValueError, match="not returning an array of the correct shape"):
        jnp.apply_over_axes(lambda a, ax: jnp.sum(a), x, [0])
    (aval,) = make_jaxpr(lambda x: jnp.apply_over_axes(jnp.mean, x, [0, 1]))(x).out_avals
    assert aval.shape == (1, 1, 4)
