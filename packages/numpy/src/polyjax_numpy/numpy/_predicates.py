"""Elementwise tests of `jnp` (`isnan`, `isclose`, ...), whole-array equality, `nan_to_num`.

The tests give bool arrays and accept every dtype: integers and bools are never
NaN or infinite, and complex numbers are NaN (infinite) where either part is.
`allclose`, `array_equal` and `array_equiv` reduce to one bool, still an array
(so they work under `jit`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _bits, _complex
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _creation, _ufuncs
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._ufuncs import full_like_shape, zero_like

_BOOL = np.dtype(bool)


def _all(x: Any) -> Any:
    """The logical and of every element of the bool array `x`."""
    return _bits.reduce_and(x, tuple(range(_u.ndim(x))))


def _on_parts(x: Any, test: Any, combine: Any) -> Any:
    return combine(test(_complex.real(x)), test(_complex.imag(x)))


def isnan(x: Any, /) -> Any:
    """Whether each element is NaN (a complex number is where either part is).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isnan(jnp.array([1.0, jnp.nan]))
      Array([False,  True], dtype=bool)
    """
    (x,) = _u.promote_args("isnan", x)
    if not _u.is_inexact(x):
        return full_like_shape(False, x, _BOOL)
    return lax.ne(x, x)


def _isinf_real(x: Any) -> Any:
    return lax.eq(lax.abs(x), _u.scalar_like(np.inf, x))


def isinf(x: Any, /) -> Any:
    """Whether each element is infinite, of either sign (complex: either part).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isinf(jnp.array([1.0, -jnp.inf, jnp.nan]))
      Array([False,  True, False], dtype=bool)
    """
    (x,) = _u.promote_args("isinf", x)
    if not _u.is_inexact(x):
        return full_like_shape(False, x, _BOOL)
    if _u.is_complex(x):
        return _on_parts(x, _isinf_real, lax.bitwise_or)
    return _isinf_real(x)


def isfinite(x: Any, /) -> Any:
    """Whether each element is neither infinite nor NaN (complex: both parts).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isfinite(jnp.array([1.0, -jnp.inf, jnp.nan]))
      Array([ True, False, False], dtype=bool)
    """
    (x,) = _u.promote_args("isfinite", x)
    if not _u.is_inexact(x):
        return full_like_shape(True, x, _BOOL)
    if _u.is_complex(x):
        return _on_parts(x, lax.is_finite, lax.bitwise_and)
    return lax.is_finite(x)


def _signed_inf_test(name: str, sign: float) -> Any:
    def test(x: Any, /, out: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        (x,) = _u.promote_args(name, x)
        if _u.is_complex(x):
            raise ValueError(
                f"jnp.{name} is not well defined for complex input, got {_u.dtype(x)}."
            )
        if not _u.is_inexact(x):
            return full_like_shape(False, x, _BOOL)
        return lax.eq(x, _u.scalar_like(sign * np.inf, x))

    test.__name__ = test.__qualname__ = name
    which = "positive" if sign > 0 else "negative"
    test.__doc__ = f"""Whether each element is {which} infinity.

    Raises:
      ValueError: complex input.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.{name}(jnp.array([jnp.inf, -jnp.inf, 1.0])).dtype
      dtype('bool')
    """
    return test


isposinf = _signed_inf_test("isposinf", 1.0)
isneginf = _signed_inf_test("isneginf", -1.0)


def isreal(x: Any) -> Any:
    """Whether each element has a zero imaginary part (true for every real dtype).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isreal(jnp.array([1 + 0j, 1j]))
      Array([ True, False], dtype=bool)
    """
    (x,) = _u.promote_args("isreal", x)
    if not _u.is_complex(x):
        return full_like_shape(True, x, _BOOL)
    imag = _complex.imag(x)
    return lax.eq(imag, zero_like(imag))


def iscomplex(x: Any) -> Any:
    """Whether each element has a nonzero imaginary part (false for every real dtype).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.iscomplex(jnp.array([1 + 0j, 1j]))
      Array([False,  True], dtype=bool)
    """
    (x,) = _u.promote_args("iscomplex", x)
    if not _u.is_complex(x):
        return full_like_shape(False, x, _BOOL)
    imag = _complex.imag(x)
    return lax.ne(imag, zero_like(imag))


def _tolerance(value: Any, like: Any) -> Any:
    """A tolerance in the real dtype of `like` (weak Python scalars stay literals)."""
    real = dtypes.finfo(_u.dtype(like)).dtype
    if type(value) in (int, float):
        return np.asarray(value, real)[()]
    return _u.convert(_creation.asarray(value), real)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether `|a - b| <= atol + rtol * |b|` elementwise; infinities equal only themselves.

    For integer and bool operands this is exact equality, as in JAX.

    Args:
      a: an array.
      b: an array, broadcastable with `a` (the reference: the test is not symmetric).
      rtol: the relative tolerance.
      atol: the absolute tolerance.
      equal_nan: whether two NaNs count as close.

    Returns:
      A bool array.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isclose(jnp.array([1.0, 1.1, jnp.inf]), jnp.array([1.0 + 1e-7, 1.0, jnp.inf]))
      Array([ True, False,  True], dtype=bool)
    """
    a, b = _u.promote_args("isclose", a, b)
    if not _u.is_inexact(a):
        return lax.eq(a, b)
    rtol, atol = _tolerance(rtol, a), _tolerance(atol, a)
    distance = lax.abs(lax.sub(a, b))
    close = lax.le(distance, lax.add(atol, lax.mul(rtol, lax.abs(b))))
    # Infinities are close only to themselves (inf - inf would be NaN).
    either_inf = lax.bitwise_or(isinf(a), isinf(b))
    close = _u.where(either_inf, lax.eq(a, b), close)
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(isnan(a), isnan(b)))
    return close


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether `isclose(a, b, ...)` holds everywhere: a rank-0 bool array.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.allclose(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0 + 1e-6]))
      Array(True, dtype=bool)
    """
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether `a1` and `a2` have one shape and equal elements: a rank-0 bool array.

    Arguments that cannot be made arrays are simply not equal.

    Args:
      a1: an array-like.
      a2: an array-like.
      equal_nan: whether NaNs in the same places count as equal.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array_equal(jnp.arange(3), jnp.array([0, 1, 2])), jnp.array_equal([1], [1, 1])
      (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    try:
        a1, a2 = _creation.asarray(a1), _creation.asarray(a2)
    except (TypeError, ValueError):
        return _creation.asarray(False)
    if not sd.definitely_equal_shape(_u.shape(a1), _u.shape(a2)):
        return _creation.asarray(False)
    equal = _ufuncs.equal(a1, a2)
    if equal_nan:
        equal = lax.bitwise_or(equal, lax.bitwise_and(isnan(a1), isnan(a2)))
    return _all(equal)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether `a1` and `a2` broadcast together and are equal everywhere: a rank-0 bool.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array_equiv(jnp.array([1, 1]), 1), jnp.array_equiv(jnp.array([1, 2]), [1, 2, 3])
      (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    try:
        a1, a2 = _creation.asarray(a1), _creation.asarray(a2)
        sd.broadcast_shapes(_u.shape(a1), _u.shape(a2))
    except (TypeError, ValueError):
        return _creation.asarray(False)
    return _all(_ufuncs.equal(a1, a2))


def nan_to_num(
    x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None, neginf: Any = None
) -> Any:
    """`x` with NaNs and infinities replaced by finite numbers.

    Args:
      x: an array; integers and bools are returned unchanged, complex numbers are
        treated part by part.
      copy: accepted for NumPy compatibility (arrays are immutable).
      nan: the value for NaNs.
      posinf: the value for +inf (default: the largest finite value of the dtype).
      neginf: the value for -inf (default: the most negative finite value).

    Returns:
      An array of `x`'s dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nan_to_num(jnp.array([jnp.nan, jnp.inf, -1.0]), posinf=9.0)
      Array([ 0.,  9., -1.], dtype=float32)
    """
    del copy
    (x,) = _u.promote_args("nan_to_num", x)
    if not _u.is_inexact(x):
        return _u.as_array(x)
    if _u.is_complex(x):
        parts = (_complex.real(x), _complex.imag(x))
        re, im = (nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf) for p in parts)
        return _complex.complex(re, im)
    info = dtypes.finfo(_u.dtype(x))
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = _u.where(lax.ne(x, x), _value_like(nan, x), x)
    out = _u.where(lax.eq(x, _u.scalar_like(np.inf, x)), _value_like(posinf, x), out)
    return _u.where(lax.eq(x, _u.scalar_like(-np.inf, x)), _value_like(neginf, x), out)


def _value_like(value: Any, x: Any) -> Any:
    """`value` (a scalar or an array) in `x`'s dtype, for `where`."""
    if _u.is_operand(value) and not isinstance(value, bool | int | float | complex | np.generic):
        return _u.convert(value, _u.dtype(x), _u.aval(x).weak_type)
    return _u.scalar_like(value, x)
