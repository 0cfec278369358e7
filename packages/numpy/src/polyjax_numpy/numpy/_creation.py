"""Array creation in `jnp`: from data (`array`, `asarray`), filled (`zeros`, `full_like`),
ranges (`arange`, `linspace`, `logspace`, `geomspace`) and grids (`meshgrid`, `indices`).

`jnp.array` turns anything array-like into a polyjax array: host data (NumPy
arrays, Python scalars, nested lists) is transferred to the default device
once; arrays and tracers pass through, converted if a dtype is asked for; lists
that contain arrays or tracers are stacked with lax operations, so they work
under `jit`. The dtype is inferred as JAX does: Python scalars give weakly
typed arrays, a list's elements are promoted on JAX's lattice (so
`[np.int8(1), 2]` is int8, not NumPy's int64), and 64-bit types become 32-bit
unless `jax_enable_x64` is on.

Arrays are immutable, so `copy` only matters when an array buffer may later be
donated: `copy=True` (the default of `array` and `copy`) gives a new buffer,
`copy=None` or `False` may return the input itself. As in JAX (and NumPy 1), a
copy that cannot be avoided (a dtype change, host data) is made even with
`copy=False`.

Shapes, sizes and `arange` bounds must be static: a tracer there raises
`ConcretizationTypeError` naming the argument (the result's shape would depend
on a traced value).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.tracing import Tracer, concrete_or_error
from polyjax_interpreters.array import Array, device_put, put_implicit
from polyjax_interpreters.batching import vmap
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _identities, _shape_ops
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u

_OBJECT = np.dtype(object)


# ---------------------------------------------------------------------------
# Static arguments


def concrete_int(value: Any, context: str) -> int:
    """`value` as a Python int; a tracer raises `ConcretizationTypeError` naming `context`.

    Args:
      value: an int, a NumPy integer, or a rank-0 integer array (concrete).
      context: where the value is used, e.g. "'num' argument of jnp.linspace".
    """
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{context} must be an integer, got {value!r}")
    try:
        return concrete_or_error(operator.index, value, f"The problem arose with the {context}.")
    except TypeError as e:
        if isinstance(value, Tracer):
            raise
        raise TypeError(f"{context} must be an integer, got {value!r}") from e


def concrete_dim(value: Any, context: str) -> Any:
    """A dimension size: an int (concrete, as `concrete_int`) or a symbolic dimension."""
    if sd.is_symbolic_dim(value):
        return value
    return concrete_int(value, context)


def static_shape(shape: Any, context: str) -> tuple[Any, ...]:
    """`shape` (an int or a sequence of ints or symbolic dimensions) as a tuple.

    Raises:
      ConcretizationTypeError: an entry is traced (the shape would depend on data).
      TypeError: an entry is not an integer (the message names `context`).
    """
    if isinstance(shape, Tracer) or (isinstance(shape, Array) and shape.ndim == 0):
        shape = (shape,)
    elif isinstance(shape, Tracer | Array | np.ndarray):
        shape = tuple(shape)
    elif sd.is_dim(shape) or isinstance(shape, np.integer):
        shape = (shape,)
    elif not isinstance(shape, Sequence) or isinstance(shape, str | bytes):
        raise TypeError(
            f"{context}: expected a sequence of integers or a single integer, got {shape!r} of "
            f"type {type(shape).__name__}"
        )
    dims = tuple(concrete_dim(d, context) if isinstance(d, Tracer | Array) else d for d in shape)
    return sd.canonicalize_shape(dims, context)


def on_device(x: Any, device: Any) -> Any:
    return x if device is None else device_put(x, device)


def _canonical_dtype(dtype: Any, fun_name: str) -> Any:
    if dtype is None:
        return None
    dtypes.check_user_dtype_supported(dtype, fun_name)
    return dtypes.canonicalize_dtype(dtype)


# ---------------------------------------------------------------------------
# array, asarray, copy


def _is_traced_leaf(obj: Any) -> bool:
    return isinstance(obj, (*_u.ARRAY_TYPES, sd.DimExpr)) or hasattr(obj, "__jax_array__")


def _leaves(obj: Any, convert: bool = True) -> list[Any]:
    if isinstance(obj, list | tuple):
        return [leaf for o in obj for leaf in _leaves(o, convert)]
    if convert and hasattr(obj, "__jax_array__") and not isinstance(obj, _u.ARRAY_TYPES):
        return [obj.__jax_array__()]
    if convert and isinstance(obj, sd.DimExpr):
        return [_u.from_protocol(obj)]
    return [obj]


def _stack_nested(obj: Any, dtype: Any) -> Any:
    """A nested list of arrays, tracers and scalars as one array of `dtype` (lax ops only)."""
    if not isinstance(obj, list | tuple):
        if hasattr(obj, "__jax_array__") and not isinstance(obj, _u.ARRAY_TYPES):
            obj = obj.__jax_array__()
        obj = _u.from_protocol(obj) if isinstance(obj, sd.DimExpr) else obj
        if type(obj) is int:  # a list element is data, not a weak operand: no wrapping
            return np.asarray(obj, dtype)  # NumPy's (and JAX's) OverflowError if out of range
        return _u.convert(obj if isinstance(obj, _u.ARRAY_TYPES) else np.asarray(obj), dtype)
    if not obj:
        raise ValueError("jnp.array: a sequence holding arrays cannot have empty parts")
    parts = [_stack_nested(o, dtype) for o in obj]
    shapes = {_u.shape(p) for p in parts}
    if len(shapes) != 1:
        raise ValueError(
            "setting an array element with a sequence. The requested array has an "
            f"inhomogeneous shape: its parts have shapes {sorted(map(str, shapes))}"
        )
    return _shape_ops.concatenate([_shape_ops.expand_dims(p, (0,)) for p in parts], 0)


def _host_dtype(obj: Any, host: np.ndarray) -> Any:
    """JAX's dtype for host data: list elements promote on JAX's lattice, not NumPy's."""
    if isinstance(obj, list | tuple):
        leaves = _leaves(obj)
        if not leaves:
            return dtypes.default_float_dtype()
        if all(type(leaf) in (bool, int, float, complex) for leaf in leaves):
            return dtypes.canonicalize_dtype(host.dtype)  # the common case, NumPy agrees
        return dtypes.result_type(*(np.asarray(x) if _is_nested(x) else x for x in leaves))
    return dtypes.canonicalize_dtype(host.dtype)


