"""jnp array creation: `array`/`asarray`, filled arrays, ranges, grids, matrices, index arrays.

NumPy is the oracle for values and shapes; dtypes are checked against JAX's
rules (int32/float32 defaults, weak types for Python scalars, list elements
promoted on JAX's lattice), which differ from NumPy's. Functions with a
differentiable input are checked with `check_grads`; `jit` is compared with
eager execution and `vmap` with a Python loop on a sample.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f16, f32, i8, i32, u8

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr, symbolic_dim
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.array import Array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

DTYPES = [f32, bf16, f16, i32, u8, boolean, c64]
SHAPES = [(), (0,), (3,), (2, 0), (2, 3)]


def _check(got, want, dtype=None, weak=None, tol=None):
    """`got` equals NumPy's `want` (close, for inexact types) with the given dtype/weak type."""
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if weak is not None:
        assert got.weak_type == weak
    got_np, want_np = np.asarray(got), np.asarray(want)
    assert got_np.shape == want_np.shape, (got_np.shape, want_np.shape)
    if tol is None:
        tol = {bf16: 2e-2, f16: 2e-3}.get(np.dtype(got_np.dtype), 1e-6)
    if got_np.dtype.kind in "fcV" or want_np.dtype.kind in "fc":
        np.testing.assert_allclose(
            got_np.astype(np.complex128 if got_np.dtype.kind == "c" else np.float64),
            want_np,
            rtol=tol,
            atol=tol,
        )
    else:
        np.testing.assert_array_equal(got_np, want_np)


def _out_type(fun, *args):
    (out,) = make_jaxpr(fun)(*args).out_avals
    return out


# ---------------------------------------------------------------------------
# array, asarray, copy


@pytest.mark.parametrize(
    "obj, dtype, weak",
    [
        (1, i32, True),
        (1.5, f32, True),
        (1j, c64, True),
        (True, boolean, False),
        (np.float64(1.5), f32, False),
        (np.int8(3), i8, False),
        ([1, 2], i32, False),
        ([1, 2.5], f32, False),
        ([True, 2], i32, False),
        ([np.int8(1), 2], i8, False),  # JAX's lattice: the weak 2 adapts (NumPy: int64)
        ([np.float16(1), 2.0], f16, False),
        ([[np.uint8(1)], [np.int8(2)]], np.dtype(np.int16), False),
        ([], f32, False),
        (np.arange(3, dtype=np.int64), i32, False),
        (np.zeros((2, 0), bf16), bf16, False),
    ],
    ids=repr,
)
def test_array_dtype_inference(obj, dtype, weak):
    out = jnp.array(obj)
    _check(out, np.asarray(obj).astype(dtype), dtype=dtype, weak=weak)
    assert jnp.asarray(obj).dtype == dtype


def test_array_explicit_dtype_is_strong_and_ndmin():
    _check(jnp.array(2, dtype=jnp.float32), np.float32(2), dtype=f32, weak=False)
    weak = jnp.asarray(3.0)
    assert weak.weak_type and jnp.asarray(weak).weak_type  # kept without a dtype
    assert not jnp.asarray(weak, dtype=np.float32).weak_type
    _check(jnp.array([1, 2], ndmin=3), np.array([1, 2], ndmin=3), dtype=i32)
    _check(jnp.array(np.float32(7), ndmin=2), np.full((1, 1), 7, np.float32))


def test_array_copy_semantics():
    x = jnp.arange(3)
    assert jnp.asarray(x) is x
    assert jnp.asarray(x, copy=False) is x
    y = jnp.array(x)
    z = jnp.copy(x)
    for c in (y, z, jnp.asarray(x, copy=True), x.copy()):
        assert c is not x
        assert c.unsafe_buffer_pointer() != x.unsafe_buffer_pointer()
        _check(c, np.arange(3), dtype=i32)
    x.delete()  # the copies keep their own buffers (as after donating x)
    _check(y, np.arange(3))


