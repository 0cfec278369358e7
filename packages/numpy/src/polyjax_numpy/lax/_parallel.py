"""Collectives over named axes: `psum`, `all_gather`, `ppermute`, `axis_index`...

A collective combines the values that a function computes for the different
positions along a *named axis*: the axis that `vmap(f, axis_name="i")` maps
over (later also `pmap` and `shard_map` axes). `psum(x, "i")` is, for every
position, the sum of `x` over all positions of `i`.

Each collective is a primitive whose params name its axes (always a tuple:
`psum(x, ("i", "j"))` reduces over both). Its abstract evaluation asks core's
axis environment for the sizes, so an unbound name raises a `NameError`.

Under `vmap` a collective is batched by its rule in
`batching.axis_primitive_batchers`, which receives the mapped axis:

  - over the vmapped axis itself, the collective becomes ordinary array
    operations across the batch dimension: `psum` a `reduce_sum`, `all_gather`
    a transposition that makes the batch the gathered axis, `ppermute` a
    reordering of the batch, `axis_index` an `iota`;
  - over other axes only, it is elementwise along the batch dimension and is
    bound again, unchanged, for the enclosing transformation to handle;
  - over a tuple holding the vmapped axis and others, the rule does its part
    and binds the collective over the remaining names.

Inside a per-device program (`shard_map`, `pmap`), a collective over its
manual axes is lowered to a StableHLO collective (`all_reduce`, `all_gather`,
`reduce_scatter`, `all_to_all`, `collective_permute`; `axis_index` reads
`partition_id`). The replica groups come from the lowering's axis context
(`polyjax_interpreters.axis_context`), which the per-device map fills in with
its mesh's axes and device order; this module never sees a mesh.

In a `shard_map` body checked with `check_vma`, values' types record the
manual axes they vary over (`polyjax_core.vma`): the reductions remove their
axes, the other collectives add theirs, and `pvary` (JAX's
`pcast(..., to="varying")`, also inserted implicitly) adds its own. Under
`grad` there, `pvary` transposes to `psum` and `psum` to the identity.

Each primitive's rules are declared together at the end of the module.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import axis_env
from polyjax_core import vma as core_vma
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_map, tree_unflatten
from polyjax_interpreters import ad, batching, mlir
from polyjax_interpreters.axis_context import manual_axis_context, summing_transpose
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax import _reduced_casts
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._reductions import reduce_max, reduce_min, reduce_sum
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    concatenate,
    iota,
    reshape,
    slice_in_dim,
    transpose,
)

__all__ = [
    "all_gather",
    "all_gather_p",
    "all_to_all",
    "all_to_all_p",
    "axis_index",
    "axis_index_p",
    "axis_size",
    "pcast",
    "pmax",
    "pmax_p",
    "pmean",
    "pmin",
    "pmin_p",
    "ppermute",
    "ppermute_p",
    "pshuffle",
    "psum",
    "psum_p",
    "psum_scatter",
    "pvary_p",
    "reduce_scatter_p",
]

not_mapped = batching.not_mapped


# ---------------------------------------------------------------------------
# Helpers


def _names(axis_name: Any) -> tuple[Any, ...]:
    """Axis names as a tuple (a single name becomes a 1-tuple)."""
    if isinstance(axis_name, tuple | list):
        return tuple(axis_name)
    return (axis_name,)


def _size(names: Sequence[Any]) -> Any:
    """The product of the sizes of bound axes (1 for no names); NameError if unbound."""
    return axis_env.axis_size(tuple(names))


def _shape(x: Any) -> tuple[Any, ...]:
    return tuple(get_aval(x).shape)


def _canonical(axis: Any, ndim: int, what: str) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what} {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def _check_no_groups(axis_index_groups: Any) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups are not supported")


def _split(axis_data: batching.AxisData, names: tuple) -> tuple[tuple, tuple] | None:
    """`(before, after)`: the names around the vmapped axis, or None if it is not there."""
    if axis_data.name not in names:
        return None
    p = names.index(axis_data.name)
    return names[:p], names[p + 1 :]


def _varying(vma: frozenset, names: Sequence[Any]) -> frozenset:
    """``vma`` plus the named axes that shard_map's `check_vma` tracks (the collectives' rule).

    A collective's result differs between the positions of the axes it names
    (`all_gather` and `psum_scatter` included, as in JAX: their results are not
    typed as replicated); axes only vmap binds are not tracked.
    """
    return vma | (frozenset(names) & core_vma.checked_axes())


def _vma_of(x: Any) -> frozenset:
    return getattr(getattr(x, "aval", None), "vma", frozenset())


def _unsupported_impl(name: str):
    def impl(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"{name} over named axes {params.get('axes', params.get('axis_name'))} can only "
            "be evaluated under a transformation that maps over them (vmap; pmap and "
            "shard_map come with polyjax-sharding)"
        )

    return impl


def _merge(x: Any, axis: int) -> Any:
    """`x` with dimensions `axis` and `axis + 1` merged into one (row-major)."""
    s = _shape(x)
    return reshape(x, (*s[:axis], s[axis] * s[axis + 1], *s[axis + 2 :]))


def _unmerge(x: Any, axis: int, first: Any) -> Any:
    """`x` with dimension `axis` split into `(first, rest)`."""
    s = _shape(x)
    return reshape(x, (*s[:axis], first, s[axis] // first, *s[axis + 1 :]))


# ---------------------------------------------------------------------------
# psum, pmax, pmin: reductions over named axes


def _reduction_primitive(name: str) -> Primitive:
    p = Primitive(name)
    p.multiple_results = True
    return p


def _reduction_abstract_eval(*avals: Any, axes: tuple, axis_index_groups: Any) -> list:
    _size(axes)  # NameError for an unbound name
    # The result is the same at every position of the reduced axes.
    return [a.update(vma=a.vma - frozenset(axes)) for a in avals]


psum_p = _reduction_primitive("psum")
pmax_p = _reduction_primitive("pmax")
pmin_p = _reduction_primitive("pmin")


def _reduce(prim: Primitive, x: Any, axis_name: Any, axis_index_groups: Any) -> Any:
    names = _names(axis_name)
    _check_no_groups(axis_index_groups)
    leaves, tree = tree_flatten(x)
    size = _size(names)  # NameError before anything else
    if not any(isinstance(v, Tracer) for v in leaves):
        # Constants are the same at every position: known without binding anything.
        if prim is psum_p:
            return tree_unflatten(tree, [_scale(v, size) for v in leaves])
        return x
    if prim is psum_p:
        avals = [get_aval(v) for v in leaves]
        summed = [_reduced_casts.psum_unreduced(v, a, names) for v, a in zip(leaves, avals)]
        if all(y is not None for y in summed):  # partial sums (inside shard_map)
            return tree_unflatten(tree, summed)
    outs = prim.bind(*leaves, axes=names, axis_index_groups=axis_index_groups)
    return tree_unflatten(tree, outs)


def _scale(v: Any, size: Any) -> Any:
    if type(v) in (int, float, complex):
        return v * size
    return _ew.mul(v, size)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Sum of `x` over the named axis (or tuple of axes) `axis_name`.

    Args:
      x: a pytree of arrays.
      axis_name: a bound axis name, or a tuple of them.
      axis_index_groups: not supported (None).

    Returns:
      A pytree like `x`: at every position, the sum over all positions.

    Raises:
      NameError: an axis name is not bound.

    Example:
      >>> import numpy as np
      >>> from polyjax_interpreters.batching import vmap
      >>> print(vmap(lambda x: psum(x, "i"), axis_name="i")(np.arange(3.0)))
      [3. 3. 3.]
    """
    return _reduce(psum_p, x, axis_name, axis_index_groups)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Maximum of `x` over the named axis (or tuple of axes) `axis_name`."""
    return _reduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Minimum of `x` over the named axis (or tuple of axes) `axis_name`."""
    return _reduce(pmin_p, x, axis_name, axis_index_groups)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Mean of `x` over the named axis (or tuple of axes) `axis_name`.

    Integer inputs give floating-point means (true division), as in JAX.
    """
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = _size(_names(axis_name))
    return tree_map(lambda v: v / n, total)


_local_reductions = {psum_p: reduce_sum, pmax_p: reduce_max, pmin_p: reduce_min}


def _reduction_batcher(prim: Primitive):
    local = _local_reductions[prim]

    def rule(axis_data, vals, dims, *, axes, axis_index_groups):
        _check_no_groups(axis_index_groups)
        split = _split(axis_data, axes)
        if split is None:  # elementwise along our batch: the parent reduces
            return prim.bind(*vals, axes=axes, axis_index_groups=None), list(dims)
        before, after = split
        outs = []
        for x, d in zip(vals, dims):
            if d is not_mapped:
                outs.append(_scale(x, axis_data.size) if prim is psum_p else x)
            else:
                outs.append(local(x, (d,)))
        rest = before + after
        if rest:
            outs = prim.bind(*outs, axes=rest, axis_index_groups=None)
        return outs, [not_mapped] * len(outs)

    return rule


def _psum_jvp(primals: list, tangents: list, *, axes: tuple, axis_index_groups: Any):
    out = psum_p.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
    nonzero = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
    t_out: list[Any] = [ad.Zero(ad.tangent_aval(get_aval(o))) for o in out]
    if nonzero:
        summed = psum_p.bind(
            *(tangents[i] for i in nonzero), axes=axes, axis_index_groups=axis_index_groups
        )
        for i, t in zip(nonzero, summed):
            t_out[i] = t
    return out, t_out


def _psum_transpose(cts: list, *args: Any, axes: tuple, axis_index_groups: Any) -> list:
    # Under vmap the sum is the same value at every position; its cotangent
    # flows back to each position's input unchanged (JAX's "pbroadcast"
    # transpose). In a per-device program typed with varying axes (shard_map's
    # check_vma) the same holds: the operand varies over the axes (it was cast
    # with `pvary` if need be), and the `pvary`s' transposes do the summing.
    # Untyped (check_vma=False), each device's value reached every device's
    # sum, so the cotangents are summed again.
    if frozenset(axes) <= core_vma.checked_axes():
        return [
            ct if type(ct) is ad.Zero else core_vma.cast_to(ct, _vma_of(x))
            for ct, x in zip(cts, args)
        ]
    if summing_transpose(axes):
        nz = [i for i, ct in enumerate(cts) if type(ct) is not ad.Zero]
        out = list(cts)
        if nz:
            summed = psum_p.bind(*(cts[i] for i in nz), axes=axes, axis_index_groups=None)
            for i, s in zip(nz, summed):
                out[i] = s
        return out
    return list(cts)


def _pextremum_jvp(prim: Primitive):
    def rule(primals: list, tangents: list, *, axes: tuple, axis_index_groups: Any):
        out = prim.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
        t_out = []
        for x, t, m in zip(primals, tangents, out):
            if type(t) is ad.Zero:
                t_out.append(ad.Zero(t.aval))
                continue
            # The tangent of the positions reaching the extremum, averaged over ties.
            hit = _ew.convert_element_type(_ew.eq(x, m), get_aval(t).dtype)
            # Two psums: `count` depends on primals only, so that partial evaluation
            # keeps it known (the tangent is then linear: divided by a known count).
            (count,) = psum_p.bind(hit, axes=axes, axis_index_groups=axis_index_groups)
            (num,) = psum_p.bind(_ew.mul(t, hit), axes=axes, axis_index_groups=axis_index_groups)
            t_out.append(_ew.div(num, count))
        return out, t_out

    return rule


# ---------------------------------------------------------------------------
# axis_index, axis_size

axis_index_p = Primitive("axis_index")


def _axis_index_abstract_eval(*, axis_name: tuple) -> ShapedArray:
    _size(axis_name)
    return ShapedArray((), np.dtype(np.int32), vma=_varying(frozenset(), axis_name))


def axis_index(axis_name: Any) -> Any:
    """The position along the named axis `axis_name` (an int32 scalar).

    For a tuple of names, the position in the row-major flattening of those
    axes (the first name varies slowest).

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> vmap(lambda _: axis_index("i"), axis_name="i")(np.zeros(3))
      Array([0, 1, 2], dtype=int32)
    """
    names = _names(axis_name)
    _size(names)
    return axis_index_p.bind(axis_name=names)


def axis_size(axis_name: Any) -> Any:
    """The size of the named axis `axis_name` (the product of sizes for a tuple)."""
    return _size(_names(axis_name))


def _axis_index_batcher(axis_data, vals, dims, *, axis_name):
    split = _split(axis_data, axis_name)
    if split is None:
        return axis_index_p.bind(axis_name=axis_name), not_mapped
    before, after = split
    idx = iota(np.int32, axis_data.size)
    if before:
        idx = _ew.add(_ew.mul(axis_index_p.bind(axis_name=before), axis_data.size), idx)
    if after:
        idx = _ew.add(_ew.mul(idx, _size(after)), axis_index_p.bind(axis_name=after))
    return idx, 0


# ---------------------------------------------------------------------------
# all_gather

all_gather_p = Primitive("all_gather")


def _all_gather_abstract_eval(
    x: ShapedArray,
    *,
    all_gather_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> ShapedArray:
    _size(axis_name)
    s = list(x.shape)
    if tiled:
        s[all_gather_dimension] = s[all_gather_dimension] * axis_size
    else:
        s.insert(all_gather_dimension, axis_size)
    return ShapedArray(s, x.dtype, x.weak_type, _varying(x.vma, axis_name))


def all_gather(
    x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0, tiled: bool = False
) -> Any:
    """Gathers `x` from every position of the named axis.

    Args:
      x: a pytree of arrays.
      axis_name: a bound axis name, or a tuple of them (row-major order).
      axis_index_groups: not supported (None).
      axis: where the gathered values go: a new axis at this position, or
        with `tiled=True` concatenated along this existing axis.
      tiled: concatenate instead of stacking.

    Returns:
      At every position, the values of all positions stacked (or
      concatenated) along `axis`.

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> vmap(lambda x: all_gather(x, "i"), axis_name="i")(np.arange(2.0)).shape
      (2, 2)
    """
    names = _names(axis_name)
    _check_no_groups(axis_index_groups)
    size = _size(names)

    def gather(v: Any) -> Any:
        ndim = len(_shape(v))
        dim = _canonical(axis, ndim if tiled else ndim + 1, "all_gather axis")
        return all_gather_p.bind(
            v,
            all_gather_dimension=dim,
            axis_name=names,
            axis_index_groups=None,
            axis_size=size,
            tiled=bool(tiled),
        )

    return tree_map(gather, x)


def _all_gather_batcher(
    axis_data, vals, dims, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    (x,), (d,) = vals, dims
    axis = all_gather_dimension
    split = _split(axis_data, axis_name)
    if split is None:  # elementwise along our batch: gather with the batch in front
        x = batching.moveaxis(x, d, 0) if d is not not_mapped else x
        out = all_gather_p.bind(
            x,
            all_gather_dimension=axis + (d is not not_mapped),
            axis_name=axis_name,
            axis_index_groups=None,
            axis_size=axis_size,
            tiled=tiled,
        )
        return out, (0 if d is not not_mapped else not_mapped)
    before, after = split
    n = axis_data.size
    x = batching.bdim_at_front(x, d, n)  # (n, *s)
    s = _shape(x)[1:]
    # Stack the positions of the names after ours (they vary fastest), at `axis`.
    if after:
        y = all_gather_p.bind(
            x,
            all_gather_dimension=axis + 1,
            axis_name=after,
            axis_index_groups=None,
            axis_size=_size(after),
            tiled=False,
        )
    else:
        y = reshape(x, (n, *s[:axis], 1, *s[axis:]))
    # Our positions: the batch itself, moved next to them and merged.
    y = _merge(batching.moveaxis(y, 0, axis), axis)
    # Then the names before ours (slowest), concatenated in front.
    if before:
        y = all_gather_p.bind(
            y,
            all_gather_dimension=axis,
            axis_name=before,
            axis_index_groups=None,
            axis_size=_size(before),
            tiled=True,
        )
    if tiled:
        y = _merge(y, axis)
    return y, not_mapped


# ---------------------------------------------------------------------------
# psum_scatter (the reduce_scatter primitive)

reduce_scatter_p = Primitive("reduce_scatter")


def _reduce_scatter_abstract_eval(
    x: ShapedArray,
    *,
    scatter_dimension: int,
    axis_name: tuple,
    axis_index_groups: Any,
    axis_size: int,
    tiled: bool,
) -> ShapedArray:
    _size(axis_name)
    s = list(x.shape)
    if tiled:
        if s[scatter_dimension] % axis_size != 0:
            raise ValueError(
                f"psum_scatter: the size of scatter_dimension {scatter_dimension} "
                f"({s[scatter_dimension]}) must be divisible by the size of the named axes "
                f"{axis_name} ({axis_size})"
            )
        s[scatter_dimension] = s[scatter_dimension] // axis_size
    else:
        if s[scatter_dimension] != axis_size:
            raise ValueError(
                f"psum_scatter: the size of scatter_dimension {scatter_dimension} "
                f"({s[scatter_dimension]}) must equal the size of the named axes {axis_name} "
                f"({axis_size}) unless tiled=True"
            )
        del s[scatter_dimension]
    return ShapedArray(s, x.dtype, x.weak_type, _varying(x.vma, axis_name))


def psum_scatter(
    x: Any,
    axis_name: Any,
    *,
    scatter_dimension: int = 0,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Sums `x` over the named axis and gives each position its block of the sum.

    Args:
      x: a pytree of arrays.
      axis_name: a bound axis name, or a tuple of them (row-major order).
      scatter_dimension: the dimension split among the positions. Without
        `tiled` its size must equal the axis size and it is removed; with
        `tiled` it must be a multiple of it and each position keeps a block.
      axis_index_groups: not supported (None).
      tiled: keep the scattered dimension (as blocks).

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> vmap(lambda x: psum_scatter(x, "i"), axis_name="i")(np.ones((2, 2))).shape
      (2,)
    """
    names = _names(axis_name)
    _check_no_groups(axis_index_groups)
    size = _size(names)

    def scatter(v: Any) -> Any:
        dim = _canonical(scatter_dimension, len(_shape(v)), "psum_scatter scatter_dimension")
        return reduce_scatter_p.bind(
            v,
            scatter_dimension=dim,
            axis_name=names,
            axis_index_groups=None,
            axis_size=size,
            tiled=bool(tiled),
        )

    return tree_map(scatter, x)


