"""Dtypes: the supported element types, type promotion, and canonicalization.

polyjax follows JAX's dtype rules, which differ from NumPy's in three ways:

1. **More types.** The low-precision types of ``ml_dtypes`` (``bfloat16``, the
   ``float8_*`` family, ``int4`` ...) are first-class. NumPy does not place them in
   its scalar hierarchy, so :func:`issubdtype` knows where they belong.
2. **A promotion lattice with weak types.** ``promote_types(a, b)`` is the join (least
   upper bound) of ``a`` and ``b`` on a small lattice, chosen so that promotion never
   silently widens to 64 bits. Python scalars are *weakly typed*: the lattice has
   nodes ``i*``, ``f*``, ``c*`` for them, just below the narrowest strong type of
   their kind, so ``int8_array + 1`` stays ``int8``.
3. **Canonicalization.** Unless ``jax_enable_x64`` is set, every 64-bit type is
   replaced by its 32-bit counterpart (:func:`canonicalize_dtype`), and Python
   scalars default to 32-bit types.

Later packages add *extended dtypes* (PRNG key types, for example): objects that
subclass :class:`ExtendedDType` and whose scalar ``type`` subclasses
:class:`extended`. They pass through canonicalization and promote only with
themselves.
"""

from __future__ import annotations

import abc
import functools
import warnings
from collections.abc import Iterable
from typing import Any, Protocol, TypeAlias, Union

import ml_dtypes
import numpy as np

# `from ... import` reads the submodule from sys.modules, so it keeps working even if
# the package namespace later binds the name `config` to the Config object.
from polyjax_core.config import enable_x64, numpy_dtype_promotion

__all__ = [
    "DType",
    "DTypeLike",
    "ExtendedDType",
    "TypePromotionError",
    "bfloat16",
    "bool_",
    "canonicalize_dtype",
    "check_user_dtype_supported",
    "complex_",
    "default_complex_dtype",
    "default_float_dtype",
    "default_int_dtype",
    "default_uint_dtype",
    "dtype",
    "extended",
    "finfo",
    "float0",
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float_",
    "iinfo",
    "int1",
    "int2",
    "int4",
    "int_",
    "is_python_scalar",
    "is_weakly_typed",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "promote_types",
    "python_scalar_dtypes",
    "result_type",
    "scalar_type_of",
    "to_complex_dtype",
    "to_inexact_dtype",
    "to_numeric_dtype",
    "uint",
    "uint1",
    "uint2",
    "uint4",
]

DType: TypeAlias = np.dtype


class SupportsDType(Protocol):
    """An object with a ``dtype`` attribute, such as ``jnp.float32``."""

    @property
    def dtype(self) -> np.dtype: ...


# What names a dtype (`polyjax.typing.DTypeLike`, defined once here). The functions
# below that also take an extended dtype say `DTypeLike | ExtendedDType`.
# `Union[...]` rather than `|`: the members stay inspectable at run time
# (`DTypeLike.__args__`), and `type[Any] | ...` is not on every supported Python.
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]  # noqa: UP007


# --------------------------------------------------------------------------------------
# Extended dtypes
# --------------------------------------------------------------------------------------


class extended(np.generic):
    """Abstract scalar category of all extended dtypes, for use with :func:`issubdtype`.

    Never instantiated. An extended dtype's ``type`` attribute is a subclass of this.

    Example:
      >>> issubdtype(np.float32, extended)
      False
    """


class prng_key(extended):
    """Abstract scalar category of PRNG key dtypes (defined in polyjax-numpy).

    Example:
      >>> issubdtype(prng_key, extended)
      True
    """


class ExtendedDType(abc.ABC):
    """Base class of dtypes that are not NumPy dtypes, such as PRNG key types.

    Subclasses provide ``type`` (a subclass of :class:`extended`, so that
    :func:`issubdtype` can classify them), ``name``, and value-based ``__eq__`` and
    ``__hash__``. ``_rules`` is where later packages hang the rules that say how the
    dtype is represented and lowered; core never looks inside it.
    """

    _rules: Any = None

    @property
    @abc.abstractmethod
    def type(self) -> type:
        """The scalar type: a subclass of :class:`extended`."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The dtype's name, as printed in jaxprs."""

    def __str__(self) -> str:
        return self.name


# --------------------------------------------------------------------------------------
# The element types
# --------------------------------------------------------------------------------------

