"""Array creation in `jnp`: `array` and `asarray` (more creation functions join them here).

`jnp.array` turns anything array-like into a polyjax array: host data (NumPy
arrays, Python scalars, nested lists) is transferred to the default device
once; arrays and tracers pass through, converted if a dtype is asked for; lists
that contain arrays or tracers are stacked with lax operations, so they work
under `jit`. Python scalars give weakly typed arrays (JAX's rule); float64 and
int64 host data become float32 and int32 unless `jax_enable_x64` is on.

Arrays are immutable, so `copy` only matters for host data, which is always
copied to the device anyway.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters.array import device_put
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u


def _contains_traced(obj: Any) -> bool:
    if isinstance(obj, _u.ARRAY_TYPES) or hasattr(obj, "__jax_array__"):
        return True
    if isinstance(obj, list | tuple):
        return any(_contains_traced(o) for o in obj)
    return False


def _stack_nested(obj: Any, dtype: Any) -> Any:
    """A nested list of arrays, tracers and scalars as one array (lax ops only)."""
    if not isinstance(obj, list | tuple):
        return array(obj, dtype, copy=False)
    if not obj:
        raise ValueError("jnp.array of a sequence with arrays in it cannot have empty parts")
    parts = [_stack_nested(o, dtype) for o in obj]
    parts = _u.promote_dtypes(*parts)
    shapes = {_u.shape(p) for p in parts}
    if len(shapes) != 1:
        raise ValueError(
            "setting an array element with a sequence: the parts have different shapes "
            f"{sorted(map(str, shapes))}"
        )
    return _shape_ops.concatenate([_shape_ops.expand_dims(p, (0,)) for p in parts], 0)


def array(
    object: Any,
    dtype: Any = None,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    *,
    device: Any = None,
) -> Any:
    """An array holding the data of `object`.

    Args:
      object: an array, tracer, NumPy array, scalar, or a (nested) list or tuple of them.
      dtype: the dtype of the result; by default inferred as JAX does (canonical,
        weakly typed for Python scalars).
      copy: accepted for NumPy compatibility (arrays are immutable).
      order: only "K", "C" or None are supported.
      ndmin: the least number of dimensions of the result (leading size-1 axes added).
      device: where to put host data (a device or sharding).

    Returns:
      An `Array`, or a tracer when `object` holds tracers.

    Raises:
      TypeError: `object` is not array-like (e.g. a string or a dict).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.array([[1, 2], [3, 4]])
      Array([[1, 2],
             [3, 4]], dtype=int32)
    """
    del copy
    if order not in (None, "K", "C", "A"):
        raise NotImplementedError(f"jnp.array with order={order!r} is not supported")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "array")
        dtype = dtypes.canonicalize_dtype(dtype)
    if hasattr(object, "__jax_array__") and not isinstance(object, _u.ARRAY_TYPES):
        object = object.__jax_array__()
    if isinstance(object, _u.ARRAY_TYPES):
        out = object if dtype is None else _u.convert(object, dtype)
    elif isinstance(object, list | tuple) and _contains_traced(object):
        out = _stack_nested(object, dtype)
        if dtype is not None:
            out = _u.convert(out, dtype)
    else:
        if isinstance(object, str | bytes | dict | set) or object is None:
            raise TypeError(f"jnp.array: unexpected input type {type(object).__name__!r}")
        weak = type(object) in (int, float, complex) and dtype is None
        host = np.asarray(object)
        if host.dtype == object_dtype:
            raise TypeError(
                f"jnp.array: cannot convert {type(object).__name__} holding non-numeric "
                "elements to an array"
            )
        if weak:
            out = device_put(object, device)
        else:
            to = dtype if dtype is not None else dtypes.canonicalize_dtype(host.dtype)
            out = device_put(np.asarray(host, to), device)
    if ndmin > _u.ndim(out):
        out = _shape_ops.broadcast_to_rank(out, ndmin)
    return out


object_dtype = np.dtype(object)


def asarray(
    a: Any,
    dtype: Any = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
) -> Any:
    """`a` as an array: like `array`, without a copy when `a` already is one.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.asarray(1.5)
      Array(1.5, dtype=float32, weak_type=True)
    """
    return array(a, dtype=dtype, copy=bool(copy), order=order, device=device)
