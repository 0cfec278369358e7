"""jnp reductions, statistics and running sums against NumPy.

Result dtypes (JAX's rules, not NumPy's) are checked by tracing, without
compiling. Values are compared with NumPy (in float64) under one `jit` per
dtype and shape case, each computing every reduction at once to keep the
number of compilations small. Derivatives are checked with `check_grads`,
`jit` against eager and `vmap` against a loop on a representative sample.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f16, f32, i8, i32, u8, u32
from _jnp_helpers import random_data as _data
from _jnp_helpers import wide as _wide

from polyjax_core import errors, make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import numpy as jnp


def _tol(dtype):
    return {bf16: 6e-2, f16: 1e-2}.get(np.dtype(dtype), 2e-5)


def _close(got, want, dtype=f32, err=""):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (err, got.shape, want.shape)
    tol = _tol(dtype)
    np.testing.assert_allclose(_wide(got), _wide(want), rtol=tol, atol=tol, err_msg=err)


def _out_aval(fun, *args):
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


# ---------------------------------------------------------------------------
# Result dtypes (JAX's rules)

# dtype in -> (sum/prod/cumulative_sum, max/min, mean, var/std); cumsum and cumprod keep
# the dtype (bool aside: the default integer), as in JAX.
DTYPE_RULES = {
    boolean: (i32, boolean, f32, f32),
    u8: (u32, u8, f32, f32),
    i8: (i32, i8, f32, f32),
    i32: (i32, i32, f32, f32),
    f16: (f16, f16, f16, f16),
    bf16: (bf16, bf16, bf16, bf16),
    f32: (f32, f32, f32, f32),
    c64: (c64, c64, c64, f32),
}


@pytest.mark.parametrize("dtype", list(DTYPE_RULES), ids=str)
def test_result_dtypes(dtype):
    summed, kept, mean, var = DTYPE_RULES[dtype]
    accumulated = i32 if dtype == boolean else dtype
    x = ShapeDtypeStruct((3, 4), dtype)
    expected = {
        jnp.sum: summed,
        jnp.prod: summed,
        jnp.cumsum: accumulated,
        jnp.cumprod: accumulated,
        jnp.nancumsum: accumulated,
        jnp.nancumprod: accumulated,
        lambda x: jnp.cumulative_prod(x, axis=1): accumulated,
        jnp.add.accumulate: accumulated,
        lambda x: jnp.cumulative_sum(x, axis=1): summed,
        jnp.nansum: summed,
        jnp.max: kept,
        jnp.min: kept,
        jnp.mean: mean,
        jnp.nanmean: mean,
        jnp.var: var,
        jnp.std: var,
        jnp.nanvar: var,
        jnp.all: boolean,
        jnp.any: boolean,
        jnp.count_nonzero: i32,
    }
    for fun, want in expected.items():
        out = _out_aval(fun, x)
        assert out.dtype == want, (getattr(fun, "__name__", fun), out.dtype, want)
        assert not out.weak_type, fun.__name__


def test_dtype_arguments_and_weak_types():
    x = ShapeDtypeStruct((3,), i8)
    assert _out_aval(lambda x: jnp.sum(x, promote_integers=False), x).dtype == i8
    assert _out_aval(lambda x: jnp.sum(x, dtype=f32), x).dtype == f32
    assert _out_aval(lambda x: jnp.mean(x, dtype=f16), x).dtype == f16
    assert _out_aval(lambda x: jnp.var(x, dtype=bf16), x).dtype == bf16
    assert _out_aval(lambda x: jnp.argmax(x), x).dtype == i32
    assert _out_aval(lambda x: jnp.quantile(x, 0.5), x).dtype == f32
    # A weakly typed operand gives a weakly typed sum, max and cumsum.
    weak = ShapeDtypeStruct((3,), f32, weak_type=True)
    for fun in (jnp.sum, jnp.max, jnp.prod):
        assert _out_aval(fun, weak).weak_type, fun.__name__
    assert not _out_aval(jnp.mean, weak).weak_type


# ---------------------------------------------------------------------------
# Values against NumPy: every reduction of one array in one compilation

# (shape, axis, keepdims)
CASES = [
    ((), None, False),
    ((7,), 0, True),
    ((3, 4), 1, False),
    ((2, 3, 4), (0, 2), True),
    ((2, 3, 4), -2, False),
    ((0, 3), 0, False),
    ((3, 0), None, True),
]
DTYPE_CASES = [(f32, c) for c in CASES] + [
    (d, c) for d in (bf16, f16, i32, u8, boolean, c64) for c in (CASES[2], CASES[3], CASES[5])
]


def _is_int_axis(axis):
    return axis is None or isinstance(axis, int)


def _is_empty(shape, axis):
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis)
    return any(shape[a] == 0 for a in axes)


def _reductions(x, axis, keepdims):
    empty = _is_empty(x.shape, axis)
    out = {
        "sum": jnp.sum(x, axis, keepdims=keepdims),
        "prod": jnp.prod(x, axis, keepdims=keepdims),
        "mean": jnp.mean(x, axis, keepdims=keepdims),
        "all": jnp.all(x, axis, keepdims=keepdims),
        "any": jnp.any(x, axis, keepdims=keepdims),
        "count_nonzero": jnp.count_nonzero(x, axis, keepdims=keepdims),
        "var": jnp.var(x, axis, keepdims=keepdims),
        "std": jnp.std(x, axis, keepdims=keepdims, ddof=1),
        "nansum": jnp.nansum(x, axis, keepdims=keepdims),
    }
    bounds = {"initial": 2} if empty else {}
    out["max"] = jnp.max(x, axis, keepdims=keepdims, **bounds)
    out["min"] = jnp.min(x, axis, keepdims=keepdims, **{k: v - 1 for k, v in bounds.items()})
    if not empty:
        if x.dtype != boolean:
            out["ptp"] = jnp.ptp(x, axis, keepdims=keepdims)
        if x.dtype != c64:
            out["median"] = jnp.median(x, axis, keepdims=keepdims)
            if _is_int_axis(axis):
                out["argmax"] = jnp.argmax(x, axis, keepdims=keepdims)
                out["argmin"] = jnp.argmin(x, axis, keepdims=keepdims)
    if _is_int_axis(axis) and x.ndim:
        out["cumsum"] = jnp.cumsum(x, axis)
        out["cumprod"] = jnp.cumprod(x, axis)
    return out


def _numpy_reductions(x, axis, keepdims, names):
    w = _wide(x)
    bounds = {"initial": 2} if _is_empty(x.shape, axis) else {}
    want = {
        "sum": lambda: np.sum(w, axis, keepdims=keepdims),
        "prod": lambda: np.prod(w, axis, keepdims=keepdims),
        "mean": lambda: np.mean(w, axis, keepdims=keepdims),
        "all": lambda: np.all(w, axis, keepdims=keepdims),
        "any": lambda: np.any(w, axis, keepdims=keepdims),
        "count_nonzero": lambda: np.count_nonzero(w, axis, keepdims=keepdims),
        "var": lambda: np.var(w, axis, keepdims=keepdims),
        "std": lambda: np.std(w, axis, keepdims=keepdims, ddof=1),
        "nansum": lambda: np.nansum(w, axis, keepdims=keepdims),
        "max": lambda: np.max(w, axis, keepdims=keepdims, **bounds),
        "min": lambda: np.min(w, axis, keepdims=keepdims, **{k: v - 1 for k, v in bounds.items()}),
        "ptp": lambda: np.ptp(w, axis, keepdims=keepdims),
        "median": lambda: np.median(w, axis, keepdims=keepdims),
        "argmax": lambda: np.argmax(w, axis, keepdims=keepdims),
        "argmin": lambda: np.argmin(w, axis, keepdims=keepdims),
        "cumsum": lambda: np.cumsum(w, axis),
        "cumprod": lambda: np.cumprod(w, axis),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return {name: want[name]() for name in names}


@pytest.mark.parametrize(
    "dtype, case", DTYPE_CASES, ids=[f"{d}-{c[0]}-{c[1]}-{c[2]}" for d, c in DTYPE_CASES]
)
def test_values(dtype, case):
    shape, axis, keepdims = case
    x = _data(shape, dtype)
    got = jit(lambda x: _reductions(x, axis, keepdims))(x)
    want = _numpy_reductions(x, axis, keepdims, got)
    for name in got:
        tol_dtype = f32 if name in ("argmax", "argmin", "count_nonzero", "all", "any") else dtype
        if name == "prod" and dtype in (bf16, f16):
            tol_dtype = dtype  # products of up to 24 factors rounded once
        _close(got[name], want[name], tol_dtype, f"{name} {dtype} {case}")


def test_jit_matches_eager_on_a_sample():
    x = _data((3, 4), f32, seed=3)
    funs = {
        "var": lambda x: jnp.var(x, 0, ddof=1),
        "quantile": lambda x: jnp.quantile(x, np.float32([0.2, 0.9]), axis=1),
        "cumsum": lambda x: jnp.cumsum(x, 1),
        "nanmax": lambda x: jnp.nanmax(x, 0),
    }
    for name, fun in funs.items():
        np.testing.assert_allclose(fun(x), jit(fun)(x), rtol=1e-6, err_msg=name)


def test_vmap_matches_a_loop():
    xs = _data((4, 3, 5), f32, seed=4)
    xs[1, 2, 3] = np.nan
    funs = {
        "std": lambda x: jnp.std(x, axis=1),
        "argmax": lambda x: jnp.argmax(x, axis=0),
        "nanmedian": lambda x: jnp.nanmedian(x, axis=1),
        "quantile": lambda x: jnp.quantile(x, 0.3, method="nearest"),
        "cumprod": lambda x: jnp.cumprod(x, axis=1),
        "mean_where": lambda x: jnp.mean(x, axis=1, where=x > 0),
    }
    for name, fun in funs.items():
        batched = jit(vmap(fun))(xs)
        looped = np.stack([np.asarray(jit(fun)(x)) for x in xs])
        np.testing.assert_allclose(batched, looped, rtol=1e-6, err_msg=name)


# ---------------------------------------------------------------------------
# where, initial, empty reductions, NaN forms


def test_where_and_initial():
    x = _data((3, 4), f32, seed=1)
    mask = np.array([True, False, True, True])
    rows = np.array([[True], [False], [True]])

    def f(x):
        return {
            "sum": jnp.sum(x, 0, where=mask, initial=1.5),
            "prod": jnp.prod(x, 1, where=rows),
            "max": jnp.max(x, 1, where=mask, initial=-5.0),
            "min": jnp.min(x, None, where=x > 0, initial=9.0),
            "mean": jnp.mean(x, 0, where=rows),
            "var": jnp.var(x, 1, where=mask, ddof=1),
            "std": jnp.std(x, 0, where=rows),
            "all": jnp.all(x > -1, 1, where=mask),
            "any": jnp.any(x > 1, 0, where=rows),
            "nansum": jnp.nansum(x, 1, where=mask),
        }

    got = jit(f)(x)
    want = {
        "sum": np.sum(x, 0, where=mask, initial=1.5),
        "prod": np.prod(x, 1, where=rows),
        "max": np.max(x, 1, where=mask, initial=-5.0),
        "min": np.min(x, None, where=x > 0, initial=9.0),
        "mean": np.mean(x, 0, where=rows),
        "var": np.var(x, 1, where=mask, ddof=1),
        "std": np.std(x, 0, where=rows),
        "all": np.all(x > -1, 1, where=mask),
        "any": np.any(x > 1, 0, where=rows),
        "nansum": np.nansum(x, 1, where=mask),
    }
    for name in want:
        _close(got[name], want[name], f32, name)


def test_empty_reductions():
    x = np.zeros((0, 3), f32)
    assert float(jnp.sum(x)) == 0 and float(jnp.prod(x)) == 1
    assert bool(jnp.all(x)) and not bool(jnp.any(x))
    np.testing.assert_array_equal(jnp.sum(x, 0), np.zeros(3))
    assert np.isnan(float(jnp.mean(x))) and np.isnan(float(jnp.var(x)))
    assert float(jnp.max(x, initial=-1.0)) == -1
    np.testing.assert_array_equal(jnp.max(x, 1), np.zeros((0,)))  # nothing empty is reduced
    for fun in (jnp.max, jnp.min, jnp.ptp, jnp.nanmax):
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            fun(x, 0)
    for fun in (jnp.argmax, jnp.nanargmin):
        with pytest.raises(ValueError, match="empty sequence"):
            fun(x)
    assert np.isnan(float(jnp.median(x)))


def test_reduction_errors():
    x = np.ones((2, 3), f32)
    with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
        jnp.max(x, where=x > 0)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        jnp.sum(x, (0, 0))
    with pytest.raises(ValueError, match="out of bounds|axis"):
        jnp.mean(x, 2)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        jnp.sum(x, out=x)
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.sum([1, 2])
    with pytest.raises(TypeError, match="boolean"):
        jnp.ptp(x > 0)
    with pytest.raises(ValueError, match="ddof and correction"):
        jnp.var(x, ddof=1, correction=1)
    with pytest.raises(ValueError, match="real dtype"):
        jnp.var(x.astype(c64), dtype=f32)


def test_complex_max_min_are_lexicographic():
    c = np.array([[1 + 2j, 1 + 3j, 0 + 5j], [2 - 1j, 2 - 2j, -1 + 0j]], c64)
    np.testing.assert_array_equal(jnp.max(c, 1), np.max(c, 1))
    np.testing.assert_array_equal(jnp.min(c, 0), np.min(c, 0))
    np.testing.assert_array_equal(jnp.max(c, initial=2 + 0j), np.max(c, initial=2 + 0j))
    # Masked-out elements take the lexicographic extreme, below (-inf - 1j).
    d, keep = np.complex64([-np.inf - 1j, 5]), np.array([True, False])
    init = complex(-np.inf, -5)
    np.testing.assert_array_equal(
        jnp.max(d, where=keep, initial=init), np.max(d, where=keep, initial=init)
    )


NAN_DATA = np.array(
    [[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 0.5, np.nan, 2.0]]
)


@pytest.mark.parametrize("dtype", [f32, f16], ids=str)
def test_nan_reductions(dtype):
    x = NAN_DATA.astype(dtype)
    names = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanmedian"]

    def f(x):
        out = {n: getattr(jnp, n)(x, axis=1) for n in names}
        out["nanvar_ddof"] = jnp.nanvar(x, axis=0, ddof=1)
        out["nanargmax"] = jnp.nanargmax(x, axis=1)
        out["nanargmin"] = jnp.nanargmin(x, axis=1, keepdims=True)
        out["nancumsum"] = jnp.nancumsum(x, axis=1)
        out["nancumprod"] = jnp.nancumprod(x)
        out["nanquantile"] = jnp.nanquantile(x, np.float32([0.25, 1.0]), axis=1)
        out["nanpercentile"] = jnp.nanpercentile(x, 50, axis=0, method="lower")
        return out

    got = jit(f)(x)
    w = _wide(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = {n: getattr(np, n)(w, axis=1) for n in names}
        want["nanvar_ddof"] = np.nanvar(w, axis=0, ddof=1)
        # NumPy raises for an all-NaN slice; JAX (and we) return -1 there.
        want["nanargmax"] = np.array([2, -1, 0])
        want["nanargmin"] = np.array([[3], [-1], [1]])
        want["nancumsum"] = np.nancumsum(w, axis=1)
        want["nancumprod"] = np.nancumprod(w)
        want["nanquantile"] = np.nanquantile(w, [0.25, 1.0], axis=1)
        want["nanpercentile"] = np.nanpercentile(w, 50, axis=0, method="lower")
    for name in want:
        _close(got[name], want[name], dtype, name)
    # Integers have no NaNs: their nan* forms are the plain ones.
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(jnp.nanmax(ints, 0), ints.max(0))
    np.testing.assert_array_equal(jnp.nanargmin(ints, 1), ints.argmin(1))


# ---------------------------------------------------------------------------
# Statistics


def test_var_std_ddof_and_correction():
    x = _data((4, 5), f32, seed=2)

    def f(x):
        return [
            jnp.var(x, 0, ddof=2),
            jnp.var(x, 1, correction=1),
            jnp.std(x, (0, 1), keepdims=True),
            jnp.var(x[:1], 0, ddof=1),  # n - ddof == 0
            jnp.var(x.astype(c64) * (1 + 1j), 1),
            jnp.var(x, 1, dtype=bf16),
        ]

    got = jit(f)(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = [
            np.var(_wide(x), 0, ddof=2),
            np.var(_wide(x), 1, ddof=1),
            np.std(_wide(x), (0, 1), keepdims=True),
            np.var(_wide(x[:1]), 0, ddof=1),
            np.var(_wide(x) * (1 + 1j), 1),
            np.var(_wide(x), 1),
        ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, bf16 if i == 5 else f32, str(i))
    assert got[4].dtype == f32 and got[5].dtype == bf16


def test_average():
    x = _data((3, 4), f32, seed=5)
    w4 = np.float32([1, 2, 0.5, 3])
    w34 = _data((3, 4), f32, seed=6) + 2

    def f(x):
        return [
            jnp.average(x),
            jnp.average(x, 1, weights=w4),
            jnp.average(x, 0, weights=w34, keepdims=True),
            *jnp.average(x, 1, weights=w4, returned=True),
            *jnp.average(x, (0, 1), returned=True),
        ]

    got = jit(f)(x)
    want = [
        np.average(x),
        np.average(x, 1, weights=w4),
        np.average(x, 0, weights=w34, keepdims=True),
        *np.average(x, 1, weights=w4, returned=True),
        *np.average(x, (0, 1), returned=True),
    ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, f32, str(i))
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(x, weights=w4)
    with pytest.raises(ValueError, match="not compatible"):
        jnp.average(x, 0, weights=w4)
    with pytest.raises(TypeError, match="1D weights"):
        jnp.average(x, 1, weights=np.ones((2, 2), f32))


METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(method):
    # q values on a grid where float32 and float64 positions agree exactly.
    x = _data((3, 8), f32, seed=7)
    x_int = np.arange(24, dtype=np.int32).reshape(4, 6)[:, ::-1]
    q = np.float32([0.0, 0.125, 0.25, 0.5, 0.625, 0.875, 1.0])

    def f(x, x_int):
        return [
            jnp.quantile(x, q, axis=1, method=method),
            jnp.quantile(x, 0.25, method=method, keepdims=True),
            jnp.quantile(x, q[::2], axis=(0, 1), method=method),
            jnp.percentile(x_int, q * 100, axis=0, method=method),
            jnp.quantile(x_int, 0.5, axis=1, method=method, keepdims=True),
        ]

    got = jit(f)(x, x_int)
    w, wi = _wide(x), x_int.astype(np.float64)
    want = [
        np.quantile(w, q.astype(np.float64), axis=1, method=method),
        np.quantile(w, 0.25, method=method, keepdims=True),
        np.quantile(w, q[::2].astype(np.float64), axis=(0, 1), method=method),
        np.percentile(wi, q.astype(np.float64) * 100, axis=0, method=method),
        np.quantile(wi, 0.5, axis=1, method=method, keepdims=True),
    ]
    for i, (g, w_) in enumerate(zip(got, want, strict=True)):
        _close(g, w_, f32, f"{method} {i}")
        assert g.dtype == f32


def test_quantile_random_q_and_nans():
    x = _data((5, 6), f32, seed=8)
    q = np.random.default_rng(9).uniform(0, 1, 5).astype(np.float32)
    got = jnp.quantile(x, q, axis=0)
    _close(got, np.quantile(_wide(x), q.astype(np.float64), axis=0), f32)
    x[2, 3] = np.nan
    got = jnp.median(x, axis=0)
    want = np.median(x, axis=0)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    _close(np.nan_to_num(got), np.nan_to_num(want), f32)


def test_weighted_inverted_cdf():
    x = np.float32([1, 2, 3, 4, 5])
    weights = np.float32([1, 1, 2, 1, 1])
    assert float(jnp.quantile(x, 0.5, weights=weights, method="inverted_cdf")) == 3.0
    x2 = _data((3, 6), f32, seed=10)
    w2 = np.abs(_data((3, 6), f32, seed=11)) + 0.1
    q = np.float32([0.1, 0.5, 0.9])
    got = jnp.quantile(x2, q, axis=1, weights=w2, method="inverted_cdf")
    want = np.quantile(x2, q, axis=1, weights=w2, method="inverted_cdf")
    _close(got, want, f32)
    with pytest.raises(ValueError, match="only method='inverted_cdf' supports weights"):
        jnp.quantile(x, 0.5, weights=weights)


def test_quantile_errors():
    x = np.ones((3,), f32)
    with pytest.raises(ValueError, match="method must be one of"):
        jnp.quantile(x, 0.5, method="hazen")
    with pytest.raises(ValueError, match="scalar or 1-D"):
        jnp.quantile(x, np.ones((2, 2), f32))
    with pytest.raises(ValueError, match="does not support complex input"):  # JAX's error
        jnp.median(x.astype(c64))
    with pytest.raises(TypeError, match="q must be real"):
        jnp.quantile(x, 0.5j)
    with pytest.raises(ValueError, match="overwrite_input"):
        jnp.median(x, overwrite_input=True)


# ---------------------------------------------------------------------------
# Running sums and differences


def test_cumulative_functions():
    x = _data((3, 4), f32, seed=12)
    b = x > 0

    def f(x, b):
        return [
            jnp.cumsum(x),
            jnp.cumprod(x, axis=0),
            jnp.cumsum(b, 1),
            jnp.cumsum(x, 1, dtype=np.int32),
            jnp.cumulative_sum(x, axis=1, include_initial=True),
            jnp.cumulative_prod(x, axis=0, include_initial=True),
            jnp.cumulative_sum(x[0]),
        ]

    got = jit(f)(x, b)
    want = [
        np.cumsum(x),
        np.cumprod(_wide(x), axis=0),
        np.cumsum(b, 1),
        np.cumsum(x.astype(np.int32), 1),
        np.cumulative_sum(_wide(x), axis=1, include_initial=True),
        np.cumulative_prod(_wide(x), axis=0, include_initial=True),
        np.cumulative_sum(_wide(x[0])),
    ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, f32, str(i))
    assert got[2].dtype == i32
    with pytest.raises(ValueError, match="axis was not set"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="non-scalar"):
        jnp.cumulative_prod(np.float32(1))


@pytest.mark.parametrize("dtype", [f32, i32, u8, boolean], ids=str)
def test_diff(dtype):
    x = _data((3, 5), dtype, seed=13)

    def f(x):
        out = [
            jnp.diff(x),
            jnp.diff(x, n=2, axis=0),
            jnp.diff(x, n=3, prepend=x[:, :1], append=x[:, -2:]),
            jnp.diff(x, n=0),
            jnp.diff(x[:, :1], n=2),
        ]
        return out + ([] if dtype == boolean else [jnp.ediff1d(x)])

    got = jit(f)(x)
    want = [
        np.diff(x),
        np.diff(x, n=2, axis=0),
        np.diff(x, n=3, prepend=x[:, :1], append=x[:, -2:]),
        np.diff(x, n=0),
        np.diff(x[:, :1], n=2),
    ] + ([] if dtype == boolean else [np.ediff1d(x)])
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=str(i))
        assert g.dtype == w.dtype, (i, g.dtype, w.dtype)
    if dtype == boolean:
        with pytest.raises(TypeError, match="bool"):
            jnp.ediff1d(x)  # NumPy refuses to subtract bools too


def test_diff_scalar_edges_and_errors():
    x = np.float32([1, 4, 9])
    np.testing.assert_array_equal(jnp.diff(x, prepend=0.0, append=20.0), [1, 3, 5, 11])
    np.testing.assert_array_equal(
        jnp.ediff1d(x, to_end=np.float32([7, 8]), to_begin=-1), [-1, 3, 5, 7, 8]
    )
    with pytest.raises(ValueError, match="order must be non-negative"):
        jnp.diff(x, n=-1)
    with pytest.raises(ValueError, match="at least one dimensional"):
        jnp.diff(np.float32(1))
    with pytest.raises(errors.ConcretizationTypeError):
        jit(lambda x, n: jnp.diff(x, n))(x, 1)


def test_gradient():
    f = _data((4, 5), f32, seed=14)
    coords = np.float32([0, 0.5, 2, 2.5, 4])

    def g(f):
        return [
            *jnp.gradient(f),
            jnp.gradient(f, 0.5, axis=0),
            jnp.gradient(f, coords, axis=1),
            *jnp.gradient(f, 2.0, coords),
            jnp.gradient(f[0].astype(np.int32)),
        ]

    got = jit(g)(f)
    want = [
        *np.gradient(f),
        np.gradient(f, 0.5, axis=0),
        np.gradient(f, coords, axis=1),
        *np.gradient(f, 2.0, coords),
        np.gradient(f[0].astype(np.int32)).astype(np.float32),
    ]
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        _close(a, b, f32, str(i))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(f, edge_order=2)
    with pytest.raises(ValueError, match="too small"):
        jnp.gradient(f[:1], axis=0)


def test_trapezoid():
    y = _data((3, 5), f32, seed=15)
    x1 = np.float32([0, 1, 3, 4, 7])
    x2 = np.cumsum(np.abs(_data((3, 5), f32, seed=16)), axis=1)
    got = jit(
        lambda y: [
            jnp.trapezoid(y),
            jnp.trapezoid(y, dx=0.5, axis=0),
            jnp.trapezoid(y, x1),
            jnp.trapezoid(y, x2),
        ]
    )(y)
    want = [
        np.trapezoid(y),
        np.trapezoid(y, dx=0.5, axis=0),
        np.trapezoid(y, x1),
        np.trapezoid(y, x2),
    ]
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        _close(a, b, f32, str(i))


# ---------------------------------------------------------------------------
# Derivatives


X = _data((3, 4), f32, seed=20) + np.float32([[0.0, 3.0, 6.0, 9.0]])  # distinct values

GRAD_FUNS = {
    "sum": lambda x: jnp.sum(x, 1, where=x > 0),
    "prod": lambda x: jnp.prod(x, 0),
    "max": lambda x: jnp.max(x, 1),
    "mean": lambda x: jnp.mean(x, (0, 1)),
    "var": lambda x: jnp.var(x, 0, ddof=1),
    "std": lambda x: jnp.std(x, 1),
    "nanmean": lambda x: jnp.nanmean(x, 0),
    "average": lambda x: jnp.average(x, 1, weights=np.float32([1, 2, 3, 4])),
    "cumsum": lambda x: jnp.cumsum(x, 1),
    "cumprod": lambda x: jnp.cumprod(x, 0),
    "quantile": lambda x: jnp.quantile(x, np.float32([0.3, 0.7]), axis=1),
    "median": lambda x: jnp.median(x, 0),
    "diff": lambda x: jnp.diff(x, 2, axis=1),
    "gradient": lambda x: jnp.gradient(x, np.float32([0, 1, 3, 4]), axis=1),
    "trapezoid": lambda x: jnp.trapezoid(x, np.float32([0, 1, 3, 4])),
}


@pytest.mark.parametrize("name", list(GRAD_FUNS))
def test_grads(name):
    check_grads(GRAD_FUNS[name], (X,), order=2, atol=2e-2, rtol=2e-2)


def test_cov_and_corrcoef():
    x = _data((3, 6), f32, seed=40)
    y = _data((2, 6), f32, seed=41)
    fw = np.int32([1, 2, 1, 3, 1, 1])
    aw = np.abs(_data((6,), f32, seed=42)) + 0.5
    cases = [
        ((x,), {}),
        ((x, y), {}),
        ((x.T,), {"rowvar": False}),
        ((x[0],), {}),
        ((x,), {"bias": True}),
        ((x,), {"ddof": 2}),
        ((x,), {"fweights": fw}),
        ((x,), {"aweights": aw}),
        ((x,), {"fweights": fw, "aweights": aw}),
        ((x + 1j * x[::-1],), {}),
    ]
    got = jit(lambda: [jnp.cov(*a, **k) for a, k in cases] + [jnp.corrcoef(x, y)])()
    want = [np.cov(*a, **k) for a, k in cases] + [np.corrcoef(x, y)]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _close(g, w, f32, str(i))
    _close(jnp.corrcoef(x[0], y[0]), np.corrcoef(x[0], y[0]), f32)
    check_grads(lambda x: jnp.corrcoef(x), (x,), order=1, atol=2e-2, rtol=2e-2)
    with pytest.raises(ValueError, match="more than 2 dimensions"):
        jnp.cov(np.ones((2, 2, 2), f32))
    with pytest.raises(TypeError, match="fweights must be integer"):
        jnp.cov(x, fweights=aw)


def test_symbolic_shapes():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), f32)
    expected = {
        "sum": (lambda x: jnp.sum(x, 0), (3,)),
        "mean": (lambda x: jnp.mean(x, 0), (3,)),
        "var": (lambda x: jnp.var(x), ()),
        "max": (lambda x: jnp.max(x, 1, keepdims=True), (b, 1)),
        "cumsum": (lambda x: jnp.cumsum(x, 0), (b, 3)),
        "median": (lambda x: jnp.median(x, 0), (3,)),
        "average": (lambda x: jnp.average(x, 0, weights=x), (3,)),
        "quantile": (lambda x: jnp.quantile(x, np.float32([0.1, 0.9]), axis=1), (2, b)),
    }
    for name, (fun, shape) in expected.items():
        assert _out_aval(fun, x).shape == shape, name
