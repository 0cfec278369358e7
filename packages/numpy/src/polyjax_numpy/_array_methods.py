"""Operators and methods of arrays and tracers: `x + 1`, `x @ y`, `x[1:, None]`, `x.sum()`.

Core's `Tracer` and the runtime's `Array` know no arithmetic: they forward every
operator to a registry. This module fills both registries (importing it is
enough), with the semantics of `jax.numpy`:

**Type promotion.** Both operands are promoted on JAX's lattice
(`polyjax_core.dtypes.result_type`). Python scalars are *weakly typed*: they
adapt to the other operand instead of widening it, so an `f32` array times
`2.0` stays `f32`, a `bf16` array plus `1` stays `bf16`, and an `i32` array
times `2.0` becomes (weakly typed) `f32`. Operations on bools follow NumPy
(`+` is "or", `*` is "and"); `/` always gives an inexact type; `//` and `%`
round towards minus infinity, as in Python.

**Broadcasting.** Shapes broadcast as in NumPy: lower-rank operands get leading
size-1 axes (`broadcast_in_dim`), then lax's elementwise ops stretch size-1
axes. Rank-0 operands are passed unchanged.

**Indexing.** Basic indexing only (ints, slices with any step, `None`,
`...`), lowered to `slice`, `rev`, `squeeze` and `broadcast_in_dim`. Integer
indices out of range raise `IndexError`. Array ("advanced") indices are not
supported yet.

Operands that are not array-like (lists, strings, None ...) make the operator
return `NotImplemented`, so Python raises its usual `TypeError` (or, for `==`,
compares identities).
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import config, dtypes, tracing
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import get_aval
from polyjax_core.tracing import Tracer
from polyjax_interpreters import array as array_mod
from polyjax_interpreters.array import Array
from polyjax_numpy.lax import (
    _complex,
    _dot,
    _elementwise,
    _reductions,
    _shape_ops,
    _shape_rules,
)
from polyjax_numpy.lax._shape_ops import canonicalize_axis

__all__: list[str] = []  # importing the module registers everything; it exports nothing

lax = _elementwise  # the elementwise lax functions, by their JAX names

_ARRAY_TYPES = (Array, Tracer)
_OPERAND_TYPES = (Array, Tracer, bool, int, float, complex, np.generic, np.ndarray)


# ---------------------------------------------------------------------------
# Operands, promotion and broadcasting


def _is_operand(x: Any) -> bool:
    """Whether `x` may take part in an arithmetic operator (else: NotImplemented)."""
    return isinstance(x, _OPERAND_TYPES) or hasattr(x, "__jax_array__")


def _aval(x: Any) -> Any:
    aval = getattr(x, "aval", None)  # arrays and tracers carry theirs
    return get_aval(x) if aval is None else aval


def _shape(x: Any) -> tuple:
    return _aval(x).shape


def _dtype(x: Any) -> np.dtype:
    return _aval(x).dtype


def _convert(x: Any, dtype: Any, weak_type: bool = False) -> Any:
    """`x` as `dtype` with the given weak type (no operation when it already is).

    Host values (Python and NumPy scalars, NumPy arrays) are converted on the host:
    they stay literals or constants under a trace, and cost no device op when eager.
    """
    typ = type(x)
    if typ in _WEAK_PY_SCALARS:
        # Kept weak even where the result is strong: a strong operand beside it
        # decides that, and weak host scalars are what lax passes on cheapest.
        return _shape_rules.weak_scalar(x, dtype)
    if typ is bool or isinstance(x, np.generic):
        if dtypes.dtype(x) == dtype and not weak_type:
            return x
        return np.asarray(x, dtype)[()]
    if typ is np.ndarray and not weak_type:
        return x if x.dtype == dtype else x.astype(dtype)
    aval = _aval(x)
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return x
    return lax._convert_element_type(x, dtype, weak_type)


_WEAK_PY_SCALARS = frozenset({int, float, complex})


def _same_types(args: Sequence[Any]) -> bool:
    """Whether `args` are arrays of one dtype and weak type that need no rank promotion."""
    first = getattr(args[0], "aval", None)
    if first is None:
        return False
    for x in args[1:]:
        aval = getattr(x, "aval", None)
        if (
            aval is None
            or aval.dtype != first.dtype
            or aval.weak_type != first.weak_type
            or (aval.shape and first.shape and len(aval.shape) != len(first.shape))
        ):
            return False
    return True


def _promote_dtypes(*args: Any) -> list[Any]:
    """Converts `args` to their common dtype on JAX's lattice (weak if all were weak)."""
    if len(args) < 2:
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [_convert(x, dtype, weak) for x in args]


