"""`ragged_dot` and `ragged_dot_general`: matrix products over groups of consecutive rows.

A ragged dot multiplies consecutive slices of one operand, whose lengths
`group_sizes` are known only at run time, each by its own matrix (mixture of
experts layers, grouped GEMMs). With `g` groups (a static count) polyjax
computes it as `g` masked `dot_general`s summed (or stacked), so every rule of
`dot_general` and `select_n` applies and the result is exact on CPU; JAX binds
one `ragged_dot_general` primitive instead (polyjax has no such primitive
object, as docs/lax.md records).

JAX's three modes:
  - the ragged axis of `lhs` is a free (non-contracting) axis and `rhs` has a
    group axis: the rows of group `i` are multiplied by `rhs`'s slice `i`;
    rows after the last group give zeros;
  - the ragged axis is a contracting axis and `rhs` has no group axis: the
    result gets a leading group axis, slice `i` contracting only group `i`;
  - the ragged axis is a batch axis (and `rhs` has no group axis): each batch
    element is multiplied by its own `rhs` element whatever its group, so the
    result is the plain batched `dot_general` (JAX 0.10.2 gives the same on
    CPU, rows past the last group included).

Example:
  >>> import numpy as np
  >>> lhs = np.ones((3, 2), np.float32)
  >>> rhs = np.stack([np.ones((2, 1)), 2 * np.ones((2, 1))]).astype(np.float32)
  >>> ragged_dot(lhs, rhs, np.array([1, 2], np.int32))
  Array([[2.],
         [4.],
         [4.]], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._dot import dot_general
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcasted_iota,
    concatenate,
    expand_dims,
    full_like,
)
from polyjax_numpy.lax._slicing import index_in_dim

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The ragged, group and dot axes of a `ragged_dot_general`.

    Attributes:
      dot_dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch,
        rhs_batch))`, as `dot_general`'s (rhs axes count the group axis).
      lhs_ragged_dimensions: the one ragged axis of `lhs`.
      rhs_group_dimensions: `rhs`'s group axis, or empty when the ragged axis is
        a contracting (or batch) axis.
    """

    dot_dimension_numbers: Any
    lhs_ragged_dimensions: Sequence[int]
    rhs_group_dimensions: Sequence[int]


def _axes(xs: Any) -> tuple[int, ...]:
    return tuple(operator.index(a) for a in xs)


def _group_masks(group_sizes: Any, n: int) -> list[Any]:
    """One boolean vector of length `n` per group: the rows the group covers."""
    sizes = ew.convert_element_type(group_sizes, np.int32)
    rows = broadcasted_iota(np.int32, (n,), 0)
    masks, start = [], np.int32(0)
    for i in range(get_aval(group_sizes).shape[0]):
        end = ew.add(start, index_in_dim(sizes, i, 0, keepdims=False))
        masks.append(ew.bitwise_and(ew.ge(rows, start), ew.lt(rows, end)))
        start = end
    return masks


