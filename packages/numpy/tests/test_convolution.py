"""conv_general_dilated and friends: values against a NumPy loop, shapes, errors, rules.

The oracle `_conv_ref` works in float64 in the canonical layouts: it dilates the
input (zeros between elements), pads or crops it, dilates the kernel, then takes
each output position's window and contracts it with the kernel of every output
feature, picking the feature group / batch group that feature belongs to.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters import ad, batching
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_numpy.lax import _convolution as lc

_rng = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _reseed():
    global _rng
    _rng = np.random.default_rng(1234)


def rand(shape, dtype=np.float32):
    return _rng.uniform(-1.0, 1.0, shape).astype(dtype)


def _dilate(x, axes, dilation):
    for a, d in zip(axes, dilation):
        if d == 1 or x.shape[a] == 0:
            continue
        shape = list(x.shape)
        shape[a] = (x.shape[a] - 1) * d + 1
        y = np.zeros(shape, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[a] = slice(None, None, d)
        y[tuple(idx)] = x
        x = y
    return x


def _pad(x, axes, pads):
    for a, (lo, hi) in zip(axes, pads):
        width = [(0, 0)] * x.ndim
        width[a] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, width)
        idx = [slice(None)] * x.ndim
        idx[a] = slice(max(-lo, 0), x.shape[a] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def _conv_ref(lhs, rhs, strides, pads, lhs_dil, rhs_dil, specs, G=1, B=1):
    lhs_spec, rhs_spec, out_spec = specs
    x = np.transpose(lhs, lhs_spec).astype(np.float64)
    w = np.transpose(rhs, rhs_spec).astype(np.float64)
    n = x.ndim - 2
    sp = tuple(range(2, 2 + n))
    x = _pad(_dilate(x, sp, lhs_dil), sp, pads)
    w = _dilate(w, sp, rhs_dil)
    N, _ = x.shape[:2]
    n_out, n_in = w.shape[:2]
    out_sp = [max(x.shape[2 + i] - w.shape[2 + i] + strides[i], 0) // strides[i] for i in range(n)]
    out = np.zeros((N // B, n_out, *out_sp))
    per_g, per_b, nb = n_out // G, n_out // B, N // B
    for pos in itertools.product(*[range(s) for s in out_sp]):
        win = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, w.shape[2:]))
        patch = x[(slice(None), slice(None), *win)]
        for o in range(n_out):
            g, b = o // per_g, o // per_b
            xs = patch[b * nb : (b + 1) * nb, g * n_in : (g + 1) * n_in]
            out[(slice(None), o, *pos)] = np.tensordot(
                xs, w[o], axes=(list(range(1, n + 2)), list(range(n + 1)))
            )
    return np.transpose(out, np.argsort(out_spec))


def _specs(dn, nd):
    return tuple(lc.conv_dimension_numbers((0,) * nd, (0,) * nd, dn))


# (id, lhs shape, rhs shape, keyword arguments of conv_general_dilated with explicit padding)
CASES = [
    ("1d", (2, 3, 7), (4, 3, 3), dict(window_strides=(1,), padding=[(0, 0)])),
    ("1d_stride_pad", (2, 3, 8), (4, 3, 3), dict(window_strides=(2,), padding=[(1, 2)])),
    ("1d_lhs_dil", (1, 2, 5), (3, 2, 2),
     dict(window_strides=(1,), padding=[(1, 1)], lhs_dilation=(2,))),
    ("1d_rhs_dil_neg_pad", (2, 2, 9), (2, 2, 3),
     dict(window_strides=(2,), padding=[(-1, 1)], rhs_dilation=(2,))),
    ("2d", (2, 3, 5, 6), (4, 3, 3, 2), dict(window_strides=(1, 1), padding=[(0, 0), (0, 0)])),
    ("2d_all", (2, 2, 6, 5), (3, 2, 2, 3),
     dict(window_strides=(2, 1), padding=[(1, 0), (2, 1)], lhs_dilation=(1, 2),
          rhs_dilation=(2, 1))),
    ("2d_nhwc", (2, 5, 6, 3), (3, 2, 3, 4),
     dict(window_strides=(1, 2), padding=[(1, 1), (0, 1)],
          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ("2d_mixed_layouts", (5, 3, 2, 4), (2, 4, 3, 3),
     dict(window_strides=(1, 1), padding=[(0, 1), (1, 0)],
          dimension_numbers=("HCNW", "WOHI", "CWNH"))),
    ("1d_feature_groups", (2, 4, 7), (6, 2, 3),
     dict(window_strides=(2,), padding=[(1, 1)], feature_group_count=2)),
    ("2d_depthwise", (1, 3, 5, 5), (6, 1, 2, 2),
     dict(window_strides=(1, 2), padding=[(0, 1), (1, 1)], rhs_dilation=(2, 1),
          feature_group_count=3)),
    ("1d_batch_groups", (4, 3, 6), (4, 3, 2),
     dict(window_strides=(1,), padding=[(0, 1)], batch_group_count=2)),
    ("2d_batch_groups_dil", (6, 2, 5, 4), (3, 2, 2, 2),
     dict(window_strides=(2, 1), padding=[(1, 0), (0, 1)], lhs_dilation=(1, 2),
          batch_group_count=3)),
]  # fmt: skip
IDS = [c[0] for c in CASES]


def _ref_of(kw, lhs, rhs):
    nd = lhs.ndim
    n = nd - 2
    return _conv_ref(
        lhs,
        rhs,
        kw["window_strides"],
        kw["padding"],
        kw.get("lhs_dilation", (1,) * n),
        kw.get("rhs_dilation", (1,) * n),
        _specs(kw.get("dimension_numbers"), nd),
        kw.get("feature_group_count", 1),
        kw.get("batch_group_count", 1),
    )


def _fun(kw):
    return lambda x, w: lax.conv_general_dilated(x, w, **kw)


@pytest.mark.parametrize("name, ls, rs, kw", CASES, ids=IDS)
def test_values_eager_and_jit(name, ls, rs, kw):
    x, w = rand(ls), rand(rs)
    expected = _ref_of(kw, x, w)
    got = lax.conv_general_dilated(x, w, **kw)
    assert got.shape == expected.shape and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jit(_fun(kw))(x, w)), np.asarray(got), rtol=1e-6)


# Second order on the cases that between them use every feature (the second
# derivative transposes the transposes); first order on the others, to keep it fast.
SECOND_ORDER = {"2d_all", "2d_mixed_layouts", "1d_rhs_dil_neg_pad", "1d_feature_groups",
                "2d_batch_groups_dil"}  # fmt: skip


@pytest.mark.parametrize("name, ls, rs, kw", CASES, ids=IDS)
def test_grads_both_operands(name, ls, rs, kw):
    x, w = rand(ls), rand(rs)
    order = 2 if name in SECOND_ORDER else 1
    check_grads(_fun(kw), (x, w), order=order, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize(
    "in_axes", [(0, None), (None, 0), (0, 0), (1, 2)], ids=["lhs", "rhs", "both", "both_inner"]
)
@pytest.mark.parametrize("name, ls, rs, kw", [CASES[i] for i in (7, 8, 11)],
                         ids=[IDS[i] for i in (7, 8, 11)])  # fmt: skip
def test_vmap_matches_loop(name, ls, rs, kw, in_axes):
    v = 3
    x = rand(ls[: in_axes[0]] + (v,) + ls[in_axes[0] :]) if in_axes[0] is not None else rand(ls)
    w = rand(rs[: in_axes[1]] + (v,) + rs[in_axes[1] :]) if in_axes[1] is not None else rand(rs)
    f = _fun(kw)

    def take(a, i, ax):
        return a if ax is None else np.take(a, i, axis=ax)

    expected = np.stack(
        [_ref_of(kw, take(x, i, in_axes[0]), take(w, i, in_axes[1])) for i in range(v)]
    )
    got = batching.vmap(f, in_axes=in_axes)(x, w)
    assert got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("strides, rhs_dil", [((1, 1), (1, 1)), ((2, 3), (1, 2))])
def test_named_padding(padding, strides, rhs_dil):
    x, w = rand((1, 2, 7, 8)), rand((3, 2, 3, 2))
    got = lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rhs_dil)
    windows = [(3 - 1) * rhs_dil[0] + 1, (2 - 1) * rhs_dil[1] + 1]
    pads = lax.padtype_to_pads((7, 8), windows, strides, padding)
    if padding == "VALID":
        assert pads == [(0, 0), (0, 0)]
    else:
        assert got.shape[2:] == (-(-7 // strides[0]), -(-8 // strides[1]))
        for (lo, hi), wd, n, s in zip(pads, windows, (7, 8), strides):
            total = max((-(-n // s) - 1) * s + wd - n, 0)
            assert lo + hi == total and (hi - lo if padding == "SAME" else lo - hi) in (0, 1)
    expected = _conv_ref(x, w, strides, pads, (1, 1), rhs_dil, _specs(None, 4))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_conv_and_conv_with_general_padding():
    x, w = rand((2, 3, 6, 5)), rand((4, 3, 2, 2))
    got = lax.conv(x, w, (1, 2), "VALID")
    np.testing.assert_allclose(
        np.asarray(got),
        _conv_ref(x, w, (1, 2), [(0, 0)] * 2, (1, 1), (1, 1), _specs(None, 4)),
        rtol=1e-5,
        atol=1e-5,
    )
    pads = [(1, 0), (0, 2)]
    got = lax.conv_with_general_padding(x, w, (2, 1), pads, (1, 2), (2, 1))
    expected = _conv_ref(x, w, (2, 1), pads, (1, 2), (2, 1), _specs(None, 4))
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (3, 2)])
def test_conv_transpose_is_the_gradient_of_conv(padding, strides):
    """With transpose_kernel=True, conv_transpose is the vjp of a strided conv (JAX's test)."""
    dn = ("NHWC", "HWIO", "NHWC")
    x, w = rand((2, 6, 7, 3)), rand((3, 2, 3, 4))
    y = lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn)
    ct = rand(y.shape)
    _, pullback = ad.vjp(
        lambda x: lax.conv_general_dilated(x, w, strides, padding, dimension_numbers=dn), x
    )
    (expected,) = pullback(ct)
    got = lax.conv_transpose(ct, w, strides, padding, dimension_numbers=dn, transpose_kernel=True)
    # The extents can differ by a tail of the input the strided conv never read (zero
    # cotangent there) or that conv_transpose adds past the input.
    expected = np.asarray(expected)
    a, b = min(got.shape[1], x.shape[1]), min(got.shape[2], x.shape[2])
    full = np.zeros_like(expected)
    full[:, :a, :b] = np.asarray(got)[:, :a, :b]
    assert got.shape[1] >= x.shape[1] - strides[0] and got.shape[2] >= x.shape[2] - strides[1]
    np.testing.assert_allclose(full, expected, rtol=1e-5, atol=1e-5)


