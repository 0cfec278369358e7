"""Shape and dtype rules shared by the lax primitives.

lax is strict where `jax.numpy` is forgiving, and these helpers say how strict:

- **dtypes** must be accepted by the operation (``sin`` takes floating and complex
  types only) and, for most n-ary operations, equal (``lax.add`` of ``int32`` and
  ``float32`` is an error, not a promotion);
- **shapes** of n-ary operations must have the same rank, except that rank-0
  operands are allowed next to any shape; dimensions must agree or be 1
  (a limited broadcasting: never a rank change);
- **Python scalars** are the exception to dtype equality: ``lax.add(x, 1.0)``
  takes the dtype of ``x`` when the scalar fits it on JAX's promotion lattice,
  with a weak type so that it does not decide the result's dtype.

Every check is symbolic-dimension aware: two dimensions agree when they are
definitely equal for every value of the dimension variables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval, register_aval_handler

__all__ = [
    "ANY",
    "BOOL",
    "BOOL_OR_INT",
    "COMPLEX",
    "FLOAT",
    "INEXACT",
    "INT",
    "NUM",
    "ORDERED",
    "SIGNED_NUM",
    "WeakScalar",
    "accepts",
    "broadcasting_shape",
    "check_dtypes",
    "check_same_dtypes",
    "dtype_name",
    "match_python_scalars",
    "weak_scalar",
]

# Categories of accepted dtypes: tuples of NumPy abstract scalar types, checked with
# polyjax's `issubdtype` (which knows where bfloat16 and the narrow types belong).
BOOL: tuple[type, ...] = (np.bool_,)
INT: tuple[type, ...] = (np.integer,)
FLOAT: tuple[type, ...] = (np.floating,)
COMPLEX: tuple[type, ...] = (np.complexfloating,)
INEXACT: tuple[type, ...] = FLOAT + COMPLEX
NUM: tuple[type, ...] = INT + FLOAT + COMPLEX
ANY: tuple[type, ...] = NUM + BOOL
ORDERED: tuple[type, ...] = INT + FLOAT + BOOL
BOOL_OR_INT: tuple[type, ...] = INT + BOOL
SIGNED_NUM: tuple[type, ...] = (np.signedinteger,) + FLOAT + COMPLEX


class _LateOps:
    """Functions of lax modules that themselves import the module needing them.

    `_elementwise` is the base of `_shape_ops`, `_reductions` and `_complex`, yet
    some of its derivative rules need their functions (a transpose that sums
    over broadcast axes, the complex case of `abs`). Importing them would be a
    cycle, so each of those modules registers its functions here when it is
    imported, and the rules look them up when they run (always after the whole
    `lax` package is loaded).
    """

    broadcast_in_dim: Any
    reshape: Any
    reduce_sum: Any
    real: Any
    conj: Any


ops = _LateOps()


def dtype_name(dtype: Any) -> str:
    """The name of a dtype as error messages show it (``float32``, ``bfloat16``)."""
    return str(getattr(dtype, "name", dtype))


def accepts(dtype: Any, accepted: Sequence[type]) -> bool:
    """Whether `dtype` belongs to one of the `accepted` categories."""
    key = (dtype, accepted)
    try:
        return _accepts_memo[key]  # every shape rule asks this: answer from memory
    except (KeyError, TypeError):
        pass
    result = any(dtypes.issubdtype(dtype, t) for t in accepted)
    try:
        if len(_accepts_memo) < 4096:
            _accepts_memo[key] = result
    except TypeError:  # an unhashable category list
        pass
    return result


_accepts_memo: dict[tuple[Any, Any], bool] = {}


def _float0_error(name: str, position: int | None) -> TypeError:
    where = "" if position is None else f" at position {position}"
    return TypeError(
        f"Called {name} with a float0{where}. float0s do not support any operations by "
        "design: they are the tangents of integer and boolean values, not a vector "
        "space. Convert explicitly, e.g. with np.zeros_like(x, dtype=float), if you "
        "need a regular array of zeros."
    )


def check_dtypes(
    name: str,
    avals: Sequence[ShapedArray],
    accepted: Sequence[Sequence[type]],
    *,
    require_same: bool = True,
) -> None:
    """Checks that each operand's dtype is accepted at its position (and that they agree).

    Args:
      name: the primitive's name, for messages.
      avals: the operands' abstract values.
      accepted: one category (a tuple of abstract scalar types) per operand.
      require_same: whether all operands must also have the same dtype.

    Raises:
      TypeError: naming the operation, the dtype and the accepted categories.

    Example:
      >>> check_dtypes("sin", [ShapedArray((), np.int32)], [FLOAT])
      Traceback (most recent call last):
      TypeError: sin does not accept dtype int32. Accepted dtypes are subtypes of floating.
    """
    unary = len(avals) == 1
    for i, (aval, ok) in enumerate(zip(avals, accepted)):
        if aval.dtype == dtypes.float0:
            raise _float0_error(name, None if unary else i)
        if not accepts(aval.dtype, ok):
            names = ", ".join(t.__name__ for t in ok)
            if unary:
                msg = f"{name} does not accept dtype {dtype_name(aval.dtype)}. "
                msg += f"Accepted dtypes are subtypes of {names}."
            else:
                msg = f"{name} does not accept dtype {dtype_name(aval.dtype)} at position {i}. "
                msg += f"Accepted dtypes at position {i} are subtypes of {names}."
            raise TypeError(msg)
    if require_same:
        check_same_dtypes(name, avals)


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> None:
    """Raises TypeError unless all operands have the same dtype (weak types do not matter).

    Example:
      >>> check_same_dtypes("add", [ShapedArray((), np.int32), ShapedArray((), np.float32)])
      Traceback (most recent call last):
      TypeError: lax.add requires arguments to have the same dtypes, got int32, float32.
    """
    if len(avals) < 2:
        return
    first = avals[0].dtype
    if all(a.dtype == first for a in avals[1:]):
        return
    got = ", ".join(dtype_name(a.dtype) for a in avals)
    msg = f"lax.{name} requires arguments to have the same dtypes, got {got}."
    if name in ("lt", "le", "gt", "ge", "eq", "ne", "max", "min"):
        msg += f" (Tip: jnp.{_JNP_NAMES.get(name, name)} is a similar function that does "
        msg += "automatic type promotion on inputs)."
    raise TypeError(msg)


_JNP_NAMES = {
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "eq": "equal",
    "ne": "not_equal",
    "max": "maximum",
    "min": "minimum",
}


def _shape_str(shape: Sequence[Any]) -> str:
    return str(tuple(shape))


def broadcasting_shape(name: str, *shapes: Sequence[Any]) -> tuple[Any, ...]:
    """The result shape of an n-ary elementwise lax operation.

    Rank-0 operands go with anything. The others must have the same rank, and in
    each dimension the sizes must be definitely equal or 1: lax never adds
    dimensions, but it does stretch size-1 ones (``(3, 1)`` with ``(1, 4)`` gives
    ``(3, 4)``).

    Args:
      name: the primitive's name, for messages.
      *shapes: the operands' shapes (ints and/or symbolic dimensions).

    Raises:
      TypeError: if the ranks differ or a dimension does not agree.

    Example:
      >>> broadcasting_shape("add", (3, 1), (), (1, 4))
      (3, 4)
    """
    nonscalar = [tuple(s) for s in shapes if len(s)]
    if not nonscalar:
        return ()
    first = nonscalar[0]
    if len(nonscalar) == 1 or all(s == first for s in nonscalar[1:]):
        return first  # the common case, without looking at each dimension
    if len({len(s) for s in nonscalar}) != 1:
        got = ", ".join(_shape_str(s) for s in nonscalar)
        raise TypeError(f"{name}: arrays must have same number of dimensions, got {got}.")
    out = []
    for dims in zip(*nonscalar):
        not_one = [d for d in dims if not sd.definitely_equal(d, 1)]
        if not not_one:
            out.append(1)
        elif all(sd.definitely_equal(not_one[0], d) for d in not_one[1:]):
            out.append(not_one[0])
        else:
            got = ", ".join(_shape_str(s) for s in nonscalar)
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {got}.")
    return tuple(out)


# ---------------------------------------------------------------------------
# Weakly-typed scalars of any dtype


class WeakScalar(np.ndarray):
    """A rank-0 host array whose abstract value is weakly typed.

    A Python scalar is weak but its dtype is the default of its kind (``2.0`` is
    ``f32``); converting it to the dtype of the other operand (``bf16``) must
    keep it weak, which no NumPy value can say. This subclass does: tracing
    records it as a literal (``2.0:bf16[]``), and eager dispatch transfers it as
    a weakly-typed scalar.
    """

    weak_type = True


register_aval_handler(WeakScalar, lambda x: ShapedArray((), x.dtype, weak_type=True))


def weak_scalar(value: Any, dtype: Any) -> WeakScalar:
    """``value`` as a weakly-typed rank-0 host array of ``dtype``.

    A Python int is first a value of the default integer type (int32 without x64), as
    in JAX: one outside its range is an error, whatever ``dtype`` is. An integer
    ``dtype`` narrower than that wraps it around, as converting the int32 value would
    (``int8`` gets 44 from 300, ``uint8`` 255 from -1).

    Raises:
      OverflowError: ``value`` is a Python int outside the default integer type's range.

    Example:
      >>> weak_scalar(2.0, dtypes.bfloat16).dtype
      dtype(bfloat16)
      >>> int(weak_scalar(300, np.int8))
      44
    """
    dtype = np.dtype(dtype)
    if type(value) is int:
        get_aval(value)  # raises JAX's OverflowError outside the default integer type
        if dtypes.issubdtype(dtype, np.integer):
            value = _wrap_int(value, dtype)
    return np.asarray(value, dtype).view(WeakScalar)


def _fits(x: Any, dtype: np.dtype) -> bool:
    """Whether the Python scalar ``x`` is a value of ``dtype`` as it is (no wrapping)."""
    if type(x) is not int or not dtypes.issubdtype(dtype, np.integer):
        return True
    info = dtypes.iinfo(dtype)
    return info.min <= x <= info.max


def _wrap_int(value: int, dtype: np.dtype) -> int:
    """``value`` modulo 2**bits of ``dtype``, as two's complement for signed types."""
    bits = dtypes.itemsize_bits(dtype)
    value &= (1 << bits) - 1
    if dtypes.issubdtype(dtype, np.signedinteger) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


