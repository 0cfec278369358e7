"""jnp convolutions, interpolation, binning and histograms against NumPy.

Values are compared with NumPy under one `jit` per case family; `bincount`
without `length` is checked to need concrete values (eager works, `jit`
raises the concretization error). Derivatives use `check_grads`; `vmap` is
compared with a loop.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f32, i32
from _jnp_helpers import random_data as _data

from polyjax_core import errors, make_jaxpr
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp


def _close(got, want, tol=1e-5, err=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (err, got.shape, want.shape)
    if got.dtype == bf16:
        got = got.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=err)


# ---------------------------------------------------------------------------
# convolve, correlate

MODES = ["full", "same", "valid"]


@pytest.mark.parametrize("dtype", [f32, i32, bool, c64, bf16], ids=str)
def test_convolve_correlate(dtype):
    pairs = [((7,), (3,)), ((3,), (7,)), ((6,), (4,)), ((4,), (6,)), ((1,), (5,)), ((5,), (5,))]
    args = [(_data(n, dtype, 2 * i), _data(m, dtype, 2 * i + 1)) for i, (n, m) in enumerate(pairs)]

    def f(args):
        return [
            [jnp.convolve(a, v, mode), jnp.correlate(a, v, mode)] for a, v in args for mode in MODES
        ]

    got = jit(f)(args)
    k = 0
    tol = 5e-2 if dtype == bf16 else 1e-5
    for a, v in args:
        wa, wv = (x.astype(np.complex128 if dtype == c64 else np.float64) for x in (a, v))
        for mode in MODES:
            conv, corr = got[k]
            k += 1
            _close(conv, np.convolve(wa, wv, mode), tol, f"convolve {a.shape} {v.shape} {mode}")
            _close(corr, np.correlate(wa, wv, mode), tol, f"correlate {a.shape} {v.shape} {mode}")
            want_dtype = {i32: f32, boolean: f32}.get(np.dtype(dtype), dtype)
            assert conv.dtype == want_dtype and corr.dtype == want_dtype


def test_convolve_options_and_errors():
    a, v = np.int32([1, 2, 3]), np.int32([1, -1])
    out = jnp.convolve(a, v, preferred_element_type=np.int32)
    assert out.dtype == i32
    np.testing.assert_array_equal(out, np.convolve(a, v))
    jaxpr = make_jaxpr(lambda a, v: jnp.correlate(a, v, precision="highest"))(
        ShapeDtypeStruct((5,), f32), ShapeDtypeStruct((2,), f32)
    )
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "conv_general_dilated"]
    assert eqn.params["precision"] is not None
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.convolve(np.ones((2, 2), f32), np.ones(2, f32))
    with pytest.raises(ValueError, match="cannot be empty"):
        jnp.correlate(np.ones(0, f32), np.ones(2, f32))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(np.ones(3, f32), np.ones(2, f32), mode="circular")


# ---------------------------------------------------------------------------
# digitize, bincount


def test_digitize():
    x = np.float32([-1, 0, 0.5, 1, 2.5, 3, 4, 5, np.nan, -np.inf, np.inf])
    bins = np.float32([0, 1, 1, 2.5, 4])

    def f(x):
        return [
            jnp.digitize(x, bins),
            jnp.digitize(x, bins, right=True),
            jnp.digitize(x, bins[::-1]),
            jnp.digitize(x, bins[::-1], right=True),
            jnp.digitize(x.reshape(1, 11), bins, method="compare_all"),
            jnp.digitize(x, bins, right=True, method="sort"),
            jnp.digitize(x, bins[:0]),
            jnp.digitize(x, bins[:1]),
        ]

    got = jit(f)(x)
    want = [
        np.digitize(x, bins),
        np.digitize(x, bins, right=True),
        np.digitize(x, bins[::-1]),
        np.digitize(x, bins[::-1], right=True),
        np.digitize(x.reshape(1, 11), bins),
        np.digitize(x, bins, right=True),
        np.digitize(x, bins[:0]),
        np.digitize(x, bins[:1]),
    ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=str(i))
        assert g.dtype == i32
    ints = np.int32([0, 3, 7, 10])
    np.testing.assert_array_equal(jnp.digitize(ints, np.int32([2, 7])), np.digitize(ints, [2, 7]))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.digitize(x, np.ones((2, 2), f32))
    with pytest.raises(ValueError, match="not a valid method"):
        jnp.digitize(x, bins, method="bisect")


def test_bincount():
    x = np.int32([0, 3, 1, 1, 7, 3, 3])
    w = _data(7, f32, 3)
    np.testing.assert_array_equal(jnp.bincount(x), np.bincount(x))
    np.testing.assert_array_equal(jnp.bincount(x, minlength=10), np.bincount(x, minlength=10))
    _close(jnp.bincount(x, w), np.bincount(x, w))
    np.testing.assert_array_equal(jnp.bincount(np.zeros(0, np.int32), minlength=3), [0, 0, 0])
    # JAX's rules: negative values count in bin 0, values past `length` are dropped.
    np.testing.assert_array_equal(jnp.bincount(np.int32([-2, 1, 9]), length=4), [1, 1, 0, 0])
    assert jnp.bincount(x).dtype == i32 and jnp.bincount(x, w).dtype == f32
    counted = jit(lambda x, w: jnp.bincount(x, w, length=9))(x, w)
    _close(counted, np.bincount(x, w, minlength=9))
    with pytest.raises(errors.ConcretizationTypeError, match="length"):
        jit(jnp.bincount)(x)
    with pytest.raises(TypeError, match="integer type"):
        jnp.bincount(np.float32([1, 2]))
    with pytest.raises(ValueError, match="1-dimensional"):
        jnp.bincount(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="shape of weights"):
        jnp.bincount(x, np.ones(3, f32))


# ---------------------------------------------------------------------------
# Histograms


def test_histogram():
    a = _data((40,), f32, 5)
    w = _data((40,), f32, 6, 0.0, 2.0)
    edges = np.float32([-1.5, -0.2, 0.0, 0.7, 1.5])

    def f(a, w):
        return [
            jnp.histogram(a),
            jnp.histogram(a, bins=4, range=(-1, 1)),
            jnp.histogram(a, bins=edges, weights=w),
            jnp.histogram(a, bins=5, density=True),
            jnp.histogram(a, bins=edges, weights=w, density=True),
            jnp.histogram(a.reshape(5, 8), bins=3),
            jnp.histogram(np.float32([2, 2]), bins=2),  # empty range: widened by 1/2
            (jnp.histogram_bin_edges(a, 6), jnp.histogram_bin_edges(a, edges)),
        ]

    got = jit(f)(a, w)
    want = [
        np.histogram(a),
        np.histogram(a, bins=4, range=(-1, 1)),
        np.histogram(a, bins=edges, weights=w),
        np.histogram(a, bins=5, density=True),
        np.histogram(a, bins=edges, weights=w, density=True),
        np.histogram(a.reshape(5, 8), bins=3),
        np.histogram(np.float32([2, 2]), bins=2),
        (np.histogram_bin_edges(a, 6), np.histogram_bin_edges(a, edges)),
    ]
    for i, ((g_counts, g_edges), (w_counts, w_edges)) in enumerate(zip(got, want, strict=True)):
        _close(g_counts, w_counts, 1e-5, f"counts {i}")
        _close(g_edges, w_edges, 1e-5, f"edges {i}")
    assert got[0][0].dtype == f32  # JAX counts in the (inexact) weights' dtype
    # Integer samples and NaNs (not counted).
    ints = np.int32([1, 2, 2, 5, 9])
    _close(jnp.histogram(ints, bins=4)[0], np.histogram(ints, bins=4)[0])
    counts, listed = jnp.histogram(np.float32([0.5, 1.5, 1.7]), bins=[0, 1, 2])
    np.testing.assert_array_equal(counts, [1, 2])
    assert listed.dtype == f32 and not isinstance(listed, np.ndarray)
    with_nan = np.float32([0.1, np.nan, 0.7])
    _close(jnp.histogram(with_nan, bins=2, range=(0, 1))[0], [1, 1])


def test_histogram_errors():
    a = np.ones(4, f32)
    with pytest.raises(ValueError, match="do not broadcast"):
        jnp.histogram(a, weights=np.ones(3, f32))
    # Weights broadcast against the sample (JAX's extension).
    counts, _ = jnp.histogram(np.float32([[0, 1], [1, 1]]), bins=2, weights=np.float32([1, 2]))
    np.testing.assert_array_equal(counts, [1, 5])
    with pytest.raises(NotImplementedError, match="string"):
        jnp.histogram(a, bins="auto")
    with pytest.raises(ValueError, match="positive"):
        jnp.histogram(a, bins=0)
    with pytest.raises(errors.ConcretizationTypeError, match="bins"):
        jit(lambda a, n: jnp.histogram(a, n))(a, 3)


def test_histogramdd_and_2d():
    sample = _data((30, 3), f32, 7)
    w = _data((30,), f32, 8, 0.5, 1.5)
    x_edges = np.float32([-1.5, 0.0, 1.5])

    def f(sample, w):
        x, y = sample[:, 0], sample[:, 1]
        return [
            jnp.histogramdd(sample, bins=(2, 3, 4)),
            jnp.histogramdd(sample, bins=3, range=[(-1, 1), None, (0, 1)], weights=w),
            jnp.histogramdd(sample, bins=[2, x_edges, 2], density=True),
            jnp.histogramdd(x, bins=4),
            jnp.histogram2d(x, y),
            jnp.histogram2d(x, y, bins=[3, x_edges], weights=w, density=True),
            jnp.histogram2d(x, y, bins=x_edges, range=[(-1, 1), (-1, 1)]),
        ]

    got = jit(f)(sample, w)
    x, y = sample[:, 0], sample[:, 1]
    want = [
        np.histogramdd(sample, bins=(2, 3, 4)),
        np.histogramdd(sample, bins=3, range=[(-1, 1), None, (0, 1)], weights=w),
        np.histogramdd(sample, bins=[2, x_edges, 2], density=True),
        np.histogramdd(x, bins=4),
        np.histogram2d(x, y),
        np.histogram2d(x, y, bins=[3, x_edges], weights=w, density=True),
        np.histogram2d(x, y, bins=x_edges, range=[(-1, 1), (-1, 1)]),
    ]
    for i, (g, w_) in enumerate(zip(got[:4], want[:4], strict=True)):
        _close(g[0], w_[0], 1e-5, f"dd {i}")
        for ge, we in zip(g[1], w_[1], strict=True):
            _close(ge, we, 1e-5, f"dd edges {i}")
    for i, (g, w_) in enumerate(zip(got[4:], want[4:], strict=True)):
        for part_g, part_w in zip(g, w_, strict=True):
            _close(part_g, part_w, 1e-5, f"2d {i}")
    with pytest.raises(ValueError, match="dimension of bins"):
        jnp.histogramdd(sample, bins=(2, 3))
    with pytest.raises(ValueError, match="one length"):
        jnp.histogram2d(x, y[:3])


# ---------------------------------------------------------------------------
# interp


def test_interp():
    xp = np.float32([0, 1, 2, 4, 4.5])
    fp = np.float32([1, 3, 2, 0, 5])
    x = np.float32([-1, 0, 0.5, 1, 3, 4, 4.2, 4.5, 6])
    x2 = x.reshape(3, 3)
    xp_per = np.float32([350, 10, 180, 90])
    fp_c = (fp + 1j * fp[::-1]).astype(c64)

    def f(x, x2):
        return [
            jnp.interp(x, xp, fp),
            jnp.interp(x2, xp, fp, left=-5.0, right=7.0),
            jnp.interp(x, xp_per, fp[:4], period=360),
            jnp.interp(x * 100, xp_per, fp[:4], period=-360),
            jnp.interp(x, xp, fp_c),
            jnp.interp(x, xp[:1], fp[:1]),
            jnp.interp(np.int32([0, 2, 3]), np.int32([0, 2, 4]), np.int32([0, 5, 6])),
        ]

    got = jit(f)(x, x2)
    want = [
        np.interp(x, xp, fp),
        np.interp(x2, xp, fp, left=-5.0, right=7.0),
        np.interp(x, xp_per, fp[:4], period=360),
        np.interp(x * 100, xp_per, fp[:4], period=-360),
        np.interp(x, xp, fp_c),
        np.interp(x, xp[:1], fp[:1]),
        np.interp([0, 2, 3], [0, 2, 4], [0, 5, 6]),
    ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, 1e-5, str(i))
    assert got[6].dtype == f32
    # "extrapolate" continues the end segments.
    _close(
        jnp.interp(np.float32([-1, 5]), xp, fp, left="extrapolate", right="extrapolate"),
        [-1.0, 10.0],
    )
    with pytest.raises(ValueError, match="equal size"):
        jnp.interp(x, xp, fp[:3])
    with pytest.raises(ValueError, match="period"):
        jnp.interp(x, xp, fp, left=0.0, period=2.0)


# ---------------------------------------------------------------------------
# Derivatives, vmap, jit


def test_grads():
    a, v = _data((6,), f32, 20), _data((3,), f32, 21)
    check_grads(lambda a, v: jnp.convolve(a, v, "same"), (a, v), order=2, atol=1e-2, rtol=1e-2)
    check_grads(lambda a, v: jnp.correlate(v, a, "full"), (a, v), order=2, atol=1e-2, rtol=1e-2)
    xp = np.float32([0, 1, 2, 4])
    x = np.float32([0.3, 1.6, 2.5, 3.9])
    fp = _data((4,), f32, 22)
    check_grads(lambda x, fp: jnp.interp(x, xp, fp), (x, fp), order=2, atol=1e-2, rtol=1e-2)
    samples = _data((10,), f32, 23)
    weights = _data((10,), f32, 24)
    check_grads(
        lambda w: jnp.histogram(samples, bins=3, weights=w)[0], (weights,), order=1, atol=1e-2
    )


def test_vmap_matches_a_loop_and_jit_matches_eager():
    a = _data((4, 6), f32, 30)
    v = _data((4, 3), f32, 31)
    ints = np.random.default_rng(32).integers(0, 5, (4, 7)).astype(np.int32)
    funs = {
        "convolve": lambda a, v, i: jnp.convolve(a, v, "same"),
        "interp": lambda a, v, i: jnp.interp(v, np.float32([-1, 0, 1]), a[:3]),
        "digitize": lambda a, v, i: jnp.digitize(a, np.float32([-0.5, 0, 0.5])),
        "bincount": lambda a, v, i: jnp.bincount(i, length=5),
        "histogram": lambda a, v, i: jnp.histogram(a, bins=3, range=(-1, 1), weights=a)[0],
    }
    for name, fun in funs.items():
        batched = jit(vmap(fun))(a, v, ints)
        looped = np.stack([np.asarray(jit(fun)(*args)) for args in zip(a, v, ints, strict=True)])
        _close(batched, looped, 1e-6, name)
        _close(fun(a[0], v[0], ints[0]), looped[0], 1e-6, name)
