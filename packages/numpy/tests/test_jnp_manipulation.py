"""jnp array manipulation: axes, broadcasting, joining and splitting, repeating, rolling,
padding, inserting and deleting, and choosing elements by condition.

NumPy is the oracle for values and shapes; dtypes follow JAX's promotion rules
(weak Python scalars, int32/float32 defaults). Derivatives use `check_grads`
(order 2), `vmap` is compared with a Python loop, `jit` with eager execution.
Functions whose result size depends on data are checked for the concretization
error under `jit`, and for their static `size=` forms.
"""

from __future__ import annotations

import numpy as np
import pytest
from _jnp_helpers import bf16, boolean, c64, f16, f32, i8, i16, i32, random_data, u8

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

DTYPES = [f32, bf16, f16, i32, u8, boolean, c64]


def _data(shape, dtype=f32, seed=0):
    return random_data(shape, dtype, seed, low=-2, high=2, int_high=9, imag=(-2, 2))


def _check(got, want, dtype=None, weak=None):
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if weak is not None:
        assert got.weak_type == weak
    got_np, want_np = np.asarray(got), np.asarray(want)
    assert got_np.shape == want_np.shape, (got_np.shape, want_np.shape)
    if got_np.dtype.kind in "fc" or got_np.dtype == bf16:
        kind = np.complex128 if got_np.dtype.kind == "c" else np.float64
        tol = {bf16: 2e-2, f16: 2e-3}.get(got_np.dtype, 1e-6)
        np.testing.assert_allclose(got_np.astype(kind), want_np.astype(kind), rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got_np, want_np)


def _check_list(got, want, dtype=None):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _check(g, w, dtype)


# ---------------------------------------------------------------------------
# Axes


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_axes_dtypes(dtype):
    x = _data((2, 3, 4), dtype)
    _check(jnp.moveaxis(x, 0, -1), np.moveaxis(x, 0, -1), dtype)
    _check(jnp.swapaxes(x, 0, 2), np.swapaxes(x, 0, 2), dtype)


@pytest.mark.parametrize(
    "shape, source, dest",
    [((2, 3, 4), 0, 2), ((2, 3, 4), -1, 0), ((2, 3, 4), (0, 1), (2, 0)), ((1, 0, 2), 1, 0),
     ((2, 3, 4, 5), (3, 0), (1, 2)), ((3,), 0, 0)],
)  # fmt: skip
def test_moveaxis(shape, source, dest):
    x = _data(shape)
    _check(jnp.moveaxis(x, source, dest), np.moveaxis(x, source, dest))


def test_axis_functions():
    x = _data((2, 3, 4))
    for axes in [(1, 0, 2), (2, 0, 1), (-1, 0, 1)]:
        _check(jnp.permute_dims(x, axes), np.transpose(x, axes))
    for axis, start in [(2, 0), (0, 3), (1, -1), (-1, 1), (0, 1)]:
        _check(jnp.rollaxis(x, axis, start), np.rollaxis(x, axis, start))
    _check(jnp.swapaxes(x, -1, 0), np.swapaxes(x, -1, 0))
    _check(jnp.asarray(x).swapaxes(1, 2), np.swapaxes(x, 1, 2))
    for axis in [0, -1, (0, 2), (3, 0), (-1, -2)]:
        _check(jnp.expand_dims(x, axis), np.expand_dims(x, axis))
    _check(jnp.expand_dims(np.float32(1), (0, 1)), np.ones((1, 1)))
    _check(jnp.squeeze(_data((1, 3, 1)), (0, 2)), np.squeeze(_data((1, 3, 1)), (0, 2)))


