"""jnp's host-side, bit and signal utilities against NumPy: `save`/`savez`/`load`,
`array_repr`/`array_str` and the print options, `packbits`/`unpackbits`,
`fill_diagonal`, `iterable`, `from_dlpack`, the window functions and `unwrap`."""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.array import Array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

bf16 = np.dtype(ml_dtypes.bfloat16)


def _equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------
# Files and printing


@pytest.mark.parametrize("dtype", [np.float32, bf16, np.int32, np.bool_, np.complex64], ids=str)
def test_save_load_round_trip(dtype):
    x = jnp.asarray(np.arange(6).reshape(2, 3).astype(dtype))
    f = io.BytesIO()
    jnp.save(f, x)
    f.seek(0)
    y = jnp.load(f)
    assert isinstance(y, Array)
    _equal(y, np.asarray(x))


def test_savez_and_load_archive(tmp_path):
    path = tmp_path / "arrays.npz"
    jnp.savez(path, jnp.arange(3), weights=jnp.ones((2, 2)))
    archive = jnp.load(path)
    _equal(archive["arr_0"], np.arange(3, dtype=np.int32))
    _equal(archive["weights"], np.ones((2, 2), np.float32))
    with pytest.raises(ConcretizationTypeError, match="jnp.save needs concrete arrays"):
        jit(lambda x: jnp.save(io.BytesIO(), x))(np.ones(2))


def test_array_repr_and_str():
    x = jnp.array([1.0, 2.0, 3.0]) / 3
    assert jnp.array_repr(x) == repr(x)
    assert jnp.array_repr(x, precision=2) == "Array([0.33, 0.67, 1.  ], dtype=float32)"
    assert jnp.array_str(x, precision=3) == np.array_str(np.asarray(x), precision=3)
    assert jnp.array_str(jnp.arange(3)) == "[0 1 2]"
    with jnp.printoptions(precision=1):
        assert jnp.get_printoptions()["precision"] == 1
        assert repr(x) == "Array([0.3, 0.7, 1. ], dtype=float32)"
    assert jnp.get_printoptions()["precision"] == 8
    assert jnp.set_printoptions is np.set_printoptions


# ---------------------------------------------------------------------------
# Bits


@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_packbits_unpackbits_match_numpy(axis, bitorder):
    bits = np.random.default_rng(0).integers(0, 3, (3, 13)).astype(np.int32)  # 2 counts as 1
    packed = jnp.packbits(bits, axis=axis, bitorder=bitorder)
    want = np.packbits(bits, axis=axis, bitorder=bitorder)
    _equal(packed, want)
    for count in (None, 0, 5, -3, 40):
        _equal(
            jnp.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
            np.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
        )


def test_packbits_dtypes_shapes_and_errors():
    _equal(jnp.packbits(np.array([True, False, True])), np.array([160], np.uint8))
    _equal(jnp.packbits(np.zeros((2, 0), bool), axis=1), np.zeros((2, 0), np.uint8))
    _equal(jnp.unpackbits(np.uint8(27)), np.unpackbits(np.array([27], np.uint8)))
    _equal(jnp.unpackbits(np.zeros(0, np.uint8)), np.zeros(0, np.uint8))
    f = jit(lambda b: jnp.unpackbits(jnp.packbits(b, axis=1), axis=1, count=11))
    bits = np.random.default_rng(1).integers(0, 2, (2, 11)).astype(np.uint8)
    _equal(f(bits), bits)
    _equal(vmap(jnp.packbits)(bits), np.packbits(bits, axis=1))
    with pytest.raises(TypeError, match="integer or boolean dtype"):
        jnp.packbits(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="dtype uint8"):
        jnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="bitorder must be 'big' or 'little'"):
        jnp.packbits(np.ones(3, np.int32), bitorder="middle")
    with pytest.raises(ValueError, match="exceeds the 8 bits"):
        jnp.unpackbits(np.uint8(1), count=-9)


# ---------------------------------------------------------------------------
# fill_diagonal, iterable, from_dlpack


