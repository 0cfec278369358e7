"""Operands, dtype promotion and broadcasting: the plumbing under every `jnp` function.

`jnp` functions accept "array-likes" (polyjax arrays, tracers, NumPy arrays and
scalars, Python scalars) and, unlike `lax`, promote them to a common dtype on
JAX's lattice (`polyjax_core.dtypes.result_type`) and broadcast them as NumPy
does. Python scalars are *weakly typed*: they adapt to the other operand
instead of widening it, so an `f32` array times `2.0` stays `f32`.

The helpers here are private to `polyjax_numpy`: the `jnp` modules and the
array methods share them, so that `x + y` and `jnp.add(x, y)` are one code path.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import config, dtypes, tracing
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval, jax_array_error
from polyjax_core.tracing import Tracer
from polyjax_interpreters import dispatch as _dispatch
from polyjax_interpreters.array import Array, device_put
from polyjax_interpreters.sharding import SingleDeviceSharding as _SingleDeviceSharding
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops, _shape_rules
from polyjax_numpy.lax._dim_value import dim_as_value
from polyjax_numpy.lax._extended import ExtendedArray
from polyjax_numpy.lax._shape_ops import canonicalize_axis

ARRAY_TYPES = (Array, Tracer, ExtendedArray)
_OPERAND_TYPES = (Array, Tracer, ExtendedArray, bool, int, float, complex, np.generic, np.ndarray)
_WEAK_PY_SCALARS = frozenset({int, float, complex})
_BOOL = np.dtype(bool)


def is_operand(x: Any) -> bool:
    """Whether `x` may take part in an arithmetic operator (else: NotImplemented)."""
    return isinstance(x, _OPERAND_TYPES) or hasattr(x, "__jax_array__") or _is_dim_expr(x)


def _is_dim_expr(x: Any) -> bool:
    return isinstance(x, sd.DimExpr)


def from_protocol(x: Any) -> Any:
    """`x`, or the array its `__jax_array__` gives (each element of a list or tuple).

    JAX converts such objects only in `jnp.asarray`/`jnp.array`, the operators of
    arrays and the functions that start from `asarray` (`reshape`, `concatenate`,
    `zeros_like` ...); elsewhere abstractification refuses them (`check_arraylike`).
    """
    if isinstance(x, ARRAY_TYPES):
        return x
    if isinstance(x, list | tuple):
        return type(x)(map(from_protocol, x)) if type(x) in (list, tuple) else x
    if _is_dim_expr(x):  # a symbolic dimension used as a number
        return dim_as_value(x)
    if hasattr(x, "__jax_array__"):
        return x.__jax_array__()
    return x


def aval(x: Any) -> Any:
    found = getattr(x, "aval", None)  # arrays and tracers carry theirs
    return get_aval(x) if found is None else found


def shape(x: Any) -> tuple:
    return aval(x).shape


def ndim(x: Any) -> int:
    return len(aval(x).shape)


def dtype(x: Any) -> np.dtype:
    return aval(x).dtype


def is_bool(x: Any) -> bool:
    return dtype(x) == _BOOL


def is_inexact(x: Any) -> bool:
    """Whether `x` has a floating or complex dtype."""
    return dtypes.issubdtype(dtype(x), np.inexact)


def is_complex(x: Any) -> bool:
    return dtypes.issubdtype(dtype(x), np.complexfloating)


def issubdtype_of(x: Any, category: type) -> bool:
    """Whether the dtype of `x` is a subtype of `category` (e.g. `np.integer`)."""
    return dtypes.issubdtype(dtype(x), category)


def check_arraylike(fun_name: str, *args: Any) -> None:
    """Raises JAX's TypeError when an argument is not an array or scalar.

    Lists and tuples are refused on purpose, as in JAX: converting them silently
    would hide a costly per-element transfer (`jnp.asarray` converts them).
    Objects with `__jax_array__` get JAX's ValueError, as abstractification gives.
    """
    for pos, arg in enumerate(args):
        if hasattr(arg, "__jax_array__") and not isinstance(arg, ARRAY_TYPES):
            raise jax_array_error()  # as JAX: only jnp.asarray converts such objects
        if not is_operand(arg):
            raise TypeError(
                f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} at "
                f"position {pos}."
            )


def convert(x: Any, to: Any, weak_type: bool = False) -> Any:
    """`x` as dtype `to` with the given weak type (no operation when it already is).

    Host values (Python and NumPy scalars, NumPy arrays) are converted on the host:
    they stay literals or constants under a trace, and cost no device op when eager.
    """
    typ = type(x)
    if typ in _WEAK_PY_SCALARS:
        # Kept weak even where the result is strong: a strong operand beside it
        # decides that, and weak host scalars are what lax passes on cheapest.
        return _shape_rules.weak_scalar(x, to)
    if typ is bool or isinstance(x, np.generic):
        if dtypes.dtype(x) == to and not weak_type:
            return x
        return np.asarray(x, to)[()]
    if typ is np.ndarray and not weak_type:
        return x if x.dtype == to else x.astype(to)
    a = aval(x)
    if a.dtype == to and a.weak_type == weak_type:
        return x
    return lax._convert_element_type(x, to, weak_type)


def scalar_like(value: Any, x: Any) -> Any:
    """A rank-0 host constant of `x`'s dtype (a literal when traced)."""
    return np.asarray(value, dtype(x))[()]


