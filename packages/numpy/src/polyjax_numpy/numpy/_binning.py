"""Locating values among sorted edges: `digitize`, `bincount`, `histogram*`, `interp`.

All of them find, for each value, its place among sorted edges with
`jnp.searchsorted` (a binary search; NaNs sort after every number, as in
NumPy), then either count into the bins with a `scatter_add` or interpolate
between neighbouring points.

Shapes must be static: the number of histogram bins is a Python int, and
`bincount` without `length=` reads the largest value, so under `jit` it raises
the concretization error asking for `length`. As in JAX:

- `bincount` clips negative values to bin 0 and drops values `>= length`;
- histogram counts have the dtype of the weights (by default ones of the
  sample's inexact dtype); values outside the range (and NaNs) are not
  counted, and the last bin includes its right edge;
- `interp` returns `fp[0]`/`fp[-1]` outside `xp` unless `left`/`right` say
  otherwise (a value, or "extrapolate" for the end segment's line).
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops, _slicing, _sorting
from polyjax_numpy.numpy import _cumulative, _manipulation, _ufuncs
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _reductions as _r
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray
from polyjax_numpy.numpy._indexing import take_along_axis
from polyjax_numpy.numpy._sorting import searchsorted

_INDEX = np.dtype(np.int32)


def _last(x: Any) -> Any:
    n = _u.shape(x)[0]
    return _shape_ops.reshape(_shape_ops.slice_in_dim(x, n - 1, n), ())


def _first(x: Any) -> Any:
    return _shape_ops.reshape(_shape_ops.slice_in_dim(x, 0, 1), ())


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index of the bin each element of `x` falls in.

    With increasing `bins`, index `i` means `bins[i - 1] <= x < bins[i]`
    (`bins[i - 1] < x <= bins[i]` if `right`); 0 is below the first edge and
    `len(bins)` above the last. Decreasing `bins` count from the other end, as in NumPy.

    Args:
      x: an array.
      bins: a 1-D monotonic array of edges.
      right: whether bins include their right edge instead of their left one.
      method: the search method of `jnp.searchsorted` (None for its default).

    Raises:
      ValueError: `bins` is not 1-D, or `method` is unknown.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.digitize(jnp.array([0.5, 1.0, 2.5]), jnp.array([1.0, 2.0]))
      Array([0, 1, 2], dtype=int32)
    """
    _u.check_arraylike("digitize", x, bins)
    if _u.ndim(bins) != 1:
        raise ValueError(
            f"digitize: bins must be a 1-dimensional array, got shape {_u.shape(bins)}"
        )
    x, bins = (_u.as_operand(v) for v in _u.promote_dtypes(x, bins))
    n = _u.shape(bins)[0]
    if n == 0:
        return _shape_ops.full(_u.shape(x), 0, _INDEX)
    side = "left" if right else "right"
    how = {} if method is None else {"method": method}
    increasing = searchsorted(bins, x, side, **how)
    decreasing = lax.sub(
        _u.scalar_like(n, increasing), searchsorted(_shape_ops.rev(bins, (0,)), x, side, **how)
    )
    # jnp's comparison: complex bins are ordered lexicographically, as in JAX.
    return _u.where(_ufuncs.greater_equal(_last(bins), _first(bins)), increasing, decreasing)


# ---------------------------------------------------------------------------
# bincount


def _scatter_add(size: int, indices: Any, updates: Any) -> Any:
    """A length-`size` vector of `updates` summed at `indices` (out-of-range ones dropped)."""
    operand = _shape_ops.full((size,), 0, _u.dtype(updates))
    dnums = _slicing.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    idx = _shape_ops.expand_dims(indices, (1,))
    return _slicing.scatter_add(operand, idx, updates, dnums, mode="drop")


