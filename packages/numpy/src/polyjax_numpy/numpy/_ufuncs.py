"""Elementwise arithmetic of `jnp`: the functions behind `x + y`, `x // y`, `x < y`, `~x`.

Each function promotes its operands (`_util.promote_args*`: JAX's dtype lattice,
weak Python scalars, NumPy broadcasting) and then binds lax primitives, with
NumPy's semantics where lax differs: `+` and `*` on bools are "or" and "and",
`/` always gives an inexact type, `//` and `%` round towards minus infinity as
in Python, and integer `**` works by repeated squaring.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u


def add(x: Any, y: Any) -> Any:
    x, y = _u.promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _u.is_bool(x) else lax.add(x, y)


def subtract(x: Any, y: Any) -> Any:
    x, y = _u.promote_args("subtract", x, y)
    return lax.sub(x, y)


def multiply(x: Any, y: Any) -> Any:
    x, y = _u.promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _u.is_bool(x) else lax.mul(x, y)


def true_divide(x: Any, y: Any) -> Any:
    x, y = _u.promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


def _select(pred: Any, x: Any, y: Any) -> Any:
    # select_n picks its second operand where the predicate is true.
    return lax.select_n(pred, y, x)


def floor_divide(x: Any, y: Any) -> Any:
    x, y = _u.promote_args_numeric("floor_divide", x, y)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.div(x, y)
    if _u.issubdtype_of(x, np.integer):
        # lax.div truncates towards zero; step down where the signs differ and the
        # division was not exact.
        quotient = lax.div(x, y)
        remainder = lax.rem(x, y)
        inexact = lax.ne(remainder, _zero_like(remainder))
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        fix = lax.bitwise_and(inexact, signs_differ)
        return _select(fix, lax.sub(quotient, _one_like(quotient)), quotient)
    if _u.issubdtype_of(x, np.complexfloating):
        raise NotImplementedError("floor_divide of complex numbers is not supported yet (issue 5)")
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    # Python's semantics: the remainder takes the sign of the divisor.
    mod = lax.rem(x, y)
    div = lax.div(lax.sub(x, mod), y)
    fix = lax.bitwise_and(lax.ne(mod, _zero_like(mod)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = _select(fix, lax.add(mod, y), mod)
    div = _select(fix, lax.sub(div, _one_like(div)), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def remainder(x: Any, y: Any) -> Any:
    x, y = _u.promote_args_numeric("remainder", x, y)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.rem(x, y)
    if _u.issubdtype_of(x, np.complexfloating):
        raise NotImplementedError("remainder of complex numbers is not supported yet (issue 5)")
    # lax.rem takes the sign of the dividend; Python's % takes the divisor's.
    trunc = lax.rem(x, y)
    zero = _zero_like(trunc)
    fix = lax.bitwise_and(
        lax.ne(trunc, zero), lax.ne(lax.lt(trunc, zero), lax.lt(y, _zero_like(y)))
    )
    return _select(fix, lax.add(trunc, y), trunc)


def divmod(x: Any, y: Any) -> tuple[Any, Any]:
    x, y = _u.promote_args_numeric("divmod", x, y)
    if _u.issubdtype_of(x, np.floating):
        return _float_divmod(x, y)
    return floor_divide(x, y), remainder(x, y)


def _zero_like(x: Any) -> Any:
    return _u.scalar_like(0, x)


def _one_like(x: Any) -> Any:
    return _u.scalar_like(1, x)


def power(x: Any, y: Any) -> Any:
    # A concrete integer exponent becomes integer_pow (repeated multiplication),
    # whatever the dtype of the base.
    if isinstance(y, int | np.integer) and not isinstance(y, bool | np.bool_):
        (x,) = _u.promote_dtypes_numeric(x)
        return lax.integer_pow(x, operator.index(y))
    x, y = _u.promote_args_numeric("power", x, y)
    if _u.issubdtype_of(x, np.integer):
        return _integer_power(x, y)
    return lax.pow(x, y)


def _integer_power(x: Any, y: Any) -> Any:
    """`x ** y` for integer arrays, by binary exponentiation over the bits of `y`.

    A negative exponent gives 0, except for the bases 1 and -1 (whose powers are
    1 and +-1), as in JAX.
    """
    shape = sd.broadcast_shapes(_u.shape(x), _u.shape(y))
    x, y = (_shape_ops.broadcast_in_dim(v, shape, _trailing_dims(v, shape)) for v in (x, y))
    signed = _u.issubdtype_of(y, np.signedinteger)
    exp = lax.abs(y) if signed else y
    zero, one = _zero_like(y), _one_like(y)
    acc = _shape_ops.full(shape, 1, _u.dtype(x))
    base = x
    for _ in range(dtypes.iinfo(_u.dtype(y)).bits - (1 if signed else 0)):
        bit_set = lax.ne(lax.bitwise_and(exp, one), zero)
        acc = _select(bit_set, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exp = lax.shift_right_logical(exp, one)
    if signed:
        vanishes = lax.bitwise_and(lax.lt(y, zero), lax.ne(lax.abs(x), _one_like(x)))
        acc = _select(vanishes, _shape_ops.full(shape, 0, _u.dtype(x)), acc)
    return acc


def _trailing_dims(x: Any, shape: tuple) -> tuple[int, ...]:
    ndim = len(_u.shape(x))
    return tuple(range(len(shape) - ndim, len(shape)))


def _compare(prim_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def compare(x: Any, y: Any, /) -> Any:
        x, y = _u.promote_args(name, x, y)
        return prim_fn(x, y)

    compare.__name__ = compare.__qualname__ = name
    return compare


equal = _compare(lax.eq, "equal")
not_equal = _compare(lax.ne, "not_equal")
less = _compare(lax.lt, "less")
less_equal = _compare(lax.le, "less_equal")
greater = _compare(lax.gt, "greater")
greater_equal = _compare(lax.ge, "greater_equal")


def _bitwise(prim_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def op(x: Any, y: Any, /) -> Any:
        x, y = _u.promote_args(name, x, y)
        _check_integer_or_bool(name, x)
        return prim_fn(x, y)

    op.__name__ = op.__qualname__ = name
    return op


bitwise_and = _bitwise(lax.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(lax.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(lax.bitwise_xor, "bitwise_xor")


def _check_integer_or_bool(name: str, x: Any) -> None:
    if not (_u.is_bool(x) or _u.issubdtype_of(x, np.integer)):
        raise TypeError(
            f"{name} is only defined for integer and boolean types, got dtype {_u.dtype(x).name}."
        )


def left_shift(x: Any, y: Any) -> Any:
    x, y = _u.promote_args_numeric("left_shift", x, y)
    _check_integer_or_bool("left_shift", x)
    return lax.shift_left(x, y)


def right_shift(x: Any, y: Any) -> Any:
    x, y = _u.promote_args_numeric("right_shift", x, y)
    _check_integer_or_bool("right_shift", x)
    if _u.issubdtype_of(x, np.unsignedinteger):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


def negative(x: Any) -> Any:
    return lax.neg(x)


def positive(x: Any) -> Any:
    return x


def absolute(x: Any) -> Any:
    if _u.is_bool(x) or _u.issubdtype_of(x, np.unsignedinteger):
        return x
    return lax.abs(x)


def invert(x: Any) -> Any:
    _check_integer_or_bool("invert", x)
    return lax.bitwise_not(x)


def round_operator(x: Any, ndigits: int | None = None) -> Any:
    """`round(x, ndigits)`: NumPy's round-half-to-even; an int array when `ndigits` is None."""
    decimals = 0 if ndigits is None else operator.index(ndigits)
    if _u.is_bool(x) or _u.issubdtype_of(x, np.integer):
        if decimals < 0:
            raise NotImplementedError("round of integers with negative ndigits is not supported")
        out = x
    elif _u.issubdtype_of(x, np.complexfloating):
        raise NotImplementedError("round of complex numbers is not supported yet (issue 5)")
    elif decimals == 0:
        out = lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    else:
        factor = _u.scalar_like(10.0**decimals, x)
        out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    if ndigits is None:
        return _u.convert(out, dtypes.canonicalize_dtype(dtypes.int_))
    return out