def _promote_dtypes_numeric(*args: Any) -> list[Any]:
    """As `_promote_dtypes`, with bool promoted to int32 (for arithmetic with no bool form)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.canonicalize_dtype(dtypes.to_numeric_dtype(dtype))
    return [_convert(x, dtype, weak) for x in args]


def _promote_dtypes_inexact(*args: Any) -> list[Any]:
    """As `_promote_dtypes`, then to a floating type if the common type is bool or integer."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    return [_convert(x, dtype, weak) for x in args]


def _promote_shapes(name: str, *args: Any) -> list[Any]:
    """Gives lower-rank operands leading size-1 axes, as NumPy broadcasting does.

    Rank-0 operands are left alone: lax's elementwise ops accept them next to any shape.
    """
    if len(args) < 2:
        return list(args)
    shapes = [_shape(x) for x in args]
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:
        return list(args)
    result_rank = len(sd.broadcast_shapes(*shapes))
    mode = config.numpy_rank_promotion.value
    if mode != "allow":
        msg = (
            f"Following NumPy automatic rank promotion for {name} on shapes "
            f"{' '.join(map(str, shapes))}. Set the jax_numpy_rank_promotion config option "
            "to 'allow' to disable this message; for more information, see "
            "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
        )
        if mode == "raise":
            raise ValueError(
                f"Operands could not be broadcast together with shapes "
                f"{' '.join(map(str, shapes))} and with the config option "
                "jax_numpy_rank_promotion='raise'. For more information, see "
                "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
            )
        warnings.warn(msg, stacklevel=4)
    return [_shape_ops.broadcast_to_rank(x, result_rank) if _shape(x) else x for x in args]


def _promote_args(name: str, *args: Any) -> list[Any]:
    if _same_types(args):  # the common case, without computing a promotion
        return list(args)
    return _promote_shapes(name, *_promote_dtypes(*args))


def _promote_args_numeric(name: str, *args: Any) -> list[Any]:
    if _same_types(args) and args[0].aval.dtype != _BOOL:
        return list(args)
    return _promote_shapes(name, *_promote_dtypes_numeric(*args))


def _promote_args_inexact(name: str, *args: Any) -> list[Any]:
    if _same_types(args) and dtypes.issubdtype(args[0].aval.dtype, np.inexact):
        return list(args)
    return _promote_shapes(name, *_promote_dtypes_inexact(*args))


_BOOL = np.dtype(bool)


def _is_bool(x: Any) -> bool:
    return _dtype(x) == np.dtype(bool)


def _issubdtype(x: Any, category: type) -> bool:
    return dtypes.issubdtype(_dtype(x), category)


# ---------------------------------------------------------------------------
# Binary operations (jnp semantics)


def _add(x: Any, y: Any) -> Any:
    x, y = _promote_args("add", x, y)
    return lax.bitwise_or(x, y) if _is_bool(x) else lax.add(x, y)


def _subtract(x: Any, y: Any) -> Any:
    x, y = _promote_args("subtract", x, y)
    return lax.sub(x, y)


def _multiply(x: Any, y: Any) -> Any:
    x, y = _promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if _is_bool(x) else lax.mul(x, y)


def _true_divide(x: Any, y: Any) -> Any:
    x, y = _promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


def _where(pred: Any, x: Any, y: Any) -> Any:
    # select_n picks its second operand where the predicate is true.
    return lax.select_n(pred, y, x)


