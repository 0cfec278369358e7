"""Shape and layout primitives: printed jaxprs, shape rules and errors, lowering, values.

Values are checked eagerly (each primitive runs through a cached one-primitive
executable) against NumPy, over the dtypes f32, bf16, i32, u8 and bool, and over
shapes with a zero-size axis and rank 0. Each (primitive, params, input types)
compiles once, so the cases share inputs where they can.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from _jnp_helpers import flat_jaxpr as _jaxpr

from polyjax_core import get_aval, make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.symbolic_dims import InconclusiveDimensionOperation, SymbolicScope
from polyjax_interpreters import mlir
from polyjax_interpreters.array import Array
from polyjax_numpy import lax

bf16 = np.dtype(ml_dtypes.bfloat16)
f32, i32, u8, boolean = (np.dtype(t) for t in (np.float32, np.int32, np.uint8, np.bool_))
DTYPES = [f32, bf16, i32, u8, boolean]


def _arr(shape, dtype=f32):
    size = int(np.prod(shape))
    x = (np.arange(size) % 7).reshape(shape)
    return (x % 2).astype(dtype) if dtype == boolean else x.astype(dtype)


def _out_aval(fun, *args):
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


def _lowered(fun, *args) -> str:
    closed = make_jaxpr(fun)(*args)
    lowered = mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"])
    return mlir.module_to_string(lowered.module)


# ---------------------------------------------------------------------------
# Printed jaxprs, as JAX prints them

x23 = np.zeros((2, 3), np.float32)

JAXPRS = [
    (lambda x: lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), x23,
     "b:f32[4,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a"),
    (lambda x: lax.reshape(x, (3, 2)), x23,
     "b:f32[3,2] = reshape[dimensions=None new_sizes=(3, 2) sharding=None] a"),
    (lambda x: lax.reshape(x, (6,), (1, 0)), x23,
     "b:f32[6] = reshape[dimensions=(1, 0) new_sizes=(6,) sharding=None] a"),
    (lambda x: lax.transpose(x, (1, 0)), x23, "b:f32[3,2] = transpose[permutation=(1, 0)] a"),
    (lambda x: lax.squeeze(x, (-1,)), np.zeros((2, 1), np.float32),
     "b:f32[2] = squeeze[dimensions=(1,)] a"),
    (lambda x: lax.expand_dims(x, (0,)), x23,
     "b:f32[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] a"),
    (lambda x: lax.slice(x, (0, 1), (2, 3)), x23,
     "b:f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=None] a"),
    (lambda x: lax.slice(x, (0, 0), (2, 3), (1, 2)), x23,
     "b:f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 0) strides=(1, 2)] a"),
    (lambda x: lax.concatenate([x, x], 1), x23, "b:f32[2,6] = concatenate[dimension=1] a a"),
    (lambda x: lax.pad(x, np.float32(0), [(1, 0, 0), (0, -1, 1)]), x23,
     "b:f32[3,4] = pad[padding_config=((1, 0, 0), (0, -1, 1))] a 0.0:f32[]"),
    (lambda x: lax.rev(x, (0, 1)), x23, "b:f32[2,3] = rev[dimensions=(0, 1)] a"),
    (lambda x: lax.broadcasted_iota(np.int32, (2, 3), 1), x23,
     "b:i32[2,3] = iota[dimension=1 dtype=int32 shape=(2, 3) sharding=None]"),
    (lambda x: lax.full((2,), 1.5, np.float32), x23,
     "b:f32[2] = broadcast_in_dim 1.5:f32[]"),
]  # fmt: skip


@pytest.mark.parametrize("case", JAXPRS, ids=lambda c: c[-1].split("=")[1].split("[")[0].strip())
def test_printed_jaxpr(case):
    fun, arg, eqn = case
    out = eqn.split(":")[0]
    expected = (
        f"{{ lambda ; a:{get_aval(arg).str_short(short_dtypes=True)}. let {eqn} in ({out},) }}"
    )
    assert _jaxpr(fun, arg) == expected


def test_identity_ops_record_nothing():
    # As in JAX: ops that would not change their (array) operand return it unchanged.
    def f(x):
        y = lax.reshape(x, (2, 3))
        y = lax.transpose(y, (0, 1))
        y = lax.broadcast_in_dim(y, (2, 3), (0, 1))
        y = lax.squeeze(y, ())
        y = lax.slice(y, (0, 0), (2, 3))
        y = lax.rev(y, ())
        return lax.concatenate([y], 0)

    assert _jaxpr(f, x23) == "{ lambda ; a:f32[2,3]. let in (a,) }"


# ---------------------------------------------------------------------------
# Result types


@pytest.mark.parametrize(
    "fun, args, shape, dtype, weak",
    [
        (lambda x: lax.broadcast_in_dim(x, (3,), ()), (2.0,), (3,), f32, True),
        (lambda x: lax.reshape(x, (0, 5)), (np.zeros((2, 0), u8),), (0, 5), u8, False),
        (lambda x: lax.slice(x, (1,), (10,), (4,)), (np.zeros(10, i32),), (3,), i32, False),
        (lambda x: lax.slice(x, (2,), (2,)), (np.zeros(10, i32),), (0,), i32, False),
        (lambda x: lax.pad(x, False, [(2, 3, 4)]), (np.zeros(0, boolean),), (5,), boolean, False),
        (lambda x: lax.pad(x, 0, [(1, 1, 0)]), (np.zeros(2, bf16),), (4,), bf16, False),
        (lambda x: lax.pad(x, np.float32(0), [(-1, -1, 2)]), (np.zeros(3, f32),), (5,), f32,
         False),
        (lambda x: lax.concatenate([x, x * 0], 0), (np.zeros((0, 2), bf16),), (0, 2), bf16,
         False),
        (lambda: lax.iota(np.int64, 3), (), (3,), i32, False),
        (lambda: lax.iota(np.bool_, 2), (), (2,), boolean, False),
        (lambda: lax.full((), 3), (), (), i32, True),
        (lambda: lax.full((2,), 3, np.uint8), (), (2,), u8, False),
        (lambda x: lax.full_like(x, 1), (np.zeros((2,), bf16),), (2,), bf16, False),
        (lambda x: lax.full_like(x, 1, shape=(4, 1)), (2.0,), (4, 1), f32, True),
        (lambda x: lax.expand_dims(x, (-1, 0)), (np.zeros(3, u8),), (1, 3, 1), u8, False),
    ],
)  # fmt: skip
def test_result_type(fun, args, shape, dtype, weak):
    out = _out_aval(fun, *args)
    assert (out.shape, out.dtype, out.weak_type) == (shape, dtype, weak)


# ---------------------------------------------------------------------------
# Errors: JAX's exception types and messages

ERRORS = [
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (0,)), x23, TypeError,
     "broadcast_dimensions must have length equal to operand ndim"),
    (lambda x: lax.broadcast_in_dim(x, (3,), (0, 1)), x23, TypeError,
     "must have equal or higher rank"),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 2)), x23, TypeError,
     "must be a subset of output dimensions"),
    (lambda x: lax.broadcast_in_dim(x, (3, 2), (1, 0)), x23, TypeError, "strictly increasing"),
    (lambda x: lax.broadcast_in_dim(x, (2, 4), (0, 1)), x23, TypeError,
     "must either be 1, or be equal"),
    (lambda x: lax.reshape(x, (4, 2)), x23, TypeError,
     r"reshape total size must be unchanged, got new_sizes \(4, 2\) \(of total size 8\)"),
    (lambda x: lax.reshape(x, (-1,)), x23, TypeError, "Shapes must be sequences"),
    (lambda x: lax.reshape(x, (6,), (0, 0)), x23, TypeError,
     "reshape dimensions must be a permutation"),
    (lambda x: lax.transpose(x, (0, 0)), x23, TypeError, "isn't a permutation"),
    (lambda x: lax.transpose(x, (0,)), x23, TypeError, "isn't a permutation"),
    (lambda x: lax.squeeze(x, (0,)), x23, ValueError, "cannot select an axis to squeeze out"),
    (lambda x: lax.squeeze(x, (2,)), x23, ValueError, "out of bounds"),
    (lambda x: lax.expand_dims(x, (0, 0)), x23, ValueError, "repeated axis"),
    (lambda x: lax.expand_dims(x, (3,)), np.zeros(2), ValueError, "out of bounds"),
    (lambda x: lax.broadcasted_iota(np.int32, (2,), 1), x23, ValueError, "out of bounds"),
    (lambda x: lax.iota("not a dtype", 2), x23, TypeError, "not understood"),
    (lambda x: lax.full((2,), x), x23, TypeError, "full must be called with scalar fill_value"),
    (lambda x: lax.slice(x, (0,), (1,)), x23, TypeError,
     "start_indices must have length equal to the number of dimensions"),
    (lambda x: lax.slice(x, (0, 0), (2, 4)), x23, TypeError,
     "limit_indices must be less than or equal to operand shape"),
    (lambda x: lax.slice(x, (-1, 0), (2, 3)), x23, TypeError,
     "start_indices must be greater than or equal to zero"),
    (lambda x: lax.slice(x, (2, 0), (1, 3)), x23, TypeError,
     "limit_indices must be greater than or equal to start_indices"),
    (lambda x: lax.slice(x, (0, 0), (2, 3), (0, 1)), x23, TypeError, "strides must be positive"),
    (lambda x: lax.concatenate([], 0), x23, ValueError, "non-empty sequence"),
    (lambda x: lax.concatenate([x, x.astype(np.int32)], 0), x23, TypeError,
     "same dtypes, got float32, int32"),
    (lambda x: lax.concatenate([x, x[0]], 0), x23, TypeError, "different numbers of dimensions"),
    (lambda x: lax.concatenate([x, x], 2), x23, TypeError, "dimension out of bounds"),
    (lambda x: lax.concatenate([x, x.T], 0), x23, TypeError,
     "differ in dimensions other than the one being concatenated"),
    (lambda x: lax.pad(x, np.int32(0), [(0, 0, 0)] * 2), x23, TypeError,
     "pad operand and padding_value must be same dtype: got float32 and int32"),
    (lambda x: lax.pad(x, np.float32(0), [(0, 0, 0)]), x23, ValueError,
     "length of padding_config must equal the number of axes"),
    (lambda x: lax.pad(x, np.float32(0), [(0, 0, -1)] * 2), x23, ValueError,
     "interior must be nonnegative"),
    (lambda x: lax.pad(x, np.float32(0), [(-2, -1, 0), (0, 0, 0)]), x23, ValueError,
     "Dimension size after padding is not at least 0"),
    (lambda x: lax.pad(x, np.float32(0), [(0, 0)] * 2), x23, TypeError, "triples"),
    (lambda x: lax.rev(x, (0, 0)), x23, ValueError, "rev dimensions must be unique"),
    (lambda x: lax.rev(x, (2,)), x23, ValueError, "must all be less than operand ndim"),
]  # fmt: skip


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[-1][:40])
def test_errors(case):
    fun, arg, exc, msg = case
    with pytest.raises(exc, match=msg):
        make_jaxpr(fun)(arg)


# ---------------------------------------------------------------------------
# Symbolic dimensions


def test_symbolic_shape_rules():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), np.float32)

    def f(x):
        return (
            lax.broadcast_in_dim(x, (2, b, 3), (1, 2)),
            lax.reshape(x, (3 * b,)),
            lax.reshape(x, (b, 1, 3)),
            lax.slice(lax.reshape(x, (3 * b,)), (1,), (3 * b,), (2,)),
            lax.pad(x, np.float32(0), [(1, 2, 1), (0, 0, 0)]),
            lax.pad(x, np.float32(0), [(0, -1, 0), (0, 0, 0)]),
            lax.iota(np.int32, b),
            lax.concatenate([x, x, lax.slice(x, (0, 0), (1, 3))], 0),
            lax.transpose(x, (1, 0)),
            lax.squeeze(lax.expand_dims(x, (1,)), (1,)),
            lax.rev(x, (0,)),
        )

    shapes = [tuple(map(str, a.shape)) for a in make_jaxpr(f)(x).out_avals]
    assert shapes == [
        ("2", "b", "3"),
        ("3*b",),
        ("b", "1", "3"),
        shapes[3],  # a strided size: evaluated below
        ("2*b + 2", "3"),
        ("b - 1", "3"),
        ("b",),
        ("2*b + 1", "3"),
        ("3", "b"),
        ("b", "3"),
        ("b", "3"),
    ]
    # ceil((3b - 1) / 2) strided elements: evaluate the expression for a few b.
    (d,) = make_jaxpr(f)(x).out_avals[3].shape
    for bv in (1, 2, 5):
        assert d.evaluate({"b": bv}) == len(range(1, 3 * bv, 2))


def test_symbolic_shape_errors():
    scope = SymbolicScope()
    a, b = symbolic_dim("a", scope), symbolic_dim("b", scope)
    x = ShapeDtypeStruct((a, b), np.float32)
    with pytest.raises(TypeError, match="reshape total size must be unchanged"):
        make_jaxpr(lambda x: lax.reshape(x, (a, a)))(x)
    with pytest.raises(TypeError, match="must either be 1"):
        make_jaxpr(lambda x: lax.broadcast_in_dim(x, (a, a), (0, 1)))(x)
    with pytest.raises(ValueError, match="cannot select an axis to squeeze"):
        make_jaxpr(lambda x: lax.squeeze(x, (0,)))(x)
    with pytest.raises(InconclusiveDimensionOperation):
        make_jaxpr(lambda x: lax.slice(x, (0, 0), (a, 2)))(x)
    with pytest.raises(TypeError, match="differ in dimensions other than"):
        make_jaxpr(lambda x: lax.concatenate([x, lax.transpose(x, (1, 0))], 0))(x)


def test_symbolic_shapes_lower_to_dynamic_ops():
    b = symbolic_dim("b")
    x = ShapeDtypeStruct((b, 3), np.float32)

    def f(x):
        return (
            lax.broadcast_in_dim(x, (2, b, 3), (1, 2)),
            lax.reshape(x, (3 * b,)),
            lax.slice(x, (1, 0), (b, 3)),
            lax.pad(x, np.float32(0), [(b, 0, 0), (0, 0, 0)]),
            lax.broadcasted_iota(np.int32, (b, 2), 0),
        )

    text = _lowered(f, x)
    for op in ("dynamic_broadcast_in_dim", "dynamic_reshape", "real_dynamic_slice",
               "dynamic_pad", "dynamic_iota"):  # fmt: skip
        assert f"stablehlo.{op}" in text, op


def test_static_shapes_lower_to_static_ops():
    def f(x):
        return (
            lax.slice(x, (0, 1), (2, 3)),
            lax.pad(x, np.float32(0), [(1, 0, 1), (0, 0, 0)]),
            lax.iota(np.int32, 4),
            lax.rev(x, (1,)),
            lax.concatenate([x, x], 0),
            lax.transpose(x, (1, 0)),
        )

    text = _lowered(f, x23)
    for op in ("slice", "pad", "iota", "reverse", "concatenate", "transpose"):
        assert f"stablehlo.{op}" in text, op
    assert "dynamic" not in text


# ---------------------------------------------------------------------------
# Values against NumPy


def _np_pad(x, value, config):
    """NumPy oracle for lax.pad: interior padding, then edge padding (negative cuts)."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        if interior and n > 0:
            shape = list(x.shape)
            shape[axis] = n + (n - 1) * interior
            out = np.full(shape, value, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[axis] = slice(None, None, interior + 1)
            out[tuple(idx)] = x
            x = out
        for amount, at_start in ((lo, True), (hi, False)):
            if amount > 0:
                shape = list(x.shape)
                shape[axis] = amount
                block = np.full(shape, value, x.dtype)
                x = np.concatenate([block, x] if at_start else [x, block], axis)
            elif amount < 0:
                idx = [slice(None)] * x.ndim
                idx[axis] = slice(-amount, None) if at_start else slice(None, amount)
                x = x[tuple(idx)]
    return x


def _check(out, expected):
    assert isinstance(out, Array)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_values(dtype):
    x = _arr((2, 3, 4), dtype)
    pad_value = np.asarray(1, dtype)[()]
    _check(lax.broadcast_in_dim(x[0], (5, 3, 4), (1, 2)), np.broadcast_to(x[0], (5, 3, 4)))
    _check(lax.broadcast_in_dim(x[:, :1], (2, 6, 4), (0, 1, 2)), np.repeat(x[:, :1], 6, 1))
    _check(lax.reshape(x, (4, 6)), x.reshape(4, 6))
    _check(lax.reshape(x, (6, 4), (2, 0, 1)), x.transpose(2, 0, 1).reshape(6, 4))
    _check(lax.transpose(x, (2, 0, 1)), x.transpose(2, 0, 1))
    _check(lax.squeeze(x[:, :1], (1,)), x[:, 0])
    _check(lax.expand_dims(x, (0, 4)), x[None, ..., None])
    _check(lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)), x[:, 1:3, ::3])
    _check(lax.concatenate([x, x[:, :1], x[:, :0]], 1), np.concatenate([x, x[:, :1]], 1))
    config = [(1, -1, 0), (0, 2, 1), (-2, 1, 2)]
    _check(lax.pad(x, pad_value, config), _np_pad(x, pad_value, config))
    _check(lax.rev(x, (0, 2)), x[::-1, :, ::-1])
    _check(lax.full((2, 2), pad_value), np.full((2, 2), pad_value))
    _check(
        lax.broadcasted_iota(dtype, (2, 3), 1), np.broadcast_to(np.arange(3), (2, 3)).astype(dtype)
    )