def test_conv_transpose_shapes():
    x, w = rand((1, 5, 2)), rand((3, 2, 4))  # NHC / HIO
    assert lax.conv_transpose(x, w, (2,), "SAME").shape == (1, 10, 4)
    assert lax.conv_transpose(x, w, (2,), "VALID").shape == (1, 11, 4)
    assert lax.conv_transpose(x, w, (2,), [(0, 0)]).shape == (1, 7, 4)


def test_dimension_numbers():
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # spatial axes pair up by letter, in the kernel string's order
    dn = lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NCWH", "OIHW", "NHCW"))
    assert dn == ((0, 1, 3, 2), (0, 1, 2, 3), (0, 2, 1, 3))
    assert lax.conv_dimension_numbers((1,) * 3, (1,) * 3, None) == ((0, 1, 2),) * 3
    assert lax.conv_dimension_numbers((1,) * 3, (1,) * 3, dn := ((0, 2, 1),) * 3) == dn
    with pytest.raises(TypeError):
        lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NHWC", "HWIO", "NHW"))
    with pytest.raises(TypeError):
        lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NHWC", "HWXO", "NHWC"))
    with pytest.raises(TypeError):
        lax.conv_dimension_numbers((1,) * 4, (1,) * 3, None)


def test_printed_jaxpr_and_params():
    x, w = np.ones((1, 2, 5), np.float32), np.ones((4, 2, 3), np.float32)
    jaxpr = make_jaxpr(
        lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME", precision="highest")
    )(x, w)
    text = " ".join(str(jaxpr).split())
    assert "conv_general_dilated[" in text and "padding=((1, 1),)" in text
    assert "window_strides=(2,)" in text and "Precision.HIGHEST" in text
    assert "f32[1,4,3]" in text


