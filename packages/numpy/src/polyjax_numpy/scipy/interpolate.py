"""`polyjax.scipy.interpolate`: `RegularGridInterpolator`, as ``jax.scipy.interpolate``.

Linear interpolation combines the `2^d` corners of the grid cell holding each
point with the products of the per-axis weights; "nearest" picks the closest
grid point per axis (ties go to the lower one, as SciPy). Points outside the
grid get `fill_value`, or are extrapolated from the edge cell when it is None.
The interpolator is a pytree (its grid and values are its leaves), so it can
cross `jit` and `vmap`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.interpolate import RegularGridInterpolator
  >>> f = RegularGridInterpolator((np.float32([0, 1, 2]),), np.float32([0, 10, 40]))
  >>> f(np.float32([[0.5], [1.5], [3.0]]))
  Array([ 5., 25., nan], dtype=float32)
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np

from polyjax_core import tree_util
from polyjax_interpreters.jit import jit
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method: str) -> str:
    if method not in _METHODS:
        raise ValueError(
            f"RegularGridInterpolator: method must be one of {_METHODS}, got {method!r}."
        )
    return method


class RegularGridInterpolator:
    """Interpolation on a rectilinear grid in any number of dimensions.

    Args:
      points: one strictly ascending 1-D array of coordinates per grid axis.
      values: ``[n_1, ..., n_d, ...]``: the data on the grid (trailing axes are
        carried along).
      method: "linear" or "nearest".
      bounds_error: must be False (True raises `NotImplementedError`, as in JAX:
        the check would need the points' values).
      fill_value: the value outside the grid; None extrapolates.

    Raises:
      ValueError: for an unknown method, or points that do not match `values`.
    """

    def __init__(
        self,
        points: Any,
        values: Any,
        method: str = "linear",
        bounds_error: bool = False,
        fill_value: Any = np.nan,
    ) -> None:
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        self.method = _check_method(method)
        _u.check_arraylike("RegularGridInterpolator", values, *points)
        values = jnp.asarray(values)
        (values,) = _u.promote_dtypes_inexact(values)
        self.grid = tuple(jnp.asarray(p) for p in points)
        if len(self.grid) > values.ndim:
            raise ValueError(
                f"RegularGridInterpolator: {len(self.grid)} point arrays for values of "
                f"shape {values.shape}."
            )
        for axis, p in enumerate(self.grid):
            if p.ndim != 1 or p.shape[0] != values.shape[axis]:
                raise ValueError(
                    f"RegularGridInterpolator: points[{axis}] must be 1-D of length "
                    f"{values.shape[axis]}, got shape {p.shape}."
                )
        self.values = values
        self.fill_value = fill_value
        self.bounds_error = False

    def _points(self, xi: Any) -> Any:
        _u.check_arraylike("RegularGridInterpolator", xi)
        xi = jnp.asarray(xi)
        d = len(self.grid)
        if d == 1 and not (xi.ndim >= 2 and xi.shape[-1] == 1):  # 1-D: the values are the points
            xi = xi[..., None]
        if xi.shape[-1] != d:
            raise ValueError(
                f"RegularGridInterpolator: points of dimension {xi.shape[-1]}, the grid has {d}."
            )
        return xi

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points `xi` (``[..., d]``)."""
        method = _check_method(self.method if method is None else method)
        return _interpolate(self, self._points(xi), method)

    def _evaluate(self, xi: Any, method: str) -> Any:
        (xi,) = _u.promote_dtypes(xi.astype(jnp.result_type(xi.dtype, self.values.dtype)))
        lead = xi.shape[:-1]
        xi = jnp.reshape(xi, (-1, xi.shape[-1]))
        outside = jnp.zeros(xi.shape[0], bool)
        indices, weights = [], []
        for axis, g in enumerate(self.grid):
            x = xi[:, axis]
            outside = outside | (x < g[0]) | (x > g[-1])
            i = jnp.clip(jnp.searchsorted(g, x, side="right") - 1, 0, max(g.shape[0] - 2, 0))
            lo, hi = g[i], g[jnp.minimum(i + 1, g.shape[0] - 1)]
            t = jnp.where(hi > lo, (x - lo) / jnp.where(hi > lo, hi - lo, 1), 0)
            indices.append(i)
            weights.append(t)
        trail = self.values.shape[len(self.grid) :]
        if method == "nearest":
            idx = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, weights))
            out = self.values[idx]
        else:
            out = 0
            for corner in itertools.product((0, 1), repeat=len(self.grid)):
                idx, w = [], 1
                for bit, i, t in zip(corner, indices, weights):
                    idx.append(i + bit)
                    w = w * (t if bit else 1 - t)
                w = jnp.reshape(w, w.shape + (1,) * len(trail))
                out = out + w * self.values[tuple(idx)]
        if self.fill_value is not None:
            mask = jnp.reshape(outside, outside.shape + (1,) * len(trail))
            out = jnp.where(mask, jnp.asarray(self.fill_value, out.dtype), out)
        return jnp.reshape(out, lead + trail)


@functools.partial(jit, static_argnums=2)
def _interpolate(f: RegularGridInterpolator, xi: Any, method: str) -> Any:
    return f._evaluate(xi, method)


tree_util.register_pytree_node(
    RegularGridInterpolator,
    lambda f: ((f.grid, f.values), (f.method, f.fill_value)),
    lambda aux, children: _unflatten(aux, children),
)


def _unflatten(aux: tuple, children: tuple) -> RegularGridInterpolator:
    f = object.__new__(RegularGridInterpolator)
    f.grid, f.values = children
    f.method, f.fill_value = aux
    f.bounds_error = False
    return f
