"""Reductions of `jnp`: `sum`, `prod`, `max`, `min`, `all`, `any`, `mean`, `argmax`, ...

They follow NumPy's signatures (`axis`, `dtype`, `keepdims`, `initial`, `where`)
and JAX's dtype rules:

- `sum`/`prod` of bools and narrow integers give the default integer
  (`promote_integers=True`); of 16-bit floats they accumulate in float32 and are
  cast back;
- `max`/`min` keep the dtype; they have no identity, so an empty reduction or a
  `where` mask needs `initial` (else `ValueError`, as in NumPy);
- `all`/`any` give bools (nonzero is true);
- `mean` of bools and integers is a float; of an empty axis, NaN (0 / 0).

`where` is a bool mask broadcast against `a`: masked-out elements are replaced
by the reduction's identity before reducing. The `nan*` forms replace NaNs by
the identity (`nanmax`/`nanmin` give NaN for an all-NaN slice, `nanargmax`
gives -1). Integer arrays have no NaNs: their `nan*` forms are the plain ones.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _bits, _reductions, _shape_ops, _slicing
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _manipulation
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._predicates import isnan

_BOOL = np.dtype(bool)


# ---------------------------------------------------------------------------
# Helpers


def _check_out(out: Any, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _axis_size(shape: tuple, axes: tuple[int, ...], dtype: Any) -> Any:
    """The number of elements over `axes`, as a scalar of `dtype` (run time if symbolic)."""
    count = sd.shape_size([shape[ax] for ax in axes])
    return (
        _slicing._dim_as(count, dtype) if type(count) is not int else np.asarray(count, dtype)[()]
    )


def _upcast_low_precision(dtype: np.dtype) -> np.dtype:
    """16-bit floats accumulate in float32 (the result is cast back)."""
    if dtype in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        return np.dtype(np.float32)
    return dtype


def _promoted_integer_dtype(dtype: np.dtype) -> np.dtype:
    """`sum`/`prod` of bool and narrow integers return the default integer width."""
    if dtype == _BOOL:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if dtypes.issubdtype(dtype, np.signedinteger):
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _identity(kind: str, dtype: np.dtype) -> Any:
    """The value masked-out elements take: reducing it changes nothing."""
    if kind in ("all", "any"):
        return kind == "all"
    return _reductions._identity(kind, dtype)


def _is_empty(shape: tuple, axes: tuple[int, ...]) -> bool:
    return builtins.any(type(shape[ax]) is int and shape[ax] == 0 for ax in axes)


# ---------------------------------------------------------------------------
# sum, prod, max, min, all, any

_LAX_REDUCE: dict[str, Callable[[Any, tuple], Any]] = {
    "sum": _reductions.reduce_sum,
    "prod": _reductions.reduce_prod,
    "max": _reductions.reduce_max,
    "min": _reductions.reduce_min,
    "all": _bits.reduce_and,
    "any": _bits.reduce_or,
}
_COMBINE: dict[str, Callable[[Any, Any], Any]] = {
    "sum": lax.add,
    "prod": lax.mul,
    "max": lax.max,
    "min": lax.min,
}


def _reduce(
    name: str,
    kind: str,
    a: Any,
    axis: Any,
    dtype: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
    promote_integers: bool = True,
) -> Any:
    _u.check_arraylike(name, a)
    if where is not None:
        _u.check_arraylike(name, where)
    aval = _u.aval(a)
    if isinstance(aval.dtype, dtypes.ExtendedDType):  # typed keys: JAX's TypeError
        raise TypeError(f"Cannot interpret '{aval.dtype}' as a data type")
    axes = _u.reduction_axes(axis, aval.ndim)
    has_identity = kind not in ("max", "min")
    if not has_identity and initial is None:
        if where is not None:
            raise ValueError(
                f"reduction operation {name} does not have an identity, so to use a where mask "
                "one has to specify 'initial'"
            )
        if _is_empty(aval.shape, axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if kind in ("all", "any"):
        result_dtype = compute_dtype = _BOOL
        x = a if aval.dtype == _BOOL else lax.ne(a, _u.scalar_like(0, a))
    else:
        if dtype is not None:
            dtypes.check_user_dtype_supported(dtype, name)
            result_dtype = dtypes.canonicalize_dtype(dtype)
        elif kind in ("sum", "prod") and promote_integers:
            result_dtype = dtypes.canonicalize_dtype(_promoted_integer_dtype(aval.dtype))
        else:
            result_dtype = aval.dtype
        if kind in ("sum", "prod"):
            # lax sums and products take numbers only; 16-bit floats lose too much.
            if result_dtype == _BOOL:
                compute_dtype = dtypes.default_int_dtype()
            else:
                compute_dtype = _upcast_low_precision(result_dtype)
        else:
            compute_dtype = result_dtype
        x = _u.convert(a, compute_dtype, aval.weak_type and compute_dtype == aval.dtype)
    if where is not None:
        x = _u.where(
            _u.broadcast_to(where, aval.shape), x, _u.scalar_like(_identity(kind, compute_dtype), x)
        )
    result = _LAX_REDUCE[kind](x, axes)
    if initial is not None:
        if kind in ("all", "any"):
            raise TypeError(f"jnp.{name} does not take 'initial'")
        init = _u.convert(initial, compute_dtype)
        result = _COMBINE[kind](result, init)
    if keepdims:
        result = _shape_ops.expand_dims(result, axes)
    weak = aval.weak_type and dtype is None and result_dtype == aval.dtype
    return _u.convert(result, result_dtype, weak)


def sum(  # noqa: A001 - NumPy's name
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
    promote_integers: bool = True,
) -> Any:
    """The sum of the elements of `a` over `axis`.

    Args:
      a: an array.
      axis: None (all axes), an int or a tuple of ints.
      dtype: the accumulation and result dtype; by default that of `a`, with bools and
        integers narrower than the default integer widened to it (`promote_integers`).
      out: not supported (arrays are immutable).
      keepdims: keep the reduced axes with size 1.
      initial: a scalar added to the sum.
      where: a bool mask broadcast against `a`; only elements where it is true count.
      promote_integers: widen bools and narrow integers (see `dtype`).

    Returns:
      The sum; 16-bit floats are accumulated in float32 and cast back.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.sum(jnp.arange(6).reshape(2, 3), axis=0, where=jnp.array([True, False, True]))
      Array([3, 0, 7], dtype=int32)
    """
    _check_out(out, "sum")
    return _reduce("sum", "sum", a, axis, dtype, keepdims, initial, where, promote_integers)


def prod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
    promote_integers: bool = True,
) -> Any:
    """The product of the elements of `a` over `axis` (arguments as `sum`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.prod(jnp.array([[1., 2.], [3., 4.]]), axis=1)
      Array([ 2., 12.], dtype=float32)
    """
    _check_out(out, "prod")
    return _reduce("prod", "prod", a, axis, dtype, keepdims, initial, where, promote_integers)


def max(  # noqa: A001 - NumPy's name
    a: Any,
    axis: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """The largest element of `a` over `axis` (NaN if there is one).

    Args:
      a: an array.
      axis: None (all axes), an int or a tuple of ints.
      out: not supported.
      keepdims: keep the reduced axes with size 1.
      initial: a lower bound for the result; required for an empty reduction or with `where`.
      where: a bool mask broadcast against `a`; only elements where it is true count.

    Raises:
      ValueError: an empty reduction, or `where`, without `initial`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.max(jnp.array([[1, 5], [4, 2]]), axis=0)
      Array([4, 5], dtype=int32)
    """
    _check_out(out, "max")
    return _reduce("max", "max", a, axis, None, keepdims, initial, where)


def min(  # noqa: A001 - NumPy's name
    a: Any,
    axis: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """The smallest element of `a` over `axis` (arguments as `max`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.min(jnp.array([[1, 5], [4, 2]]), axis=1)
      Array([1, 2], dtype=int32)
    """
    _check_out(out, "min")
    return _reduce("min", "min", a, axis, None, keepdims, initial, where)


amax = max
amin = min


def all(  # noqa: A001 - NumPy's name
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = None
) -> Any:
    """Whether every element of `a` over `axis` is nonzero (True for an empty reduction).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.all(jnp.array([[1, 0], [2, 3]]), axis=1)
      Array([False,  True], dtype=bool)
    """
    _check_out(out, "all")
    return _reduce("all", "all", a, axis, None, keepdims, None, where)


def any(  # noqa: A001 - NumPy's name
    a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *, where: Any = None
) -> Any:
    """Whether some element of `a` over `axis` is nonzero (False for an empty reduction).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.any(jnp.array([[1, 0], [0, 0]]), axis=1)
      Array([ True, False], dtype=bool)
    """
    _check_out(out, "any")
    return _reduce("any", "any", a, axis, None, keepdims, None, where)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements of `a` over `axis`, as the default integer.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.count_nonzero(jnp.array([[0, 1, 2], [0, 0, 3]]), axis=1)
      Array([2, 1], dtype=int32)
    """
    _u.check_arraylike("count_nonzero", a)
    nonzero = a if _u.is_bool(a) else lax.ne(a, _u.scalar_like(0, a))
    return sum(nonzero, axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """The range (`max - min`) of the elements of `a` over `axis` ("peak to peak").

    Raises:
      TypeError: `a` is boolean (NumPy refuses to subtract bools too).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ptp(jnp.array([[4, 9, 2], [3, 3, 3]]), axis=1)
      Array([7, 0], dtype=int32)
    """
    _check_out(out, "ptp")
    _u.check_arraylike("ptp", a)
    if _u.is_bool(a):
        raise TypeError("jnp.ptp does not accept boolean arrays (the difference of bools).")
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def mean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    *,
    where: Any = None,
    upcast_f16_for_computation: bool = True,
) -> Any:
    """The arithmetic mean of the elements of `a` over `axis`.

    Args:
      a: an array.
      axis: None (all axes), an int or a tuple of ints.
      dtype: the result dtype; by default `a`'s, or the default float for bools and integers.
      out: not supported.
      keepdims: keep the reduced axes with size 1.
      where: a bool mask broadcast against `a`; the mean of the elements where it is true.
      upcast_f16_for_computation: accumulate 16-bit floats in float32.

    Returns:
      The mean; NaN for an empty reduction.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.mean(jnp.array([[1, 2], [3, 5]]), axis=0)
      Array([2. , 3.5], dtype=float32)
    """
    _check_out(out, "mean")
    _u.check_arraylike("mean", a)
    if where is not None:
        _u.check_arraylike("mean", where)
    aval = _u.aval(a)
    axes = _u.reduction_axes(axis, aval.ndim)
    if dtype is None:
        result_dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(aval.dtype))
    else:
        dtypes.check_user_dtype_supported(dtype, "mean")
        result_dtype = dtypes.canonicalize_dtype(dtype)
    compute_dtype = (
        _upcast_low_precision(result_dtype) if upcast_f16_for_computation else result_dtype
    )
    total = sum(a, axes, dtype=compute_dtype, keepdims=keepdims, where=where)
    if where is None:
        count = _axis_size(aval.shape, axes, compute_dtype)
    else:
        mask = _u.broadcast_to(where, aval.shape)
        count = sum(mask, axes, dtype=compute_dtype, keepdims=keepdims)
    return _u.convert(lax.div(total, count), result_dtype)


def _arg_reduction(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(a: Any, axis: Any = None, out: Any = None, keepdims: bool | None = None) -> Any:
        _check_out(out, name)
        _u.check_arraylike(name, a)
        aval = _u.aval(a)
        x, ax = _manipulation.flat_or_axis(a, axis)
        size = _u.shape(x)[ax]
        if type(size) is int and size == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = fn(x, ax, dtypes.canonicalize_dtype(dtypes.int_))
        if keepdims:
            dims = tuple(range(aval.ndim)) if axis is None else (ax,)
            result = _shape_ops.expand_dims(result, dims)
        return result

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""The index of the {name[3:]}imum of `a` along `axis` (of the flattened
    array if None); the first one on ties, and the first NaN if there is one.

    Args:
      a: an array.
      axis: None or an int.
      out: not supported.
      keepdims: keep the reduced axis (all axes if `axis` is None) with size 1.

    Raises:
      ValueError: the axis is empty.
    """
    return method


argmax = _arg_reduction("argmax", _reductions.argmax)
argmin = _arg_reduction("argmin", _reductions.argmin)


# ---------------------------------------------------------------------------
# NaN-ignoring forms


def _nans_to_identity(kind: str, a: Any, nan: Any = None) -> Any:
    """`a` with its NaNs (the mask `nan`, if computed already) replaced by `kind`'s identity.

    `kind` is "sum", "prod", "max" or "min"; arrays with no NaNs (bools, integers)
    are returned as they are.
    """
    if not _u.is_inexact(a):
        return a
    nan = isnan(a) if nan is None else nan
    return _u.where(nan, _u.scalar_like(_identity(kind, _u.dtype(a)), a), a)


def _ignoring_nans(
    kind: str, fn: Callable[..., Any], a: Any, axis: Any, keepdims: Any, all_nan: Any, **kw: Any
) -> Any:
    """`fn(a, axis, ...)` over the non-NaN elements; `all_nan` where a slice has no others."""
    if not _u.is_inexact(a):
        return fn(a, axis, keepdims=keepdims, **kw)
    nan = isnan(a)
    result = fn(_nans_to_identity(kind, a, nan), axis, keepdims=keepdims, **kw)
    only_nans = all(nan, axis, keepdims=bool(keepdims))
    return _u.where(only_nans, _u.scalar_like(all_nan, result), result)


def nansum(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """`sum` treating NaNs as zero.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nansum(jnp.array([1., jnp.nan, 2.]))
      Array(3., dtype=float32)
    """
    _check_out(out, "nansum")
    _u.check_arraylike("nansum", a)
    a = _nans_to_identity("sum", a)
    return sum(a, axis, dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    initial: Any = None,
    where: Any = None,
) -> Any:
    """`prod` treating NaNs as one.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanprod(jnp.array([2., jnp.nan, 3.]))
      Array(6., dtype=float32)
    """
    _check_out(out, "nanprod")
    _u.check_arraylike("nanprod", a)
    a = _nans_to_identity("prod", a)
    return prod(a, axis, dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extremum(name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(
        a: Any,
        axis: Any = None,
        out: Any = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        _check_out(out, name)
        _u.check_arraylike(name, a)
        return _ignoring_nans(kind, fn, a, axis, keepdims, np.nan, initial=initial, where=where)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""`{kind}` ignoring NaNs; NaN where a slice holds only NaNs.

    Arguments are those of `jnp.{kind}`.
    """
    return method


nanmax = _nan_extremum("nanmax", "max", max)
nanmin = _nan_extremum("nanmin", "min", min)


def _nan_arg_reduction(name: str, kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(a: Any, axis: Any = None, out: Any = None, keepdims: bool | None = None) -> Any:
        _check_out(out, name)
        _u.check_arraylike(name, a)
        return _ignoring_nans(kind, fn, a, axis, keepdims, -1)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""`arg{kind}` ignoring NaNs; -1 where a slice holds only NaNs
    (NumPy raises there instead; a traced value cannot).
    """
    return method


nanargmax = _nan_arg_reduction("nanargmax", "max", argmax)
nanargmin = _nan_arg_reduction("nanargmin", "min", argmin)


def nanmean(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    keepdims: bool = False,
    where: Any = None,
) -> Any:
    """`mean` of the elements that are not NaN (NaN for an all-NaN slice).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanmean(jnp.array([1., jnp.nan, 3.]))
      Array(2., dtype=float32)
    """
    _check_out(out, "nanmean")
    _u.check_arraylike("nanmean", a)
    if not _u.is_inexact(a):
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    if dtype is None:
        dtype = _u.dtype(a)
    else:
        dtypes.check_user_dtype_supported(dtype, "nanmean")
    not_nan = lax.bitwise_not(isnan(a))
    count = sum(not_nan, axis, dtype=dtype, keepdims=keepdims, where=where)
    total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(total, count)


__all__ = [
    "all",
    "amax",
    "amin",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "max",
    "mean",
    "min",
    "nanargmax",
    "nanargmin",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nansum",
    "prod",
    "ptp",
    "sum",
]