def _same_types(args: Sequence[Any]) -> bool:
    """Whether `args` are arrays of one dtype and weak type that need no rank promotion."""
    first = getattr(args[0], "aval", None)
    if first is None:
        return False
    for x in args[1:]:
        a = getattr(x, "aval", None)
        if (
            a is None
            or a.dtype != first.dtype
            or a.weak_type != first.weak_type
            or (a.shape and first.shape and len(a.shape) != len(first.shape))
        ):
            return False
    return True


def promote_dtypes(*args: Any) -> list[Any]:
    """Converts `args` to their common dtype on JAX's lattice (weak if all were weak)."""
    if len(args) < 2:
        return list(args)
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(x, to, weak) for x in args]


def promote_dtypes_numeric(*args: Any) -> list[Any]:
    """As `promote_dtypes`, with bool promoted to int32 (for arithmetic with no bool form)."""
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to = dtypes.canonicalize_dtype(dtypes.to_numeric_dtype(to))
    return [convert(x, to, weak) for x in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """As `promote_dtypes`, then to a floating type if the common type is bool or integer."""
    to, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    to = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(to))
    return [convert(x, to, weak) for x in args]


def promote_shapes(name: str, *args: Any) -> list[Any]:
    """Gives lower-rank operands leading size-1 axes, as NumPy broadcasting does.

    Rank-0 operands are left alone: lax's elementwise ops accept them next to any shape.
    """
    if len(args) < 2:
        return list(args)
    shapes = [shape(x) for x in args]
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:
        return list(args)
    result_rank = len(sd.broadcast_shapes(*shapes))
    mode = config.numpy_rank_promotion.value
    if mode != "allow":
        shown = " ".join(map(str, shapes))
        if mode == "raise":
            raise ValueError(
                f"Operands could not be broadcast together with shapes {shown} and with the "
                "config option jax_numpy_rank_promotion='raise'. For more information, see "
                "https://docs.jax.dev/en/latest/rank_promotion_warning.html."
            )
        warnings.warn(
            f"Following NumPy automatic rank promotion for {name} on shapes {shown}. Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this message; for "
            "more information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
            stacklevel=4,
        )
    return [_shape_ops.broadcast_to_rank(x, result_rank) if shape(x) else x for x in args]


def _array_and_python_scalar(args: Sequence[Any]) -> list[Any] | None:
    """``x * 2.0`` outside any trace, for a float or complex Array ``x`` on one device:
    the scalar as a weakly typed device scalar of ``x``'s dtype (cached: no transfer
    per call; see docs/jit.md), else None."""
    if len(args) != 2 or _trace_state.trace is not _eval_trace:
        return None
    a, b = args
    if type(a) is Array and type(b) in _PY_NUMBERS:
        x, value, first = a, b, True
    elif type(b) is Array and type(a) in _PY_NUMBERS:
        x, value, first = b, a, False
    else:
        return None
    sharding = x._impl._sharding
    if x.aval.dtype.kind not in "fc" or type(sharding) is not _SingleDeviceSharding:
        return None
    if type(value) is int and not -_INT32_BOUND <= value < _INT32_BOUND:
        return None  # (the general path says whether it overflows the default int)
    scalar = _dispatch.device_scalar(value, _weak_scalar_aval(x.aval.dtype), sharding)
    return [x, scalar] if first else [scalar, x]


_PY_NUMBERS = frozenset({int, float})
_INT32_BOUND = 2**31
_trace_state = tracing._state
_eval_trace = tracing.eval_trace


@functools.lru_cache(maxsize=64)
def _weak_scalar_aval(dtype: np.dtype) -> ShapedArray:
    return ShapedArray((), dtype, weak_type=True)


def promote_args(name: str, *args: Any) -> list[Any]:
    """Checks, promotes the dtypes and the ranks of the operands of `jnp.<name>`."""
    if _same_types(args):  # the common case, without computing a promotion
        return list(args)
    fast = _array_and_python_scalar(args)
    if fast is not None:
        return fast
    args = _dims_as_values(args)
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes(*args))


