"""reduce_window and the pooling primitives against a NumPy sliding-window oracle."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)


def _pad_axis(d, ax, lo, hi, init):
    def block(n):
        return np.full(d.shape[:ax] + (n,) + d.shape[ax + 1 :], init, d.dtype)

    if lo > 0:
        d = np.concatenate([block(lo), d], ax)
    elif lo < 0:
        d = np.take(d, range(-lo, d.shape[ax]), ax)
    if hi > 0:
        d = np.concatenate([d, block(hi)], ax)
    elif hi < 0:
        d = np.take(d, range(0, d.shape[ax] + hi), ax)
    return d


def oracle(x, init, op, wd, ws, pad, bd, wdil):
    """Dilate, pad with `init`, then reduce each window tap by tap."""
    shape = [0 if d == 0 else (d - 1) * b + 1 for d, b in zip(x.shape, bd)]
    d = np.full(shape, init, x.dtype)
    d[tuple(slice(None, None, b) for b in bd)] = x
    for ax, (lo, hi) in enumerate(pad):
        d = _pad_axis(d, ax, lo, hi, init)
    span = [(w - 1) * k + 1 for w, k in zip(wd, wdil)]
    out_shape = [(n - s) // st + 1 if n >= s else 0 for n, s, st in zip(d.shape, span, ws)]
    out = np.empty(out_shape, x.dtype)
    for o in itertools.product(*map(range, out_shape)):
        acc = np.asarray(init, x.dtype)
        for k in itertools.product(*map(range, wd)):
            acc = op(acc, d[tuple(i * st + j * dl for i, st, j, dl in zip(o, ws, k, wdil))])
        out[o] = acc
    return out


# (window_dimensions, window_strides, padding, base_dilation, window_dilation)
WINDOWS = [
    ((2, 3), (1, 2), ((0, 0), (1, 2)), (1, 1), (1, 1)),
    ((3, 2), (2, 1), ((1, -1), (0, 1)), (2, 1), (1, 2)),
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((1, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((7, 1), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),  # window larger than the axis
]
MONOIDS = [("add", lax.add, np.add), ("max", lax.max, np.maximum), ("min", lax.min, np.minimum)]


def _identity(name, dtype):
    if name == "add":
        return 0
    if dtype.kind == "b":
        return name == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if name == "max" else info.max
    return -np.inf if name == "max" else np.inf


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(0, 9, shape).astype(dtype)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / max(n, 1) - 0.5).astype(dtype)


VALUE_CASES = [
    (m, d)
    for m in MONOIDS
    for d in (np.float32, bf16, np.int32, np.uint8, np.bool_)
    if not (m[0] == "add" and d is np.bool_)  # no sums of booleans
]


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize(
    "monoid, dtype", VALUE_CASES, ids=[f"{m[0]}-{np.dtype(d).name}" for m, d in VALUE_CASES]
)
def test_monoid_values(window, monoid, dtype):
    name, comp, op = monoid
    dtype = np.dtype(dtype)
    x = _data((5, 6), dtype)
    init = np.asarray(_identity(name, dtype), dtype)
    got = lax.reduce_window(x, init, comp, *window)
    want = oracle(x, init, {"add": np.add, "max": np.maximum, "min": np.minimum}[name]
                  if dtype.kind != "b" else (np.logical_or if name == "max" else np.logical_and),
                  *window)  # fmt: skip
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want.astype(np.float64),
                               rtol=2e-2 if dtype == bf16 else 1e-6)  # fmt: skip


def test_size0_and_string_padding():
    x = np.zeros((0, 4), np.float32)
    assert lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 1), "VALID").shape == (0, 3)
    y = _data((5, 7), np.float32)
    got = lax.reduce_window(y, -np.inf, lax.max, (2, 3), (2, 2), "SAME")
    assert got.shape == (3, 4)
    want = oracle(y, -np.inf, np.maximum, (2, 3), (2, 2), ((0, 1), (1, 1)), (1, 1), (1, 1))
    np.testing.assert_array_equal(np.asarray(got), want)


def test_jaxpr_and_general_computation():
    x = _data((4, 4), np.float32)
    text = str(make_jaxpr(lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2),
                                                       "VALID"))(x))  # fmt: skip
    assert "reduce_window_max[" in text and "window_strides=(2, 2)" in text
    # A non-identity init or another computation takes the general primitive.
    got = lax.reduce_window(x, 1.0, lax.mul, (2, 1), (1, 1), ((1, 0), (0, 0)))
    np.testing.assert_allclose(np.asarray(got), oracle(x, np.float32(1), np.multiply, (2, 1),
                               (1, 1), ((1, 0), (0, 0)), (1, 1), (1, 1)), rtol=1e-6)  # fmt: skip
    got = lax.reduce_window(x, 10.0, lax.add, (2, 2), (1, 1), "VALID")
    np.testing.assert_allclose(np.asarray(got), 10 + oracle(x, np.float32(0), np.add, (2, 2),
                               (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)), rtol=1e-6)  # fmt: skip

    # Tuple operands reduced together: (sum, product).
    def sum_prod(a, b):
        return lax.add(a[0], b[0]), lax.mul(a[1], b[1])

    s, p = lax.reduce_window((x, x), (0.0, 1.0), sum_prod, (1, 2))
    np.testing.assert_allclose(np.asarray(s), x[:, :-1] + x[:, 1:], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(p), x[:, :-1] * x[:, 1:], rtol=1e-6)
    with pytest.raises(TypeError, match="one entry per operand dimension"):
        lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID")
    with pytest.raises(NotImplementedError, match="general computation"):
        ad.grad(lambda x: lax.reduce_sum(lax.reduce_window(x, 1.0, lax.mul, (2, 2)), (0, 1)))(x)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name, comp", [("add", lax.add), ("max", lax.max), ("min", lax.min)])
def test_grads(window, name, comp):
    x = _data((5, 6), np.float32, seed=4)  # distinct values: max/min differentiable
    init = _identity(name, np.dtype(np.float32))
    f = lambda x: lax.reduce_window(x, init, comp, *window)  # noqa: E731
    dilated = any(b != 1 for b in window[3]) or any(w != 1 for w in window[4])
    modes = ("fwd",) if name != "add" and dilated else ("fwd", "rev")
    check_grads(f, (x,), order=2, modes=modes)


def test_max_pool_gradient_goes_to_the_maximum():
    x = np.float32([[1, 5, 2, 0], [3, 4, 9, 1]])
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID")  # noqa: E731
    g = ad.grad(lambda x: lax.reduce_sum(lax.mul(pool(x), np.float32([[1, 10]])), (0, 1)))(x)
    np.testing.assert_array_equal(np.asarray(g), [[0, 1, 0, 0], [0, 0, 10, 0]])
    # select_and_scatter_add directly, with overlapping windows and padding
    src = np.float32([[1, 2, 3]])
    out = lax.select_and_scatter_add(src, x, lax.ge_p, (2, 2), (1, 1), ((0, 0), (0, 0)))
    np.testing.assert_array_equal(np.asarray(out), [[0, 1, 0, 0], [0, 0, 5, 0]])


def test_select_and_scatter_add_rules():
    x = _data((4, 5), np.float32, seed=5)
    src = _data((2, 4), np.float32, seed=6)
    f = lambda s: lax.select_and_scatter_add(s, x, lax.ge_p, (2, 2), (2, 1), ((0, 0), (0, 0)))  # noqa: E731
    check_grads(f, (src,), order=2)
    xs = np.stack([x, x[::-1]])
    out = batching.vmap(
        lambda s, x: lax.select_and_scatter_add(s, x, lax.le_p, (2, 2), (2, 1), ((0, 0), (0, 0))),
        (None, 0),
    )(src, xs)
    for i in range(2):
        want = lax.select_and_scatter_add(src, xs[i], lax.le_p, (2, 2), (2, 1), ((0, 0), (0, 0)))
        np.testing.assert_array_equal(np.asarray(out)[i], np.asarray(want))


@pytest.mark.parametrize("in_axis", [0, 2])
def test_vmap_matches_loop(in_axis):
    x = _data((3, 5, 4), np.float32)

    def f(x):
        return [
            lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 2), ((1, 0), (0, 1))),
            lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 1), "SAME"),
            lax.reduce_window(x, 1.0, lax.mul, (1, 2), (1, 1), "VALID"),
            ad.grad(lambda x: lax.reduce_sum(lax.reduce_window(x, np.inf, lax.min, (2, 2),
                                                                (1, 1), "VALID"), (0, 1)))(x),
        ]  # fmt: skip

    outs = batching.vmap(f, in_axis)(x)
    for i in range(x.shape[in_axis]):
        for o, w in zip(outs, f(np.take(x, i, in_axis))):
            np.testing.assert_allclose(np.asarray(o)[i], np.asarray(w), rtol=1e-6)


def test_jit_matches_eager():
    x = _data((6, 6), np.float32)

    def f(x):
        pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (3, 3), (2, 2), "SAME")  # noqa: E731
        return pool(x), ad.grad(lambda x: lax.reduce_sum(pool(x), (0, 1)))(x)

    for a, b in zip(jit(f)(x), f(x)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_symbolic_batch_dimension_shapes():
    from polyjax_core import symbolic_dim
    from polyjax_core.abstract_values import ShapeDtypeStruct

    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 5), np.float32)

    def f(x):
        pooled = lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 2), "VALID")
        return lax.sort(x, 1), lax.top_k(x, 2)[1], lax.cumsum(x, 1), pooled

    shapes = [(a.shape, a.dtype) for a in make_jaxpr(f)(x).out_avals]
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    assert shapes == [((b, 5), f32), ((b, 2), i32), ((b, 5), f32), ((b, 2), f32)]
    with pytest.raises(NotImplementedError, match="symbolic dimension"):
        make_jaxpr(lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), "VALID"))(x)


def test_complex_max_min_windows_are_lexicographic():
    # Real parts tie in every window; the imaginary parts decide, as in NumPy.
    x = (np.arange(12).reshape(3, 4) // 4 + 1j * _data((3, 4), np.float32)).astype(np.complex64)
    for name, comp, op in MONOIDS[1:]:
        inf = -np.inf if name == "max" else np.inf
        init = np.complex64(complex(inf, inf))  # the identity: the monoid primitive
        fun = lambda v, comp=comp, init=init: lax.reduce_window(v, init, comp, (1, 3), (1, 1))  # noqa: E731
        assert f"reduce_window_{name}" in str(make_jaxpr(fun)(x))
        want = oracle(x, init, op, (1, 3), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1))
        np.testing.assert_array_equal(np.asarray(fun(x)), want)