def _shape_of(ls, rs, **kw):
    (out,) = make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, **kw))(
        np.ones(ls, np.float32), np.ones(rs, np.float32)
    ).out_avals
    return out.shape


@pytest.mark.parametrize(
    "ls, rs, kw, err, msg",
    [
        ((1, 3, 5), (2, 2, 3), {}, ValueError, "feature"),
        ((1, 4, 5), (3, 2, 3), dict(feature_group_count=2), ValueError, "multiple"),
        ((3, 2, 5), (4, 2, 3), dict(batch_group_count=2), ValueError, "batch"),
        ((2, 2, 5), (4, 1, 3), dict(batch_group_count=2, feature_group_count=2), ValueError,
         "At most one"),
        ((1, 2, 5), (4, 2, 3, 1), {}, TypeError, "ndim"),
        ((1, 2, 5), (4, 2, 3), dict(window_strides=(0,)), ValueError, "positive"),
        ((1, 2, 5), (4, 2, 3), dict(padding=[(0, 0), (0, 0)]), ValueError, "one"),
    ],
)  # fmt: skip
def test_shape_errors(ls, rs, kw, err, msg):
    kw = {"window_strides": (1,), "padding": "VALID", **kw}
    with pytest.raises(err, match=msg):
        _shape_of(ls, rs, **kw)


