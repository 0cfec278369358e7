"""Elementwise mathematics of `jnp`: exponentials, logarithms, trigonometry, rounding, float bits.

The transcendental functions promote integers and bools to the default float
type (a weakly typed operand stays weak: `jnp.sqrt(2)` is a weak float32), then
bind one lax primitive. The rest are built from a few primitives each:

- rounding (`floor`, `ceil`, `trunc`, `rint`, `round`) leaves integers alone
  (except `rint`, which gives a float, as in JAX), and `round` rounds half to
  even at any number of decimals, integers included;
- functions on the representation of floats (`frexp`, `ldexp`, `signbit`,
  `spacing`) read the exponent bits with `bitcast_convert_type`, and scale by
  exact powers of two so that derivatives still flow through the mantissa;
- numerically careful forms where the textbook one overflows or cancels:
  `hypot`, `logaddexp`, and `sinc` near 0 (a custom JVP gives the right
  derivatives of every order there).
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy.lax import _bits, _complex, _shape_ops, _special
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _creation, _ufuncs
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._ufuncs import (
    check_no_complex,
    one_like,
    zero_like,
)

# ---------------------------------------------------------------------------
# Functions of one inexact operand


def _inexact_unary(
    name: str, op: Callable[[Any], Any], what: str, example: str, real_only: bool = False
) -> Callable[[Any], Any]:
    def fn(x: Any, /) -> Any:
        (x,) = _u.promote_args_inexact(name, x)
        if real_only:
            check_no_complex(name, x)
        return op(x)

    fn.__name__ = fn.__qualname__ = name
    kinds = "floating" if real_only else "floating or complex"
    fn.__doc__ = f"""{what}, elementwise.

    Integers and bools are promoted to the default float type first; a weakly
    typed operand (a Python scalar) gives a weakly typed result.

    Args:
      x: an array or scalar.

    Returns:
      An array of `x`'s {kinds} dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> {example}
    """
    return fn


sqrt = _inexact_unary(
    "sqrt",
    lax.sqrt,
    "The square root",
    "jnp.sqrt(jnp.array([1, 4]))\n      Array([1., 2.], dtype=float32)",
)
cbrt = _inexact_unary(
    "cbrt",
    lax.cbrt,
    "The cube root",
    "jnp.cbrt(jnp.array([-8.0, 27.0]))\n      Array([-2.,  3.], dtype=float32)",
    real_only=True,
)
exp = _inexact_unary(
    "exp",
    lax.exp,
    "The exponential `e ** x`",
    "jnp.exp(0)\n      Array(1., dtype=float32, weak_type=True)",
)
exp2 = _inexact_unary(
    "exp2",
    lax.exp2,
    "The base-2 exponential `2 ** x`",
    "jnp.exp2(jnp.array([3.0]))\n      Array([8.], dtype=float32)",
)
expm1 = _inexact_unary(
    "expm1",
    lax.expm1,
    "`exp(x) - 1`, accurate for small `x`",
    "jnp.expm1(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
log = _inexact_unary(
    "log",
    lax.log,
    "The natural logarithm",
    "jnp.log(jnp.array([1.0]))\n      Array([0.], dtype=float32)",
)
log1p = _inexact_unary(
    "log1p",
    lax.log1p,
    "`log(1 + x)`, accurate for small `x`",
    "jnp.log1p(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
sin = _inexact_unary(
    "sin", lax.sin, "The sine", "jnp.sin(jnp.array([0.0]))\n      Array([0.], dtype=float32)"
)
cos = _inexact_unary(
    "cos", lax.cos, "The cosine", "jnp.cos(jnp.array([0.0]))\n      Array([1.], dtype=float32)"
)
tan = _inexact_unary(
    "tan", lax.tan, "The tangent", "jnp.tan(jnp.array([0.0]))\n      Array([0.], dtype=float32)"
)
arcsin = _inexact_unary(
    "arcsin",
    lax.asin,
    "The inverse sine",
    "jnp.arcsin(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
arccos = _inexact_unary(
    "arccos",
    lax.acos,
    "The inverse cosine",
    "jnp.arccos(jnp.array([1.0]))\n      Array([0.], dtype=float32)",
)
arctan = _inexact_unary(
    "arctan",
    lax.atan,
    "The inverse tangent",
    "jnp.arctan(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
sinh = _inexact_unary(
    "sinh",
    lax.sinh,
    "The hyperbolic sine",
    "jnp.sinh(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
cosh = _inexact_unary(
    "cosh",
    lax.cosh,
    "The hyperbolic cosine",
    "jnp.cosh(jnp.array([0.0]))\n      Array([1.], dtype=float32)",
)
tanh = _inexact_unary(
    "tanh",
    lax.tanh,
    "The hyperbolic tangent",
    "jnp.tanh(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
arcsinh = _inexact_unary(
    "arcsinh",
    lax.asinh,
    "The inverse hyperbolic sine",
    "jnp.arcsinh(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)
arccosh = _inexact_unary(
    "arccosh",
    lax.acosh,
    "The inverse hyperbolic cosine",
    "jnp.arccosh(jnp.array([1.0]))\n      Array([0.], dtype=float32)",
)
arctanh = _inexact_unary(
    "arctanh",
    lax.atanh,
    "The inverse hyperbolic tangent",
    "jnp.arctanh(jnp.array([0.0]))\n      Array([0.], dtype=float32)",
)

# The array API's names.
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _log_base(base: float) -> Callable[[Any], Any]:
    def op(x: Any) -> Any:
        return lax.div(lax.log(x), lax.log(_u.scalar_like(base, x)))

    return op


log2 = _inexact_unary(
    "log2",
    _log_base(2.0),
    "The base-2 logarithm",
    "jnp.log2(jnp.array([8.0]))\n      Array([3.], dtype=float32)",
)
log10 = _inexact_unary(
    "log10",
    _log_base(10.0),
    "The base-10 logarithm",
    "jnp.log10(jnp.array([100.0]))\n      Array([2.], dtype=float32)",
)


def _scale_by(factor: float) -> Callable[[Any], Any]:
    return lambda x: lax.mul(x, _u.scalar_like(factor, x))


deg2rad = _inexact_unary(
    "deg2rad",
    _scale_by(np.pi / 180.0),
    "Degrees converted to radians",
    "jnp.deg2rad(jnp.array([180.0]))\n      Array([3.1415927], dtype=float32)",
)
rad2deg = _inexact_unary(
    "rad2deg",
    _scale_by(180.0 / np.pi),
    "Radians converted to degrees",
    "jnp.rad2deg(jnp.array([jnp.pi]))\n      Array([180.], dtype=float32)",
)
radians, degrees = deg2rad, rad2deg


@custom_jvp
def _i0(x: Any) -> Any:
    return lax.mul(lax.exp(lax.abs(x)), _special.bessel_i0e(x))


@_i0.defjvp
def _i0_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    # d/dx I0(x) = I1(x) = exp(|x|) * i1e(x); written out so that the kink of |x| at 0
    # cancels exactly.
    (x,), (t,) = primals, tangents
    i1 = lax.mul(lax.exp(lax.abs(x)), _special.bessel_i1e(x))
    return _i0(x), lax.mul(i1, t)


i0 = _inexact_unary(
    "i0",
    _i0,
    "The modified Bessel function of the first kind of order 0",
    "jnp.i0(jnp.array([0.0]))\n      Array([1.], dtype=float32)",
    real_only=True,
)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k: int, x: Any) -> Any:
    """The k-th derivative of `sin(y) / y` at `y = 0`, shaped and typed like `x`.

    Its JVP is the next derivative, so derivatives of `sinc` of every order are
    right at 0, where the quotient cannot be differentiated.
    """
    value = 0.0 if k % 2 else (-1.0) ** (k // 2) / (k + 1)
    return _shape_ops.full_like(x, value)


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k: int, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), lax.mul(_sinc_maclaurin(k + 1, x), t)


def _sinc(x: Any) -> Any:
    is_zero = lax.eq(x, zero_like(x))
    pi_x = lax.mul(x, _u.scalar_like(np.pi, x))
    safe = _u.where(is_zero, one_like(x), pi_x)
    return _u.where(is_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe), safe))


sinc = _inexact_unary(
    "sinc",
    _sinc,
    "The normalized sinc function `sin(pi x) / (pi x)` (1 at 0)",
    "jnp.sinc(jnp.array([0.0, 1.0]))\n      Array([ 1.0000000e+00, -2.7827534e-08], dtype=float32)",
)


def angle(z: Any, deg: bool = False) -> Any:
    """The angle of complex `z` in the complex plane (`arctan2(imag, real)`).

    Args:
      z: an array; real values have angle 0 (or pi where negative).
      deg: give the angle in degrees instead of radians.

    Returns:
      A floating array.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.angle(jnp.array([1j, -1.0 + 0j]))
      Array([1.5707964, 3.1415927], dtype=float32)
    """
    (z,) = _u.promote_args_inexact("angle", z)
    if _u.is_complex(z):
        re, im = _complex.real(z), _complex.imag(z)
    else:
        re, im = z, zero_like(z)
    out = lax.atan2(im, re)
    return rad2deg(out) if deg else out


# ---------------------------------------------------------------------------
# Functions of two inexact operands


def _inexact_binary(
    name: str,
    op: Callable[[Any, Any], Any],
    what: str,
    example: str,
    check: Callable[[str, Any], None] | None = None,
) -> Callable[[Any, Any], Any]:
    def fn(x1: Any, x2: Any, /) -> Any:
        x1, x2 = _u.promote_args_inexact(name, x1, x2)
        if check is not None:
            check(name, x1)
        return op(x1, x2)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{what}, elementwise (with NumPy broadcasting).

    Integers and bools are promoted to the default float type first.

    Args:
      x1: an array or scalar.
      x2: an array or scalar.

    Returns:
      An array of the operands' promoted floating or complex dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> {example}
    """
    return fn


