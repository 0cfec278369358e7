"""Shape manipulation and dtype casts of `jnp`: `reshape`, `transpose`, `moveaxis`,
`broadcast_to`, `flip`, `roll`, `tile`, `repeat`, ...

These rearrange an array without computing on its values; each becomes a few
lax structural primitives (`reshape`, `transpose`, `broadcast_in_dim`, `rev`,
`slice`, `concatenate`, and `gather` where elements are picked by an index
array), with NumPy's conventions for `-1` in shapes, negative axes and
`order="F"`. Shapes, axes and repeat counts are static; the few arguments that
may be traced say so (`roll`'s shift, `repeat`'s repeats with a static
`total_repeat_length`).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.errors import ConcretizationTypeError
from polyjax_core.tracing import Tracer
from polyjax_numpy.lax import _bits, _complex, _cumulative, _shape_ops, _slicing
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int, static_shape


def view(x: Any, dtype: Any = None, type: None = None) -> Any:  # noqa: A002 (NumPy's name)
    """`x.view(dtype)`: the same bytes reinterpreted as `dtype` (NumPy's `ndarray.view`).

    When the itemsize changes, the last axis grows or shrinks by the ratio of
    the itemsizes (its size in bytes must be a multiple of the new itemsize).
    Bool is viewed as its one byte; complex as pairs of floats.

    Args:
      x: an array.
      dtype: the dtype to reinterpret as; None returns `x` unchanged.
      type: NumPy's array subclass argument; only None is supported.

    Returns:
      An array of `dtype` holding the bytes of `x`.

    Raises:
      ValueError: a 0-d array changes itemsize, or the last axis's size in bytes is
        not a multiple of the new itemsize.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.arange(2, dtype=jnp.int32).view(jnp.int8)
      Array([0, 0, 0, 0, 1, 0, 0, 0], dtype=int8)
    """
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    x = asarray(x)
    if dtype is None:
        return x
    dtypes.check_user_dtype_supported(dtype, "view")
    dtype = dtypes.canonicalize_dtype(dtype)
    old = np.dtype(x.dtype)
    if old == dtype:
        return x
    if old.itemsize != dtype.itemsize:
        if x.ndim == 0:
            raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
        if (x.shape[-1] * old.itemsize) % dtype.itemsize:
            raise ValueError(
                "When changing to a larger dtype, its size must be a divisor of the total size "
                "in bytes of the last axis of the array."
            )
    # Bool and complex go through their byte/float pairs (bitcast takes neither).
    if old == np.dtype(bool):
        x, old = _u.convert(x, np.dtype(np.uint8), False), np.dtype(np.uint8)
    if old.kind == "c":
        part = np.dtype(f"float{old.itemsize * 4}")
        parts = [_shape_ops.reshape(p(x), (*x.shape, 1)) for p in (_complex.real, _complex.imag)]
        pairs = _shape_ops.concatenate(parts, x.ndim)
        x, old = _shape_ops.reshape(pairs, (*x.shape[:-1], 2 * x.shape[-1])), part
    if dtype == np.dtype(bool):
        return lax.ne(view(x, np.uint8), _u.convert(0, np.dtype(np.uint8), False))
    if dtype.kind == "c":
        floats = view(x, np.dtype(f"float{dtype.itemsize * 4}"))
        pairs = _shape_ops.reshape(floats, (*floats.shape[:-1], floats.shape[-1] // 2, 2))
        return _complex.complex(pairs[..., 0], pairs[..., 1])
    if old.itemsize == dtype.itemsize:
        return _bits.bitcast_convert_type(x, dtype)
    if old.itemsize > dtype.itemsize:  # the bitcast adds a trailing axis of the ratio
        out = _bits.bitcast_convert_type(x, dtype)
        return _shape_ops.reshape(out, (*x.shape[:-1], x.shape[-1] * out.shape[-1]))
    ratio = dtype.itemsize // old.itemsize
    grouped = _shape_ops.reshape(x, (*x.shape[:-1], x.shape[-1] // ratio, ratio))
    return _bits.bitcast_convert_type(grouped, dtype)


def byteswap(x: Any) -> Any:
    """`x.byteswap()`: every element with its bytes in reverse order (NumPy's `ndarray.byteswap`).

    Complex elements swap the bytes of their real and imaginary parts separately.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array([1, 258], jnp.int16).byteswap()
      Array([256, 513], dtype=int16)
    """
    x = asarray(x)
    dtype = np.dtype(x.dtype)
    if dtype.kind == "c":
        part = np.dtype(f"float{dtype.itemsize * 4}")
        return view(byteswap(view(x, part)), dtype)
    if dtype.itemsize == 1:
        return x
    as_bytes = _bits.bitcast_convert_type(x, np.dtype(np.uint8))  # a trailing axis of bytes
    swapped = _shape_ops.rev(as_bytes, (x.ndim,))
    return _bits.bitcast_convert_type(swapped, dtype)


def flat(x: Any) -> Any:
    """`x.flat`, which JAX arrays do not have: raises, pointing to `flatten`."""
    raise NotImplementedError(
        "JAX Arrays do not implement the arr.flat property: consider arr.flatten() instead."
    )


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """`x` converted to `dtype` (complex to real keeps the real part, with a warning).

    Args:
      x: an array.
      dtype: the target dtype (canonicalized: float64 becomes float32 unless x64 is on).
      copy: accepted for NumPy compatibility; arrays are immutable, so it changes nothing.
      device: not supported yet.

    Returns:
      A strongly typed array of `dtype`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.astype(jnp.arange(3), jnp.float32)
      Array([0., 1., 2.], dtype=float32)
    """
    x = _u.from_protocol(x)  # JAX converts `__jax_array__` here
    if device is not None:
        raise NotImplementedError("astype(device=...) is not supported yet")
    if dtype is None:
        dtype = dtypes.float_
    dtypes.check_user_dtype_supported(dtype, "astype")
    dtype = dtypes.canonicalize_dtype(dtype, allow_extended_dtype=True)
    x_dtype = dtypes.dtype(x, canonicalize=True)
    if isinstance(dtype, dtypes.ExtendedDType) or isinstance(x_dtype, dtypes.ExtendedDType):
        # A key array casts to its own dtype only (optax's `astype(where(c, k1, k2),
        # k1.dtype)`), as in JAX.
        if dtype != x_dtype:
            raise ValueError(f"Cannot convert_element_type from {x_dtype} to {dtype}")
        return x
    if _u.is_complex(x) and not dtypes.issubdtype(dtype, np.complexfloating):
        # NumPy's rule, which JAX follows: keep the real part, and say so.
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
        x = _complex.real(x)
    return _u.as_array(_u.convert(x, dtype, False))


def reshape(
    a: Any,
    shape: Any = None,
    order: str = "C",
    *,
    newshape: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`a` with a new shape holding the same elements (one entry may be -1).

    Args:
      a: an array.
      shape: an int or a sequence of ints (or symbolic dimensions); one may be -1.
      order: "C" (row-major, the default) or "F" (column-major).
      newshape: NumPy's older name for `shape`.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.reshape(jnp.arange(6), (2, -1)).shape
      (2, 3)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    if newshape is not None:
        if shape is not None:
            raise TypeError("reshape() got both 'shape' and 'newshape'; pass only 'shape'.")
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    old = _u.shape(a)
    new = _shape_ops._compute_newshape(old, shape)
    if order == "C":
        return _shape_ops.reshape(a, new, out_sharding=out_sharding)
    if order == "F":
        dims = tuple(range(len(old)))[::-1]
        return _os.finish(transpose(_shape_ops.reshape(a, new[::-1], dims)), out_sharding)
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """`a` with its axes permuted (reversed when `axes` is None).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.transpose(jnp.zeros((2, 3, 4)), (1, 0, 2)).shape
      (3, 2, 4)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    ndim = _u.ndim(a)
    perm = tuple(range(ndim))[::-1] if axes is None else tuple(axes)
    if len(perm) != ndim:
        raise ValueError(
            f"axes {tuple(axes)} don't match the array's {ndim} dimensions (shape {_u.shape(a)})"
        )
    perm = tuple(_u.canonicalize_axis(ax, ndim) for ax in perm)
    return _shape_ops.transpose(a, perm)


def matrix_transpose(x: Any, /) -> Any:
    """`x` with its last two axes swapped."""
    ndim = _u.ndim(x)
    if ndim < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim}"
        )
    return _shape_ops.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """`a` without the given size-1 axes (all of them when `axis` is None)."""
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    shape = _u.shape(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(shape) if type(d) is int and d == 1)
    else:
        dims = _u.reduction_axes(axis, len(shape))
    return _shape_ops.squeeze(a, dims)


