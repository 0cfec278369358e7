"""jnp products (`dot`, `matmul`, `tensordot`, `einsum`, ...) against NumPy.

Result dtypes are checked by tracing. Values are compared with NumPy under one
`jit` per dtype computing every product at once; `einsum` is compared with
`numpy.einsum` on a list of specifications and on random ones (hypothesis),
and its jaxpr is checked to follow the contraction path opt_einsum chooses.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f16, f32, i8, i16, i32, u8, wide
from _jnp_helpers import random_data as _data
from hypothesis import given, settings
from hypothesis import strategies as st

from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp


def _wide(x):
    """`wide(x)`, and booleans as int64: NumPy's products then count, and compare as numbers."""
    x = wide(x)
    return x.astype(np.int64) if x.dtype == boolean else x


def _close(got, want, dtype, err=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (err, got.shape, want.shape)
    tol = {bf16: 1e-1, f16: 2e-2}.get(np.dtype(dtype), 1e-4)
    if got.dtype == boolean:
        want = want != 0
    np.testing.assert_allclose(_wide(got), _wide(want), rtol=tol, atol=tol, err_msg=err)


def _out_aval(fun, *args):
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


def _eqns(fun, *args, name="dot_general"):
    return [e for e in make_jaxpr(fun)(*args).jaxpr.eqns if e.primitive.name == name]


# ---------------------------------------------------------------------------
# Result dtypes

PROMOTIONS = [
    (f32, f32, f32),
    (bf16, bf16, bf16),
    (bf16, f32, f32),
    (f16, bf16, f32),
    (i8, i8, i8),
    (i8, u8, i16),
    (i32, f32, f32),
    (boolean, boolean, boolean),
    (boolean, i32, i32),
    (f32, c64, c64),
]
PRODUCTS = {
    "dot": jnp.dot,
    "matmul": jnp.matmul,
    "inner": jnp.inner,
    "vdot": jnp.vdot,
    "tensordot": lambda a, b: jnp.tensordot(a, b, 1),
    "einsum": lambda a, b: jnp.einsum("ij,jk->ik", a, b),
    "outer": jnp.outer,
    "kron": jnp.kron,
}


@pytest.mark.parametrize("lhs, rhs, want", PROMOTIONS, ids=str)
def test_result_dtypes(lhs, rhs, want):
    a, b = ShapeDtypeStruct((3, 3), lhs), ShapeDtypeStruct((3, 3), rhs)
    for name, fun in PRODUCTS.items():
        out = _out_aval(fun, a, b)
        assert out.dtype == want, (name, out.dtype, want)
        assert not out.weak_type, name


def test_weak_scalars_and_preferred_element_type():
    a = ShapeDtypeStruct((3, 3), bf16)
    assert _out_aval(lambda a: jnp.dot(a, 2.0), a).dtype == bf16
    assert _out_aval(lambda a: jnp.inner(2, a), a).dtype == bf16
    i = ShapeDtypeStruct((3, 3), i8)
    for name, fun in {
        "dot": lambda x: jnp.dot(x, x, preferred_element_type=np.int32),
        "matmul": lambda x: jnp.matmul(x, x, preferred_element_type=np.int32),
        "einsum": lambda x: jnp.einsum("ij,jk", x, x, preferred_element_type=np.int32),
        "tensordot": lambda x: jnp.tensordot(x, x, preferred_element_type=np.int32),
    }.items():
        assert _out_aval(fun, i).dtype == i32, name
        for eqn in _eqns(fun, i):
            assert eqn.params["preferred_element_type"] == i32, name
    # precision reaches every dot_general
    f = ShapeDtypeStruct((2, 2), f32)
    for fun in (
        lambda x: jnp.matmul(x, x, precision="highest"),
        lambda x: jnp.einsum("ij,jk,kl", x, x, x, precision=lax.Precision.HIGHEST),
    ):
        eqns = _eqns(fun, f)
        assert eqns and all(e.params["precision"] == (lax.Precision.HIGHEST,) * 2 for e in eqns)


# ---------------------------------------------------------------------------
# Values: every product of one dtype in one compilation


def _products(a2, b2, a3, b3, v3, v4, c3):
    out = {}
    if a2.dtype != boolean:  # NumPy refuses boolean differences too
        out = {
            "cross": jnp.cross(c3, c3[::-1]),
            "cross_axes": jnp.cross(a3[:, :, :3], b3[:2, :3, :3], axisa=1, axisb=2, axisc=0),
            "cross_2d": jnp.cross(a2[:, :2], b2[:3, 1:3]),
            "cross_23": jnp.cross(a2[:, :2], c3),
        }
    return out | {
        "dot_mm": jnp.dot(a2, b2),
        "dot_mv": jnp.dot(a2, v4),
        "dot_vm": jnp.dot(v3, a2),
        "dot_vv": jnp.dot(v3, v3),
        "dot_nd": jnp.dot(a3, b3),
        "dot_scalar": jnp.dot(a2, 3),
        "vdot": jnp.vdot(a2, a2),
        "vecdot": jnp.vecdot(a3, v4),
        "vecdot_axis": jnp.vecdot(a3, b3[:2, :3, :4], axis=1),
        "inner": jnp.inner(a3, b2.T),
        "outer": jnp.outer(a2, v3),
        "matmul_b": jnp.matmul(a3, b3[:1]),
        "matmul_v": jnp.matmul(v3, a3.transpose(0, 1, 2)[0]),
        "matvec": jnp.matvec(a3, v4),
        "vecmat": jnp.vecmat(v3, a3.transpose(0, 1, 2)[1]),
        "tensordot_int": jnp.tensordot(a3, a3.transpose(1, 2, 0), 2),
        "tensordot_pair": jnp.tensordot(a3, b3[:, :, :2], axes=([0, 2], [2, 1])),
        "tensordot_0": jnp.tensordot(v3, v4, 0),
        "kron": jnp.kron(a2, b2[:2, :2]),
        "kron_ranks": jnp.kron(v3, a3),
        "trace": jnp.trace(a2),
        "trace_offset": jnp.trace(a3, offset=1, axis1=1, axis2=2),
        "trace_neg": jnp.trace(a3, offset=-1, axis1=2, axis2=0),
    }


def _numpy_products(a2, b2, a3, b3, v3, v4, c3):
    a2, b2, a3, b3, v3, v4, c3 = map(_wide, (a2, b2, a3, b3, v3, v4, c3))
    return {
        "dot_mm": np.dot(a2, b2),
        "dot_mv": np.dot(a2, v4),
        "dot_vm": np.dot(v3, a2),
        "dot_vv": np.dot(v3, v3),
        "dot_nd": np.dot(a3, b3),
        "dot_scalar": np.dot(a2, 3),
        "vdot": np.vdot(a2, a2),
        "vecdot": np.vecdot(a3, v4),
        "vecdot_axis": np.vecdot(a3, b3[:2, :3, :4], axis=1),
        "inner": np.inner(a3, b2.T),
        "outer": np.outer(a2, v3),
        "matmul_b": np.matmul(a3, b3[:1]),
        "matmul_v": np.matmul(v3, a3[0]),
        "matvec": np.matvec(a3, v4),
        "vecmat": np.vecmat(v3, a3[1]),
        "tensordot_int": np.tensordot(a3, a3.transpose(1, 2, 0), 2),
        "tensordot_pair": np.tensordot(a3, b3[:, :, :2], axes=([0, 2], [2, 1])),
        "tensordot_0": np.tensordot(v3, v4, 0),
        "kron": np.kron(a2, b2[:2, :2]),
        "kron_ranks": np.kron(v3, a3),
        "cross": np.cross(c3, c3[::-1]),
        "cross_axes": np.cross(a3[:, :, :3], b3[:2, :3, :3], axisa=1, axisb=2, axisc=0),
        "cross_2d": _cross2(a2[:, :2], b2[:3, 1:3]),
        "cross_23": np.cross(np.concatenate([a2[:, :2], 0 * a2[:, :1]], 1), c3),
        "trace": np.trace(a2),
        "trace_offset": np.trace(a3, offset=1, axis1=1, axis2=2),
        "trace_neg": np.trace(a3, offset=-1, axis1=2, axis2=0),
    }


def _cross2(a, b):
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


@pytest.mark.parametrize("dtype", [f32, bf16, i32, u8, boolean, c64], ids=str)
def test_values(dtype):
    args = [
        _data(shape, dtype, seed)
        for seed, shape in enumerate([(3, 4), (4, 5), (2, 3, 4), (5, 4, 6), (3,), (4,), (3, 3)])
    ]
    got = jit(_products)(*args)
    want = _numpy_products(*args)
    for name in want:
        if name not in got:
            continue  # the cross products of bools
        _close(got[name], want[name], dtype, name)
        if dtype == boolean and name != "dot_scalar":
            assert got[name].dtype == (i32 if name.startswith("trace") else boolean), name
    assert got["trace"].dtype == {boolean: i32, u8: np.dtype(np.uint32)}.get(dtype, dtype)


def test_empty_and_zero_size_products():
    a = np.ones((2, 0), f32)
    b = np.ones((0, 3), f32)
    np.testing.assert_array_equal(jnp.dot(a, b), np.zeros((2, 3)))
    np.testing.assert_array_equal(jnp.einsum("ij,jk->ik", a, b), np.zeros((2, 3)))
    np.testing.assert_array_equal(jnp.matmul(b.T, a.T), np.zeros((3, 2)))
    assert jnp.trace(np.ones((0, 4), f32)) == 0
    assert jnp.kron(a, b).shape == (0, 0)


def test_errors():
    a = np.ones((2, 3), f32)
    with pytest.raises(ValueError, match="not aligned"):
        jnp.dot(a, a)
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        jnp.matmul(a, np.float32(2))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        jnp.matmul(a, a)
    with pytest.raises(ValueError, match="equal length"):
        jnp.tensordot(a, a, axes=([0, 1], [0]))
    with pytest.raises(TypeError, match="tensordot axes argument"):
        jnp.tensordot(a, a, axes="x")
    with pytest.raises(ValueError, match="number of axes"):
        jnp.tensordot(a, a, 3)
    with pytest.raises(ValueError, match="Dimension must be either 2 or 3"):
        jnp.cross(np.ones(4, f32), np.ones(4, f32))
    with pytest.raises(ValueError, match="at least two dimensions"):
        jnp.trace(np.ones(3, f32))
    with pytest.raises(ValueError, match="axes must match"):
        jnp.vecdot(a, np.ones(4, f32))
    with pytest.raises(ValueError, match="different sizes|not aligned"):
        jnp.vdot(a, np.ones(5, f32))
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", a, a)  # j is 3 and 2
    with pytest.raises(ValueError):
        jnp.einsum("ij->k", a)
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.dot([1, 2], a)


# ---------------------------------------------------------------------------
# einsum

SPECS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,i->", [(4,), (4,)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...,i...->...", [(3, 2, 2), (3, 2, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("ij,kj->ik", [(2, 1), (4, 3)]),
    ("ijk,jl,lk->il", [(2, 3, 4), (3, 5), (5, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 3), (3, 2)]),
    ("ii,i->i", [(3, 3), (3,)]),
    ("i,,j->ij", [(2,), (), (3,)]),
    ("abc,cba->", [(2, 3, 4), (4, 3, 2)]),
    ("ij,ijk,k->j", [(2, 3), (2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("dtype", [f32, i32, boolean, c64], ids=str)
def test_einsum_specs(dtype):
    operands = [
        [_data(shape, dtype, seed=10 * k + i) for i, shape in enumerate(shapes)]
        for k, (_, shapes) in enumerate(SPECS)
    ]

    def f(ops):
        return [jnp.einsum(spec, *o) for (spec, _), o in zip(SPECS, ops, strict=True)]

    got = jit(f)(operands)
    for (spec, _), g, o in zip(SPECS, got, operands, strict=True):
        want = np.einsum(spec, *[_wide(x) for x in o])
        _close(g, want, dtype, spec)
        assert g.dtype == dtype, spec


def test_einsum_interleaved_and_optimize_options():
    a, b, c = _data((2, 3), f32, 1), _data((3, 4), f32, 2), _data((4, 5), f32, 3)
    want = np.einsum("ij,jk,kl->il", a, b, c)
    _close(jnp.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3]), want, f32)
    _close(jnp.einsum(a, [..., 1], b, [1, 2]), np.einsum(a, [..., 1], b, [1, 2]), f32)
    for optimize in ("auto", "greedy", "optimal", True, False, [(1, 2), (0, 1)]):
        _close(jnp.einsum("ij,jk,kl->il", a, b, c, optimize=optimize), want, f32, str(optimize))
    path, _ = jnp.einsum_path("ij,jk,kl->il", a, b, c)
    _close(jnp.einsum("ij,jk,kl->il", a, b, c, optimize=["einsum_path", *path]), want, f32)
    # An explicit path may contract three operands in one step.
    _close(jnp.einsum("ij,jk,kl->il", a, b, c, optimize=[(0, 1, 2)]), want, f32)


def _dot_shapes(fun, *args):
    """The operands' axis sizes of each dot_general (sorted: layouts are opt_einsum's choice)."""
    return [sorted(tuple(sorted(v.aval.shape)) for v in e.invars) for e in _eqns(fun, *args)]


def test_einsum_follows_the_optimized_path():
    x = ShapeDtypeStruct((2, 3), f32)
    y = ShapeDtypeStruct((3, 100), f32)
    z = ShapeDtypeStruct((100, 5), f32)
    path, info = jnp.einsum_path("ij,jk,kl", np.ones((2, 3)), np.ones((3, 100)), np.ones((100, 5)))
    assert path == [(1, 2), (0, 1)]
    assert "Complete contraction:  ij,jk,kl->il" in str(info)
    for optimize in ("optimal", "greedy", "auto", True):

        def f(x, y, z, optimize=optimize):
            return jnp.einsum("ij,jk,kl", x, y, z, optimize=optimize)

        # y with z first (the small result), then x with it: two contractions.
        shapes = _dot_shapes(f, x, y, z)
        assert shapes == [[(3, 100), (5, 100)], [(2, 3), (3, 5)]], (optimize, shapes)
    shapes = _dot_shapes(lambda x, y, z: jnp.einsum("ij,jk,kl", x, y, z, optimize=False), x, y, z)
    assert shapes == [[(2, 3), (3, 100)], [(2, 100), (5, 100)]], shapes
    # Batch dimensions become dot_general batch dimensions, not broadcasts.
    b = ShapeDtypeStruct((4, 2, 3), f32)
    (eqn,) = _eqns(lambda b: jnp.einsum("bij,bjk->bik", b, b.transpose(0, 2, 1)), b)
    assert eqn.params["dimension_numbers"] == (((2,), (1,)), ((0,), (0,)))
    # A matrix product is one dot_general, with no transpose.
    m = ShapeDtypeStruct((2, 2), f32)
    jaxpr = make_jaxpr(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(m, m)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["dot_general"]
    # A trace is a diagonal (a strided slice) and a sum, with no dot_general.
    assert not _eqns(lambda m: jnp.einsum("ii", m), ShapeDtypeStruct((3, 3), f32))


LETTERS = "abcde"
SIZES = dict(zip(LETTERS, (2, 3, 1, 4, 2), strict=True))


@st.composite
def einsum_problems(draw):
    n_ops = draw(st.integers(1, 3))
    terms = [
        "".join(draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=3)))
        for _ in range(n_ops)
    ]
    used = sorted(set("".join(terms)))
    out = draw(st.permutations(used))
    out = "".join(out[: draw(st.integers(0, len(out)))])
    return ",".join(terms) + "->" + out


@settings(max_examples=30, deadline=None)
@given(einsum_problems())
def test_einsum_random_specs(spec):
    terms = spec.split("->")[0].split(",")
    ops = [_data(tuple(SIZES[c] for c in t), f32, seed=i) for i, t in enumerate(terms)]
    got = jit(lambda *o: jnp.einsum(spec, *o))(*ops)
    _close(got, np.einsum(spec, *[x.astype(np.float64) for x in ops]), f32, spec)


# ---------------------------------------------------------------------------
# Derivatives, jit and vmap

A, B, C = _data((3, 4), f32, 30), _data((4, 2), f32, 31), _data((2, 3), f32, 32)

GRAD_FUNS = {
    "dot": (lambda a, b: jnp.dot(a, b), (A, B)),
    "matmul": (lambda a, b: jnp.matmul(a[None], b), (A, B)),
    "vdot": (lambda a, c: jnp.vdot(a[:2, :3], c), (A, C)),
    "tensordot": (lambda a, b: jnp.tensordot(a, b, ([1], [0])), (A, B)),
    "einsum": (lambda a, b, c: jnp.einsum("ij,jk,ki->i", a, b, c), (A, B, C)),
    "einsum_diag": (lambda a: jnp.einsum("ii,ij->j", a[:3, :3], a), (A,)),
    "kron": (lambda b, c: jnp.kron(b, c), (B, C)),
    "cross": (lambda a, c: jnp.cross(a[:, :3], c[:1]), (A, C)),
    "trace": (lambda a: jnp.trace(a, offset=1), (A,)),
    "outer": (lambda b, c: jnp.outer(b, c), (B, C)),
}


@pytest.mark.parametrize("name", list(GRAD_FUNS))
def test_grads(name):
    fun, args = GRAD_FUNS[name]
    check_grads(fun, args, order=2, atol=1e-2, rtol=1e-2)


def test_jit_matches_eager_and_vmap_matches_a_loop():
    xs = _data((3, 4, 4), f32, 40)
    ys = _data((3, 4, 3), f32, 41)
    funs = {
        "einsum": lambda x, y: jnp.einsum("ij,jk->k", x, y),
        "dot": lambda x, y: jnp.dot(x.T, y),
        "cross": lambda x, y: jnp.cross(x[:3, :3], y[:3]),
        "trace": lambda x, y: jnp.trace(x) + jnp.trace(y),
        "tensordot": lambda x, y: jnp.tensordot(x, y, ([0], [0])),
    }
    for name, fun in funs.items():
        np.testing.assert_allclose(fun(xs[0], ys[0]), jit(fun)(xs[0], ys[0]), rtol=1e-6)
        batched = jit(vmap(fun))(xs, ys)
        looped = np.stack([np.asarray(jit(fun)(x, y)) for x, y in zip(xs, ys, strict=True)])
        np.testing.assert_allclose(batched, looped, rtol=1e-5, atol=1e-6, err_msg=name)


def test_symbolic_shapes():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), f32)
    expected = {
        "einsum": (lambda x: jnp.einsum("ij,kj->ik", x, x), (b, b)),
        "einsum_3": (lambda x: jnp.einsum("ij,kj,kl->il", x, x, x), (b, 3)),
        "dot": (lambda x: jnp.dot(x, x.T), (b, b)),
        "matmul": (lambda x: jnp.matmul(x[None], x.T), (1, b, b)),
        "tensordot": (lambda x: jnp.tensordot(x, x, ([0], [0])), (3, 3)),
        "outer": (lambda x: jnp.outer(x[:, 0], x[0]), (b, 3)),
    }
    for name, (fun, shape) in expected.items():
        assert _out_aval(fun, x).shape == shape, name
