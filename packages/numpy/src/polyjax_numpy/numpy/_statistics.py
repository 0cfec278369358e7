"""Statistics of `jnp`: `var`, `std`, `average`, `median`, `quantile`, `percentile`, `nan*` forms.

Variances are computed in two passes (the mean, then the mean squared
deviation) in the input's precision, 16-bit floats in float32; the variance of
a complex array is real. `ddof` (or its Array-API name `correction`) is
subtracted from the count; like NumPy, a count that drops to zero or below
gives `inf`/NaN (`nanvar`: NaN).

Quantiles sort the reduced axes (flattened into one) and gather the order
statistics at `q * (n - 1)`, combined as `method` says: "linear" (the default),
"lower", "higher", "midpoint", "nearest" (half to even, as NumPy) or
"inverted_cdf" (the first element whose cumulative weight reaches `q`; the only
method taking `weights`). A slice holding a NaN has a NaN quantile; the `nan*`
forms skip NaNs instead, and give NaN for an all-NaN slice. `q` may be traced;
the result's leading axis follows `q`'s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _complex, _cumulative, _shape_ops, _sorting
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _products, _ufuncs
from polyjax_numpy.numpy import _reductions as _r
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._indexing import take_along_axis
from polyjax_numpy.numpy._matrices import diagonal
from polyjax_numpy.numpy._predicates import isnan

# ---------------------------------------------------------------------------
# var, std


def _var_dtypes(name: str, a_dtype: np.dtype, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of a variance."""
    a_complex = dtypes.issubdtype(a_dtype, np.complexfloating)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, name)
        result = dtypes.canonicalize_dtype(dtype)
        if a_complex and not dtypes.issubdtype(result, np.complexfloating):
            raise ValueError(
                f"jnp.{name} does not support a real dtype={result.name} for an array of "
                f"complex values ({a_dtype.name}); pass a complex dtype or None."
            )
        compute = result
    elif not dtypes.issubdtype(a_dtype, np.inexact):
        result = compute = dtypes.canonicalize_dtype(dtypes.float_)
    else:
        compute = a_dtype
        result = np.dtype(np.finfo(a_dtype).dtype) if a_complex else a_dtype
    return _r._upcast_low_precision(compute), result


def _abs2(centered: Any) -> Any:
    if _u.is_complex(centered):
        return _complex.real(lax.mul(centered, _complex.conj(centered)))
    return lax.square(centered)


def _correction(ddof: Any, correction: Any) -> Any:
    if correction is None:
        return ddof
    if not (isinstance(ddof, int | np.integer) and ddof == 0):
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _variance(
    name: str,
    a: Any,
    axis: Any,
    dtype: Any,
    out: Any,
    ddof: Any,
    keepdims: bool,
    where: Any,
    correction: Any,
    *,
    skip_nans: bool,
    sqrt: bool,
) -> Any:
    """`jnp.<name>`: the variance (or with `sqrt`, the standard deviation)."""
    _r._check_out(out, name)
    ddof = _correction(ddof, correction)
    _u.check_arraylike(name, a)
    compute, result = _var_dtypes(name, _u.dtype(a), dtype)
    real = np.dtype(np.finfo(compute).dtype)
    x = _u.convert(a, compute)
    shape = _u.shape(x)
    axes = _u.reduction_axes(axis, len(shape))
    if skip_nans:
        nan = isnan(x)
        center = _r.nanmean(x, axes, dtype=compute, keepdims=True, where=where)
        sq = _abs2(lax.sub(x, center))
        sq = _u.where(nan, _u.scalar_like(0, sq), sq)
        count = _r.sum(lax.bitwise_not(nan), axes, dtype=real, keepdims=keepdims, where=where)
    else:
        center = _r.mean(x, axes, dtype=compute, keepdims=True, where=where)
        sq = _abs2(lax.sub(x, center))
        if where is None:
            count = _r._axis_size(shape, axes, real)
        else:
            mask = _u.broadcast_to(where, shape)
            count = _r.sum(mask, axes, dtype=real, keepdims=keepdims)
    total = _r.sum(sq, axes, dtype=real, keepdims=keepdims, where=where)
    dof = _ufuncs.subtract(count, ddof)
    dof = _u.convert(dof, real)
    if skip_nans:
        variance = _u.where(
            lax.le(dof, _u.scalar_like(0, dof)), _u.scalar_like(np.nan, total), lax.div(total, dof)
        )
    else:
        # NumPy's rule: a non-positive count divides by zero (inf, or NaN for 0 / 0).
        variance = lax.div(total, lax.max(dof, _u.scalar_like(0, dof)))
    return _u.convert(lax.sqrt(variance) if sqrt else variance, result)