def _no_complex_hypot(name: str, x: Any) -> None:
    if _u.is_complex(x):  # JAX's error
        raise ValueError(
            f"jnp.{name} is not well defined for complex-valued inputs. Please convert to "
            "real values first, such as by using abs(x)"
        )


arctan2 = _inexact_binary(
    "arctan2",
    lax.atan2,
    "The angle of the point `(x2, x1)`: `arctan(x1 / x2)` in the right quadrant",
    "jnp.arctan2(jnp.array([1.0]), -1.0)\n      Array([2.3561945], dtype=float32)",
)
atan2 = arctan2


def _hypot(x1: Any, x2: Any) -> Any:
    # max * sqrt(1 + (min/max)^2) neither overflows nor underflows in the square.
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(a, b), lax.min(a, b)
    is_zero = lax.eq(big, zero_like(big))
    ratio = lax.div(small, _u.where(is_zero, one_like(big), big))
    out = lax.mul(big, lax.sqrt(lax.add(one_like(ratio), lax.square(ratio))))
    out = _u.where(is_zero, zero_like(out), out)
    inf = _u.scalar_like(np.inf, out)
    return _u.where(lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf)), inf, out)


hypot = _inexact_binary(
    "hypot",
    _hypot,
    "The hypotenuse `sqrt(x1**2 + x2**2)`, without overflow",
    "jnp.hypot(jnp.array([3.0]), 4.0)\n      Array([5.], dtype=float32)",
    _no_complex_hypot,
)