def test_array_of_lists_with_tracers():
    @jit
    def f(a, b):
        return jnp.array([[a, 1.5], [b, a * 2]]), jnp.array([a, np.float16(2)]), jnp.stack([a, b])

    nested, mixed, stacked = f(np.float32(1.0), np.float32(3.0))
    _check(nested, [[1.0, 1.5], [3.0, 2.0]], dtype=f32, weak=False)
    _check(mixed, [1.0, 2.0], dtype=f32)
    _check(stacked, [1.0, 3.0])
    out = _out_type(lambda a: jnp.array([a, 2]), ShapeDtypeStruct((), np.int8))
    assert out.dtype == i8 and not out.weak_type
    out = _out_type(lambda a: jnp.asarray([a, a]), ShapeDtypeStruct((2,), bf16))
    assert out.shape == (2, 2) and out.dtype == bf16
    with pytest.raises(ValueError, match="inhomogeneous"):
        jit(lambda a: jnp.array([a, [a, a]]))(np.float32(1))


def test_array_jax_array_protocol():
    class Wrapped:
        def __jax_array__(self):
            return jnp.arange(2)

    _check(jnp.asarray(Wrapped()), [0, 1], dtype=i32)
    _check(jnp.array([Wrapped(), Wrapped()]), [[0, 1], [0, 1]], dtype=i32)


@pytest.mark.parametrize("bad", ["abc", b"xy", {"a": 1}, None, {1, 2}, [object()]])
def test_array_rejects_non_numeric(bad):
    with pytest.raises(TypeError):
        jnp.array(bad)


def test_array_errors():
    with pytest.raises(OverflowError):
        jnp.array([2**40])
    with pytest.raises(OverflowError):
        jnp.array(2**40)
    with pytest.raises(NotImplementedError, match="order"):
        jnp.array([1], order="F")
    with pytest.raises(TypeError, match="copy requires ndarray"):
        jnp.copy([1, 2])


# ---------------------------------------------------------------------------
# zeros, ones, empty, full and their _like forms


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_filled(dtype, shape):
    for name, value in (("zeros", 0), ("ones", 1), ("empty", 0)):
        _check(getattr(jnp, name)(shape, dtype), np.full(shape, value, dtype), dtype=dtype)
    _check(jnp.full(shape, 2, dtype), np.full(shape, 2, dtype), dtype=dtype, weak=False)
    like = np.zeros(shape, dtype)
    _check(jnp.zeros_like(like), np.zeros(shape, dtype), dtype=dtype)
    _check(jnp.ones_like(like), np.ones(shape, dtype), dtype=dtype)
    _check(jnp.empty_like(like), np.zeros(shape, dtype), dtype=dtype)
    _check(jnp.full_like(like, 1), np.full(shape, 1, dtype), dtype=dtype, weak=False)


def test_filled_defaults_and_weak_types():
    _check(jnp.zeros(3), np.zeros(3), dtype=f32, weak=False)
    _check(jnp.ones((2,)), np.ones(2), dtype=f32, weak=False)
    _check(jnp.zeros(np.int64(2), int), np.zeros(2), dtype=i32)
    _check(jnp.full((2,), 7), [7, 7], dtype=i32, weak=True)  # a Python scalar stays weak
    _check(jnp.full((2,), 7.5), [7.5, 7.5], dtype=f32, weak=True)
    _check(jnp.full(2, np.float16(7)), [7, 7], dtype=f16, weak=False)
    weak = jnp.asarray(1.0)
    assert jnp.zeros_like(weak).weak_type and not jnp.zeros_like(weak, dtype=f32).weak_type
    _check(jnp.full_like(np.zeros(2, np.int32), 2.7), [2, 2], dtype=i32)
    _check(jnp.zeros_like(np.zeros(2, np.int32), shape=(3, 1)), np.zeros((3, 1)), dtype=i32)
    _check(jnp.ones_like(np.zeros(2), dtype=bool), [True, True], dtype=boolean)


