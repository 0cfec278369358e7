"""dynamic_slice, dynamic_update_slice and their one-axis helpers.

Values against NumPy (with the clamping of out-of-range starts written out),
derivatives with `check_grads` to order 2, vmap against a Python loop, jit
against eager execution.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import batching, mlir
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, i32, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))
f16, c64 = np.dtype(np.float16), np.dtype(np.complex64)
DTYPES = [f32, bf16, f16, c64, i32, u8, boolean]


def _arr(shape, dtype=f32):
    x = np.asarray((np.arange(int(np.prod(shape))) % 7).reshape(shape))
    return (x % 2).astype(dtype) if dtype == boolean else x.astype(dtype)


def _np_starts(shape, starts, sizes):
    """NumPy's reading of JAX's rule: wrap negatives once, then clamp into range."""
    out = []
    for d, s, n in zip(shape, starts, sizes):
        s = int(s)
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - n))
    return out


def _np_dynamic_slice(x, starts, sizes):
    st = _np_starts(x.shape, starts, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(st, sizes))]


def _np_dynamic_update_slice(x, u, starts):
    st = _np_starts(x.shape, starts, u.shape)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + n) for s, n in zip(st, u.shape))] = u
    return out


SLICE_SHAPES = [
    ((5, 6), (1, 2), (2, 3)),
    ((5, 6), (4, 5), (2, 3)),  # clamped at the end
    ((5, 6), (-1, -7), (2, 3)),  # wrapped, then clamped at 0
    ((5,), (3,), (0,)),  # empty slice
    ((0, 3), (0, 1), (0, 2)),  # size-0 operand
    ((), (), ()),  # rank 0
]
# Every shape case in f32, every dtype on the clamped case (each pair compiles).
SLICE_CASES = [(*c, f32) for c in SLICE_SHAPES] + [(*SLICE_SHAPES[1], d) for d in DTYPES[1:]]


@pytest.mark.parametrize("shape, starts, sizes, dtype", SLICE_CASES)
def test_dynamic_slice_values(shape, starts, sizes, dtype):
    x = _arr(shape, dtype)
    idx = [np.int32(s) for s in starts]
    out = lax.dynamic_slice(x, idx, sizes)
    np.testing.assert_array_equal(np.asarray(out), _np_dynamic_slice(x, starts, sizes))
    assert out.dtype == dtype and out.shape == tuple(sizes)
    # Python ints go the same way.
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_slice(x, list(starts), sizes)), _np_dynamic_slice(x, starts, sizes)
    )


@pytest.mark.parametrize("shape, starts, sizes, dtype", SLICE_CASES)
def test_dynamic_update_slice_values(shape, starts, sizes, dtype):
    x = _arr(shape, dtype)
    u = np.ones(sizes, dtype) if dtype != u8 else np.full(sizes, 9, u8)
    idx = [np.int32(s) for s in starts]
    out = lax.dynamic_update_slice(x, u, idx)
    np.testing.assert_array_equal(np.asarray(out), _np_dynamic_update_slice(x, u, starts))
    assert out.dtype == dtype


def test_index_dtypes_and_unsigned():
    x = _arr((4, 5))
    out = lax.dynamic_slice(x, (np.uint8(3), np.int64(1)), (2, 2))
    np.testing.assert_array_equal(np.asarray(out), x[2:4, 1:3])
    # allow_negative_indices=False clamps a negative start to 0 instead.
    out = lax.dynamic_slice(x, (np.int32(-1), 0), (2, 2), allow_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(out), x[0:2, 0:2])


def test_jaxpr_and_jit_match_eager():
    x = _arr((5, 6))
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    jaxpr = " ".join(str(make_jaxpr(f)(x, np.int32(1), np.int32(2))).split())
    assert "dynamic_slice[slice_sizes=(2, 3)] a" in jaxpr
    jf = jit(f)
    g = jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)))
    u = np.full((2, 2), -1, f32)
    for i, j in [(0, 0), (3, 3), (9, -2), (-4, 1)]:
        a, b = np.int32(i), np.int32(j)
        np.testing.assert_array_equal(np.asarray(jf(x, a, b)), np.asarray(f(x, a, b)))
        np.testing.assert_array_equal(
            np.asarray(g(x, u, a)), _np_dynamic_update_slice(x, u, (i, 1))
        )


def test_errors():
    x = _arr((3, 4))
    with pytest.raises(TypeError, match="Length of slice indices"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match="less than or equal"):
        lax.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(TypeError, match="integer scalars"):
        lax.dynamic_slice(x, (np.float32(0), 0), (1, 1))
    with pytest.raises(TypeError, match="same dtype"):
        lax.dynamic_update_slice(x, np.zeros((1, 1), i32), (0, 0))
    with pytest.raises(TypeError, match="smaller than operand"):
        lax.dynamic_update_slice(x, np.zeros((4, 1), f32), (0, 0))
    with pytest.raises(IndexError):
        lax.index_in_dim(x, 3, 0)


def test_in_dim_helpers():
    x = _arr((4, 5))
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, 1, False)), x[:, -1])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, 2)), x[2:3])
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_index_in_dim(x, np.int32(2), 1, keepdims=False)), x[:, 2]
    )
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_slice_in_dim(x, np.int32(3), 2, axis=0)), x[2:4]
    )
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, 1, 4, 2, axis=1)), x[:, 1:4:2])
    expected = x.copy()
    expected[:, 1:3] = 0
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_update_slice_in_dim(x, np.zeros((4, 2), f32), 1, axis=1)), expected
    )
    expected = x.copy()
    expected[3] = -1
    np.testing.assert_array_equal(
        np.asarray(lax.dynamic_update_index_in_dim(x, np.full(5, -1, f32), np.int32(3), 0)),
        expected,
    )


# ---------------------------------------------------------------------------
# Derivatives

_rng = np.random.default_rng(0)
X = _rng.normal(size=(5, 6)).astype(f32)
U = _rng.normal(size=(2, 3)).astype(f32)


@pytest.mark.parametrize("starts", [(1, 2), (4, -1), (-9, 9)])
def test_grads(starts):
    idx = tuple(np.int32(s) for s in starts)
    check_grads(lambda x: lax.dynamic_slice(x, idx, (2, 3)), (X,), 2)
    check_grads(lambda x, u: lax.dynamic_update_slice(x, u, idx), (X, U), 2)
    check_grads(lambda u: lax.dynamic_update_slice(X, u, idx), (U,), 2)
    check_grads(lambda x: lax.dynamic_update_slice(x, U, idx), (X,), 2)


def test_grad_under_jit_with_traced_index():
    from polyjax_interpreters.ad import grad

    f = jit(grad(lambda x, i: lax.reduce_sum(lax.dynamic_slice(x, (i, 0), (2, 6)) ** 2, (0, 1))))
    g = np.asarray(f(X, np.int32(4)))
    expected = np.zeros_like(X)
    expected[3:5] = 2 * X[3:5]
    np.testing.assert_allclose(g, expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# vmap against a loop


def _loop(f, in_axes, args):
    n = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    outs = []
    for k in range(n):
        outs.append(
            np.asarray(f(*[a if ax is None else np.take(a, k, ax) for a, ax in zip(args, in_axes)]))
        )
    return np.stack(outs)


XB = _rng.normal(size=(3, 5, 6)).astype(f32)
UB = _rng.normal(size=(3, 2, 3)).astype(f32)
IB = np.int32([0, 4, -2])
JB = np.int32([5, 1, 2])


@pytest.mark.parametrize(
    "in_axes",
    [(0, None, None), (None, 0, None), (0, 0, 0), (2, None, 0), (None, 0, 0)],
)
def test_vmap_dynamic_slice(in_axes):
    x = X if in_axes[0] is None else np.moveaxis(XB, 0, in_axes[0])
    i = np.int32(3) if in_axes[1] is None else IB
    j = np.int32(-1) if in_axes[2] is None else JB
    f = lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))  # noqa: E731
    out = batching.vmap(f, in_axes)(x, i, j)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, in_axes, (x, i, j)))


@pytest.mark.parametrize(
    "in_axes",
    [(0, None, None), (None, 0, None), (0, 0, None), (None, None, 0), (0, 0, 0), (1, None, 0)],
)
def test_vmap_dynamic_update_slice(in_axes):
    x = X if in_axes[0] is None else np.moveaxis(XB, 0, in_axes[0])
    u = U if in_axes[1] is None else UB
    i = np.int32(4) if in_axes[2] is None else IB
    f = lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 2))  # noqa: E731
    out = batching.vmap(f, in_axes)(x, u, i)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, in_axes, (x, u, i)))


def test_vmap_of_grad():
    from polyjax_interpreters.ad import grad

    f = grad(lambda x, i: lax.reduce_sum(lax.dynamic_slice_in_dim(x, i, 2) ** 2, (0, 1)))
    out = batching.vmap(f, (None, 0))(X, IB)
    np.testing.assert_allclose(np.asarray(out), _loop(f, (None, 0), (X, IB)), rtol=1e-6)


# ---------------------------------------------------------------------------
# gather

GDN_ROWS = lax.GatherDimensionNumbers(
    offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
)
SDN_ROWS = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
GDN_POINTS = lax.GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)
)
SDN_POINTS = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1)
)
ROWS = np.int32([[2], [0], [2], [5], [-1]])  # repeated, past the end, negative


def test_gather_mode_parsing():
    M = lax.GatherScatterMode
    assert M.from_any("clip") is M.CLIP and M.from_any(None) is M.FILL_OR_DROP
    assert M.from_any("fill") is M.FILL_OR_DROP and M.from_any(M.CLIP) is M.CLIP
    assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
    with pytest.raises(ValueError):
        M.from_any("wrap")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather_rows_all_modes(dtype):
    x = _arr((3, 4), dtype)
    rows = ROWS[:, 0]
    clipped = np.clip(rows, 0, 2)
    out = lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="clip")
    np.testing.assert_array_equal(np.asarray(out), np.take(x, clipped, axis=0))
    out = lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="promise_in_bounds")
    np.testing.assert_array_equal(np.asarray(out)[:3], np.take(x, rows[:3], axis=0))
    out = np.asarray(lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="fill"))
    np.testing.assert_array_equal(out[:3], np.take(x, rows[:3], axis=0))
    fill = {"f": np.nan, "c": np.nan, "V": np.nan, "i": np.iinfo(np.int32).min, "u": 255, "b": True}
    expected = np.full((2, 4), fill[np.dtype(dtype).kind], dtype)
    as_f32 = (lambda a: a.astype(f32)) if dtype == bf16 else (lambda a: a)
    np.testing.assert_array_equal(as_f32(out[3:]), as_f32(expected))
    out = lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="fill", fill_value=1)
    np.testing.assert_array_equal(np.asarray(out)[3:], np.ones((2, 4), dtype))


def test_gather_points_windows_and_batching_dims():
    x = _arr((4, 5)) + np.arange(20, dtype=f32).reshape(4, 5)
    idx = np.int32([[[0, 1], [3, 4]], [[2, 2], [1, 0]]])  # batch (2, 2)
    out = lax.gather(x, idx, GDN_POINTS, (1, 1))
    np.testing.assert_array_equal(np.asarray(out), x[idx[..., 0], idx[..., 1]])
    # 2x2 windows; a start of 3 on an axis of 4 is clamped to 2 in clip mode.
    dn = lax.GatherDimensionNumbers(
        offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1)
    )
    starts = np.int32([[0, 0], [3, 1]])
    out = lax.gather(x, starts, dn, (2, 2), mode="clip")
    np.testing.assert_array_equal(np.asarray(out), np.stack([x[0:2, 0:2], x[2:4, 1:3]]))
    # Batching dims: row b of the operand indexed by indices[b].
    dn = lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(1,),
        start_index_map=(1,),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )
    idx = np.int32([[[1], [4]], [[0], [0]], [[2], [3]], [[4], [1]]])  # f[4, 2, 1]
    out = lax.gather(x, idx, dn, (1, 1))
    np.testing.assert_array_equal(np.asarray(out), np.take_along_axis(x, idx[..., 0], 1))


def test_gather_errors():
    x = _arr((3, 4))
    with pytest.raises(TypeError, match="integer"):
        lax.gather(x, np.float32([[0]]), GDN_ROWS, (1, 4))
    with pytest.raises(TypeError, match="start_index_map"):
        lax.gather(x, np.int32([[0, 1]]), GDN_ROWS, (1, 4))
    with pytest.raises(TypeError, match="slice_sizes"):
        lax.gather(x, np.int32([[0]]), GDN_ROWS, (2, 4))
    with pytest.raises(TypeError, match="offset_dims"):
        lax.gather(x, np.int32([[0]]), GDN_ROWS._replace(offset_dims=()), (1, 4))


# ---------------------------------------------------------------------------
# scatter family

_SCATTER_NP = {
    "scatter_add": np.add.at,
    "scatter_mul": np.multiply.at,
    "scatter_min": np.minimum.at,
    "scatter_max": np.maximum.at,
}


def _np_scatter_rows(name, x, rows, u, clip):
    out = np.array(x, copy=True)
    rows = np.asarray(rows)
    if clip:
        rows = np.clip(rows, 0, x.shape[0] - 1)
    else:
        keep = (rows >= 0) & (rows < x.shape[0])
        rows, u = rows[keep], u[keep]
    if name == "scatter":
        for r, v in zip(rows, u):
            out[r] = v
    else:
        _SCATTER_NP[name](out, rows, u)
    return out


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("dtype", [f32, i32, u8], ids=str)
@pytest.mark.parametrize("name", list(_SCATTER_NP))
def test_scatter_combiners(name, dtype, mode):
    x = _arr((3, 4), dtype)
    u = (np.arange(20).reshape(5, 4) % 5 + 1).astype(dtype)
    out = getattr(lax, name)(x, ROWS, u, SDN_ROWS, mode=mode)
    expected = _np_scatter_rows(name, x, ROWS[:, 0], u, mode == "clip")
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_complex_scatter_max_min_are_lexicographic():
    # Ties of the real parts are decided by the imaginary parts, as in NumPy.
    x = np.complex64([[1 + 2j, 0j], [1 - 1j, 7j]])
    u = np.complex64([[1 + 3j, -1j], [5j, 1j], [1 + 1j, 0j]])
    rows = np.int32([[0], [0], [1]])
    for name in ("scatter_max", "scatter_min"):
        out = getattr(lax, name)(x, rows, u, SDN_ROWS)
        want = _np_scatter_rows(name, x, rows[:, 0], u, True)
        np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_scatter_replace(mode):
    x = _arr((3, 4))
    u = np.arange(20, dtype=f32).reshape(5, 4)
    idx = np.int32([[2], [0], [7]])
    out = np.asarray(lax.scatter(x, idx, u[:3], SDN_ROWS, mode=mode, unique_indices=True))
    expected = np.array(x, copy=True)
    expected[2], expected[0] = u[0], u[1]
    if mode == "clip":
        expected[2] = u[2]
    np.testing.assert_array_equal(out, expected)


def test_scatter_bool_and_apply():
    x = np.zeros((3,), boolean)
    out = lax.scatter_add(
        x,
        np.int32([[1], [1]]),
        np.array([True, False]),
        SDN_POINTS._replace(inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)),
    )
    np.testing.assert_array_equal(np.asarray(out), [False, True, False])
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    out = lax.scatter_apply(
        np.float32([1, 2, 3]), np.int32([[1], [2], [2]]), lambda v: v * 10, dn, update_shape=(3,)
    )
    np.testing.assert_array_equal(np.asarray(out), np.float32([1, 20, 300]))


def test_scatter_points_and_batching_dims():
    x = np.zeros((4, 5), f32)
    idx = np.int32([[[0, 1], [3, 4]], [[0, 1], [1, 0]]])
    u = np.float32([[1, 2], [3, 4]])
    out = lax.scatter_add(x, idx, u, SDN_POINTS)
    expected = np.zeros((4, 5), f32)
    np.add.at(expected, (idx[..., 0], idx[..., 1]), u)
    np.testing.assert_array_equal(np.asarray(out), expected)
    dn = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(1,),
        scatter_dims_to_operand_dims=(1,),
        operand_batching_dims=(0,),
        scatter_indices_batching_dims=(0,),
    )
    rows = np.int32([[[1], [4]], [[0], [0]], [[2], [3]], [[4], [1]]])
    u = np.arange(8, dtype=f32).reshape(4, 2) + 1
    out = lax.scatter_add(x, rows, u, dn)
    expected = np.zeros((4, 5), f32)
    for b in range(4):
        np.add.at(expected[b], rows[b, :, 0], u[b])
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_scatter_errors():
    x = _arr((3, 4))
    with pytest.raises(TypeError, match="same dtype"):
        lax.scatter_add(x, np.int32([[0]]), np.zeros((1, 4), i32), SDN_ROWS)
    with pytest.raises(TypeError, match="scatter axes"):
        lax.scatter_add(x, np.int32([[0], [1]]), np.zeros((1, 4), f32), SDN_ROWS)
    with pytest.raises(TypeError, match="not batching axes"):
        lax.scatter_add(
            x,
            np.int32([[0]]),
            np.zeros((1, 4), f32),
            SDN_ROWS._replace(scatter_dims_to_operand_dims=(2,)),
        )
    with pytest.raises(TypeError, match="larger than the operand"):
        lax.scatter_add(x, np.int32([[0]]), np.zeros((1, 5), f32), SDN_ROWS)


def test_gather_scatter_jit_matches_eager():
    x = _arr((3, 4))
    u = np.ones((5, 4), f32)
    g = jit(lambda x, i: lax.gather(x, i, GDN_ROWS, (1, 4), mode="fill", fill_value=-1.0))
    s = jit(lambda x, i, u: lax.scatter_add(x, i, u, SDN_ROWS, mode="clip"))
    np.testing.assert_array_equal(
        np.asarray(g(x, ROWS)),
        np.asarray(lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="fill", fill_value=-1.0)),
    )
    np.testing.assert_array_equal(
        np.asarray(s(x, ROWS, u)), np.asarray(lax.scatter_add(x, ROWS, u, SDN_ROWS, mode="clip"))
    )
    jaxpr = " ".join(str(make_jaxpr(lambda x: lax.gather(x, ROWS, GDN_ROWS, (1, 4)))(x)).split())
    # lax.gather's default mode is PROMISE_IN_BOUNDS (as in JAX; the scatters' is fill).
    assert "gather[" in jaxpr and "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in jaxpr


# Derivatives of gather and the scatters.

XG = _rng.normal(size=(3, 4)).astype(f32)
UG = _rng.normal(size=(5, 4)).astype(f32)
UNIQUE = np.int32([[2], [0]])


@pytest.mark.parametrize(
    "name, fun, args",
    [
        ("gather_clip", lambda x: lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="clip"), (XG,)),
        (
            "gather_fill",
            lambda x: lax.gather(x, ROWS, GDN_ROWS, (1, 4), mode="fill", fill_value=0.0),
            (XG,),
        ),
        ("scatter_add", lambda x, u: lax.scatter_add(x, ROWS, u, SDN_ROWS), (XG, UG)),
        (
            "scatter_add_clip",
            lambda x, u: lax.scatter_add(x, ROWS, u, SDN_ROWS, mode="clip"),
            (XG, UG),
        ),
        ("scatter", lambda x, u: lax.scatter(x, ROWS, u, SDN_ROWS, mode="clip"), (XG, UG)),
        (
            "scatter_unique",
            lambda x, u: lax.scatter(x, UNIQUE, u, SDN_ROWS, unique_indices=True),
            (XG, UG[:2]),
        ),
        (
            "scatter_mul_unique",
            lambda x, u: lax.scatter_mul(x, UNIQUE, u, SDN_ROWS, unique_indices=True),
            (XG, UG[:2]),
        ),
        ("scatter_mul_operand", lambda x: lax.scatter_mul(x, ROWS, UG, SDN_ROWS), (XG,)),
        ("scatter_max", lambda x, u: lax.scatter_max(x, ROWS, u, SDN_ROWS), (XG, UG)),
        ("scatter_min", lambda x, u: lax.scatter_min(x, ROWS, u, SDN_ROWS, mode="clip"), (XG, UG)),
    ],
    ids=lambda c: c if isinstance(c, str) else "",
)
def test_gather_scatter_grads(name, fun, args):
    check_grads(fun, args, 2)


def test_scatter_mul_updates_grad_needs_unique():
    from polyjax_interpreters.ad import grad

    with pytest.raises(NotImplementedError, match="unique_indices"):
        grad(lambda u: lax.reduce_sum(lax.scatter_mul(XG, ROWS, u, SDN_ROWS), (0, 1)))(UG)


# vmap of gather and scatter against a loop.


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 2)])
def test_vmap_gather(in_axes):
    xb = _rng.normal(size=(2, 3, 4)).astype(f32)
    ib = np.stack([ROWS, ROWS[::-1]])
    x = XG if in_axes[0] is None else np.moveaxis(xb, 0, in_axes[0])
    i = ROWS if in_axes[1] is None else np.moveaxis(ib, 0, in_axes[1])
    f = lambda x, i: lax.gather(x, i, GDN_ROWS, (1, 4), mode="fill", fill_value=0.5)  # noqa: E731
    out = batching.vmap(f, in_axes)(x, i)
    np.testing.assert_array_equal(np.asarray(out), _loop(f, in_axes, (x, i)))


@pytest.mark.parametrize(
    "in_axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0), (1, None, 1)]
)
@pytest.mark.parametrize("name", ["scatter_add", "scatter_max"])
def test_vmap_scatter(name, in_axes):
    xb = _rng.normal(size=(2, 3, 4)).astype(f32)
    ib = np.stack([ROWS, ROWS[::-1]])
    ub = _rng.normal(size=(2, 5, 4)).astype(f32)
    x = XG if in_axes[0] is None else np.moveaxis(xb, 0, in_axes[0])
    i = ROWS if in_axes[1] is None else ib
    u = UG if in_axes[2] is None else np.moveaxis(ub, 0, in_axes[2])
    f = lambda x, i, u: getattr(lax, name)(x, i, u, SDN_ROWS)  # noqa: E731
    out = batching.vmap(f, in_axes)(x, i, u)
    np.testing.assert_allclose(np.asarray(out), _loop(f, in_axes, (x, i, u)), rtol=1e-6)


def test_symbolic_shapes_lower():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), np.float32)
    i = ShapeDtypeStruct((), np.int32)

    def f(x, i):
        return (
            lax.dynamic_slice(x, (i, 0), (1, 3)),
            lax.dynamic_update_slice(x, np.ones((1, 3), f32), (i, 1)),
            lax.gather(x, np.int32([[1], [0]]), GDN_ROWS._replace(offset_dims=(1,)), (1, 3)),
            lax.scatter_add(x, np.int8([[1], [0]]), np.ones((2, 3), f32), SDN_ROWS, mode="clip"),
        )

    closed = make_jaxpr(f)(x, i)
    assert [a.shape for a in closed.out_avals] == [(1, 3), (b, 3), (2, 3), (b, 3)]
    lowered = mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"])
    text = mlir.module_to_string(lowered.module)
    for op in ("dynamic_slice", "dynamic_update_slice", "gather", "scatter"):
        assert f"stablehlo.{op}" in text, op


def test_narrow_index_dtypes():
    x = np.arange(300, dtype=f32)
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    out = lax.scatter_add(x, np.int8([[127], [-3]]), np.float32([1, 1]), dn, mode="clip")
    expected = x.copy()
    expected[127] += 1
    expected[0] += 1
    np.testing.assert_array_equal(np.asarray(out), expected)
    gdn = lax.GatherDimensionNumbers((), (0,), (0,))
    out = lax.gather(x, np.uint8([[255], [3]]), gdn, (1,), mode="fill")
    np.testing.assert_array_equal(np.asarray(out), np.float32([255, 3]))


def test_vmap_scatter_apply_and_replace():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    xb = np.arange(8, dtype=f32).reshape(2, 4)
    ib = np.int32([[[1], [1]], [[3], [0]]])

    def f(x, i):
        return lax.scatter_apply(x, i, lambda v: v * 2 + 1, dn, update_shape=(2,))

    def g(x, i):
        return lax.scatter(x, i, np.float32([-1, -2]), dn, mode="clip")

    unique = np.int32([[[1], [2]], [[3], [0]]])  # which repeated update wins is unspecified
    for fun, i in ((f, ib), (g, unique)):
        out = batching.vmap(fun)(xb, i)
        np.testing.assert_array_equal(np.asarray(out), _loop(fun, (0, 0), (xb, i)))
    np.testing.assert_array_equal(np.asarray(f(xb[0], ib[0])), np.float32([0, 7, 2, 3]))
