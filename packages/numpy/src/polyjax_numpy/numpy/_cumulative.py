"""Running sums and differences of `jnp`: `cumsum`, `cumprod`, `diff`, `gradient`, `trapezoid`, ...

`cumsum`/`cumprod` (and the Array API's `cumulative_sum`/`cumulative_prod`) bind
lax's `cumsum`/`cumprod` primitives, so transformations see one op. Their dtype
rules are those of `sum`/`prod`: bools and narrow integers accumulate in the
default integer, 16-bit floats in float32 (cast back). `axis=None` flattens
the array first. The `nancum*` forms treat NaNs as the identity.

`diff`, `ediff1d`, `gradient` and `trapezoid` are static slices and
elementwise arithmetic along one axis: `diff` of bools is `!=` (as NumPy);
`gradient` uses second-order central differences inside and first-order
one-sided ones at the edges (`edge_order=1`), on uniform or coordinate spacing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.lax import _cumulative, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _manipulation, _products, _ufuncs
from polyjax_numpy.numpy import _reductions as _r
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._indexing import _slice_bounds

# ---------------------------------------------------------------------------
# cumsum, cumprod and their variants


def _cumulative_reduction(
    name: str,
    kind: str,
    a: Any,
    axis: Any,
    dtype: Any,
    skip_nans: bool = False,
    promote_integers: bool = False,
) -> Any:
    """`cumsum` & co. By default (JAX's rule) bools accumulate in the default integer type
    and other types in their own (`int8` stays `int8`, unlike `sum`); `promote_integers`
    (`cumulative_sum`'s rule) widens narrow integers to the default integer too."""
    _u.check_arraylike(name, a)
    a, axis = _manipulation.flat_or_axis(a, axis)
    aval = _u.aval(a)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, name)
        result_dtype = dtypes.canonicalize_dtype(dtype)
    elif promote_integers:
        result_dtype = dtypes.canonicalize_dtype(_r._promoted_integer_dtype(aval.dtype))
    elif aval.dtype == _r._BOOL:
        result_dtype = dtypes.default_int_dtype()
    else:
        result_dtype = aval.dtype
    if result_dtype == _r._BOOL:
        compute_dtype = dtypes.default_int_dtype()
    else:
        compute_dtype = _r._upcast_low_precision(result_dtype)
    if skip_nans:
        a = _r._nans_to_identity(kind, a)
    x = _u.convert(a, compute_dtype)
    fn = _cumulative.cumsum if kind == "sum" else _cumulative.cumprod
    return _u.convert(fn(x, axis), result_dtype)


def _make_cumulative(name: str, kind: str, skip_nans: bool) -> Callable[..., Any]:
    def method(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        _r._check_out(out, name)
        return _cumulative_reduction(name, kind, a, axis, dtype, skip_nans)

    what = "sum" if kind == "sum" else "product"
    nan_note = f" treating NaNs as {0 if kind == 'sum' else 1}" if skip_nans else ""
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""The cumulative {what} of `a` along `axis`{nan_note}.

    Args:
      a: an array.
      axis: the axis to accumulate along; None flattens `a` first.
      dtype: the accumulation and result dtype (by default as for `jnp.sum`/`jnp.prod`).
      out: not supported.

    Returns:
      An array of `a`'s shape (1-D if `axis` is None).
    """
    return method


cumsum = _make_cumulative("cumsum", "sum", False)
cumprod = _make_cumulative("cumprod", "prod", False)
nancumsum = _make_cumulative("nancumsum", "sum", True)
nancumprod = _make_cumulative("nancumprod", "prod", True)


def _array_api_cumulative(name: str, kind: str) -> Callable[..., Any]:
    def method(
        x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
    ) -> Any:
        _u.check_arraylike(name, x)
        nd = _u.ndim(x)
        if nd == 0:
            raise ValueError(
                f"{name}: the input must be non-scalar to take a cumulative {kind}, however a "
                "scalar value or scalar array was given."
            )
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"{name}: the input array has rank {nd}, however axis was not set to an "
                    "explicit value. The axis argument is only optional for one-dimensional arrays."
                )
            axis = 0
        axis = _u.canonicalize_axis(axis, nd)
        out = _cumulative_reduction(name, kind, x, axis, dtype, promote_integers=kind == "sum")
        if include_initial:
            config = [(0, 0, 0)] * nd
            config[axis] = (1, 0, 0)
            out = _shape_ops.pad(out, _u.scalar_like(0 if kind == "sum" else 1, out), config)
        return out

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"""The cumulative {kind} of `x` along `axis` (the Array API's form).

    Args:
      x: an array of rank >= 1.
      axis: the axis; may be omitted only for 1-D `x`.
      dtype: the accumulation and result dtype.
      include_initial: start with the identity ({0 if kind == "sum" else 1}), so the
        result is one longer along `axis`.

    Raises:
      ValueError: `x` is a scalar, or `axis` is None for `x` of rank > 1.
    """
    return method


cumulative_sum = _array_api_cumulative("cumulative_sum", "sum")
cumulative_prod = _array_api_cumulative("cumulative_prod", "prod")


# ---------------------------------------------------------------------------
# diff, ediff1d


def _slice(x: Any, start: int | None, stop: int | None, axis: int) -> Any:
    """`x[start:stop]` along `axis`, with Python's clamping of the bounds."""
    lo, hi, _, _ = _slice_bounds(slice(start, stop), _u.shape(x)[axis])  # sizes may be symbolic
    return _shape_ops.slice_in_dim(x, lo, hi, axis=axis)


def _concatenate(parts: list[Any], axis: int) -> Any:
    parts = [_u.as_operand(p) for p in _u.promote_dtypes(*parts)]
    return parts[0] if len(parts) == 1 else _shape_ops.concatenate(parts, axis)


def _edge(value: Any, like_shape: tuple, axis: int) -> Any:
    """`prepend`/`append` of `diff`: a scalar is broadcast to one slice along `axis`."""
    value = _u.as_operand(value)
    if _u.ndim(value) == 0:
        shape = list(like_shape)
        shape[axis] = 1
        return _u.broadcast_to(value, tuple(shape))
    return value


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The `n`-th discrete difference `a[i + 1] - a[i]` along `axis`.

    Args:
      a: an array of rank >= 1.
      n: how many times to difference (a static non-negative int).
      axis: the axis.
      prepend: values put before `a` along `axis` first (a scalar fills one slice).
      append: values put after `a` along `axis` first.

    Returns:
      An array `n` shorter along `axis` (after prepending and appending); for bools,
      `a[i + 1] != a[i]`.

    Raises:
      ValueError: `n` is negative or `a` is a scalar.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.diff(jnp.array([1, 4, 9, 16]), n=2)
      Array([2, 2], dtype=int32)
    """
    _u.check_arraylike("diff", a)
    n = concrete_or_error(operator.index, n, "The 'n' argument of jnp.diff must be static.")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return _u.as_array(a)
    nd = _u.ndim(a)
    if nd == 0:
        raise ValueError(
            f"diff requires input that is at least one dimensional; got shape {_u.shape(a)}"
        )
    axis = _u.canonicalize_axis(axis, nd)
    parts = []
    if prepend is not None:
        _u.check_arraylike("diff", prepend)
        parts.append(_edge(prepend, _u.shape(a), axis))
    parts.append(a)
    if append is not None:
        _u.check_arraylike("diff", append)
        parts.append(_edge(append, _u.shape(a), axis))
    a = _concatenate(parts, axis)
    op = lax.ne if _u.is_bool(a) else lax.sub
    for _ in range(n):
        a = op(_slice(a, 1, None, axis), _slice(a, None, -1, axis))
    return a


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """The differences between consecutive elements of the flattened `ary`.

    Args:
      ary: an array (flattened).
      to_end: values appended to the result (cast to `ary`'s dtype).
      to_begin: values prepended to the result (cast to `ary`'s dtype).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.ediff1d(jnp.array([1, 2, 4, 7]), to_begin=jnp.array([0]))
      Array([0, 1, 2, 3], dtype=int32)
    """
    _u.check_arraylike("ediff1d", ary)
    flat = _manipulation.ravel(_u.as_operand(ary))
    result = lax.sub(_slice(flat, 1, None, 0), _slice(flat, None, -1, 0))
    parts = [result]
    for value, first in ((to_begin, True), (to_end, False)):
        if value is not None:
            _u.check_arraylike("ediff1d", value)
            extra = _u.convert(_manipulation.ravel(_u.as_operand(value)), _u.dtype(flat))
            parts.insert(0, extra) if first else parts.append(extra)
    return _concatenate(parts, 0)


# ---------------------------------------------------------------------------
# gradient, trapezoid


def _along(v: Any, nd: int, axis: int) -> Any:
    """A 1-D `v` shaped to broadcast along `axis` of a rank-`nd` array."""
    shape = [1] * nd
    shape[axis] = _u.shape(v)[0]
    return _shape_ops.reshape(v, tuple(shape))


def _gradient_along(f: Any, spacing: Any, axis: int) -> Any:
    nd = _u.ndim(f)
    size = _u.shape(f)[axis]
    if type(size) is int and size < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
            "elements are required."
        )
    ahead, behind = _slice(f, 1, None, axis), _slice(f, None, -1, axis)
    if _u.ndim(spacing) == 0:
        spacing = _u.convert(spacing, _u.dtype(f))
        first = lax.div(lax.sub(_slice(f, 1, 2, axis), _slice(f, 0, 1, axis)), spacing)
        last = lax.div(lax.sub(_slice(f, -1, None, axis), _slice(f, -2, -1, axis)), spacing)
        two_dx = lax.mul(spacing, _u.scalar_like(2, spacing))
        inner = lax.div(
            lax.sub(_slice(ahead, 1, None, axis), _slice(behind, None, -1, axis)), two_dx
        )
    else:
        if _u.ndim(spacing) != 1:
            raise ValueError(
                f"jnp.gradient: spacing must be a scalar or 1-D, got shape {_u.shape(spacing)}"
            )
        if _u.shape(spacing)[0] != size:
            raise ValueError(
                f"jnp.gradient: the coordinates have length {_u.shape(spacing)[0]}, but the array "
                f"has size {size} along axis {axis}."
            )
        dx = _u.convert(diff(spacing), _u.dtype(f))
        dx1, dx2 = _slice(dx, None, -1, 0), _slice(dx, 1, None, 0)
        total = lax.add(dx1, dx2)
        ca = lax.div(lax.neg(dx2), lax.mul(dx1, total))
        cb = lax.div(lax.sub(dx2, dx1), lax.mul(dx1, dx2))
        cc = lax.div(dx1, lax.mul(dx2, total))
        inner = _ufuncs.add(
            _ufuncs.add(
                _ufuncs.multiply(_along(ca, nd, axis), _slice(f, None, -2, axis)),
                _ufuncs.multiply(_along(cb, nd, axis), _slice(f, 1, -1, axis)),
            ),
            _ufuncs.multiply(_along(cc, nd, axis), _slice(f, 2, None, axis)),
        )
        first = lax.div(
            lax.sub(_slice(f, 1, 2, axis), _slice(f, 0, 1, axis)),
            _shape_ops.reshape(_slice(dx, 0, 1, 0), ()),
        )
        last = lax.div(
            lax.sub(_slice(f, -1, None, axis), _slice(f, -2, -1, axis)),
            _shape_ops.reshape(_slice(dx, -1, None, 0), ()),
        )
    return _shape_ops.concatenate([first, inner, last], axis)


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: int | None = None) -> Any:
    """The gradient of the sampled function `f` by finite differences.

    Args:
      f: an array of samples.
      *varargs: the spacing: nothing (unit spacing), one scalar or 1-D coordinate array
        for all axes, or one per axis in `axis`.
      axis: None (all axes), an int or a tuple of ints.
      edge_order: 1 (or None); second-order edges are not supported.

    Returns:
      The derivative along the axis (an array) for one axis, else a list of them.

    Raises:
      ValueError: an axis shorter than 2, or coordinates that do not match it.
      NotImplementedError: `edge_order=2`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.gradient(jnp.array([1., 2., 4., 7.]))
      Array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    if edge_order not in (None, 1):
        raise NotImplementedError(
            "jnp.gradient supports edge_order=1 only (one-sided first-order edges), got "
            f"{edge_order}"
        )
    _u.check_arraylike("gradient", f)
    nd = _u.ndim(f)
    axes = _u.reduction_axes(axis, nd)
    if not varargs:
        spacings: list[Any] = [1.0] * len(axes)
    elif len(varargs) == 1 and (len(axes) == 1 or _u.ndim(varargs[0]) == 0):
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(
            f"jnp.gradient got {len(varargs)} spacing arguments for {len(axes)} axes; give none, "
            "one, or one per axis."
        )
    _u.check_arraylike("gradient", *spacings)
    (f,) = _u.promote_dtypes_inexact(f)
    f = _u.as_operand(f)
    grads = [_gradient_along(f, _u.as_operand(s), ax) for s, ax in zip(spacings, axes, strict=True)]
    return grads[0] if len(grads) == 1 else grads


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of `y` along `axis` by the trapezoidal rule.

    Args:
      y: the samples.
      x: the sample points: 1-D (along `axis`) or of `y`'s shape; None for spacing `dx`.
      dx: the spacing when `x` is None.
      axis: the axis to integrate along.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.trapezoid(jnp.array([1., 2., 3.]), dx=0.5)
      Array(2., dtype=float32)
    """
    if x is None:
        _u.check_arraylike("trapezoid", y, dx)
        y, dx = _u.promote_dtypes_inexact(y, dx)
        spacing = _u.as_operand(dx)
    else:
        _u.check_arraylike("trapezoid", y, x)
        y, x = (_u.as_operand(v) for v in _u.promote_dtypes_inexact(y, x))
        if _u.ndim(x) == 1:
            spacing = diff(x)
        else:
            spacing = _products._move_to_end(diff(x, axis=axis), axis, "trapezoid")
    y = _products._move_to_end(_u.as_operand(y), axis, "trapezoid")
    pair_sum = _ufuncs.add(
        _slice(y, 1, None, -1 % _u.ndim(y)), _slice(y, None, -1, -1 % _u.ndim(y))
    )
    half = _ufuncs.multiply(_ufuncs.multiply(spacing, pair_sum), 0.5)
    return _r.sum(half, axis=-1)


__all__ = [
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "diff",
    "ediff1d",
    "gradient",
    "nancumprod",
    "nancumsum",
    "trapezoid",
]