bfloat16: type[np.generic] = ml_dtypes.bfloat16
float8_e3m4: type[np.generic] = ml_dtypes.float8_e3m4
float8_e4m3: type[np.generic] = ml_dtypes.float8_e4m3
float8_e4m3b11fnuz: type[np.generic] = ml_dtypes.float8_e4m3b11fnuz
float8_e4m3fn: type[np.generic] = ml_dtypes.float8_e4m3fn
float8_e4m3fnuz: type[np.generic] = ml_dtypes.float8_e4m3fnuz
float8_e5m2: type[np.generic] = ml_dtypes.float8_e5m2
float8_e5m2fnuz: type[np.generic] = ml_dtypes.float8_e5m2fnuz
float8_e8m0fnu: type[np.generic] = ml_dtypes.float8_e8m0fnu
float6_e2m3fn: type[np.generic] = ml_dtypes.float6_e2m3fn
float6_e3m2fn: type[np.generic] = ml_dtypes.float6_e3m2fn
float4_e2m1fn: type[np.generic] = ml_dtypes.float4_e2m1fn
int4: type[np.generic] = ml_dtypes.int4
uint4: type[np.generic] = ml_dtypes.uint4
int2: type[np.generic] = ml_dtypes.int2
uint2: type[np.generic] = ml_dtypes.uint2
# ml_dtypes added the 1-bit integers in 0.5; keep working (as None) without them.
int1: type[np.generic] | None = getattr(ml_dtypes, "int1", None)
uint1: type[np.generic] | None = getattr(ml_dtypes, "uint1", None)

float0: np.dtype = np.dtype([("float0", np.void, 0)])
"""The dtype of tangents of integer and boolean values: a zero-size structured type."""

# Default scalar types. These are the 64-bit types, as in JAX: wherever they are used
# as dtypes they go through canonicalize_dtype, which narrows them to 32 bits unless
# jax_enable_x64 is set. Use default_*_dtype() for the width in effect now.
bool_: type[np.generic] = np.bool_
int_: type[np.generic] = np.int64
uint: type[np.generic] = np.uint64
float_: type[np.generic] = np.float64
complex_: type[np.generic] = np.complex128

_SMALL_FLOAT_TYPES = (
    float4_e2m1fn,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e8m0fnu,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
)
_CUSTOM_FLOAT_TYPES = (*_SMALL_FLOAT_TYPES, bfloat16)
_SUBBYTE_SIGNED_TYPES = tuple(t for t in (int1, int2, int4) if t is not None)
_SUBBYTE_UNSIGNED_TYPES = tuple(t for t in (uint1, uint2, uint4) if t is not None)

_BOOL = np.dtype(bool)
_SIGNED: list[np.dtype] = [
    np.dtype(t) for t in (*_SUBBYTE_SIGNED_TYPES, np.int8, np.int16, np.int32, np.int64)
]
_UNSIGNED: list[np.dtype] = [
    np.dtype(t) for t in (*_SUBBYTE_UNSIGNED_TYPES, np.uint8, np.uint16, np.uint32, np.uint64)
]
_FLOATS: list[np.dtype] = [
    np.dtype(t) for t in (*_CUSTOM_FLOAT_TYPES, np.float16, np.float32, np.float64)
]
_COMPLEXES: list[np.dtype] = [np.dtype(np.complex64), np.dtype(np.complex128)]

# Every numeric dtype, mapped to its kind letter. ml_dtypes types report kind 'V'
# to NumPy, so the kind is recorded here rather than read from `dtype.kind`.
_KIND: dict[np.dtype, str] = {
    _BOOL: "b",
    **{d: "i" for d in _SIGNED},
    **{d: "u" for d in _UNSIGNED},
    **{d: "f" for d in _FLOATS},
    **{d: "c" for d in _COMPLEXES},
}
_SUPPORTED_DTYPES = frozenset({*_KIND, float0})

# Scalar categories that the custom types belong to, for issubdtype.
_CUSTOM_SCALAR_PARENTS: dict[type, frozenset[type]] = {
    **{t: frozenset({np.floating, np.inexact}) for t in _CUSTOM_FLOAT_TYPES},
    **{t: frozenset({np.signedinteger, np.integer}) for t in _SUBBYTE_SIGNED_TYPES},
    **{t: frozenset({np.unsignedinteger, np.integer}) for t in _SUBBYTE_UNSIGNED_TYPES},
}

python_scalar_dtypes: dict[type, np.dtype] = {
    bool: np.dtype(bool),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}
"""The (pre-canonicalization) dtype of each Python scalar type."""

