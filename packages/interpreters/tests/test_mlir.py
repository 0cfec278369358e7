"""Tests of polyjax_interpreters.mlir: jaxpr -> StableHLO, compiled and run with jaxlib.

The primitives here are test-local toys (a shape rule and a StableHLO lowering
rule each), so lowering is tested without polyjax-numpy. Modules are compiled
with jaxlib's CPU client and run through `batched_device_put` /
`execute_sharded`, with NumPy as the oracle.
"""

from __future__ import annotations

import threading
import warnings

import ml_dtypes
import numpy as np
import pytest
from jaxlib import _jax, xla_client
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import config
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, Var
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive
from polyjax_core.symbolic_dims import dim_max, dim_min, symbolic_dim
from polyjax_interpreters import mlir

F32 = np.dtype(np.float32)

# ---------------------------------------------------------------------------
# Running modules with jaxlib alone

_client_cache: list = []


def _client():
    if not _client_cache:
        _client_cache.append(xla_client.make_cpu_client())
    return _client_cache[0]


class _Sharding(_jax.SingleDeviceSharding):
    """The two members batched_device_put needs beyond jaxlib's base class."""

    memory_kind = None

    def _to_xla_hlo_sharding(self, ndim):
        return xla_client.HloSharding.replicate()


def compile_module(module: ir.Module):
    client = _client()
    devices = _jax.DeviceList(tuple(client.local_devices()[:1]))
    return client.compile_and_load(
        mlir.module_to_bytecode(module), devices, xla_client.CompileOptions()
    )


def run_module(module: ir.Module, *args: np.ndarray) -> list[np.ndarray]:
    """Compiles `module` on one CPU device, runs it on `args`, returns NumPy outputs."""
    exe = compile_module(module)
    device = _client().local_devices()[0]
    sharding = _Sharding(device)
    x64 = config.enable_x64.value
    bufs = [
        _jax.batched_device_put(
            ShapedArray(np.shape(a), np.asarray(a).dtype),
            sharding,
            [np.asarray(a)],
            [device],
            True,
            False,
            enable_x64=x64,
        )
        for a in args
    ]
    outs = exe.execute_sharded(bufs).disassemble_into_single_device_arrays()
    return [o[0]._single_device_array_to_np_array_did_copy()[0] for o in outs]


def lower(fun, *avals, **kwargs) -> mlir.LoweringResult:
    closed = trace_to_jaxpr(fun, list(avals))
    kwargs.setdefault("module_name", "jit_test")
    kwargs.setdefault("platforms", ("cpu",))
    return mlir.lower_jaxpr_to_module(closed, **kwargs)


# ---------------------------------------------------------------------------
# Toy primitives


def _same(x, *rest, **params):
    return x


def _prim(name, lowering, shape_rule=_same, multiple_results=False):
    p = Primitive(name)
    p.multiple_results = multiple_results
    p.def_abstract_eval(shape_rule)
    mlir.register_lowering(p, lowering)
    return p


sin_p = _prim("test_sin", lambda ctx, x: [hlo.sine(x)])
add_p = _prim("test_add", lambda ctx, x, y: [hlo.add(x, y)])
# A bare ir.Value is accepted for a single-result primitive.
mul_p = _prim("test_mul", lambda ctx, x, y: hlo.multiply(x, y))
sum_and_prod_p = _prim(
    "test_sum_and_prod",
    lambda ctx, x, y: [hlo.add(x, y), hlo.multiply(x, y)],
    lambda x, y: [x, x],
    multiple_results=True,
)


def _bcast_rule(x, *, shape):
    return ShapedArray(shape, x.dtype)


def _bcast_lowering(ctx, x, *, shape):
    (aval_out,) = ctx.avals_out
    nd = len(shape)
    return [mlir.broadcast_in_dim(ctx, x, aval_out, range(nd - ctx.avals_in[0].ndim, nd))]


bcast_p = _prim("test_bcast", _bcast_lowering, _bcast_rule)
reshape_p = _prim(
    "test_reshape",
    lambda ctx, x, *, shape: [mlir.reshape(ctx, x, ctx.avals_out[0])],
    _bcast_rule,
)


def _iota_rule(*, shape, dtype, dimension):
    return ShapedArray(shape, dtype)


