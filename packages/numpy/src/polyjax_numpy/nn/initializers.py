"""`polyjax.nn.initializers`: functions that make the initial parameters of a network.

An initializer is a function `init(key, shape, dtype=float) -> array`. The
constructors here (`glorot_uniform()`, `normal(0.01)`, ...) return one, as in
JAX, so `w = glorot_uniform()(key, (784, 512))`. Variance-scaling
initializers size their draws by the *fan-in* and *fan-out* of the weight's
shape: the receptive field (every axis but `in_axis`, `out_axis` and
`batch_axis`) times the input or output axis size. Draws come from
`polyjax.random`, so they match JAX's for the same key.

Example:
  >>> from polyjax_numpy import random
  >>> from polyjax_numpy.nn import initializers
  >>> initializers.glorot_normal()(random.key(0), (3, 4)).shape
  (3, 4)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from polyjax_core import dtypes
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]


class Initializer(Protocol):
    """The type of initializers: `(key, shape, dtype) -> array`."""

    def __call__(self, key: Any, shape: Sequence[int], dtype: Any = ...) -> Any: ...


def _random() -> Any:
    # polyjax_numpy.random imports jnp modules; imported at call time so that
    # `import polyjax_numpy.nn` stays light.
    from polyjax_numpy import random

    return random


def _dtype(dtype: Any) -> np.dtype:
    return dtypes.canonicalize_dtype(dtypes.float_ if dtype is None else dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer: all zeros (the key is unused)."""
    del key
    return _shape_ops.full(_shape(shape), 0, _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None) -> Any:
    """An initializer: all ones (the key is unused)."""
    del key
    return _shape_ops.full(_shape(shape), 1, _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer that fills with `value` (broadcast to the requested shape)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        del key
        shape = _shape(shape)
        v = _u.convert(value, _dtype(dtype)) if _u.is_operand(value) else np.asarray(value)
        v = _u.convert(v, _dtype(dtype))
        vs = _u.shape(v)
        return _shape_ops.broadcast_in_dim(v, shape, tuple(range(len(shape) - len(vs), len(shape))))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from [0, scale)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return lax.mul(_random().uniform(key, _shape(shape), dtype), _u.convert(scale, dtype))

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution of mean 0 and `stddev`."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        return lax.mul(_random().normal(key, _shape(shape), dtype), _u.convert(stddev, dtype))

    return init


def truncated_normal(
    stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0
) -> Initializer:
    """An initializer drawing from a normal of mean 0 and `stddev`, truncated to
    [lower, upper] standard deviations."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        dtype = _dtype(dtype)
        draws = _random().truncated_normal(key, lower, upper, _shape(shape), dtype)
        return lax.mul(draws, _u.convert(stddev, dtype))

    return init


def _compute_fans(
    shape: tuple[int, ...], in_axis: Any, out_axis: Any, batch_axis: Any
) -> tuple[float, float]:
    """(fan_in, fan_out) of a weight of `shape`: the in/out axis sizes times the receptive field."""
    if len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            f"tensor {shape}. Must be at least 2D."
        )
    ndim = len(shape)

    def axes(a: Any) -> tuple[int, ...]:
        return tuple(
            _u.canonicalize_axis(i, ndim) for i in (a if isinstance(a, Sequence) else (a,))
        )

    ins, outs, batch = axes(in_axis), axes(out_axis), axes(batch_axis)
    in_size = int(np.prod([shape[i] for i in ins]))
    out_size = int(np.prod([shape[i] for i in outs]))
    receptive = int(np.prod([shape[i] for i in range(ndim) if i not in (*ins, *outs, *batch)]))
    return float(in_size * receptive), float(out_size * receptive)


# The standard deviation of a standard normal truncated to [-2, 2]: dividing by it
# gives a truncated draw the variance asked for.
_TRUNCATED_STDDEV = 0.87962566103423978


def variance_scaling(
    scale: float,
    mode: Literal["fan_in", "fan_out", "fan_avg", "fan_geo"],
    distribution: Literal["truncated_normal", "normal", "uniform"],
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: Any = None,
) -> Initializer:
    """An initializer whose draws have variance `scale / fan`, with `fan` chosen by `mode`.

    Args:
      scale: the variance's numerator.
      mode: "fan_in", "fan_out", "fan_avg" (their mean) or "fan_geo" (their
        geometric mean).
      distribution: "truncated_normal" (within two standard deviations), "normal" or
        "uniform".
      in_axis, out_axis, batch_axis: which axes of the weight are its inputs, outputs
        and batch (the rest form the receptive field).
      dtype: the default dtype of the initializer.

    Raises:
      ValueError: an unknown mode or distribution (when called), or a weight of rank < 2.
    """
    if mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        fan = {
            "fan_in": fan_in,
            "fan_out": fan_out,
            "fan_avg": (fan_in + fan_out) / 2,
            "fan_geo": float(np.sqrt(fan_in * fan_out)),
        }[mode]
        variance = scale / fan
        random = _random()
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / _TRUNCATED_STDDEV
            draws = random.truncated_normal(key, -2.0, 2.0, shape, dtype)
            return lax.mul(draws, np.asarray(stddev, dtype)[()])
        if distribution == "normal":
            return lax.mul(
                random.normal(key, shape, dtype), np.asarray(np.sqrt(variance), dtype)[()]
            )
        bound = np.sqrt(3 * variance)
        return lax.mul(random.uniform(key, shape, dtype, -1.0, 1.0), np.asarray(bound, dtype)[()])

    return init


def _scaling(scale: float, mode: str, distribution: str) -> Callable[..., Initializer]:
    def make(
        in_axis: int | Sequence[int] = -2,
        out_axis: int | Sequence[int] = -1,
        batch_axis: int | Sequence[int] = (),
        dtype: Any = None,
    ) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)  # type: ignore[arg-type]  # mode/distribution: checked strings

    make.__doc__ = f"`variance_scaling({scale}, {mode!r}, {distribution!r})`: an initializer."
    return make


glorot_uniform = xavier_uniform = _scaling(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _scaling(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _scaling(1.0, "fan_in", "uniform")
lecun_normal = _scaling(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _scaling(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _scaling(2.0, "fan_in", "truncated_normal")
for _name in (
    "glorot_uniform",
    "glorot_normal",
    "lecun_uniform",
    "lecun_normal",
    "he_uniform",
    "he_normal",
):
    globals()[_name].__name__ = _name
del _name


def orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices times `scale` (`random.orthogonal`
    semantics along `column_axis`)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        n_rows = int(np.prod(shape)) // shape[column_axis]
        n_cols = shape[column_axis]
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        from polyjax_numpy.numpy import linalg

        a = _random().normal(key, matrix_shape, dtype)
        q, r = linalg.qr(a)
        d = lax.sign(_diagonal(r))
        q = lax.mul(q, _shape_ops.broadcast_in_dim(d, _u.shape(q), (1,)))
        if n_rows < n_cols:
            q = _shape_ops.transpose(q, (1, 0))
        axis = _u.canonicalize_axis(column_axis, len(shape))
        moved = (*shape[:axis], *shape[axis + 1 :], shape[axis])
        q = _shape_ops.reshape(q, moved)
        perm = list(range(len(shape) - 1))
        perm.insert(axis, len(shape) - 1)
        return lax.mul(_shape_ops.transpose(q, tuple(perm)), np.asarray(scale, dtype)[()])

    return init


def _diagonal(r: Any) -> Any:
    n = min(_u.shape(r))
    eye = lax.eq(
        _shape_ops.broadcasted_iota(np.int32, _u.shape(r), 0),
        _shape_ops.broadcasted_iota(np.int32, _u.shape(r), 1),
    )
    from polyjax_numpy.lax import _reductions

    masked = lax.select_n(eye, _shape_ops.full_like(r, 0), r)
    return _shape_ops.slice(_reductions.reduce_sum(masked, (0,)), (0,), (n,))


def delta_orthogonal(scale: float = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer for convolution kernels (Xiao et al., 2018): an orthogonal matrix at
    the spatial center, zeros elsewhere. The shape must be 3-, 4- or 5-D with
    `shape[-2] <= shape[-1]`."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype) -> Any:
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError(
                f"Delta orthogonal initializer requires a 3D, 4D or 5D shape, got {shape}"
            )
        if shape[-1] < shape[-2]:
            raise ValueError(
                "`fan_in` must be less or equal than `fan_out`. Consider transposing "
                f"the kernel (shape {shape})"
            )
        ortho = orthogonal(scale, column_axis, dtype)(key, shape[-2:], dtype)
        center = tuple(s // 2 for s in shape[:-2])
        zeros_ = _shape_ops.full(shape, 0, dtype)
        from polyjax_numpy.lax import _slicing

        block = _shape_ops.reshape(ortho, (1,) * (len(shape) - 2) + shape[-2:])
        return _slicing.dynamic_update_slice(zeros_, block, (*center, 0, 0))

    return init