finfo = ml_dtypes.finfo
"""Machine limits of a floating-point dtype, including bfloat16 and the float8 types."""

iinfo = ml_dtypes.iinfo
"""Machine limits of an integer dtype, including int4/uint4 and the other narrow ints."""


# --------------------------------------------------------------------------------------
# Default dtypes and canonicalization
# --------------------------------------------------------------------------------------

_TO_32_BIT = {
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}


def default_int_dtype() -> np.dtype:
    """The dtype of Python ints: int64 if jax_enable_x64 is set, else int32."""
    return np.dtype(np.int64) if enable_x64.value else np.dtype(np.int32)


def default_uint_dtype() -> np.dtype:
    """The default unsigned dtype: uint64 if jax_enable_x64 is set, else uint32."""
    return np.dtype(np.uint64) if enable_x64.value else np.dtype(np.uint32)


def default_float_dtype() -> np.dtype:
    """The dtype of Python floats: float64 if jax_enable_x64 is set, else float32."""
    return np.dtype(np.float64) if enable_x64.value else np.dtype(np.float32)


def default_complex_dtype() -> np.dtype:
    """The dtype of Python complexes: complex128 if jax_enable_x64, else complex64."""
    return np.dtype(np.complex128) if enable_x64.value else np.dtype(np.complex64)


# (dtype-like, x64, allow_extended) -> canonical dtype. Keys are whatever callers pass
# (dtypes, scalar types, names); the set of distinct ones is small, so it stays small.
_canonical_cache: dict[tuple[Any, bool, bool], Any] = {}


def canonicalize_dtype(dtype: DTypeLike | ExtendedDType, allow_extended_dtype: bool = False) -> Any:
    """Returns the dtype that values of ``dtype`` actually get.

    Without ``jax_enable_x64``, the 64-bit types become their 32-bit counterparts
    (int64 -> int32, uint64 -> uint32, float64 -> float32, complex128 -> complex64);
    everything else is unchanged. Results are cached per (dtype, x64 flag).

    Args:
      dtype: anything ``np.dtype`` accepts, or an :class:`ExtendedDType`.
      allow_extended_dtype: whether an extended dtype is acceptable (it is returned
        unchanged).

    Returns:
      A ``np.dtype`` (or the extended dtype itself).

    Raises:
      TypeError: if ``dtype`` does not name a dtype.
      ValueError: if ``dtype`` is extended and ``allow_extended_dtype`` is False.

    Example:
      >>> with enable_x64(False):
      ...     canonicalize_dtype(np.float64)
      dtype('float32')
    """
    key = (dtype, enable_x64.value, allow_extended_dtype)
    try:
        return _canonical_cache[key]
    except KeyError:
        pass
    except TypeError:  # unhashable dtype-like: compute without caching
        return _canonicalize_uncached(*key)
    result = _canonical_cache[key] = _canonicalize_uncached(*key)
    return result


def _canonicalize_uncached(
    dtype: DTypeLike | ExtendedDType, x64: bool, allow_extended_dtype: bool
) -> Any:
    if _is_extended(dtype):
        if not allow_extended_dtype:
            raise ValueError(
                f"canonicalize_dtype got the extended dtype {dtype}; pass "
                "allow_extended_dtype=True where extended dtypes are expected."
            )
        return dtype
    assert not isinstance(dtype, ExtendedDType)  # returned above
    try:
        np_dtype = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"dtype {dtype!r} not understood") from e
    return np_dtype if x64 else _TO_32_BIT.get(np_dtype, np_dtype)


def _is_extended(x: Any) -> bool:
    """Whether ``x`` is an extended dtype or an extended scalar type."""
    return isinstance(x, ExtendedDType) or (isinstance(x, type) and issubclass(x, extended))


# --------------------------------------------------------------------------------------
# The dtype of a value
# --------------------------------------------------------------------------------------


def is_weakly_typed(x: Any) -> bool:
    """Whether ``x`` is weakly typed: a Python int/float/complex, or a weak value.

    Objects (abstract values, tracers, arrays) declare weak typing with a ``weak_type``
    attribute, or an ``aval`` whose ``weak_type`` is true. Python bools are not weak:
    ``bool`` is already the narrowest type.

    Example:
      >>> is_weakly_typed(1.0), is_weakly_typed(np.float32(1.0))
      (True, False)
    """
    if type(x) in _WEAK_SCALAR_TYPES:
        return True
    weak = getattr(x, "weak_type", None)
    if weak is None:
        weak = getattr(getattr(x, "aval", None), "weak_type", False)
    return bool(weak)