def _logaddexp_with(exp_fn: Callable[[Any], Any], log_scale: float | None) -> Callable:
    def value(x1: Any, x2: Any) -> Any:
        # max/min order complex numbers lexicographically, as JAX's logaddexp does;
        # for reals min - max is -|x1 - x2|.
        big = lax.max(x1, x2)
        delta = lax.sub(x1, x2)
        correction = lax.log1p(exp_fn(lax.sub(lax.min(x1, x2), big)))
        if log_scale is not None:
            correction = lax.div(correction, _u.scalar_like(log_scale, correction))
        out = lax.add(big, correction)
        # delta is NaN when both are infinite of one sign (the sum is right then) or
        # when either is NaN (the sum is NaN too).
        return _u.where(lax.ne(delta, delta), lax.add(x1, x2), out)

    op = custom_jvp(value)

    @op.defjvp
    def jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        # d out / d x1 = exp(x1 - out): smooth and symmetric, where differentiating
        # the max and |delta| above would split ties unevenly. +inf counts as 0 so
        # that inf - inf does not poison the tangents (-inf weighs exp(-inf) = 0).
        (x1, x2), (t1, t2) = primals, tangents
        out = op(x1, x2)
        finite_out = _posinf_to_zero(out)
        w1 = exp_fn(lax.sub(_posinf_to_zero(x1), finite_out))
        w2 = exp_fn(lax.sub(_posinf_to_zero(x2), finite_out))
        return out, lax.add(lax.mul(t1, w1), lax.mul(t2, w2))

    return op


