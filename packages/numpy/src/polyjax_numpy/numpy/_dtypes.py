"""Dtypes in `jnp`: scalar types, the type hierarchy, promotion queries, and array properties.

`jnp.float32`, `jnp.bfloat16`, `jnp.int8` ... are *scalar types* as in JAX: each is
a class whose `dtype` attribute is the NumPy dtype, which works wherever a dtype
is expected (`jnp.zeros(3, jnp.float32)`, `np.dtype(jnp.float32)`), and which,
called, builds an array rather than a NumPy scalar (`jnp.float32(1)` is an
`Array`, so it also works on tracers). The abstract categories (`jnp.floating`,
`jnp.integer`, ...) are NumPy's own, which `issubdtype` places the ml_dtypes
types (bfloat16, float8, int4 ...) under.

Promotion questions (`result_type`, `promote_types`) are answered on JAX's
lattice by `polyjax_core.dtypes`, where Python scalars are weakly typed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters.array import Array
from polyjax_numpy.numpy import _util as _u


class _ScalarMeta(type):
    """The metaclass of `jnp`'s scalar types (`jnp.float32` is an instance of it)."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        # Imported here: `_creation` may import this module for the scalar types.
        from polyjax_numpy.numpy._creation import asarray

        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _make_scalar_type(name: str, scalar_type: type) -> _ScalarMeta:
    dtype = np.dtype(scalar_type)
    doc = f"A JAX scalar type of dtype {dtype.name}: `{name}(x)` is `jnp.asarray(x, {name})`."
    return _ScalarMeta(name, (object,), {"dtype": dtype, "__doc__": doc, "__module__": __name__})