def test_full_with_array_fill():
    _check(jnp.full((2, 3), np.arange(3)), np.full((2, 3), np.arange(3)), dtype=i32)
    _check(jnp.full((2, 3), np.arange(3), dtype=f16), np.full((2, 3), np.arange(3)), dtype=f16)
    _check(
        jnp.full_like(np.zeros((2, 3), np.float32), np.arange(3)),
        np.full_like(np.zeros((2, 3), np.float32), np.arange(3)),
        dtype=f32,
    )
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.full((2, 3), np.arange(2))


def test_filled_errors():
    with pytest.raises(TypeError, match="zeros shape"):
        jnp.zeros((2, -1))
    with pytest.raises(TypeError, match="zeros shape"):
        jnp.zeros((2.5,))
    with pytest.raises(TypeError, match="zeros_like requires ndarray"):
        jnp.zeros_like([1, 2])
    with pytest.raises(ConcretizationTypeError, match="ones shape"):
        jit(lambda n: jnp.ones(n))(3)
    with pytest.raises(ConcretizationTypeError, match="full shape"):
        jit(lambda n: jnp.full((2, n), 1.0))(3)


def test_filled_with_symbolic_shape():
    b = symbolic_dim("b")
    out = _out_type(lambda x: jnp.zeros((x.shape[0], 2)), ShapeDtypeStruct((b,), f32))
    assert out.shape == (b, 2) and out.dtype == f32
    out = _out_type(lambda x: jnp.ones_like(x, dtype=i32), ShapeDtypeStruct((b, 3), f32))
    assert out.shape == (b, 3) and out.dtype == i32


# ---------------------------------------------------------------------------
# arange


@pytest.mark.parametrize(
    "args, kwargs, dtype",
    [
        ((5,), {}, i32),
        ((5.0,), {}, f32),
        ((2.5,), {}, f32),
        ((-3,), {}, i32),
        ((np.int8(4),), {}, i8),
        ((1, 7), {}, i32),
        ((1, 7, 2), {}, i32),
        ((7, 1, -2), {}, i32),
        ((0, 1, 0.1), {}, f32),
        ((1, 3, 0.5), {}, f32),
        ((5,), {"dtype": f16}, f16),
        ((5,), {"dtype": bf16}, bf16),
        ((0, 10, 3), {"dtype": u8}, u8),
        ((np.float16(0), 3), {}, f16),
        ((3, 3), {}, i32),
    ],
    ids=str,
)
def test_arange(args, kwargs, dtype):
    out = jnp.arange(*args, **kwargs)
    np_kwargs = dict(kwargs)
    np_kwargs.setdefault("dtype", dtype)
    want = np.arange(*args, **{**np_kwargs, "dtype": np.float32 if dtype == bf16 else dtype})
    _check(out, want, dtype=dtype, weak=False)


def test_arange_needs_static_bounds():
    with pytest.raises(ConcretizationTypeError, match="jnp.arange argument 'stop'"):
        jit(lambda n: jnp.arange(n))(3)
    with pytest.raises(ConcretizationTypeError, match="jnp.arange argument 'start'"):
        jit(lambda n: jnp.arange(n, 5))(3)
    with pytest.raises(ConcretizationTypeError, match="jnp.arange argument 'step'"):
        jit(lambda s: jnp.arange(0, 5, s))(1)
    with pytest.raises(ZeroDivisionError):
        jnp.arange(0, 5, 0)
    with pytest.raises(TypeError, match="complex"):
        jnp.arange(1j)
    with pytest.raises(ValueError, match="scalar"):
        jnp.arange(np.arange(3))
    # A concrete array is fine, and so is a symbolic size.
    _check(jnp.arange(jnp.asarray(3)), np.arange(3), dtype=i32)
    b = symbolic_dim("b")
    out = _out_type(lambda x: jnp.arange(x.shape[0]) * 2, ShapeDtypeStruct((b,), f32))
    assert out.shape == (b,) and out.dtype == i32