def _floor_divide(x: Any, y: Any) -> Any:
    x, y = _promote_args_numeric("floor_divide", x, y)
    if _issubdtype(x, np.unsignedinteger):
        return lax.div(x, y)
    if _issubdtype(x, np.integer):
        # lax.div truncates towards zero; step down where the signs differ and the
        # division was not exact.
        quotient = lax.div(x, y)
        remainder = lax.rem(x, y)
        inexact = lax.ne(remainder, _zero_like(remainder))
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        fix = lax.bitwise_and(inexact, signs_differ)
        return _where(fix, lax.sub(quotient, _one_like(quotient)), quotient)
    if _issubdtype(x, np.complexfloating):
        raise NotImplementedError("floor_divide of complex numbers is not supported yet (issue 5)")
    return _float_divmod(x, y)[0]


def _float_divmod(x: Any, y: Any) -> tuple[Any, Any]:
    # Python's semantics: the remainder takes the sign of the divisor.
    mod = lax.rem(x, y)
    div = lax.div(lax.sub(x, mod), y)
    fix = lax.bitwise_and(lax.ne(mod, _zero_like(mod)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = _where(fix, lax.add(mod, y), mod)
    div = _where(fix, lax.sub(div, _one_like(div)), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN), mod


def _remainder(x: Any, y: Any) -> Any:
    x, y = _promote_args_numeric("remainder", x, y)
    if _issubdtype(x, np.unsignedinteger):
        return lax.rem(x, y)
    if _issubdtype(x, np.complexfloating):
        raise NotImplementedError("remainder of complex numbers is not supported yet (issue 5)")
    # lax.rem takes the sign of the dividend; Python's % takes the divisor's.
    trunc = lax.rem(x, y)
    zero = _zero_like(trunc)
    fix = lax.bitwise_and(
        lax.ne(trunc, zero), lax.ne(lax.lt(trunc, zero), lax.lt(y, _zero_like(y)))
    )
    return _where(fix, lax.add(trunc, y), trunc)


def _divmod(x: Any, y: Any) -> tuple[Any, Any]:
    x, y = _promote_args_numeric("divmod", x, y)
    if _issubdtype(x, np.floating):
        return _float_divmod(x, y)
    return _floor_divide(x, y), _remainder(x, y)


def _zero_like(x: Any) -> Any:
    return _scalar_like(0, x)


def _one_like(x: Any) -> Any:
    return _scalar_like(1, x)


def _scalar_like(value: Any, x: Any) -> Any:
    """A rank-0 host constant of `x`'s dtype (a literal when traced)."""
    return np.asarray(value, _dtype(x))[()]


def _power(x: Any, y: Any) -> Any:
    # A concrete integer exponent becomes integer_pow (repeated multiplication),
    # whatever the dtype of the base.
    if isinstance(y, int | np.integer) and not isinstance(y, bool | np.bool_):
        (x,) = _promote_dtypes_numeric(x)
        return lax.integer_pow(x, operator.index(y))
    x, y = _promote_args_numeric("power", x, y)
    if _issubdtype(x, np.integer):
        return _integer_power(x, y)
    return lax.pow(x, y)


def _integer_power(x: Any, y: Any) -> Any:
    """`x ** y` for integer arrays, by binary exponentiation over the bits of `y`.

    A negative exponent gives 0, except for the bases 1 and -1 (whose powers are
    1 and +-1), as in JAX.
    """
    shape = sd.broadcast_shapes(_shape(x), _shape(y))
    x, y = (_shape_ops.broadcast_in_dim(v, shape, _trailing_dims(v, shape)) for v in (x, y))
    signed = _issubdtype(y, np.signedinteger)
    exp = lax.abs(y) if signed else y
    zero, one = _zero_like(y), _one_like(y)
    acc = _shape_ops.full(shape, 1, _dtype(x))
    base = x
    for _ in range(dtypes.iinfo(_dtype(y)).bits - (1 if signed else 0)):
        bit_set = lax.ne(lax.bitwise_and(exp, one), zero)
        acc = _where(bit_set, lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        exp = lax.shift_right_logical(exp, one)
    if signed:
        vanishes = lax.bitwise_and(lax.lt(y, zero), lax.ne(lax.abs(x), _one_like(x)))
        acc = _where(vanishes, _shape_ops.full(shape, 0, _dtype(x)), acc)
    return acc


def _trailing_dims(x: Any, shape: tuple) -> tuple[int, ...]:
    ndim = len(_shape(x))
    return tuple(range(len(shape) - ndim, len(shape)))


def _matmul(a: Any, b: Any) -> Any:
    """`a @ b` as `jnp.matmul`: 1-D operands are vectors, leading axes broadcast as batches."""
    a, b = _promote_dtypes(a, b)
    a_shape, b_shape = _shape(a), _shape(b)
    for i, s in enumerate((a_shape, b_shape)):
        if not s:
            raise ValueError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, requires at "
                "least 1)."
            )
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    if a_vec:
        a = _shape_ops.expand_dims(a, (0,))
    if b_vec:
        b = _shape_ops.expand_dims(b, (1,))
    a_shape, b_shape = _shape(a), _shape(b)
    if not sd.definitely_equal(a_shape[-1], b_shape[-2]):
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {b_shape[-2]} is different from "
            f"{a_shape[-1]})"
        )
    batch = sd.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    nb = len(batch)
    a = _broadcast_batch(a, batch)
    b = _broadcast_batch(b, batch)
    dims = tuple(range(nb))
    out = _dot.dot_general(
        a, b, (((nb + 1,), (nb,)), (dims, dims)), preferred_element_type=_dtype(a)
    )
    squeeze = ([nb] if a_vec else []) + ([len(_shape(out)) - 1] if b_vec else [])
    return _shape_ops.squeeze(out, squeeze) if squeeze else out


def _broadcast_batch(x: Any, batch: tuple) -> Any:
    shape = _shape(x)
    target = batch + shape[-2:]
    if sd.definitely_equal_shape(shape, target):
        return x
    dims = tuple(range(len(target) - len(shape), len(target)))
    return _shape_ops.broadcast_in_dim(x, target, dims)


def _compare(prim_fn: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Any], Any]:
    def compare(x: Any, y: Any) -> Any:
        x, y = _promote_args(name, x, y)
        return prim_fn(x, y)

    return compare