iota_p = _prim(
    "test_iota",
    lambda ctx, *, shape, dtype, dimension: [mlir.iota(ctx, ctx.avals_out[0], dimension)],
    _iota_rule,
)
full_p = _prim(
    "test_full",
    lambda ctx, *, shape, dtype, value: [mlir.full_like_aval(ctx, value, ctx.avals_out[0])],
    lambda *, shape, dtype, value: ShapedArray(shape, dtype),
)
# The value of a dimension expression as an i32 scalar (like JAX's dimension_as_value).
dim_value_p = _prim(
    "test_dim_value",
    lambda ctx, *, dim: (
        [mlir.eval_dynamic_shape(ctx, (dim,))[0]]
        if not isinstance(dim, int)
        else [mlir.ir_constant(np.int32(dim))]
    ),
    lambda *, dim: ShapedArray((), np.int32),
)


# ---------------------------------------------------------------------------
# Types


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (np.bool_, "i1"),
        (np.int8, "i8"),
        (np.int16, "i16"),
        (np.int32, "i32"),
        (np.int64, "i64"),
        (np.uint8, "ui8"),
        (np.uint16, "ui16"),
        (np.uint32, "ui32"),
        (np.uint64, "ui64"),
        (np.float16, "f16"),
        (np.float32, "f32"),
        (np.float64, "f64"),
        (ml_dtypes.bfloat16, "bf16"),
        (np.complex64, "complex<f32>"),
        (np.complex128, "complex<f64>"),
        (ml_dtypes.float8_e4m3fn, "f8E4M3FN"),
        (ml_dtypes.float8_e5m2, "f8E5M2"),
        (ml_dtypes.float8_e4m3fnuz, "f8E4M3FNUZ"),
        (ml_dtypes.float8_e5m2fnuz, "f8E5M2FNUZ"),
        (ml_dtypes.float8_e4m3b11fnuz, "f8E4M3B11FNUZ"),
        (ml_dtypes.int4, "i4"),
        (ml_dtypes.uint4, "ui4"),
    ],
)
def test_dtype_to_ir_type(dtype, expected):
    with mlir.make_ir_context(), ir.Location.unknown():
        assert str(mlir.dtype_to_ir_type(np.dtype(dtype))) == expected
        assert str(mlir.aval_to_ir_type(ShapedArray((2, 3), dtype))) == f"tensor<2x3x{expected}>"


def test_dtype_to_ir_type_rejects_unknown():
    with (
        mlir.make_ir_context(),
        ir.Location.unknown(),
        pytest.raises(TypeError, match="No StableHLO element type"),
    ):
        mlir.dtype_to_ir_type(np.dtype(object))


def test_aval_to_ir_type_symbolic_dims_are_dynamic():
    b = symbolic_dim("b")
    with mlir.make_ir_context(), ir.Location.unknown():
        t = mlir.aval_to_ir_type(ShapedArray((b, 3, 2 * b), np.float32))
        assert str(t) == "tensor<?x3x?xf32>"
        assert str(mlir.aval_to_ir_type(ShapedArray((), np.float32))) == "tensor<f32>"


def test_context_is_reused_per_thread():
    ctx = mlir.make_ir_context()
    assert mlir.make_ir_context() is ctx
    other = []
    t = threading.Thread(target=lambda: other.append(mlir.make_ir_context()))
    t.start()
    t.join()
    assert other[0] is not ctx


# ---------------------------------------------------------------------------
# Lowering and running


@pytest.mark.parametrize(
    "name, expected",
    [
        ("jit_<lambda>", "jit__lambda"),  # trailing underscores go, as in JAX
        ("jit_a-b", "jit_a-b"),
        ("jit_f$", "jit_f"),
        ("jit_a[0]", "jit_a_0"),
        ("jit_<locals>.g", "jit__locals_.g"),
        ("jit___x__", "jit___x"),
        ("jit_", "jit"),
    ],
)
def test_module_names_are_sanitized_as_jax_names_them(name, expected):
    assert mlir._sanitize_module_name(name) == expected


def test_lower_and_run_elementwise():
    def f(x, y):
        s, p = sum_and_prod_p.bind(x, y)
        return [sin_p.bind(add_p.bind(x, y)), mul_p.bind(s, p), x]

    a = ShapedArray((2, 3), np.float32)
    result = lower(f, a, a)
    text = mlir.module_to_string(result.module)
    assert "func.func public @main" in text
    assert "module @jit_test" in text
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 0.5, np.float32)
    out = run_module(result.module, x, y)
    np.testing.assert_allclose(out[0], np.sin(x + y), rtol=1e-6)
    np.testing.assert_allclose(out[1], (x + y) * (x * y), rtol=1e-6)
    np.testing.assert_array_equal(out[2], x)


