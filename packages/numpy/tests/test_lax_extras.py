"""The smaller `jax.lax` names: shape-tuple helpers, tile/stack/unstack, mulhi,
approx_max_k/min_k, ragged_dot(_general) and the patch/local convolutions.

Oracles: the shapes `conv_general_dilated` / `reduce_window` really return,
NumPy (loops over groups, windows and positions written from the documented
semantics), exact Python integers, and finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest

from polyjax_core.config import enable_x64
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax

RNG = np.random.default_rng(0)


def _f32(*shape):
    return RNG.normal(size=shape).astype(np.float32)


# --- shape tuples: against the shapes the operations return ---------------------------


@pytest.mark.parametrize(
    "lhs,rhs,strides,padding,dn",
    [
        ((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")),
        ((2, 3, 7, 5), (4, 3, 2, 3), (1, 2), [(1, 0), (0, 2)], ("NCHW", "OIHW", "NHWC")),
        ((1, 2, 6), (3, 2, 3), (3,), "VALID", None),
    ],
)
def test_conv_shape_tuples_match_convolutions(lhs, rhs, strides, padding, dn):
    x, k = np.zeros(lhs, np.float32), np.zeros(rhs, np.float32)
    out = lax.conv_general_dilated(x, k, strides, padding, dimension_numbers=dn)
    assert lax.conv_general_shape_tuple(lhs, rhs, strides, padding, dn) == out.shape
    if dn is None:
        assert lax.conv_shape_tuple(lhs, rhs, strides, padding) == out.shape


def test_conv_transpose_shape_tuple_matches_conv_transpose():
    x, k = np.zeros((1, 5, 4, 3), np.float32), np.zeros((3, 2, 3, 4), np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    for padding in ("SAME", "VALID", [(1, 2), (0, 1)]):
        out = lax.conv_transpose(x, k, (2, 1), padding, dimension_numbers=dn)
        assert lax.conv_transpose_shape_tuple(x.shape, k.shape, (2, 1), padding, dn) == out.shape


def test_conv_general_permutations():
    assert lax.conv_general_permutations(("NHWC", "HWIO", "NCHW")) == (
        (0, 3, 1, 2),
        (3, 2, 0, 1),
        (0, 1, 2, 3),
    )


def test_reduce_window_shape_tuple_matches_reduce_window():
    x = np.zeros((5, 6), np.float32)
    args = ((2, 3), (2, 1), ((1, 0), (0, 2)), (2, 1), (1, 2))
    out = lax.reduce_window(x, 0.0, lax.add, *args)
    assert lax.reduce_window_shape_tuple(x.shape, *args) == out.shape
    with pytest.raises(ValueError, match="padding"):
        lax.reduce_window_shape_tuple(x.shape, (2, 2), (1, 1), "SAME")


# --- tile / stack / unstack / broadcast_like / dtype / shape_as_value --------------------


def test_array_helpers_against_numpy():
    x = _f32(2, 3)
    np.testing.assert_array_equal(lax.tile(x, (2, 3)), np.tile(x, (2, 3)))
    np.testing.assert_array_equal(lax.stack([x, 2 * x], axis=-1), np.stack([x, 2 * x], -1))
    parts = lax.unstack(x, axis=1)
    assert len(parts) == 3
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p, x[:, i])
    np.testing.assert_array_equal(
        lax.broadcast_like(x, np.zeros((4, 2, 3))), np.broadcast_to(x, (4, 2, 3))
    )
    assert lax.dtype(1) == np.int32 and lax.dtype(1.0) == np.float32 and lax.dtype(True) == np.bool_
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), np.array([2, 3], np.int32))
    check_grads(lambda a: lax.tile(a, (2, 1)), (x,), order=1)


def test_array_helper_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="reps length"):
        lax.tile(x, (2,))
    with pytest.raises(ValueError, match="different numbers of dimensions"):
        lax.stack([x, x[0]])
    with pytest.raises(TypeError, match="same dtypes"):
        lax.stack([x, x.astype(np.int32)])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack(x, 2)


# --- mulhi: against exact Python integers ------------------------------------------------


def _exact_mulhi(a, b):
    bits = a.dtype.itemsize * 8
    wide = [((int(p) * int(q)) >> bits) % (1 << bits) for p, q in zip(a.ravel(), b.ravel())]
    return np.array(wide, np.dtype(f"u{bits // 8}")).view(a.dtype).reshape(a.shape)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint32", "int64", "uint64"])
def test_mulhi_is_the_high_half_of_the_exact_product(dtype):
    dtype = np.dtype(dtype)
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 16, dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 16, dtype=dtype, endpoint=True)
    a[:3], b[:3] = [info.min, info.max, info.min], [info.min, info.max, info.max]
    with enable_x64(dtype.itemsize == 8):
        got = np.asarray(lax.mulhi(a, b))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, _exact_mulhi(a, b))


def test_mulhi_rejects_floats():
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
        lax.mulhi(np.float32(1), np.float32(2))


# --- approx_max_k / approx_min_k (exact on CPU) -----------------------------------------


def test_approx_k_against_numpy_sort():
    x = _f32(3, 5)
    values, indices = lax.approx_max_k(x, 2)
    order = np.argsort(-x, axis=-1, kind="stable")[:, :2]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, -1))
    values, indices = lax.approx_min_k(x, 2, reduction_dimension=0)
    order = np.argsort(x, axis=0, kind="stable")[:2]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, 0))
    check_grads(jit(lambda a: lax.approx_min_k(a, 2)[0]), (x,), order=1, modes=("rev",))
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(4), 2)
    with pytest.raises(ValueError, match="k must be smaller"):
        lax.approx_max_k(x, 6)


# --- ragged_dot: against a NumPy loop over groups ---------------------------------------


def _np_ragged_dot(lhs, rhs, sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.float64)
    start = 0
    for g, n in enumerate(sizes):
        stop = min(start + n, lhs.shape[0])
        out[start:stop] = lhs[start:stop] @ rhs[g]
        start = stop
    return out


def test_ragged_dot_against_numpy():
    lhs, rhs = _f32(5, 2), _f32(3, 2, 4)
    # Group sizes are run-time values: one compilation serves every split.
    ragged = jit(lax.ragged_dot)
    for sizes in ([1, 2, 1], [0, 5, 0], [4, 4, 4]):
        got = ragged(lhs, rhs, np.array(sizes, np.int32))
        np.testing.assert_allclose(got, _np_ragged_dot(lhs, rhs, sizes), rtol=1e-5, atol=1e-6)


def test_ragged_dot_grads_and_contracting_mode():
    lhs, rhs, sizes = _f32(4, 2), _f32(2, 2, 3), np.array([1, 2], np.int32)
    check_grads(jit(lambda a, b: lax.ragged_dot(a, b, sizes)), (lhs, rhs), order=1, modes=("rev",))
    dn = lax.RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), (0,), ())
    a, b = _f32(5, 2), _f32(5, 3)
    got = jit(lambda a, b: lax.ragged_dot_general(a, b, np.array([2, 2], np.int32), dn))(a, b)
    want = np.stack([a[:2].T @ b[:2], a[2:4].T @ b[2:4]])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="group_sizes"):
        lax.ragged_dot(lhs, rhs, np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="group dimension size"):
        lax.ragged_dot(lhs, rhs, np.array([1, 2, 1], np.int32))


# --- patches and locally connected convolutions ------------------------------------------


def _np_patches(x, window, stride):
    """NCH(W) patches, VALID padding: features ordered (channel, window position)."""
    n, c, h, w = x.shape
    kh, kw = window
    oh, ow = (h - kh) // stride[0] + 1, (w - kw) // stride[1] + 1
    out = np.zeros((n, c * kh * kw, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            block = x[:, :, i * stride[0] : i * stride[0] + kh, j * stride[1] : j * stride[1] + kw]
            out[:, :, i, j] = block.reshape(n, -1)
    return out


def test_patches_and_local_conv_against_numpy():
    x = _f32(2, 3, 5, 6)
    patches = lax.conv_general_dilated_patches(x, (2, 3), (1, 2), "VALID")
    want = _np_patches(x, (2, 3), (1, 2))
    np.testing.assert_array_equal(patches, want)
    w = _f32(4, 3 * 2 * 3, *want.shape[2:])
    got = lax.conv_general_dilated_local(x, w, (1, 2), "VALID", (2, 3))
    np.testing.assert_allclose(got, np.einsum("nfhw,ofhw->nohw", want, w), rtol=1e-5, atol=1e-5)
    # Layout strings: the same values, transposed.
    xh, wh = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    dn = ("NHWC", "HWIO", "NHWC")
    got_h = lax.conv_general_dilated_local(xh, wh, (1, 2), "VALID", (2, 3), dimension_numbers=dn)
    np.testing.assert_allclose(got_h, np.asarray(got).transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)
    small = (_f32(1, 1, 3, 2), _f32(1, 2 * 2, 2, 1))
    local = jit(lambda a, b: lax.conv_general_dilated_local(a, b, (1, 1), "VALID", (2, 2)))
    check_grads(local, small, order=1, modes=("rev",))


# --- dot algorithms -----------------------------------------------------------------------


def test_dot_algorithm_presets_on_cpu():
    x, y = _f32(3, 4), _f32(4, 2)
    exact = x.astype(np.float64) @ y.astype(np.float64)
    for preset in ("F32_F32_F32", lax.DotAlgorithmPreset.BF16_BF16_F32_X6, "DEFAULT"):
        np.testing.assert_allclose(lax.dot(x, y, precision=preset), exact, rtol=1e-5, atol=1e-5)
    # F16_F16_F16 rounds the inputs (and the result) to float16, then converts back.
    got = jit(lambda a, b: lax.dot(a, b, precision="F16_F16_F16"))(x, y)
    assert got.dtype == np.float32
    want = x.astype(np.float16).astype(np.float64) @ y.astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
    text = jit(lambda a, b: lax.dot(a, b, precision="BF16_BF16_F32")).lower(x, y).as_text()
    assert "algorithm = <lhs_precision_type = bf16" in text
    check_grads(jit(lambda a: lax.dot(a, y, precision="F32_F32_F32")), (x,), 1, modes=("rev",))
    for unsupported in ("TF32_TF32_F32", lax.DotAlgorithm(np.float32, np.float32, np.float32)):
        with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
            lax.dot(x, y, precision=unsupported)
    assert lax.DotAlgorithmPreset.BF16_BF16_F32.accumulation_type == np.float32


# --- pbroadcast / pswapaxes (under vmap with an axis name) ---------------------------------


def test_pbroadcast_and_pswapaxes_under_named_vmap():
    from polyjax_interpreters.batching import vmap

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = vmap(lambda v: lax.pbroadcast(v, "i", 1), axis_name="i")(x)
    np.testing.assert_array_equal(got, np.broadcast_to(x[1], (3, 4)))
    y = np.arange(18, dtype=np.float32).reshape(3, 3, 2)
    swapped = vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(y)
    np.testing.assert_array_equal(swapped, y.transpose(1, 0, 2))


# --- composite -------------------------------------------------------------------------------


def test_composite_lowers_to_a_named_op_with_its_decomposition():
    from polyjax_interpreters.ad import grad

    scale = lax.composite(lambda x, *, factor: x * factor, name="test.scale", version=2)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(scale(x, factor=2.0), 2.0 * x)
    text = jit(lambda v: scale(v, factor=2.0)).lower(x).as_text()
    assert 'stablehlo.composite "test.scale"' in text and "decomposition = @test.scale" in text
    assert "version = 2" in text and "factor = 2.0" in text
    with pytest.raises(ValueError, match="JVP rule for composite"):
        grad(lambda v: scale(v, factor=2.0).sum())(x)