_WEAK_SCALAR_TYPES = frozenset({int, float, complex})


def is_python_scalar(x: Any) -> bool:
    """Whether ``x`` is a Python scalar, or a rank-0 weakly-typed value standing for one.

    Example:
      >>> is_python_scalar(True), is_python_scalar(np.int32(1))
      (True, False)
    """
    if type(x) in python_scalar_dtypes:
        return True
    if not is_weakly_typed(x):
        return False
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = getattr(getattr(x, "aval", None), "shape", None)
    return shape == ()


def dtype(x: Any, *, canonicalize: bool = False) -> Any:
    """Returns the dtype of a value or of a dtype-like.

    Python scalars get the 64-bit dtype of their kind (``int -> int64``); with
    ``canonicalize=True`` that becomes 32 bits unless jax_enable_x64 is set.

    Args:
      x: a Python scalar or scalar type, a NumPy array or scalar, a dtype, a dtype
        name, an :class:`ExtendedDType`, or any object with a ``dtype`` attribute.
      canonicalize: whether to apply :func:`canonicalize_dtype` to the result.

    Returns:
      A ``np.dtype`` or an :class:`ExtendedDType`.

    Raises:
      TypeError: if no dtype can be determined, or it is not one polyjax supports.
      ValueError: if ``x`` is None.

    Example:
      >>> with enable_x64(False):
      ...     dtype(1), dtype(1, canonicalize=True)
      (dtype('int64'), dtype('int32'))
    """
    dt = _dtype_of(x)
    if not isinstance(dt, ExtendedDType) and dt not in _SUPPORTED_DTYPES:
        raise TypeError(
            f"Value {x!r} with dtype {dt} is not a valid polyjax array type. Only arrays "
            "of numeric types (and bool) are supported."
        )
    return canonicalize_dtype(dt, allow_extended_dtype=True) if canonicalize else dt


def _dtype_of(x: Any) -> Any:
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    scalar_dtype = python_scalar_dtypes.get(type(x))
    if scalar_dtype is not None:
        return scalar_dtype
    if isinstance(x, (np.dtype, ExtendedDType)):
        return x
    if isinstance(x, type):
        if x in python_scalar_dtypes:
            return python_scalar_dtypes[x]
        if issubclass(x, extended):
            raise TypeError(f"{x.__name__} is an abstract dtype category, not a dtype.")
    elif hasattr(x, "dtype"):
        return x.dtype
    try:
        return np.dtype(x)
    except TypeError:
        raise TypeError(f"Cannot determine dtype of {x!r}") from None


def scalar_type_of(x: Any) -> type:
    """Returns the Python scalar type (bool, int, float or complex) matching ``x``'s dtype.

    Raises:
      TypeError: if ``x``'s dtype is not numeric or bool.

    Example:
      >>> scalar_type_of(np.zeros(3, bfloat16))
      <class 'float'>
    """
    dt = dtype(x)
    kind = None if isinstance(dt, ExtendedDType) else _KIND.get(dt)
    if kind is None:
        raise TypeError(f"Invalid scalar value {x!r}")
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(dtype: DTypeLike) -> int:
    """The number of bits per element, correct for sub-byte types (``int4`` -> 4).

    ``bool`` counts as 8 bits, its storage size.
    """
    dt = np.dtype(dtype)
    kind = _KIND.get(dt)
    if kind == "b":
        return 8
    if kind in ("i", "u"):
        return int(iinfo(dt).bits)
    if kind == "f":
        return int(finfo(dt).bits)
    if kind == "c":
        return 2 * int(finfo(dt).bits)
    raise ValueError(f"itemsize_bits: unexpected dtype {dt}")


# --------------------------------------------------------------------------------------
# issubdtype
# --------------------------------------------------------------------------------------