def test_literals_and_constants_are_embedded():
    def f(s, v):
        return [mul_p.bind(s, np.float32(3.0)), add_p.bind(v, np.arange(3, dtype=np.float32))]

    closed = trace_to_jaxpr(f, [ShapedArray((), np.float32), ShapedArray((3,), np.float32)])
    assert len(closed.consts) == 1  # the array is a constvar, the scalar a literal
    result = mlir.lower_jaxpr_to_module(closed, module_name="m", platforms=("cpu",))
    text = mlir.module_to_string(result.module)
    assert "dense<3.000000e+00> : tensor<f32>" in text
    assert "dense<[0.000000e+00, 1.000000e+00, 2.000000e+00]> : tensor<3xf32>" in text
    v = np.array([1.0, 2.0, 4.0], np.float32)
    out = run_module(result.module, np.float32(2.0), v)
    np.testing.assert_allclose(out[0], 6.0)
    np.testing.assert_allclose(out[1], v + np.arange(3))


def test_constants_of_every_dtype_round_trip():
    values = [
        np.array([True, False, True]),
        np.array([-128, 0, 127], np.int8),
        np.array([1, -2, 3], np.int16),
        np.array([[1, 2], [3, 4]], np.int32),
        np.array([2**40, -5], np.int64),
        np.array([0, 255], np.uint8),
        np.array([65535, 7], np.uint16),
        np.array([2**32 - 1, 3], np.uint32),
        np.array([2**64 - 1, 3], np.uint64),
        np.array([1.5, -2.25], np.float16),
        np.array([1.5, np.nan, -np.inf], np.float32),
        np.array([1e300, -0.0], np.float64),
        np.array([1.5, -3.0], ml_dtypes.bfloat16),
        np.array([1.5, -3.0], ml_dtypes.float8_e4m3fn),
        np.array([1 + 2j, -3.5j], np.complex64),
        np.array([1 + 2j, -3.5e100j], np.complex128),
        np.full((4, 5), 7.25, np.float32),  # a splat
        np.full((3,), np.nan, np.float32),  # a NaN splat
        np.zeros((2, 0), np.float32),  # empty
        np.float32(4.5),  # a NumPy scalar
    ]
    avals = [ShapedArray(np.shape(v), np.asarray(v).dtype) for v in values]
    jaxpr = Jaxpr([Var(a) for a in avals], [], [], [])
    jaxpr.outvars = list(jaxpr.constvars)
    result = mlir.lower_jaxpr_to_module(
        ClosedJaxpr(jaxpr, values), module_name="consts", platforms=("cpu",)
    )
    text = mlir.module_to_string(result.module)
    assert "dense<7.250000e+00> : tensor<4x5xf32>" in text  # emitted as a splat
    out = run_module(result.module)
    for v, o in zip(values, out):
        v = np.asarray(v)
        assert o.dtype == v.dtype and o.shape == v.shape
        np.testing.assert_array_equal(
            o.astype(np.float64) if v.dtype.kind == "V" else o,
            v.astype(np.float64) if v.dtype.kind == "V" else v,
        )


_Q = np.arange(24, dtype=np.float32).reshape(4, 6)


@pytest.mark.parametrize(
    "value",
    [
        _Q[0, ::2],  # strided
        _Q[::-1, ::-1],  # negative strides
        np.asfortranarray(_Q),  # Fortran order
        _Q[:, ::3].T,  # strided and transposed
        np.ones(12, np.float32)[::3],  # a strided splat
        (_Q + 1j * _Q).astype(np.complex128)[::2, 1::2],  # complex, split into float pairs
        np.zeros(6, ml_dtypes.bfloat16)[::-2],
    ],
    ids=["strided", "negative", "fortran", "transposed", "splat", "complex128", "bf16"],
)
def test_constants_from_non_contiguous_arrays(value):
    assert not value.flags.c_contiguous
    var = Var(ShapedArray(value.shape, value.dtype))
    closed = ClosedJaxpr(Jaxpr([var], [], [var], []), [value])
    result = mlir.lower_jaxpr_to_module(closed, module_name="c", platforms=("cpu",))
    (out,) = run_module(result.module)
    assert out.dtype == value.dtype
    np.testing.assert_array_equal(out, value)


