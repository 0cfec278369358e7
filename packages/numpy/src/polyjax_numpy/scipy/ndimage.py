"""`polyjax.scipy.ndimage`: `map_coordinates`, as `jax.scipy.ndimage`.

Interpolation of order 0 (nearest sample) or 1 (linear), written as gathers:
each output point reads the `2^d` (order 1) or single (order 0) neighbouring
samples, whose integer indices are first mapped into the array by the mode,
and sums them with the products of per-axis weights. Derivatives flow to
both the input and the coordinates.

Modes follow JAX, which differs from SciPy in two of them:

- "constant": samples outside the array are `cval` and take part in the
  interpolation (SciPy calls this "grid-constant"; SciPy's "constant" gives
  `cval` wherever the point itself is outside `[0, n - 1]`);
- "wrap": periodic with period `n` (SciPy's "grid-wrap"; SciPy's "wrap" has
  period `n - 1`);
- "nearest" (clamp), "mirror" (`d c b | a b c d | c b a`) and "reflect"
  (`d c b a | a b c d | d c b a`) are SciPy's.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy import ndimage
  >>> ndimage.map_coordinates(np.array([1.0, 2.0, 4.0]), [np.array([0.5, 1.5])], order=1)
  Array([1.5, 3. ], dtype=float32)
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
_SCIPY_ONLY_MODES = ("grid-constant", "grid-wrap", "grid-mirror")


def _fix_index(index: Any, size: int, mode: str) -> tuple[Any, Any]:
    """`index` mapped into `[0, size)` by `mode`, and whether it was inside (for "constant")."""
    if mode == "constant":
        valid = (index >= 0) & (index < size)
        return jnp.clip(index, 0, size - 1), valid
    if mode == "nearest":
        return jnp.clip(index, 0, size - 1), None
    if mode == "wrap":
        return jnp.mod(index, size), None
    if mode == "mirror":
        # Reflection about the outer samples: period 2 (n - 1).
        period = 2 * (size - 1)
        if period == 0:
            return jnp.zeros_like(index), None
        j = jnp.mod(jnp.abs(index), period)
        return jnp.where(j >= size, period - j, j), None
    # "reflect": reflection about the outer edges of the samples, period 2 n.
    j = jnp.mod(index, 2 * size)
    return jnp.where(j >= size, 2 * size - 1 - j, j), None


def _neighbours(coordinate: Any, order: int) -> list[tuple[Any, Any]]:
    """The integer sample indices near `coordinate` and their interpolation weights."""
    if order == 0:
        # Round half up, as SciPy's order-0 spline does.
        return [(jnp.floor(coordinate + 0.5).astype(jnp.int32), None)]
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(jnp.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(
    input: Any,
    coordinates: Sequence[Any],
    order: int,
    mode: str = "constant",
    cval: Any = 0.0,
) -> Any:
    """The values of `input` at fractional `coordinates`, by interpolation.

    Args:
      input: the array to sample, of rank `d`.
      coordinates: `d` arrays of one shape (or an array whose leading axis has
        length `d`): the coordinates of each output point along each axis of `input`.
      order: 0 (nearest sample) or 1 (linear interpolation).
      mode: how `input` extends beyond its edges: "constant", "nearest",
        "wrap", "mirror" or "reflect" (see the module docstring).
      cval: the value outside the array in "constant" mode.

    Returns:
      An array of the coordinates' shape and `input`'s dtype (integer inputs
      are rounded half away from zero).

    Raises:
      ValueError: coordinates that do not match `input`'s rank, or an unknown `mode`.
      NotImplementedError: an order above 1, or a SciPy mode JAX does not have.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.scipy import ndimage
      >>> image = np.arange(12.0).reshape(3, 4)
      >>> ndimage.map_coordinates(image, [np.array([0.5]), np.array([1.5])], order=1)
      Array([3.5], dtype=float32)
    """
    order = operator.index(order)
    if not 0 <= order <= 5:
        raise ValueError(f"map_coordinates: order must be in [0, 5], got {order}.")
    if order > 1:
        raise NotImplementedError(
            f"map_coordinates: only order 0 and 1 are supported, got order={order}."
        )
    if mode in _SCIPY_ONLY_MODES:
        raise NotImplementedError(f"map_coordinates: mode {mode!r} is not supported.")
    if mode not in _MODES:
        raise ValueError(f"map_coordinates: mode must be one of {list(_MODES)}, got {mode!r}.")
    _u.check_arraylike("map_coordinates", input)
    input = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    if len(coordinates) != input.ndim:
        raise ValueError(
            "map_coordinates: coordinates must be a sequence of length input.ndim = "
            f"{input.ndim}, got {len(coordinates)}."
        )
    shape = jnp.broadcast_shapes(*(c.shape for c in coordinates)) if coordinates else ()
    coordinates = [
        jnp.broadcast_to(c, shape) for c in _u.promote_dtypes_inexact(*coordinates, input)[:-1]
    ]
    weight_dtype = jnp.result_type(*coordinates) if coordinates else input.dtype
    per_axis = []
    for axis, c in enumerate(coordinates):
        per_axis.append(
            [(*_fix_index(i, input.shape[axis], mode), w) for i, w in _neighbours(c, order)]
        )
    is_integer = jnp.issubdtype(input.dtype, jnp.integer)
    values = input.astype(weight_dtype) if is_integer else input
    total = None
    for corner in itertools.product(*per_axis):
        sample = values[tuple(index for index, _, _ in corner)]
        valid = [v for _, v, _ in corner if v is not None]
        if valid:
            inside = valid[0]
            for v in valid[1:]:
                inside = inside & v
            sample = jnp.where(inside, sample, jnp.asarray(cval, sample.dtype))
        weights = [w for _, _, w in corner if w is not None]
        term = sample
        for w in weights:
            term = term * w
        total = term if total is None else total + term
    if total is None:  # a rank-0 input
        total = values
    if is_integer:
        total = jnp.sign(total) * jnp.floor(jnp.abs(total) + 0.5)
    return total.astype(input.dtype)