def test_axis_errors():
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match="Inconsistent number of elements"):
        jnp.moveaxis(x, (0, 1), 0)
    with pytest.raises(ValueError, match="duplicate"):
        jnp.moveaxis(x, (0, 0), (1, 2))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.swapaxes(x, 0, 3)
    with pytest.raises(ValueError, match="start=4"):
        jnp.rollaxis(x, 0, 4)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(x, (1, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.expand_dims(x, 5)


def test_atleast():
    for f, g in [(jnp.atleast_1d, np.atleast_1d), (jnp.atleast_2d, np.atleast_2d),
                 (jnp.atleast_3d, np.atleast_3d)]:  # fmt: skip
        for shape in [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4)]:
            _check(f(_data(shape)), g(_data(shape)))
        _check_list(f(1.0, _data((2,))), g(1.0, _data((2,))))
        assert f(2).dtype == i32 and f(2).weak_type


# ---------------------------------------------------------------------------
# Broadcasting


def test_broadcast_to_and_arrays():
    x = _data((3, 1), i32)
    for shape in [(3, 1), (3, 4), (2, 3, 5), (3, 0)]:
        _check(jnp.broadcast_to(x, shape), np.broadcast_to(x, shape), i32)
    _check(jnp.broadcast_to(2.0, 3), np.full(3, 2.0), f32, weak=True)
    got = jnp.broadcast_arrays(_data((3, 1)), _data((4,), i32), 1.0)
    want = np.broadcast_arrays(_data((3, 1)), _data((4,), i32), 1.0)
    assert isinstance(got, list)
    _check_list(got, want)
    assert jnp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert jnp.broadcast_shapes(2, (3, 1)) == (3, 2)
    assert jnp.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_to(x, (2, 4))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_to(x, (4,))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        jnp.broadcast_shapes((2,), (3,))
    with pytest.raises(ConcretizationTypeError):
        jit(lambda n: jnp.broadcast_to(1.0, (n,)))(3)
    check_grads(lambda x: jnp.broadcast_to(x, (2, 3, 4)), (_data((3, 1)),), order=2)


# ---------------------------------------------------------------------------
# Flipping and rotating


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_flips(dtype):
    x = _data((2, 3, 4), dtype)
    _check(jnp.flip(x, (0, 2)), np.flip(x, (0, 2)), dtype)
    if dtype != f32:
        return
    for axis in [None, 0, -1]:
        _check(jnp.flip(x, axis), np.flip(x, axis), dtype)
    _check(jnp.fliplr(x), np.fliplr(x), dtype)
    _check(jnp.flipud(x), np.flipud(x), dtype)
    _check(jnp.flip(x[0, 0, 0]), x[0, 0, 0], dtype)


def test_rot90_and_errors():
    x = _data((2, 3, 4))
    for k in range(-1, 6):
        for axes in [(0, 1), (2, 0), (-1, -2)]:
            _check(jnp.rot90(x, k, axes), np.rot90(x, k, axes))
    with pytest.raises(ValueError, match="different"):
        jnp.rot90(x, 1, (1, 1))
    with pytest.raises(ValueError, match="len\\(axes\\)"):
        jnp.rot90(x, 1, (0,))
    with pytest.raises(ValueError, match="at least 2"):
        jnp.fliplr(np.zeros(3))
    with pytest.raises(ValueError, match="at least 1"):
        jnp.flipud(np.float32(1))
    check_grads(lambda x: jnp.rot90(jnp.flip(x, 1), 3), (x,), order=2)


# ---------------------------------------------------------------------------
# roll, tile, repeat, resize


@pytest.mark.parametrize(
    "shape, shift, axis",
    [((5,), 2, None), ((5,), -7, 0), ((2, 3), 4, None), ((2, 3), (1, 2), (0, 1)),
     ((2, 3), 1, (0, 1)), ((2, 3), (1, -1), 1), ((0, 3), 2, 0), ((), 3, None), ((3, 4), 0, 1)],
)  # fmt: skip
def test_roll(shape, shift, axis):
    x = _data(shape)
    _check(jnp.roll(x, shift, axis), np.roll(x, shift, axis))


def test_roll_traced_shift_and_grads():
    x = _data((3, 5))
    f = jit(lambda s: jnp.roll(x, s, axis=1))
    for s in (-6, -1, 0, 2, 5, 12):
        _check(f(np.int32(s)), np.roll(x, s, axis=1))
    g = jit(lambda s: jnp.roll(x, s, axis=(0, 1)))
    _check(g(np.int32([1, -2])), np.roll(x, (1, -2), axis=(0, 1)))
    out = vmap(lambda s: jnp.roll(x, s))(np.int32([1, 7, -3]))
    for row, s in zip(out, (1, 7, -3)):
        _check(row, np.roll(x, s))
    check_grads(lambda x: jnp.roll(x, (2, -1), (1, 0)), (x,), order=2)
    check_grads(lambda x: jnp.roll(x, np.int32(3)), (x,), order=2)
    check_grads(jit(lambda x, s: jnp.roll(x, s, 1)), (x, np.int32(2)), order=1, modes=["rev"])
    with pytest.raises(TypeError, match="integer"):
        jnp.roll(x, 1.5)
    with pytest.raises(ValueError, match="same length"):
        jnp.roll(x, (1, 2, 3), (0, 1))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_tile_repeat_dtypes(dtype):
    x = _data((2, 3), dtype)
    _check(jnp.tile(x, (2, 1, 2)), np.tile(x, (2, 1, 2)), dtype)
    _check(jnp.repeat(x, 2, axis=1), np.repeat(x, 2, axis=1), dtype)
    _check(jnp.repeat(x, np.array([1, 0, 2]), axis=1), np.repeat(x, [1, 0, 2], axis=1), dtype)


@pytest.mark.parametrize(
    "shape, reps", [((3,), 2), ((3,), (2, 2)), ((2, 3), 2), ((2, 3), (0, 2)), ((), (2, 3)),
                    ((2, 0), (2, 2)), ((2, 3), ())]
)  # fmt: skip
def test_tile(shape, reps):
    x = _data(shape)
    _check(jnp.tile(x, reps), np.tile(x, reps))


@pytest.mark.parametrize(
    "shape, repeats, axis",
    [((2, 3), 2, None), ((2, 3), 3, 0), ((2, 3), [1, 2], 0), ((2, 3), [2], -1),
     ((4,), [0, 1, 0, 3], 0), ((0, 2), 3, 0), ((), 3, None), ((2, 3), 0, 1)],
)  # fmt: skip
def test_repeat(shape, repeats, axis):
    x = _data(shape)
    _check(jnp.repeat(x, np.array(repeats), axis), np.repeat(x, repeats, axis))
    _check(jnp.repeat(x, repeats, axis), np.repeat(x, repeats, axis))


def test_repeat_total_repeat_length():
    x = np.arange(1, 4, dtype=np.float32)
    f = jit(lambda r: jnp.repeat(x, r, total_repeat_length=5))
    _check(f(np.int32([2, 0, 3])), np.repeat(x, [2, 0, 3]))
    _check(f(np.int32([1, 1, 1])), [1, 2, 3, 3, 3])  # shorter: the last value continues
    _check(f(np.int32([4, 4, 4])), [1, 1, 1, 1, 2])  # longer: cut
    _check(jit(lambda r: jnp.repeat(x, r, total_repeat_length=6))(np.int32(2)), np.repeat(x, 2))
    _check(jnp.repeat(x, [1, 2, 0], total_repeat_length=4), [1, 2, 2, 2])
    y = _data((2, 3))
    reps = np.int32([[1, 2, 1], [0, 0, 4]])
    out = vmap(lambda r: jnp.repeat(y, r, axis=1, total_repeat_length=4))(reps)
    _check(out[0], np.repeat(y, [1, 2, 1], axis=1))
    _check(out[1], np.repeat(y, [0, 0, 4], axis=1))
    with pytest.raises(ConcretizationTypeError, match="total_repeat_length"):
        jit(lambda r: jnp.repeat(x, r))(np.int32([1, 1, 1]))
    with pytest.raises(ValueError, match="negative"):
        jnp.repeat(x, -1)
    with pytest.raises(ValueError, match="length 3"):
        jnp.repeat(x, [1, 2])
    with pytest.raises(TypeError, match="integer"):
        jnp.repeat(x, 1.5)


def test_repeat_tile_grads():
    x = _data((2, 3))
    check_grads(lambda x: jnp.tile(x, (2, 1, 3)), (x,), order=2)
    check_grads(lambda x: jnp.repeat(x, 2, axis=0), (x,), order=2)
    check_grads(lambda x: jnp.repeat(x, np.array([2, 0, 1]), axis=1), (x,), order=2)
    f = jit(lambda x: jnp.repeat(x, np.int32([1, 3]), axis=0, total_repeat_length=3))
    check_grads(f, (x,), order=1)


def test_resize():
    x = np.arange(1, 6, dtype=np.int32)
    for shape in [(2, 2), (7,), (2, 6), 3, (0,), (3, 0)]:
        _check(jnp.resize(x, shape), np.resize(x, shape), i32)
    _check(jnp.resize(np.zeros(0, np.float32), (2, 2)), np.zeros((2, 2)), f32)


# ---------------------------------------------------------------------------
# Joining and splitting


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_join_dtypes(dtype):
    a, b = _data((2, 3), dtype, 1), _data((2, 3), dtype, 2)
    _check(jnp.concatenate([a, b], 1), np.concatenate([a, b], 1), dtype)
    _check(jnp.stack([a, b], -1), np.stack([a, b], -1), dtype)


@pytest.mark.parametrize(
    "dtypes_in, scalar, want",
    [((i32, f32), None, f32), ((u8, i8), None, i16), ((bf16, f16), None, f32),
     ((i32,), 1.5, f32), ((u8,), 3, u8), ((f16,), 2.0, f16), ((boolean, i32), None, i32)],
)  # fmt: skip
def test_join_promotion(dtypes_in, scalar, want):
    parts = [np.ones(2, d) for d in dtypes_in] + ([scalar] if scalar is not None else [])
    out = jnp.concatenate([jnp.atleast_1d(p) for p in parts])
    assert out.dtype == want
    assert jnp.stack([jnp.atleast_1d(p)[0] for p in parts]).dtype == want
    assert jnp.hstack(parts).dtype == want
    assert jnp.concatenate(parts[:1], dtype=f16).dtype == f16


def test_concatenate_forms():
    a, b = _data((2, 3), seed=1), _data((1, 3), seed=2)
    _check(jnp.concatenate([a, b]), np.concatenate([a, b]))
    _check(jnp.concatenate([a, b], axis=None), np.concatenate([a, b], axis=None))
    _check(jnp.concatenate((a, np.zeros((0, 3), np.float32)), 0), a)
    _check(jnp.concatenate(a, 0), np.concatenate(a, 0))  # an array: its rows
    _check(jnp.concat([a, b], axis=0), np.concatenate([a, b]))
    _check(jnp.concatenate([a]), a)
    with pytest.raises(ValueError, match="at least one"):
        jnp.concatenate([])
    with pytest.raises(ValueError, match="Zero-dimensional"):
        jnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(ValueError, match="same number of dimensions"):
        jnp.concatenate([a, a[0]])
    with pytest.raises(TypeError, match="concatenate"):
        jnp.concatenate([a, _data((2, 2))], 0)
    with pytest.raises(TypeError, match="requires ndarray"):
        jnp.concatenate([a, [[1, 2, 3]]])


def test_stack_family():
    vecs = [_data((3,), seed=s) for s in range(3)]
    mats = [_data((2, 3), seed=s) for s in range(2)]
    for axis in (0, 1, -1):
        _check(jnp.stack(vecs, axis), np.stack(vecs, axis))
    for f, g in [(jnp.hstack, np.hstack), (jnp.vstack, np.vstack), (jnp.dstack, np.dstack),
                 (jnp.column_stack, np.column_stack)]:  # fmt: skip
        _check(f(vecs), g(vecs))
        _check(f(mats), g(mats))
        _check(f([np.float32(1), np.float32(2)]), g([np.float32(1), np.float32(2)]))
    _check(jnp.stack(np.ones((2, 3))), np.stack(np.ones((2, 3))))
    with pytest.raises(ValueError, match="same shape"):
        jnp.stack([vecs[0], mats[0]])
    with pytest.raises(ValueError, match="at least one"):
        jnp.stack([])
    with pytest.raises(NotImplementedError, match="out"):
        jnp.stack(vecs, out=vecs[0])


def test_block():
    a, b = np.eye(2, dtype=np.float32), np.zeros((2, 1), np.int32)
    c, d = np.ones((1, 2), np.float32), np.float32([[5]])
    for arrays in [[a, b], [[a, b], [c, d]], [1, 2], [[1.0], [np.int8(2)]], [[[a]]], a]:
        _check(jnp.block(arrays), np.block(arrays))
    assert jnp.block([[np.int8(1), np.uint8(2)]]).dtype == i16
    with pytest.raises(ValueError, match="depths are mismatched"):
        jnp.block([[a], b])
    with pytest.raises(ValueError, match="empty"):
        jnp.block([[], [a]])
    with pytest.raises(TypeError, match="tuple"):
        jnp.block((a, b))


@pytest.mark.parametrize(
    "fun, args",
    [("split", (6, 3)), ("split", (6, [1, 4])), ("split", (6, [4, 2])), ("array_split", (7, 3)),
     ("array_split", (5, 7)), ("split", (6, [-2, 10])), ("array_split", (0, 2))],
)  # fmt: skip
def test_split(fun, args):
    n, sections = args
    x = _data((2, n))
    _check_list(getattr(jnp, fun)(x, sections, axis=1), getattr(np, fun)(x, sections, axis=1))


def test_split_family_and_unstack():
    x = _data((4, 6, 2))
    _check_list(jnp.hsplit(x, 3), np.hsplit(x, 3))
    _check_list(jnp.vsplit(x, [1, 3]), np.vsplit(x, [1, 3]))
    _check_list(jnp.dsplit(x, 2), np.dsplit(x, 2))
    _check_list(jnp.hsplit(x[0, :, 0], 2), np.hsplit(x[0, :, 0], 2))
    for axis in (0, 1, -1):
        got = jnp.unstack(x, axis=axis)
        assert isinstance(got, tuple)
        _check_list(got, [np.take(x, i, axis) for i in range(x.shape[axis])])
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(x, 4, axis=1)
    with pytest.raises(ValueError, match="larger than 0"):
        jnp.array_split(x, 0)
    with pytest.raises(ValueError, match="hsplit only works"):
        jnp.hsplit(np.float32(1), 1)
    with pytest.raises(ValueError, match="vsplit only works"):
        jnp.vsplit(np.zeros(3), 1)
    with pytest.raises(ValueError, match="rank > 0"):
        jnp.unstack(np.float32(1))
    with pytest.raises(ConcretizationTypeError, match="jnp.split"):
        jit(lambda i: jnp.split(x, i))(np.int32([1, 2]))
    check_grads(lambda x: jnp.split(x, [1, 4], axis=1)[1], (x,), order=2)


def test_join_grads():
    a, b = _data((2, 3), seed=1), _data((1, 3), seed=2)
    check_grads(lambda a, b: jnp.concatenate([a, b, a]), (a, b), order=2)
    check_grads(lambda a, b: jnp.stack([a[0], b[0]], 1), (a, b), order=2)
    check_grads(lambda a, b: jnp.block([[a], [b]]), (a, b), order=2)


# ---------------------------------------------------------------------------
# append, insert, delete


def test_append():
    x = _data((2, 3))
    _check(jnp.append(x, 1.0), np.append(x, 1.0))
    _check(jnp.append(x, x[:1], axis=0), np.append(x, x[:1], axis=0))
    assert jnp.append(np.int32([1]), 2.5).dtype == f32


@pytest.mark.parametrize(
    "obj, axis",
    [(1, None), (-1, 0), (slice(1, 4), 1), (slice(None, None, 2), 0), ([0, 2], 1),
     (np.array([True, False, True, False]), 1), ([], 0), ([1, 1, -1], 1)],
)  # fmt: skip
def test_delete(obj, axis):
    x = _data((3, 4))
    _check(jnp.delete(x, obj, axis), np.delete(x, obj, axis))
    if isinstance(obj, list) and obj and len(set(obj)) == len(obj):
        f = jit(lambda o: jnp.delete(x, o, axis, assume_unique_indices=True))
        _check(f(np.int32(obj)), np.delete(x, obj, axis))


def test_delete_traced_and_errors():
    x = np.arange(6.0, dtype=np.float32)
    f = jit(lambda o: jnp.delete(x, o, assume_unique_indices=True))
    _check(f(np.int32([4, 0, -1])), np.delete(x, [4, 0, 5]))
    out = vmap(lambda o: jnp.delete(x, o, assume_unique_indices=True))(np.int32([[0, 1], [5, 2]]))
    _check(out[0], np.delete(x, [0, 1]))
    _check(out[1], np.delete(x, [5, 2]))
    check_grads(lambda x: jnp.delete(x, [1, 3]), (x,), order=2)
    with pytest.raises(ConcretizationTypeError, match="assume_unique_indices"):
        jit(lambda o: jnp.delete(x, o))(np.int32([1]))
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.delete(x, 6)
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.delete(x, [1, 7])
    with pytest.raises(IndexError, match="integer"):
        jnp.delete(x, np.float32([1]))


@pytest.mark.parametrize(
    "obj, values, axis",
    [(1, 9, None), (0, [7, 8], 1), (-1, [[7], [8]], 1), ([1], [[7, 8]], 1), ([0, 2, 2], 5, 1),
     ([3, 1, 1], [7, 8, 9], 1), (slice(0, 3, 2), [[7], [8]], 1), (2, [7, 8, 9, 10], 0),
     ([], 1, 0), ([4], 7, 1)],
)  # fmt: skip
def test_insert(obj, values, axis):
    x = _data((2, 4), i32)
    _check(jnp.insert(x, obj, values, axis), np.insert(x, obj, values, axis), i32)
    if isinstance(obj, list) and obj:
        f = jit(lambda o: jnp.insert(x, o, np.asarray(values), axis))
        _check(f(np.int32(obj)), np.insert(x, obj, values, axis), i32)


def test_insert_traced_grads_and_errors():
    x = _data((5,))
    out = vmap(lambda o: jnp.insert(x, o, np.float32([7, 8])))(np.int32([[0, 5], [2, 2]]))
    _check(out[0], np.insert(x, [0, 5], [7, 8]))
    _check(out[1], np.insert(x, [2, 2], [7, 8]))
    check_grads(lambda x, v: jnp.insert(x, [1, 3], v), (x, np.float32([1.5, -2])), order=2)
    check_grads(jit(lambda x, v: jnp.insert(x, np.int32([4, 0]), v)), (x, x[:2]), order=2)
    assert jnp.insert(np.int32([1, 2]), 1, 2.7).dtype == i32
    with pytest.raises(IndexError, match="out of bounds"):
        jnp.insert(x, 7, 1.0)
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.insert(x, [[1]], 1.0)
    with pytest.raises(ValueError, match="integer typed"):
        jnp.insert(x, np.float32([1]), 1.0)


# ---------------------------------------------------------------------------
# pad


PAD_CASES = [
    ((1, 2), "constant", {}),
    (((1, 2), (0, 3)), "constant", {"constant_values": ((7, 8), (9, 10))}),
    (2, "constant", {"constant_values": 3}),
    ((2,), "edge", {}),
    (((4, 5), (7, 2)), "wrap", {}),
    (((3, 5), (7, 2)), "reflect", {}),
    (((3, 5), (7, 2)), "reflect", {"reflect_type": "odd"}),
    (((3, 5), (7, 2)), "symmetric", {}),
    (((3, 5), (7, 2)), "symmetric", {"reflect_type": "odd"}),
    (((3, 1), (2, 2)), "linear_ramp", {"end_values": ((1, 2), (3, 4))}),
    (((3, 1), (2, 2)), "maximum", {}),
    (((3, 1), (2, 2)), "minimum", {"stat_length": 2}),
    (((3, 1), (2, 2)), "mean", {"stat_length": ((1, 2), (2, 1))}),
    (((3, 1), (2, 2)), "median", {}),
    ((0, 1), "median", {"stat_length": 1}),
    ((1, 1), "empty", {}),
]


@pytest.mark.parametrize("pad_width, mode, kwargs", PAD_CASES, ids=str)
def test_pad_modes(pad_width, mode, kwargs):
    # Integers too where the mode computes values (statistics round, ramps round down).
    dtypes = [f32, i32] if mode in ("mean", "median", "linear_ramp") else [f32]
    for dtype in dtypes:
        x = (np.arange(1, 7).reshape(2, 3) * 3 % 7).astype(dtype)
        want = np.pad(x, pad_width, mode, **kwargs)
        if mode == "empty":
            want = np.pad(x, pad_width)  # JAX fills the "uninitialized" values with zeros
        _check(jnp.pad(x, pad_width, mode, **kwargs), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_pad_dtypes(dtype):
    modes = ["constant", "edge", "wrap", "reflect", "symmetric"]
    width = ((1, 4), (2, 0))
    x = _data((3, 2), dtype)
    outs = jit(lambda x: [jnp.pad(x, width, m) for m in modes])(x)
    for mode, out in zip(modes, outs):
        _check(out, np.pad(x, width, mode), dtype)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3,), (0, 2), (1, 1, 2)], ids=str)
