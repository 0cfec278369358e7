"""polyjax.ops: reductions over segments, as in ``jax.ops``.

`segment_sum(data, segment_ids, num_segments)` adds the rows of `data` that
share a segment id: ``out[s] = sum(data[i] for i where segment_ids[i] == s)``,
and likewise for `segment_prod`, `segment_max` and `segment_min`. An empty
segment gets the reduction's identity (0, 1, the dtype's lowest or highest
value, -inf/inf for floats). Ids outside `[0, num_segments)`, negative ones
included, are dropped. Each is one scatter (`.at[ids].add/mul/max/min`), so
they differentiate and batch like those.

Example:
  >>> import numpy as np
  >>> from polyjax import ops
  >>> ops.segment_sum(np.arange(4.0, dtype=np.float32), np.array([0, 0, 1, 2]), 3)
  Array([1., 2., 3.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax import numpy as jnp
from polyjax_core.tracing import concrete_or_error

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _segment(
    kind: str,
    data: Any,
    segment_ids: Any,
    num_segments: int | None,
    indices_are_sorted: bool,
    unique_indices: bool,
    bucket_size: int | None,
    mode: Any,
) -> Any:
    data, ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise TypeError(f"segment_{kind}: segment_ids must be integers, got {ids.dtype}.")
    if ids.ndim != 1 or data.ndim < 1 or data.shape[0] != ids.shape[0]:
        raise ValueError(
            f"segment_{kind}: segment_ids must be 1-D with one id per row of data, got "
            f"shapes {ids.shape} and {data.shape}."
        )
    if num_segments is None:
        # Needs concrete ids (a ConcretizationTypeError under jit, as in JAX).
        concrete = concrete_or_error(np.asarray, ids, "segment_ids with num_segments=None")
        num_segments = int(np.max(concrete, initial=-1)) + 1
    num_segments = int(num_segments)
    # Negative ids are dropped, not counted from the end.
    ids = jnp.where(ids < 0, num_segments, ids)
    out = jnp.full((num_segments, *data.shape[1:]), _identity(kind, data.dtype), data.dtype)
    scatter = getattr(out.at[ids], {"sum": "add", "prod": "multiply"}.get(kind, kind))
    if bucket_size is not None and ids.shape[0]:
        # Reduce bucket by bucket and combine: the same result, smaller scatters.
        partial = [
            _segment(kind, data[i : i + bucket_size], ids[i : i + bucket_size], num_segments,
                     indices_are_sorted, unique_indices, None, mode)
            for i in range(0, ids.shape[0], bucket_size)
        ]  # fmt: skip
        combine = {"sum": jnp.add, "prod": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum}
        result = partial[0]
        for p in partial[1:]:
            result = combine[kind](result, p)
        return result
    return scatter(
        data,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode="drop" if mode is None else mode,
    )


def _identity(kind: str, dtype: Any) -> Any:
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if jnp.issubdtype(dtype, jnp.inexact):
        return -np.inf if kind == "max" else np.inf
    if dtype == np.bool_:
        return kind == "min"
    info = jnp.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _doc(kind: str, identity: str) -> str:
    return f"""The {kind} of the rows of `data` in each segment.

    Args:
      data: an array whose leading axis is segmented.
      segment_ids: one integer id per row of `data`; ids outside
        `[0, num_segments)` are dropped.
      num_segments: the number of segments (None: `max(segment_ids) + 1`, which
        needs concrete ids).
      indices_are_sorted: whether the ids are sorted (a hint for the scatter).
      unique_indices: whether the ids are unique (a hint for the scatter).
      bucket_size: reduce this many rows at a time, then combine (same result).
      mode: the scatter's out-of-bounds mode (None: drop).

    Returns:
      An array of shape `(num_segments, *data.shape[1:])`; an empty segment
      holds {identity}.

    Raises:
      TypeError: the ids are not integers.
      ValueError: the ids are not one per row of `data`.
    """


def _public(kind: str, noun: str, identity: str) -> Any:
    """The public `segment_<kind>`: the shared signature over `_segment(kind, ...)`."""

    def segment(
        data: Any,
        segment_ids: Any,
        num_segments: int | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        bucket_size: int | None = None,
        mode: Any = None,
    ) -> Any:
        args = (num_segments, indices_are_sorted, unique_indices, bucket_size, mode)
        return _segment(kind, data, segment_ids, *args)

    segment.__name__ = segment.__qualname__ = f"segment_{kind}"
    segment.__doc__ = _doc(noun, identity)
    return segment


segment_sum = _public("sum", "sum", "0")
segment_prod = _public("prod", "product", "1")
segment_max = _public("max", "maximum", "-inf (the lowest value for integers)")
segment_min = _public("min", "minimum", "inf (the highest value for integers)")