def _bitwise(prim_fn_name: str, name: str) -> Callable[[Any, Any], Any]:
    def op(x: Any, y: Any) -> Any:
        x, y = _promote_args(name, x, y)
        _check_integer_or_bool(name, x)
        return getattr(lax, prim_fn_name)(x, y)

    return op


def _check_integer_or_bool(name: str, x: Any) -> None:
    if not (_is_bool(x) or _issubdtype(x, np.integer)):
        raise TypeError(
            f"{name} is only defined for integer and boolean types, got dtype {_dtype(x).name}."
        )


def _left_shift(x: Any, y: Any) -> Any:
    x, y = _promote_args_numeric("left_shift", x, y)
    _check_integer_or_bool("left_shift", x)
    return lax.shift_left(x, y)


def _right_shift(x: Any, y: Any) -> Any:
    x, y = _promote_args_numeric("right_shift", x, y)
    _check_integer_or_bool("right_shift", x)
    if _issubdtype(x, np.unsignedinteger):
        return lax.shift_right_logical(x, y)
    return lax.shift_right_arithmetic(x, y)


def _defer(fn: Callable[[Any, Any], Any], reflected: bool) -> Callable[[Any, Any], Any]:
    """The operator method: `NotImplemented` for operands that are not arrays."""

    if reflected:

        def method(self: Any, other: Any) -> Any:
            if not _is_operand(other):
                return NotImplemented
            return fn(other, self)

    else:

        def method(self: Any, other: Any) -> Any:
            if not _is_operand(other):
                return NotImplemented
            return fn(self, other)

    method.__name__ = getattr(fn, "__name__", "op")
    return method


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": _add,
    "sub": _subtract,
    "mul": _multiply,
    "truediv": _true_divide,
    "floordiv": _floor_divide,
    "mod": _remainder,
    "divmod": _divmod,
    "pow": _power,
    "matmul": _matmul,
    "and": _bitwise("bitwise_and", "bitwise_and"),
    "or": _bitwise("bitwise_or", "bitwise_or"),
    "xor": _bitwise("bitwise_xor", "bitwise_xor"),
    "lshift": _left_shift,
    "rshift": _right_shift,
}