def test_pad_shapes(shape):
    x = _data(shape)
    width = [(1, 2)] * len(shape) if shape else 0
    _check(jnp.pad(x, width), np.pad(x, width))
    nonempty = all(shape)
    for mode in ["edge", "reflect", "symmetric", "wrap", "mean"] if nonempty else []:
        _check(jnp.pad(x, width, mode), np.pad(x, width, mode))


def test_pad_traced_values_and_grads():
    x = _data((2, 3))
    f = jit(lambda x, c: jnp.pad(x, ((1, 0), (2, 1)), constant_values=c))
    _check(f(x, np.float32(5)), np.pad(x, ((1, 0), (2, 1)), constant_values=5))
    c = np.float32([[1, 2], [3, 4]])
    _check(f(x, c), np.pad(x, ((1, 0), (2, 1)), constant_values=c))
    check_grads(lambda x, c: jnp.pad(x, ((1, 0), (2, 1)), constant_values=c), (x, c), order=2)
    # The other modes are linear in x (or piecewise, for the maximum): first order.
    for mode, kw in [("edge", {}), ("wrap", {}), ("reflect", {"reflect_type": "odd"}),
                     ("symmetric", {}), ("linear_ramp", {"end_values": 1.0}), ("mean", {}),
                     ("maximum", {"stat_length": 2})]:  # fmt: skip
        f = jit(lambda x, mode=mode, kw=kw: jnp.pad(x, ((2, 1), (4, 3)), mode, **kw))
        check_grads(f, (x,), order=1, modes=["rev"])
    out = vmap(lambda x: jnp.pad(x, (2, 3), "reflect"))(x)
    _check(out, np.stack([np.pad(r, (2, 3), "reflect") for r in x]))