def var(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = None,
    correction: Any = None,
) -> Any:
    """The variance of the elements of `a` over `axis`: `sum(|a - mean|**2) / (n - ddof)`.

    Args:
      a: an array.
      axis: None (all axes), an int or a tuple of ints.
      dtype: the result dtype; by default the default float for bools and integers,
        the real part's type for complex `a`, else `a`'s dtype.
      out: not supported.
      ddof: "delta degrees of freedom", subtracted from the count `n`.
      keepdims: keep the reduced axes with size 1.
      where: a bool mask broadcast against `a`; the variance of the elements where it is true.
      correction: the Array API's name for `ddof` (give one of them).

    Raises:
      ValueError: both `ddof` and `correction` are given, or a real `dtype` for complex `a`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.var(jnp.array([1., 2., 3., 4.]), ddof=1)
      Array(1.6666666, dtype=float32)
    """
    return _variance(
        "var", a, axis, dtype, out, ddof, keepdims, where, correction, skip_nans=False, sqrt=False
    )


def std(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = None,
    correction: Any = None,
) -> Any:
    """The standard deviation (square root of `var`; same arguments).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.std(jnp.array([1., 3.]))
      Array(1., dtype=float32)
    """
    return _variance(
        "std", a, axis, dtype, out, ddof, keepdims, where, correction, skip_nans=False, sqrt=True
    )


def nanvar(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: Any = None,
    *,
    correction: Any = None,
) -> Any:
    """`var` of the elements that are not NaN (NaN where fewer than `ddof + 1` remain).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanvar(jnp.array([1., jnp.nan, 3.]))
      Array(1., dtype=float32)
    """
    return _variance(
        "nanvar", a, axis, dtype, out, ddof, keepdims, where, correction, skip_nans=True, sqrt=False
    )


def nanstd(
    a: Any,
    axis: Any = None,
    dtype: Any = None,
    out: Any = None,
    ddof: int = 0,
    keepdims: bool = False,
    where: Any = None,
    *,
    correction: Any = None,
) -> Any:
    """`std` of the elements that are not NaN (same arguments as `nanvar`).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanstd(jnp.array([1., jnp.nan, 3.]))
      Array(1., dtype=float32)
    """
    return _variance(
        "nanstd", a, axis, dtype, out, ddof, keepdims, where, correction, skip_nans=True, sqrt=True
    )


# ---------------------------------------------------------------------------
# average


