"""`logsumexp`, `logmeanexp`, `softmax`, `log_softmax`, `standardize` and `one_hot`.

The first three share one numerical idea: subtract the maximum before
exponentiating, so nothing overflows. The maximum is wrapped in
`stop_gradient`, which changes no value (the shift cancels exactly) but keeps
the derivative from flowing through the non-smooth max: JAX's rule, and why
`grad(logsumexp)` is exactly `softmax`.

`where` masks (as in JAX) exclude entries from a reduction: they count as
`-inf` inside the exponentials, and masked outputs of `softmax` are 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import config, dtypes
from polyjax_core.typing import ArrayLike
from polyjax_interpreters.ad import stop_gradient
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _reductions, _shape_ops
from polyjax_numpy.numpy import _util as _u

Axis = int | Sequence[int] | None


def _broadcast(x: Any, shape: tuple) -> Any:
    """`x` broadcast (NumPy rules) to `shape`."""
    xs = _u.shape(x)
    if tuple(xs) == tuple(shape):
        return x
    return _shape_ops.broadcast_in_dim(x, shape, tuple(range(len(shape) - len(xs), len(shape))))


def _fill(x: Any, value: float) -> Any:
    return _shape_ops.full_like(x, value)


def _where(mask: Any, x: Any, fill: float) -> Any:
    if mask is None:
        return x
    mask = _broadcast(_u.convert(mask, np.dtype(bool)), _u.shape(x))
    return lax.select_n(mask, _fill(x, fill), x)


def _max_keepdims(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    masked = _where(where, x, -np.inf)
    m = _reductions.reduce_max(masked, axes) if axes else masked
    m = _shape_ops.expand_dims(m, axes) if axes else m
    # An all -inf (or all-masked) slice would give -inf - -inf = nan: shift by 0 there.
    finite = lax.is_finite(m)
    return lax.select_n(finite, _fill(m, 0.0), m)


def logsumexp(
    a: ArrayLike,
    axis: Axis = None,
    b: ArrayLike | None = None,
    keepdims: bool = False,
    return_sign: bool = False,
    where: ArrayLike | None = None,
) -> Any:
    """`log(sum(b * exp(a)))` over `axis`, computed without overflow.

    Args:
      a: the input array.
      axis: the axes to reduce (all when None).
      b: optional scaling factors (broadcast against `a`); may be negative.
      keepdims: keep the reduced axes with size 1.
      return_sign: also return the sign of the sum (then the result is `log|sum|`).
      where: optional mask of the elements to include.

    Returns:
      The reduction, or `(log|sum|, sign)` when `return_sign`.

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.logsumexp(np.array([0.0, 0.0]))
      Array(0.6931472, dtype=float32)
    """
    _u.check_arraylike("logsumexp", a)
    if b is not None:
        a, b = _u.promote_dtypes_inexact(a, b)
        shape = tuple(np.broadcast_shapes(_u.shape(a), _u.shape(b)))
        a, b = _broadcast(a, shape), _broadcast(b, shape)
        # Terms with a zero factor drop out before the shift is chosen: otherwise
        # a large `a` there sets the shift, and the sum of the others can be so
        # small that its derivatives overflow (optax's focal loss Hessian).
        a = lax.select_n(lax.ne(b, _fill(b, 0.0)), _fill(a, -np.inf), a)
    else:
        (a,) = _u.promote_dtypes_inexact(a)
    ndim = _u.ndim(a)
    axes = _u.reduction_axes(axis, ndim)
    shift = stop_gradient(_max_keepdims(a, axes, where))
    exp = lax.exp(lax.sub(a, shift))
    if b is not None:
        exp = lax.mul(exp, b)
    exp = _where(where, exp, 0.0)
    total = _reductions.reduce_sum(exp, axes) if axes else exp
    if return_sign:
        sign = lax.sign(total)
        total = lax.abs(total)
    is_complex = dtypes.issubdtype(_u.dtype(total), np.complexfloating)
    if not is_complex and b is not None and not return_sign:
        # A negative sum has no real logarithm: NaN, as JAX (and SciPy) give.
        total = lax.select_n(lax.lt(total, _fill(total, 0.0)), total, _fill(total, np.nan))
    squeezed_shift = _shape_ops.squeeze(shift, axes) if axes else shift
    out = lax.add(lax.log(total), squeezed_shift)
    if keepdims:
        out = _shape_ops.expand_dims(out, axes) if axes else out
        if return_sign:
            sign = _shape_ops.expand_dims(sign, axes) if axes else sign
    out = _u.convert(out, _u.dtype(out))  # strongly typed, as JAX's, for Python scalars too
    return (out, sign) if return_sign else out


def logmeanexp(
    x: ArrayLike, axis: Axis = None, where: ArrayLike | None = None, keepdims: bool = False
) -> Any:
    """`log(mean(exp(x)))` over `axis`: `logsumexp(x) - log(n)`, without overflow.

    Args:
      x: the input array.
      axis: the axes to reduce (all when None).
      where: optional mask of the elements to include; `n` counts them.
      keepdims: keep the reduced axes with size 1.

    Returns:
      The reduction (NaN over no elements, as JAX).

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.logmeanexp(np.array([0.0, 0.0]))
      Array(0., dtype=float32)
    """
    _u.check_arraylike("logmeanexp", x)
    (x,) = _u.promote_dtypes_inexact(x)
    axes = _u.reduction_axes(axis, _u.ndim(x))
    total = logsumexp(x, axis=axes, keepdims=keepdims, where=where)
    if where is None:
        count = _fill(total, float(np.prod([_u.shape(x)[a] for a in axes])))
    else:
        ones = _where(where, _fill(x, 1.0), 0.0)
        count = _reductions.reduce_sum(ones, axes) if axes else ones
        if keepdims and axes:
            count = _shape_ops.expand_dims(count, axes)
    return lax.sub(total, lax.log(count))


def log_softmax(
    x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None, initial: Any = None
) -> Any:
    """`x - logsumexp(x, axis, keepdims=True)`: log-probabilities along `axis`.

    Entries excluded by `where` are `-inf`.
    """
    del initial  # accepted for compatibility with older JAX code; unused there too
    _u.check_arraylike("log_softmax", x)
    (x,) = _u.promote_dtypes_inexact(x)
    axes = _u.reduction_axes(axis, _u.ndim(x))
    shifted = lax.sub(x, stop_gradient(_max_keepdims(x, axes, where)))
    exp = _where(where, lax.exp(shifted), 0.0)
    total = _shape_ops.expand_dims(_reductions.reduce_sum(exp, axes), axes) if axes else exp
    out = lax.sub(shifted, lax.log(total))
    return _where(where, out, -np.inf)


def softmax(
    x: ArrayLike, axis: Axis = -1, where: ArrayLike | None = None, initial: Any = None
) -> Any:
    """`exp(x) / sum(exp(x), axis)`: probabilities along `axis`.

    Entries excluded by `where` are 0. With the `jax_softmax_custom_jvp` config
    on, the derivative is given by a rule in terms of the output (more stable
    when `x` has large entries).

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.softmax(np.array([0.0, 0.0]))
      Array([0.5, 0.5], dtype=float32)
    """
    del initial
    _u.check_arraylike("softmax", x)
    (x,) = _u.promote_dtypes_inexact(x)
    axes = _u.reduction_axes(axis, _u.ndim(x))
    if config.softmax_custom_jvp.value:
        return _softmax_custom(x, axes, where)
    return _softmax(x, axes, where)


def _softmax(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    unnormalized = _where(where, lax.exp(lax.sub(x, _max_keepdims(x, axes, where))), 0.0)
    total = _reductions.reduce_sum(unnormalized, axes) if axes else unnormalized
    total = _shape_ops.expand_dims(total, axes) if axes else total
    return lax.div(unnormalized, total)


def _softmax_custom_jvp(axes: tuple[int, ...], where: Any, primals: tuple, tangents: tuple):
    (x,), (t,) = primals, tangents
    y = _softmax(x, axes, where)
    # d softmax = y * (t - sum(y * t)).
    yt = lax.mul(y, t)
    s = _reductions.reduce_sum(yt, axes) if axes else yt
    s = _shape_ops.expand_dims(s, axes) if axes else s
    return y, lax.mul(y, lax.sub(t, s))


_softmax_custom = custom_jvp(_softmax, nondiff_argnums=(1, 2))
_softmax_custom.defjvp(_softmax_custom_jvp)


def standardize(
    x: ArrayLike,
    axis: Axis = -1,
    mean: ArrayLike | None = None,
    variance: ArrayLike | None = None,
    epsilon: ArrayLike = 1e-5,
    where: ArrayLike | None = None,
) -> Any:
    """`(x - mean) / sqrt(variance + epsilon)` along `axis` (mean and variance computed if None)."""
    _u.check_arraylike("standardize", x)
    (x,) = _u.promote_dtypes_inexact(x)
    axes = _u.reduction_axes(axis, _u.ndim(x))
    if mean is None:
        mean = _masked_mean(x, axes, where)
    if variance is None:
        centered = lax.sub(x, _broadcast(_u.convert(mean, _u.dtype(x)), _u.shape(x)))
        variance = _masked_mean(lax.mul(centered, centered), axes, where)
    mean = _broadcast(_u.convert(mean, _u.dtype(x)), _u.shape(x))
    variance = _broadcast(_u.convert(variance, _u.dtype(x)), _u.shape(x))
    eps = _u.convert(epsilon, _u.dtype(x))
    return lax.mul(lax.sub(x, mean), lax.rsqrt(lax.add(variance, eps)))


def _masked_mean(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    """The mean over `axes`, keeping them (size 1), counting only `where` entries."""
    values = _where(where, x, 0.0)
    total = _shape_ops.expand_dims(_reductions.reduce_sum(values, axes), axes)
    if where is None:
        count = int(np.prod([_u.shape(x)[a] for a in axes]))
        return lax.div(total, np.asarray(count, _u.dtype(x))[()])
    ones = _where(where, _fill(x, 1.0), 0.0)
    count = _shape_ops.expand_dims(_reductions.reduce_sum(ones, axes), axes)
    return lax.div(total, count)


def one_hot(x: ArrayLike, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """One-hot encoding: `out[..., c] = (x[...] == c)` for `c` in `range(num_classes)`.

    Args:
      x: an integer array of class indices (out-of-range indices give all zeros).
      num_classes: the number of classes (static).
      dtype: the result dtype (default float32, float64 under x64).
      axis: where the new class axis goes.

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.one_hot(np.array([0, 2]), 3)
      Array([[1., 0., 0.],
             [0., 0., 1.]], dtype=float32)
    """
    _u.check_arraylike("one_hot", x)
    try:
        num_classes = int(num_classes)
    except TypeError:
        raise TypeError(
            "one_hot: num_classes must be a static int (it sets the output shape), got "
            f"{num_classes!r}"
        ) from None
    dtype = dtypes.canonicalize_dtype(dtypes.float_ if dtype is None else dtype)
    shape = _u.shape(x)
    out_ndim = len(shape) + 1
    axis = _u.canonicalize_axis(axis, out_ndim)
    out_shape = (*shape[:axis], num_classes, *shape[axis:])
    classes = _shape_ops.broadcasted_iota(_u.dtype(x), out_shape, axis)
    x_dims = tuple(d for d in range(out_ndim) if d != axis)
    xb = _shape_ops.broadcast_in_dim(x, out_shape, x_dims)
    return lax.convert_element_type(lax.eq(xb, classes), dtype)