def ravel(a: Any, order: str = "C", *, out_sharding: Any = None) -> Any:
    """`a` flattened to one dimension, in row-major ("C") or column-major ("F") order.

    Args:
      a: an array.
      order: "C" or "F".
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Raises:
      ValueError: an unknown `order` (NotImplementedError for "A" and "K").

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ravel(jnp.array([[1, 2], [3, 4]]), order="F")
      Array([1, 3, 2, 4], dtype=int32)
    """
    shape = _u.shape(a)
    if order == "C":
        return _shape_ops.reshape(a, (sd.shape_size(shape),), out_sharding=out_sharding)
    if order == "F":
        return ravel(transpose(a), out_sharding=out_sharding)
    if order in ("A", "K"):
        raise NotImplementedError(f"Ravel not implemented for order={order!r}.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def flat_or_axis(a: Any, axis: Any) -> tuple[Any, int]:
    """`a` and `axis` made non-negative; with `axis` None (NumPy's "flattened array"),
    `a` raveled and axis 0.
    """
    if axis is None:
        return ravel(a), 0
    return a, _u.canonicalize_axis(axis, _u.ndim(a))


def real(val: Any, /) -> Any:
    """The real part (a real, integer or bool array is its own real part)."""
    return _complex.real(val) if _u.is_complex(val) else _u.as_array(val)


def imag(val: Any, /) -> Any:
    """The imaginary part (zeros of the array's own dtype for non-complex arrays)."""
    if _u.is_complex(val):
        return _complex.imag(val)
    return _shape_ops.full_like(val, 0)


def conjugate(x: Any, /) -> Any:
    """The complex conjugate; unlike `lax.conj`, real arrays are returned untouched."""
    return _complex.conj(x) if _u.is_complex(x) else _u.as_array(x)


conj = conjugate


# ---------------------------------------------------------------------------
# Permuting axes


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """`a` with its axes permuted as `axes` says (the Array API's `transpose`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.permute_dims(jnp.zeros((2, 3, 4)), (2, 0, 1)).shape
      (4, 2, 3)
    """
    return transpose(a, axes)


def _axis_tuple(axis: Any, what: str) -> tuple[int, ...]:
    if isinstance(axis, Sequence) and not isinstance(axis, str):
        return tuple(concrete_int(a, what) for a in axis)
    return (concrete_int(axis, what),)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """`a` with the axes `source` moved to the positions `destination`, the others in order.

    Raises:
      ValueError: `source` and `destination` differ in length, repeat an axis or are out
        of range.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.moveaxis(jnp.zeros((2, 3, 4)), 0, -1).shape
      (3, 4, 2)
    """
    _u.check_arraylike("moveaxis", a)
    ndim = _u.ndim(a)
    src = _u.reduction_axes(_axis_tuple(source, "'source' argument of jnp.moveaxis"), ndim)
    dst = _u.reduction_axes(
        _axis_tuple(destination, "'destination' argument of jnp.moveaxis"), ndim
    )
    if len(src) != len(dst):
        raise ValueError(
            "Inconsistent number of elements: "
            f"{len(src)} vs {len(dst)} (source={source}, destination={destination})"
        )
    perm = [i for i in range(ndim) if i not in src]
    for d, src_axis in sorted(zip(dst, src)):
        perm.insert(d, src_axis)
    if perm == list(range(ndim)):
        return _u.as_array(a)
    return _shape_ops.transpose(a, tuple(perm))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """`a` with the axes `axis1` and `axis2` exchanged.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.swapaxes(jnp.zeros((2, 3, 4)), 0, 2).shape
      (4, 3, 2)
    """
    _u.check_arraylike("swapaxes", a)
    ndim = _u.ndim(a)
    perm = list(range(ndim))
    i, j = _u.canonicalize_axis(axis1, ndim), _u.canonicalize_axis(axis2, ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _shape_ops.transpose(a, tuple(perm))


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """`a` with `axis` moved to lie before position `start` (NumPy's older `moveaxis`).

    Raises:
      ValueError: `axis` or `start` is out of range (`start` may equal `a.ndim`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.rollaxis(jnp.zeros((2, 3, 4)), 2).shape
      (4, 2, 3)
    """
    _u.check_arraylike("rollaxis", a)
    ndim = _u.ndim(a)
    axis = _u.canonicalize_axis(concrete_int(axis, "'axis' argument of jnp.rollaxis"), ndim)
    start = concrete_int(start, "'start' argument of jnp.rollaxis")
    if not -ndim <= start <= ndim:
        raise ValueError(f"start={start} must satisfy {-ndim} <= start <= {ndim}")
    if start < 0:
        start += ndim
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """`a` with size-1 axes inserted at the positions `axis` of the result.

    Raises:
      ValueError: an axis is repeated or out of range for the result's rank.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.expand_dims(jnp.zeros(3), (0, 2)).shape
      (1, 3, 1)
    """
    _u.check_arraylike("expand_dims", a)
    return _shape_ops.expand_dims(a, _axis_tuple(axis, "'axis' argument of jnp.expand_dims"))


def _atleast(arys: tuple[Any, ...], fix: Any) -> Any:
    out = [fix(asarray(a)) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """Each input as an array of at least one dimension (scalars become shape (1,)).

    Returns:
      An array for one input, a list of arrays for several.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.atleast_1d(1.0).shape
      (1,)
    """
    return _atleast(arys, lambda x: _shape_ops.broadcast_to_rank(x, 1))


def atleast_2d(*arys: Any) -> Any:
    """Each input as an array of at least two dimensions (leading size-1 axes added).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.atleast_2d(jnp.arange(3)).shape
      (1, 3)
    """
    return _atleast(arys, lambda x: _shape_ops.broadcast_to_rank(x, 2))


def _to_3d(x: Any) -> Any:
    ndim = _u.ndim(x)
    if ndim == 0:
        return _shape_ops.expand_dims(x, (0, 1, 2))
    if ndim == 1:
        return _shape_ops.expand_dims(x, (0, 2))
    if ndim == 2:
        return _shape_ops.expand_dims(x, (2,))
    return x


def atleast_3d(*arys: Any) -> Any:
    """Each input with at least three dimensions: (N,) becomes (1, N, 1), (M, N) (M, N, 1).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.atleast_3d(jnp.zeros((2, 3))).shape
      (2, 3, 1)
    """
    return _atleast(arys, _to_3d)


# ---------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes: Any) -> tuple[Any, ...]:
    """The shape that arrays of `shapes` broadcast to (NumPy's rules).

    Raises:
      ValueError: the shapes do not broadcast together.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.broadcast_shapes((3, 1), (4,))
      (3, 4)
    """
    if not shapes:
        return ()
    return sd.broadcast_shapes(*(static_shape(s, "jnp.broadcast_shapes") for s in shapes))


def broadcast_to(array: Any, shape: Any, *, out_sharding: Any = None) -> Any:
    """`array` broadcast to `shape`: size-1 and missing leading axes are repeated.

    Args:
      array: an array or array-like.
      shape: the result's shape.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Raises:
      ValueError: `array`'s shape does not broadcast to `shape`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.broadcast_to(jnp.arange(3), (2, 3))
      Array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    _u.check_arraylike("broadcast_to", array)
    shape = static_shape(shape, "jnp.broadcast_to shape")
    x = array if isinstance(array, _u.ARRAY_TYPES) else asarray(array)
    return _u.broadcast_to(x, shape, out_sharding)


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arrays broadcast against one another (to their common shape).

    Example:
      >>> import polyjax.numpy as jnp
      >>> [x.shape for x in jnp.broadcast_arrays(jnp.zeros(3), jnp.zeros((2, 1)))]
      [(2, 3), (2, 3)]
    """
    _u.check_arraylike("broadcast_arrays", *args)
    shape = sd.broadcast_shapes(*(_u.shape(x) for x in args))
    return [broadcast_to(x, shape) for x in args]


# ---------------------------------------------------------------------------
# Reversing and rotating


def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    """`m` with the order of its elements reversed along `axis` (all axes if None).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.flip(jnp.arange(3))
      Array([2, 1, 0], dtype=int32)
    """
    m = _u.from_protocol(m)  # JAX converts `__jax_array__` here
    _u.check_arraylike("flip", m)
    axes = _u.reduction_axes(axis, _u.ndim(m))
    return _shape_ops.rev(m, axes) if axes else _u.as_array(m)


def fliplr(m: Any) -> Any:
    """`m` reversed along axis 1 (left/right); `m` must have at least 2 dimensions.

    Raises:
      ValueError: `m` has fewer than 2 dimensions.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fliplr(jnp.array([[1, 2]]))
      Array([[2, 1]], dtype=int32)
    """
    _u.check_arraylike("fliplr", m)
    if _u.ndim(m) < 2:
        raise ValueError(f"fliplr requires an array of at least 2 dimensions, got {_u.shape(m)}")
    return _shape_ops.rev(m, (1,))


def flipud(m: Any) -> Any:
    """`m` reversed along axis 0 (up/down); `m` must have at least 1 dimension.

    Raises:
      ValueError: `m` is a scalar.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.flipud(jnp.array([1, 2]))
      Array([2, 1], dtype=int32)
    """
    m = _u.from_protocol(m)  # JAX converts `__jax_array__` here
    _u.check_arraylike("flipud", m)
    if _u.ndim(m) < 1:
        raise ValueError("flipud requires an array of at least 1 dimension, got a scalar")
    return _shape_ops.rev(m, (0,))


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """`m` rotated by 90 degrees `k` times in the plane of `axes` (from the first axis
    towards the second).

    Raises:
      ValueError: `axes` are not two different axes of `m`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.rot90(jnp.array([[1, 2], [3, 4]]))
      Array([[2, 4],
             [1, 3]], dtype=int32)
    """
    _u.check_arraylike("rot90", m)
    k = concrete_int(k, "'k' argument of jnp.rot90") % 4
    ndim = _u.ndim(m)
    if len(axes) != 2:
        raise ValueError(f"len(axes) must be 2, got axes={axes}")
    ax0, ax1 = (_u.canonicalize_axis(a, ndim) for a in axes)
    if ax0 == ax1:
        raise ValueError(f"Axes must be different, got axes={axes}")
    if k == 0:
        return _u.as_array(m)
    if k == 2:
        return _shape_ops.rev(m, (ax0, ax1))
    if k == 1:
        return swapaxes(_shape_ops.rev(m, (ax1,)), ax0, ax1)
    return _shape_ops.rev(swapaxes(m, ax0, ax1), (ax1,))


def _roll_static(x: Any, shift: int, axis: int) -> Any:
    n = _u.shape(x)[axis]
    shift %= n
    if shift == 0:
        return x
    head = _shape_ops.slice_in_dim(x, n - shift, n, axis=axis)
    tail = _shape_ops.slice_in_dim(x, 0, n - shift, axis=axis)
    return _shape_ops.concatenate([head, tail], axis)


def _roll_dynamic(x: Any, shift: Any, axis: int) -> Any:
    # The window of length n starting at (n - shift) mod n in x twice over.
    n = _u.shape(x)[axis]
    shift = _u.convert(shift, np.dtype(np.int32))
    size = np.int32(n) if type(n) is int else n  # a symbolic size is a weak int operand
    start = lax.rem(lax.sub(size, lax.rem(shift, size)), size)
    doubled = _shape_ops.concatenate([x, x], axis)
    return _slicing.dynamic_slice_in_dim(doubled, start, n, axis)


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """`a` with its elements shifted cyclically by `shift` along `axis`.

    Args:
      a: an array.
      shift: an int or a sequence of ints (one per axis), which may be traced.
      axis: an int or a sequence of ints (broadcast against `shift`); if None, the
        flattened array is rolled and reshaped back.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.roll(jnp.arange(5), 2)
      Array([3, 4, 0, 1, 2], dtype=int32)
    """
    _u.check_arraylike("roll", a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), _u.shape(a))
    ndim = _u.ndim(a)
    axes = list(_axis_tuple(axis, "'axis' argument of jnp.roll"))
    shifts = _static_or_traced_ints(shift)
    if not isinstance(shifts, tuple):  # traced: one scalar per entry
        if _u.ndim(shifts) > 1:
            raise ValueError(f"jnp.roll: shift must be a scalar or 1-D, got {_u.shape(shifts)}")
        shifts = (
            tuple(_slicing.index_in_dim(shifts, i, 0, False) for i in range(_u.shape(shifts)[0]))
            if _u.ndim(shifts)
            else (shifts,)
        )
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(
            f"jnp.roll: shift and axis must have the same length (or length 1), got "
            f"{len(shifts)} shifts and axes {tuple(axes)}"
        )
    out = a
    for s, ax in zip(shifts, axes):
        ax = _u.canonicalize_axis(ax, ndim)
        if sd.definitely_equal(_u.shape(a)[ax], 0):
            continue
        out = _roll_static(out, s, ax) if sd.is_dim(s) else _roll_dynamic(out, s, ax)
    return out


def _static_or_traced_ints(value: Any) -> Any:
    """`roll`'s shift: a tuple of Python ints (or symbolic dimensions) when static; else
    the traced integer array."""
    if sd.is_symbolic_dim(value):
        return (value,)
    if isinstance(value, list | tuple) and any(map(sd.is_symbolic_dim, value)):
        return tuple(v if sd.is_symbolic_dim(v) else operator.index(v) for v in value)
    host = concrete_or_none(value)
    dtype = _u.dtype(value) if host is None else host.dtype
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"jnp.roll: shift must be integer, got {dtype}")
    if host is None:
        return value
    if host.ndim > 1:
        raise ValueError(f"jnp.roll: shift must be a scalar or 1-D, got shape {host.shape}")
    return tuple(int(v) for v in host.ravel())


# ---------------------------------------------------------------------------
# Repeating


def tile(A: Any, reps: int | Sequence[int]) -> Any:
    """`A` repeated `reps[i]` times along each axis `i` (NumPy's alignment of ranks).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.tile(jnp.array([1, 2]), (2, 2))
      Array([[1, 2, 1, 2],
             [1, 2, 1, 2]], dtype=int32)
    """
    _u.check_arraylike("tile", A)
    reps_t = _axis_tuple(reps, "'reps' argument of jnp.tile")
    if any(r < 0 for r in reps_t):
        raise ValueError(f"jnp.tile: reps must be non-negative, got {reps}")
    shape = _u.shape(A)
    ndim = max(len(shape), len(reps_t))
    shape = (1,) * (ndim - len(shape)) + tuple(shape)
    reps_t = (1,) * (ndim - len(reps_t)) + reps_t
    # (d0, d1) -> (1, d0, 1, d1) -> broadcast (r0, d0, r1, d1) -> (r0*d0, r1*d1)
    x = _shape_ops.reshape(A, tuple(v for d in shape for v in (1, d)))
    x = _shape_ops.broadcast_in_dim(
        x, tuple(v for r, d in zip(reps_t, shape) for v in (r, d)), tuple(range(2 * ndim))
    )
    return _shape_ops.reshape(x, tuple(r * d for r, d in zip(reps_t, shape)))


def take_axis(x: Any, indices: Any, axis: int, mode: str = "promise_in_bounds") -> Any:
    """`x` indexed along `axis` by an integer array: that axis becomes `indices`' axes.

    A private helper (one `gather`) for the functions that pick elements by position;
    `indices` may be a NumPy array (a constant) or traced.
    """
    shape = _u.shape(x)
    ndim = len(shape)
    axis = _u.canonicalize_axis(axis, ndim)
    if isinstance(indices, np.ndarray):
        indices = indices.astype(np.int32)
    idx_shape = _u.shape(indices)
    k = len(idx_shape)
    dnums = _slicing.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, ndim - 1 + k)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    slice_sizes = tuple(1 if i == axis else d for i, d in enumerate(shape))
    return _slicing.gather(x, _shape_ops.expand_dims(indices, (k,)), dnums, slice_sizes, mode=mode)


