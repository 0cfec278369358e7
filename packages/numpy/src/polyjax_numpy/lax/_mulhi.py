"""`mulhi`: the high half of the double-width product of two integers.

`mulhi(x, y)` is `(x * y) >> bits` computed without overflow, the operation
behind fast division by constants and multiplicative hashing. It is lowered in
terms of other primitives of the operands' own width (a wider type may not
exist: 64 bits, or 32 without x64): the operands are split into half-width
pieces whose partial products cannot overflow, and the signed result is
corrected from the unsigned one (`hi_s = hi_u - (x < 0 ? y : 0) - (y < 0 ? x : 0)`,
modulo 2**bits).

Example:
  >>> import numpy as np
  >>> mulhi(np.uint32(0xFFFFFFFF), np.uint32(3))
  Array(2, dtype=uint32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_interpreters import mlir
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._bits import bitcast_convert_type
from polyjax_numpy.lax._declare import standard_primitive

__all__ = ["mulhi", "mulhi_p"]

_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _mulhi_unsigned(x: Any, y: Any, bits: int) -> Any:
    """High half of the product of two unsigned operands, from half-width pieces."""
    dtype = np.dtype(x.dtype)
    half = bits // 2
    mask, shift = np.array((1 << half) - 1, dtype), np.array(half, dtype)

    def halves(v):
        return ew.shift_right_logical(v, shift), ew.bitwise_and(v, mask)

    (x_hi, x_lo), (y_hi, y_lo) = halves(x), halves(y)
    lo_lo, hi_lo = ew.mul(x_lo, y_lo), ew.mul(x_hi, y_lo)
    lo_hi, hi_hi = ew.mul(x_lo, y_hi), ew.mul(x_hi, y_hi)
    # The middle column: three half-width values, so it cannot overflow.
    middle = ew.add(
        ew.add(ew.shift_right_logical(lo_lo, shift), ew.bitwise_and(hi_lo, mask)),
        ew.bitwise_and(lo_hi, mask),
    )
    carry = ew.shift_right_logical(middle, shift)
    high = ew.add(ew.shift_right_logical(hi_lo, shift), ew.shift_right_logical(lo_hi, shift))
    return ew.add(ew.add(hi_hi, high), carry)


def _mulhi_lowered(x: Any, y: Any) -> Any:
    dtype = np.dtype(x.dtype)
    bits = dtype.itemsize * 8
    if dtype.kind == "u":
        return _mulhi_unsigned(x, y, bits)
    unsigned = np.dtype(_UNSIGNED[bits])
    xu, yu = bitcast_convert_type(x, unsigned), bitcast_convert_type(y, unsigned)
    hi = _mulhi_unsigned(xu, yu, bits)
    # All ones where the operand is negative: selects the other operand to subtract.
    sign = np.array(bits - 1, dtype)
    x_neg = bitcast_convert_type(ew.shift_right_arithmetic(x, sign), unsigned)
    y_neg = bitcast_convert_type(ew.shift_right_arithmetic(y, sign), unsigned)
    hi = ew.sub(ew.sub(hi, ew.bitwise_and(x_neg, yu)), ew.bitwise_and(y_neg, xu))
    return bitcast_convert_type(hi, dtype)


mulhi_p = standard_primitive(
    "mulhi",
    ew._naryop_rule("mulhi", (sr.INT, sr.INT), ew._same_dtype),
    mlir.lower_fun(_mulhi_lowered, multiple_results=False),
    batching="broadcasting",
    jvp="zero",
)


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the double-width product of two integer arrays, elementwise.

    Args:
      x: an integer array.
      y: an integer array of the same dtype (a Python int takes `x`'s dtype).

    Returns:
      `(x * y) >> bits` computed exactly, in the operands' dtype (signed operands
      give the high half of the signed product).

    Raises:
      TypeError: an operand is not an integer array, or the dtypes differ.

    Example:
      >>> import numpy as np
      >>> mulhi(np.int32(-7), np.int32(1 << 30))
      Array(-2, dtype=int32)
    """
    return ew._binary(mulhi_p, x, y)