def test_shapes_empty_and_too_small():
    assert _shape_of((0, 2, 5), (3, 2, 2), window_strides=(1,), padding="VALID") == (0, 3, 4)
    assert _shape_of((1, 2, 2), (3, 2, 4), window_strides=(1,), padding="VALID") == (1, 3, 0)
    assert _shape_of((1, 2, 5), (0, 2, 2), window_strides=(1,), padding="VALID") == (1, 0, 4)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.complex64, np.int32])
def test_dtypes(dtype):
    if np.dtype(dtype).kind == "c":
        x = (rand((1, 2, 6)) + 1j * rand((1, 2, 6))).astype(dtype)
        w = (rand((3, 2, 2)) + 1j * rand((3, 2, 2))).astype(dtype)
    elif np.dtype(dtype).kind == "i":
        x, w = _rng.integers(-5, 5, (1, 2, 6)).astype(dtype), _rng.integers(-5, 5, (3, 2, 2))
        w = w.astype(dtype)
    else:
        x, w = rand((1, 2, 6)).astype(dtype), rand((3, 2, 2)).astype(dtype)
    got = lax.conv_general_dilated(x, w, (1,), [(1, 0)])
    assert got.dtype == np.dtype(dtype)
    xs, ws = x.astype(np.complex128), w.astype(np.complex128)
    expected = _conv_ref(xs.real, ws.real, (1,), [(1, 0)], (1,), (1,), _specs(None, 3))
    if np.dtype(dtype).kind == "c":
        expected = (
            expected
            - _conv_ref(xs.imag, ws.imag, (1,), [(1, 0)], (1,), (1,), _specs(None, 3))
            + 1j * _conv_ref(xs.real, ws.imag, (1,), [(1, 0)], (1,), (1,), _specs(None, 3))
            + 1j * _conv_ref(xs.imag, ws.real, (1,), [(1, 0)], (1,), (1,), _specs(None, 3))
        )
    tol = 1e-5 if np.dtype(dtype).itemsize >= 4 else 3e-2
    np.testing.assert_allclose(np.asarray(got).astype(np.complex128), expected, rtol=tol, atol=tol)