# ---------------------------------------------------------------------------
# linspace, logspace, geomspace


LINSPACE_CASES = [(d, 5, True) for d in (None, bf16, f16, i32, u8, c64)] + [
    (f32, num, endpoint)
    for num, endpoint in [(0, True), (1, True), (1, False), (5, True), (7, False)]
]


@pytest.mark.parametrize("dtype, num, endpoint", LINSPACE_CASES, ids=str)
def test_linspace(dtype, num, endpoint):
    lo, hi = (1 + 2j, 8 - 1j) if dtype == c64 else (1.0, 8.0)
    out, step = jnp.linspace(lo, hi, num, endpoint=endpoint, retstep=True, dtype=dtype)
    want, want_step = np.linspace(lo, hi, num, endpoint=endpoint, retstep=True)
    if dtype is not None and np.dtype(dtype).kind in "iu":
        want = np.floor(want)
    _check(out, want.astype(np.float32 if dtype in (None, bf16) else dtype), dtype=dtype or f32)
    assert not out.weak_type
    if num:
        _check(step, want_step, tol=1e-2 if dtype in (bf16, f16) else 1e-6)


def test_linspace_arrays_and_axis():
    lo, hi = np.float32([0, 1, 2]), np.float32([[4], [8]])
    for axis in (0, 1, -1):
        _check(jnp.linspace(lo, hi, 5, axis=axis), np.linspace(lo, hi, 5, axis=axis), dtype=f32)
    _check(jnp.linspace(0, 10, 4, dtype=int), np.linspace(0, 10, 4, dtype=int), dtype=i32)
    _check(jnp.linspace(np.int8(0), 3, 4), np.linspace(0, 3, 4), dtype=f32)
    _check(jnp.linspace(np.float16(0), 1, 3), np.linspace(0, 1, 3), dtype=f16)
    with pytest.raises(ValueError, match="non-negative"):
        jnp.linspace(0, 1, -1)
    with pytest.raises(ConcretizationTypeError, match="'num' argument of jnp.linspace"):
        jit(lambda n: jnp.linspace(0, 1, n))(3)


def test_linspace_traced_bounds_and_grads():
    f = jit(lambda a, b: jnp.linspace(a, b, 4))
    _check(f(np.float32(1), np.float32(2)), np.linspace(1, 2, 4))
    check_grads(lambda a, b: jnp.linspace(a, b, 5, endpoint=False), (1.0, 3.0), order=2)
    check_grads(lambda a: jnp.logspace(a[0], a[1], 4), (np.float32([0.1, 0.9]),), order=2)
    check_grads(lambda a: jnp.geomspace(a[0], a[1], 4), (np.float32([1.5, 9.0]),), order=2)


@pytest.mark.parametrize("dtype", [None, f32, f16, i32], ids=str)
def test_logspace_geomspace(dtype):
    tol = 2e-2 if dtype == f16 else 1e-5
    _check(
        jnp.logspace(0, 2, 5, dtype=dtype),
        np.logspace(0, 2, 5, dtype=dtype),
        dtype=dtype or f32,
        tol=tol,
    )
    _check(jnp.logspace(0, 3, 4, base=2.0, endpoint=False), np.logspace(0, 3, 4, False, 2.0))
    _check(
        jnp.geomspace(1, 1000, 4, dtype=dtype),
        np.geomspace(1, 1000, 4, dtype=dtype),
        dtype=dtype or f32,
        tol=tol * 10,
    )
    _check(jnp.geomspace(-2, -32, 5), np.geomspace(-2, -32, 5), tol=1e-5)