class _ArrayLike:
    """Not a NumPy array, but convertible to one."""

    def __array__(self, dtype=None, copy=None):
        return np.array([1.0, 2.0, 3.0], dtype=dtype or np.float32)


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (_ArrayLike(), np.float32, np.array([1.0, 2.0, 3.0], np.float32)),
        (2.5, np.float32, np.float32(2.5)),
        (3, np.int32, np.int32(3)),
        (True, np.bool_, np.bool_(True)),
        (np.float64(1.25), np.float64, np.float64(1.25)),
    ],
)
def test_consts_of_other_types(value, dtype, expected):
    aval = ShapedArray(np.shape(expected), dtype)
    var = Var(aval)
    closed = ClosedJaxpr(Jaxpr([var], [], [var], []), [value])
    result = mlir.lower_jaxpr_to_module(closed, module_name="c", platforms=("cpu",))
    (out,) = run_module(result.module)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, expected)


def test_ir_constant_canonicalizes_python_scalars():
    with mlir.make_ir_context(), ir.Location.unknown():
        assert str(mlir.ir_constant(1.5).type) == "tensor<f32>"
        assert str(mlir.ir_constant(2).type) == "tensor<i32>"
        assert str(mlir.ir_constant(True).type) == "tensor<i1>"
        assert str(mlir.ir_constant(2, np.uint8).type) == "tensor<ui8>"
        assert str(mlir.ir_constant(np.ones((2, 2), np.float64)).type) == "tensor<2x2xf32>"


# ---------------------------------------------------------------------------
# Rule tables


def test_platform_rule_wins_over_default():
    p = Primitive("test_platform_specific")
    p.def_abstract_eval(_same)
    mlir.register_lowering(p, lambda ctx, x: [hlo.sine(x)])
    mlir.register_lowering(p, lambda ctx, x: [hlo.cosine(x)], platform="cpu")
    mlir.register_lowering(p, lambda ctx, x: [hlo.tanh(x)], platform="gpu")
    a = ShapedArray((2,), np.float32)
    texts = {
        plat: mlir.module_to_string(lower(lambda x: [p.bind(x)], a, platforms=(plat,)).module)
        for plat in ("cpu", "tpu", "cuda", "rocm")
    }
    assert "stablehlo.cosine" in texts["cpu"] and "stablehlo.sine" not in texts["cpu"]
    assert "stablehlo.sine" in texts["tpu"]
    assert "stablehlo.tanh" in texts["cuda"] and "stablehlo.tanh" in texts["rocm"]
    assert p in mlir.lowering_rules("cpu") and p in mlir.lowering_rules()


def test_rule_context_fields():
    seen = []

    def rule(ctx, x, *, k):
        seen.append(ctx)
        return [x]

    p = _prim("test_ctx_fields", rule)
    a = ShapedArray((2,), np.float32)
    lower(lambda x: [p.bind(x, k=3)], a)
    (ctx,) = seen
    assert ctx.primitive is p
    assert ctx.avals_in == [a] and ctx.avals_out == [a]
    assert ctx.platform == "cpu"
    assert ctx.dim_var_values == {}
    assert ctx.module_context.platforms == ("cpu",)
    assert ctx.module_context.axis_context is None
    assert ctx.source_info.frame.file_name == __file__
    assert ctx.replace(platform="tpu").platform == "tpu"


def test_missing_rule_names_primitive_platform_and_line():
    p = Primitive("test_no_lowering")
    p.def_abstract_eval(_same)
    closed = trace_to_jaxpr(lambda x: [p.bind(x)], [ShapedArray((), np.float32)])
    line = closed.jaxpr.eqns[0].source_info.frame.line
    with pytest.raises(NotImplementedError) as info:
        mlir.lower_jaxpr_to_module(closed, module_name="m", platforms=("cpu",))
    msg = str(info.value)
    assert "test_no_lowering" in msg and "'cpu'" in msg
    assert f"test_mlir.py:{line}" in msg