def issubdtype(a: DTypeLike | ExtendedDType, b: DTypeLike | ExtendedDType) -> bool:
    """Like ``np.issubdtype``, but aware of ml_dtypes types and extended dtypes.

    ``bfloat16`` and the float8 types are ``np.floating``; ``int4`` and friends are
    ``np.signedinteger`` / ``np.unsignedinteger``; an extended dtype is a subdtype of
    its ``type``'s categories (e.g. :class:`extended`, :class:`prng_key`) and of itself.

    Args:
      a: a dtype-like or extended dtype.
      b: a dtype-like, extended dtype, or abstract category such as ``np.floating``.

    Returns:
      Whether ``a`` is ``b`` or lies below it in the scalar-type hierarchy.

    Example:
      >>> issubdtype(bfloat16, np.floating), issubdtype(int4, np.signedinteger)
      (True, True)
    """
    key = (a, b)
    try:
        return _issubdtype_memo[key]  # shape rules ask the same few questions over and over
    except (KeyError, TypeError):  # a new pair, or an unhashable dtype-like
        pass
    result = _issubdtype_cached(_normalize_for_issubdtype(a), _normalize_for_issubdtype(b))
    try:
        if len(_issubdtype_memo) < 4096:
            _issubdtype_memo[key] = result
    except TypeError:
        pass
    return result


_issubdtype_memo: dict[tuple[Any, Any], bool] = {}


def _normalize_for_issubdtype(x: Any) -> Any:
    """An ExtendedDType or a NumPy scalar type (concrete or abstract category)."""
    if isinstance(x, ExtendedDType):
        return x
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    return np.dtype(x).type


@functools.lru_cache(maxsize=1024)
def _issubdtype_cached(a: Any, b: Any) -> bool:
    if isinstance(b, ExtendedDType):
        return a == b
    if isinstance(a, ExtendedDType):
        a = a.type
    parents = _CUSTOM_SCALAR_PARENTS.get(a)
    if parents is not None:
        return b is a or b in parents or b in (np.number, np.generic)
    return issubclass(a, b)


# --------------------------------------------------------------------------------------
# The promotion lattice
# --------------------------------------------------------------------------------------


class _WeakKind:
    """A lattice node for a weakly-typed kind: ``i*``, ``f*`` or ``c*``.

    These are sentinel objects rather than the Python types int/float/complex because
    ``np.dtype('float64') == float`` is True, which would confuse set and dict lookups.
    """

    def __init__(self, label: str, kind: str):
        self.label = label
        self.kind = kind

    def __repr__(self) -> str:
        return self.label


_I_WEAK = _WeakKind("i*", "i")
_F_WEAK = _WeakKind("f*", "f")
_C_WEAK = _WeakKind("c*", "c")
_WEAK_NODE_FOR_KIND = {"i": _I_WEAK, "u": _I_WEAK, "f": _F_WEAK, "c": _C_WEAK}
_WEAK_NODE_FOR_PYTYPE = {int: _I_WEAK, float: _F_WEAK, complex: _C_WEAK}


def _standard_lattice(x64: bool = True) -> dict[Any, list[Any]]:
    """The documented JAX lattice, each node mapped to the nodes just above it.

    The narrow types JAX's table leaves out (sub-byte ints, float8/6/4) hang just above
    the weak node of their kind and below nothing: they promote with Python scalars,
    and with nothing else, so that low precision is never widened implicitly.

    With ``x64`` off, ``u32`` sits below ``i32`` rather than ``i64`` (as in JAX): mixing
    ``uint32`` with a signed integer of at most 32 bits gives ``int32``, the widest
    signed type values can have, instead of an ``int64`` that would be narrowed anyway.
    """
    d = np.dtype
    b1 = _BOOL
    u8, u16, u32, u64 = d(np.uint8), d(np.uint16), d(np.uint32), d(np.uint64)
    i8, i16, i32, i64 = d(np.int8), d(np.int16), d(np.int32), d(np.int64)
    bf16, f16, f32, f64 = d(bfloat16), d(np.float16), d(np.float32), d(np.float64)
    c64, c128 = d(np.complex64), d(np.complex128)
    narrow_ints = [d(t) for t in (*_SUBBYTE_SIGNED_TYPES, *_SUBBYTE_UNSIGNED_TYPES)]
    narrow_floats = [d(t) for t in _SMALL_FLOAT_TYPES]
    lattice: dict[Any, list[Any]] = {
        b1: [_I_WEAK],
        _I_WEAK: [u8, i8, *narrow_ints],
        u8: [u16, i16],
        u16: [u32, i32],
        u32: [u64, i64 if x64 else i32],
        u64: [_F_WEAK],
        i8: [i16],
        i16: [i32],
        i32: [i64],
        i64: [_F_WEAK],
        _F_WEAK: [_C_WEAK, bf16, f16, *narrow_floats],
        bf16: [f32],
        f16: [f32],
        f32: [f64, c64],
        f64: [c128],
        _C_WEAK: [c64],
        c64: [c128],
        c128: [],
    }
    lattice.update({t: [] for t in (*narrow_ints, *narrow_floats)})
    return lattice