def test_logspace_geomspace_arrays_complex_and_axis():
    base = np.float32([2, 10])
    _check(jnp.logspace(0, 2, 3, base=base, axis=1), np.logspace(0, 2, 3, base=base, axis=1))
    lo, hi = np.float32([1, 2]), np.float32([100, 8])
    _check(jnp.geomspace(lo, hi, 4, axis=-1), np.geomspace(lo, hi, 4, axis=-1), tol=1e-5)
    _check(jnp.geomspace(1j, 1000j, 4), np.geomspace(1j, 1000j, 4), dtype=c64, tol=1e-4)
    out = jnp.geomspace(3, 7, 3)
    assert float(out[0]) == 3 and float(out[-1]) == 7  # exact ends


# ---------------------------------------------------------------------------
# meshgrid, indices, fromfunction


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid(indexing, sparse, n):
    xs = [np.arange(k + 2, dtype=np.float32) * (k + 1) for k in range(n)]
    got = jnp.meshgrid(*xs, indexing=indexing, sparse=sparse)
    want = np.meshgrid(*xs, indexing=indexing, sparse=sparse)
    assert isinstance(got, list) and len(got) == n
    for g, w in zip(got, want):
        _check(g, w, dtype=f32)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="must be 1D"):
        jnp.meshgrid(np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(np.zeros(2), indexing="xz")
    assert jnp.meshgrid() == []


@pytest.mark.parametrize("dims", [(), (3,), (2, 3), (2, 0, 2)], ids=str)
@pytest.mark.parametrize("sparse", [False, True])
def test_indices(dims, sparse):
    got = jnp.indices(dims, sparse=sparse)
    want = np.indices(dims, sparse=sparse)
    if sparse:
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w, dtype=i32)
    else:
        _check(got, want, dtype=i32)
    if dims and not sparse:
        assert jnp.indices(dims, dtype=u8).dtype == u8


def test_fromfunction():
    _check(
        jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
        np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),
        dtype=i32,
    )
    _check(jnp.fromfunction(lambda i: i / 2, (4,)), np.arange(4) / 2, dtype=f32)
    # Called on scalars (vmapped), so Python control flow on shapes and jnp.where work.
    out = jnp.fromfunction(lambda i, j: jnp.where(i == j, 1.0, jnp.sum(jnp.zeros(3))), (2, 2))
    _check(out, np.eye(2))
    out = jnp.fromfunction(lambda i, j, k=1: i + j + k, (2, 2), dtype=int, k=5)
    _check(out, np.fromfunction(lambda i, j: i + j + 5, (2, 2)))


def test_from_host_buffers():
    _check(jnp.frombuffer(b"\x01\x02\x03", dtype=np.uint8), [1, 2, 3], dtype=u8)
    _check(jnp.frombuffer(np.float32([1, 2]).tobytes(), dtype=np.float32), [1, 2], dtype=f32)
    _check(jnp.fromstring("1 2 3", dtype=int, sep=" "), [1, 2, 3], dtype=i32)
    with pytest.raises(NotImplementedError, match="fromiter"):
        jnp.fromiter(iter([1, 2]), float)
    with pytest.raises(NotImplementedError, match="fromfile"):
        jnp.fromfile("x.bin")


# ---------------------------------------------------------------------------
# eye, identity, tri, tril, triu


@pytest.mark.parametrize("N, M, k", [(0, None, 0), (3, None, 0), (3, 4, 1), (4, 2, -1), (2, 3, 5)])
@pytest.mark.parametrize("dtype", [None, i32, boolean, bf16, c64], ids=str)
def test_eye_tri(N, M, k, dtype):
    _check(jnp.eye(N, M, k, dtype), np.eye(N, M, k, dtype or f32), dtype=dtype or f32, weak=False)
    _check(jnp.tri(N, M, k, dtype), np.tri(N, M, k, dtype or f32), dtype=dtype or f32)
    if M is None and k == 0:
        _check(jnp.identity(N, dtype), np.identity(N, dtype or f32), dtype=dtype or f32)