_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": _compare(lambda x, y: lax.eq(x, y), "equal"),
    "ne": _compare(lambda x, y: lax.ne(x, y), "not_equal"),
    "lt": _compare(lambda x, y: lax.lt(x, y), "less"),
    "le": _compare(lambda x, y: lax.le(x, y), "less_equal"),
    "gt": _compare(lambda x, y: lax.gt(x, y), "greater"),
    "ge": _compare(lambda x, y: lax.ge(x, y), "greater_equal"),
}


# ---------------------------------------------------------------------------
# Unary operators


def _negative(x: Any) -> Any:
    return lax.neg(x)


def _positive(x: Any) -> Any:
    return x


def _absolute(x: Any) -> Any:
    if _is_bool(x) or _issubdtype(x, np.unsignedinteger):
        return x
    return lax.abs(x)


def _invert(x: Any) -> Any:
    _check_integer_or_bool("invert", x)
    return lax.bitwise_not(x)


def _round(x: Any, ndigits: int | None = None) -> Any:
    """`round(x, ndigits)`: NumPy's round-half-to-even; an int array when `ndigits` is None."""
    decimals = 0 if ndigits is None else operator.index(ndigits)
    if _is_bool(x) or _issubdtype(x, np.integer):
        if decimals < 0:
            raise NotImplementedError("round of integers with negative ndigits is not supported")
        out = x
    elif _issubdtype(x, np.complexfloating):
        raise NotImplementedError("round of complex numbers is not supported yet (issue 5)")
    elif decimals == 0:
        out = lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    else:
        factor = _scalar_like(10.0**decimals, x)
        out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    if ndigits is None:
        return _convert(out, dtypes.canonicalize_dtype(dtypes.int_))
    return out


# ---------------------------------------------------------------------------
# Indexing


def _getitem(x: Any, idx: Any) -> Any:
    """Basic indexing: ints, slices, None and Ellipsis, via slice/rev/squeeze/broadcast."""
    shape = _shape(x)
    ndim = len(shape)
    items = idx if isinstance(idx, tuple) else (idx,)
    items = tuple(_normalize_index_item(i, pos) for pos, i in enumerate(items))
    n_ellipsis = sum(1 for i in items if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(
            f"Too many indices: {ndim}-dimensional array indexed with {consumed} regular indices."
        )
    fill = (_builtin_slice(None),) * (ndim - consumed)
    if n_ellipsis:
        at = items.index(Ellipsis)
        items = items[:at] + fill + items[at + 1 :]
    else:
        items = items + fill

    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_axes: list[int] = []
    int_axes: list[int] = []
    new_axes: list[int] = []  # positions in the result
    axis, out_axis = 0, 0
    for item in items:
        if item is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        size = shape[axis]
        if isinstance(item, int):
            i = _normalize_int_index(item, axis, size)
            starts[axis], limits[axis] = i, i + 1
            int_axes.append(axis)
        else:
            start, limit, stride, rev = _slice_bounds(item, size)
            starts[axis], limits[axis], strides[axis] = start, limit, stride
            if rev:
                reversed_axes.append(axis)
            out_axis += 1
        axis += 1

    out = x
    if not (
        all(type(s) is int and s == 0 for s in starts)
        and sd.definitely_equal_shape(limits, shape)
        and all(s == 1 for s in strides)
    ):
        out = _shape_ops.slice(
            out, starts, limits, None if all(s == 1 for s in strides) else strides
        )
    if reversed_axes:
        out = _shape_ops.rev(out, reversed_axes)
    if int_axes:
        out = _shape_ops.squeeze(out, int_axes)
    if new_axes:
        out = _shape_ops.expand_dims(out, new_axes)
    return out


_builtin_slice = slice


def _normalize_index_item(item: Any, position: int) -> Any:
    if item is None or item is Ellipsis or isinstance(item, _builtin_slice):
        if isinstance(item, _builtin_slice):
            return _builtin_slice(
                *(_static_int(v, position) for v in (item.start, item.stop, item.step))
            )
        return item
    if isinstance(item, bool | np.bool_):
        raise NotImplementedError(
            "Boolean scalar indices are not supported yet (advanced indexing comes with the "
            "NumPy API)."
        )
    if isinstance(item, int | np.integer):
        return operator.index(item)
    if isinstance(item, Array) and item.ndim == 0 and _issubdtype(item, np.integer):
        return operator.index(item)  # a concrete index: read it on the host
    if isinstance(item, (*_ARRAY_TYPES, np.ndarray, list, tuple)):
        raise NotImplementedError(
            f"Indexing with {type(item).__name__} indices (advanced or dynamic indexing) is not "
            "supported yet: only ints, slices, None and Ellipsis."
        )
    dtype = getattr(item, "dtype", None)
    raise TypeError(
        f"Indexer must have integer or boolean type, got indexer with type "
        f"{getattr(dtype, 'name', type(item).__name__)} at position {position}, indexer "
        f"value {item!r}"
    )


def _static_int(v: Any, position: int) -> int | None:
    if v is None:
        return None
    if isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_):
        return operator.index(v)
    if isinstance(v, Array) and v.ndim == 0 and _issubdtype(v, np.integer):
        return operator.index(v)
    if isinstance(v, Tracer):
        raise NotImplementedError(
            "Slices with traced bounds (dynamic slicing) are not supported yet; use static ints."
        )
    raise TypeError(
        f"Slice entries must be integers or None, got {v!r} at position {position} of the index."
    )


