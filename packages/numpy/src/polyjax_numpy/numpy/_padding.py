"""`jnp.pad`: NumPy's padding modes, built from lax `pad`, slices and concatenations.

Axes are padded one after another, each on the array padded so far, as NumPy
does: the corners take the values the later axes give them. Pad widths are
static; `constant_values` and `end_values` may be traced (and are
differentiated through). The modes:

    constant      a value per side and axis (`constant_values`, default 0)
    empty         as constant with 0 (arrays are never uninitialized)
    edge          the edge element repeated
    wrap          the array repeated periodically
    reflect       mirrored without repeating the edge (`reflect_type` even or odd)
    symmetric     mirrored, repeating the edge (`reflect_type` even or odd)
    linear_ramp   a ramp from `end_values` to the edge
    maximum, minimum, mean, median
                  a statistic of the `stat_length` elements nearest each side
    a callable    NumPy's `func(vector, pad_width, iaxis, kwargs)`, applied to the
                  zero-padded vectors along each axis (under `vmap`: it must return
                  the padded vector instead of modifying it)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_interpreters.batching import vmap
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _reductions, _shape_ops, _sorting
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, linspace_along, to_result_dtype
from polyjax_numpy.numpy._manipulation import moveaxis

_ALLOWED_KWARGS = {
    "constant": {"constant_values"},
    "empty": set(),
    "edge": set(),
    "wrap": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "linear_ramp": {"end_values"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
}


def _pairs(value: Any, ndim: int, name: str) -> np.ndarray:
    """A static `value` (int, pair, or one pair per axis) as an (ndim, 2) int array."""
    host = concrete_or_error(np.asarray, value, f"The problem arose with the jnp.pad {name}.")
    if ndim == 0 and host.size == 0:  # a rank-0 array has nothing to pad
        return np.zeros((0, 2), np.int64)
    if host.dtype.kind not in "iu" and not (host.size == 0 and host.dtype.kind == "f"):
        raise TypeError(f"jnp.pad: `{name}` must be of integral type, got {host.dtype}")
    try:
        return np.broadcast_to(host, (ndim, 2)).astype(np.int64)
    except ValueError:
        raise ValueError(
            f"jnp.pad: {name} with nd={ndim} has unsupported shape {host.shape}. Valid shapes "
            f"are ({ndim}, 2), (1, 2), (2,), (1,), or ()."
        ) from None


def _value_pairs(value: Any, ndim: int, dtype: Any, name: str) -> list[list[Any]]:
    """Per-axis (before, after) scalars of `value` (which may be traced), of `dtype`."""
    arr = _u.convert(asarray(value), dtype)
    try:
        full = _u.broadcast_to(arr, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"jnp.pad: {name} with nd={ndim} has unsupported shape {_u.shape(arr)}. Valid "
            f"shapes are ({ndim}, 2), (1, 2), (2,), (1,), or ()."
        ) from None
    return [
        [_shape_ops.reshape(_shape_ops.slice(full, (i, j), (i + 1, j + 1)), ()) for j in range(2)]
        for i in range(ndim)
    ]


def _edge(x: Any, axis: int, before: bool) -> Any:
    n = _u.shape(x)[axis]
    return (
        _shape_ops.slice_in_dim(x, 0, 1, axis=axis)
        if before
        else (_shape_ops.slice_in_dim(x, n - 1, n, axis=axis))
    )


def _repeat_slice(piece: Any, axis: int, count: int) -> Any:
    """A size-1 slice repeated `count` times along `axis`."""
    shape = list(_u.shape(piece))
    shape[axis] = count
    return _u.broadcast_to(piece, tuple(shape))


def _join(before: Any, x: Any, after: Any, axis: int) -> Any:
    parts = [p for p in (before, x, after) if p is not None]
    return _shape_ops.concatenate(parts, axis) if len(parts) > 1 else x


def _check_extendable(x: Any, axis: int, widths: np.ndarray, mode: str) -> bool:
    """Whether axis `axis` needs padding; an empty axis cannot be extended by copying."""
    if not widths.any():
        return False
    if _u.shape(x)[axis] == 0:
        raise ValueError(
            f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
        )
    return True


def _pad_constant(x: Any, widths: np.ndarray, values: list[list[Any]] | None) -> Any:
    ndim = _u.ndim(x)
    zero = np.zeros((), _u.dtype(x))[()]
    if values is None:
        return _shape_ops.pad(x, zero, [(int(b), int(a), 0) for b, a in widths])
    for axis in range(ndim):
        for side, value in enumerate(values[axis]):
            if widths[axis, side]:
                config = [(0, 0, 0)] * ndim
                config[axis] = (
                    (int(widths[axis, 0]), 0, 0) if side == 0 else (0, int(widths[axis, 1]), 0)
                )
                x = _shape_ops.pad(x, value, config)
    return x


def _pad_edge(x: Any, widths: np.ndarray) -> Any:
    for axis, (b, a) in enumerate(widths):
        if _check_extendable(x, axis, np.array([b, a]), "edge"):
            before = _repeat_slice(_edge(x, axis, True), axis, int(b)) if b else None
            after = _repeat_slice(_edge(x, axis, False), axis, int(a)) if a else None
            x = _join(before, x, after, axis)
    return x


def _pad_wrap(x: Any, widths: np.ndarray) -> Any:
    for axis, (b, a) in enumerate(widths):
        if _check_extendable(x, axis, np.array([b, a]), "wrap"):
            n = _u.shape(x)[axis]
            # Enough whole copies to cover both sides, then the window that starts
            # `b` elements before a copy's start.
            copies = -(-int(b) // n) + 1 + -(-int(a) // n)
            tiled = _shape_ops.concatenate([x] * copies, axis)
            start = (-(-int(b) // n)) * n - int(b)
            x = _shape_ops.slice_in_dim(tiled, start, start + int(b) + n + int(a), axis=axis)
    return x


def _mirror_side(
    x: Any, n: int, count: int, axis: int, before: bool, offset: int, odd: bool
) -> Any:
    """`x` with `count` mirrored elements added on one side, in chunks of at most n - offset.

    The chunks mirror the array built so far (so pads longer than the axis repeat
    the pattern, as in NumPy); `offset` 1 leaves the edge out of the mirror (reflect),
    0 repeats it (symmetric). Odd reflections mirror the values about the edge.
    """
    edge = _edge(x, axis, before)
    while count > 0:
        size = min(count, n - offset)
        count -= size
        length = _u.shape(x)[axis]
        if before:
            chunk = _shape_ops.slice_in_dim(x, offset, offset + size, axis=axis)
        else:
            chunk = _shape_ops.slice_in_dim(x, length - offset - size, length - offset, axis=axis)
        chunk = _shape_ops.rev(chunk, (axis,))
        if odd:
            two_edge = lax.add(edge, edge)
            chunk = lax.sub(_repeat_slice(two_edge, axis, size), chunk)
            edge = _edge(chunk, axis, before)
        x = _join(chunk, x, None, axis) if before else _join(None, x, chunk, axis)
    return x


def _pad_mirror(x: Any, widths: np.ndarray, mode: str, reflect_type: str) -> Any:
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    odd = reflect_type == "odd"
    offset = 1 if mode == "reflect" else 0
    for axis, (b, a) in enumerate(widths):
        if not _check_extendable(x, axis, np.array([b, a]), mode):
            continue
        n = _u.shape(x)[axis]
        if n == 1 and offset:  # nothing to mirror but the edge itself
            before = _repeat_slice(x, axis, int(b)) if b else None
            x = _join(before, x, _repeat_slice(x, axis, int(a)) if a else None, axis)
            continue
        x = _mirror_side(x, n, int(b), axis, True, offset, odd)
        x = _mirror_side(x, n, int(a), axis, False, offset, odd)
    return x


def _pad_linear_ramp(x: Any, widths: np.ndarray, end_values: Any) -> Any:
    dtype = _u.dtype(x)
    compute = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    ends = _value_pairs(end_values, _u.ndim(x), compute, "end_values")
    for axis, (b, a) in enumerate(widths):
        if not _check_extendable(x, axis, np.array([b, a]), "linear_ramp"):
            continue
        sides = []
        for before, count in ((True, int(b)), (False, int(a))):
            if not count:
                sides.append(None)
                continue
            edge = _shape_ops.squeeze(_edge(x, axis, before), (axis,))
            end = ends[axis][0 if before else 1]
            start = _shape_ops.broadcast(end, _u.shape(edge))
            ramp, _ = linspace_along(start, _u.convert(edge, compute), count, False, axis)
            ramp = to_result_dtype(ramp, dtype)
            sides.append(ramp if before else _shape_ops.rev(ramp, (axis,)))
        x = _join(sides[0], x, sides[1], axis)
    return x


def _median(x: Any, axis: int) -> Any:
    n = _u.shape(x)[axis]
    s = _sorting.sort(x, dimension=axis)
    lo = _shape_ops.slice_in_dim(s, (n - 1) // 2, (n - 1) // 2 + 1, axis=axis)
    hi = _shape_ops.slice_in_dim(s, n // 2, n // 2 + 1, axis=axis)
    return lax.div(lax.add(lo, hi), np.asarray(2, _u.dtype(x))[()])


def _statistic(chunk: Any, axis: int, mode: str) -> Any:
    """The statistic of `chunk` along `axis`, keeping that axis (size 1)."""
    dtype = _u.dtype(chunk)
    if mode in ("maximum", "minimum"):
        reduce = _reductions.reduce_max if mode == "maximum" else _reductions.reduce_min
        return _shape_ops.expand_dims(reduce(chunk, (axis,)), (axis,))
    inexact = dtypes.issubdtype(dtype, np.inexact)
    compute = dtype if inexact else dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    chunk = _u.convert(chunk, compute)
    if mode == "mean":
        n = np.asarray(_u.shape(chunk)[axis], compute)[()]
        stat = lax.div(_shape_ops.expand_dims(_reductions.reduce_sum(chunk, (axis,)), (axis,)), n)
    else:
        stat = _median(chunk, axis)
    if not inexact:  # NumPy rounds integer statistics (half to even)
        stat = lax.round(stat, lax.RoundingMethod.TO_NEAREST_EVEN)
    return _u.convert(stat, dtype)


def _pad_stats(x: Any, widths: np.ndarray, mode: str, stat_length: Any) -> Any:
    ndim = _u.ndim(x)
    lengths = None if stat_length is None else _pairs(stat_length, ndim, "stat_length")
    if lengths is not None and (lengths < 0).any():
        raise ValueError("jnp.pad: stat_length must not be negative")
    for axis, (b, a) in enumerate(widths):
        if not _check_extendable(x, axis, np.array([b, a]), mode):
            continue
        n = _u.shape(x)[axis]
        sides = []
        for side, count in enumerate((int(b), int(a))):
            if not count:
                sides.append(None)
                continue
            length = n if lengths is None else min(int(lengths[axis, side]), n)
            if length == 0:
                raise ValueError(f"jnp.pad: stat_length of 0 yields no value for padding ({mode})")
            chunk = (
                _shape_ops.slice_in_dim(x, 0, length, axis=axis)
                if side == 0
                else _shape_ops.slice_in_dim(x, n - length, n, axis=axis)
            )
            sides.append(_repeat_slice(_statistic(chunk, axis, mode), axis, count))
        x = _join(sides[0], x, sides[1], axis)
    return x


def _pad_function(x: Any, widths: np.ndarray, func: Callable[..., Any], kwargs: dict) -> Any:
    x = _pad_constant(x, widths, None)
    ndim = _u.ndim(x)
    for axis in range(ndim):
        moved = moveaxis(x, axis, -1)
        shape = _u.shape(moved)
        rows = _shape_ops.reshape(moved, (int(np.prod(shape[:-1])), shape[-1]))
        width = tuple(int(w) for w in widths[axis])

        def apply(vector: Any, axis: int = axis, width: tuple = width) -> Any:
            out = func(vector, width, axis, kwargs)
            if out is None:
                raise ValueError(
                    "jnp.pad: the padding function must return the padded vector (JAX arrays "
                    "cannot be modified in place)"
                )
            return asarray(out, dtype=_u.dtype(vector))

        if _u.shape(rows)[0]:
            rows = vmap(apply)(rows)
        x = moveaxis(_shape_ops.reshape(rows, shape), -1, axis)
    return x


def pad(
    array: Any, pad_width: Any, mode: str | Callable[..., Any] = "constant", **kwargs: Any
) -> Any:
    """`array` padded along each axis, as `mode` says.

    Args:
      array: the array.
      pad_width: the number of elements added before and after each axis: an int,
        a pair, or one pair per axis (static, non-negative).
      mode: one of "constant", "empty", "edge", "wrap", "reflect", "symmetric",
        "linear_ramp", "maximum", "minimum", "mean", "median", or a function
        (see the module docs).
      **kwargs: the mode's options: `constant_values` (constant; scalars or pairs per
        axis, may be traced), `end_values` (linear_ramp), `stat_length` (the
        statistics; None means the whole axis), `reflect_type` ("even" or "odd").

    Returns:
      The padded array, of `array`'s dtype.

    Raises:
      ValueError: an unknown mode or an option the mode does not take, negative or
        malformed widths, or a mode that copies from an empty axis.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.pad(jnp.array([1, 2, 3]), (2, 1), mode="reflect")
      Array([3, 2, 1, 2, 3, 2], dtype=int32)
    """
    _u.check_arraylike("pad", array)
    widths = _pairs(pad_width, _u.ndim(array), "pad_width")
    if (widths < 0).any():
        raise ValueError(f"jnp.pad: pad_width must not be negative, got {pad_width}")
    if callable(mode):
        return _pad_function(array, widths, mode, kwargs)
    if mode not in _ALLOWED_KWARGS:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - _ALLOWED_KWARGS[mode]
    if unsupported:
        raise ValueError(f"Unsupported keyword arguments for mode '{mode}': {sorted(unsupported)}")
    if not widths.any():
        return _u.as_array(array)
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0)
        if isinstance(_u.dtype(array), dtypes.ExtendedDType):
            # The padding value is a number, which no key array can hold (JAX's error).
            if isinstance(_u.dtype(values), dtypes.ExtendedDType):
                raise ValueError(
                    "jnp.pad: constant padding of key arrays is not supported; use "
                    "mode='edge' or 'wrap', or jnp.concatenate"
                )
            raise ValueError(
                f"Cannot convert_element_type from {_u.dtype(values).name} to {_u.dtype(array)}"
            )
        if mode == "empty" or (isinstance(values, int | float | complex) and values == 0):
            return _pad_constant(array, widths, None)
        return _pad_constant(
            array, widths, _value_pairs(values, _u.ndim(array), _u.dtype(array), "constant_values")
        )
    if mode == "edge":
        return _pad_edge(array, widths)
    if mode == "wrap":
        return _pad_wrap(array, widths)
    if mode in ("reflect", "symmetric"):
        return _pad_mirror(array, widths, mode, kwargs.get("reflect_type", "even"))
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, widths, kwargs.get("end_values", 0))
    return _pad_stats(array, widths, mode, kwargs.get("stat_length"))