@pytest.mark.parametrize("shape", [(3, 3), (5, 3), (2, 4), (3, 3, 3), (0, 2)], ids=str)
@pytest.mark.parametrize("val", [7, [1, 2], [1, 2, 3, 4, 5, 6, 7]], ids=str)
def test_fill_diagonal_matches_numpy(shape, val):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = a.copy()
    np.fill_diagonal(want, val)
    _equal(jnp.fill_diagonal(a, np.asarray(val, np.float32), inplace=False), want)


def test_fill_diagonal_jit_and_errors():
    f = jit(lambda a, v: jnp.fill_diagonal(a, v, inplace=False))
    want = np.zeros((3, 3), np.int32)
    np.fill_diagonal(want, [4, 5, 6])
    _equal(f(np.zeros((3, 3), np.int32), np.array([4, 5, 6], np.int32)), want)
    with pytest.raises(ValueError, match="Pass inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1)
    with pytest.raises(NotImplementedError, match="wrap=True"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1, wrap=True, inplace=False)
    with pytest.raises(ValueError, match="at least 2-d"):
        jnp.fill_diagonal(np.zeros(3), 1, inplace=False)
    with pytest.raises(ValueError, match="equal length"):
        jnp.fill_diagonal(np.zeros((2, 2, 3)), 1, inplace=False)


def test_iterable_and_from_dlpack():
    assert jnp.iterable(jnp.arange(3)) and jnp.iterable([1]) and jnp.iterable("ab")
    assert not jnp.iterable(jnp.float32(1)) and not jnp.iterable(3)
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = jnp.from_dlpack(source)
    assert isinstance(x, Array)
    _equal(x, source)
    _equal(jnp.from_dlpack(source, copy=True), source)
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])


# ---------------------------------------------------------------------------
# Windows and unwrap


@pytest.mark.parametrize("M", [-1, 0, 1, 2, 7, 16])
def test_windows_match_numpy(M):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        got = getattr(jnp, name)(M)
        assert got.dtype == np.float32, name
        np.testing.assert_allclose(got, getattr(np, name)(M), atol=1e-6, err_msg=name)
    for beta in (0.0, 1.5, 14.0):
        np.testing.assert_allclose(jnp.kaiser(M, beta), np.kaiser(M, beta), rtol=1e-5, atol=1e-6)


def test_kaiser_traced_beta_and_static_length():
    f = jit(lambda beta: jnp.kaiser(6, beta))
    np.testing.assert_allclose(f(np.float32(3.0)), np.kaiser(6, 3.0), rtol=1e-5)
    check_grads(lambda b: jnp.kaiser(5, b), (np.float32(2.0),), order=2)
    with pytest.raises(ConcretizationTypeError, match="'M' argument of jnp.hamming"):
        jit(lambda m: jnp.hamming(m))(4)


def test_unwrap_matches_numpy():
    rng = np.random.default_rng(0)
    phase = np.angle(np.exp(1j * np.cumsum(rng.normal(size=(3, 25)) * 2, axis=1)))
    x = phase.astype(np.float32)
    f = jit(lambda x: (jnp.unwrap(x), jnp.unwrap(x.T, axis=0), jnp.unwrap(x, discont=4.0)))
    got = f(x)
    np.testing.assert_allclose(got[0], np.unwrap(phase), atol=1e-4)
    np.testing.assert_allclose(got[1], np.unwrap(phase.T, axis=0), atol=1e-4)
    np.testing.assert_allclose(got[2], np.unwrap(phase, discont=4.0), atol=1e-4)
    steps = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 3], np.float32)
    np.testing.assert_allclose(jnp.unwrap(steps, period=6), np.unwrap(steps, period=6))
    ints = jnp.unwrap(np.array([0, 3, 6, 9, 1]), period=4)
    assert ints.dtype == np.float32  # JAX: inexact
    np.testing.assert_allclose(ints, np.unwrap(np.array([0, 3, 6, 9, 1]), period=4))
    _equal(jnp.unwrap(np.zeros((2, 1), np.float32)), np.zeros((2, 1), np.float32))
    np.testing.assert_allclose(vmap(jnp.unwrap)(x), np.unwrap(phase), atol=1e-4)
    with pytest.raises(ValueError, match="does not support complex"):
        jnp.unwrap(np.ones(3, np.complex64))
