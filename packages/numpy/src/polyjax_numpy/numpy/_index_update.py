"""`x.at[idx]`: functional index updates, the immutable form of `x[idx] op= y`.

    x.at[idx].set(y)        x[idx] = y
    x.at[idx].add(y)        x[idx] += y           (also subtract, multiply, divide, power)
    x.at[idx].min(y)        x[idx] = minimum(x[idx], y)   (and max)
    x.at[idx].apply(f)      f applied at x[idx]   (like NumPy's `ufunc.at`)
    x.at[idx].get()         x[idx], with the out-of-bound options of the updates

Each returns a new array; under `jit` XLA updates the buffer in place when `x`
is not used afterwards. Unlike NumPy's `x[idx] += y`, every update lands where
an index repeats (`x.at[[0, 0]].add(1)` adds 2), as with `np.add.at`; for
`set` one of the repeated updates wins (which one is unspecified).

Out-of-bound indices: updates drop them by default (mode "drop", "fill" or
"promise_in_bounds"); mode "clip" clamps them into range. `get` clamps by
default and fills with `fill_value` in mode "fill". Negative indices count
from the end in both.

`divide` and `power` scatter-multiply `y` into ones and then divide (or raise)
`x` by the result, as JAX does: integer arrays divide to floats.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.lax._slicing import GatherScatterMode
from polyjax_numpy.numpy import _indexing, _ufuncs
from polyjax_numpy.numpy import _util as _u

__all__ = ["at"]

_Mode = str | GatherScatterMode | None


class _IndexUpdateHelper:
    """The object `x.at` returns: index it (`x.at[idx]`) to choose the update."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """`x.at[idx]`: the update methods below return `x` updated at `idx`.

    Every method takes the keyword arguments `indices_are_sorted` and
    `unique_indices` (promises passed on to XLA) and `mode` (out-of-bound
    indices: "drop"/"fill"/"promise_in_bounds", or "clip").
    """

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _scatter(
        self,
        values: Any,
        kind: str,
        name: str,
        indices_are_sorted: bool,
        unique_indices: bool,
        mode: _Mode,
        operand: Any = None,
    ) -> Any:
        return _indexing.scatter_update(
            self.array if operand is None else operand,
            self.index,
            values,
            kind,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            name=f"x.at[idx].{name}",
        )

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
        fill_value: Any = None,
    ) -> Any:
        """`x[idx]`; mode "fill" reads out-of-bound indices as `fill_value`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.arange(3.0).at[jnp.array([0, 5])].get(mode="fill", fill_value=-1.0)
          Array([ 0., -1.], dtype=float32)
        """
        return _indexing.getitem(
            self.array,
            self.index,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
        )

    def set(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] = values` (broadcast to `x[idx]`'s shape, cast to `x`'s dtype).

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.zeros(4).at[1:3].set(5.0)
          Array([0., 5., 5., 0.], dtype=float32)
        """
        return self._scatter(values, "set", "set", indices_are_sorted, unique_indices, mode)

    def add(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] += values`, every repeated index adding its update.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.zeros(3).at[jnp.array([0, 0, 2])].add(1.0)
          Array([2., 0., 1.], dtype=float32)
        """
        return self._scatter(values, "add", "add", indices_are_sorted, unique_indices, mode)

    def subtract(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] -= values`, every repeated index subtracting its update.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.ones(3).at[1].subtract(2.0)
          Array([ 1., -1.,  1.], dtype=float32)
        """
        return self._scatter(values, "sub", "subtract", indices_are_sorted, unique_indices, mode)

    def multiply(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] *= values`, every repeated index multiplying.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.ones(3).at[jnp.array([1, 1])].multiply(3.0)
          Array([1., 9., 1.], dtype=float32)
        """
        return self._scatter(values, "mul", "multiply", indices_are_sorted, unique_indices, mode)

    mul = multiply

    def _of_products(self, values: Any, name: str, kw: tuple) -> Any:
        """The scatter-product of `values` into ones (1 where nothing lands)."""
        ones = _shape_ops.full(_u.shape(self.array), 1, _u.dtype(self.array))
        return self._scatter(values, "mul", name, *kw, operand=ones)

    def divide(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] /= values` (true division: integer arrays give floats).

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.full(3, 8.0).at[jnp.array([0, 0])].divide(2.0)
          Array([2., 8., 8.], dtype=float32)
        """
        kw = (indices_are_sorted, unique_indices, mode)
        return _ufuncs.true_divide(self.array, self._of_products(values, "divide", kw))

    def power(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] **= values` (repeated indices multiply their exponents).

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.full(3, 2.0).at[2].power(3.0)
          Array([2., 2., 8.], dtype=float32)
        """
        kw = (indices_are_sorted, unique_indices, mode)
        return _ufuncs.power(self.array, self._of_products(values, "power", kw))

    def min(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] = minimum(x[idx], values)`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.arange(3.0).at[:].min(1.0)
          Array([0., 1., 1.], dtype=float32)
        """
        return self._scatter(values, "min", "min", indices_are_sorted, unique_indices, mode)

    def max(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with `x[idx] = maximum(x[idx], values)`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.arange(3.0).at[:].max(1.0)
          Array([1., 1., 2.], dtype=float32)
        """
        return self._scatter(values, "max", "max", indices_are_sorted, unique_indices, mode)

    def apply(
        self,
        func: Callable[[Any], Any],
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: _Mode = None,
    ) -> Any:
        """`x` with the elementwise `func` applied at `idx` (once per index, like `ufunc.at`).

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.arange(3.0).at[jnp.array([1, 1])].apply(lambda v: v * 10)
          Array([  0., 100.,   2.], dtype=float32)
        """
        return _indexing.scatter_update(
            self.array,
            self.index,
            None,
            "apply",
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            func=func,
            name="x.at[idx].apply",
        )


def at(x: Any) -> _IndexUpdateHelper:
    """The `at` property of arrays and tracers."""
    return _IndexUpdateHelper(x)