def test_rule_errors_get_a_note_with_the_source_line():
    def bad_rule(ctx, x):
        raise TypeError("boom")

    p = _prim("test_bad_rule", bad_rule)
    with pytest.raises(TypeError, match="boom") as info:
        lower(lambda x: [p.bind(x)], ShapedArray((), np.float32))
    assert any("test_bad_rule" in n and "test_mlir.py:" in n for n in info.value.__notes__)


def test_wrong_number_of_rule_outputs():
    p = _prim("test_two_outs", lambda ctx, x: [x, x])
    with pytest.raises(ValueError, match="returned 2 values for 1 outputs"):
        lower(lambda x: [p.bind(x)], ShapedArray((), np.float32))


# ---------------------------------------------------------------------------
# Sub-jaxprs


call_p = Primitive("test_call")
call_p.multiple_results = True
call_p.def_abstract_eval(lambda *avals, jaxpr, name: jaxpr.out_avals)
mlir.register_lowering(
    call_p, lambda ctx, *args, jaxpr, name: mlir.call_jaxpr(ctx, name, jaxpr, args)
)


def test_call_jaxpr_lowers_each_subjaxpr_once():
    a = ShapedArray((3,), np.float32)
    inner = trace_to_jaxpr(lambda x: [sin_p.bind(mul_p.bind(x, x))], [a])
    other = trace_to_jaxpr(lambda x: [add_p.bind(x, np.ones(3, np.float32))], [a])

    def f(x):
        (y,) = call_p.bind(x, jaxpr=inner, name="inner")
        (z,) = call_p.bind(y, jaxpr=inner, name="inner")
        (w,) = call_p.bind(z, jaxpr=other, name="inner")  # same name, other jaxpr
        return [w]

    result = lower(f, a)
    text = mlir.module_to_string(result.module)
    assert text.count("func.func private @inner(") == 1
    assert text.count("call @inner(") == 2
    assert text.count("func.func private @inner_0(") == 1  # renamed, not merged
    x = np.array([0.5, 1.0, -2.0], np.float32)
    (out,) = run_module(result.module, x)
    y = np.sin(x * x)
    np.testing.assert_allclose(out, np.sin(y * y) + 1, rtol=1e-6)


def test_jaxpr_subcomp_inlines():
    a = ShapedArray((3,), np.float32)
    inner = trace_to_jaxpr(lambda x: [sin_p.bind(x)], [a])
    p = _prim(
        "test_inline_call",
        lambda ctx, x: mlir.jaxpr_subcomp(
            ctx.module_context, inner.jaxpr, inner.consts, [x], ctx.dim_var_values
        ),
    )
    text = mlir.module_to_string(lower(lambda x: [p.bind(x)], a).module)
    assert "func.func private" not in text and "stablehlo.sine" in text


def test_lower_fun():
    def square_sin(x):
        return sin_p.bind(mul_p.bind(x, x))

    p = _prim("test_lower_fun", mlir.lower_fun(square_sin, multiple_results=False))
    q = _prim(
        "test_lower_fun_multi",
        mlir.lower_fun(lambda x, y: [add_p.bind(x, y), mul_p.bind(x, y)]),
        lambda x, y: [x, x],
        multiple_results=True,
    )

    def f(x):
        s, m = q.bind(x, x)
        return [p.bind(x), s, m]

    result = lower(f, ShapedArray((2,), np.float32))
    line = f.__code__.co_firstlineno + 2  # the line binding p
    text = result.module.operation.get_asm(enable_debug_info=True)
    assert f'test_mlir.py":{line}:' in text  # inner ops carry the outer equation's line
    x = np.array([0.5, 2.0], np.float32)
    out = run_module(result.module, x)
    np.testing.assert_allclose(out[0], np.sin(x * x), rtol=1e-6)
    np.testing.assert_allclose(out[1], x + x)
    np.testing.assert_allclose(out[2], x * x)


# ---------------------------------------------------------------------------
# Locations, attributes


def test_ops_carry_the_users_file_and_line():
    def f(x):
        y = sin_p.bind(x)
        return [mul_p.bind(y, y)]

    result = lower(f, ShapedArray((2,), np.float32))
    text = mlir.module_to_string(result.module, enable_debug_info=True)
    first = f.__code__.co_firstlineno
    assert f'"{__file__}":{first + 1}:0' in text
    assert f'"{__file__}":{first + 2}:0' in text
    assert 'loc("test_sin"' in text and 'loc("test_mul"' in text
    assert "loc(" not in mlir.module_to_string(result.module)