def _reduce_scatter_batcher(
    axis_data, vals, dims, *, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    (x,), (d,) = vals, dims
    sd = scatter_dimension
    split = _split(axis_data, axis_name)
    if split is None:
        x = batching.moveaxis(x, d, 0) if d is not not_mapped else x
        out = reduce_scatter_p.bind(
            x,
            scatter_dimension=sd + (d is not not_mapped),
            axis_name=axis_name,
            axis_index_groups=None,
            axis_size=axis_size,
            tiled=tiled,
        )
        return out, (0 if d is not not_mapped else not_mapped)
    before, after = split
    n = axis_data.size
    # Untiled is tiled with blocks of one, whose dimension is dropped at the end.
    # Names before ours are the major part of the block index: scatter over them first.
    if before:
        if d is not not_mapped:
            x, d = batching.moveaxis(x, d, 0), 0
        x = reduce_scatter_p.bind(
            x,
            scatter_dimension=sd + (d is not not_mapped),
            axis_name=before,
            axis_index_groups=None,
            axis_size=_size(before),
            tiled=True,
        )
    # Ours: sum over the batch; position k keeps block k, so the blocks become the batch.
    total = _scale(x, n) if d is not_mapped else reduce_sum(x, (d,))
    y = _unmerge(total, sd, n)  # (..., n, block, ...): batched at sd
    if after:
        y = reduce_scatter_p.bind(
            y,
            scatter_dimension=sd + 1,
            axis_name=after,
            axis_index_groups=None,
            axis_size=_size(after),
            tiled=True,
        )
    if not tiled:
        s = _shape(y)
        y = reshape(y, (*s[: sd + 1], *s[sd + 2 :]))
    return y, sd


def _all_gather_transpose(
    ct, x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    return [
        reduce_scatter_p.bind(
            ad.instantiate_zeros(ct),
            scatter_dimension=all_gather_dimension,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
            axis_size=axis_size,
            tiled=tiled,
        )
    ]


def _reduce_scatter_transpose(
    ct, x, *, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    return [
        all_gather_p.bind(
            ad.instantiate_zeros(ct),
            all_gather_dimension=scatter_dimension,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
            axis_size=axis_size,
            tiled=tiled,
        )
    ]


# ---------------------------------------------------------------------------
# all_to_all (the primitive always has tiled semantics; untiled reshapes around it)

all_to_all_p = Primitive("all_to_all")


def _all_to_all_abstract_eval(
    x: ShapedArray,
    *,
    split_axis: int,
    concat_axis: int,
    axis_name: tuple,
    axis_index_groups: Any,
    tiled: bool,
) -> ShapedArray:
    n = _size(axis_name)
    s = list(x.shape)
    if s[split_axis] % n != 0:
        raise ValueError(
            f"The size of all_to_all split_axis ({s[split_axis]}) has to be divisible by the "
            f"size of the named axis {axis_name} ({n})"
        )
    s[split_axis] = s[split_axis] // n
    s[concat_axis] = s[concat_axis] * n
    return ShapedArray(s, x.dtype, x.weak_type, _varying(x.vma, axis_name))


def all_to_all(
    x: Any,
    axis_name: Any,
    split_axis: int,
    concat_axis: int,
    *,
    axis_index_groups: Any = None,
    tiled: bool = False,
) -> Any:
    """Splits `x` along `split_axis`, sends block k to position k, concatenates what arrives.

    Args:
      x: a pytree of arrays.
      axis_name: a bound axis name.
      split_axis: the dimension split into one block per position. Without
        `tiled` its size must equal the axis size and it is removed.
      concat_axis: where the received blocks go (in the order of their
        sources): without `tiled`, a new dimension at this position of the
        result; with `tiled`, concatenated along this dimension.
      axis_index_groups: not supported (None).
      tiled: keep `split_axis` and concatenate along `concat_axis`.

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> x = np.arange(4.0).reshape(2, 2)  # position j holds row j
      >>> vmap(lambda r: all_to_all(r, "i", 0, 0), axis_name="i")(x)  # the transpose
      Array([[0., 2.],
             [1., 3.]], dtype=float32)
    """
    names = _names(axis_name)
    _check_no_groups(axis_index_groups)
    n = _size(names)

    def a2a(v: Any) -> Any:
        ndim = len(_shape(v))
        sa = _canonical(split_axis, ndim, "all_to_all split_axis")
        ca = _canonical(concat_axis, ndim, "all_to_all concat_axis")
        if not tiled:
            if _shape(v)[sa] != n:
                raise ValueError(
                    f"all_to_all requires the size of the mapped axis axis_name to equal "
                    f"x.shape[split_axis], but they are {n} and {_shape(v)[sa]}."
                )
            # Insert the new axis first, so that the tiled primitive fills it.
            if sa < ca:
                ca += 1
                v = _expand(v, ca)
            elif ca < sa:
                v = _expand(v, ca)
                sa += 1
        out = all_to_all_p.bind(
            v,
            split_axis=sa,
            concat_axis=ca,
            axis_name=names,
            axis_index_groups=None,
            tiled=bool(tiled),
        )
        if not tiled and sa != ca:
            s = _shape(out)
            out = reshape(out, (*s[:sa], *s[sa + 1 :]))
        return out

    return tree_map(a2a, x)


def _expand(v: Any, axis: int) -> Any:
    s = _shape(v)
    return reshape(v, (*s[:axis], 1, *s[axis:]))


def _all_to_all_batcher(
    axis_data, vals, dims, *, split_axis, concat_axis, axis_name, axis_index_groups, tiled
):
    (x,), (d,) = vals, dims
    split = _split(axis_data, axis_name)
    if split is None:
        x = batching.moveaxis(x, d, 0) if d is not not_mapped else x
        b = d is not not_mapped
        out = all_to_all_p.bind(
            x,
            split_axis=split_axis + b,
            concat_axis=concat_axis + b,
            axis_name=axis_name,
            axis_index_groups=None,
            tiled=tiled,
        )
        return out, (0 if b else not_mapped)
    if len(axis_name) > 1:
        return _all_to_all_tuple(axis_data, x, d, split_axis, concat_axis, axis_name), 0
    n = axis_data.size
    sa, ca = split_axis, concat_axis
    x = batching.bdim_at_front(x, d, n)  # (J, *s): J = source position
    xr = _unmerge(x, 1 + sa, n)  # (J, *s[:sa], K, block, *s[sa+1:]): K = destination
    ndim = len(_shape(xr))
    # Per-example dims of the result (in xr's numbering), with J inserted before `ca`.
    per_example = [1 + i for i in range(sa)] + [2 + sa] + [2 + i for i in range(sa + 1, ndim - 2)]
    per_example.insert(ca, 0)
    out = transpose(xr, (1 + sa, *per_example))  # (K, ..., J, concat dim, ...)
    return _merge(out, 1 + ca), 0


# ---------------------------------------------------------------------------
# Permuting collectives over a tuple of names. The positions of the other names
# are batched by other traces, so a position's source is not a static slice of
# our batch: gather from every position, then let each select its source with a
# mask built from its index along all the names.


def _gather_all(axis_data: Any, x: Any, d: Any, names: tuple) -> Any:
    """`(N, *s)`: the values of all positions of `names`, the same at every position."""
    out, _ = _all_gather_batcher(
        axis_data,
        [x],
        [d],
        all_gather_dimension=0,
        axis_name=names,
        axis_index_groups=None,
        axis_size=_size(names),
        tiled=False,
    )
    return out


def _select(g: Any, axis: int, idx: Any, table: np.ndarray | None) -> Any:
    """`g` indexed along `axis` at `table[idx[b]]` for each batch entry b (batch in front).

    `g` is the same for the whole batch; `idx` holds each entry's index (n,);
    `table` maps it to a position along `axis` (-1: zeros), None is the identity.
    """
    gshape = _shape(g)
    size = gshape[axis]
    n = _shape(idx)[0]
    positions = iota(np.int32, size)
    if table is not None:
        # table[idx] without a gather: select the table entry whose index matches.
        hit = _ew.eq(
            broadcast_in_dim(idx, (n, len(table)), (0,)),
            broadcast_in_dim(iota(np.int32, len(table)), (n, len(table)), (1,)),
        )
        entries = broadcast_in_dim(np.asarray(table, np.int32), (n, len(table)), (1,))
        zeros = np.zeros((n, len(table)), np.int32)
        idx = reduce_sum(_ew.select_n(hit, zeros, entries), (1,))
    mask = _ew.eq(
        broadcast_in_dim(idx, (n, size), (0,)), broadcast_in_dim(positions, (n, size), (1,))
    )
    full = (n, *gshape)
    mask = broadcast_in_dim(mask, full, (0, 1 + axis))
    dtype = get_aval(g).dtype
    values = broadcast_in_dim(g, full, tuple(range(1, len(full))))
    zero = broadcast_in_dim(_ew.convert_element_type(0, dtype), full, ())
    picked = _ew.select_n(mask, zero, values)
    if dtype == np.bool_:
        return reduce_max(picked, (1 + axis,))
    return reduce_sum(picked, (1 + axis,))


def _composite_index(axis_data: Any, names: tuple) -> Any:
    return _axis_index_batcher(axis_data, [], [], axis_name=names)[0]


def _ppermute_tuple(axis_data: Any, x: Any, d: Any, names: tuple, perm: tuple) -> Any:
    n_all = _size(names)
    table = np.full(n_all, -1, np.int32)
    for src, dst in perm:
        table[dst] = src
    g = _gather_all(axis_data, x, d, names)
    return _select(g, 0, _composite_index(axis_data, names), table)


def _all_to_all_tuple(
    axis_data: Any, x: Any, d: Any, split_axis: int, concat_axis: int, names: tuple
) -> Any:
    n_all = _size(names)
    g = _gather_all(axis_data, x, d, names)  # (J, *s): J = source position
    g = _unmerge(g, 1 + split_axis, n_all)  # (J, *s[:sa], K, block, ...): K = destination
    out = _select(g, 1 + split_axis, _composite_index(axis_data, names), None)
    # out: (batch, J, *per-example dims); J goes before the concat dim and merges with it.
    ndim = len(_shape(out))
    per_example = list(range(2, ndim))
    per_example.insert(concat_axis, 1)
    return _merge(transpose(out, (0, *per_example)), 1 + concat_axis)


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    return [
        all_to_all_p.bind(
            ad.instantiate_zeros(ct),
            split_axis=concat_axis,
            concat_axis=split_axis,
            axis_name=axis_name,
            axis_index_groups=axis_index_groups,
            tiled=tiled,
        )
    ]


# ---------------------------------------------------------------------------
# ppermute, pshuffle

ppermute_p = Primitive("ppermute")


def _ppermute_abstract_eval(x: ShapedArray, *, axis_name: tuple, perm: tuple) -> ShapedArray:
    _size(axis_name)
    return x.update(vma=_varying(x.vma, axis_name))


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Sends `x` from position `src` to position `dst` for each pair of `perm`.

    Positions that receive nothing get zeros.

    Args:
      x: a pytree of arrays.
      axis_name: a bound axis name.
      perm: `(src, dst)` pairs; sources and destinations are each unique.

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> shift = [(i, (i + 1) % 3) for i in range(3)]
      >>> vmap(lambda x: ppermute(x, "i", shift), axis_name="i")(np.arange(3.0))
      Array([2., 0., 1.], dtype=float32)
    """
    names = _names(axis_name)
    n = _size(names)
    perm = tuple((operator.index(s), operator.index(t)) for s, t in perm)
    srcs, dsts = [s for s, _ in perm], [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    for i in srcs + dsts:
        if not 0 <= i < n:
            raise ValueError(
                f"ppermute perm indices must be between 0 and the axis size {n}, got {perm}."
            )
    return tree_map(lambda v: ppermute_p.bind(v, axis_name=names, perm=perm), x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """Position `i` receives `x` from position `perm[i]` (`perm` is a permutation)."""
    perm = [operator.index(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def _ppermute_batcher(axis_data, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    split = _split(axis_data, axis_name)
    if split is None:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    if len(axis_name) > 1:
        return _ppermute_tuple(axis_data, x, d, axis_name, perm), 0
    n = axis_data.size
    source = {dst: src for src, dst in perm}
    if d is not_mapped and len(source) == n:
        return x, not_mapped  # every position receives the same value
    x = batching.bdim_at_front(x, d, n)
    if all(source.get(k) == k for k in range(n)):
        return x, 0
    s = _shape(x)[1:]
    rows = []
    for k in range(n):
        src = source.get(k)
        if src is None:
            zero = _ew.convert_element_type(0, get_aval(x).dtype)
            rows.append(broadcast_in_dim(zero, (1, *s), ()))
        else:
            rows.append(slice_in_dim(x, src, src + 1, axis=0))
    return concatenate(rows, 0), 0


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((dst, src) for src, dst in perm)
    return [ppermute_p.bind(ad.instantiate_zeros(ct), axis_name=axis_name, perm=inverse)]


# ---------------------------------------------------------------------------
# Lowering over the manual axes of a per-device program


def _groups_attr(groups: np.ndarray) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.ascontiguousarray(groups, np.int64))


def _channel() -> ir.Attribute:
    # type 1: DEVICE_TO_DEVICE (XLA numbers the channels of an SPMD program itself).
    return hlo.ChannelHandle.get(handle=1, type=1)


def _scalar_type(aval: Any) -> ir.Type:
    return mlir.aval_to_ir_type(ShapedArray((), aval.dtype))


def _reducer_region(region: ir.Region, aval: Any, combine: Any) -> None:
    scalar = _scalar_type(aval)
    block = region.blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.ReturnOp([combine(*block.arguments)])


def _combiner(prim: Primitive, dtype: np.dtype) -> Any:
    if dtype == np.bool_:
        return {psum_p: hlo.OrOp, pmax_p: hlo.OrOp, pmin_p: hlo.AndOp}[prim]
    return {psum_p: hlo.AddOp, pmax_p: hlo.MaxOp, pmin_p: hlo.MinOp}[prim]


def _all_reduce_lowering(prim: Primitive):
    def rule(ctx: Any, *args: Any, axes: tuple, axis_index_groups: Any) -> list:
        groups = manual_axis_context(ctx, axes, prim.name).replica_groups(axes)
        outs = []
        for x, aval in zip(args, ctx.avals_in):
            op = hlo.AllReduceOp(
                [x.type],
                [x],
                _groups_attr(groups),
                channel_handle=_channel(),
                use_global_device_ids=True,
            )
            _reducer_region(op.regions[0], aval, _combiner(prim, aval.dtype))
            outs.append(op.results[0])
        return outs

    return rule


def _with_unit_dim(ctx: Any, x: Any, aval: Any, dim: int) -> Any:
    """``x`` reshaped with a new dimension of size 1 at ``dim``."""
    s = list(aval.shape)
    s.insert(dim, 1)
    return mlir.reshape(ctx, x, ShapedArray(s, aval.dtype))


def _all_gather_lowering(
    ctx, x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    groups = manual_axis_context(ctx, axis_name, "all_gather").replica_groups(axis_name)
    (aval,), (out,) = ctx.avals_in, ctx.avals_out
    if not tiled:
        x = _with_unit_dim(ctx, x, aval, all_gather_dimension)
    op = hlo.AllGatherOp(
        [mlir.aval_to_ir_type(out)],
        [x],
        all_gather_dimension,
        _groups_attr(groups),
        channel_handle=_channel(),
        use_global_device_ids=True,
    )
    return [op.results[0]]


def _reduce_scatter_lowering(
    ctx, x, *, scatter_dimension, axis_name, axis_index_groups, axis_size, tiled
):
    groups = manual_axis_context(ctx, axis_name, "psum_scatter").replica_groups(axis_name)
    (aval,), (out,) = ctx.avals_in, ctx.avals_out
    tiled_out = (
        out
        if tiled
        else ShapedArray(
            (*out.shape[:scatter_dimension], 1, *out.shape[scatter_dimension:]), out.dtype
        )
    )
    op = hlo.ReduceScatterOp(
        mlir.aval_to_ir_type(tiled_out),
        x,
        scatter_dimension,
        _groups_attr(groups),
        channel_handle=_channel(),
        use_global_device_ids=True,
    )
    _reducer_region(op.regions[0], aval, _combiner(psum_p, aval.dtype))
    y = op.results[0]
    return [y if tiled else mlir.reshape(ctx, y, out)]


def _all_to_all_lowering(ctx, x, *, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
    groups = manual_axis_context(ctx, axis_name, "all_to_all").replica_groups(axis_name)
    op = hlo.AllToAllOp(
        [x],
        split_axis,
        concat_axis,
        groups.shape[1],
        _groups_attr(groups),
        channel_handle=_channel(),
        results=[mlir.aval_to_ir_type(ctx.avals_out[0])],
    )
    return [op.results[0]]


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    pairs = manual_axis_context(ctx, axis_name, "ppermute").permute_pairs(axis_name, perm)
    op = hlo.CollectivePermuteOp(
        x, _groups_attr(pairs), channel_handle=_channel(), results=[x.type]
    )
    return [op.results[0]]


def _axis_index_lowering(ctx, *, axis_name):
    table = manual_axis_context(ctx, axis_name, "axis_index").axis_index_table(axis_name)
    i32 = ShapedArray((), np.dtype(np.int32))
    pid = hlo.PartitionIdOp().result
    pid = hlo.ConvertOp(mlir.aval_to_ir_type(i32), pid).result
    entry = hlo.DynamicSliceOp(mlir.ir_constant(table), [pid], slice_sizes=[1]).result
    return [mlir.reshape(ctx, entry, i32)]


# ---------------------------------------------------------------------------
# pcast(to="varying"): marks a value as varying over axes (an identity).

pvary_p = Primitive("pvary")
pvary_p.multiple_results = True


def _pvary_abstract_eval(*avals: Any, axes: tuple) -> list:
    _size(axes)  # NameError for an unbound name
    return [a.update(vma=_varying(a.vma, axes)) for a in avals]


def _identity(*xs: Any, axes: tuple) -> list:
    return list(xs)


def _identity_lowering(ctx: Any, *xs: Any, axes: tuple) -> list:
    return list(xs)


def _pvary_batcher(axis_data, vals, dims, *, axes):
    rest = tuple(a for a in axes if a != axis_data.name)
    if not rest:  # varying along the batch: every value already is
        return list(vals), list(dims)
    return pvary_p.bind(*vals, axes=rest), list(dims)


def _pvary_transpose(cts: list, *xs: Any, axes: tuple) -> list:
    # A value every device holds, used where values differ: each device's use sent
    # back a cotangent, and the value's cotangent is their sum (JAX's rule). Over
    # axes not checked (vmap's, check_vma=False) the cast means nothing.
    summed = tuple(a for a in axes if a in core_vma.checked_axes())
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    return psum_p.bind(*cts, axes=summed, axis_index_groups=None) if summed else cts


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Changes how a value is typed across the named axes (JAX's ``pcast``).

    ``to="varying"`` marks ``x`` as possibly different at each position of
    ``axis_name`` (what `shard_map`'s `check_vma` tracks); the value itself
    is unchanged. Inside a checked `shard_map` body, ``to="unreduced"`` makes a
    value varying over the axes their partial sums (``{U:b}``: the value is the
    sum over the devices), ``to="reduced"`` an invarying one reduced (``{R:b}``),
    and ``to="varying"`` a reduced one varying (docs/explicit-sharding.md).

    Raises:
      ValueError: ``to`` is not one of JAX's values, or no cast goes from the
        value's state over the axes to ``to`` (``Unsupported pcast from=..., to=...``).

    Example:
      >>> from polyjax_interpreters.batching import vmap
      >>> from polyjax_numpy import numpy as jnp
      >>> vmap(lambda v: pcast(v, "i", to="varying"), axis_name="i")(jnp.arange(2.0))
      Array([0., 1.], dtype=float32)
    """
    if to not in ("unreduced", "reduced", "varying"):
        raise ValueError(
            "Got unexpected `to` value. Allowed `to` values are: "
            "{'unreduced', 'reduced', 'varying'}"
        )
    names = _names(axis_name)
    checked = frozenset(names) & core_vma.checked_axes()
    if to != "varying" and checked != frozenset(names):
        # (outside a checked shard_map body every value is invarying over any axis)
        raise ValueError(f"Unsupported pcast from=invarying, to={to!r}")
    _size(names)  # NameError for an unbound name
    leaves, tree = tree_flatten(x)
    if not leaves:
        return x
    avals = [get_aval(v) for v in leaves]
    summed = ("reduced", "unreduced")
    if to != "varying" or any(_reduced_casts.pcast_state(a, names) in summed for a in avals):
        return tree_unflatten(
            tree, [_reduced_casts.cast(v, a, names, to) for v, a in zip(leaves, avals)]
        )
    for v in leaves:
        _check_not_varying(v, names, checked)
    return tree_unflatten(tree, pvary_p.bind(*leaves, axes=names))


def _check_not_varying(x: Any, names: tuple, checked: frozenset) -> None:
    """JAX's errors for a cast to varying over (some) axes the value already varies over."""
    already = _vma_of(x) & checked
    if not already:
        return
    if already == checked:
        raise ValueError("Unsupported pcast from=varying, to='varying'")
    raise ValueError(
        "jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
        "unreduced, reduced or invarying state of the input. Got input type: "
        f"{get_aval(x)}, axes: {names} and input state: {{'invarying', 'varying'}}"
    )


# ---------------------------------------------------------------------------
# Declarations: each primitive's rules in one place. Eagerly, outside a
# per-device program or vmap, the collectives have no meaning (`_unsupported_impl`).
# `own_vma`: they compute the varying manual axes of their results themselves;
# `vma_operand_axes`: the communicating ones first cast their operands to vary
# over their axes (`polyjax_core.vma`), as JAX does.

for _p, _jvp, _transpose in (
    (psum_p, _psum_jvp, _psum_transpose),
    (pmax_p, _pextremum_jvp(pmax_p), None),
    (pmin_p, _pextremum_jvp(pmin_p), None),
):
    define_rules(
        _p,
        _reduction_abstract_eval,
        _all_reduce_lowering(_p),
        impl=_unsupported_impl(_p.name),
        jvp=_jvp,
        transpose=_transpose,
        axis_batching=_reduction_batcher(_p),
    )
    _p.own_vma = True
psum_p.vma_operand_axes = lambda params: params["axes"]

define_rules(
    axis_index_p,
    _axis_index_abstract_eval,
    _axis_index_lowering,
    impl=_unsupported_impl("axis_index"),
    axis_batching=_axis_index_batcher,
)
axis_index_p.own_vma = True


def _define_collective(
    p: Primitive, name: str, abstract_eval: Any, lowering: Any, batcher: Any, transpose: Any
) -> None:
    """The rules of a collective that is linear in its operands and varies over its axes."""
    define_rules(p, abstract_eval, lowering, impl=_unsupported_impl(name), axis_batching=batcher)
    ad.deflinear2(p, transpose)
    p.own_vma = True
    p.vma_operand_axes = lambda params: _names(params["axis_name"])


_define_collective(
    all_gather_p,
    "all_gather",
    _all_gather_abstract_eval,
    _all_gather_lowering,
    _all_gather_batcher,
    _all_gather_transpose,
)
_define_collective(
    reduce_scatter_p,
    "psum_scatter",
    _reduce_scatter_abstract_eval,
    _reduce_scatter_lowering,
    _reduce_scatter_batcher,
    _reduce_scatter_transpose,
)
_define_collective(
    all_to_all_p,
    "all_to_all",
    _all_to_all_abstract_eval,
    _all_to_all_lowering,
    _all_to_all_batcher,
    _all_to_all_transpose,
)
_define_collective(
    ppermute_p,
    "ppermute",
    _ppermute_abstract_eval,
    _ppermute_lowering,
    _ppermute_batcher,
    _ppermute_transpose,
)

define_rules(
    pvary_p,
    _pvary_abstract_eval,
    _identity_lowering,
    impl=_identity,
    axis_batching=_pvary_batcher,
)
ad.deflinear2(pvary_p, _pvary_transpose)
pvary_p.own_vma = True
# The cast that makes an operation's operands vary over the same axes (`polyjax_core.vma`).
core_vma.register_pvary(lambda x, axes: pvary_p.bind(x, axes=axes)[0])
# The sum of partial sums (`_reduced_casts`) is an all-reduce, as psum's.
mlir.register_lowering(
    _reduced_casts.unreduced_psum_p,
    lambda ctx, x, *, axes: _all_reduce_lowering(psum_p)(ctx, x, axes=axes, axis_index_groups=None),
)