def _normalize_int_index(i: int, axis: int, size: Any) -> int:
    if type(size) is not int:
        if i >= 0 and _known_ge(size, i + 1):
            return i
        raise NotImplementedError(
            f"Integer index {i} into the symbolic axis {axis} of size {size}: only indices that "
            "are provably in range (non-negative, below the size's lower bound) are supported."
        )
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for axis {axis} with size {size}")
    return i + size if i < 0 else i


def _known_ge(a: Any, b: int) -> bool:
    try:
        return bool(a >= b)
    except sd.InconclusiveDimensionOperation:
        return False


def _slice_bounds(s: slice, size: Any) -> tuple[Any, Any, int, bool]:
    """(start, limit, stride, reversed) for `lax.slice` (and `rev`) implementing `s`."""
    step = 1 if s.step is None else s.step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if type(size) is not int:
        if s.start is None and s.stop is None and step in (1, -1):
            return 0, size, 1, step == -1
        raise NotImplementedError(
            f"Slicing a symbolic axis of size {size} with {s} is not supported yet: only ':' "
            "and '::-1'."
        )
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    if n == 0:
        return 0, 0, 1, False
    if step > 0:
        return start, start + (n - 1) * step + 1, step, False
    last = start + (n - 1) * step  # the smallest index taken
    return last, start + 1, -step, True


# ---------------------------------------------------------------------------
# Methods


def _reduction_axes(axis: Any, ndim: int, name: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple | list):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


def _upcast_low_precision(dtype: np.dtype) -> np.dtype:
    """Sums and products of 16-bit floats accumulate in float32 (then cast back)."""
    if dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        return np.dtype(np.float32)
    return dtype