def _is_nested(x: Any) -> bool:
    return not isinstance(x, bool | int | float | complex | np.generic | np.ndarray)


def array(
    object: Any,
    dtype: Any = None,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """An array holding the data of `object`.

    Args:
      object: an array, tracer, NumPy array, scalar, an object with `__jax_array__`
        or `__array__`, or a (nested) list or tuple of them.
      dtype: the dtype of the result; by default inferred as JAX does (canonical,
        weakly typed for Python scalars, list elements promoted on JAX's lattice).
      copy: whether an array given as `object` is copied to a new buffer (the result
        is always a new array for host data).
      order: only "K", "C", "A" or None (all the same for polyjax arrays).
      ndmin: the least number of dimensions of the result (leading size-1 axes added).
      device: where to put the result (a device or sharding).
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Returns:
      An `Array`, or a tracer when `object` holds tracers.

    Raises:
      TypeError: `object` is not array-like (e.g. a string, a dict, None).
      ValueError: a nested sequence is ragged, or both `device` and `out_sharding`
        are given.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array([[1, 2], [3, 4]])
      Array([[1, 2],
             [3, 4]], dtype=int32)
    """
    _os.check_device(device, out_sharding)
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"jnp.array with order={order!r} is not supported")
    dtype = _canonical_dtype(dtype, "array")
    if hasattr(object, "__jax_array__") and not isinstance(object, _u.ARRAY_TYPES):
        object = object.__jax_array__()
    elif isinstance(object, sd.DimExpr):
        object = _u.from_protocol(object)  # a symbolic dimension used as a value
    if isinstance(object, _u.ARRAY_TYPES):
        if dtype is not None and (dtype != _u.dtype(object) or _u.aval(object).weak_type):
            out = _u.convert(object, dtype)  # an explicit dtype is a strong type
        elif copy and isinstance(object, Array) and device is None:
            out = device_put(object, may_alias=False)  # a new buffer (e.g. before donation)
        elif copy and isinstance(object, Tracer) and device is None:
            out = _identities.copy_p.bind(object)  # staged as JAX stages it: `copy`
        else:
            out = object
    elif isinstance(object, list | tuple) and any(
        map(_is_traced_leaf, _leaves(object, convert=False))
    ):
        if dtype is None:
            dtype = dtypes.result_type(*_leaves(object))
        out = _stack_nested(object, dtype)
    else:
        if isinstance(object, str | bytes | dict | set) or object is None:
            raise TypeError(f"jnp.array: unexpected input type {type(object).__name__!r}")
        # Python scalars and lax's weak host scalars stay weakly typed (JAX's rule).
        weak = dtype is None and dtypes.is_weakly_typed(object)
        host = np.asarray(object)
        if host.dtype == _OBJECT:
            raise TypeError(
                f"jnp.array: cannot convert {type(object).__name__} holding non-numeric "
                "elements to an array"
            )
        # (Implicit transfers: a "disallow" transfer guard refuses them, as in JAX.)
        if weak:
            out = put_implicit(object)
        else:
            to = dtype if dtype is not None else _host_dtype(object, host)
            # Converting the Python data itself (not NumPy's wide array) makes an int
            # that does not fit the 32-bit type an OverflowError, as in JAX.
            source = object if isinstance(object, list | tuple | int) else host
            out = put_implicit(np.asarray(source, to))
    if ndmin > _u.ndim(out):
        out = _shape_ops.broadcast_to_rank(out, ndmin)
    return _os.finish(on_device(out, device), out_sharding)


