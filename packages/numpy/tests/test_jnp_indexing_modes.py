"""Out-of-bound and negative indices in every mode of every indexing function.

One table per kind of operation (reads, updates) lists, for each function and
each `mode` it accepts, how JAX treats an index (docs/numpy.md, "Index modes"):
whether a negative index is first wrapped once by adding the axis size, and
whether an index still outside `[0, size)` is clamped, filled or dropped. The
expected values are computed with NumPy from that description, for indices
below `-size`, in `[-size, 0)`, in range and past the end. Each table runs
under one `jit` (one compilation) with the indices as traced arguments.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax

GSM = lax.GatherScatterMode
N = 5
X = np.arange(1, N + 1, dtype=np.float32) * 10
IDX = np.array([-7, -6, -5, -1, 0, 2, 4, 5, 9], np.int32)
FILL = -2.5

# ---------------------------------------------------------------------------
# NumPy oracles


def _wrapped(i):
    return np.where(i < 0, i + N, i)


def _clip(i):
    return X[np.clip(i, 0, N - 1)]


def _fill(i, fill=np.nan):
    ok = (i >= 0) & (i < N)
    return np.where(ok, X[np.where(ok, i, 0)], np.float32(fill)).astype(np.float32)


# (index rule, out-of-bound rule) of each read; "raw" leaves negatives alone.
READ_RULES = {
    "raw-clip": lambda i: _clip(i),
    "wrap-clip": lambda i: _clip(_wrapped(i)),
    "wrap-fill": lambda i: _fill(_wrapped(i)),
    "wrap-fill-value": lambda i: _fill(_wrapped(i), FILL),
    "raw-fill": lambda i: _fill(i),
    "raw-fill-value": lambda i: _fill(i, FILL),
    "modulo": lambda i: X[np.mod(i, N)],
}

_GDN = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))


def _gather(x, i, **kw):
    return lax.gather(x, i[:, None], _GDN, (1,), **kw)


# (name, function of (x, i), rule). JAX's take knows only NumPy's mode names.
READS = [
    ("x[i]", lambda x, i: x[i], "wrap-clip"),
    ("take", lambda x, i: jnp.take(x, i), "wrap-fill"),
    ("take fill", lambda x, i: jnp.take(x, i, mode="fill"), "wrap-fill"),
    ("take fill value", lambda x, i: jnp.take(x, i, fill_value=FILL), "wrap-fill-value"),
    ("take clip", lambda x, i: jnp.take(x, i, mode="clip"), "raw-clip"),
    ("take clip value", lambda x, i: jnp.take(x, i, mode="clip", fill_value=FILL), "raw-clip"),
    ("take wrap", lambda x, i: jnp.take(x, i, mode="wrap"), "modulo"),
    ("take_along_axis", lambda x, i: jnp.take_along_axis(x, i, 0), "wrap-fill"),
    ("tal fill", lambda x, i: jnp.take_along_axis(x, i, 0, mode="fill"), "wrap-fill"),
    ("tal drop", lambda x, i: jnp.take_along_axis(x, i, 0, mode="drop"), "wrap-fill"),
    (
        "tal FILL_OR_DROP",
        lambda x, i: jnp.take_along_axis(x, i, 0, mode=GSM.FILL_OR_DROP),
        "wrap-fill",
    ),
    ("tal value", lambda x, i: jnp.take_along_axis(x, i, 0, fill_value=FILL), "wrap-fill-value"),
    ("tal clip", lambda x, i: jnp.take_along_axis(x, i, 0, mode="clip"), "wrap-clip"),
    ("tal CLIP", lambda x, i: jnp.take_along_axis(x, i, 0, mode=GSM.CLIP), "wrap-clip"),
    # The string promises indices in [0, size) and skips the wrapping; the enum
    # value wraps (both as JAX).
    (
        "tal promise",
        lambda x, i: jnp.take_along_axis(x, i, 0, mode="promise_in_bounds"),
        "raw-clip",
    ),
    (
        "tal PROMISE",
        lambda x, i: jnp.take_along_axis(x, i, 0, mode=GSM.PROMISE_IN_BOUNDS),
        "wrap-clip",
    ),
    ("get", lambda x, i: x.at[i].get(), "wrap-clip"),
    ("get value", lambda x, i: x.at[i].get(fill_value=FILL), "wrap-clip"),
    ("get clip", lambda x, i: x.at[i].get(mode="clip"), "wrap-clip"),
    ("get promise", lambda x, i: x.at[i].get(mode="promise_in_bounds"), "wrap-clip"),
    ("get fill", lambda x, i: x.at[i].get(mode="fill"), "wrap-fill"),
    ("get drop", lambda x, i: x.at[i].get(mode="drop"), "wrap-fill"),
    ("get fill value", lambda x, i: x.at[i].get(mode="fill", fill_value=FILL), "wrap-fill-value"),
    ("get FILL_OR_DROP", lambda x, i: x.at[i].get(mode=GSM.FILL_OR_DROP), "wrap-fill"),
    ("gather", lambda x, i: _gather(x, i), "raw-clip"),
    ("gather value", lambda x, i: _gather(x, i, fill_value=FILL), "raw-clip"),
    ("gather clip", lambda x, i: _gather(x, i, mode="clip"), "raw-clip"),
    ("gather promise", lambda x, i: _gather(x, i, mode="promise_in_bounds"), "raw-clip"),
    ("gather fill", lambda x, i: _gather(x, i, mode="fill"), "raw-fill"),
    (
        "gather fill value",
        lambda x, i: _gather(x, i, mode="fill", fill_value=FILL),
        "raw-fill-value",
    ),
]


def test_read_modes_match_their_rules():
    outs = jit(lambda x, i: [f(x, i) for _, f, _ in READS])(X, IDX)
    for (name, _, rule), got in zip(READS, outs):
        np.testing.assert_array_equal(np.asarray(got), READ_RULES[rule](IDX), err_msg=name)


def test_scalar_reads_follow_the_same_rules():
    # A scalar index takes other paths than an array index: static ints are
    # sliced, traced ones go through dynamic_slice (both under one jit here).
    ks = [int(k) for k in IDX]

    def reads(x, i):
        static = [(x[k], x.at[k].get(mode="fill"), jnp.take(x, k, mode="clip")) for k in ks]
        traced = [
            (x[i[j]], x.at[i[j]].get(mode="fill"), jnp.take(x, i[j], mode="clip"))
            for j in range(len(ks))
        ]
        return static, traced

    for outs in jit(reads)(X, IDX):
        for k, (plain, filled, clipped) in zip(IDX, outs):
            np.testing.assert_array_equal(np.asarray(plain), _clip(_wrapped(k)), err_msg=str(k))
            np.testing.assert_array_equal(np.asarray(filled), _fill(_wrapped(k)), err_msg=str(k))
            np.testing.assert_array_equal(np.asarray(clipped), _clip(k), err_msg=str(k))


# ---------------------------------------------------------------------------
# Updates: out-of-bound indices are dropped or clamped.

U = np.arange(1, len(IDX) + 1, dtype=np.float32)
BASE = np.full(N, 100, np.float32)
_UFUNC = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _update(kind, index_rule, bound_rule):
    i = _wrapped(IDX) if index_rule == "wrap" else IDX
    keep = (i >= 0) & (i < N)
    if bound_rule == "clip":
        i, keep = np.clip(i, 0, N - 1), np.ones_like(keep)
    out = BASE.copy()
    if kind == "set":  # all updates equal: which repeated one wins does not matter
        out[i[keep]] = 7
    else:
        _UFUNC[kind].at(out, i[keep], U[keep])
    return out


_SDN = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
_LAX = {"add": lax.scatter_add, "mul": lax.scatter_mul, "min": lax.scatter_min}
_LAX.update({"max": lax.scatter_max, "set": lax.scatter})


def _values(kind, u):
    return jnp.full_like(u, 7) if kind == "set" else u


def _at(kind, mode):
    def f(x, i, u):
        ref = x.at[i]
        return getattr(ref, kind)(_values(kind, u), **({} if mode == "default" else {"mode": mode}))

    return f


def _lax_scatter(kind, mode):
    def f(x, i, u):
        kw = {} if mode == "default" else {"mode": mode}
        return _LAX[kind](x, i[:, None], _values(kind, u), _SDN, **kw)

    return f


def _put_along_axis(mode):
    def f(x, i, u):
        kw = {} if mode == "default" else {"mode": mode}
        return jnp.put_along_axis(x, i, _values("set", u), 0, inplace=False, **kw)

    return f


UPDATE_MODES = ["default", "fill", "drop", "promise_in_bounds", GSM.FILL_OR_DROP, "clip"]
UPDATES = (
    [
        (f"at.{kind} {mode}", kind, _at(kind, mode), "wrap", "clip" if mode == "clip" else "drop")
        for kind in ("set", "add", "mul", "min", "max")
        for mode in UPDATE_MODES
    ]
    + [
        (
            f"lax {kind} {mode}",
            kind,
            _lax_scatter(kind, mode),
            "raw",
            "clip" if mode == "clip" else "drop",
        )
        for kind in ("set", "add", "max")
        for mode in UPDATE_MODES
    ]
    + [
        (
            f"put_along_axis {mode}",
            "set",
            _put_along_axis(mode),
            "wrap",
            "clip" if mode == "clip" else "drop",
        )
        for mode in UPDATE_MODES
    ]
)


def test_update_modes_match_their_rules():
    outs = jit(lambda x, i, u: [f(x, i, u) for _, _, f, _, _ in UPDATES])(BASE, IDX, U)
    for (name, kind, _, index_rule, bound_rule), got in zip(UPDATES, outs):
        want = _update(kind, index_rule, bound_rule)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=name)


def test_put_clips_raw_indices_or_wraps_like_numpy():
    modes = (None, "clip", "wrap")
    outs = jit(lambda x, i, u: [jnp.put(x, i, u, mode=m, inplace=False) for m in modes])(
        BASE, IDX, U
    )
    for mode, got in zip(modes, outs):
        want = BASE.copy()
        np.put(want, IDX, U, mode=mode or "clip")
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(mode))


# ---------------------------------------------------------------------------
# Fill values and index dtypes

bf16 = np.dtype(ml_dtypes.bfloat16)


@pytest.mark.parametrize(
    "dtype, default, cast",
    [
        (np.float32, np.nan, -1.0),
        (bf16, np.nan, -1.0),
        (np.complex64, np.nan, -1.0),
        (np.int8, -128, -1),
        (np.uint16, 65535, 65535),  # a fill value of -1 wraps, as a cast to uint16
        (np.bool_, True, True),
    ],
    ids=str,
)
def test_default_and_cast_fill_values(dtype, default, cast):
    x = np.arange(N).astype(dtype)
    i = np.array([-7, 1, 5], np.int32)
    outs = jit(
        lambda x, i: (
            jnp.take(x, i),
            jnp.take_along_axis(x, i, 0),
            x.at[i].get(mode="fill"),
            _gather(x, i, mode="fill"),
            x.at[i].get(mode="fill", fill_value=-1),
            jnp.take(x, i, fill_value=-1),
        )
    )(x, i)
    want = np.array([default, x[1], default]).astype(dtype)
    want_cast = np.array([cast, x[1], cast]).astype(dtype)
    as_f = (lambda a: a.astype(np.float32)) if dtype == bf16 else np.asarray
    for k, got in enumerate(outs):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(as_f(np.asarray(got)), as_f(want if k < 4 else want_cast))


def test_narrow_index_dtypes_wrap_in_a_wide_type():
    # Decision (docs/numpy.md): -6 as int8 into 300 elements is element 294. JAX
    # wraps in the index's own type (giving 38 in take, OverflowError for x[i]
    # and for take's "wrap" and put).
    x = np.arange(300, dtype=np.float32)
    i, u = np.array([-128, -6, 127], np.int8), np.array([0, 255], np.uint8)
    outs = jit(
        lambda x, i, u: (
            jnp.take(x, i),
            x[i],
            jnp.take_along_axis(x, i, 0, mode="clip"),
            jnp.take(x, i, mode="clip"),
            jnp.take(x, u, mode="clip"),
            jnp.take(x[:5], u, mode="clip"),
            jnp.take(x, i, mode="wrap"),
            jnp.put(x, i, -1.0, inplace=False),
            jnp.put(x, i, -1.0, mode="wrap", inplace=False),
        )
    )(x, i, u)
    wants = [x[[172, 294, 127]]] * 3 + [x[[0, 0, 127]], x[[0, 255]], x[[0, 4]], x[[172, 294, 127]]]
    for positions in ([0, 127], [172, 294, 127]):  # put's "clip", then "wrap"
        wants.append(x.copy())
        wants[-1][positions] = -1.0
    for got, want in zip(outs, wants):
        np.testing.assert_array_equal(np.asarray(got), want)


# ---------------------------------------------------------------------------
# Defaults in the jaxpr, and modes that are refused


def test_lax_defaults_gather_promise_in_bounds_scatter_fill_or_drop():
    i = np.int32([[7]])
    gather = make_jaxpr(lambda x: lax.gather(x, i, _GDN, (1,), fill_value=1.0))(X)
    assert gather.jaxpr.eqns[0].params["mode"] is GSM.PROMISE_IN_BOUNDS
    assert gather.jaxpr.eqns[0].params["fill_value"] is None
    scatter = make_jaxpr(lambda x: lax.scatter(x, i, np.float32([1]), _SDN))(X)
    assert scatter.jaxpr.eqns[0].params["mode"] is GSM.FILL_OR_DROP
    assert GSM.from_any(None) is GSM.FILL_OR_DROP


@pytest.mark.parametrize(
    "mode", ["promise_in_bounds", "drop", "bogus", GSM.CLIP, GSM.FILL_OR_DROP], ids=str
)
def test_take_accepts_only_numpy_mode_names(mode):
    with pytest.raises(ValueError, match=f"Invalid mode '{mode}' for np.take"):
        jnp.take(X, IDX, mode=mode)


def test_gather_modes_refuse_wrap():
    for f in (
        lambda: jnp.take_along_axis(X, IDX, 0, mode="wrap"),
        lambda: jnp.asarray(X).at[IDX].get(mode="wrap"),
        lambda: jnp.asarray(X).at[IDX].set(1.0, mode="wrap"),
        lambda: jnp.put_along_axis(X, IDX, 1.0, 0, inplace=False, mode="wrap"),
        lambda: _gather(X, IDX, mode="wrap"),
    ):
        with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
            f()
    with pytest.raises(ValueError, match="mode should be one of 'wrap' or 'clip'; got mode='fill'"):
        jnp.put(X, IDX, 1.0, mode="fill", inplace=False)
    with pytest.raises(NotImplementedError, match="'raise' mode"):
        jnp.take(X, IDX, mode="raise")