def _strict_lattice() -> dict[Any, list[Any]]:
    """Strict mode: only weak values promote, and only to types of their kind or above.

    A Python int may become any integer or float type, a Python float any float or
    complex type, a Python complex any complex type. Distinct strong types never mix.
    """
    lattice: dict[Any, list[Any]] = {t: [] for t in _KIND}
    lattice[_I_WEAK] = [_F_WEAK, *_SIGNED, *_UNSIGNED]
    lattice[_F_WEAK] = [_C_WEAK, *_FLOATS]
    lattice[_C_WEAK] = list(_COMPLEXES)
    return lattice


def _upper_bounds(lattice: dict[Any, list[Any]]) -> dict[Any, frozenset]:
    """Maps each node to the set of nodes at or above it (its reflexive-transitive closure)."""
    bounds: dict[Any, frozenset] = {}

    def visit(node: Any) -> frozenset:
        if node not in bounds:
            above = {node}
            for parent in lattice[node]:
                above |= visit(parent)
            bounds[node] = frozenset(above)
        return bounds[node]

    for node in lattice:
        visit(node)
    return bounds


# Keyed by the value of the jax_numpy_dtype_promotion option and the x64 flag.
_UPPER_BOUNDS = {
    ("standard", True): _upper_bounds(_standard_lattice(x64=True)),
    ("standard", False): _upper_bounds(_standard_lattice(x64=False)),
    ("strict", True): _upper_bounds(_strict_lattice()),
    ("strict", False): _upper_bounds(_strict_lattice()),
}


class TypePromotionError(ValueError):
    """Raised when a set of dtypes has no implicit promotion."""


@functools.lru_cache(maxsize=1024)
def _join(mode: str, x64: bool, nodes: frozenset) -> Any:
    """The least upper bound of ``nodes`` on the lattice for ``mode`` and ``x64``.

    The common upper bounds are the intersection of each node's upper bounds; the
    join is the one common bound that lies below all the others.
    """
    bounds = _UPPER_BOUNDS[mode, x64]
    for node in nodes:
        if node not in bounds:
            raise TypePromotionError(f"dtype {node} is not a valid dtype for type promotion.")
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    least = [c for c in common if common <= bounds[c]]
    if len(least) == 1:
        return least[0]
    raise TypePromotionError(_no_promotion_message(mode, nodes))


def _no_promotion_message(mode: str, nodes: Iterable[Any]) -> str:
    names = tuple(sorted(str(n) for n in nodes))
    msg = f"Input dtypes {names} have no available implicit dtype promotion path"
    if mode == "strict":
        return (
            f"{msg} when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs "
            "to the desired output type, or set jax_numpy_dtype_promotion=standard."
        )
    narrow = [n for n in nodes if isinstance(n, np.dtype) and itemsize_bits(n) <= 8]
    if any(_KIND.get(n) == "f" for n in narrow):
        return (
            f"{msg}. To avoid unintended promotion, floats of 8 bits or fewer do not "
            "promote implicitly; cast explicitly, e.g. x.astype('float32')."
        )
    if any(_KIND.get(n) in ("i", "u") and itemsize_bits(n) < 8 for n in narrow):
        return (
            f"{msg}. To avoid unintended promotion, sub-byte integers do not promote "
            "implicitly; cast explicitly, e.g. x.astype('int32')."
        )
    return f"{msg}. Try explicitly casting inputs to the desired output type."


def _node(dt: np.dtype, weak: bool) -> Any:
    """The lattice node of a (dtype, weak_type) pair."""
    if weak:
        weak_node = _WEAK_NODE_FOR_KIND.get(_KIND.get(dt, ""))
        if weak_node is not None:
            return weak_node
    return dt


_WEAK_NODE_DTYPE: dict[_WeakKind, Any] = {
    _I_WEAK: python_scalar_dtypes[int],
    _F_WEAK: python_scalar_dtypes[float],
    _C_WEAK: python_scalar_dtypes[complex],
}


def _node_dtype(node: Any) -> np.dtype:
    """The dtype a node stands for, before canonicalization (``f*`` -> float64)."""
    return _WEAK_NODE_DTYPE.get(node, node) if isinstance(node, _WeakKind) else node


