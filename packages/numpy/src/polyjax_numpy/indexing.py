"""`ds` and `Slice`: a slice given by its start and size, where the start may be traced.

``x[ds(i, n)]`` takes ``n`` elements from ``i`` even when ``i`` is traced (a
Python slice ``x[i:i + n]`` needs static bounds). Indexing treats a `Slice` as
`lax.dynamic_slice` does its start: negative starts count from the end once,
and the slice is moved back into the array when it would run past the end
(strided slices clamp each index).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from polyjax_core.tree_util import register_pytree_node

__all__ = ["Slice", "ds"]


class Slice:
    """``size`` elements from ``start``, ``stride`` apart (`start` may be traced).

    Attributes:
      start: the first index: an int or an integer scalar (concrete or traced).
      size: how many elements (a static int).
      stride: the step between them (a static positive int).
    """

    __slots__ = ("start", "size", "stride")

    def __init__(self, start: Any, size: int, stride: int = 1):
        try:
            size, stride = operator.index(size), operator.index(stride)
        except TypeError:
            raise TypeError(
                f"ds: size and stride must be static integers, got size={size!r}, stride={stride!r}"
            ) from None
        if size < 0:
            raise ValueError(f"ds: size must be non-negative, got {size}")
        if stride < 1:
            raise ValueError(f"ds: stride must be positive, got {stride}")
        self.start, self.size, self.stride = start, size, stride

    def __repr__(self) -> str:
        return f"Slice(start={self.start!r}, size={self.size}, stride={self.stride})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Slice) or not self.is_static_start():
            return NotImplemented
        return (self.start, self.size, self.stride) == (other.start, other.size, other.stride)

    __hash__ = None  # type: ignore[assignment]  # a mutable-looking value, as in JAX

    def is_static_start(self) -> bool:
        """Whether `start` is a Python or NumPy int (not an array or tracer)."""
        return isinstance(self.start, int | np.integer)

    @staticmethod
    def from_slice(s: slice, size: int) -> Slice:
        """The `Slice` taking what the static slice `s` takes of an axis of `size`."""
        start, stop, step = s.indices(size)
        if step < 1:
            raise ValueError(f"Slice.from_slice: the step must be positive, got {s}")
        return Slice(start, len(range(start, stop, step)), step)


def _flatten(s: Slice) -> tuple[tuple, tuple]:
    # A static start is part of the structure, a dynamic one a child (it may be traced).
    if s.is_static_start():
        return (), (s.start, s.size, s.stride)
    return (s.start,), (None, s.size, s.stride)


def _unflatten(aux: tuple, children: tuple) -> Slice:
    start, size, stride = aux
    return Slice(children[0] if children else start, size, stride)


register_pytree_node(Slice, _flatten, _unflatten)


def ds(start: Any, size: int | None = None, stride: int | None = None) -> slice | Slice:
    """A slice from `start` of `size` elements, usable with a traced `start`.

    ``ds(None)`` is ``:``, ``ds(n)`` is ``:n``, ``ds(i, n)`` is ``i:i+n`` and
    ``ds(i, n, s)`` is ``i:i+n*s:s``, but `i` may be traced. Out of range, the
    slice is moved back into the array (as `lax.dynamic_slice` does).

    Args:
      start: the first index (an int, or an integer scalar that may be traced); with
        no `size`, the size (the start is 0). None: the whole axis.
      size: how many elements (a static int).
      stride: the step between them (a static positive int; default 1).

    Returns:
      A `Slice` (or the plain ``slice(None)`` for ``ds(None)``).

    Raises:
      TypeError: `size` or `stride` is not a static int.
      ValueError: a negative size, or a stride below 1.

    Example:
      >>> import polyjax
      >>> import polyjax.numpy as jnp
      >>> x = jnp.arange(10)
      >>> polyjax.jit(lambda x, i: x[polyjax.ds(i, 3)])(x, 2)
      Array([2, 3, 4], dtype=int32)
    """
    if start is None:
        return slice(None)
    if size is None:
        start, size = 0, start
    return Slice(start, size, 1 if stride is None else stride)