def test_donation_result_info_arg_info_and_sharding_attrs():
    a = ShapedArray((2,), np.float32)
    b = ShapedArray((3,), np.int32)
    result = lower(
        lambda x, y, z: [sin_p.bind(x), x],
        a,
        b,
        a,
        donated_args=[True, True, True],
        arg_names=["x", "y", None],
        result_names=["out[0]", None],
        arg_shardings=[xla_client.HloSharding.replicate(), None, None],
    )
    main = result.module.body.operations[0]
    arg_attrs = [str(d) for d in main.arg_attrs]
    assert "tf.aliasing_output = 0 : i32" in arg_attrs[0]
    assert "jax.buffer_donor = true" in arg_attrs[1]  # no output of its type
    assert "tf.aliasing_output = 1 : i32" in arg_attrs[2]
    assert 'jax.arg_info = "x"' in arg_attrs[0] and "arg_info" not in arg_attrs[2]
    assert 'mhlo.sharding = "{replicated}"' in arg_attrs[0]
    res_attrs = [str(d) for d in main.result_attrs]
    assert 'jax.result_info = "out[0]"' in res_attrs[0]
    assert 'jax.result_info = "result[1]"' in res_attrs[1]
    # The aliased module still compiles.
    compile_module(result.module)


# ---------------------------------------------------------------------------
# Conversions and comparisons


def test_convert_and_compare_helpers():
    f32 = ShapedArray((3,), np.float32)
    c64 = ShapedArray((3,), np.complex64)

    def to_bool(ctx, x):
        return [mlir.convert_hlo(ctx, x, ctx.avals_in[0], ctx.avals_out[0])]

    to_bool_p = _prim("test_to_bool", to_bool, lambda x: x.update(dtype=np.bool_))
    to_f32_p = _prim("test_to_f32", to_bool, lambda x: x.update(dtype=np.float32))
    to_i32_p = _prim("test_to_i32", to_bool, lambda x: x.update(dtype=np.int32))
    to_u32_p = _prim("test_to_u32", to_bool, lambda x: x.update(dtype=np.uint32))
    lt_p = _prim(
        "test_lt",
        lambda ctx, x, y: [mlir.compare_hlo(x, y, "LT")],
        lambda x, y: x.update(dtype=np.bool_),
    )

    def f(x, z, u):
        return [
            to_bool_p.bind(x),
            to_f32_p.bind(z),
            to_i32_p.bind(to_bool_p.bind(x)),
            lt_p.bind(x, to_f32_p.bind(z)),
            lt_p.bind(u, to_u32_p.bind(x)),  # unsigned comparison
        ]

    u32 = ShapedArray((3,), np.uint32)
    result = lower(f, f32, c64, u32)
    assert result.module.operation.verify()
    x = np.array([0.0, 0.5, 2.0], np.float32)
    z = np.array([1 + 2j, -1j, 3], np.complex64)
    u = np.array([0, 5, 1], np.uint32)
    out = run_module(result.module, x, z, u)
    np.testing.assert_array_equal(out[0], x != 0)
    np.testing.assert_array_equal(out[1], z.real)
    np.testing.assert_array_equal(out[2], (x != 0).astype(np.int32))
    np.testing.assert_array_equal(out[3], x < z.real)
    np.testing.assert_array_equal(out[4], u < x.astype(np.uint32))


_CONVERSIONS = [
    (np.complex64, np.bool_),
    (np.int32, np.complex64),
    (np.bool_, np.complex64),
    (np.float32, np.uint8),
    (np.complex64, np.complex128),
    (np.complex64, np.int32),
    (np.float32, ml_dtypes.bfloat16),
    (np.bool_, np.float32),
    (np.int32, np.bool_),
    (np.uint8, np.bool_),
    (np.float32, np.float32),
]
_CONVERSION_INPUTS = {
    np.complex64: np.array([0, 1 + 2j, -1j], np.complex64),
    np.int32: np.array([0, -3, 7], np.int32),
    np.bool_: np.array([True, False, True]),
    np.float32: np.array([0.0, 2.5, 200.0], np.float32),
    np.uint8: np.array([0, 3, 255], np.uint8),
}