def test_pad_callable():
    def fill(vector, width, axis, kwargs):
        before, after = width
        n = vector.shape[0]
        idx = jnp.arange(n)
        value = kwargs.get("value", -1.0)
        return jnp.where((idx < before) | (idx >= n - after), value, vector)

    x = _data((2, 3))
    want = np.pad(x, 1, constant_values=7.0)
    _check(jnp.pad(x, 1, fill, value=7.0), want)
    with pytest.raises(ValueError, match="must return"):
        jnp.pad(x, 1, lambda v, w, a, k: None)


def test_pad_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="Unimplemented padding mode"):
        jnp.pad(x, 1, "nearest")
    with pytest.raises(ValueError, match="Unsupported keyword arguments"):
        jnp.pad(x, 1, "edge", constant_values=1)
    with pytest.raises(ValueError, match="unsupported shape"):
        jnp.pad(x, ((1, 2, 3),))
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(TypeError, match="integral"):
        jnp.pad(x, 1.5)
    with pytest.raises(ValueError, match="empty axis"):
        jnp.pad(np.zeros((0, 2)), 1, "edge")
    with pytest.raises(ValueError, match="reflect_type"):
        jnp.pad(x, 1, "reflect", reflect_type="both")
    with pytest.raises(ValueError, match="stat_length of 0"):
        jnp.pad(x, 1, "maximum", stat_length=0)
    with pytest.raises(ConcretizationTypeError, match="pad_width"):
        jit(lambda p: jnp.pad(x, p))(1)