@_os.replicated_inside(replicated_only=True)
def bincount(
    x: Any,
    weights: Any = None,
    minlength: int = 0,
    *,
    length: int | None = None,
    out_sharding: Any = None,
) -> Any:
    """The number of occurrences (or summed weights) of each value of a 1-D integer array.

    Args:
      x: a 1-D integer array; negative values count as 0.
      weights: None (count), or an array of `x`'s shape to sum per value.
      minlength: the least length of the result.
      length: the length of the result (values from `length` on are dropped); needed
        under `jit`, where the largest value of `x` is not known.
      out_sharding: the result's sharding (explicit mode): it must split nothing, as
        in JAX; computed on replicated operands.

    Returns:
      A vector of length `length`, or `max(x) + 1` (at least `minlength`): default
      integers, or the weights' dtype.

    Raises:
      TypeError: `x` is not integer.
      ValueError: `x` is not 1-D, or `weights` differs in shape.
      ConcretizationTypeError: `length` is None and `x` is traced.
      ShardingTypeError: an `out_sharding` that splits the result.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.bincount(jnp.array([1, 1, 3]), minlength=5)
      Array([0, 2, 0, 1, 0], dtype=int32)
    """
    _u.check_arraylike("bincount", x)
    if not _u.issubdtype_of(x, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type, got {_u.dtype(x)}")
    if _u.ndim(x) != 1:
        raise ValueError(
            f"bincount: only 1-dimensional input is supported, got shape {_u.shape(x)}"
        )
    minlength = concrete_or_error(
        operator.index,
        minlength,
        "The error occurred because of argument 'minlength' of jnp.bincount.",
    )
    if length is None:
        if _u.shape(x)[0] == 0:
            length = minlength
        else:
            largest = concrete_or_error(
                operator.index,
                _r.max(x),
                "The error occurred because of argument 'length' of jnp.bincount: the length of "
                "the result depends on the largest value of x; pass length= statically.",
            )
            length = builtins.max(minlength, largest + 1)
    else:
        length = concrete_or_error(
            operator.index,
            length,
            "The error occurred because of argument 'length' of jnp.bincount.",
        )
    if weights is None:
        updates = _shape_ops.full(_u.shape(x), 1, dtypes.default_int_dtype())
    else:
        _u.check_arraylike("bincount", weights)
        if _u.shape(weights) != _u.shape(x):
            raise ValueError(
                f"bincount: shape of weights {_u.shape(weights)} must match shape of x "
                f"{_u.shape(x)}"
            )
        (updates,) = _u.promote_dtypes_numeric(_u.as_operand(weights))
        updates = _u.as_operand(updates)
    indices = lax.max(_u.as_operand(x), _u.scalar_like(0, x))
    return _scatter_add(length, indices, updates)


# ---------------------------------------------------------------------------
# Histograms


def _bin_count(bins: Any, what: str) -> int:
    return concrete_or_error(
        operator.index, bins, f"The error occurred because of argument '{what}' of jnp.histogram."
    )


def _edges(a: Any, bins: Any, range: Any, dtype: Any) -> Any:
    """The bin edges of the flattened `a`: `bins` itself if an array, else equal widths."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` are not supported")
    if isinstance(bins, list | tuple):
        bins = np.asarray(bins)  # edges given as a sequence (NumPy accepts them)
    if not isinstance(bins, int | np.integer) and _u.ndim(bins) == 1:
        _u.check_arraylike("histogram", bins)
        return asarray(bins, dtype)
    n_bins = _bin_count(bins, "bins")
    if n_bins < 1:
        raise ValueError(f"`bins` must be positive, when an integer, got {n_bins}")
    if range is None:
        if _u.shape(a)[0] == 0:
            lo, hi = np.asarray(0, dtype)[()], np.asarray(1, dtype)[()]
        else:
            lo, hi = _r.min(a), _r.max(a)
    else:
        if len(range) != 2:
            raise ValueError(f"range must be a pair (min, max), got {range!r}")
        lo, hi = range
    lo, hi = _u.convert(_u.as_operand(lo), dtype), _u.convert(_u.as_operand(hi), dtype)
    # NumPy widens an empty range to one of width 1.
    same = lax.eq(lo, hi)
    lo = _u.where(same, lax.sub(lo, _u.scalar_like(0.5, lo)), lo)
    hi = _u.where(same, lax.add(hi, _u.scalar_like(0.5, hi)), hi)
    step = lax.div(lax.sub(hi, lo), _u.scalar_like(n_bins, lo))
    inner = lax.add(lax.mul(_shape_ops.iota(dtype, n_bins), step), lo)
    return _shape_ops.concatenate([inner, _shape_ops.reshape(hi, (1,))], 0)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None) -> Any:  # noqa: A002
    """The edges of the bins `histogram` would use.

    Args:
      a: the sample (flattened).
      bins: an int (that many equal-width bins over `range`) or a 1-D array of edges.
      range: `(min, max)` of the bins; by default that of `a`.
      weights: ignored (accepted for NumPy compatibility).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.histogram_bin_edges(jnp.array([1., 2., 5.]), bins=4)
      Array([1., 2., 3., 4., 5.], dtype=float32)
    """
    del weights
    _u.check_arraylike("histogram_bin_edges", a)
    a = _manipulation.ravel(_u.as_operand(a))
    dtype = dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(_u.dtype(a)))
    return _edges(a, bins, range, dtype)


def _bin_indices(values: Any, edges: Any) -> Any:
    """1 + the bin of each value (0 below the range, `len(edges)` above it or NaN)."""
    idx = searchsorted(edges, values, "right")
    at_end = lax.eq(values, _u.convert(_last(edges), _u.dtype(values)))
    return _u.where(at_end, _u.scalar_like(_u.shape(edges)[0] - 1, idx), idx)


def histogram(
    a: Any,
    bins: Any = 10,
    range: Any = None,  # noqa: A002 - NumPy's name
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any]:
    """The histogram of the flattened `a`.

    Args:
      a: the sample.
      bins: an int (equal-width bins over `range`) or a 1-D array of edges.
      range: `(min, max)` of the bins; by default that of `a`.
      weights: weights broadcast to `a`'s shape, summed per bin (by default ones).
      density: normalise so the histogram integrates to 1 over the range.

    Returns:
      `(counts, bin_edges)`; `counts` has the weights' dtype (inexact by default).

    Raises:
      ValueError: `weights` that do not broadcast to `a`'s shape.

    Example:
      >>> import polyjax.numpy as jnp
      >>> counts, edges = jnp.histogram(jnp.array([1., 2., 2., 5.]), bins=2)
      >>> counts
      Array([3., 1.], dtype=float32)
    """
    _u.check_arraylike("histogram", a)
    a = _u.as_operand(a)
    (a,) = _u.promote_dtypes_inexact(a)
    a = _u.as_operand(a)
    if weights is not None:
        _u.check_arraylike("histogram", weights)
        try:
            weights = _u.broadcast_to(_u.as_operand(weights), _u.shape(a))
        except ValueError:
            raise ValueError(
                f"histogram: weights of shape {_u.shape(weights)} do not broadcast to the "
                f"shape {_u.shape(a)} of a."
            ) from None
        weights = _manipulation.ravel(weights)
    a = _manipulation.ravel(a)
    edges = _edges(a, bins, range, _u.dtype(a))
    if weights is None:
        weights = _shape_ops.full_like(a, 1)
    idx = _bin_indices(a, edges)
    n_edges = _u.shape(edges)[0]
    counts = _scatter_add(n_edges + 1, idx, weights)
    counts = _shape_ops.slice_in_dim(counts, 1, n_edges)
    if density:
        counts = _density(counts, [edges])
    return counts, edges


def _density(counts: Any, edges: list[Any]) -> Any:
    """`counts` divided by their total and by each bin's width (area, volume ...)."""
    (counts,) = _u.promote_dtypes_inexact(counts)
    total = _r.sum(counts)
    nd = len(edges)
    for axis, e in enumerate(edges):
        width = _u.convert(_cumulative.diff(e), _u.dtype(counts))
        shape = [1] * nd
        shape[axis] = _u.shape(width)[0]
        counts = lax.div(counts, _shape_ops.reshape(width, tuple(shape)))
    return lax.div(counts, total)


def histogramdd(
    sample: Any,
    bins: Any = 10,
    range: Sequence[Any] | None = None,  # noqa: A002 - NumPy's name
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, list[Any]]:
    """The multidimensional histogram of `N` points in `D` dimensions.

    Args:
      sample: an `(N, D)` array of points (or a 1-D array of `N` values).
      bins: an int for every dimension, or a length-`D` sequence of ints or 1-D edge arrays.
      range: None, or a length-`D` sequence of `(min, max)` pairs (or None entries).
      weights: an `(N,)` array of weights (by default ones).
      density: normalise so the histogram integrates to 1.

    Returns:
      `(hist, edges)`: the `D`-dimensional counts and the list of `D` edge arrays.

    Raises:
      ValueError: `bins` or `range` of the wrong length, or `weights` of the wrong shape.

    Example:
      >>> import polyjax.numpy as jnp
      >>> hist, edges = jnp.histogramdd(jnp.array([[0., 0.], [1., 1.], [1., 0.]]), bins=2)
      >>> hist
      Array([[1., 0.],
             [1., 1.]], dtype=float32)
    """
    _u.check_arraylike("histogramdd", sample)
    (sample,) = _u.promote_dtypes_inexact(_u.as_operand(sample))
    sample = _u.as_operand(sample)
    if _u.ndim(sample) == 1:
        sample = _shape_ops.expand_dims(sample, (1,))
    if _u.ndim(sample) != 2:
        raise ValueError(
            f"histogramdd: sample must be 1-D or 2-D (N, D), got shape {_u.shape(sample)}"
        )
    n, d = _u.shape(sample)
    if isinstance(bins, int | np.integer):
        bins = [bins] * d
    if len(bins) != d:
        raise ValueError(
            f"The dimension of bins ({len(bins)}) must equal the dimension of the sample ({d})."
        )
    if range is None:
        range = [None] * d
    if len(range) != d:
        raise ValueError(
            f"range argument must have one entry per dimension ({d}), got {len(range)}"
        )
    dtype = _u.dtype(sample)
    if weights is None:
        weights = _shape_ops.full((n,), 1, dtype)
    else:
        _u.check_arraylike("histogramdd", weights)
        if _u.shape(weights) != (n,):
            raise ValueError(
                f"histogramdd: weights must have shape ({n},), got {_u.shape(weights)}"
            )
        weights = _u.as_operand(weights)
    edges, flat, sizes = [], None, []
    for axis in builtins.range(d):
        column = _shape_ops.reshape(_shape_ops.slice_in_dim(sample, axis, axis + 1, axis=1), (n,))
        e = _edges(column, bins[axis], range[axis], dtype)
        edges.append(e)
        idx = _bin_indices(column, e)
        size = _u.shape(e)[0] + 1
        flat = idx if flat is None else lax.add(lax.mul(flat, _u.scalar_like(size, flat)), idx)
        sizes.append(size)
    total = int(np.prod(sizes))
    hist = _shape_ops.reshape(_scatter_add(total, flat, weights), tuple(sizes))
    for axis, size in enumerate(sizes):
        hist = _shape_ops.slice_in_dim(hist, 1, size - 1, axis=axis)
    if density:
        hist = _density(hist, edges)
    return hist, edges


def histogram2d(
    x: Any,
    y: Any,
    bins: Any = 10,
    range: Sequence[Any] | None = None,  # noqa: A002 - NumPy's name
    weights: Any = None,
    density: bool | None = None,
) -> tuple[Any, Any, Any]:
    """The 2-D histogram of the points `(x[i], y[i])`.

    Args:
      x: the first coordinates (1-D).
      y: the second coordinates (1-D, `x`'s length).
      bins: an int, a pair of ints, a 1-D edge array for both axes, or a pair of them.
      range: None, or `[(xmin, xmax), (ymin, ymax)]`.
      weights: per-point weights.
      density: normalise so the histogram integrates to 1.

    Returns:
      `(hist, x_edges, y_edges)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> hist, xe, ye = jnp.histogram2d(jnp.array([0., 1.]), jnp.array([0., 1.]), bins=2)
      >>> hist
      Array([[1., 0.],
             [0., 1.]], dtype=float32)
    """
    _u.check_arraylike("histogram2d", x, y)
    if _u.ndim(x) != 1 or _u.shape(x) != _u.shape(y):
        raise ValueError(
            f"histogram2d: x and y must be 1-D of one length, got shapes {_u.shape(x)} and "
            f"{_u.shape(y)}"
        )
    x, y = (_u.as_operand(v) for v in _u.promote_dtypes_inexact(x, y))
    if not isinstance(bins, int | np.integer):
        if not isinstance(bins, list | tuple) or len(bins) != 2:
            bins = [bins, bins]  # one edge array for both axes
    sample = _shape_ops.concatenate(
        [_shape_ops.expand_dims(x, (1,)), _shape_ops.expand_dims(y, (1,))], 1
    )
    hist, (x_edges, y_edges) = histogramdd(sample, bins, range, weights, density)
    return hist, x_edges, y_edges


# ---------------------------------------------------------------------------
# interp


def interp(
    x: Any,
    xp: Any,
    fp: Any,
    left: Any = None,
    right: Any = None,
    period: Any = None,
) -> Any:
    """Piecewise-linear interpolation of the points `(xp, fp)` at `x`.

    Args:
      x: where to evaluate.
      xp: increasing 1-D sample points (any order if `period` is given).
      fp: the values at `xp` (1-D, same length).
      left: the value for `x < xp[0]`: a scalar, None (`fp[0]`) or "extrapolate".
      right: the value for `x > xp[-1]`: a scalar, None (`fp[-1]`) or "extrapolate".
      period: a period of the sample points (then `left` and `right` must be None).

    Raises:
      ValueError: `xp`/`fp` not 1-D of one length, or `left`/`right` with `period`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.interp(jnp.array([0.5, 3.]), jnp.array([0., 1., 2.]), jnp.array([0., 10., 20.]))
      Array([ 5., 20.], dtype=float32)
    """
    _u.check_arraylike("interp", x, xp, fp)
    if _u.ndim(xp) != 1 or _u.ndim(fp) != 1 or _u.shape(xp) != _u.shape(fp):
        raise ValueError(
            f"xp and fp must be one-dimensional arrays of equal size, got shapes {_u.shape(xp)} "
            f"and {_u.shape(fp)}"
        )
    if _u.shape(xp)[0] == 0:
        raise ValueError("interp: xp and fp must not be empty")
    if _u.is_complex(x) or _u.is_complex(xp):  # JAX's error; fp may be complex
        raise ValueError("jnp.interp: complex x values not supported.")
    for name, value in (("left", left), ("right", right)):
        if isinstance(value, str) and value != "extrapolate":
            raise ValueError(f"{name} must be a scalar, None or 'extrapolate', got {value!r}")
    x, xp = (_u.as_operand(v) for v in _u.promote_dtypes_inexact(x, xp))
    (fp,) = _u.promote_dtypes_inexact(_u.as_operand(fp))
    fp = _u.as_operand(fp)
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right cannot be given together with period")
        period = _u.as_operand(_u.convert(_u.as_operand(period), _u.dtype(x)))
        period = lax.abs(period)
        x, xp = _ufuncs.remainder(x, period), _ufuncs.remainder(xp, period)
        xp, fp = _sorting.sort((xp, fp), dimension=0, num_keys=1)
        xp = _shape_ops.concatenate(
            [_shape_ops.reshape(lax.sub(_last(xp), period), (1,)), xp,
             _shape_ops.reshape(lax.add(_first(xp), period), (1,))], 0
        )  # fmt: skip
        fp = _shape_ops.concatenate(
            [_shape_ops.reshape(_last(fp), (1,)), fp, _shape_ops.reshape(_first(fp), (1,))], 0
        )
    n = _u.shape(xp)[0]
    if n == 1:
        return _u.broadcast_to(_u.convert(_first(fp), _u.dtype(fp)), _u.shape(x))
    i = lax.clamp(np.int32(1), searchsorted(xp, x, "right"), np.int32(n - 1))
    flat_i = _manipulation.ravel(i)
    below = lax.sub(flat_i, _u.scalar_like(1, flat_i))

    def at(v: Any, idx: Any) -> Any:
        return _shape_ops.reshape(take_along_axis(v, idx, 0, mode="clip"), _u.shape(x))

    x0, x1 = at(xp, below), at(xp, flat_i)
    f0, f1 = at(fp, below), at(fp, flat_i)
    dx = lax.sub(x1, x0)
    # Repeated sample points: take the left value rather than divide by zero.
    flat_step = lax.le(lax.abs(dx), _u.scalar_like(np.finfo(_u.dtype(dx)).tiny, dx))
    safe_dx = lax.select_n(flat_step, dx, _shape_ops.full_like(dx, 1))
    slope_t = lax.div(lax.sub(x, x0), safe_dx)
    f = _ufuncs.add(f0, _ufuncs.multiply(slope_t, _ufuncs.subtract(f1, f0)))
    f = _u.where(flat_step, f0, f)
    if period is None:
        if left != "extrapolate":
            fill = _first(fp) if left is None else left
            f = _u.where(lax.lt(x, _first(xp)), fill, f)
        if right != "extrapolate":
            fill = _last(fp) if right is None else right
            f = _u.where(lax.gt(x, _last(xp)), fill, f)
    return f


__all__ = [
    "bincount",
    "digitize",
    "histogram",
    "histogram2d",
    "histogram_bin_edges",
    "histogramdd",
    "interp",
]