def test_preferred_element_type():
    x = _rng.integers(-100, 100, (1, 2, 6)).astype(np.int8)
    w = _rng.integers(-100, 100, (3, 2, 2)).astype(np.int8)
    got = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert got.dtype == np.int32
    expected = _conv_ref(x, w, (1,), [(0, 0)], (1,), (1,), _specs(None, 3))
    np.testing.assert_array_equal(np.asarray(got), expected.astype(np.int32))
    xf, wf = rand((1, 2, 6), ml_dtypes.bfloat16), rand((3, 2, 2), ml_dtypes.bfloat16)
    got = lax.conv_general_dilated(xf, wf, (1,), "VALID", preferred_element_type=np.float32)
    assert got.dtype == np.float32
    # the gradient comes back in the operand dtype
    g = ad.grad(
        lambda w: lax.conv_general_dilated(
            xf, w, (1,), "VALID", preferred_element_type=np.float32
        ).sum()
    )(wf)
    assert g.dtype == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(TypeError):
        lax.conv_general_dilated(xf, wf, (1,), "VALID", preferred_element_type=np.int32)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(x, wf, (1,), "VALID")


def test_symbolic_shapes():
    b = symbolic_dim("b")
    w = ShapeDtypeStruct((4, 2, 3), np.float32)
    x = ShapeDtypeStruct((b, 2, 9), np.float32)
    (out,) = make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, (2,), "SAME"))(x, w).out_avals
    assert out.shape == (b, 4, 5)
    x = ShapeDtypeStruct((2, 2, b), np.float32)
    f = make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, (2,), [(1, 1)], rhs_dilation=(2,)))
    (out,) = f(x, w).out_avals
    # (b + 2 - 5) // 2 + 1 windows, and none when b < 3
    for n in (1, 3, 4, 9):
        assert sd.evaluate(out.shape[2], {"b": n}) == max(n + 2 - 5 + 2, 0) // 2
    with pytest.raises(ValueError, match="batch"):
        make_jaxpr(lambda x, w: lax.conv_general_dilated(x, w, (1,), "VALID", batch_group_count=2))(
            ShapeDtypeStruct((b, 2, 9), np.float32), ShapeDtypeStruct((4, 2, 3), np.float32)
        )


def test_precision_lowers():
    x, w = rand((1, 2, 6)), rand((3, 2, 2))
    expected = _conv_ref(x, w, (1,), [(0, 0)], (1,), (1,), _specs(None, 3))
    for precision in ("highest", (lax.Precision.HIGH, lax.Precision.DEFAULT)):
        got = jit(lambda x, w, p=precision: lax.conv(x, w, (1,), "VALID", precision=p))(x, w)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name, ls, rs, kw", [CASES[i] for i in (8, 11)],
                         ids=[IDS[i] for i in (8, 11)])  # fmt: skip
def test_per_example_grads_vmap_matches_loop(name, ls, rs, kw):
    """vmap of grad: the transposed (regrouped) convolutions are batched too."""
    v = 2
    xs, w = rand((v, *ls)), rand(rs)
    f = _fun(kw)
    grad_w = ad.grad(lambda x, w: (f(x, w) ** 2).sum(), argnums=(0, 1))
    got = batching.vmap(grad_w, in_axes=(0, None))(xs, w)
    for i in range(v):
        for g, e in zip(got, grad_w(xs[i], w)):
            np.testing.assert_allclose(np.asarray(g)[i], np.asarray(e), rtol=1e-4, atol=1e-4)