def _posinf_to_zero(x: Any) -> Any:
    return _u.where(lax.eq(x, _u.scalar_like(np.inf, x)), zero_like(x), x)


logaddexp = _inexact_binary(
    "logaddexp",
    _logaddexp_with(lax.exp, None),
    "`log(exp(x1) + exp(x2))`, without overflow",
    "jnp.logaddexp(jnp.array([0.0]), 0.0)\n      Array([0.6931472], dtype=float32)",
)
logaddexp2 = _inexact_binary(
    "logaddexp2",
    _logaddexp_with(lax.exp2, float(np.log(2.0))),
    "`log2(2**x1 + 2**x2)`, without overflow",
    "jnp.logaddexp2(jnp.array([1.0]), 1.0)\n      Array([2.], dtype=float32)",
)


def _copysign(x1: Any, x2: Any) -> Any:
    magnitude = lax.abs(x1)
    return _u.where(_signbit_float(x2), lax.neg(magnitude), magnitude)


copysign = _inexact_binary(
    "copysign",
    _copysign,
    "The magnitude of `x1` with the sign (bit) of `x2`",
    "jnp.copysign(jnp.array([1.0, 2.0]), -0.0)\n      Array([-1., -2.], dtype=float32)",
    check_no_complex,
)
nextafter = _inexact_binary(
    "nextafter",
    _bits.nextafter,
    "The next representable value after `x1` towards `x2`",
    "jnp.nextafter(jnp.array([1.0]), 2.0) > 1.0\n      Array([ True], dtype=bool)",
    check_no_complex,
)


# ---------------------------------------------------------------------------
# Rounding