def average(
    a: Any,
    axis: Any = None,
    weights: Any = None,
    returned: bool = False,
    keepdims: bool = False,
) -> Any:
    """The weighted mean of `a` over `axis`: `sum(a * weights) / sum(weights)`.

    Args:
      a: an array.
      axis: None (all axes), an int or a tuple of ints.
      weights: None (the plain mean), an array of `a`'s shape, or one whose shape is
        that of `a` over `axis` (e.g. 1-D for one axis).
      returned: also return the sum of the weights, broadcast to the result's shape.
      keepdims: keep the reduced axes with size 1.

    Returns:
      The average, or `(average, sum_of_weights)` if `returned`.

    Raises:
      ValueError: `weights` of another shape without `axis`, or not matching `axis`.
      TypeError: weights of another shape that are not 1-D for a single axis.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.average(jnp.array([1., 2., 4.]), weights=jnp.array([1., 1., 2.]))
      Array(2.75, dtype=float32)
    """
    _u.check_arraylike("average", a)
    shape = _u.shape(a)
    axes = _u.reduction_axes(axis, len(shape))
    if weights is None:
        avg = _r.mean(a, axes, keepdims=keepdims)
        count = _r._axis_size(shape, axes, _u.dtype(avg))
        weights_sum = _u.broadcast_to(count, _u.shape(avg))
    else:
        _u.check_arraylike("average", weights)
        a, weights = _u.promote_dtypes_inexact(a, weights)
        a, weights = _u.as_operand(a), _u.as_operand(weights)
        w_shape = _u.shape(weights)
        if not sd.definitely_equal_shape(w_shape, shape):
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if isinstance(axis, int | np.integer) and len(w_shape) != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            expected = tuple(shape[ax] for ax in axes)
            if not sd.definitely_equal_shape(w_shape, expected):
                raise ValueError(
                    f"Shape of weights {w_shape} is not compatible with the axes {axes} of an "
                    f"array of shape {shape} (expected {expected})."
                )
            order = sorted(range(len(axes)), key=lambda i: axes[i])
            weights = _shape_ops.transpose(weights, tuple(order))
            weights = _shape_ops.broadcast_in_dim(weights, shape, tuple(sorted(axes)))
        weights_sum = _r.sum(weights, axes, keepdims=keepdims)
        avg = lax.div(_r.sum(lax.mul(a, weights), axes, keepdims=keepdims), weights_sum)
    if returned:
        return avg, _u.broadcast_to(weights_sum, _u.shape(avg))
    return avg


# ---------------------------------------------------------------------------
# quantile, percentile, median

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _flatten_axes(x: Any, axes: tuple[int, ...]) -> Any:
    """`x` with the non-reduced axes first and the reduced ones flattened into the last."""
    shape = _u.shape(x)
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    x = _shape_ops.transpose(x, kept + axes)
    n = sd.shape_size([shape[i] for i in axes])
    return _shape_ops.reshape(x, tuple(shape[i] for i in kept) + (n,))


def _lerp(a: Any, b: Any, t: Any) -> Any:
    # Exact at both ends: from `a` for t < 1/2, from `b` above (NumPy's formula).
    diff = lax.sub(b, a)
    low = lax.add(a, lax.mul(diff, t))
    high = lax.sub(b, lax.mul(diff, lax.sub(_u.scalar_like(1, t), t)))
    return lax.select_n(lax.ge(t, _u.scalar_like(0.5, t)), low, high)