def test_eye_and_tri_with_traced_k():
    f = jit(lambda k: (jnp.eye(3, 4, k=k), jnp.tri(3, k=k), jnp.tril(np.ones((3, 3)), k)))
    for k in (-1, 0, 2):
        eye, tri, low = f(np.int32(k))
        _check(eye, np.eye(3, 4, k))
        _check(tri, np.tri(3, k=k))
        _check(low, np.tril(np.ones((3, 3)), k))
    out = vmap(lambda k: jnp.eye(2, k=k, dtype=int))(np.int32([0, 1]))
    _check(out, np.stack([np.eye(2, k=0), np.eye(2, k=1)]), dtype=i32)
    with pytest.raises(TypeError, match="integer scalar"):
        jnp.eye(2, k=jnp.asarray(1.0))
    with pytest.raises(ValueError, match="negative dimensions"):
        jnp.eye(-1)


TRI_CASES = [(d, (2, 4)) for d in DTYPES] + [(f32, s) for s in [(3, 3), (2, 0, 3), (2, 3, 4)]]


@pytest.mark.parametrize("dtype, shape", TRI_CASES, ids=str)
def test_tril_triu(dtype, shape):
    x = (np.arange(np.prod(shape)).reshape(shape) % 5 + 1).astype(dtype)
    for k in (-1, 0, 2):
        _check(jnp.tril(x, k), np.tril(x, k), dtype=dtype)
        _check(jnp.triu(x, k), np.triu(x, k), dtype=dtype)


def test_tril_triu_errors_and_grads():
    with pytest.raises(ValueError, match="at least 2D"):
        jnp.tril(np.ones(3))
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 7
    check_grads(lambda x: jnp.tril(x, 1) * jnp.triu(x, -1), (x,), order=2)


# ---------------------------------------------------------------------------
# diag, diagflat, diagonal, vander


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_diagonal(dtype):
    a = (np.arange(2 * 3 * 4).reshape(2, 3, 4) % 7).astype(dtype)
    _check(jnp.diagonal(a, 1, 2, 0), np.diagonal(a, 1, 2, 0), dtype=dtype)
    if dtype != f32:
        return
    for offset in (-3, -1, 0, 2, 4):
        for axes in ((0, 1), (1, 2), (2, 0), (-1, -2)):
            _check(jnp.diagonal(a, offset, *axes), np.diagonal(a, offset, *axes), dtype=dtype)
    _check(jnp.asarray(a[0]).diagonal(1), np.diagonal(a[0], 1))  # the method
    _check(jnp.diagonal(np.zeros((0, 3), dtype)), np.zeros((0,), dtype))


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_diag_diagflat(k):
    v = np.arange(1, 4, dtype=np.float32)
    _check(jnp.diag(v, k), np.diag(v, k), dtype=f32)
    m = np.arange(12).reshape(3, 4)
    _check(jnp.diag(m, k), np.diag(m, k), dtype=i32)
    _check(jnp.diagflat(np.arange(4).reshape(2, 2), k), np.diagflat(np.arange(4).reshape(2, 2), k))
    _check(jnp.diag(np.zeros(0, np.int32), k), np.diag(np.zeros(0, np.int32), k))


def test_diag_errors():
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="1d or 2d"):
        jnp.diag(np.float32(1))
    with pytest.raises(ValueError, match="cannot be the same"):
        jnp.diagonal(np.zeros((2, 2)), 0, 1, 1)
    with pytest.raises(ValueError, match="at least two"):
        jnp.diagonal(np.zeros(2))
    with pytest.raises(ConcretizationTypeError, match="'k' argument of jnp.diag"):
        jit(lambda k: jnp.diag(np.ones(2), k))(1)