@pytest.mark.parametrize("dtype", [f32, boolean], ids=str)
def test_values_of_empty_and_rank0_arrays(dtype):
    e = _arr((0, 3), dtype)
    s = np.asarray(_arr((), dtype))
    _check(lax.broadcast_in_dim(s, (2, 0), ()), np.zeros((2, 0), dtype))
    _check(lax.broadcast_in_dim(s, (), ()), s)
    _check(lax.reshape(e, (3, 0, 2)), e.reshape(3, 0, 2))
    _check(lax.reshape(s, (1, 1)), s.reshape(1, 1))
    _check(lax.transpose(e, (1, 0)), e.T)
    _check(lax.slice(e, (0, 1), (0, 3)), e[:, 1:])
    _check(lax.concatenate([e, e], 0), np.concatenate([e, e]))
    _check(lax.pad(e, np.asarray(1, dtype)[()], [(1, 1, 3), (0, 0, 0)]), np.ones((2, 3), dtype))
    _check(lax.rev(e, (0,)), e)
    _check(lax.expand_dims(s, (0,)), s[None])
    _check(lax.squeeze(lax.expand_dims(s, (0,)), (0,)), s)
    _check(lax.iota(np.int32, 0), np.zeros(0, np.int32))


def test_full_and_full_like_values():
    out = lax.full((2, 3), 2.5)
    assert out.weak_type and out.dtype == f32
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 2.5, f32))
    like = lax.full_like(np.zeros((2,), u8), 300 % 256)
    _check(like, np.full((2,), 44, u8))
    weak = lax.full_like(out, 1)
    assert weak.weak_type and weak.dtype == f32
    strong = lax.full_like(out, 1, dtype=np.int32)
    assert not strong.weak_type and strong.dtype == i32