# ---------------------------------------------------------------------------
# where, select, piecewise, choose


@pytest.mark.parametrize(
    "x, y, dtype, weak",
    [(1.0, -1.0, f32, True), (np.int32(1), 2.5, f32, False), ("f32", 2, f32, False),
     ("i32", 1.5, f32, True), ("u8", 3, u8, False), ("bf16", "f16", f32, False),
     ("bool", "bool", boolean, False), ("c64", 1.0, c64, False), ("i8", "u8", i16, False)],
)  # fmt: skip
def test_where_promotion(x, y, dtype, weak):
    names = {"f32": f32, "i32": i32, "u8": u8, "bf16": bf16, "f16": f16, "bool": boolean,
             "c64": c64, "i8": i8}  # fmt: skip
    x = _data((3, 1), names[x], 1) if isinstance(x, str) else x
    y = _data((4,), names[y], 2) if isinstance(y, str) else y
    cond = _data((3, 4), boolean)
    out = jnp.where(cond, x, y)
    _check(out, np.where(cond, np.asarray(x).astype(dtype), np.asarray(y).astype(dtype)), dtype)
    assert out.weak_type == weak


def test_where_forms():
    x = _data((2, 3))
    _check(jnp.where(x, 1, 0), np.where(x, 1, 0))  # nonzero is true
    _check(jnp.where(np.int32([0, 2, 0]), 1.0, 0.0), [0, 1, 0])
    _check_list(jnp.where(x > 0), np.where(x > 0))
    f = jit(lambda c: jnp.where(c, size=4, fill_value=-1))
    got = f(np.array([[True, False, True], [False, True, True]]))
    _check_list(got, [[0, 0, 1, 1], [0, 2, 1, 2]])
    got = f(np.array([[False, False, True], [False, False, False]]))
    _check_list(got, [[0, -1, -1, -1], [2, -1, -1, -1]])
    got = jit(lambda c: jnp.where(c, size=1, fill_value=(7, 8)))(np.zeros((2, 2), bool))
    _check_list(got, [[7], [8]])
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jit(lambda c: jnp.where(c))(x > 0)
    with pytest.raises(ValueError, match="Either both or neither"):
        jnp.where(x > 0, x)
    with pytest.raises(ValueError, match="three-term"):
        jnp.where(x > 0, x, x, size=2)
    with pytest.raises(ValueError, match="0d"):
        jnp.where(True)