def _promoted_integer_dtype(dtype: np.dtype) -> np.dtype:
    """`sum`/`prod` of bool and narrow integers return the default integer width."""
    if dtype == np.dtype(bool):
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.issubdtype(dtype, np.signedinteger):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _reduction(
    name: str,
    reduce_fn: Callable[..., Any],
    combine: Callable[[Any, Any], Any],
    has_identity: bool,
    numeric: bool,
    upcast_low_precision: bool,
) -> Callable[..., Any]:
    def method(
        self: Any,
        axis: Any = None,
        dtype: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
        promote_integers: bool = True,
    ) -> Any:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        if where is not None:
            raise NotImplementedError(f"The 'where' argument to jnp.{name} is not supported yet.")
        aval = _aval(self)
        axes = _reduction_axes(axis, aval.ndim, name)
        if not has_identity and initial is None:
            if any(type(aval.shape[a]) is int and aval.shape[a] == 0 for a in axes):
                raise ValueError(
                    f"zero-size array to reduction operation {name} which has no identity"
                )
        if dtype is not None:
            dtypes.check_user_dtype_supported(dtype, name)
            result_dtype = dtypes.canonicalize_dtype(dtype)
        elif numeric and promote_integers:
            result_dtype = dtypes.canonicalize_dtype(_promoted_integer_dtype(aval.dtype))
        else:
            result_dtype = aval.dtype
        if numeric and result_dtype == np.dtype(bool):
            compute_dtype = dtypes.default_int_dtype()
        elif upcast_low_precision:
            compute_dtype = _upcast_low_precision(result_dtype)
        else:
            compute_dtype = result_dtype
        weak = aval.weak_type and dtype is None
        x = _convert(self, compute_dtype, weak and compute_dtype == aval.dtype)
        result = reduce_fn(x, axes)
        if initial is not None:
            init = _convert(np.asarray(initial, compute_dtype)[()], compute_dtype)
            result = combine(result, init)
        if keepdims:
            result = _shape_ops.expand_dims(result, axes)
        return _convert(result, result_dtype, weak and result_dtype == aval.dtype)

    method.__name__ = name
    return method


_sum = _reduction("sum", _reductions.reduce_sum, lambda a, b: _add(a, b), True, True, True)
_prod = _reduction("prod", _reductions.reduce_prod, lambda a, b: _multiply(a, b), True, True, True)
_max = _reduction("max", _reductions.reduce_max, lambda a, b: lax.max(a, b), False, False, False)
_min = _reduction("min", _reductions.reduce_min, lambda a, b: lax.min(a, b), False, False, False)


def _mean(
    self: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
) -> Any:
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    if where is not None:
        raise NotImplementedError("The 'where' argument to jnp.mean is not supported yet.")
    aval = _aval(self)
    axes = _reduction_axes(axis, aval.ndim, "mean")
    count = sd.shape_size([aval.shape[a] for a in axes])
    if not isinstance(count, int):
        raise NotImplementedError(
            f"mean over symbolic axes (of size {count}) is not supported yet."
        )
    if dtype is None:
        result_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(aval.dtype))
    else:
        dtypes.check_user_dtype_supported(dtype, "mean")
        result_dtype = dtypes.canonicalize_dtype(dtype)
    compute_dtype = _upcast_low_precision(result_dtype)
    total = _sum(self, axes, dtype=compute_dtype, keepdims=keepdims)
    out_ = lax.div(total, np.asarray(count, compute_dtype)[()])
    return _convert(out_, result_dtype)


def _arg_reduction(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Any, axis: Any = None, out: Any = None, keepdims: bool | None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        aval = _aval(self)
        x = self
        if axis is None:
            x = _ravel(self)
            ax = 0
        else:
            ax = canonicalize_axis(axis, aval.ndim)
        size = _shape(x)[ax]
        if type(size) is int and size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = fn(x, ax, dtypes.canonicalize_dtype(dtypes.int_))
        if keepdims:
            dims = tuple(range(aval.ndim)) if axis is None else (ax,)
            result = _shape_ops.expand_dims(result, dims)
        return result

    method.__name__ = name
    return method


_argmax = _arg_reduction("argmax", _reductions.argmax)
_argmin = _arg_reduction("argmin", _reductions.argmin)


def _astype(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    if device is not None:
        raise NotImplementedError("astype(device=...) is not supported yet")
    if dtype is None:
        dtype = dtypes.float_
    dtypes.check_user_dtype_supported(dtype, "astype")
    dtype = dtypes.canonicalize_dtype(dtype)
    if _issubdtype(self, np.complexfloating) and not dtypes.issubdtype(dtype, np.complexfloating):
        # NumPy's rule, which JAX follows: keep the real part, and say so.
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
        self = _complex.real(self)
    return _convert(self, dtype, False)


def _reshape(self: Any, *args: Any, order: str = "C") -> Any:
    if len(args) == 1 and not sd.is_dim(args[0]):
        newshape = args[0]
    else:
        newshape = args
    shape = _shape(self)
    new = _shape_ops._compute_newshape(shape, newshape)
    if order == "C":
        return _shape_ops.reshape(self, new)
    if order == "F":
        dims = tuple(range(len(shape)))[::-1]
        return _transpose(_shape_ops.reshape(self, new[::-1], dims))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def _transpose(self: Any, *args: Any) -> Any:
    ndim = len(_shape(self))
    if not args or (len(args) == 1 and args[0] is None):
        axes = tuple(range(ndim))[::-1]
    elif len(args) == 1 and isinstance(args[0], tuple | list):
        axes = tuple(args[0])
    else:
        axes = args
    axes = tuple(canonicalize_axis(a, ndim) for a in axes)
    return _shape_ops.transpose(self, axes)


def _matrix_transpose(self: Any) -> Any:
    ndim = len(_shape(self))
    if ndim < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim}"
        )
    return _shape_ops.transpose(self, (*range(ndim - 2), ndim - 1, ndim - 2))