def _quantile(
    name: str,
    a: Any,
    q: Any,
    axis: Any,
    method: str,
    keepdims: bool,
    skip_nans: bool,
    weights: Any = None,
) -> Any:
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {list(_METHODS)}, got {method!r}")
    _u.check_arraylike(name, a, q)
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"{name}: only method='inverted_cdf' supports weights, got {method!r}")
    if weights is not None:
        _u.check_arraylike(name, weights)
    if _u.is_complex(a):  # JAX's error type and words, whichever quantile function
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    if _u.is_complex(q):
        raise TypeError(f"{name}: q must be real, got dtype {_u.dtype(q)}")
    a, q = (_u.as_operand(v) for v in _u.promote_dtypes_inexact(a, q))
    q_ndim = _u.ndim(q)
    if q_ndim > 1:
        raise ValueError(f"q must be a scalar or 1-D, got shape {_u.shape(q)}")
    shape = _u.shape(a)
    axes = _u.reduction_axes(axis, len(shape))
    x = _flatten_axes(a, axes)
    batch = _u.shape(x)[:-1]
    n = _u.shape(x)[-1]
    nb = len(batch)
    dt = _u.dtype(x)
    idx_dt = np.dtype(np.int32)
    qs = q if q_ndim else _shape_ops.expand_dims(q, (0,))
    nq = _u.shape(qs)[0]
    out_shape = batch + (nq,)
    qb = _shape_ops.broadcast_in_dim(qs, out_shape, (nb,))
    nan = isnan(x)
    if skip_nans:
        count = _r.sum(lax.bitwise_not(nan), axis=nb, dtype=idx_dt, keepdims=True)
        count = _u.broadcast_to(count, out_shape)
        invalid = lax.eq(count, _u.scalar_like(0, count))
    else:
        count = _r._axis_size((n,), (0,), idx_dt)
        invalid = _shape_ops.expand_dims(_r.any(nan, axis=nb), (nb,))
    last = lax.max(lax.sub(count, _u.scalar_like(1, count)), _u.scalar_like(0, count))
    if type(n) is int and n == 0:
        # No order statistics to gather from: NaN, as the mean of nothing is.
        result = _shape_ops.full(out_shape, np.nan, dt)
    elif method == "inverted_cdf":
        w = _shape_ops.full_like(x, 1) if weights is None else _u.convert(weights, dt)
        w = _flatten_axes(_u.broadcast_to(w, shape), axes) if weights is not None else w
        if skip_nans:
            w = lax.select_n(nan, w, _shape_ops.full_like(w, 0))
        xs, ws = _sorting.sort((x, w), dimension=nb, num_keys=1)
        cdf = _cumulative.cumsum(ws, axis=nb)
        cdf = lax.div(cdf, _shape_ops.slice_in_dim(cdf, n - 1, n, axis=nb))
        # The first element whose cumulative weight reaches q: count those below it.
        below = lax.lt(_shape_ops.expand_dims(cdf, (nb,)), _shape_ops.expand_dims(qb, (nb + 1,)))
        idx = _r.sum(below, axis=nb + 1, dtype=idx_dt)
        result = take_along_axis(xs, lax.min(idx, last), -1, mode="clip")
    else:
        xs = _sorting.sort(x, dimension=nb)
        last = _u.convert(last, dt)
        pos = lax.mul(qb, last)
        low = lax.min(lax.max(lax.floor(pos), _u.scalar_like(0, pos)), last)
        high = lax.min(lax.max(lax.ceil(pos), _u.scalar_like(0, pos)), last)

        def at(i: Any) -> Any:
            return take_along_axis(xs, _u.convert(i, idx_dt), -1, mode="clip")

        if method == "lower":
            result = at(low)
        elif method == "higher":
            result = at(high)
        elif method == "nearest":
            result = at(lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN))
        elif method == "midpoint":
            result = lax.mul(lax.add(at(low), at(high)), _u.scalar_like(0.5, pos))
        else:
            result = _lerp(at(low), at(high), lax.sub(pos, low))
    result = _u.where(invalid, _u.scalar_like(np.nan, result), result)
    # The quantile axis goes first, as in NumPy.
    result = _shape_ops.transpose(result, (nb, *range(nb)))
    if keepdims:
        full = tuple(1 if i in axes else d for i, d in enumerate(shape))
        result = _shape_ops.reshape(result, (nq, *full))
    if not q_ndim:
        result = _shape_ops.squeeze(result, (0,))
    return result


def _check_unsupported(name: str, out: Any, overwrite_input: bool) -> None:
    _r._check_out(out, name)
    if overwrite_input:
        raise ValueError(
            f"jnp.{name} does not support overwrite_input=True (arrays are immutable)."
        )


def quantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    """The `q`-th quantiles of the elements of `a` over `axis`.

    Args:
      a: a real array.
      q: a scalar or 1-D array of probabilities in [0, 1].
      axis: None (all axes), an int or a tuple of ints.
      out: not supported.
      overwrite_input: must be False.
      method: "linear" (default), "lower", "higher", "midpoint", "nearest" or
        "inverted_cdf".
      keepdims: keep the reduced axes with size 1.
      weights: weights broadcast against `a` (only with method="inverted_cdf").

    Returns:
      An inexact array; its first axis runs over `q` when `q` is 1-D. NaN where a
      slice holds a NaN.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.quantile(jnp.arange(10.), jnp.array([0.25, 0.5]))
      Array([2.25, 4.5 ], dtype=float32)
    """
    _check_unsupported("quantile", out, overwrite_input)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    """`quantile` of the elements that are not NaN (NaN for an all-NaN slice).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanquantile(jnp.array([1., jnp.nan, 3.]), 0.5)
      Array(2., dtype=float32)
    """
    _check_unsupported("nanquantile", out, overwrite_input)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def _percent(q: Any) -> Any:
    return _ufuncs.true_divide(q, 100)


@_os.replicated_inside
def percentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
    out_sharding: Any = None,
) -> Any:
    """`quantile` with `q` in percent (in [0, 100]).

    Args:
      a, q, axis, out, overwrite_input, method, keepdims, weights: as `quantile`'s,
        with `q` in percent.
      out_sharding: the result's sharding (explicit mode): computed on replicated
        operands, then resharded, as in JAX.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.percentile(jnp.arange(5.), 50)
      Array(2., dtype=float32)
    """
    _check_unsupported("percentile", out, overwrite_input)
    _u.check_arraylike("percentile", q)
    return _quantile("percentile", a, _percent(q), axis, method, keepdims, False, weights)


def nanpercentile(
    a: Any,
    q: Any,
    axis: Any = None,
    out: Any = None,
    overwrite_input: bool = False,
    method: str = "linear",
    keepdims: bool = False,
    *,
    weights: Any = None,
) -> Any:
    """`percentile` of the elements that are not NaN.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanpercentile(jnp.array([1., jnp.nan, 3.]), 100)
      Array(3., dtype=float32)
    """
    _check_unsupported("nanpercentile", out, overwrite_input)
    _u.check_arraylike("nanpercentile", q)
    return _quantile("nanpercentile", a, _percent(q), axis, method, keepdims, True, weights)