def test_convert_hlo_follows_numpy_casts():
    def convert(ctx, x):
        return [mlir.convert_hlo(ctx, x, ctx.avals_in[0], ctx.avals_out[0])]

    prims = [
        _prim(f"test_convert_{i}", convert, lambda x, d=dst: x.update(dtype=d))
        for i, (_, dst) in enumerate(_CONVERSIONS)
    ]
    avals = [ShapedArray((3,), src) for src, _ in _CONVERSIONS]
    result = lower(lambda *xs: [p.bind(x) for p, x in zip(prims, xs)], *avals)
    inputs = [_CONVERSION_INPUTS[src] for src, _ in _CONVERSIONS]
    outs = run_module(result.module, *inputs)
    for (src, dst), x, out in zip(_CONVERSIONS, inputs, outs):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            expected = x.astype(dst)
        assert out.dtype == expected.dtype, (src, dst)
        np.testing.assert_array_equal(out.astype(np.complex128), expected.astype(np.complex128))


def test_module_without_outputs_or_inputs():
    result = lower(lambda: [])
    text = mlir.module_to_string(result.module)
    assert "func.func public @main() {" in text
    assert run_module(result.module) == []


# ---------------------------------------------------------------------------
# Dimension variables


def _specialize(module: ir.Module, dim_values: dict[str, int], arg_shapes) -> ir.Module:
    """Wraps a shape-polymorphic module into a static `main`, then refines its shapes.

    The polymorphic `main` becomes the private `@_poly`; the new `main` takes
    static arguments, passes the dimension values as constants and converts the
    arguments to the polymorphic types.
    """
    text = mlir.module_to_string(module)
    with mlir.make_ir_context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        poly = m.body.operations[0]
        poly.attributes["sym_name"] = ir.StringAttr.get("_poly")
        poly.attributes["sym_visibility"] = ir.StringAttr.get("private")
        poly_type = ir.FunctionType(ir.TypeAttr(poly.attributes["function_type"]).value)
        n_dims = len(dim_values)
        dyn_in = list(poly_type.inputs)[n_dims:]
        static_in = [
            ir.RankedTensorType.get(list(s), ir.RankedTensorType(t).element_type)
            for s, t in zip(arg_shapes, dyn_in)
        ]
        with ir.InsertionPoint.at_block_begin(m.body):
            main = func.FuncOp("main", ir.FunctionType.get(static_in, list(poly_type.results)))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        block = main.add_entry_block()
        with ir.InsertionPoint(block):
            dims = [mlir.ir_constant(np.int32(dim_values[k])) for k in sorted(dim_values)]
            args = [hlo.convert(t, a) for t, a in zip(dyn_in, block.arguments)]
            call = func.CallOp(list(poly_type.results), "_poly", [*dims, *args])
            func.ReturnOp(list(call.results))
        refined = _jax.mlir.refine_polymorphic_shapes(mlir.module_to_bytecode(m))
        return ir.Module.parse(refined)


def test_dimension_variables_become_leading_i32_args():
    a, b = symbolic_dim("a"), symbolic_dim("b")
    result = lower(
        lambda x, y: [sin_p.bind(x), y],
        ShapedArray((b, 3), np.float32),
        ShapedArray((a, b), np.int32),
    )
    assert result.dim_vars == ("a", "b")
    text = mlir.module_to_string(result.module)
    assert (
        '@main(%arg0: tensor<i32> {jax.global_constant = "a"}, '
        '%arg1: tensor<i32> {jax.global_constant = "b"}, '
        "%arg2: tensor<?x3xf32>, %arg3: tensor<?x?xi32>)"
    ) in text