def promote_args_numeric(name: str, *args: Any) -> list[Any]:
    """As `promote_args`, with bool promoted to the default integer."""
    if _same_types(args) and args[0].aval.dtype != _BOOL:
        return list(args)
    args = _dims_as_values(args)
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*args))


def promote_args_inexact(name: str, *args: Any) -> list[Any]:
    """As `promote_args`, with bool and integers promoted to the default float."""
    if _same_types(args) and dtypes.issubdtype(args[0].aval.dtype, np.inexact):
        return list(args)
    args = _dims_as_values(args)
    check_arraylike(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def _dims_as_values(args: Sequence[Any]) -> Sequence[Any]:
    """`args` with symbolic dimensions as rank-0 integer values (JAX accepts them)."""
    if any(isinstance(a, sd.DimExpr) for a in args):
        return [dim_as_value(a) for a in args]
    return args


def as_operand(x: Any) -> Any:
    """`x` in a form lax accepts, kept on the host when it is a host value.

    Arrays, tracers and lax's weak scalars pass through; Python scalars become weak
    scalars and NumPy values NumPy arrays of their canonical dtype (constants or
    literals under a trace, no transfer when eager). Lists are refused, as by
    `check_arraylike`.
    """
    if isinstance(x, (*ARRAY_TYPES, _shape_rules.WeakScalar)):
        return x
    if type(x) in _WEAK_PY_SCALARS:
        return _shape_rules.weak_scalar(x, dtypes.canonicalize_dtype(dtypes.dtype(x)))
    check_arraylike("jnp", x)
    x = np.asarray(x)
    to = dtypes.canonicalize_dtype(x.dtype)
    return x if x.dtype == to else x.astype(to)


def as_array(x: Any) -> Any:
    """`x` as a polyjax array: host values go to the device with their canonical dtype.

    For functions that return an input unchanged (`jnp.real` of a real array,
    `jnp.floor` of integers): JAX returns an array there, never the caller's NumPy
    array or Python scalar, and never a 64-bit one without x64.
    """
    if isinstance(x, ARRAY_TYPES):
        return x
    return device_put(as_operand(x))


def broadcast_to(x: Any, shape: tuple, out_sharding: Any = None) -> Any:
    """`x` broadcast to the static `shape` by NumPy's rules (no operation when it has it
    and no ``out_sharding``, the result's sharding in explicit mode, is asked for).

    Trailing axes are aligned; missing leading axes and size-1 axes are repeated.

    Raises:
      ValueError: `x`'s shape does not broadcast to `shape`.
    """
    old = aval(x).shape
    if sd.definitely_equal_shape(old, shape) and out_sharding is None:
        return x
    lead = len(shape) - len(old)
    if lead < 0 or not all(
        sd.definitely_equal(d, 1) or sd.definitely_equal(d, t) for d, t in zip(old, shape[lead:])
    ):
        raise ValueError(f"Incompatible shapes for broadcasting: {old} and requested shape {shape}")
    dims = tuple(range(lead, len(shape)))
    return _shape_ops.broadcast_in_dim(x, shape, dims, out_sharding=out_sharding)


def where(condition: Any, x: Any, y: Any) -> Any:
    """`x` where `condition` holds, else `y`: `jnp.where`'s three-argument form, unchecked.

    `x` and `y` are promoted to their common dtype, a non-bool `condition` holds where
    it is nonzero, and the three broadcast together.
    """
    x, y = promote_dtypes(x, y)
    if dtype(condition) != _BOOL:
        condition = lax.ne(condition, scalar_like(0, condition))
    out_shape = sd.broadcast_shapes(shape(condition), shape(x), shape(y))
    condition, x, y = (broadcast_to(v, out_shape) for v in (condition, x, y))
    # select_n picks its second operand where the predicate is true.
    return lax.select_n(condition, y, x)


def reduction_axes(axis: Any, ndim_: int) -> tuple[int, ...]:
    """`axis` (None, an int or a sequence of ints) as a tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim_))
    if isinstance(axis, tuple | list):
        axes = tuple(canonicalize_axis(a, ndim_) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim_),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return axes


__all__ = [
    "ARRAY_TYPES",
    "as_array",
    "as_operand",
    "aval",
    "broadcast_to",
    "canonicalize_axis",
    "check_arraylike",
    "convert",
    "dtype",
    "is_bool",
    "is_complex",
    "is_inexact",
    "is_operand",
    "issubdtype_of",
    "ndim",
    "promote_args",
    "promote_args_inexact",
    "promote_args_numeric",
    "promote_dtypes",
    "promote_dtypes_inexact",
    "promote_dtypes_numeric",
    "promote_shapes",
    "reduction_axes",
    "scalar_like",
    "shape",
    "where",
]
