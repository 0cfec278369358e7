"""Bits in bytes: `packbits` and `unpackbits`.

`packbits` reads each element as a bit (nonzero is 1), pads the axis with zero
bits to a multiple of 8 and packs each group of 8 into a `uint8`, most
significant bit first (`bitorder="big"`) or last ("little"). `unpackbits` is
its inverse; `count` keeps that many bits (a negative count drops bits from
the end; more bits than present are padded with zeros).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import moveaxis, ravel

_U8 = np.dtype(np.uint8)


def _shifts(bitorder: str, name: str) -> np.ndarray:
    """The shift of each bit of a byte, in the order the bits are listed."""
    if bitorder not in ("big", "little"):
        raise ValueError(f"jnp.{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1].copy() if bitorder == "big" else shifts


def _along_last(name: str, a: Any, axis: int | None) -> tuple[Any, int | None]:
    arr = asarray(a)
    if axis is None:
        return ravel(arr), None
    axis = _u.canonicalize_axis(axis, _u.ndim(arr))
    return moveaxis(arr, axis, -1), axis


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """The elements of `a`, read as bits, packed into a `uint8` array.

    Args:
      a: an integer or bool array (nonzero is a 1 bit).
      axis: the axis to pack along; None packs the flattened array.
      bitorder: "big" (first bit most significant) or "little".

    Returns:
      `uint8` bytes: the packing axis shrinks to `ceil(n / 8)`.

    Raises:
      TypeError: `a` is not integer or bool.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.packbits(jnp.array([1, 0, 1]))
      Array([160], dtype=uint8)
    """
    _u.check_arraylike("packbits", a)
    if not (_u.is_bool(a) or _u.issubdtype_of(a, np.integer)):
        raise TypeError(
            f"jnp.packbits: expected an input array of integer or boolean dtype, got {_u.dtype(a)}"
        )
    shifts = _shifts(bitorder, "packbits")
    arr, axis = _along_last("packbits", a, axis)
    *lead, n = _u.shape(arr)
    groups = -(-n // 8)
    bits = _u.convert(lax.ne(arr, _u.scalar_like(0, arr)), _U8)
    bits = _shape_ops.pad(bits, np.uint8(0), [(0, 0, 0)] * len(lead) + [(0, groups * 8 - n, 0)])
    bits = _shape_ops.reshape(bits, (*lead, groups, 8))
    weights = _shape_ops.broadcast_in_dim(
        np.left_shift(np.uint8(1), shifts), _u.shape(bits), (len(lead) + 1,)
    )
    packed = reduce_sum(lax.mul(bits, weights), (len(lead) + 1,))
    return packed if axis is None else moveaxis(packed, -1, axis)


def unpackbits(
    a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big"
) -> Any:
    """The bits of the `uint8` array `a`, one `uint8` 0 or 1 per bit.

    Args:
      a: a `uint8` array.
      axis: the axis to unpack along; None unpacks the flattened array.
      count: how many bits to keep along the axis (negative: drop that many from the
        end; beyond the available bits: zero padding). None keeps all.
      bitorder: "big" (most significant bit first) or "little".

    Raises:
      TypeError: `a` is not `uint8`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.unpackbits(jnp.uint8(27))
      Array([0, 0, 0, 1, 1, 0, 1, 1], dtype=uint8)
    """
    _u.check_arraylike("unpackbits", a)
    if _u.dtype(a) != _U8:
        raise TypeError(
            f"jnp.unpackbits: expected an input array of dtype uint8, got {_u.dtype(a)}"
        )
    shifts = _shifts(bitorder, "unpackbits")
    arr, axis = _along_last("unpackbits", a, axis)
    *lead, n = _u.shape(arr)
    shape = (*lead, n, 8)
    rank = len(shape)
    expanded = _shape_ops.broadcast_in_dim(arr, shape, tuple(range(rank - 1)))
    shift = _shape_ops.broadcast_in_dim(shifts, shape, (rank - 1,))
    bits = lax.bitwise_and(lax.shift_right_logical(expanded, shift), np.uint8(1))
    bits = _shape_ops.reshape(bits, (*lead, n * 8))
    if count is not None:
        count = concrete_int(count, "'count' argument of jnp.unpackbits")
        total = n * 8
        keep = count if count >= 0 else total + count
        if keep < 0:
            raise ValueError(f"jnp.unpackbits: -count ({-count}) exceeds the {total} bits")
        zeros = [(0, 0, 0)] * len(lead)
        bits = _shape_ops.pad(bits, np.uint8(0), zeros + [(0, keep - total, 0)])
    return bits if axis is None else moveaxis(bits, -1, axis)


__all__ = ["packbits", "unpackbits"]