def test_diag_grads_and_vmap():
    x = np.arange(1, 13, dtype=np.float32).reshape(3, 4) / 5
    check_grads(lambda x: jnp.diagonal(x, 1), (x,), order=2)
    check_grads(lambda v: jnp.diag(v, -1), (x[0],), order=2)
    out = vmap(lambda m: jnp.diagonal(m, -1))(np.stack([x, 2 * x]))
    _check(out, np.stack([np.diagonal(x, -1), np.diagonal(2 * x, -1)]))


@pytest.mark.parametrize("dtype", [f32, i32, boolean, c64], ids=str)
@pytest.mark.parametrize("N, increasing", [(None, False), (4, True), (0, False), (1, True)])
def test_vander(dtype, N, increasing):
    x = np.array([0, 1, 2, 3]).astype(dtype) if dtype != boolean else np.array([0, 1, 1], bool)
    want = np.vander(x, N, increasing)
    expected_dtype = i32 if dtype == boolean else dtype
    _check(jnp.vander(x, N, increasing), want.astype(expected_dtype), dtype=expected_dtype)


def test_vander_grads_and_errors():
    check_grads(lambda x: jnp.vander(x, 4), (np.float32([0.0, 0.5, -1.2]),), order=2)
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.vander(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="nonnegative"):
        jnp.vander(np.zeros(2), -1)


# ---------------------------------------------------------------------------
# Index arrays


def test_diag_and_triangle_indices():
    for got, want in [
        (jnp.diag_indices(3), np.diag_indices(3)),
        (jnp.diag_indices(2, 3), np.diag_indices(2, 3)),
        (jnp.diag_indices_from(np.zeros((2, 2, 2))), np.diag_indices_from(np.zeros((2, 2, 2)))),
        (jnp.tril_indices(3), np.tril_indices(3)),
        (jnp.tril_indices(3, -1, 4), np.tril_indices(3, -1, 4)),
        (jnp.triu_indices(4, 1), np.triu_indices(4, 1)),
        (jnp.triu_indices(0), np.triu_indices(0)),
        (jnp.tril_indices_from(np.zeros((2, 3)), 1), np.tril_indices_from(np.zeros((2, 3)), 1)),
        (jnp.triu_indices_from(np.zeros((3, 2))), np.triu_indices_from(np.zeros((3, 2)))),
        (jnp.mask_indices(3, jnp.triu, 1), np.mask_indices(3, np.triu, 1)),
    ]:
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _check(g, w, dtype=i32)
    with pytest.raises(ValueError, match="nonnegative"):
        jnp.diag_indices(-1)
    with pytest.raises(ValueError, match="equal length"):
        jnp.diag_indices_from(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="2-d"):
        jnp.tril_indices_from(np.zeros((2, 2, 2)))


def test_mask_indices_under_jit_needs_size():
    i, j = jit(lambda: jnp.mask_indices(3, jnp.tril, size=8))()
    wi, wj = np.mask_indices(3, np.tril)
    _check(i, np.concatenate([wi, [0, 0]]))
    _check(j, np.concatenate([wj, [0, 0]]))
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jit(lambda: jnp.mask_indices(3, jnp.tril))()


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_ravel_multi_index(order, mode):
    dims = (4, 6)
    idx = np.array([[3, 0, 2], [4, 5, 1]]) if mode == "raise" else np.array([[3, -6, 9], [4, 7, 1]])
    got = jnp.ravel_multi_index(tuple(idx), dims, mode=mode, order=order)
    _check(got, np.ravel_multi_index(tuple(idx), dims, mode=mode, order=order), dtype=i32)
    if mode != "raise":
        f = jit(lambda i, j: jnp.ravel_multi_index((i, j), dims, mode=mode, order=order))
        _check(f(*idx), got)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index_ignore_mode_applies_strides_unchecked(order):
    # JAX's "ignore": no bounds handling, negative and too-large indices included.
    dims = (4, 6)
    i, j = np.array([-1, 0, 5, 3]), np.array([1, -7, 2, 5])
    want = i * 6 + j if order == "C" else i + j * 4
    _check(jnp.ravel_multi_index((i, j), dims, mode="ignore", order=order), want, dtype=i32)