_WEAK_PYTHON_SCALARS = frozenset({int, float, complex})


# A symbolic dimension used as an operand counts as a Python int.
_INT_LIKE_SCALARS = frozenset({*_WEAK_PYTHON_SCALARS, sd.DimExpr})


def match_python_scalars(
    args: Sequence[Any], like: Callable[[Any], bool] = lambda x: True
) -> tuple[Any, ...]:
    """Gives Python scalars among ``args`` the dtype of the first other operand.

    This is how ``lax.add(x, 1.0)`` works for an ``x`` of any floating dtype: the
    scalar becomes a weak scalar of ``x``'s dtype whenever JAX's promotion of the
    two would give ``x``'s dtype (``bf16`` with ``1.0``, ``uint8`` with ``3``).
    Otherwise (``int32`` with ``1.5``, or ``uint8`` with ``300``, which ``jnp`` would
    wrap but JAX's ``lax`` refuses) it is left alone, and the operation's dtype check
    reports the mismatch.

    Args:
      args: the operands.
      like: which operands may give their dtype (e.g. not ``select_n``'s predicate).

    Raises:
      OverflowError: a Python int is outside the default integer type's range.
    """
    target = None
    for x in args:
        if type(x) not in _INT_LIKE_SCALARS and like(x):
            target = getattr(x, "dtype", None)
            break
    if target is None or isinstance(target, dtypes.ExtendedDType):
        return tuple(_dim_value(x) if type(x) is sd.DimExpr else x for x in args)
    target = dtypes.canonicalize_dtype(target)  # a NumPy float64 operand counts as float32
    out = []
    for x in args:
        typ = type(x)
        if typ in _WEAK_PYTHON_SCALARS:
            own = dtypes.canonicalize_dtype(dtypes.python_scalar_dtypes[typ])
            if own != target and dtypes.result_type(target, typ) == target and _fits(x, target):
                x = weak_scalar(x, target)
        elif typ is sd.DimExpr:
            x = _dim_value(x)
        out.append(x)
    return tuple(out)


def _dim_value(d: Any) -> Any:
    """A symbolic dimension as an operand: its value, an int32 (int64 with x64). As in
    JAX's lax, it is not converted to the other operand's dtype."""
    from polyjax_numpy.lax._dim_value import dim_as_value  # it imports lax's rules

    return dim_as_value(d)
