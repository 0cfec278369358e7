"""Reductions of `jnp`: `sum`, `prod`, `max`, `min`, `mean`, `argmax`, `argmin`.

They follow NumPy's signatures (`axis`, `dtype`, `keepdims`, `initial`) and JAX's
dtype rules: sums and products of bools and narrow integers give the default
integer (`promote_integers`), 16-bit floats accumulate in float32 and are cast
back, and `mean` of integers is a float.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _reductions, _shape_ops
from polyjax_numpy.lax._shape_ops import canonicalize_axis
from polyjax_numpy.numpy import _manipulation, _ufuncs
from polyjax_numpy.numpy import _util as _u


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
        a: Any,
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
        aval = _u.aval(a)
        axes = _u.reduction_axes(axis, aval.ndim)
        if not has_identity and initial is None:
            if any(type(aval.shape[ax]) is int and aval.shape[ax] == 0 for ax in axes):
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
        x = _u.convert(a, compute_dtype, weak and compute_dtype == aval.dtype)
        result = reduce_fn(x, axes)
        if initial is not None:
            init = _u.convert(np.asarray(initial, compute_dtype)[()], compute_dtype)
            result = combine(result, init)
        if keepdims:
            result = _shape_ops.expand_dims(result, axes)
        return _u.convert(result, result_dtype, weak and result_dtype == aval.dtype)

    method.__name__ = name
    return method


sum = _reduction("sum", _reductions.reduce_sum, _ufuncs.add, True, True, True)
prod = _reduction("prod", _reductions.reduce_prod, _ufuncs.multiply, True, True, True)
max = _reduction("max", _reductions.reduce_max, lax.max, False, False, False)
min = _reduction("min", _reductions.reduce_min, lax.min, False, False, False)


def mean(
    a: Any,
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
    aval = _u.aval(a)
    axes = _u.reduction_axes(axis, aval.ndim)
    count = sd.shape_size([aval.shape[ax] for ax in axes])
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
    total = sum(a, axes, dtype=compute_dtype, keepdims=keepdims)
    out_ = lax.div(total, np.asarray(count, compute_dtype)[()])
    return _u.convert(out_, result_dtype)


def _arg_reduction(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(a: Any, axis: Any = None, out: Any = None, keepdims: bool | None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        aval = _u.aval(a)
        x = a
        if axis is None:
            x = _manipulation.ravel(a)
            ax = 0
        else:
            ax = canonicalize_axis(axis, aval.ndim)
        size = _u.shape(x)[ax]
        if type(size) is int and size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = fn(x, ax, dtypes.canonicalize_dtype(dtypes.int_))
        if keepdims:
            dims = tuple(range(aval.ndim)) if axis is None else (ax,)
            result = _shape_ops.expand_dims(result, dims)
        return result

    method.__name__ = name
    return method


argmax = _arg_reduction("argmax", _reductions.argmax)
argmin = _arg_reduction("argmin", _reductions.argmin)