def test_where_grads_vmap_jit():
    x, y = _data((2, 3), seed=1), _data((3,), seed=2)
    cond = x > 0
    check_grads(lambda x, y: jnp.where(cond, x * y, y - x), (x, y), order=2)
    out = vmap(lambda c, x: jnp.where(c, x, -x))(cond, x)
    _check(out, np.where(cond, x, -x))
    f = lambda c, x, y: jnp.where(c, x, y)  # noqa: E731
    _check(jit(f)(cond, x, y), f(cond, x, y))


def test_select():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    conds, choices = [x < 2, x > 3, x > 0], [x, x * 10, -x]
    _check(jnp.select(conds, choices), np.select(conds, choices))
    _check(jnp.select(conds, choices, default=np.float32([7, 8, 9])),
           np.select(conds, choices, default=np.float32([7, 8, 9])))  # fmt: skip
    assert jnp.select([x < 2], [np.int32(1)]).dtype == i32
    assert jnp.select([x < 2], [np.int8(1)], default=np.int16(2)).dtype == i16
    check_grads(lambda x: jnp.select([x < 2, x > 3], [x * x, 3 * x], x), (x + 0.5,), order=2)
    with pytest.raises(ValueError, match="length equal"):
        jnp.select(conds, choices[:2])
    with pytest.raises(ValueError, match="non-empty"):
        jnp.select([], [])
    with pytest.raises(TypeError, match="boolean"):
        jnp.select([x], [x])


