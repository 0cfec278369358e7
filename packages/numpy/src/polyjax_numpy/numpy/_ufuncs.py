"""Elementwise arithmetic of `jnp`: `+ - * / // % **`, comparisons, min/max, logic and bits.

Each function promotes its operands (`_util.promote_args*`: JAX's dtype lattice,
weak Python scalars, NumPy broadcasting) and then binds lax primitives, with
NumPy's semantics where lax differs: `+` and `*` on bools are "or" and "and",
`/` always gives an inexact type, `//` and `%` round towards minus infinity as
in Python, and integer `**` works by repeated squaring.

These are plain functions; `_ufunc_api` wraps the ones that JAX exposes as
`jnp.ufunc` objects (`add`, `multiply`, `maximum`, `logical_and`, ...). The
operators of arrays call the plain functions directly, which is cheaper.
The transcendental functions and the rounding functions are in `_ufuncs_math`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_interpreters.array import device_put
from polyjax_numpy.lax import _bits, _complex, _shape_ops, _while
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _util as _u

# ---------------------------------------------------------------------------
# Helpers shared with `_ufuncs_math` and `_predicates`.


def zero_like(x: Any) -> Any:
    """A rank-0 zero of `x`'s dtype (a literal when traced)."""
    return _u.scalar_like(0, x)


def one_like(x: Any) -> Any:
    """A rank-0 one of `x`'s dtype (a literal when traced)."""
    return _u.scalar_like(1, x)


def full_like_shape(value: Any, x: Any, dtype: Any) -> Any:
    """An array of `x`'s shape filled with `value` of `dtype` (strongly typed)."""
    return _shape_ops.full(_u.shape(x), value, dtype)


def check_no_complex(name: str, x: Any) -> None:
    if _u.is_complex(x):
        raise TypeError(f"{name} does not support complex-valued inputs, got {_u.dtype(x)}.")


def check_integer_or_bool(name: str, x: Any) -> None:
    if not (_u.is_bool(x) or _u.issubdtype_of(x, np.integer)):
        raise TypeError(
            f"{name} is only defined for integer and boolean types, got dtype {_u.dtype(x).name}."
        )


# ---------------------------------------------------------------------------
# Arithmetic


def add(x: Any, y: Any, /) -> Any:
    """Elementwise `x + y` (logical or for bools).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.add(jnp.arange(3), 10)
      Array([10, 11, 12], dtype=int32)
    """
    x, y = _u.promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _u.is_bool(x) else lax.add(x, y)


def subtract(x: Any, y: Any, /) -> Any:
    """Elementwise `x - y` (bools are refused, as in NumPy).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.subtract(jnp.arange(3.0), 1.5)
      Array([-1.5, -0.5,  0.5], dtype=float32)
    """
    x, y = _u.promote_args("subtract", x, y)
    return lax.sub(x, y)


def multiply(x: Any, y: Any, /) -> Any:
    """Elementwise `x * y` (logical and for bools).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.multiply(jnp.arange(3), 2)
      Array([0, 2, 4], dtype=int32)
    """
    x, y = _u.promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _u.is_bool(x) else lax.mul(x, y)