def promote_types(a: DTypeLike | ExtendedDType, b: DTypeLike | ExtendedDType) -> np.dtype:
    """Returns the dtype to which a binary operation casts arguments of dtypes a and b.

    This is the join of ``a`` and ``b`` on JAX's promotion lattice. The Python types
    ``int``, ``float`` and ``complex`` are weak: they do not widen a strong type
    (``promote_types('uint8', int)`` is ``uint8``). The result is not canonicalized,
    but the lattice depends on jax_enable_x64: without it ``uint32`` and ``int32``
    promote to ``int32`` (``int64`` with it).

    Args:
      a: a dtype-like (a dtype, scalar type, dtype name, or a Python scalar type).
      b: likewise.

    Returns:
      A ``np.dtype`` (or, for two equal extended dtypes, that extended dtype).

    Raises:
      TypePromotionError: if there is no implicit promotion (e.g. float8 with float32,
        or distinct types under jax_numpy_dtype_promotion='strict').
      TypeError: if an extended dtype is mixed with a different dtype.

    Example:
      >>> promote_types(np.int8, np.uint8), promote_types(np.float16, float)
      (dtype('int16'), dtype('float16'))
    """
    if _is_extended(a) or _is_extended(b):
        return _promote_extended([a, b])
    assert not isinstance(a, ExtendedDType) and not isinstance(b, ExtendedDType)  # see above
    weak_a = _WEAK_NODE_FOR_PYTYPE.get(a) if isinstance(a, type) else None
    weak_b = _WEAK_NODE_FOR_PYTYPE.get(b) if isinstance(b, type) else None
    node_a = weak_a or np.dtype(a)
    node_b = weak_b or np.dtype(b)
    joined = _join(numpy_dtype_promotion.value, enable_x64.value, frozenset((node_a, node_b)))
    return _node_dtype(joined)


def _promote_extended(dtypes: list[Any]) -> Any:
    first = dtypes[0]
    for other in dtypes[1:]:
        if other != first:
            raise TypeError(
                f"Cannot promote {first} and {other}: extended dtypes promote only with "
                "themselves. Convert explicitly."
            )
    return first