def concrete_or_none(x: Any) -> np.ndarray | None:
    """`x` as a NumPy array, or None for a tracer whose value is unknown."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    return np.asarray(x)


def _repeat_indices_traced(repeats: Any, length: int) -> Any:
    """The source index of each of `length` outputs, for traced per-element `repeats`."""
    # A 1 where each element's run starts (several for zero repeats), summed up.
    n = _u.shape(repeats)[0]
    repeats = _u.convert(repeats, np.dtype(np.int32))
    starts = lax.sub(_cumulative.cumsum(repeats, 0), repeats)
    marks = _slicing.scatter_add(
        _shape_ops.full((length,), np.int32(0)),
        _shape_ops.expand_dims(starts, (1,)),
        _shape_ops.full((n,), np.int32(1)),
        _slicing.ScatterDimensionNumbers((), (0,), (0,)),
        mode="drop",
    )
    return lax.sub(_cumulative.cumsum(marks, 0), np.int32(1))


@_os.replicated_inside
def repeat(
    a: Any,
    repeats: Any,
    axis: int | None = None,
    *,
    total_repeat_length: int | None = None,
    out_sharding: Any = None,
) -> Any:
    """Each element of `a` repeated `repeats` times along `axis`.

    Args:
      a: an array (flattened first when `axis` is None).
      repeats: an int, or one int per element along `axis`. It may be traced only
        if `total_repeat_length` is given.
      axis: the axis to repeat along.
      total_repeat_length: the static length of the result along `axis`; longer
        results are cut, shorter ones continue with the last element.
      out_sharding: the result's sharding (explicit mode): computed on replicated
        operands, then resharded, as in JAX.

    Raises:
      ConcretizationTypeError: `repeats` is traced and `total_repeat_length` is None.
      ValueError: `repeats` is negative or of the wrong length.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.repeat(jnp.array([1, 2]), jnp.array([1, 2]))
      Array([1, 2, 2], dtype=int32)
    """
    _u.check_arraylike("repeat", a)
    a, axis = flat_or_axis(a, axis)
    n = _u.shape(a)[axis]
    if total_repeat_length is not None:
        total_repeat_length = concrete_int(
            total_repeat_length, "'total_repeat_length' argument of jnp.repeat"
        )
    reps = concrete_or_none(repeats)
    if reps is None:
        if total_repeat_length is None:
            raise ConcretizationTypeError(
                repeats,
                "jnp.repeat with a traced 'repeats' needs a static 'total_repeat_length' "
                "(the result's size must be known when tracing).",
            )
        if not _u.issubdtype_of(repeats, np.integer):
            raise TypeError(f"jnp.repeat: repeats must be integer, got {_u.dtype(repeats)}")
        if _u.ndim(repeats) == 0 or _u.shape(repeats) == (1,):
            dims = (0,) if _u.ndim(repeats) else ()
            repeats = _shape_ops.broadcast_in_dim(repeats, (n,), dims)
        if _u.shape(repeats) != (n,):
            raise ValueError(
                f"jnp.repeat: repeats must be a scalar or have length {n} (the size of axis "
                f"{axis}), got shape {_u.shape(repeats)}"
            )
        if n == 0:
            return _shape_ops.slice_in_dim(a, 0, 0, axis=axis)
        return take_axis(a, _repeat_indices_traced(repeats, total_repeat_length), axis)
    if reps.dtype.kind not in "iu":
        raise TypeError(f"jnp.repeat: repeats must be integer, got {reps.dtype}")
    if reps.ndim > 1 or (reps.ndim == 1 and reps.shape[0] not in (1, n)):
        raise ValueError(
            f"jnp.repeat: repeats must be a scalar or have length {n} (the size of axis "
            f"{axis}), got shape {reps.shape}"
        )
    if (reps < 0).any():
        raise ValueError(f"jnp.repeat: repeats may not contain negative values, got {reps}")
    if reps.size == 1 and total_repeat_length is None:
        # The same count for every element: a broadcast along a new axis, no gather.
        r = int(reps.ravel()[0])
        shape = _u.shape(a)
        x = _shape_ops.expand_dims(a, (axis + 1,))
        x = _shape_ops.broadcast_in_dim(
            x, (*shape[: axis + 1], r, *shape[axis + 1 :]), tuple(range(len(shape) + 1))
        )
        return _shape_ops.reshape(x, (*shape[:axis], shape[axis] * r, *shape[axis + 1 :]))
    idx = np.repeat(np.arange(n), np.broadcast_to(reps.ravel(), (n,)))
    if total_repeat_length is not None:
        if n == 0:
            return _shape_ops.slice_in_dim(a, 0, 0, axis=axis)
        fill = idx[-1] if idx.size else n - 1
        idx = np.concatenate([idx, np.full(max(total_repeat_length - idx.size, 0), fill)])
        idx = idx[:total_repeat_length]
    return take_axis(a, idx, axis)


def resize(a: Any, new_shape: Any) -> Any:
    """An array of `new_shape` filled with the elements of `a` in order, cyclically.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.resize(jnp.array([1, 2, 3]), (2, 2))
      Array([[1, 2],
             [3, 1]], dtype=int32)
    """
    _u.check_arraylike("resize", a)
    new_shape = static_shape(new_shape, "'new_shape' argument of jnp.resize")
    flat = ravel(a)
    size = _u.shape(flat)[0]
    new_size = int(np.prod(new_shape))
    if size == 0 or new_size == 0:
        return _shape_ops.full(new_shape, np.zeros((), _u.dtype(a))[()])
    reps = -(-new_size // size)
    flat = _shape_ops.slice_in_dim(tile(flat, reps), 0, new_size, axis=0)
    return _shape_ops.reshape(flat, new_shape)