def _masked(x: Any, mask: Any, axis: int) -> Any:
    aval = get_aval(x)
    where = broadcast_in_dim(mask, aval.shape, (axis,))
    return ew.select_n(where, full_like(x, 0), x)


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """A `dot_general` in which one axis of `lhs` is split into groups of `group_sizes`.

    Args:
      lhs: an array.
      rhs: an array.
      group_sizes: a 1-D integer array, one size per group (consecutive slices
        of `lhs`'s ragged axis, from its start).
      ragged_dot_dimension_numbers: the axes (see `RaggedDotDimensionNumbers`).
      precision: as `dot_general`'s.
      preferred_element_type: as `dot_general`'s.
      group_offset: not supported (JAX reserves it for sharded groups).
      out_sharding: only None.

    Returns:
      With a group axis in `rhs`: the `dot_general` of `lhs` with `rhs` less
      its group axis, each row of the ragged axis multiplied by its group's
      slice (zeros past the last group). With a ragged contracting axis: a
      leading axis of one `dot_general` per group. With a ragged batch axis: the
      batched `dot_general`.

    Raises:
      TypeError: `group_sizes` is not integer, or its length is not the number
        of groups.
      NotImplementedError: N-D `group_sizes`, `group_offset`.

    Example:
      >>> import numpy as np
      >>> dn = RaggedDotDimensionNumbers((((0,), (0,)), ((), ())), (0,), ())
      >>> ragged_dot_general(np.ones((3, 2), np.float32), np.ones((3, 1), np.float32),
      ...                    np.array([1, 2], np.int32), dn).shape
      (2, 2, 1)
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported.")
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: only out_sharding=None is supported.")
    gs = get_aval(group_sizes)
    if not np.issubdtype(gs.dtype, np.integer):
        raise TypeError(
            "ragged_dot_general requires that group_sizes.dtype is subtype of np.integer."
        )
    if gs.ndim != 1:
        raise NotImplementedError(
            f"ragged_dot_general: group_sizes must be 1-D here, got shape {gs.shape}."
        )
    dn = ragged_dot_dimension_numbers
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = (
        tuple(_axes(a) for a in pair) for pair in dn.dot_dimension_numbers
    )
    ragged, group = _axes(dn.lhs_ragged_dimensions), _axes(dn.rhs_group_dimensions)
    if len(ragged) != 1 or len(group) > 1:
        raise TypeError(
            "ragged_dot_general: give one lhs ragged dimension and at most one rhs group "
            f"dimension, got {ragged} and {group}."
        )
    (r,) = ragged
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    masks = _group_masks(group_sizes, lhs_aval.shape[r])

    def dot(x, y, dims):
        return dot_general(x, y, dims, precision, preferred_element_type)

    if group:
        (gd,) = group
        if r in lhs_contract or r in lhs_batch:
            raise TypeError("ragged_dot_general: with an rhs group dimension the lhs ragged "
                            "dimension must be a free dimension.")  # fmt: skip
        if rhs_aval.shape[gd] != gs.shape[0]:
            raise TypeError(
                f"expected rhs group dimension size to be {gs.shape[0]}, got {rhs_aval.shape[gd]}."
            )
        shift = lambda axes: tuple(a - (a > gd) for a in axes)  # noqa: E731
        dims = ((lhs_contract, shift(rhs_contract)), (lhs_batch, shift(rhs_batch)))
        terms = [
            dot(_masked(lhs, m, r), index_in_dim(rhs, i, gd, keepdims=False), dims)
            for i, m in enumerate(masks)
        ]
        out = terms[0]
        for t in terms[1:]:
            out = ew.add(out, t)
        return out
    dims = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
    if r in lhs_batch:
        return dot(lhs, rhs, dims)  # each batch element has its own rhs: groups change nothing
    if r not in lhs_contract:
        raise TypeError(
            "ragged_dot_general: without an rhs group dimension the lhs ragged dimension "
            "must be a contracting or batch dimension."
        )
    parts = [expand_dims(dot(_masked(lhs, m, r), rhs, dims), (0,)) for m in masks]
    return concatenate(parts, 0)


_RAGGED_DOT = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Multiplies the rows of `lhs`, group by group, by the matrices of `rhs`.

    Args:
      lhs: an `(m, k)` array.
      rhs: a `(g, k, n)` array, one matrix per group.
      group_sizes: a `(g,)` integer array: group `i` is the next `group_sizes[i]`
        rows of `lhs` (rows past the last group give zeros).
      precision: as `dot_general`'s.
      preferred_element_type: as `dot_general`'s.
      group_offset: not supported.
      out_sharding: only None.

    Returns:
      An `(m, n)` array.

    Example:
      >>> import numpy as np
      >>> ragged_dot(np.ones((2, 1), np.float32), np.ones((2, 1, 1), np.float32),
      ...            np.array([2, 0], np.int32)).shape
      (2, 1)
    """
    return ragged_dot_general(
        lhs, rhs, group_sizes, _RAGGED_DOT, precision, preferred_element_type,
        group_offset, out_sharding,
    )  # fmt: skip