def _dtype_and_weak_type(x: Any) -> tuple[Any, bool]:
    # The first two cases are fast paths for the commonest arguments.
    if isinstance(x, np.dtype):
        return x, False
    if type(x) in _WEAK_SCALAR_TYPES:
        return python_scalar_dtypes[type(x)], True
    if x is None:
        return np.dtype(float_), False
    if isinstance(x, type) and x in _WEAK_SCALAR_TYPES:
        return python_scalar_dtypes[x], True
    return _dtype_of(x), is_weakly_typed(x)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """Returns the dtype that combining ``args`` under JAX's promotion rules gives.

    Each argument contributes a dtype and a weak-type flag: Python scalars (and the
    types ``int``, ``float``, ``complex``) are weak, as are objects whose
    ``weak_type`` attribute is true. The dtypes are joined on the lattice
    (see :func:`promote_types`); a weak result gets the default dtype of its kind.
    The result is canonicalized for the current jax_enable_x64 setting; without it,
    64-bit dtypes are joined as their 32-bit counterparts (what values of them are),
    so ``result_type('uint64', 'int8')`` is ``int32`` and no result is 64-bit.

    Args:
      *args: arrays, scalars, dtypes, dtype-likes, or abstract values (objects with
        ``dtype`` and ``weak_type``). ``None`` stands for the default float type.
      return_weak_type_flag: if True, return ``(dtype, weak_type)``.

    Returns:
      The result dtype, or ``(dtype, weak_type)``.

    Raises:
      ValueError: if no arguments are given.
      TypePromotionError: if the dtypes have no implicit promotion.
      TypeError: if an extended dtype is mixed with a different dtype.

    Example:
      >>> with enable_x64(False):
      ...     result_type(np.int8, 1), result_type(1, 2.0, return_weak_type_flag=True)
      (dtype('int8'), (dtype('float32'), True))
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = tuple(map(_dtype_and_weak_type, args))
    out = _promote_pairs(pairs, enable_x64.value, numpy_dtype_promotion.value)
    return out if return_weak_type_flag else out[0]


# The default dtype of each kind before canonicalization narrows it.
_WIDE_DEFAULT_FOR_KIND = {
    "b": _BOOL,
    "i": np.dtype(np.int64),
    "u": np.dtype(np.uint64),
    "f": np.dtype(np.float64),
    "c": np.dtype(np.complex128),
}


def _canonical_node(dt: Any, x64: bool) -> Any:
    return dt if x64 or isinstance(dt, ExtendedDType) else _TO_32_BIT.get(dt, dt)


@functools.lru_cache(maxsize=4096)
def _promote_pairs(pairs: tuple[tuple[Any, bool], ...], x64: bool, mode: str) -> tuple[Any, bool]:
    """result_type on (dtype, weak_type) pairs, cached: the set of distinct calls is small."""
    first_dtype = pairs[0][0]
    if all(d == first_dtype for d, _ in pairs[1:]):
        out_dtype, weak = first_dtype, all(w for _, w in pairs)
    elif any(isinstance(d, ExtendedDType) for d, _ in pairs):
        out_dtype, weak = _promote_extended([d for d, _ in pairs]), False
    else:
        # Values never have 64-bit types without x64: join what they actually are.
        joined = _join(mode, x64, frozenset(_node(_canonical_node(d, x64), w) for d, w in pairs))
        out_dtype, weak = _node_dtype(joined), isinstance(joined, _WeakKind)
    if isinstance(out_dtype, ExtendedDType):
        return out_dtype, weak
    if weak and out_dtype in _KIND:
        # A weak value has no width of its own: it takes the default of its kind.
        out_dtype = _WIDE_DEFAULT_FOR_KIND[_KIND[out_dtype]]
    return _canonicalize_uncached(out_dtype, x64, False), weak


# --------------------------------------------------------------------------------------
# Conversions between kinds
# --------------------------------------------------------------------------------------


def to_numeric_dtype(dtype_like: DTypeLike) -> np.dtype:
    """Returns ``dtype_like`` as a numeric dtype: bool becomes int32, others unchanged."""
    dt = np.dtype(dtype_like)
    return np.dtype(np.int32) if dt == _BOOL else dt


def to_inexact_dtype(dtype_like: DTypeLike) -> np.dtype:
    """Returns a floating or complex dtype able to hold ``dtype_like``'s values.

    bool and integers of up to 32 bits become float32, 64-bit integers float64;
    floating and complex dtypes are unchanged. (Not canonicalized.)

    Example:
      >>> to_inexact_dtype(np.int16), to_inexact_dtype(bfloat16)
      (dtype('float32'), dtype(bfloat16))
    """
    dt = np.dtype(dtype_like)
    kind = _KIND.get(dt)
    if kind in ("b", "i", "u"):
        return np.dtype(np.float64) if dt.itemsize == 8 else np.dtype(np.float32)
    return dt


def to_complex_dtype(dtype_like: DTypeLike) -> np.dtype:
    """Returns the complex dtype for ``dtype_like``: complex128 for 64-bit, else complex64.

    Example:
      >>> to_complex_dtype(np.float64), to_complex_dtype(np.int8)
      (dtype('complex128'), dtype('complex64'))
    """
    inexact = to_inexact_dtype(dtype_like)
    if inexact in (np.dtype(np.float64), np.dtype(np.complex128)):
        return np.dtype(np.complex128)
    return np.dtype(np.complex64)


# --------------------------------------------------------------------------------------
# Checking user-requested dtypes
# --------------------------------------------------------------------------------------


def check_user_dtype_supported(dtype_like: Any, fun_name: str | None = None) -> None:
    """Checks a dtype a user asked for (e.g. ``jnp.zeros(3, dtype=...)``).

    Python scalar types, extended dtypes and ``None`` are always fine. A 64-bit dtype
    requested while jax_enable_x64 is off is allowed but narrowed, with a UserWarning.

    Args:
      dtype_like: the requested dtype.
      fun_name: the user-facing function, named in messages.

    Raises:
      TypeError: if the dtype is not a numeric or bool dtype (e.g. object or string).
    """
    if dtype_like is None or _is_extended(dtype_like):
        return
    if isinstance(dtype_like, type) and dtype_like in python_scalar_dtypes:
        return
    where = f" in {fun_name}" if fun_name else ""
    try:
        dt = np.dtype(dtype_like)
    except TypeError:
        raise TypeError(f"Invalid dtype {dtype_like!r}{where}: not a dtype.") from None
    if dt not in _SUPPORTED_DTYPES:
        raise TypeError(f"polyjax only supports number and bool dtypes, got dtype {dt}{where}.")
    canonical = canonicalize_dtype(dt)
    if canonical != dt:
        warnings.warn(
            f"Explicitly requested dtype {dt}{where} is not available, and will be "
            f"truncated to dtype {canonical}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
            "environment variable.",
            UserWarning,
            stacklevel=3,
        )