def test_dynamic_shapes_run_after_refinement():
    b = symbolic_dim("b")

    def f(x):
        y = bcast_p.bind(x, shape=(2, b, 3))  # dynamic_broadcast_in_dim
        z = reshape_p.bind(y, shape=(2 * b * 3,))  # dynamic_reshape
        i = iota_p.bind(shape=(b, 3), dtype=np.int32, dimension=0)  # dynamic_iota
        k = full_p.bind(shape=(b + 1,), dtype=np.float32, value=2.5)
        (w,) = call_p.bind(y, jaxpr=inner, name="inner")  # dims passed to private funcs
        return [w, z, i, k]

    inner = trace_to_jaxpr(
        lambda y: [sin_p.bind(reshape_p.bind(y, shape=(2, b, 3)))],
        [ShapedArray((2, b, 3), np.float32)],
    )

    result = lower(f, ShapedArray((b, 3), np.float32))
    text = mlir.module_to_string(result.module)
    for op in ("dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota"):
        assert f"stablehlo.{op}" in text
    assert (
        'func.func private @inner(%arg0: tensor<i32> {jax.global_constant = "b"}, '
        "%arg1: tensor<2x?x3xf32>) -> tensor<2x?x3xf32>"
    ) in text
    for n in (1, 4):
        x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
        static = _specialize(result.module, {"b": n}, [(n, 3)])
        assert "?" not in mlir.module_to_string(static)
        y, z, i, k = run_module(static, x)
        np.testing.assert_allclose(y, np.sin(np.broadcast_to(x, (2, n, 3))), rtol=1e-6)
        np.testing.assert_array_equal(z, np.broadcast_to(x, (2, n, 3)).reshape(-1))
        np.testing.assert_array_equal(i, np.broadcast_to(np.arange(n)[:, None], (n, 3)))
        np.testing.assert_array_equal(k, np.full(n + 1, 2.5, np.float32))


def test_dim_expressions_are_computed_with_floor_semantics():
    a, b = symbolic_dim("a"), symbolic_dim("b")
    exprs = [
        b,
        2 * b + 3,
        a * b - 7,
        b * b,
        (b + 5) // 2,
        b % 3,
        (1 - 2 * b) // 3,  # negative dividend: floor, not truncation
        (1 - 2 * b) % 3,
        dim_max(b, 4),
        dim_min(a, b),
        3 - a,
    ]
    result = lower(
        lambda x, y: [dim_value_p.bind(dim=e) for e in exprs],
        ShapedArray((a,), np.float32),
        ShapedArray((b,), np.float32),
    )
    for av, bv in ((2, 1), (3, 7)):
        static = _specialize(result.module, {"a": av, "b": bv}, [(av,), (bv,)])
        out = run_module(static, np.zeros(av, np.float32), np.zeros(bv, np.float32))
        expected = [e.evaluate({"a": av, "b": bv}) if not isinstance(e, int) else e for e in exprs]
        assert [int(o) for o in out] == expected


def test_eval_dynamic_shape_and_shape_tensor():
    b = symbolic_dim("b")
    seen = {}

    def rule(ctx, x):
        dims = mlir.eval_dynamic_shape(ctx, (2, b, 3 * b))
        # Read the values here: they die with the module.
        seen["dims"] = [d if isinstance(d, int) else str(d.type) for d in dims]
        seen["static"] = str(mlir.shape_tensor(ctx, (2, 5)).type)
        seen["dynamic"] = str(mlir.shape_tensor(ctx, (2, b)).type)
        return [x]

    p = _prim("test_shapes", rule)
    lower(lambda x: [p.bind(x)], ShapedArray((b,), np.float32))
    assert seen["dims"] == [2, "tensor<i32>", "tensor<i32>"]
    assert seen["static"] == seen["dynamic"] == "tensor<2xi32>"


def test_context_is_renewed_after_much_constant_data(monkeypatch):
    monkeypatch.setattr(mlir, "_CONTEXT_CONSTANT_BYTES_LIMIT", 1000)
    before = mlir.make_ir_context()
    big = np.arange(1000, dtype=np.float32)
    var = Var(ShapedArray(big.shape, big.dtype))
    closed = ClosedJaxpr(Jaxpr([var], [], [var], []), [big])
    first = mlir.lower_jaxpr_to_module(closed, module_name="a", platforms=("cpu",))
    after = mlir.make_ir_context()
    assert after is not before
    second = mlir.lower_jaxpr_to_module(closed, module_name="b", platforms=("cpu",))
    # Both modules stay usable, each in its own context.
    np.testing.assert_array_equal(run_module(first.module)[0], big)
    np.testing.assert_array_equal(run_module(second.module)[0], big)


# ---------------------------------------------------------------------------
# Threads


def test_lowering_from_many_threads():
    a = ShapedArray((4,), np.float32)
    texts, errors = [], []

    def work():
        try:
            for _ in range(5):
                r = lower(lambda x: [sin_p.bind(add_p.bind(x, x))], a)
                texts.append(mlir.module_to_string(r.module))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(texts) == 20 and len(set(texts)) == 1