bool_ = _make_scalar_type("bool", np.bool_)
bool = bool_  # noqa: A001 - NumPy 2's name
int8 = _make_scalar_type("int8", np.int8)
int16 = _make_scalar_type("int16", np.int16)
int32 = _make_scalar_type("int32", np.int32)
int64 = _make_scalar_type("int64", np.int64)
uint8 = _make_scalar_type("uint8", np.uint8)
uint16 = _make_scalar_type("uint16", np.uint16)
uint32 = _make_scalar_type("uint32", np.uint32)
uint64 = _make_scalar_type("uint64", np.uint64)
float16 = _make_scalar_type("float16", np.float16)
float32 = _make_scalar_type("float32", np.float32)
float64 = _make_scalar_type("float64", np.float64)
complex64 = _make_scalar_type("complex64", np.complex64)
complex128 = _make_scalar_type("complex128", np.complex128)
bfloat16 = _make_scalar_type("bfloat16", dtypes.bfloat16)
int2 = _make_scalar_type("int2", dtypes.int2)
int4 = _make_scalar_type("int4", dtypes.int4)
uint2 = _make_scalar_type("uint2", dtypes.uint2)
uint4 = _make_scalar_type("uint4", dtypes.uint4)
# ml_dtypes older than 0.5 has no 1-bit integers; the names then stay None.
int1 = _make_scalar_type("int1", dtypes.int1) if dtypes.int1 is not None else None
uint1 = _make_scalar_type("uint1", dtypes.uint1) if dtypes.uint1 is not None else None
float4_e2m1fn = _make_scalar_type("float4_e2m1fn", dtypes.float4_e2m1fn)
float6_e2m3fn = _make_scalar_type("float6_e2m3fn", dtypes.float6_e2m3fn)
float6_e3m2fn = _make_scalar_type("float6_e3m2fn", dtypes.float6_e3m2fn)
float8_e3m4 = _make_scalar_type("float8_e3m4", dtypes.float8_e3m4)
float8_e4m3 = _make_scalar_type("float8_e4m3", dtypes.float8_e4m3)
float8_e4m3b11fnuz = _make_scalar_type("float8_e4m3b11fnuz", dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = _make_scalar_type("float8_e4m3fn", dtypes.float8_e4m3fn)
float8_e4m3fnuz = _make_scalar_type("float8_e4m3fnuz", dtypes.float8_e4m3fnuz)
float8_e5m2 = _make_scalar_type("float8_e5m2", dtypes.float8_e5m2)
float8_e5m2fnuz = _make_scalar_type("float8_e5m2fnuz", dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _make_scalar_type("float8_e8m0fnu", dtypes.float8_e8m0fnu)

# The default types are the 64-bit ones, as in JAX: used as dtypes they are
# canonicalized (to 32 bits unless jax_enable_x64 is set).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128
single = float32
double = float64
csingle = complex64
cdouble = complex128

# The abstract categories, for issubdtype.
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
character = np.character
flexible = np.flexible
object_ = np.object_

dtype = np.dtype
ndarray = Array  # the type of arrays (tracers are not instances: test with `jnp.ndim` & co)
ComplexWarning = np.exceptions.ComplexWarning
iinfo = dtypes.iinfo
finfo = dtypes.finfo
issubdtype = dtypes.issubdtype
can_cast = np.can_cast


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype to which a binary operation casts operands of dtypes `a` and `b`.

    Unlike NumPy's, this is JAX's promotion lattice: it never widens to 64 bits on
    its own, and the Python types `int`, `float`, `complex` are weak (they adapt to
    the other type). The result is not canonicalized.

    Args:
      a: a dtype, scalar type, dtype name, or one of `int`, `float`, `complex`.
      b: likewise.

    Returns:
      A NumPy dtype.

    Raises:
      TypePromotionError: there is no implicit promotion between `a` and `b`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.promote_types(jnp.int8, jnp.uint8), jnp.promote_types(jnp.bfloat16, float)
      (dtype('int16'), dtype(bfloat16))
    """
    return dtypes.promote_types(a, b)


def result_type(*args: Any) -> np.dtype:
    """The dtype of the result of an operation on `args`, on JAX's promotion lattice.

    Args:
      *args: arrays, scalars, dtypes or scalar types. Python scalars are weak.

    Returns:
      The canonical dtype (32-bit unless jax_enable_x64 is set).

    Raises:
      ValueError: no arguments.

    Example:
      >>> import numpy as np
      >>> import polyjax.numpy as jnp
      >>> jnp.result_type(np.int8, 1), jnp.result_type(np.int32, 1.0)
      (dtype('int8'), dtype('float32'))
    """
    return dtypes.result_type(*args)


_ISDTYPE_KINDS: dict[str, tuple[Any, ...]] = {
    "bool": (np.bool_,),
    "signed integer": (np.signedinteger,),
    "unsigned integer": (np.unsignedinteger,),
    "integral": (np.integer,),
    "real floating": (np.floating,),
    "complex floating": (np.complexfloating,),
    "numeric": (np.integer, np.floating, np.complexfloating),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether `dtype` is of `kind` (the array API's dtype classification).

    Args:
      dtype: a dtype or scalar type.
      kind: a dtype, one of "bool", "signed integer", "unsigned integer",
        "integral", "real floating", "complex floating", "numeric", or a tuple
        of these (true if any matches).

    Returns:
      A Python bool.

    Raises:
      TypeError: `kind` is neither a dtype, a known name, nor a tuple of them.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.isdtype(jnp.bfloat16, "real floating"), jnp.isdtype(jnp.int8, ("bool", "integral"))
      (True, True)
    """
    the_dtype = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise TypeError(
                    f"isdtype: unknown kind {k!r}; expected a dtype or one of "
                    f"{sorted(_ISDTYPE_KINDS)}"
                )
            if any(dtypes.issubdtype(the_dtype, c) for c in _ISDTYPE_KINDS[k]):
                return True
        else:
            try:
                if the_dtype == np.dtype(k):
                    return True
            except TypeError:
                raise TypeError(
                    f"isdtype: kind must be a dtype, a string or a tuple of them, got {k!r}"
                ) from None
    return False


# ---------------------------------------------------------------------------
# Array properties. Unlike NumPy's, these read the abstract value of tracers,
# and never transfer device data.


def _shape_of(a: Any) -> tuple:
    if _u.is_operand(a):
        return tuple(_u.shape(a))
    return np.shape(a)


def ndim(a: Any) -> int:
    """The number of dimensions of `a` (an array, tracer, scalar or nested sequence).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ndim(jnp.zeros((2, 3))), jnp.ndim(1.0)
      (2, 0)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    return len(_shape_of(a))


def shape(a: Any) -> tuple:
    """The shape of `a` (an array, tracer, scalar or nested sequence).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.shape(jnp.zeros((2, 3))), jnp.shape([[1, 2]])
      ((2, 3), (1, 2))
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    return _shape_of(a)


def size(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """The number of elements of `a`, or along `axis` (an int or a tuple of ints).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.size(jnp.zeros((2, 3))), jnp.size(jnp.zeros((2, 3)), axis=1)
      (6, 3)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    the_shape = _shape_of(a)
    axes = _u.reduction_axes(axis, len(the_shape))
    total = 1
    for ax in axes:
        total = total * the_shape[ax]
    return total


def isscalar(element: Any) -> bool:
    """Whether `element` is a scalar: a Python or NumPy scalar, or any rank-0 array.

    Unlike NumPy's, rank-0 arrays (and tracers) count as scalars, so that the answer
    does not change under `jit`, where scalars become rank-0 arrays.

    Example:
      >>> import numpy as np
      >>> import polyjax.numpy as jnp
      >>> jnp.isscalar(1.0), jnp.isscalar(jnp.array(1.0)), jnp.isscalar(np.zeros(2))
      (True, True, False)
    """
    if np.isscalar(element):
        return True
    if hasattr(element, "__jax_array__") and not isinstance(element, _u.ARRAY_TYPES):
        element = element.__jax_array__()
    if isinstance(element, (*_u.ARRAY_TYPES, np.ndarray)):
        return _u.ndim(element) == 0
    return False


def iscomplexobj(x: Any) -> bool:
    """Whether `x` has a complex dtype (whatever its values).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.iscomplexobj(jnp.zeros(2, jnp.complex64)), jnp.iscomplexobj(1.0)
      (True, False)
    """
    if x is None:
        return False
    try:
        the_dtype = dtypes.dtype(x)
    except TypeError:
        the_dtype = np.asarray(x).dtype
    return dtypes.issubdtype(the_dtype, np.complexfloating)


def isrealobj(x: Any) -> bool:
    """Whether `x` does not have a complex dtype (`not iscomplexobj(x)`)."""
    return not iscomplexobj(x)