def test_piecewise():
    x = np.linspace(-2.5, 2.5, 6).astype(np.float32)
    funcs = [lambda v: -v, lambda v: v**2]
    _check(jnp.piecewise(x, [x < 0, x >= 0], funcs), np.piecewise(x, [x < 0, x >= 0], funcs))
    _check(jnp.piecewise(x, [x < -1, x > 1], [7, lambda v: v * 3, 0.5]),
           np.piecewise(x, [x < -1, x > 1], [7, lambda v: v * 3, 0.5]))  # fmt: skip
    _check(jnp.piecewise(x, x > 0, [lambda v: v + 1]), np.piecewise(x, x > 0, [lambda v: v + 1]))
    xi = np.arange(-2, 3)
    out = jnp.piecewise(xi, [xi < 0], [lambda v, k: v * k], 3)
    _check(out, np.piecewise(xi, [xi < 0], [lambda v, k: v * k], 3), i32)
    # As in JAX, the functions see single elements.
    out = jnp.piecewise(x, [x > 0], [lambda v: jnp.sum(jnp.atleast_1d(v)) + v.ndim])
    _check(out, np.where(x > 0, x, 0))
    check_grads(lambda x: jnp.piecewise(x, [x < 0], [lambda v: v * v, lambda v: -v]), (x,), 2)
    with pytest.raises(ValueError, match="functions are expected"):
        jnp.piecewise(x, [x < 0], [1, 2, 3])


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose(mode):
    a = np.array([[0, 1, 2], [2, 1, 0]]) if mode == "raise" else np.array([[0, 4, -1], [2, 7, -5]])
    choices = [_data((3,), seed=s) for s in range(3)]
    _check(jnp.choose(a, choices, mode=mode), np.choose(a, choices, mode=mode))
    _check(jnp.asarray(a).choose(choices, mode=mode), np.choose(a, choices, mode=mode))
    if mode != "raise":
        f = jit(lambda a, c: jnp.choose(a, c, mode=mode))
        _check(f(a, choices), np.choose(a, choices, mode=mode))
        check_grads(lambda *c: jnp.choose(a, c, mode=mode), choices, order=2)


def test_choose_errors():
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.choose(np.array([3]), [np.zeros(1)] * 3)
    with pytest.raises(ConcretizationTypeError, match="mode='wrap'"):
        jit(lambda a: jnp.choose(a, [np.zeros(1)] * 2))(np.int32([1]))
    with pytest.raises(ValueError, match="mode='fill' not understood"):
        jnp.choose(np.array([0]), [np.zeros(1)], mode="fill")
    with pytest.raises(TypeError, match="integer"):
        jnp.choose(np.float32([0]), [np.zeros(1)])


# ---------------------------------------------------------------------------
# compress, extract, place, trim_zeros


def test_compress():
    x = _data((3, 4))
    cond = np.array([True, False, True, True])
    for axis in (None, 0, 1, -1):
        c = cond[:3] if axis == 0 else cond
        _check(jnp.compress(c, x, axis), np.compress(c, x, axis))
    _check(jnp.compress(np.array([1, 0]), x, 0), np.compress([1, 0], x, 0))  # shorter
    _check(jnp.compress(np.array([0, 1, 0, 0, 0]), x, 0), x[1:2])  # false past the end
    _check(jnp.asarray(x).compress(cond, axis=1), np.compress(cond, x, 1))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.compress(np.array([0, 1, 0, 1]), x, 0)
    with pytest.raises(ValueError, match="1D"):
        jnp.compress(np.ones((2, 2), bool), x)
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jit(lambda c: jnp.compress(c, x, 1))(cond)