def _integer_passthrough(
    name: str, op: Callable[[Any], Any], what: str, example: str
) -> Callable[[Any], Any]:
    def fn(x: Any, /) -> Any:
        (x,) = _u.promote_args(name, x)
        if _u.is_bool(x) or _u.issubdtype_of(x, np.integer):
            return _u.as_array(x)
        check_no_complex(name, x)
        return op(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{what}, elementwise; integers and bools are returned unchanged.

    Args:
      x: an array or scalar.

    Returns:
      An array of `x`'s dtype.

    Raises:
      TypeError: complex `x`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> {example}
    """
    return fn


def _trunc(x: Any) -> Any:
    return _u.where(lax.lt(x, zero_like(x)), lax.ceil(x), lax.floor(x))


floor = _integer_passthrough(
    "floor",
    lax.floor,
    "The largest integer not above `x`",
    "jnp.floor(jnp.array([-1.5, 1.5]))\n      Array([-2.,  1.], dtype=float32)",
)
ceil = _integer_passthrough(
    "ceil",
    lax.ceil,
    "The smallest integer not below `x`",
    "jnp.ceil(jnp.array([-1.5, 1.5]))\n      Array([-1.,  2.], dtype=float32)",
)
trunc = _integer_passthrough(
    "trunc",
    _trunc,
    "`x` rounded towards zero",
    "jnp.trunc(jnp.array([-1.5, 1.5]))\n      Array([-1.,  1.], dtype=float32)",
)


def _round_half_even(x: Any) -> Any:
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def _on_parts(op: Callable[[Any], Any], z: Any) -> Any:
    """`op` applied to the real and imaginary parts of complex `z`."""
    return _complex.complex(op(_complex.real(z)), op(_complex.imag(z)))


def rint(x: Any, /) -> Any:
    """`x` rounded to the nearest integer, halves to even; integers become floats.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.rint(jnp.array([0.5, 1.5, 2.5]))
      Array([0., 2., 2.], dtype=float32)
    """
    (x,) = _u.promote_args("rint", x)
    if _u.is_bool(x) or _u.issubdtype_of(x, np.integer):
        (x,) = _u.promote_dtypes_inexact(x)
        return _u.as_array(x)
    if _u.is_complex(x):
        return _on_parts(_round_half_even, x)
    return _round_half_even(x)


_LOW_PRECISION = (np.dtype(np.float16), np.dtype(dtypes.bfloat16))


def _round_float(x: Any, decimals: int) -> Any:
    if decimals == 0:
        return _round_half_even(x)
    # Scaling by 10**decimals loses digits in 16-bit floats: round in float32.
    dtype = _u.dtype(x)
    wide = _u.convert(x, np.dtype(np.float32)) if dtype in _LOW_PRECISION else x
    factor = _u.scalar_like(10.0**decimals, wide)
    out = lax.div(_round_half_even(lax.mul(wide, factor)), factor)
    return _u.convert(out, dtype, _u.aval(x).weak_type) if dtype in _LOW_PRECISION else out


def _round_int(x: Any, decimals: int) -> Any:
    """Integers rounded to a multiple of `10**-decimals`, halves to even (exactly)."""
    if decimals >= 0:
        return x
    factor_value = 10 ** (-decimals)
    info = dtypes.iinfo(_u.dtype(x))
    if factor_value > info.max:
        return lax.mul(x, zero_like(x))
    factor = _u.scalar_like(factor_value, x)
    quotient = _ufuncs.floor_divide(x, factor)
    rest = lax.sub(x, lax.mul(quotient, factor))
    # Round up when the rest is over half the factor, or exactly half and the
    # quotient is odd. Comparing `rest` with `factor - rest` avoids overflowing 2*rest.
    over = lax.sub(factor, rest)
    odd = lax.ne(lax.bitwise_and(quotient, one_like(quotient)), zero_like(quotient))
    up = lax.bitwise_or(lax.gt(rest, over), lax.bitwise_and(lax.eq(rest, over), odd))
    return lax.mul(_u.where(up, lax.add(quotient, one_like(quotient)), quotient), factor)


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001 - NumPy's name
    """`a` rounded to `decimals` decimal places, halves to even (NumPy's rounding).

    Args:
      a: an array or scalar; complex values round their real and imaginary parts.
      decimals: a static int; negative values round to tens, hundreds, ...
        (integers too, exactly).
      out: not supported (arrays are immutable); must be None.

    Returns:
      An array of `a`'s dtype.

    Raises:
      TypeError: `decimals` is not an int.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.round(jnp.array([0.125, 2.5]), 2), jnp.round(jnp.array([15, 25]), -1)
      (Array([0.12, 2.5 ], dtype=float32), Array([20, 20], dtype=int32))
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    try:
        decimals = operator.index(decimals)
    except TypeError:
        raise TypeError(f"jnp.round: decimals must be an int, got {decimals!r}") from None
    (a,) = _u.promote_args("round", a)
    if _u.is_bool(a) or _u.issubdtype_of(a, np.integer):
        return _u.as_array(_round_int(a, decimals) if not _u.is_bool(a) else a)
    if _u.is_complex(a):
        return _on_parts(lambda part: _round_float(part, decimals), a)
    return _round_float(a, decimals)


around = round


def round_operator(x: Any, ndigits: int | None = None) -> Any:
    """Python's `round(x, ndigits)`: an int array when `ndigits` is None."""
    out = round(x, 0 if ndigits is None else ndigits)
    if ndigits is None:
        return _u.convert(out, dtypes.canonicalize_dtype(dtypes.int_))
    return out


class _Unset:
    """The default of `clip`'s deprecated keywords (None is a meaningful value there)."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


def clip(
    arr: Any = None,
    /,
    min: Any = None,  # noqa: A002 - NumPy's name
    max: Any = None,  # noqa: A002 - NumPy's name
    *,
    a: Any = _UNSET,
    a_min: Any = _UNSET,
    a_max: Any = _UNSET,
) -> Any:
    """`arr` with values below `min` raised to it and values above `max` lowered to it.

    Computed as `minimum(max, maximum(min, arr))`, so the operands are promoted
    together (clipping an int array at 0.5 gives floats) and NaNs propagate.

    Args:
      arr: the array.
      min: the lower bound (an array broadcastable with `arr`), or None for none.
      max: the upper bound, or None for none. Where `min > max` the result is `max`.
      a, a_min, a_max: deprecated names of `arr`, `min` and `max`.

    Returns:
      An array.

    Raises:
      ValueError: no input, an input given twice, or a complex value.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.clip(jnp.arange(5), 1, 3)
      Array([1, 1, 2, 3, 3], dtype=int32)
    """
    renamed = {"a": (a, "arr"), "a_min": (a_min, "min"), "a_max": (a_max, "max")}
    given = {"arr": arr, "min": min, "max": max}
    deprecated = [old for old, (value, _) in renamed.items() if value is not _UNSET]
    if deprecated:
        warnings.warn(
            f"Passing {', '.join(map(repr, deprecated))} to jax.numpy.clip is deprecated; "
            "use 'arr', 'min' and 'max' instead.",
            DeprecationWarning,
            stacklevel=2,
        )
    for old in deprecated:
        value, new = renamed[old]
        if given[new] is not None:
            raise ValueError(f"Only one of '{new}' and '{old}' should be provided to clip.")
        given[new] = value
    arr, min, max = given["arr"], given["min"], given["max"]
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    for value in (arr, min, max):
        if value is not None and _u.is_operand(value) and _u.is_complex(value):
            raise ValueError(
                "Clip received a complex value either through the input or the min/max "
                "keywords. Complex values have no ordering and cannot be clipped."
            )
    if min is not None:
        arr = _ufuncs.maximum(min, arr)
    if max is not None:
        arr = _ufuncs.minimum(max, arr)
    return _ufuncs.positive(arr)


# ---------------------------------------------------------------------------
# The representation of floats


def _float_layout(dtype: np.dtype) -> tuple[np.dtype, int, int]:
    """The same-width unsigned integer dtype, the mantissa bits and the exponent bias."""
    info = dtypes.finfo(dtype)
    uint = np.dtype(f"uint{8 * dtype.itemsize}")
    return uint, int(info.nmant), int(info.maxexp) - 1


def _signbit_float(x: Any) -> Any:
    dtype = _u.dtype(x)
    signed = np.dtype(f"int{8 * dtype.itemsize}")
    return lax.lt(_bits.bitcast_convert_type(x, signed), signed.type(0))


def signbit(x: Any, /) -> Any:
    """Whether the sign bit is set (true for -0.0 and negative NaNs too).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.signbit(jnp.array([-1.0, -0.0, 0.0]))
      Array([ True,  True, False], dtype=bool)
    """
    (x,) = _u.promote_args("signbit", x)
    if _u.is_bool(x) or _u.issubdtype_of(x, np.unsignedinteger):
        return _ufuncs.full_like_shape(False, x, np.dtype(bool))
    if _u.issubdtype_of(x, np.integer):
        return lax.lt(x, zero_like(x))
    check_no_complex("signbit", x)
    return _signbit_float(x)


def _exact_power_of_two(k: Any, dtype: np.dtype) -> Any:
    """`2.0 ** k` in `dtype` for int32 `k` within the normal exponents, built from bits."""
    uint, nmant, bias = _float_layout(dtype)
    biased = _u.convert(lax.add(k, _u.scalar_like(bias, k)), uint)
    return _bits.bitcast_convert_type(lax.shift_left(biased, _u.scalar_like(nmant, biased)), dtype)


def _scale_by_power_of_two(x: Any, k: Any, parts: int) -> Any:
    """`x * 2**k` for int32 `k`, in `parts` exact steps so no step leaves the normal range."""
    dtype = _u.dtype(x)
    for remaining in range(parts, 0, -1):
        step = k if remaining == 1 else _ufuncs.floor_divide(k, _u.scalar_like(remaining, k))
        x = lax.mul(x, _exact_power_of_two(step, dtype))
        k = lax.sub(k, step)
    return x


_I32 = np.dtype(np.int32)


def _frexp_exponent(x: Any) -> Any:
    """The int32 exponent `e` of `x = m * 2**e`, 0.5 <= |m| < 1 (0 for 0, inf and NaN)."""
    dtype = _u.dtype(x)
    uint, nmant, bias = _float_layout(dtype)
    info = dtypes.finfo(dtype)
    # Subnormals have no implicit leading bit: scale them into the normal range first.
    subnormal = lax.lt(lax.abs(x), _u.scalar_like(info.smallest_normal, x))
    scaled = _u.where(subnormal, lax.mul(x, _u.scalar_like(2.0**nmant, x)), x)
    bits = _bits.bitcast_convert_type(scaled, uint)
    exponent_field = lax.bitwise_and(
        lax.shift_right_logical(bits, _u.scalar_like(nmant, bits)),
        _u.scalar_like((1 << (8 * dtype.itemsize - 1 - nmant)) - 1, bits),
    )
    e = lax.sub(_u.convert(exponent_field, _I32), np.int32(bias - 1))
    e = _u.where(subnormal, lax.sub(e, _u.scalar_like(nmant, e)), e)
    special = lax.bitwise_or(lax.eq(x, zero_like(x)), lax.bitwise_not(lax.is_finite(x)))
    return _u.where(special, zero_like(e), e)


def frexp(x: Any, /) -> tuple[Any, Any]:
    """Splits `x` into a mantissa in `[0.5, 1)` (in magnitude) and an int32 exponent.

    `x == mantissa * 2 ** exponent`; zeros, infinities and NaNs give themselves and 0.

    Returns:
      `(mantissa, exponent)`: an array of `x`'s inexact dtype and an int32 array.

    Raises:
      TypeError: complex `x`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.frexp(jnp.array([8.0, 0.75]))
      (Array([0.5 , 0.75], dtype=float32), Array([4, 0], dtype=int32))
    """
    (x,) = _u.promote_args_inexact("frexp", x)
    check_no_complex("frexp", x)
    e = _frexp_exponent(x)
    # Two exact steps: 2**-e alone overflows for subnormal x.
    mantissa = _scale_by_power_of_two(x, lax.neg(e), 2)
    return _u.convert(mantissa, _u.dtype(x), _u.aval(x).weak_type), e


def ldexp(x1: Any, x2: Any, /) -> Any:
    """`x1 * 2 ** x2` for integer `x2`, exact (rounded once where the result is subnormal).

    Args:
      x1: a real array (integers are promoted to the default float).
      x2: an integer array of exponents.

    Returns:
      An array of `x1`'s inexact dtype.

    Raises:
      ValueError: complex `x1` or a non-integer `x2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ldexp(jnp.array([0.75, 1.0]), jnp.array([2, -3]))
      Array([3.   , 0.125], dtype=float32)
    """
    _u.check_arraylike("ldexp", x1, x2)
    x1_dtype, x2_dtype = dtypes.dtype(x1), dtypes.dtype(x2)
    if dtypes.issubdtype(x1_dtype, np.complexfloating) or not (
        dtypes.issubdtype(x2_dtype, np.integer) or x2_dtype == np.dtype(bool)
    ):
        raise ValueError(f"ldexp not supported for input types {(x1_dtype, x2_dtype)}")
    (x1,) = _u.promote_args_inexact("ldexp", x1)
    dtype, weak = _u.dtype(x1), _u.aval(x1).weak_type
    _, nmant, bias = _float_layout(dtype)
    x2 = _creation.asarray(x2)
    x2_dtype = _u.dtype(x2)
    # Results with exponents beyond [-(bias + nmant + 1), bias + 2] are 0 or inf: clamp
    # there. First the exponent alone, in its own width, so that int32 cannot overflow.
    low, high = -(bias + nmant + 1), bias + 2
    if x2_dtype != np.dtype(bool) and dtypes.iinfo(x2_dtype).max > 2 * high:
        top = _u.scalar_like(2 * high, x2)
        if dtypes.issubdtype(x2_dtype, np.unsignedinteger):
            x2 = lax.min(x2, top)
        else:
            x2 = lax.clamp(_u.scalar_like(2 * low, x2), x2, top)
    x2 = _u.convert(x2, _I32)
    e = _frexp_exponent(x1)
    mantissa = _scale_by_power_of_two(x1, lax.neg(e), 2)
    exponent = lax.clamp(np.int32(low), lax.add(e, x2), np.int32(high))
    # Two steps: the first keeps the mantissa normal, so only the second one rounds.
    out = _scale_by_power_of_two(mantissa, exponent, 2)
    return _u.convert(out, dtype, weak)


def modf(x: Any, /, out: None = None) -> tuple[Any, Any]:
    """Splits `x` into its fractional and integral parts, both with the sign of `x`.

    Returns:
      `(fractional, integral)`, inexact arrays; infinities give `(+-0.0, +-inf)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.modf(jnp.array([-2.5, 1.25]))
      (Array([-0.5 ,  0.25], dtype=float32), Array([-2.,  1.], dtype=float32))
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = _u.promote_args_inexact("modf", x)
    check_no_complex("modf", x)
    whole = _trunc(x)
    # The fraction has the sign of x, zero included (modf(-2.0) is (-0.0, -2.0)).
    fraction = _copysign(lax.sub(x, whole), x)
    is_inf = lax.eq(lax.abs(x), _u.scalar_like(np.inf, x))
    return _u.where(is_inf, _copysign(zero_like(x), x), fraction), whole


def spacing(x: Any, /) -> Any:
    """The distance from `x` to the next representable value away from zero (signed).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.spacing(jnp.array([1.0, -1.0]))
      Array([ 1.1920929e-07, -1.1920929e-07], dtype=float32)
    """
    (x,) = _u.promote_args_inexact("spacing", x)
    check_no_complex("spacing", x)
    inf = _u.scalar_like(np.inf, x)
    towards = _u.where(_signbit_float(x), lax.neg(inf), inf)
    return lax.sub(_bits.nextafter(x, towards), x)
