"""Complex-number lax primitives: `complex`, `real`, `imag`, `conj`.

A complex array is a pair of real arrays of one floating width: ``complex64``
holds two ``float32``s, ``complex128`` two ``float64``s. These primitives move
between the two views:

- ``complex(x, y)`` builds ``x + 1j*y`` from two ``float32`` (or two
  ``float64``) operands, with lax's limited broadcasting;
- ``real(z)`` and ``imag(z)`` take a complex operand apart (``c64 -> f32``);
- ``conj(z)`` negates the imaginary part. It also accepts ``float32`` and
  ``float64`` operands, and then (as in JAX) *returns a complex array*
  with a zero imaginary part: conjugation is where a real value enters the
  complex plane, which is what its transpose rule will need. The primitive
  records the operand's dtype in its ``input_dtype`` param for that rule.

Only the two IEEE widths pair up: XLA has no ``complex32``, so ``float16`` and
``bfloat16`` operands are dtype errors, as in JAX.

    >>> from polyjax_core.make_jaxpr import make_jaxpr
    >>> print(make_jaxpr(lambda x, y: conj(complex(x, y)))(*[np.ones(2, np.float32)] * 2))
    { lambda ; a:f32[2] b:f32[2]. let
        c:c64[2] = complex a b
        d:c64[2] = conj[input_dtype=complex64] c
      in (d,) }
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.typing import ArrayLike
from polyjax_interpreters import mlir
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._elementwise import (
    _broadcast_operands,
    _const,
    _linear_cts,
    _real_dtype,
    _unbroadcast,
    neg,
)

__all__ = [
    "complex",
    "complex_p",
    "conj",
    "conj_p",
    "imag",
    "imag_p",
    "real",
    "real_p",
]


# The real dtypes that have a complex counterpart (exactly these: not their subtypes'
# relatives float16/bfloat16, which `np.floating` would let in).
_COMPLEX_PARTS: tuple[type, ...] = (np.float32, np.float64)
_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}


def _complex_dtype(dtype: Any) -> np.dtype:
    """float32 -> complex64, float64 -> complex128; complex dtypes unchanged."""
    return _COMPLEX_OF.get(np.dtype(dtype), np.dtype(dtype))


# ---------------------------------------------------------------------------
# Shape and dtype rules


def _complex_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    sr.check_dtypes("complex", (x, y), (_COMPLEX_PARTS, _COMPLEX_PARTS))
    shape = sr.broadcasting_shape("complex", x.shape, y.shape)
    return ShapedArray(shape, _complex_dtype(x.dtype), x.weak_type and y.weak_type)


def _part_rule(name: str):
    def rule(x: ShapedArray) -> ShapedArray:
        sr.check_dtypes(name, (x,), (sr.COMPLEX,))
        return ShapedArray(x.shape, _real_dtype(x.dtype), x.weak_type)

    return rule


def _conj_rule(x: ShapedArray, *, input_dtype: Any) -> ShapedArray:
    sr.check_dtypes("conj", (x,), (_COMPLEX_PARTS + sr.COMPLEX,))
    return ShapedArray(x.shape, _complex_dtype(x.dtype), x.weak_type)


# ---------------------------------------------------------------------------
# Lowering


def _complex_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, y: ir.Value) -> list:
    x, y = _broadcast_operands(ctx, (x, y))
    return [hlo.complex(x, y)]


def _real_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value) -> list:
    return [hlo.real(x)]


def _imag_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value) -> list:
    return [hlo.imag(x)]


def _conj_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, *, input_dtype: Any) -> list:
    (aval,) = ctx.avals_in
    if dtypes.issubdtype(aval.dtype, np.complexfloating):
        # StableHLO has no conjugate op: rebuild the number with the imaginary part negated.
        return [hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))]
    # A real operand becomes complex with a zero imaginary part.
    return [hlo.complex(x, mlir.full_like_aval(ctx, 0, aval))]


# ---------------------------------------------------------------------------
# Autodiff, vmap and the declarations
#
# All four are linear over the reals. The transposes follow the real inner product
# <a, b> = Re(sum(conj(a) * b)) on complex values, as JAX's do: complex(x, y)
# transposes to (real(ct), -imag(ct)), real to complex(ct, 0), imag to complex(0, -ct),
# and conj to conj (or, for a real operand, to the real part).


def _complex_transpose(ct: Any, x: Any, y: Any) -> list:
    def part(ct: Any, i: int) -> Any:
        value = imag(neg(ct)) if i else real(ct)
        return _unbroadcast((x, y)[i].aval, value)

    return _linear_cts(ct, (x, y), part)


def _conj_transpose(ct: Any, x: Any, *, input_dtype: Any) -> list:
    if dtypes.issubdtype(input_dtype, np.complexfloating):
        return [conj(ct)]
    return [real(ct)]


complex_p = standard_primitive(
    "complex",
    _complex_rule,
    _complex_lowering,
    linear_transpose=_complex_transpose,
    batching="broadcasting",
)
# The zero parts take ct's dtype: ct may be a Python float (grad's output cotangent).
real_p = standard_primitive(
    "real",
    _part_rule("real"),
    _real_lowering,
    linear_transpose=lambda ct, x: [complex(ct, _const(ct, 0))],
    batching="vectorized",
)
imag_p = standard_primitive(
    "imag",
    _part_rule("imag"),
    _imag_lowering,
    linear_transpose=lambda ct, x: [complex(_const(ct, 0), neg(ct))],
    batching="vectorized",
)
conj_p = standard_primitive(
    "conj", _conj_rule, _conj_lowering, linear_transpose=_conj_transpose, batching="vectorized"
)


# ---------------------------------------------------------------------------
# Public functions

# (`complex` is about to name the lax function: spell out the builtin.)
_WEAK_SCALARS = (int, float, builtins.complex)


def complex(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise complex number `x + 1j * y` from real and imaginary parts.

    Args:
      x: the real parts: a ``float32`` or ``float64`` array.
      y: the imaginary parts, of `x`'s dtype; of one rank with `x` unless one is a
        scalar, with dimensions equal or 1. Python scalars take the other operand's dtype.

    Returns:
      A ``complex64`` array for ``float32`` parts, ``complex128`` for ``float64``.

    Raises:
      TypeError: if a part is not ``float32``/``float64`` or the parts' dtypes differ.
    """
    if type(x) in _WEAK_SCALARS or type(y) in _WEAK_SCALARS:
        x, y = sr.match_python_scalars((x, y))
    return complex_p.bind(x, y)


def real(x: ArrayLike) -> Any:
    """Elementwise real part of a complex array (``complex64 -> float32``).

    Raises:
      TypeError: if `x` is not complex (use it as it is: a real array is its own real part).
    """
    return real_p.bind(x)


def imag(x: ArrayLike) -> Any:
    """Elementwise imaginary part of a complex array (``complex64 -> float32``).

    Raises:
      TypeError: if `x` is not complex.
    """
    return imag_p.bind(x)


def conj(x: ArrayLike) -> Any:
    """Elementwise complex conjugate `real(x) - 1j * imag(x)`.

    Args:
      x: a complex array, or a ``float32``/``float64`` array.

    Returns:
      An array of `x`'s complex dtype. A real `x` gives a complex result (``float32 ->
      complex64``) with a zero imaginary part, as in JAX; ``jnp``-style `.conj()` keeps
      real arrays real instead.
    """
    input_dtype = dtypes.dtype(x, canonicalize=True)
    return conj_p.bind(x, input_dtype=input_dtype)


# For the derivative rules of `_elementwise`, which this module imports.
sr.ops.real = real
sr.ops.conj = conj
