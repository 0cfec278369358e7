"""Complex-number primitives (`complex`, `real`, `imag`, `conj`) and the `.real`,
`.imag`, `.conj()` of arrays and tracers.

Types and errors are checked by tracing (no compilation). Values are checked
against NumPy eagerly (one cached executable per primitive and input type) and
under one `jit` that runs every operation at once.
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest
from _jnp_helpers import flat_jaxpr as _jaxpr
from _jnp_helpers import out_aval as _out
from _jnp_helpers import sds as _sds

from polyjax_core import config, make_jaxpr, symbolic_dim
from polyjax_interpreters import mlir
from polyjax_interpreters.array import Array
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax

f16, f32, f64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
c64, c128 = np.dtype(np.complex64), np.dtype(np.complex128)
bf16, i32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.int32)

re_part = np.array([1.5, -2.0, 0.0, 3.25], np.float32)
im_part = np.array([0.5, 4.0, -1.0, -0.0], np.float32)
z4 = (re_part + 1j * im_part).astype(np.complex64)


# ---------------------------------------------------------------------------
# Printed jaxprs and result types


JAXPRS = [
    (lax.complex, (_sds(f32), _sds(f32)), "a:f32[3] b:f32[3]. let c:c64[3] = complex a b"),
    (lambda x: lax.complex(x, 0.0), (_sds(f32),), "a:f32[3]. let b:c64[3] = complex a 0.0:f32[]"),
    (lax.real, (_sds(c64),), "a:c64[3]. let b:f32[3] = real a"),
    (lax.imag, (_sds(c64),), "a:c64[3]. let b:f32[3] = imag a"),
    (lax.conj, (_sds(c64),), "a:c64[3]. let b:c64[3] = conj[input_dtype=complex64] a"),
    # lax.conj of a real array is complex (jnp's .conj() is not, below).
    (lax.conj, (_sds(f32),), "a:f32[3]. let b:c64[3] = conj[input_dtype=float32] a"),
    (lambda z: z.real, (_sds(c64),), "a:c64[3]. let b:f32[3] = real a in (b,)"),
    (lambda z: z.imag, (_sds(c64),), "a:c64[3]. let b:f32[3] = imag a in (b,)"),
    (lambda z: z.conj(), (_sds(c64),), "a:c64[3]. let b:c64[3] = conj[input_dtype=complex64] a"),
    (lambda z: z.conjugate(), (_sds(c64),), "b:c64[3] = conj[input_dtype=complex64] a"),
    (lambda z: abs(z), (_sds(c64),), "a:c64[3]. let b:f32[3] = abs a"),
    # Real arrays: .real and .conj() are the array itself, .imag zeros of its dtype.
    (lambda x: (x.real, x.conj()), (_sds(f32),), "{ lambda ; a:f32[3]. let in (a, a) }"),
    (lambda x: x.imag, (_sds(i32),),
     "b:i32[3] = broadcast_in_dim 0:i32[]"),
]  # fmt: skip


@pytest.mark.parametrize("case", JAXPRS, ids=lambda c: c[-1].split(". let ")[-1][:32])
def test_printed_jaxpr(case):
    fun, args, expected = case
    assert expected in _jaxpr(fun, *args)


@pytest.mark.parametrize(
    "fun, args, dtype, weak",
    [
        (lax.complex, (_sds(f32, weak=True), _sds(f32, weak=True)), c64, True),
        (lax.complex, (_sds(f32, weak=True), _sds(f32)), c64, False),
        (lambda x: lax.complex(x, 1.0), (_sds(f32),), c64, False),
        (lax.real, (_sds(c64, weak=True),), f32, True),
        (lax.imag, (_sds(c64),), f32, False),
        (lax.conj, (_sds(f32, weak=True),), c64, True),
        (lambda: lax.real(1 + 2j), (), f32, True),
        (lambda x: x.imag, (_sds(f32, weak=True),), f32, True),
    ],
)
def test_result_types(fun, args, dtype, weak):
    out = _out(fun, *args)
    assert (out.dtype, out.weak_type) == (dtype, weak)


def test_64_bit_pairs():
    with config.enable_x64(True):
        assert _out(lax.complex, _sds(f64), _sds(f64)).dtype == c128
        assert _out(lax.real, _sds(c128)).dtype == f64
        assert _out(lax.conj, _sds(f64)).dtype == c128
        assert _out(lambda z: z.imag, _sds(c128)).dtype == f64
        with pytest.raises(TypeError, match=re.escape("got float32, float64.")):
            make_jaxpr(lax.complex)(_sds(f32), _sds(f64))
        with pytest.raises(TypeError, match="lax.complex requires arguments to have the same"):
            lax.complex(np.float32(1), np.float64(2))
        _check(lax.conj(lax.complex(np.float64(1), np.float64(2))), np.complex128(1 - 2j))


def test_broadcasting_and_symbolic_shapes():
    assert _out(lax.complex, _sds(f32, (2, 1)), _sds(f32, (1, 3))).shape == (2, 3)
    assert _out(lax.complex, _sds(f32, (2, 3)), _sds(f32, ())).shape == (2, 3)
    b = symbolic_dim("b")
    out = _out(lambda x: lax.conj(lax.complex(x, 1.0)).real, _sds(f32, (b, 2)))
    assert (out.shape, out.dtype) == ((b, 2), f32)


# ---------------------------------------------------------------------------
# Errors

ERRORS = [
    (lax.complex, (_sds(f16), _sds(f16)),
     "complex does not accept dtype float16 at position 0. Accepted dtypes at position 0 are "
     "subtypes of float32, float64."),
    (lax.complex, (_sds(f32), _sds(bf16)),
     "complex does not accept dtype bfloat16 at position 1."),
    (lax.complex, (_sds(c64), _sds(c64)), "complex does not accept dtype complex64 at position 0."),
    (lax.complex, (_sds(i32), _sds(i32)), "complex does not accept dtype int32 at position 0."),
    (lax.complex, (_sds(f32, (2,)), _sds(f32, (3,))),
     "complex got incompatible shapes for broadcasting: (2,), (3,)."),
    (lax.real, (_sds(f32),),
     "real does not accept dtype float32. Accepted dtypes are subtypes of complexfloating."),
    (lax.imag, (_sds(i32),), "imag does not accept dtype int32."),
    (lax.conj, (_sds(i32),),
     "conj does not accept dtype int32. Accepted dtypes are subtypes of float32, float64, "
     "complexfloating."),
    (lax.conj, (_sds(bf16),), "conj does not accept dtype bfloat16."),
]  # fmt: skip


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[-1][:40])
def test_errors(case):
    fun, args, message = case
    with pytest.raises(TypeError, match=re.escape(message)):
        make_jaxpr(fun)(*args)


# ---------------------------------------------------------------------------
# Lowering


def test_lowering_uses_stablehlo_complex_ops():
    closed = make_jaxpr(lambda x, y: lax.conj(lax.complex(x, y)).imag)(re_part, im_part)
    text = mlir.module_to_string(
        mlir.lower_jaxpr_to_module(closed, module_name="t", platforms=["cpu"]).module
    )
    # complex builds the number; conj takes it apart and rebuilds it with -imag.
    assert text.count("stablehlo.complex") == 2
    assert "stablehlo.real" in text and "stablehlo.negate" in text
    assert text.count("stablehlo.imag") == 2


# ---------------------------------------------------------------------------
# Values against NumPy


def _check(got, want):
    assert isinstance(got, Array)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_eager_values():
    _check(lax.complex(re_part, im_part), z4)
    _check(lax.real(z4), z4.real)
    _check(lax.imag(z4), z4.imag)
    _check(lax.conj(z4), np.conj(z4))
    _check(lax.conj(re_part), re_part.astype(np.complex64))
    np.testing.assert_allclose(np.asarray(lax.abs(z4)), np.abs(z4), rtol=1e-6)
    assert lax.abs(z4).dtype == f32


def test_eager_methods_on_arrays():
    z = lax.complex(re_part, im_part)  # a device Array
    _check(z.real, z4.real)
    _check(z.imag, z4.imag)
    _check(z.conj(), np.conj(z4))
    _check(z.conjugate(), np.conj(z4))
    x = lax.add(re_part, 0.0)
    assert x.real is x and x.conj() is x
    _check(x.imag, np.zeros(4, np.float32))


def test_values_under_jit():
    def f(x, y, z):
        w = lax.complex(x, y)
        return (
            w,
            lax.real(z),
            lax.imag(z),
            lax.conj(z),
            lax.conj(x),
            abs(z),
            z.real,
            z.imag,
            z.conj(),
            x.imag,
            lax.complex(lax.reshape(x, (4, 1)), 2.0),  # a broadcast scalar part
            (w * z).conj().imag,
        )

    out = jit(f)(re_part, im_part, z4)
    want = (
        z4,
        z4.real,
        z4.imag,
        np.conj(z4),
        re_part.astype(np.complex64),
        np.abs(z4),
        z4.real,
        z4.imag,
        np.conj(z4),
        np.zeros(4, np.float32),
        (re_part + 2j).astype(np.complex64).reshape(4, 1),
        np.conj(z4 * z4).imag,
    )
    assert len(out) == len(want)
    for got, expected in zip(out, want):
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)


def test_weak_complex_scalar_parts():
    # A Python complex is a weak c64: its parts are weak f32.
    out = lax.real(2 - 3j), lax.imag(2 - 3j)
    assert [(o.dtype, o.weak_type, o.item()) for o in out] == [(f32, True, 2.0), (f32, True, -3.0)]


def test_astype_complex_to_real_keeps_the_real_part_and_warns():
    from polyjax_interpreters.array import device_put

    z = device_put(np.array([1.5 + 2j, -3.25 - 1j], np.complex64))
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary part"):
        out = z.astype(np.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), [1.5, -3.25])