def median(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    """The median of the elements of `a` over `axis` (the mean of the two middle ones
    for an even count; NaN where a slice holds a NaN).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.median(jnp.array([[1, 3, 2], [4, 6, 5]]), axis=1)
      Array([2., 5.], dtype=float32)
    """
    _check_unsupported("median", out, overwrite_input)
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanmedian(
    a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False, keepdims: bool = False
) -> Any:
    """`median` of the elements that are not NaN (NaN for an all-NaN slice).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.nanmedian(jnp.array([1., jnp.nan, 2.]))
      Array(1.5, dtype=float32)
    """
    _check_unsupported("nanmedian", out, overwrite_input)
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


# ---------------------------------------------------------------------------
# cov, corrcoef


def _observations(name: str, x: Any, rowvar: bool) -> Any:
    """`x` as a 2-D array of variables (rows) by observations (columns)."""
    _u.check_arraylike(name, x)
    x = _u.as_operand(x)
    nd = _u.ndim(x)
    if nd > 2:
        raise ValueError(f"{name}: m has more than 2 dimensions (shape {_u.shape(x)})")
    if nd < 2:
        x = _shape_ops.reshape(x, (1, _u.shape(x)[0]) if nd else (1, 1))
    if not rowvar and _u.shape(x)[0] != 1:
        x = _shape_ops.transpose(x, (1, 0))
    return x


def cov(
    m: Any,
    y: Any = None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights: Any = None,
    aweights: Any = None,
) -> Any:
    """The covariance matrix of the variables in `m` (and `y`).

    Args:
      m: a 1-D or 2-D array: each row a variable, each column an observation
        (the other way round if `rowvar` is False).
      y: more variables, laid out as `m`.
      rowvar: whether rows (True) or columns hold the variables.
      bias: normalise by `N` instead of `N - 1` (ignored when `ddof` is given).
      ddof: subtracted from the number of observations (default `1 - bias`).
      fweights: integer frequency weights of the observations (1-D).
      aweights: observation ("analytic") weights (1-D).

    Returns:
      The `(n, n)` covariance matrix of the `n` variables, squeezed (a scalar for one).

    Raises:
      ValueError: `m` of rank > 2, or weights that are not 1-D of the observations' length.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.cov(jnp.array([[0., 1., 2.], [2., 1., 0.]]))
      Array([[ 1., -1.],
             [-1.,  1.]], dtype=float32)
    """
    x = _observations("cov", m, rowvar)
    if y is not None:
        x = _shape_ops.concatenate(
            [_u.as_operand(v) for v in _u.promote_dtypes(x, _observations("cov", y, rowvar))], 0
        )
    (x,) = _u.promote_dtypes_inexact(x)
    x = _u.as_operand(x)
    n_vars, n_obs = _u.shape(x)
    if ddof is None:
        ddof = 0 if bias else 1
    weights = None
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        _u.check_arraylike("cov", w)
        if _u.shape(w) != (n_obs,):
            raise ValueError(f"cov: {name} must be 1-D of length {n_obs}, got shape {_u.shape(w)}")
        if name == "fweights" and not _u.issubdtype_of(w, np.integer):
            raise TypeError("cov: fweights must be integer")
        w = _u.as_operand(w)
        weights = w if weights is None else _ufuncs.multiply(weights, w)
    avg, weights_sum = average(x, axis=1, weights=weights, returned=True)
    if n_vars:
        weights_sum = _shape_ops.reshape(_shape_ops.slice_in_dim(weights_sum, 0, 1), ())
    if weights is None:
        norm: Any = n_obs - ddof
    elif ddof == 0:
        norm = weights_sum
    elif aweights is None:
        norm = _ufuncs.subtract(weights_sum, ddof)
    else:
        extra = _ufuncs.true_divide(_r.sum(_ufuncs.multiply(weights, aweights)), weights_sum)
        norm = _ufuncs.subtract(weights_sum, _ufuncs.multiply(ddof, extra))
    centered = lax.sub(x, _shape_ops.expand_dims(avg, (1,)))
    weighted = centered if weights is None else _ufuncs.multiply(centered, weights)
    conj = _complex.conj(weighted) if _u.is_complex(weighted) else weighted
    c = _ufuncs.true_divide(_products.matmul(centered, _shape_ops.transpose(conj, (1, 0))), norm)
    squeezed = tuple(i for i, d in enumerate(_u.shape(c)) if d == 1)
    return _shape_ops.squeeze(c, squeezed) if squeezed else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """The Pearson correlation coefficients of the variables in `x` (and `y`).

    Arguments are those of `cov`; the result is `cov` normalised by the standard
    deviations, clipped to [-1, 1].

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.corrcoef(jnp.array([[0., 1., 2.], [2., 1.5, 0.]]))[0, 1]
      Array(-0.96076894, dtype=float32)
    """
    c = cov(x, y, rowvar)
    if _u.ndim(c) == 0:
        return lax.div(c, c)  # NumPy's answer for a single variable (1, or NaN)
    d = diagonal(c)
    if _u.is_complex(d):
        d = _complex.real(d)
    std = lax.sqrt(d)
    n = _u.shape(std)[0]
    c = _ufuncs.true_divide(c, _shape_ops.broadcast_in_dim(std, (n, n), (0,)))
    c = _ufuncs.true_divide(c, _shape_ops.broadcast_in_dim(std, (n, n), (1,)))
    one = _u.scalar_like(1, d)

    def clip(v: Any) -> Any:
        return lax.clamp(lax.neg(one), v, one)

    if _u.is_complex(c):
        return _complex.complex(clip(_complex.real(c)), clip(_complex.imag(c)))
    return clip(c)


__all__ = [
    "average",
    "corrcoef",
    "cov",
    "median",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nanstd",
    "nanvar",
    "percentile",
    "quantile",
    "std",
    "var",
]