def _squeeze(self: Any, axis: Any = None) -> Any:
    shape = _shape(self)
    if axis is None:
        dims = tuple(i for i, d in enumerate(shape) if type(d) is int and d == 1)
    else:
        dims = _reduction_axes(axis, len(shape), "squeeze")
    return _shape_ops.squeeze(self, dims)


def _ravel(self: Any, order: str = "C") -> Any:
    shape = _shape(self)
    if order == "C":
        return _shape_ops.reshape(self, (sd.shape_size(shape),))
    if order == "F":
        return _ravel(_transpose(self))
    if order in ("A", "K"):
        raise NotImplementedError(f"Ravel not implemented for order={order!r}.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def _real(self: Any) -> Any:
    # jnp semantics: a real (or integer, or bool) array is its own real part.
    return _complex.real(self) if _issubdtype(self, np.complexfloating) else self


def _imag(self: Any) -> Any:
    if _issubdtype(self, np.complexfloating):
        return _complex.imag(self)
    return _shape_ops.full_like(self, 0)  # zeros of the array's own dtype


def _conj(self: Any) -> Any:
    # Unlike lax.conj, jnp's conjugate leaves real arrays real (and untouched).
    return _complex.conj(self) if _issubdtype(self, np.complexfloating) else self


# ---------------------------------------------------------------------------
# Registration

_METHODS: dict[str, Callable[..., Any]] = {
    "sum": _sum,
    "prod": _prod,
    "max": _max,
    "min": _min,
    "mean": _mean,
    "argmax": _argmax,
    "argmin": _argmin,
    "astype": _astype,
    "reshape": _reshape,
    "transpose": _transpose,
    "squeeze": _squeeze,
    "ravel": _ravel,
    "flatten": _ravel,
    "conj": _conj,
    "conjugate": _conj,
}

_PROPERTIES: dict[str, Callable[[Any], Any]] = {
    "T": _transpose,
    "mT": _matrix_transpose,
    "real": _real,
    "imag": _imag,
}


def _bound(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda self: functools.partial(fn, self)


def _register() -> None:
    operators: dict[str, Callable[..., Any]] = {}
    for base, fn in _BINARY.items():
        operators[f"__{base}__"] = _defer(fn, reflected=False)
        operators[f"__r{base}__"] = _defer(fn, reflected=True)
    for base, fn in _COMPARISONS.items():
        operators[f"__{base}__"] = _defer(fn, reflected=False)
    operators["__neg__"] = _negative
    operators["__pos__"] = _positive
    operators["__abs__"] = _absolute
    operators["__invert__"] = _invert
    operators["__round__"] = _round
    operators["__getitem__"] = _getitem
    missing = set(tracing.BINARY_OPERATORS + tracing.OTHER_OPERATORS) - set(operators)
    assert not missing, missing
    for name, fn in operators.items():
        tracing.register_tracer_method(name, fn)
        array_mod.register_array_method(name, fn)
    for name, fn in _METHODS.items():
        tracing.register_tracer_attribute(name, _bound(fn))
        array_mod.register_array_attribute(name, _bound(fn))
    for name, getter in _PROPERTIES.items():
        tracing.register_tracer_attribute(name, getter)
        array_mod.register_array_attribute(name, getter)


_register()