def test_ravel_unravel_errors_and_jax_rules():
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((np.array([4]), np.array([0])), (4, 6))
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        jit(lambda i: jnp.ravel_multi_index((i, i), (3, 3)))(np.int32(1))
    with pytest.raises(ValueError, match="length 2"):
        jnp.ravel_multi_index((np.array([1]),), (4, 6))
    with pytest.raises(TypeError, match="int indices"):
        jnp.ravel_multi_index((np.float32([1]), np.float32([1])), (4, 6))
    with pytest.raises(ValueError, match="invalid mode"):
        jnp.ravel_multi_index((np.array([1]), np.array([1])), (4, 6), mode="bad")
    # unravel_index: NumPy's values in range; JAX's rule outside (negative wraps, clipped).
    idx = np.array([0, 5, 7, 23])
    for g, w in zip(jnp.unravel_index(idx, (2, 3, 4)), np.unravel_index(idx, (2, 3, 4))):
        _check(g, w, dtype=i32)
    got = jnp.unravel_index(np.array([-1, -7, 6, 100]), (2, 3))
    _check(got[0], [1, 0, 1, 1])
    _check(got[1], [2, 0, 2, 2])
    assert jnp.unravel_index(0, ()) == ()
    with pytest.raises(TypeError, match="int indices"):
        jnp.unravel_index(np.float32([1]), (2, 3))


def test_unravel_index_vmap_matches_loop():
    idx = np.int32([[1, 4], [5, 0]])
    out = vmap(lambda i: jnp.unravel_index(i, (2, 3)))(idx)
    for row, i in enumerate(idx):
        for o, w in zip(out, np.unravel_index(i, (2, 3))):
            _check(o[row], w)


def test_creation_jit_matches_eager():
    def f(x):
        return (
            jnp.zeros_like(x) + jnp.ones(x.shape),
            jnp.full_like(x, 3.0),
            jnp.linspace(x[0], x[1], 5),
            jnp.eye(2, 3, 1) * x[0],
            jnp.tril(x[:, None] * x, -1),
            jnp.vander(x, 3),
            jnp.meshgrid(x, x[:2])[1],
            jnp.array([x[0], 2.0 * x[1]]),
        )

    x = np.float32([0.5, 2.0, -1.0])
    for a, b in zip(jit(f)(x), f(x)):
        assert isinstance(a, Array) and a.dtype == b.dtype
        _check(a, np.asarray(b))


# ---------------------------------------------------------------------------
# The *_like functions take a ShapeDtypeStruct for the prototype, as JAX does.

LIKES = [
    (jnp.zeros_like, 0),
    (jnp.ones_like, 1),
    (jnp.empty_like, 0),
    (lambda a, **kw: jnp.full_like(a, 7, **kw), 7),
]


@pytest.mark.parametrize("like, fill", LIKES)
def test_like_functions_of_a_shape_dtype_struct(like, fill):
    spec = ShapeDtypeStruct((2, 3), np.int16)
    out = like(spec)
    assert isinstance(out, Array) and out.dtype == np.int16 and not out.weak_type
    np.testing.assert_array_equal(out, np.full((2, 3), fill, np.int16))
    assert like(spec, dtype=np.float32).dtype == np.float32
    assert like(spec, shape=(4,)).shape == (4,)
    weak = ShapeDtypeStruct((2,), np.float32, weak_type=True)
    assert not like(weak).weak_type  # JAX gives a strong type for a struct


def test_full_like_of_a_struct_broadcasts_an_array_fill():
    out = jnp.full_like(ShapeDtypeStruct((2, 3), np.float32), np.arange(3.0))
    np.testing.assert_array_equal(out, np.broadcast_to(np.arange(3.0, dtype=np.float32), (2, 3)))
