"""`smap`: `shard_map` over one mesh axis, with vmap-style `in_axes` / `out_axes`.

``smap(f, in_axes=0, out_axes=0, axis_name="x")`` is ``shard_map(f,
in_specs=P("x"), out_specs=P("x"), axis_names={"x"})``: each integer axis
becomes a spec naming `axis_name` at that position (None: not split), and
the other mesh axes stay with the partitioner. Unlike `vmap`, the mapped
dimension stays in the per-device blocks (each holds a slice of it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from polyjax_core.abstract_values import get_aval
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import prefix_subtrees, tree_flatten, tree_map, tree_unflatten
from polyjax_sharding._shard_map import shard_map

__all__ = ["smap"]


class _InferType:
    """`smap`'s default `in_axes`: each argument's axis split by `axis_name` in its type."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _InferType()


def _spec(axis: Any, axis_name: Any, what: str, ndim: int | None = None) -> PartitionSpec:
    """The spec splitting dimension `axis` over `axis_name` (`ndim` resolves a negative one)."""
    if axis is None:
        return PartitionSpec()
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"smap: {what} must be ints or None, got {axis!r}")
    if axis < 0:
        if ndim is None:
            raise ValueError(
                f"smap: {what} {axis} is negative; give the output axis as a non-negative int"
            )
        if axis < -ndim:
            raise ValueError(f"smap: {what} {axis} is out of range for a value of rank {ndim}")
        axis += ndim
    elif ndim is not None and axis >= ndim:
        raise ValueError(f"smap: {what} {axis} is out of range for a value of rank {ndim}")
    return PartitionSpec(*([None] * axis), axis_name)


def _inferred_axis(x: Any, axis_name: Any) -> int | None:
    """The dimension of `x` whose type-level sharding names `axis_name` (None: not split)."""
    spec = getattr(getattr(get_aval(x), "sharding", None), "spec", None) or ()
    for dim, entry in enumerate(spec):
        if entry == axis_name or (isinstance(entry, tuple) and axis_name in entry):
            return dim
    return None


def _specs(prefix: Any, tree: Any, axis_name: Any, what: str, with_rank: bool) -> Any:
    """One spec per leaf of `tree`, from `prefix` (an int/None or a pytree prefix of them)."""
    axes_flat, axes_tree = tree_flatten(prefix, is_leaf=lambda x: x is None)
    subtrees = prefix_subtrees(axes_tree, tree, lambda: f"smap: {what} {prefix!r}")
    specs = [
        tree_map(
            lambda x, axis=axis: _spec(
                axis, axis_name, what, len(get_aval(x).shape) if with_rank else None
            ),
            sub,
        )
        for axis, sub in zip(axes_flat, subtrees)
    ]
    return tree_unflatten(axes_tree, specs)


def smap(
    f: Callable[..., Any] | None = None,
    /,
    *,
    in_axes: Any = Infer,
    out_axes: Any,
    axis_name: Any,
) -> Any:
    """Maps `f` over the blocks of one mesh axis (a single-axis `shard_map`).

    Args:
      f: the per-block function (may be omitted: `smap(...)` is then a decorator).
      in_axes: an int or None for every argument, or a tuple with one (or a pytree
        prefix of them) per positional argument: the dimension split over
        `axis_name` (None: each block gets the whole value). By default, the
        dimension each argument's type (explicit sharding) splits over `axis_name`.
      out_axes: a non-negative int, None, or a pytree prefix of them for the outputs:
        where the blocks are concatenated (None: every block holds the same value).
      axis_name: the mesh axis (of the mesh in context) the function is manual over.

    Returns:
      The mapped function.

    Raises:
      TypeError: an axis is not an int or None.
      ValueError: an input axis is out of range, an output axis is negative, or a
        `shard_map` error (no mesh in context, an indivisible dimension, ...).

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import lax
      >>> from polyjax_sharding import AxisType, make_mesh, set_mesh
      >>> with set_mesh(make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))):
      ...     smap(lambda a: lax.psum(a, "x"), in_axes=0, out_axes=None, axis_name="x")(
      ...         np.ones(2, np.float32))
      Array([1., 1.], dtype=float32)
    """
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    out_specs = (
        _spec(out_axes, axis_name, "out_axes")
        if out_axes is None or isinstance(out_axes, int)
        else tree_map(
            lambda a: _spec(a, axis_name, "out_axes"), out_axes, is_leaf=lambda x: x is None
        )
    )

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        if in_axes is Infer:
            prefix: Any = tuple(tree_map(lambda x: _inferred_axis(x, axis_name), a) for a in args)
        elif isinstance(in_axes, int) or in_axes is None:
            prefix = (in_axes,) * len(args)
        elif isinstance(in_axes, tuple | list) and len(in_axes) == len(args):
            prefix = tuple(in_axes)
        else:
            raise ValueError(
                f"smap: in_axes must be an int, None, or a tuple with one entry per "
                f"argument ({len(args)}), got {in_axes!r}"
            )
        in_specs = _specs(prefix, args, axis_name, "in_axes", with_rank=True)
        return shard_map(
            f, in_specs=in_specs, out_specs=out_specs, axis_names=frozenset({axis_name})
        )(*args)

    return mapped
