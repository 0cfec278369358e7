"""The resampling kernels, weight matrices and the public `resize` / `scale_and_translate`."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax import lax
from polyjax import numpy as jnp

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The interpolation methods of `resize` and `scale_and_translate`."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method named `s` (JAX's names and aliases: "bilinear", "bicubic", ...)."""
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
        }
        try:
            return names[s.lower()]
        except KeyError:
            raise ValueError(f"Unknown resize method: {s!r}") from None


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)


def _triangle(x: Any) -> Any:
    return jnp.maximum(0.0, 1.0 - jnp.abs(x))


def _keys_cubic(x: Any) -> Any:
    a, x = -0.5, jnp.abs(x)
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x <= 1.0, near, jnp.where(x < 2.0, far, 0.0))


def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        return jnp.where(jnp.abs(x) < radius, jnp.sinc(x) * jnp.sinc(x / radius), 0.0)

    return kernel


_KERNELS: dict[ResizeMethod, Callable[[Any], Any]] = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.CUBIC: _keys_cubic,
    ResizeMethod.LANCZOS3: _lanczos(3.0),
    ResizeMethod.LANCZOS5: _lanczos(5.0),
}


def _weights(
    in_size: int, out_size: int, scale: Any, translation: Any, kernel: Callable, antialias: bool
) -> Any:
    """The (in_size, out_size) matrix mapping input pixels to output pixels."""
    inv_scale = 1.0 / scale
    width = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample = (jnp.arange(out_size, dtype=jnp.float32) + 0.5 - translation) * inv_scale - 0.5
    distance = (jnp.arange(in_size, dtype=jnp.float32)[:, None] - sample[None, :]) / width
    w = kernel(distance)
    total = jnp.sum(w, axis=0, keepdims=True)
    w = jnp.where(
        jnp.abs(total) > 1000.0 * np.finfo(np.float32).eps,
        w / jnp.where(total != 0, total, 1.0),
        0.0,
    )
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], w, 0.0)


def _apply_along(image: Any, axis: int, weights: Any, precision: Any) -> Any:
    out = jnp.tensordot(
        image, weights.astype(image.dtype), axes=((axis,), (0,)), precision=precision
    )
    return jnp.moveaxis(out, -1, axis)


def _check(image: Any, shape: Sequence[int], spatial_dims: Sequence[int]) -> None:
    if len(shape) != image.ndim:
        raise ValueError(
            f"shape must have one size per dimension of the image ({image.ndim}), got "
            f"{tuple(shape)}."
        )
    for d in spatial_dims:
        if not 0 <= d < image.ndim:
            raise ValueError(
                f"spatial dimension {d} is out of range for an image of rank {image.ndim}."
            )


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod = ResizeMethod.LINEAR,
    antialias: bool = True,
    precision: Any = lax.Precision.HIGHEST,
) -> Any:
    """Scales and translates `image` along `spatial_dims` (see the module docstring).

    Args:
      image: a floating-point (or complex) array.
      shape: the output shape (equal to `image.shape` off `spatial_dims`).
      spatial_dims: the axes resampled.
      scale: one scale factor per spatial axis (arrays allowed: traced values work).
      translation: one translation per spatial axis, in output pixels.
      method: "linear", "cubic", "lanczos3" or "lanczos5" (or a `ResizeMethod`);
        not "nearest".
      antialias: whether a downscaling kernel is widened to average.
      precision: of the matrix products.

    Returns:
      The resampled image, of shape `shape` and `image`'s dtype.

    Raises:
      ValueError: an unknown or unsupported method, or shapes that disagree.

    Example:
      >>> import numpy as np
      >>> scale_and_translate(np.array([0.0, 1.0], np.float32), (2,), (0,),
      ...                     np.array([1.0]), np.array([0.5]))
      Array([0. , 0.5], dtype=float32)
    """
    image = jnp.asarray(image)
    spatial_dims = tuple(int(d) for d in spatial_dims)
    _check(image, shape, spatial_dims)
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate does not support the nearest method.")
    if not jnp.issubdtype(image.dtype, jnp.inexact):
        image = image.astype(jnp.float32)
    scale, translation = jnp.asarray(scale, jnp.float32), jnp.asarray(translation, jnp.float32)
    for i, d in enumerate(spatial_dims):
        w = _weights(image.shape[d], shape[d], scale[i], translation[i], _KERNELS[m], antialias)
        image = _apply_along(image, d, w, precision)
    return image


def _resize_nearest(image: Any, shape: Sequence[int]) -> Any:
    for d, (n_in, n_out) in enumerate(zip(image.shape, shape)):
        if n_in == n_out:
            continue
        index = np.floor((np.arange(n_out) + 0.5) * (n_in / n_out)).astype(np.int32)
        image = jnp.take(image, np.minimum(index, n_in - 1), axis=d)
    return image


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = lax.Precision.HIGHEST,
) -> Any:
    """Resizes `image` to `shape` (every axis whose size changes is resampled).

    Args:
      image: an array.
      shape: the output shape (same rank as `image`).
      method: "nearest", "linear", "cubic", "lanczos3" or "lanczos5" (JAX's
        aliases such as "bilinear" too), or a `ResizeMethod`.
      antialias: whether downscaling averages (wider kernel); not for nearest.
      precision: of the matrix products.

    Returns:
      The resized image, in `image`'s dtype (nearest) or its inexact dtype.

    Raises:
      ValueError: an unknown method, or a shape of another rank.

    Example:
      >>> import numpy as np
      >>> resize(np.arange(4, dtype=np.float32), (2,), "nearest")
      Array([1., 3.], dtype=float32)
    """
    image = jnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(
            f"shape must have one size per dimension of the image ({image.ndim}), got {shape}."
        )
    m = _method(method)
    if m is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if not dims:
        return image if jnp.issubdtype(image.dtype, jnp.inexact) else image.astype(jnp.float32)
    scale = [shape[d] / image.shape[d] for d in dims]
    return scale_and_translate(
        image, shape, dims, scale, [0.0] * len(dims), m, antialias, precision
    )
