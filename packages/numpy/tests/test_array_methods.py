"""Operators and methods of `Array` and tracers: promotion, broadcasting, indexing, methods.

Result types are checked by tracing (no compilation). Values are checked against
NumPy under one `jit` per case family (one compile each), plus a few eager calls
on `Array`s, which go through the same registry.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f16, f32, i8, i16, i32, u8, u32
from _jnp_helpers import flat_jaxpr as _jaxpr
from _jnp_helpers import out_aval as _out
from _jnp_helpers import sds as _sds

from polyjax_core import config, make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_interpreters.array import Array, device_put
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax  # noqa: F401  (importing polyjax_numpy registers the operators)

# ---------------------------------------------------------------------------
# Type promotion (the table of https://docs.jax.dev/en/latest/type_promotion.html)

# (lhs, rhs, result dtype, result weak): an entry is a dtype (a strong array), or a
# Python scalar (weak), or ("weak", dtype) for a weakly-typed array.
PROMOTIONS = [
    (f32, 2.0, f32, False),
    (bf16, 2.0, bf16, False),
    (f16, 1, f16, False),
    (u8, 3, u8, False),
    (i8, 3, i8, False),
    (i32, 2.0, f32, True),  # i4 with f* is f*: a weak float
    (u8, 2.0, f32, True),
    (boolean, 1, i32, True),  # b1 with i* is i*
    (boolean, 1.5, f32, True),
    (boolean, True, boolean, False),
    (f32, 1j, c64, False),
    (i8, u8, i16, False),
    (u8, i32, i32, False),
    (u32, i32, i32, False),  # i64, canonicalized to i32 without x64
    (bf16, f16, f32, False),
    (bf16, i32, bf16, False),
    (i32, boolean, i32, False),
    (("weak", f32), i32, f32, True),  # f* with i4 is f*
    (("weak", i32), u8, u8, False),  # i* with u1 is u1
    (("weak", f32), bf16, bf16, False),
]


def _operand(spec):
    if isinstance(spec, tuple):
        return _sds(spec[1], weak=True)
    if isinstance(spec, np.dtype):
        return _sds(spec)
    return spec


@pytest.mark.parametrize("lhs, rhs, dtype, weak", PROMOTIONS, ids=str)
def test_promotion_table(lhs, rhs, dtype, weak):
    arrays = [s for s in (lhs, rhs) if isinstance(s, np.dtype | tuple)]
    scalars = {i: s for i, s in enumerate((lhs, rhs)) if not isinstance(s, np.dtype | tuple)}

    def add(*args):
        it = iter(args)
        a, b = (scalars[i] if i in scalars else next(it) for i in range(2))
        return a + b, b + a, a * b

    for out in make_jaxpr(add)(*(_operand(s) for s in arrays)).out_avals:
        assert (out.dtype, out.weak_type) == (dtype, weak), (lhs, rhs)


def test_weak_scalars_print_as_literals_of_the_array_dtype():
    assert _jaxpr(lambda x: x * 2.0, np.ones(3, np.float32)) == (
        "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    )
    assert _jaxpr(lambda x: 1 - x, np.ones(3, bf16)) == (
        "{ lambda ; a:bf16[3]. let b:bf16[3] = sub 1.0:bf16[] a in (b,) }"
    )
    assert _jaxpr(lambda x: x * 2.0, np.ones(3, np.int32)) == (
        "{ lambda ; a:i32[3]. let "
        "b:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] a "
        "c:f32[3] = mul b 2.0:f32[] in (c,) }"
    )


def test_python_int_wraps_and_overflows():
    # A Python int takes a narrower integer type as a cast would (JAX's rule) ...
    assert _out(lambda x: x + 300, np.ones(3, np.uint8)).dtype == np.uint8
    out = jit(lambda x: x + 300)(np.ones(3, np.uint8))
    assert out.dtype == np.uint8 and list(np.asarray(out)) == [45] * 3
    # ... but must be a value of the default integer type.
    with pytest.raises(OverflowError, match="2147483648"):
        make_jaxpr(lambda x: x + 2**31)(np.ones(3, np.uint8))


def test_true_divide_and_comparisons_dtypes():
    assert _out(lambda x: x / 2, np.ones(3, np.int32)).dtype == f32
    assert _out(lambda x: x / x, np.ones(3, np.uint8)).dtype == f32
    assert _out(lambda x: x / 2, np.ones(3, bf16)).dtype == bf16
    # i32 with 2.5 promotes to a weak f32, and comparing weak operands gives a weak bool.
    out = _out(lambda x: x < 2.5, np.ones(3, np.int32))
    assert (out.dtype, out.weak_type) == (boolean, True)
    out = _out(lambda x: x == 2, np.ones(3, np.float32))
    assert (out.dtype, out.weak_type) == (boolean, False)
    assert _out(lambda x: x // 2, np.ones(3, np.bool_)).dtype == i32
    assert _out(lambda x: x**2, np.ones(3, np.bool_)).dtype == i32


# ---------------------------------------------------------------------------
# Broadcasting


def test_rank_promotion_uses_broadcast_in_dim_and_lax_broadcasting():
    got = _jaxpr(lambda x, y: x + y, np.ones((3, 1), np.float32), np.ones(4, np.float32))
    assert got == (
        "{ lambda ; a:f32[3,1] b:f32[4]. let "
        "c:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b "
        "d:f32[3,4] = add a c in (d,) }"
    )
    # A rank-0 operand is passed as it is.
    got = _jaxpr(lambda x, y: x * y, np.ones((3, 1), np.float32), np.float32(2))
    assert got == "{ lambda ; a:f32[3,1] b:f32[]. let c:f32[3,1] = mul a b in (c,) }"


def test_incompatible_shapes_and_rank_promotion_option():
    x, y = np.ones((3,), np.float32), np.ones((4,), np.float32)
    # Equal ranks are left to lax (a TypeError, as in JAX); rank promotion checks first.
    with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
        make_jaxpr(lambda x, y: x + y)(x, y)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        make_jaxpr(lambda x, y: x + y)(np.ones((2, 3), np.float32), y)
    with config.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            make_jaxpr(lambda x, y: x + y)(np.ones((2, 3), np.float32), x)
        make_jaxpr(lambda x: x + 1.0)(x)  # scalars are not rank promotion
    with config.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="automatic rank promotion"):
            make_jaxpr(lambda x, y: x + y)(np.ones((2, 3), np.float32), x)


def test_non_array_operands_defer_to_python():
    x = device_put(np.ones(3, np.float32))
    with pytest.raises(TypeError):
        x + [1, 2, 3]
    with pytest.raises(TypeError):
        "a" * x
    assert (x == None) is False  # noqa: E711
    assert (x != "text") is True

    def traced(x):
        with pytest.raises(TypeError):
            x + (1,)
        return x

    make_jaxpr(traced)(np.ones(3, np.float32))


# ---------------------------------------------------------------------------
# Operator values


def _ints(dtype, shape=(4, 5), lo=-9, hi=10, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(dtype)


def _nonzero(x):
    return np.where(x == 0, 1, x).astype(x.dtype)


def _check(out, expected):
    assert out.dtype == expected.dtype and out.shape == expected.shape, (out, expected)
    np.testing.assert_array_equal(np.asarray(out), expected)


def _arith(x, y):
    return x + y, x - y, x * y, x // y, x % y, x == y, x < y, x >= y, -x, abs(x), +x


@pytest.mark.parametrize("dtype", [i32, i8], ids=str)
def test_signed_integer_operators(dtype):
    x, y = _ints(dtype), _nonzero(_ints(dtype, seed=1))
    outs = jit(_arith)(x, y)
    want = _arith(x, y)
    for o, w in zip(outs, want):
        _check(o, w)
    q, r = jit(divmod)(x, y)
    _check(q, x // y)
    _check(r, x % y)


def test_unsigned_integer_operators():
    x, y = _ints(u8, lo=0, hi=255), _nonzero(_ints(u8, lo=0, hi=255, seed=1))

    def f(x, y):
        return x + y, x - y, x * y, x // y, x % y, x > y, abs(x), x & y, x | y, x ^ y, ~x

    for o, w in zip(jit(f)(x, y), f(x, y)):
        _check(o, w)


@pytest.mark.parametrize("dtype", [f32, bf16], ids=str)
def test_float_operators(dtype):
    x = (_ints(np.float64) / 2).astype(dtype)
    y = (_nonzero(_ints(np.int64, seed=1)) / 4).astype(dtype)
    outs = jit(lambda x, y: (*_arith(x, y), x / y, divmod(x, y)))(x, y)
    wide = _arith(x.astype(np.float64), y.astype(np.float64))
    wide += (x.astype(np.float64) / y.astype(np.float64),)
    for o, w in zip(outs, wide):
        want = w.astype(dtype) if w.dtype == np.float64 else w
        np.testing.assert_allclose(np.asarray(o).astype(np.float64), want.astype(np.float64))
        assert o.dtype == want.dtype
    q, r = outs[-1]
    np.testing.assert_array_equal(np.asarray(q), np.floor_divide(x, y).astype(dtype))
    np.testing.assert_array_equal(np.asarray(r), np.remainder(x, y).astype(dtype))


def test_bool_operators():
    x, y = _ints(boolean, lo=0, hi=2), _ints(boolean, lo=0, hi=2, seed=1)

    def f(x, y):
        return x + y, x * y, x & y, x | y, x ^ y, ~x, x == y, x < y, abs(x)

    for o, w in zip(jit(f)(x, y), f(x, y)):
        _check(o, w)
    with pytest.raises(TypeError, match="sub does not accept dtype bool"):
        jit(lambda x: x - x)(x)


def test_shifts_and_bitwise_type_errors():
    x = _ints(i32, lo=-100, hi=100)
    s = _ints(i32, lo=0, hi=8, seed=1)
    u = _ints(u32, lo=0, hi=2**31)
    outs = jit(lambda x, s, u: (x << s, x >> s, u >> s.astype(np.uint32), x << 2))(x, s, u)
    _check(outs[0], x << s)
    _check(outs[1], x >> s)  # arithmetic for signed
    _check(outs[2], u >> s.astype(np.uint32))  # logical for unsigned
    _check(outs[3], x << 2)
    with pytest.raises(TypeError, match="only defined for integer and boolean"):
        make_jaxpr(lambda x: x & x)(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="only defined for integer and boolean"):
        make_jaxpr(lambda x: ~x)(np.ones(2, np.float32))


def test_power():
    assert _jaxpr(lambda x: x**3, np.ones(3, np.float32)) == (
        "{ lambda ; a:f32[3]. let b:f32[3] = integer_pow[y=3] a in (b,) }"
    )
    x = _ints(i32, lo=-5, hi=6)
    e = _ints(i32, lo=0, hi=7, seed=1)
    f = (_ints(np.float64, lo=1, hi=9) / 4).astype(f32)
    outs = jit(lambda x, e, f: (x**2, x**e, f**-2, f**f, 2**e, f**0.5))(x, e, f)
    _check(outs[0], x**2)
    _check(outs[1], x**e)
    np.testing.assert_allclose(np.asarray(outs[2]), f**-2, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(outs[3]), f**f, rtol=1e-5)
    _check(outs[4], (2**e).astype(i32))
    np.testing.assert_allclose(np.asarray(outs[5]), f**0.5, rtol=1e-6)
    # Integer powers with negative exponents: 0, except for bases 1 and -1.
    base = np.array([2, 1, -1, -1, 0, 3], np.int32)
    expo = np.array([-1, -3, -2, -3, 2, 0], np.int32)
    _check(jit(lambda a, b: a**b)(base, expo), np.array([0, 1, 1, -1, 0, 1], np.int32))


def test_matmul():
    a, b = _ints(f32, (2, 3)), _ints(f32, (3, 4), seed=1)
    v = _ints(f32, (3,), seed=2)
    ba, bb = _ints(f32, (5, 1, 2, 3), seed=3), _ints(f32, (4, 3, 4), seed=4)
    outs = jit(lambda a, b, v, ba, bb: (a @ b, a @ v, v @ b, v @ v, ba @ bb, ba @ v))(
        a, b, v, ba, bb
    )
    for o, w in zip(outs, (a @ b, a @ v, v @ b, v @ v, ba @ bb, ba @ v)):
        _check(o, w)
    assert _jaxpr(lambda a, b: a @ b, a, b) == (
        "{ lambda ; a:f32[2,3] b:f32[3,4]. let c:f32[2,4] = dot_general["
        "dimension_numbers=(([1], [0]), ([], [])) preferred_element_type=float32] a b in (c,) }"
    )
    assert _out(lambda a, b: a @ b, a.astype(np.int8), b).dtype == f32
    with pytest.raises(ValueError, match="matmul"):
        make_jaxpr(lambda a: a @ a)(a)
    with pytest.raises(ValueError, match="enough dimensions"):
        make_jaxpr(lambda a: a @ np.float32(2))(v)


def test_round():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.25, 3.14159], np.float32)
    r0, r2, rint = jit(lambda x: (round(x, 0), round(x, 2), round(x)))(x)
    _check(r0, np.round(x))
    np.testing.assert_allclose(np.asarray(r2), np.round(x, 2), rtol=1e-6)
    _check(rint, np.round(x).astype(np.int32))


def test_eager_operators_on_arrays():
    x = device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = x * 2.0 + 1
    assert type(y) is Array and y.dtype == f32 and not y.weak_type
    _check(y, np.arange(6, dtype=np.float32).reshape(2, 3) * 2 + 1)
    _check(2.0 - x, 2.0 - np.asarray(x))
    _check(np.float32(3) * x, 3 * np.asarray(x))  # NumPy scalars defer to Array
    z = device_put(np.arange(3, dtype=np.int32)) * 2.0
    assert z.dtype == f32 and z.weak_type
    _check(x.T @ x, np.asarray(x).T @ np.asarray(x))
    _check(x[1, ::-1], np.asarray(x)[1, ::-1])


# ---------------------------------------------------------------------------
# Indexing

X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)

INDICES = [
    1,
    -1,
    np.int32(2),
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(3, 0, -2),
    slice(-2, None),
    slice(5, 10),
    slice(3, 1),
    (Ellipsis, 1),
    (None, 1, Ellipsis, None),
    (slice(None), slice(-2, None), slice(None, None, -3)),
    (1, 2, 3),
    (-4, -5, -6),
    (),
    Ellipsis,
    (1, None, slice(4, 0, -1), Ellipsis),
]


def test_basic_indexing_values():
    outs = jit(lambda x: [x[i] for i in INDICES])(X)
    for i, o in zip(INDICES, outs):
        _check(o, X[i])


def test_indexing_jaxprs():
    assert _jaxpr(lambda x: x[1], np.ones((3, 4), np.float32)) == (
        "{ lambda ; a:f32[3,4]. let "
        "b:f32[1,4] = slice[limit_indices=(2, 4) start_indices=(1, 0) strides=None] a "
        "c:f32[4] = squeeze[dimensions=(0,)] b in (c,) }"
    )
    assert _jaxpr(lambda x: x[::-2], np.ones(5, np.float32)) == (
        "{ lambda ; a:f32[5]. let "
        "b:f32[3] = slice[limit_indices=(5,) start_indices=(0,) strides=(2,)] a "
        "c:f32[3] = rev[dimensions=(0,)] b in (c,) }"
    )
    assert _jaxpr(lambda x: x[:, None], np.ones(5, np.float32)) == (
        "{ lambda ; a:f32[5]. let "
        "b:f32[5,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a "
        "in (b,) }"
    )
    assert _jaxpr(lambda x: x[...], np.ones(5, np.float32)) == (
        "{ lambda ; a:f32[5]. let in (a,) }"
    )


def test_eager_indexing_and_iteration():
    x = device_put(X)
    _check(x[2, -1], X[2, -1])
    _check(x[1:3, ::2, 0], X[1:3, ::2, 0])
    rows = list(device_put(np.arange(3, dtype=np.int32)))
    assert [int(r) for r in rows] == [0, 1, 2]
    _check(x[device_put(np.int32(3))], X[3])  # a concrete integer Array index


@pytest.mark.parametrize(
    "index, exc, msg",
    [
        ((0, 0, 0, 0), IndexError, "Too many indices"),
        ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
        (slice(None, None, 0), ValueError, "slice step cannot be zero"),
        (1.5, TypeError, "Indexer must have integer or boolean type"),
        (slice(0.5, 2), TypeError, "Slice entries must be integers"),
        ([0, 1], TypeError, "non-tuple sequence"),
        (np.array([True]), IndexError, "boolean index did not match"),
    ],
)
def test_indexing_errors(index, exc, msg):
    with pytest.raises(exc, match=msg):
        make_jaxpr(lambda x: x[index])(X)


def test_traced_slice_bounds_raise():
    # Advanced and traced indexing are tested in test_jnp_indexing.py.
    with pytest.raises(IndexError, match="static start/stop/step"):
        make_jaxpr(lambda x, i: x[i:])(X, np.int32(0))


def test_symbolic_indexing():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), np.float32)
    shapes = [
        tuple(map(str, a.shape))
        for a in make_jaxpr(lambda x: (x[0], x[:, 1], x[::-1], x[None, ..., 2]))(x).out_avals
    ]
    assert shapes == [("3",), ("b",), ("b", "3"), ("1", "b")]
    # Static slices and int indices of a symbolic axis (bounds clamped at run time).
    shapes = [tuple(map(str, a.shape)) for a in make_jaxpr(lambda x: (x[1:], x[-1]))(x).out_avals]
    assert shapes == [("b - 1", "3"), ("3",)]


# ---------------------------------------------------------------------------
# Methods


def test_shape_methods_values():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def f(x):
        return (
            x.T,
            x.mT,
            x.reshape(-1),
            x.reshape(4, -1),
            x.reshape((3, 8)),
            x.reshape((4, 6), order="F"),
            x.transpose(),
            x.transpose(2, 0, 1),
            x.transpose((1, 2, 0)),
            x.transpose(-1, 0, 1),
            x[:, :1].squeeze(),
            x[:, :1, :1].squeeze(axis=-1),
            x.ravel(),
            x.ravel(order="F"),
            x.flatten(),
            x.astype(np.int32),
            x.astype(bf16),
            x.real,
            x.imag,
            x.conj(),
            x.conjugate(),
        )

    expected = f(x)
    expected = expected[:17] + (x, np.zeros_like(x), x, x)
    for o, w in zip(jit(f)(x), expected):
        _check(o, w)


def test_reshape_and_transpose_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\)"):
        make_jaxpr(lambda x: x.reshape(4, -1))(x)
    with pytest.raises(ValueError, match="only specify one unknown dimension"):
        make_jaxpr(lambda x: x.reshape(-1, -1))(x)
    with pytest.raises(TypeError, match="cannot reshape"):
        make_jaxpr(lambda x: x.reshape(5))(x)
    with pytest.raises(NotImplementedError, match="order=A"):
        make_jaxpr(lambda x: x.reshape(6, order="A"))(x)
    with pytest.raises(TypeError, match="isn't a permutation"):
        make_jaxpr(lambda x: x.transpose(0, 0))(x)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        make_jaxpr(lambda x: x[0].mT)(x)
    with pytest.raises(ValueError, match="cannot select an axis to squeeze"):
        make_jaxpr(lambda x: x.squeeze(0))(x)


def test_reshape_with_symbolic_dims():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 6), np.float32)
    shapes = [
        tuple(map(str, a.shape))
        for a in make_jaxpr(lambda x: (x.reshape(-1), x.reshape(-1, 3), x.reshape(b, 2, -1)))(
            x
        ).out_avals
    ]
    assert shapes == [("6*b",), ("2*b", "3"), ("b", "2", "3")]


def test_complex_real_imag_conj():
    z = _sds(c64)
    assert _jaxpr(lambda z: (z.real, z.imag, z.conj()), z).count(" = ") == 3
    out = make_jaxpr(lambda z: (z.real, z.imag, z.conj()))(z).out_avals
    assert [a.dtype for a in out] == [f32, f32, c64]


@pytest.mark.parametrize("dtype", [f32, i32, u8, boolean], ids=str)
def test_reduction_methods_values(dtype):
    x = _ints(
        dtype, (3, 4), lo=0 if dtype in (u8, boolean) else -5, hi=2 if dtype == boolean else 6
    )

    def f(x):
        return (
            x.sum(),
            x.sum(0),
            x.sum(axis=(0, 1), keepdims=True),
            x.sum(-1, initial=2),
            x.prod(1),
            x.max(),
            x.max(0, keepdims=True),
            x.min(axis=-1),
            x.min(initial=0) if dtype != boolean else x.min(),
            x.mean(),
            x.mean(1, keepdims=True),
            x.argmax(),
            x.argmax(1),
            x.argmin(0, keepdims=True),
            x.argmin(keepdims=True),
        )

    expected = f(x)
    for o, w in zip(jit(f)(x), expected):
        w = np.asarray(w)
        if w.dtype == np.float64:
            w = w.astype(np.float32)
        if w.dtype == np.int64:
            w = w.astype(np.int32)
        if w.dtype == np.uint64:
            w = w.astype(np.uint32)
        assert o.shape == w.shape, (o.shape, w.shape)
        np.testing.assert_allclose(np.asarray(o), w, rtol=1e-6)
        assert o.dtype == w.dtype, (o.dtype, w.dtype)


def test_reduction_dtypes_and_jaxprs():
    assert _out(lambda x: x.sum(), np.ones(3, np.int8)).dtype == i32
    assert _out(lambda x: x.sum(), np.ones(3, np.uint8)).dtype == u32
    assert _out(lambda x: x.sum(), np.ones(3, np.bool_)).dtype == i32
    assert _out(lambda x: x.sum(dtype=np.int8), np.ones(3, np.int32)).dtype == i8
    assert _out(lambda x: x.prod(promote_integers=False), np.ones(3, np.int8)).dtype == i8
    assert _out(lambda x: x.max(), np.ones(3, np.int8)).dtype == i8
    assert _out(lambda x: x.mean(), np.ones(3, np.int32)).dtype == f32
    assert _out(lambda x: x.mean(), np.ones(3, bf16)).dtype == bf16
    assert _out(lambda x: x.argmax(), np.ones(3, bf16)).dtype == i32
    # 16-bit floats accumulate in float32, as jnp.sum does.
    assert _jaxpr(lambda x: x.sum(), np.ones(3, bf16)) == (
        "{ lambda ; a:bf16[3]. let "
        "b:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a "
        "c:f32[] = reduce_sum[axes=(0,) out_sharding=None] b "
        "d:bf16[] = convert_element_type[new_dtype=bfloat16 weak_type=False] c in (d,) }"
    )
    assert _jaxpr(lambda x: x.max(1), np.ones((2, 3), np.float32)) == (
        "{ lambda ; a:f32[2,3]. let b:f32[2] = reduce_max[axes=(1,) out_sharding=None] a in (b,) }"
    )
    assert _jaxpr(lambda x: x.argmax(0), np.ones((2, 3), np.float32)) == (
        "{ lambda ; a:f32[2,3]. let b:i32[3] = argmax[axes=(0,) index_dtype=int32] a in (b,) }"
    )


def test_reduction_errors():
    e = np.zeros((0, 3), np.float32)
    with pytest.raises(ValueError, match="zero-size array to reduction operation max"):
        make_jaxpr(lambda x: x.max(0))(e)
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        make_jaxpr(lambda x: x.argmin())(e)
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        make_jaxpr(lambda x: x.sum((0, -2)))(e)
    with pytest.raises(ValueError, match="out of bounds"):
        make_jaxpr(lambda x: x.sum(2))(e)
    with pytest.raises(NotImplementedError, match="'out' argument"):
        make_jaxpr(lambda x: x.sum(out=x))(e)
    # An empty max with an initial value is fine; an empty sum is 0.
    s, m = jit(lambda x: (x.sum(0), x.max(0, initial=-1.0)))(e)
    _check(s, np.zeros(3, np.float32))
    _check(m, np.full(3, -1.0, np.float32))


def test_eager_methods_on_arrays():
    x = device_put(np.arange(6, dtype=np.float32).reshape(2, 3))
    _check(x.sum(1), np.array([3, 12], np.float32))
    _check(x.reshape(3, 2).T, np.arange(6, dtype=np.float32).reshape(3, 2).T)
    _check(x.astype(np.int32).argmax(), np.int32(5) * np.ones((), np.int32))
    assert float(x.mean()) == 2.5


# ---------------------------------------------------------------------------
# view and byteswap: NumPy's byte reinterpretations are the oracle.

VIEW_DTYPES = [boolean, i8, u8, i16, f16, bf16, i32, u32, f32, c64]


def _bytes_array(shape, dtype, seed=0):
    # Random bytes viewed as `dtype`, with NaN/bool bytes made canonical so that
    # comparisons are exact (a NaN's payload survives, but NaN != NaN).
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=(*shape[:-1], shape[-1] * dtype.itemsize), dtype=np.uint8)
    x = raw.view(dtype)
    if dtype == boolean:
        x = raw.astype(bool)
    elif dtype.kind in "fc" or dtype == bf16:
        x = np.where(np.isfinite(x), x, 0).astype(dtype)
    return x


def _same_bits(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))


@pytest.mark.parametrize("src", VIEW_DTYPES, ids=str)
@pytest.mark.parametrize("dst", VIEW_DTYPES, ids=str)
def test_view_reinterprets_bytes_as_numpy(src, dst):
    x = _bytes_array((2, 8), src)
    # NumPy keeps a nonzero byte as is in a bool; JAX (and polyjax) make it True.
    want = x.view(np.uint8) != 0 if dst == boolean else x.view(dst)
    _same_bits(device_put(x).view(dst), want)
    _same_bits(jit(lambda a: a.view(dst))(x), want)


def test_view_errors_and_identity():
    x = device_put(np.arange(3, dtype=np.int8))
    assert x.view() is x and x.view(None) is x
    with pytest.raises(ValueError, match="divisor of the total size in bytes"):
        x.view(np.int16)
    with pytest.raises(ValueError, match="0d array"):
        device_put(np.int32(1)).view(np.int8)
    np.testing.assert_array_equal(device_put(np.int32(1)).view(np.float32), np.int32(1).view(f32))


@pytest.mark.parametrize("dtype", VIEW_DTYPES, ids=str)
def test_byteswap_matches_numpy(dtype):
    x = _bytes_array((2, 4), dtype, seed=1)
    _same_bits(device_put(x).byteswap(), x.byteswap())
    _same_bits(jit(lambda a: a.byteswap())(x), x.byteswap())


def test_flat_is_not_implemented_as_in_jax():
    with pytest.raises(NotImplementedError, match=r"consider arr\.flatten\(\)"):
        device_put(np.ones(3, f32)).flat