def asarray(
    a: Any,
    dtype: Any = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`a` as an array: like `array`, without a copy when `a` already is one.

    Args:
      a: anything `array` accepts.
      dtype: the result's dtype (inferred by default).
      order: accepted for NumPy compatibility.
      copy: True always copies an array input; None or False (JAX's rule: a copy
        that a dtype change needs is still made) returns it as it is.
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.asarray(1.5)
      Array(1.5, dtype=float32, weak_type=True)
    """
    return array(
        a, dtype=dtype, copy=bool(copy), order=order, device=device, out_sharding=out_sharding
    )


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of the array `a` (a new buffer; values and dtype unchanged).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.copy(jnp.arange(3))
      Array([0, 1, 2], dtype=int32)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    _u.check_arraylike("copy", a)
    return array(a, copy=True, order=order)


# ---------------------------------------------------------------------------
# Filled arrays


def _full(shape: Any, fill_value: Any, dtype: Any, fun_name: str, device: Any) -> Any:
    shape = static_shape(shape, f"{fun_name} shape")
    dtype = _canonical_dtype(dtype, fun_name)
    return on_device(_shape_ops.full(shape, fill_value, dtype), device)


def _float_default(dtype: Any) -> Any:
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of `shape` filled with zeros (float32 unless `dtype` says otherwise).

    Args:
      shape: an int or a sequence of ints (static; symbolic dimensions allowed).
      dtype: the element type (default: the default float type).
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Raises:
      TypeError: `shape` is not a sequence of non-negative integers.
      ConcretizationTypeError: `shape` holds a tracer.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.zeros((2, 3)).shape
      (2, 3)
    """
    out = _full(shape, 0, _float_default(dtype), "zeros", device)
    return _os.finish(out, out_sharding)


def ones(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An array of `shape` filled with ones (float32 unless `dtype` says otherwise).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ones(2, jnp.int32)
      Array([1, 1], dtype=int32)
    """
    out = _full(shape, 1, _float_default(dtype), "ones", device)
    return _os.finish(out, out_sharding)


def empty(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None) -> Any:
    """As `zeros`: arrays are immutable, so an "uninitialized" array is a zero one.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.empty(2)
      Array([0., 0.], dtype=float32)
    """
    out = _full(shape, 0, _float_default(dtype), "empty", device)
    return _os.finish(out, out_sharding)


def full(
    shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """An array of `shape` filled with `fill_value` (broadcast if it is an array).

    Args:
      shape: the result shape.
      fill_value: a scalar, or an array broadcastable to `shape`.
      dtype: the element type; by default that of `fill_value` (weakly typed for a
        Python scalar, as in JAX).
      device: where to put the result.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.full((2,), 7)
      Array([7, 7], dtype=int32, weak_type=True)
    """
    _u.check_arraylike("full", fill_value)
    if _u.ndim(fill_value) == 0:
        return _os.finish(_full(shape, fill_value, dtype, "full", device), out_sharding)
    shape = static_shape(shape, "full shape")
    out = on_device(_u.broadcast_to(asarray(fill_value, dtype=dtype), shape), device)
    return _os.finish(out, out_sharding)


def _full_like(
    a: Any, fill_value: Any, dtype: Any, shape: Any, fun_name: str, device: Any, out_sharding: Any
) -> Any:
    _os.check_device(device, out_sharding)
    a_dtype = getattr(a, "dtype", None)
    if isinstance(a_dtype, dtypes.ExtendedDType) and a_dtype._rules is not None:
        # Key arrays: their dtype's rules build a key array (JAX's `zeros_like(keys)`).
        if shape is not None:
            shape = static_shape(shape, f"{fun_name} shape")
        out = a_dtype._rules.full_like(a, fill_value, dtype, shape)
        return _os.finish(on_device(out, device), out_sharding)
    if isinstance(a, ShapeDtypeStruct):  # a type without data, as JAX accepts
        _u.check_arraylike(fun_name, fill_value)
    else:
        _u.check_arraylike(fun_name, a, fill_value)
    dtype = _canonical_dtype(dtype, fun_name)
    if shape is not None:
        shape = static_shape(shape, f"{fun_name} shape")
    if _u.ndim(fill_value) == 0:
        # The requested sharding is the broadcast's (its type), as in JAX.
        out = _shape_ops.full_like(a, fill_value, dtype, shape, sharding=out_sharding)
        return on_device(out, device)
    value = asarray(fill_value, dtype=a.dtype if dtype is None else dtype)
    out = _u.broadcast_to(value, a.shape if shape is None else shape)
    return _os.finish(on_device(out, device), out_sharding)


def zeros_like(
    a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """Zeros with the shape and dtype of `a` (either overridden by `dtype`, `shape`).

    A weakly typed `a` gives a weakly typed result when `dtype` is None.

    Args:
      a: the array whose shape and dtype the result takes.
      dtype, shape: overrides of `a`'s dtype and shape.
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.zeros_like(jnp.arange(3))
      Array([0, 0, 0], dtype=int32)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    return _full_like(a, 0, dtype, shape, "zeros_like", device, out_sharding)


def ones_like(
    a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None, out_sharding: Any = None
) -> Any:
    """Ones with the shape and dtype of `a` (either overridden by `dtype`, `shape`).

    Args:
      a: the array whose shape and dtype the result takes.
      dtype, shape: overrides of `a`'s dtype and shape.
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ones_like(jnp.zeros(2), dtype=bool)
      Array([ True,  True], dtype=bool)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    return _full_like(a, 1, dtype, shape, "ones_like", device, out_sharding)


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """As `zeros_like` (arrays are immutable, so there is nothing to leave uninitialized).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.empty_like(jnp.arange(2))
      Array([0, 0], dtype=int32)
    """
    prototype = _u.from_protocol(prototype)  # JAX converts `__jax_array__` here
    return _full_like(prototype, 0, dtype, shape, "empty_like", device, None)


def full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`fill_value` broadcast to the shape of `a`, with the dtype of `a`.

    Args:
      a: the array whose shape and dtype the result takes.
      fill_value: a scalar or an array broadcastable to the shape.
      dtype, shape: overrides of `a`'s dtype and shape.
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.full_like(jnp.zeros(2, jnp.int32), 2.7)
      Array([2, 2], dtype=int32)
    """
    a = _u.from_protocol(a)  # JAX converts `__jax_array__` here
    return _full_like(a, fill_value, dtype, shape, "full_like", device, out_sharding)


# ---------------------------------------------------------------------------
# Ranges


def _concrete_scalar(value: Any, name: str, fun_name: str) -> Any:
    """A concrete Python or NumPy scalar for a bound of `fun_name` (arrays read on the host)."""
    if value is None or sd.is_symbolic_dim(value):
        return value
    value = concrete_or_error(None, value, f"It arose in the jnp.{fun_name} argument '{name}'.")
    if isinstance(value, Array):
        value = np.asarray(value)
    if np.ndim(value) != 0:
        raise ValueError(
            f"jnp.{fun_name}: the argument '{name}' must be a scalar, got shape {np.shape(value)}"
        )
    return value[()] if isinstance(value, np.ndarray) else value


def arange(
    start: Any,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Evenly spaced values in the half-open interval `[start, stop)`.

    Called as `arange(stop)`, `arange(start, stop)` or `arange(start, stop, step)`,
    like Python's `range`. The bounds must be static (the result's length depends
    on them); `arange(n)` with a symbolic dimension `n` is allowed.

    Args:
      start: the first value (or the stop, when `stop` is None).
      stop: the end of the interval, excluded.
      step: the spacing (default 1).
      dtype: the result's dtype; by default the promotion of the bounds on JAX's
        lattice (int32 for Python ints, float32 for Python floats).
      device: where to put the result.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Returns:
      A 1-D, strongly typed array.

    Raises:
      ConcretizationTypeError: a bound is a tracer.
      ZeroDivisionError: `step` is zero.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.arange(1, 3, 0.5)
      Array([1. , 1.5, 2. , 2.5], dtype=float32)
    """
    dtype = _canonical_dtype(dtype, "arange")
    if start is None and stop is not None:
        start = 0
    if start is None:
        raise TypeError("jnp.arange() missing required argument 'start'")
    start = _concrete_scalar(start, "start" if stop is not None else "stop", "arange")
    stop = _concrete_scalar(stop, "stop", "arange")
    step = _concrete_scalar(step, "step", "arange")
    bounds = [b for b in (start, stop, step) if b is not None]
    for b in bounds:
        if not sd.is_symbolic_dim(b) and dtypes.issubdtype(dtypes.dtype(b), np.complexfloating):
            raise TypeError("jnp.arange does not accept complex bounds")
    if dtype is None:
        dtype = dtypes.result_type(*(0 if sd.is_symbolic_dim(b) else b for b in bounds))
    if stop is None and step is None:
        # arange(n): an iota, which also takes a symbolic size.
        size = start if sd.is_symbolic_dim(start) else max(int(np.ceil(start)), 0)
        return _os.finish(on_device(_shape_ops.iota(dtype, size), device), out_sharding)
    if any(sd.is_symbolic_dim(b) for b in bounds):
        raise TypeError(
            "jnp.arange with symbolic dimensions is supported only as arange(n); got "
            f"start={start}, stop={stop}, step={step}"
        )
    if step is not None and step == 0:
        raise ZeroDivisionError("jnp.arange: step must not be zero (division by zero)")
    # The values are computed on the host, as NumPy does (a static result anyway);
    # NumPy has no arange for the ml_dtypes types, so those go through float32.
    compute = dtype if np.dtype(dtype).kind in "biufc" else np.float32
    values = np.arange(start, stop, step, dtype=compute)
    out = on_device(device_put(values.astype(dtype, copy=False)), device)
    return _os.finish(out, out_sharding)


def _linspace_bounds(start: Any, stop: Any, dtype: Any, fun_name: str) -> tuple[Any, Any, Any]:
    """(dtype, start, stop): the result dtype, and the bounds in its inexact computation type."""
    _u.check_arraylike(fun_name, start, stop)
    dtype = _canonical_dtype(dtype, fun_name)
    if dtype is None:
        dtype = dtypes.result_type(start, stop, float)
    compute = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dtype))
    return dtype, asarray(start, compute), asarray(stop, compute)


def to_result_dtype(out: Any, dtype: Any) -> Any:
    if dtypes.issubdtype(dtype, np.integer) and not _u.issubdtype_of(out, np.integer):
        out = lax.floor(out)  # NumPy's rule: integer results round down
    return _u.convert(out, dtype, False)


def linspace_along(start: Any, stop: Any, num: int, endpoint: bool, axis: int) -> tuple[Any, Any]:
    """(values, step) in the bounds' common inexact dtype, along `axis` of the result."""
    bounds_shape = sd.broadcast_shapes(_u.shape(start), _u.shape(stop))
    ndim = len(bounds_shape) + 1
    axis = _u.canonicalize_axis(axis, ndim)
    dt = _u.dtype(start)
    start = _shape_ops.broadcast_in_dim(
        start, bounds_shape, tuple(range(len(bounds_shape) - _u.ndim(start), len(bounds_shape)))
    )
    stop = _shape_ops.broadcast_in_dim(
        stop, bounds_shape, tuple(range(len(bounds_shape) - _u.ndim(stop), len(bounds_shape)))
    )
    out_shape = list(bounds_shape)
    out_shape.insert(axis, num)
    kept = tuple(d for d in range(ndim) if d != axis)
    lo = _shape_ops.broadcast_in_dim(start, tuple(out_shape), kept)
    hi = _shape_ops.broadcast_in_dim(stop, tuple(out_shape), kept)
    div = num - 1 if endpoint else num
    delta = lax.sub(stop, start)
    if div > 0:
        step = lax.div(delta, np.asarray(div, dt)[()])
        # NumPy's formula, start + i * step, with the last value exactly stop.
        steps = _shape_ops.broadcast_in_dim(step, tuple(out_shape), kept)
        out = lax.add(lo, lax.mul(_shape_ops.broadcasted_iota(dt, tuple(out_shape), axis), steps))
        if endpoint and num > 1:
            last = lax.eq(_shape_ops.broadcasted_iota(np.int32, tuple(out_shape), axis), num - 1)
            out = lax.select_n(last, out, hi)
    else:
        step = lax.add(delta, np.asarray(np.nan, dt)[()]) if endpoint else delta
        out = lo
    return out, step


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
) -> Any:
    """`num` evenly spaced values from `start` to `stop` (included unless `endpoint=False`).

    Args:
      start, stop: scalars or arrays (broadcast together; the values run along
        `axis` of the result).
      num: the number of values (static, non-negative).
      endpoint: whether `stop` is the last value.
      retstep: also return the spacing.
      dtype: the result's dtype (default: the bounds' promotion with float; an
        integer dtype rounds the values down, as NumPy does).
      axis: the axis of the result holding the values.
      device: where to put the result.

    Returns:
      The values, or `(values, step)` if `retstep`.

    Raises:
      ValueError: `num` is negative.
      ConcretizationTypeError: `num` is a tracer.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.linspace(0, 1, 5)
      Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    num = concrete_int(num, "'num' argument of jnp.linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dtype, start, stop = _linspace_bounds(start, stop, dtype, "linspace")
    out, step = linspace_along(start, stop, num, bool(endpoint), axis)
    out = on_device(to_result_dtype(out, dtype), device)
    return (out, step) if retstep else out


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """`base ** linspace(start, stop, num, endpoint)`: values evenly spaced on a log scale.

    Args:
      start, stop: the exponents of the first and last values.
      num, endpoint, axis: as in `linspace`.
      base: the base of the exponents (a scalar or an array broadcast against the
        bounds, as in NumPy).
      dtype: the result's dtype.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.logspace(0, 2, 3)
      Array([  1.,  10., 100.], dtype=float32)
    """
    from polyjax_numpy.numpy._ufuncs import power

    num = concrete_int(num, "'num' argument of jnp.logspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dtype, start, stop = _linspace_bounds(start, stop, dtype, "logspace")
    _u.check_arraylike("logspace", base)
    if _u.ndim(base):
        # NumPy's rule: the bounds take the rank of their broadcast with `base`, and
        # `base` gets a size-1 axis where the values run.
        rank = max(_u.ndim(start), _u.ndim(stop), _u.ndim(base))
        start, stop, base = (
            _shape_ops.broadcast_to_rank(asarray(v), rank) for v in (start, stop, base)
        )
        base = _shape_ops.expand_dims(base, (_u.canonicalize_axis(axis, rank + 1),))
    exponents, _ = linspace_along(start, stop, num, bool(endpoint), axis)
    return to_result_dtype(power(_u.convert(base, _u.dtype(exponents), True), exponents), dtype)


def geomspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    dtype: Any = None,
    axis: int = 0,
) -> Any:
    """`num` values from `start` to `stop` in a geometric progression (constant ratio).

    Both bounds must be non-zero and, for real types, of the same sign (otherwise
    the values are NaN: traced values cannot be checked). The first and last
    values are `start` and `stop` exactly.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.geomspace(1, 1000, 4).round()
      Array([   1.,   10.,  100., 1000.], dtype=float32)
    """
    num = concrete_int(num, "'num' argument of jnp.geomspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dtype, start, stop = _linspace_bounds(start, stop, dtype, "geomspace")
    # NumPy's method: rotate start onto the positive reals (divide by its sign, x/|x|
    # for complex), interpolate the logarithms, rotate back.
    sign = lax.sign(start)
    logs, _ = linspace_along(
        lax.log(lax.div(start, sign)), lax.log(lax.div(stop, sign)), num, bool(endpoint), axis
    )
    out = lax.mul(lax.exp(logs), _expand_bounds(sign, _u.shape(logs), axis))
    if num:
        ends = [(0, start)] + ([(num - 1, stop)] if endpoint and num > 1 else [])
        index = _shape_ops.broadcasted_iota(np.int32, _u.shape(out), _axis(axis, out))
        for i, value in ends:
            out = lax.select_n(lax.eq(index, i), out, _expand_bounds(value, _u.shape(out), axis))
    return to_result_dtype(out, dtype)


def _axis(axis: int, out: Any) -> int:
    return _u.canonicalize_axis(axis, _u.ndim(out))


def _expand_bounds(bound: Any, out_shape: tuple, axis: int) -> Any:
    """A bound (broadcastable to `out_shape` without the values axis) spread along it."""
    ndim = len(out_shape)
    axis = _u.canonicalize_axis(axis, ndim)
    rest = tuple(d for d in range(ndim) if d != axis)
    dims = rest[len(rest) - _u.ndim(bound) :]
    return _shape_ops.broadcast_in_dim(bound, out_shape, dims)


# ---------------------------------------------------------------------------
# Grids


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    """Coordinate grids from 1-D coordinate vectors.

    Args:
      *xi: 1-D arrays, one per dimension.
      copy: accepted for NumPy compatibility (results are new arrays anyway).
      sparse: return arrays with size-1 axes (broadcastable) instead of full grids.
      indexing: "xy" (Cartesian: the first two output axes swapped) or "ij" (matrix).

    Returns:
      A list of arrays, one per input.

    Raises:
      ValueError: an input is not 1-D, or `indexing` is neither "xy" nor "ij".

    Example:
      >>> import polyjax.numpy as jnp
      >>> [g.shape for g in jnp.meshgrid(jnp.arange(3), jnp.arange(2))]
      [(2, 3), (2, 3)]
    """
    del copy
    _u.check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    shapes = [_u.shape(x) for x in xi]
    if any(len(s) != 1 for s in shapes):
        raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {shapes}")
    n = len(xi)
    sizes = [s[0] for s in shapes]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xi):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and n >= 2 else i
        x = asarray(x)
        if sparse:
            shape = tuple(sizes[axis] if d == axis else 1 for d in range(n))
        else:
            shape = tuple(sizes)
        out.append(_shape_ops.broadcast_in_dim(x, shape, (axis,)))
    return out


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The index of each position of a grid of shape `dimensions`, one array per axis.

    Args:
      dimensions: the grid's shape (static).
      dtype: the integer dtype of the indices (default int32).
      sparse: return a tuple of broadcastable arrays (size 1 except on their own
        axis) instead of one stacked array.

    Returns:
      An array of shape `(len(dimensions), *dimensions)`, or a tuple if `sparse`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.indices((2, 3))[1]
      Array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    dims = static_shape(dimensions, "jnp.indices dimensions")
    dtype = _canonical_dtype(dtypes.default_int_dtype() if dtype is None else dtype, "indices")
    n = len(dims)
    if sparse:
        return tuple(
            _shape_ops.broadcasted_iota(
                dtype, tuple(d if j == i else 1 for j, d in enumerate(dims)), i
            )
            for i in range(n)
        )
    grids = [_shape_ops.broadcasted_iota(dtype, (1, *dims), i + 1) for i in range(n)]
    if not grids:
        return zeros((0,), dtype)
    return _shape_ops.concatenate(grids, 0)


def fromfunction(
    function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any
) -> Any:
    """`function` applied to the index grid of `shape`.

    Unlike NumPy, `function` is called on scalars and vectorized with `vmap`
    over every axis, so it may use any traceable operation (including control
    flow); its results may be pytrees.

    Args:
      function: called as `function(i0, i1, ..., **kwargs)` with the indices.
      shape: the grid's shape (static).
      dtype: the dtype of the indices passed to `function` (default float32).
      **kwargs: passed on to `function`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fromfunction(lambda i, j: i + j, (2, 3), dtype=int)
      Array([[0, 1, 2],
             [1, 2, 3]], dtype=int32)
    """
    shape = static_shape(shape, "shape argument of jnp.fromfunction()")
    fun = functools.partial(function, **kwargs)  # closed over: vmap would map keywords
    # The first index's map is the outermost, so that it becomes the result's first axis.
    for i in reversed(range(len(shape))):
        in_axes = tuple(0 if j == i else None for j in range(len(shape)))
        fun = vmap(fun, in_axes=in_axes)
    dtype = _canonical_dtype(dtype, "fromfunction")
    return fun(*(_shape_ops.iota(dtype, s) for s in shape))


# ---------------------------------------------------------------------------
# From host buffers


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """An array from the bytes of a buffer (as `np.frombuffer`, then on the device).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.frombuffer(b"\\x01\\x02", dtype=jnp.uint8)
      Array([1, 2], dtype=uint8)
    """
    return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """An array from numbers written in a string, separated by `sep` (as NumPy).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.fromstring("1 2", dtype=int, sep=" ")
      Array([1, 2], dtype=int32)
    """
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(*args: Any, **kwargs: Any) -> Any:
    """Not implemented, as in JAX: the iterator may be impure (wrong under `jit`).

    Raises:
      NotImplementedError: always; use `jnp.asarray(np.fromiter(...))`.
    """
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromiter(...)) instead, and note that it will be evaluated once, "
        "outside of any transformation."
    )


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not implemented, as in JAX: reading a file is impure (wrong under `jit`).

    Raises:
      NotImplementedError: always; use `jnp.asarray(np.fromfile(...))`.
    """
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, and note that it will be evaluated once, "
        "outside of any transformation."
    )