def true_divide(x: Any, y: Any, /) -> Any:
    """Elementwise `x / y`, always inexact: integers and bools divide as floats.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.true_divide(jnp.arange(3), 2)
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    x, y = _u.promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


def floor_divide(x: Any, y: Any, /) -> Any:
    """Elementwise `x // y`, rounding towards minus infinity (Python's `//`).

    Raises:
      TypeError: complex operands.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.floor_divide(jnp.array([-7, 7]), 2)
      Array([-4,  3], dtype=int32)
    """
    x, y = _u.promote_args_numeric("floor_divide", x, y)
    check_no_complex("floor_divide", x)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.div(x, y)
    if _u.issubdtype_of(x, np.integer):
        # lax.div truncates towards zero; step down where the signs differ and the
        # division was not exact.
        quotient = lax.div(x, y)
        remainder = lax.rem(x, y)
        inexact = lax.ne(remainder, zero_like(remainder))
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        fix = lax.bitwise_and(inexact, signs_differ)
        return _u.where(fix, lax.sub(quotient, one_like(quotient)), quotient)
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    # Python's semantics: the remainder takes the sign of the divisor.
    mod = lax.rem(x, y)
    div = lax.div(lax.sub(x, mod), y)
    fix = lax.bitwise_and(lax.ne(mod, zero_like(mod)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = _u.where(fix, lax.add(mod, y), mod)
    div = _u.where(fix, lax.sub(div, one_like(div)), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def remainder(x: Any, y: Any, /) -> Any:
    """Elementwise `x % y`, with the sign of the divisor (Python's `%`).

    Raises:
      TypeError: complex operands.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.remainder(jnp.array([-7, 7]), 3)
      Array([2, 1], dtype=int32)
    """
    x, y = _u.promote_args_numeric("remainder", x, y)
    check_no_complex("remainder", x)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.rem(x, y)
    # lax.rem takes the sign of the dividend; Python's % takes the divisor's.
    trunc = lax.rem(x, y)
    zero = zero_like(trunc)
    fix = lax.bitwise_and(lax.ne(trunc, zero), lax.ne(lax.lt(trunc, zero), lax.lt(y, zero_like(y))))
    return _u.where(fix, lax.add(trunc, y), trunc)


mod = remainder


def fmod(x: Any, y: Any, /) -> Any:
    """Elementwise remainder of `x / y` with the sign of the dividend (C's `fmod`).

    An integer division by zero gives 0, as in NumPy.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fmod(jnp.array([-7, 7]), 3)
      Array([-1,  1], dtype=int32)
    """
    x, y = _u.promote_args_numeric("fmod", x, y)
    check_no_complex("fmod", x)
    if _u.issubdtype_of(x, np.integer):
        y = _u.where(lax.eq(y, zero_like(y)), one_like(y), y)
    return lax.rem(x, y)


def divmod(x: Any, y: Any, /) -> tuple[Any, Any]:
    """`(floor_divide(x, y), remainder(x, y))`, computed together.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.divmod(jnp.array([-7, 7]), 3)
      (Array([-3,  2], dtype=int32), Array([2, 1], dtype=int32))
    """
    x, y = _u.promote_args_numeric("divmod", x, y)
    if _u.issubdtype_of(x, np.floating):
        return _float_divmod(x, y)
    return floor_divide(x, y), remainder(x, y)


def power(x: Any, y: Any, /) -> Any:
    """Elementwise `x ** y`.

    A concrete integer exponent is computed by repeated multiplication
    (`lax.integer_pow`), whatever the dtype of `x`. Integer arrays raised to integer
    arrays use binary exponentiation; a negative exponent then gives 0 (except for
    the bases 1 and -1), as in JAX.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.power(jnp.arange(4), 2)
      Array([0, 1, 4, 9], dtype=int32)
    """
    if isinstance(y, int | np.integer) and not isinstance(y, bool | np.bool_):
        (x,) = _u.promote_dtypes_numeric(x)
        return lax.integer_pow(x, operator.index(y))
    x, y = _u.promote_args_numeric("power", x, y)
    if _u.issubdtype_of(x, np.integer):
        return _integer_power(x, y)
    return lax.pow(x, y)


pow = power  # noqa: A001 - the array API's name


def _integer_power(x: Any, y: Any) -> Any:
    """`x ** y` for integer arrays, by binary exponentiation over the bits of `y`."""
    shape = sd.broadcast_shapes(_u.shape(x), _u.shape(y))
    x, y = _u.broadcast_to(x, shape), _u.broadcast_to(y, shape)
    signed = _u.issubdtype_of(y, np.signedinteger)
    exp = lax.abs(y) if signed else y
    zero, one = zero_like(y), one_like(y)
    acc = _shape_ops.full(shape, 1, _u.dtype(x))
    base = x
    for _ in range(dtypes.iinfo(_u.dtype(y)).bits - (1 if signed else 0)):
        bit_set = lax.ne(lax.bitwise_and(exp, one), zero)
        acc = _u.where(bit_set, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exp = lax.shift_right_logical(exp, one)
    if signed:
        vanishes = lax.bitwise_and(lax.lt(y, zero), lax.ne(lax.abs(x), one_like(x)))
        acc = _u.where(vanishes, zero_like(acc), acc)
    return acc


def float_power(x: Any, y: Any, /) -> Any:
    """Elementwise `x ** y` computed in an inexact type (the default float for integers).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.float_power(jnp.array([2, 4]), -1)
      Array([0.5 , 0.25], dtype=float32)
    """
    x, y = _u.promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


def negative(x: Any, /) -> Any:
    """Elementwise `-x` (unsigned integers wrap around; bools are refused).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.negative(jnp.array([1.0, -2.0]))
      Array([-1.,  2.], dtype=float32)
    """
    (x,) = _u.promote_args("negative", x)
    return lax.neg(x)


def positive(x: Any, /) -> Any:
    """Elementwise `+x`: `x` itself, as an array.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.positive(2)
      Array(2, dtype=int32, weak_type=True)
    """
    (x,) = _u.promote_args("positive", x)
    # Host values (scalars, NumPy arrays) become arrays, canonicalized as by `asarray`.
    return x if isinstance(x, _u.ARRAY_TYPES) else device_put(x)


def absolute(x: Any, /) -> Any:
    """Elementwise absolute value (the magnitude, a real number, for complex `x`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.absolute(jnp.array([-1.5, 2.0]))
      Array([1.5, 2. ], dtype=float32)
    """
    (x,) = _u.promote_args("absolute", x)
    if _u.is_bool(x) or _u.issubdtype_of(x, np.unsignedinteger):
        return _u.as_array(x)
    return lax.abs(x)


abs = absolute  # noqa: A001 - NumPy's name


def fabs(x: Any, /) -> Any:
    """Elementwise absolute value in a floating type (integers are promoted).

    Raises:
      TypeError: complex `x`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fabs(jnp.array([-1, 2]))
      Array([1., 2.], dtype=float32)
    """
    (x,) = _u.promote_args_inexact("fabs", x)
    check_no_complex("fabs", x)
    return lax.abs(x)


def sign(x: Any, /) -> Any:
    """Elementwise sign: -1, 0 or 1 (`x / |x|` for complex `x`, 0 at 0).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.sign(jnp.array([-3.0, 0.0, 2.0]))
      Array([-1.,  0.,  1.], dtype=float32)
    """
    (x,) = _u.promote_args("sign", x)
    if _u.is_bool(x):
        return _u.as_array(x)
    return lax.sign(x)


def square(x: Any, /) -> Any:
    """Elementwise `x * x` (bools are promoted to the default integer).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.square(jnp.array([2, -3]))
      Array([4, 9], dtype=int32)
    """
    (x,) = _u.promote_args_numeric("square", x)
    return lax.square(x)


def reciprocal(x: Any, /) -> Any:
    """Elementwise `1 / x`; unlike NumPy, integers are promoted to floats.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.reciprocal(jnp.array([2, 4]))
      Array([0.5 , 0.25], dtype=float32)
    """
    (x,) = _u.promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def heaviside(x1: Any, x2: Any, /) -> Any:
    """The Heaviside step function: 0 where `x1 < 0`, `x2` where `x1 == 0`, 1 where `x1 > 0`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.heaviside(jnp.array([-1.0, 0.0, 2.0]), 0.5)
      Array([0. , 0.5, 1. ], dtype=float32)
    """
    x1, x2 = _u.promote_args_inexact("heaviside", x1, x2)
    check_no_complex("heaviside", x1)
    zero = zero_like(x1)
    positive_part = _u.where(lax.gt(x1, zero), one_like(x1), x2)
    return _u.where(lax.lt(x1, zero), zero, positive_part)


# ---------------------------------------------------------------------------
# Maximum and minimum


def maximum(x: Any, y: Any, /) -> Any:
    """Elementwise maximum, propagating NaNs (complex numbers compare lexicographically).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.maximum(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
      Array([ 2., nan,  3.], dtype=float32)
    """
    x, y = _u.promote_args("maximum", x, y)
    return lax.max(x, y)


def minimum(x: Any, y: Any, /) -> Any:
    """Elementwise minimum, propagating NaNs (complex numbers compare lexicographically).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.minimum(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
      Array([ 1., nan,  2.], dtype=float32)
    """
    x, y = _u.promote_args("minimum", x, y)
    return lax.min(x, y)


def _nan_ignoring(
    name: str, pick: Callable[[Any, Any], Any], wins: Callable[[Any, Any], Any]
) -> Callable[[Any, Any], Any]:
    def fn(x1: Any, x2: Any) -> Any:  # not positional-only: JAX takes x1=, x2=
        x1, x2 = _u.promote_args(name, x1, x2)
        if not _u.is_inexact(x1):
            return pick(x1, x2)
        # x1 where it wins or x2 is NaN, else x2 (NaN only where both are). A select,
        # not max/min: on ties the derivative goes whole to x2, as in JAX.
        return _u.where(lax.bitwise_or(wins(x1, x2), lax.ne(x2, x2)), x1, x2)

    fn.__name__ = fn.__qualname__ = name
    return fn


# `greater`/`less` (defined below) order complex numbers lexicographically.
fmax = _nan_ignoring("fmax", lax.max, lambda a, b: greater(a, b))
fmax.__doc__ = """Elementwise maximum, ignoring NaNs (NaN only where both operands are).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fmax(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
      Array([2., 2., 3.], dtype=float32)
    """
fmin = _nan_ignoring("fmin", lax.min, lambda a, b: less(a, b))
fmin.__doc__ = """Elementwise minimum, ignoring NaNs (NaN only where both operands are).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fmin(jnp.array([1.0, jnp.nan, 3.0]), 2.0)
      Array([1., 2., 2.], dtype=float32)
    """


# ---------------------------------------------------------------------------
# Comparisons


def _compare(
    prim_fn: Callable[[Any, Any], Any],
    name: str,
    op: str,
    strict_fn: Callable[[Any, Any], Any] | None = None,
) -> Callable[[Any, Any], Any]:
    """`jnp.<name>`; `strict_fn` (the strict form of an ordering) orders complex operands."""

    def compare(x: Any, y: Any, /) -> Any:
        x, y = _u.promote_args(name, x, y)
        if strict_fn is not None and _u.is_complex(x):
            return _lexicographic(prim_fn, strict_fn, x, y)
        return prim_fn(x, y)

    compare.__name__ = compare.__qualname__ = name
    compare.__doc__ = f"""Elementwise `x {op} y`, a bool array (operands are promoted first).

    Complex numbers are ordered lexicographically, by real part and then imaginary
    part, as in NumPy and JAX (`lax`'s comparisons reject them).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.{name}(jnp.arange(3), 1).dtype
      dtype('bool')
    """
    return compare


def _lexicographic(
    prim_fn: Callable[[Any, Any], Any], strict_fn: Callable[[Any, Any], Any], x: Any, y: Any
) -> Any:
    """`x op y` for complex operands: the real parts decide, and the imaginary parts
    where the real parts are equal (so a NaN in a deciding part makes it false)."""
    x_re, y_re = _complex.real(x), _complex.real(y)
    ties = lax.bitwise_and(lax.eq(x_re, y_re), prim_fn(_complex.imag(x), _complex.imag(y)))
    return lax.bitwise_or(strict_fn(x_re, y_re), ties)


equal = _compare(lax.eq, "equal", "==")
not_equal = _compare(lax.ne, "not_equal", "!=")
less = _compare(lax.lt, "less", "<", lax.lt)
less_equal = _compare(lax.le, "less_equal", "<=", lax.lt)
greater = _compare(lax.gt, "greater", ">", lax.gt)
greater_equal = _compare(lax.ge, "greater_equal", ">=", lax.gt)


# ---------------------------------------------------------------------------
# Logic


def _to_bool(x: Any) -> Any:
    return x if _u.is_bool(x) else lax.ne(x, zero_like(x))


def _logical(prim_fn: Callable[[Any, Any], Any], name: str, op: str) -> Callable[[Any, Any], Any]:
    def logical(x: Any, y: Any, /) -> Any:
        x, y = _u.promote_args(name, x, y)
        return prim_fn(_to_bool(x), _to_bool(y))

    logical.__name__ = logical.__qualname__ = name
    logical.__doc__ = f"""Elementwise logical `{op}` of the truth values of `x` and `y` (bool).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.{name}(jnp.array([0, 1, 2]), True).dtype
      dtype('bool')
    """
    return logical


logical_and = _logical(lax.bitwise_and, "logical_and", "and")
logical_or = _logical(lax.bitwise_or, "logical_or", "or")
logical_xor = _logical(lax.bitwise_xor, "logical_xor", "xor")


def logical_not(x: Any, /) -> Any:
    """Elementwise logical negation of the truth value of `x` (bool result).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.logical_not(jnp.array([0, 2]))
      Array([ True, False], dtype=bool)
    """
    (x,) = _u.promote_args("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


# ---------------------------------------------------------------------------
# Bits


def _bitwise(prim_fn: Callable[[Any, Any], Any], name: str, op: str) -> Callable[[Any, Any], Any]:
    def bitwise(x: Any, y: Any, /) -> Any:
        x, y = _u.promote_args(name, x, y)
        check_integer_or_bool(name, x)
        return prim_fn(x, y)

    bitwise.__name__ = bitwise.__qualname__ = name
    bitwise.__doc__ = f"""Elementwise bitwise `{op}` of integer or bool arrays.

    Raises:
      TypeError: floating or complex operands.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.{name}(jnp.array([12]), 10).dtype
      dtype('int32')
    """
    return bitwise


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and", "and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or", "or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor", "xor")


def invert(x: Any, /) -> Any:
    """Elementwise bitwise not (logical not for bools).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.invert(jnp.array([0, 5], jnp.uint8))
      Array([255, 250], dtype=uint8)
    """
    (x,) = _u.promote_args("invert", x)
    check_integer_or_bool("invert", x)
    return lax.bitwise_not(x)


bitwise_not = invert
bitwise_invert = invert


def left_shift(x: Any, y: Any, /) -> Any:
    """Elementwise `x << y` of integers (bools are promoted to the default integer).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.left_shift(jnp.array([1, 3]), 2)
      Array([ 4, 12], dtype=int32)
    """
    x, y = _u.promote_args_numeric("left_shift", x, y)
    check_integer_or_bool("left_shift", x)
    return lax.shift_left(x, y)


def right_shift(x: Any, y: Any, /) -> Any:
    """Elementwise `x >> y`: arithmetic for signed integers, logical for unsigned ones.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.right_shift(jnp.array([-8, 8]), 2)
      Array([-2,  2], dtype=int32)
    """
    x, y = _u.promote_args_numeric("right_shift", x, y)
    check_integer_or_bool("right_shift", x)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x: Any, /) -> Any:
    """The number of 1 bits in the absolute value of each element, as uint8.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.bitwise_count(jnp.array([-3, 7]))
      Array([2, 3], dtype=uint8)
    """
    (x,) = _u.promote_args("bitwise_count", x)
    check_integer_or_bool("bitwise_count", x)
    if _u.is_bool(x):
        return _u.convert(x, np.dtype(np.uint8))
    if _u.issubdtype_of(x, np.signedinteger):
        x = lax.abs(x)
    return _u.convert(_bits.population_count(x), np.dtype(np.uint8))


# ---------------------------------------------------------------------------
# Greatest common divisor and least common multiple


def _check_integer_args(name: str, x: Any) -> None:
    if not _u.issubdtype_of(x, np.integer):
        raise ValueError(f"Arguments to jax.numpy.{name} must be integers, got {_u.dtype(x)}.")


def _gcd_loop(x1: Any, x2: Any) -> Any:
    """Euclid's algorithm on non-negative integer arrays of one shape, all lanes at once."""

    def not_done(carry: tuple[Any, Any]) -> Any:
        _, b = carry
        return _bits.reduce_or(lax.ne(b, zero_like(b)), tuple(range(len(_u.shape(b)))))

    def step(carry: tuple[Any, Any]) -> tuple[Any, Any]:
        a, b = carry
        nonzero = lax.ne(b, zero_like(b))
        safe_b = _u.where(nonzero, b, one_like(b))
        return _u.where(nonzero, b, a), _u.where(nonzero, lax.rem(a, safe_b), zero_like(b))

    return _while.while_loop(not_done, step, (x1, x2))[0]


def gcd(x1: Any, x2: Any) -> Any:
    """Elementwise greatest common divisor of the absolute values (`gcd(0, 0) == 0`).

    Raises:
      ValueError: operands that are not integers.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.gcd(jnp.array([12, -18, 0]), 8)
      Array([4, 2, 8], dtype=int32)
    """
    x1, x2 = _u.promote_args_numeric("gcd", x1, x2)
    _check_integer_args("gcd", x1)
    shape = sd.broadcast_shapes(_u.shape(x1), _u.shape(x2))
    x1, x2 = (_u.broadcast_to(absolute(v), shape) for v in (x1, x2))
    return _gcd_loop(x1, x2)


def lcm(x1: Any, x2: Any) -> Any:
    """Elementwise least common multiple of the absolute values (0 if either is 0).

    Raises:
      ValueError: operands that are not integers.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.lcm(jnp.array([4, -6, 0]), 6)
      Array([12,  6,  0], dtype=int32)
    """
    x1, x2 = _u.promote_args_numeric("lcm", x1, x2)
    _check_integer_args("lcm", x1)
    d = gcd(x1, x2)
    safe_d = _u.where(lax.eq(d, zero_like(d)), one_like(d), d)
    out = absolute(multiply(x1, floor_divide(x2, safe_d)))
    return _u.where(lax.eq(d, zero_like(d)), zero_like(out), out)