def test_compress_extract_with_size():
    x = _data((3, 4))
    f = jit(lambda c: jnp.compress(c, x, 1, size=3, fill_value=9.0))
    _check(
        f(np.array([True, False, True, False])),
        np.concatenate([x[:, [0, 2]], 9 * np.ones((3, 1))], 1),
    )
    _check(f(np.array([True] * 4)), x[:, :3])
    out = vmap(lambda c: jnp.compress(c, x[0], size=2))(
        np.array([[1, 0, 1, 0], [0, 0, 0, 1]], bool)
    )
    _check(out, [[x[0, 0], x[0, 2]], [x[0, 3], 0]])
    check_grads(lambda x: jnp.compress(np.array([1, 0, 1], bool), x, 0, size=3), (x,), order=2)
    cond = x > 0
    _check(jnp.extract(cond, x), np.extract(cond, x))
    g = jit(lambda c: jnp.extract(c, x, size=12, fill_value=-9.0))(cond)
    want = np.extract(cond, x)
    _check(g, np.concatenate([want, np.full(12 - want.size, -9.0)]))


def test_place():
    x = np.zeros((2, 3), np.float32)
    mask = np.array([[True, False, True], [False, True, True]])
    got = jnp.place(x, mask, np.float32([1, 2, 3]), inplace=False)
    want = x.copy()
    np.place(want, mask, [1, 2, 3])
    _check(got, want)
    got = jit(lambda m: jnp.place(x, m, np.float32([5, 6]), inplace=False))(mask)
    want = x.copy()
    np.place(want, mask, [5, 6])
    _check(got, want)
    _check(jnp.place(x, np.zeros((2, 3), bool), np.float32([]), inplace=False), x)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(x, mask, 1.0)
    with pytest.raises(ValueError, match="same shape"):
        jnp.place(x, mask[0], 1.0, inplace=False)
    with pytest.raises(ValueError, match="empty"):
        jnp.place(x, mask, np.float32([]), inplace=False)


def test_trim_zeros():
    x = np.array([0, 0, 1, 0, 2, 0], np.int32)
    for trim in ["fb", "f", "b", "BF"]:
        _check(jnp.trim_zeros(x, trim), np.trim_zeros(x, trim.lower()))
    _check(jnp.trim_zeros(np.zeros(3)), np.zeros(0))
    with pytest.raises(ConcretizationTypeError, match="trim_zeros"):
        jit(jnp.trim_zeros)(x)
    with pytest.raises(ValueError, match="1-D"):
        jnp.trim_zeros(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="unexpected character"):
        jnp.trim_zeros(x, "fx")


# ---------------------------------------------------------------------------
# Methods, jit and vmap on a sample


def test_methods():
    x = jnp.asarray(_data((2, 3)))
    _check(x.repeat(2, axis=0), np.repeat(np.asarray(x), 2, axis=0))
    _check(x.swapaxes(0, 1), np.asarray(x).T)
    _check(x.diagonal(1), np.diagonal(np.asarray(x), 1))
    _check(x.flatten(), np.asarray(x).ravel())
    c = x.copy()
    assert c is not x
    _check(c, np.asarray(x))


def test_manipulation_jit_matches_eager_and_vmap_matches_loop():
    def f(x):
        return (
            jnp.pad(x, ((1, 2), (0, 3)), "symmetric"),
            jnp.roll(jnp.tile(x, (1, 2)), 3, 1),
            jnp.repeat(x, np.array([2, 1, 0, 1]), axis=1),
            jnp.insert(jnp.delete(x, 1, 1), 0, x[:, -1], axis=1),
            jnp.moveaxis(jnp.stack([x, -x]), 0, -1),
            jnp.rot90(jnp.concatenate([x, x[:1]]), 1),
            jnp.where(x > 0, x, jnp.flip(x, 0)),
        )

    x = _data((3, 4))
    for a, b in zip(jit(f)(x), f(x)):
        _check(a, np.asarray(b))
    xs = np.stack([x, x * 2 - 1])
    batched = vmap(f)(xs)
    for i in range(2):
        for a, b in zip(batched, f(xs[i])):
            _check(a[i], np.asarray(b))


def test_symbolic_shapes():
    from polyjax_core import symbolic_dim

    b = symbolic_dim("b")
    spec = ShapeDtypeStruct((b, 3), f32)
    for fun, shape in [
        (lambda x: jnp.moveaxis(x, 0, 1), (3, b)),
        (lambda x: jnp.concatenate([x, x], 0), (2 * b, 3)),
        (lambda x: jnp.stack([x, x], 1), (b, 2, 3)),
        (lambda x: jnp.pad(x, ((0, 0), (1, 1))), (b, 5)),
        (lambda x: jnp.tile(x, (1, 2)), (b, 6)),
        (lambda x: jnp.where(x > 0, x, 0.0), (b, 3)),
        (lambda x: jnp.broadcast_to(x[:, :1], (b, 4)), (b, 4)),
    ]:
        (out,) = make_jaxpr(fun)(spec).out_avals
        assert out.shape == shape
