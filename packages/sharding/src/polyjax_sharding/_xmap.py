"""`xmap`: named axes, vectorized or partitioned over mesh resources.

JAX's removed ``jax.experimental.maps.xmap``, revived on `vmap` and
`shard_map` (docs/xmap.md describes the semantics and the differences).
`in_axes` names dimensions of the inputs; a named dimension disappears from
the shapes `fun` sees and becomes a named axis that collectives (`psum`,
`all_gather`, ...) refer to. `out_axes` puts named axes back into the outputs.

Each named axis is mapped either by `vmap` (no resources: vectorized on one
device) or, when `axis_resources` assigns it a mesh axis of the `Mesh` in
context, by `shard_map` over that mesh axis (one position per device).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core import axis_env
from polyjax_core.abstract_values import ShapeDtypeStruct, get_aval, shaped_abstractify
from polyjax_core.mesh import AxisType
from polyjax_core.mesh_context import get_concrete_mesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import eval_shape
from polyjax_numpy.lax import expand_dims, squeeze, transpose
from polyjax_sharding._mesh import Mesh
from polyjax_sharding._shard_map import shard_map

__all__ = ["xmap"]


class XmapOutputError(ValueError):
    """An output varies over a named axis that its `out_axes` do not mention."""


def _is_axes_leaf(x: Any) -> bool:
    # {position: name} (integer keys; a dict with other keys is a pytree node), or
    # a list of names, None and ...
    if isinstance(x, dict):
        return bool(x) and all(isinstance(k, int) for k in x)
    return isinstance(x, list) and _is_names_list(x)


def _is_names_list(x: list) -> bool:
    return all(v is Ellipsis or v is None or isinstance(v, str) for v in x)


def _normalize(spec: Any, ndim: int, what: str) -> dict[int, str]:
    """``{dimension: name}`` of one leaf, from a dict or a list with ``...``."""
    if isinstance(spec, dict):
        out = {}
        for pos, name in spec.items():
            pos = operator.index(pos)
            if not -ndim <= pos < ndim:
                raise ValueError(
                    f"xmap {what} {spec} names dimension {pos} of a value of rank {ndim}"
                )
            out[pos % ndim] = name
        return out
    items = list(spec)
    if items.count(Ellipsis) > 1:
        raise ValueError(f"xmap {what} {spec}: at most one ... is allowed")
    if Ellipsis in items:
        k = items.index(Ellipsis)
        head, tail = items[:k], items[k + 1 :]
    else:
        head, tail = items, []
        if len(items) != ndim:
            raise ValueError(
                f"xmap {what} {spec} names {len(items)} dimensions of a value of rank {ndim}; "
                "end the list with ... to leave the others positional"
            )
    if len(head) + len(tail) > ndim:
        raise ValueError(f"xmap {what} {spec} names more dimensions than the rank {ndim}")
    out = {i: n for i, n in enumerate(head) if n is not None}
    out.update({ndim - len(tail) + i: n for i, n in enumerate(tail) if n is not None})
    return out


def _leaf_specs(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One axes spec (dict or list) per leaf of ``tree`` from a pytree prefix."""
    if _is_axes_leaf(prefix):
        return [prefix] * len(tree_flatten(tree)[0])
    specs, spec_tree = tree_flatten(prefix, is_leaf=_is_axes_leaf)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"xmap {what} must be a pytree prefix of the "
            f"{'arguments' if what == 'in_axes' else 'outputs'} whose leaves are dicts "
            f"{{position: name}} or lists of names with ...; got {prefix!r}: {e}"
        ) from None
    out: list[Any] = []
    for s, sub in zip(specs, subtrees):
        out += [s] * len(tree_flatten(sub)[0])
    return out


def _check_unique(named: dict[int, str], what: str) -> None:
    names = list(named.values())
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"xmap {what}: the named axis {sorted(dup)[0]!r} names two dimensions")


def xmap(
    fun: Callable[..., Any],
    in_axes: Any,
    out_axes: Any,
    *,
    axis_sizes: dict[str, int] | None = None,
    axis_resources: dict[str, Any] | None = None,
    donate_argnums: Any = (),
    backend: str | None = None,
) -> Callable[..., Any]:
    """Maps ``fun`` over named axes of its arguments.

    Args:
      fun: the function, written for one position of every named axis; it may
        use collectives over the named axes.
      in_axes: a pytree prefix of the positional arguments whose leaves are
        ``{position: name}`` dicts or lists of names (``None`` for a
        positional dimension) with ``...`` standing for the remaining
        positional dimensions.
      out_axes: the same for the outputs: where each named axis goes.
      axis_sizes: sizes of named axes that no input has.
      axis_resources: named axis -> the mesh axis (of the `Mesh` in context)
        it is partitioned over; axes without resources are vectorized.
      donate_argnums: accepted for compatibility; no buffer is donated.
      backend: accepted for compatibility (the mesh decides the devices).

    Returns:
      The mapped function.

    Raises:
      ValueError: a named axis has no size, sizes disagree, an output varies
        over a named axis its ``out_axes`` omit (reduce it first, e.g. with
        ``psum``), or a resource is not a mesh axis.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.lax import psum
      >>> f = xmap(lambda x: psum(x, "i"), in_axes=["i", ...], out_axes=[...])
      >>> f(np.ones((3, 2)))
      Array([3., 3.], dtype=float32)
    """
    sizes_given = dict(axis_sizes or {})
    resources = dict(axis_resources or {})
    del donate_argnums, backend

    @functools.wraps(fun)
    def mapped(*args: Any) -> Any:
        leaves, in_tree = tree_flatten(args)
        in_named = []
        for spec, x in zip(_leaf_specs(in_axes, args, "in_axes"), leaves):
            named = _normalize(spec, len(get_aval(x).shape), "in_axes")
            _check_unique(named, "in_axes")
            in_named.append(named)
        sizes = _sizes(leaves, in_named, sizes_given)
        order = list(sizes)
        mesh, res_names = _resources(resources, order, sizes)
        vec_names = [n for n in order if n not in res_names]
        # Named dimensions to the front, resourced names first, each in `order`.
        front_order = [*res_names, *vec_names]
        fronted = [_to_front(x, named, front_order) for x, named in zip(leaves, in_named)]
        present = [[n for n in front_order if n in named.values()] for named in in_named]
        out_tree, out_named = _output_axes(fun, args, in_tree, leaves, in_named, sizes, out_axes)
        out_present = [[n for n in front_order if n in named.values()] for named in out_named]

        def per_position(*flat: Any) -> list[Any]:
            out = fun(*tree_unflatten(in_tree, flat))
            return tree_flatten(out)[0]

        inner = per_position
        for i in reversed(range(len(vec_names))):
            # At level i, the names of the outer levels (and the resources) are mapped.
            here = set(vec_names[i:])
            inner = _vmap_level(
                inner,
                vec_names[i],
                sizes[vec_names[i]],
                [[n for n in p if n in here] for p in present],
                [[n for n in p if n in here] for p in out_present],
            )
        if res_names:
            inner = _shard_level(inner, mesh, res_names, present, out_present)
        outs = inner(*fronted)
        final = [_from_front(y, named, p) for y, named, p in zip(outs, out_named, out_present)]
        return tree_unflatten(out_tree, final)

    return mapped


def _sizes(leaves: Sequence[Any], in_named: Sequence[dict], given: dict) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for x, named in zip(leaves, in_named):
        shape = get_aval(x).shape
        for dim, name in named.items():
            if name in sizes and sizes[name] != shape[dim]:
                raise ValueError(
                    f"xmap: the named axis {name!r} has inconsistent sizes {sizes[name]} and "
                    f"{shape[dim]} among the inputs"
                )
            sizes.setdefault(name, shape[dim])
    for name, size in given.items():
        if name in sizes and sizes[name] != size:
            raise ValueError(
                f"xmap: axis_sizes gives {name!r} the size {size}, but an input has it of size "
                f"{sizes[name]}"
            )
        sizes.setdefault(name, operator.index(size))
    return sizes


def _resources(resources: dict, order: list, sizes: dict) -> tuple[Mesh | None, list[str]]:
    if not resources:
        return None, []
    mesh = get_concrete_mesh()
    if not isinstance(mesh, Mesh) or mesh.empty:
        raise ValueError(
            "xmap with axis_resources needs a Mesh in context (`with mesh:` or set_mesh)"
        )
    used: dict[Any, str] = {}
    for name, res in resources.items():
        if isinstance(res, tuple | list):
            if len(res) != 1:
                raise NotImplementedError(
                    f"xmap: the named axis {name!r} is assigned several mesh axes {tuple(res)}; "
                    "polyjax maps a named axis to one mesh axis"
                )
            res = res[0]
        if res not in mesh.shape:
            raise ValueError(
                f"xmap: axis_resources maps {name!r} to {res!r}, which is not an axis of the "
                f"mesh {tuple(mesh.axis_names)}"
            )
        if res in used:
            raise ValueError(
                f"xmap: the mesh axis {res!r} is the resource of both {used[res]!r} and {name!r}"
            )
        used[res] = name
        if name in sizes and sizes[name] != mesh.shape[res]:
            raise ValueError(
                f"xmap: the named axis {name!r} of size {sizes[name]} is partitioned over the "
                f"mesh axis {res!r} of size {mesh.shape[res]}; polyjax needs them equal (one "
                "position per device)"
            )
        if name not in sizes:
            sizes[name] = mesh.shape[res]
            order.append(name)
    # The mesh again, with each resource axis named after the named axis it carries.
    renamed = tuple(used.get(a, a) for a in mesh.axis_names)
    clash = [a for a in mesh.axis_names if a not in used and a in resources]
    if clash:
        raise ValueError(f"xmap: the mesh axis {clash[0]!r} is also a named axis")
    # Auto axes: xmap places its operands itself, so explicit types (which shard_map
    # checks against in_specs) do not apply to its inner shard_map.
    new_mesh = Mesh(mesh.devices, renamed, axis_types=(AxisType.Auto,) * len(renamed))
    return new_mesh, [n for n in order if n in resources]


def _to_front(x: Any, named: dict[int, str], front_order: list[str]) -> Any:
    dims = [d for n in front_order for d, m in named.items() if m == n]
    rest = [d for d in range(len(get_aval(x).shape)) if d not in dims]
    perm = (*dims, *rest)
    return x if perm == tuple(range(len(perm))) else transpose(x, perm)


def _from_front(y: Any, named: dict[int, str], present: list[str]) -> Any:
    """Moves the leading named dimensions of an output to their `out_axes` positions."""
    ndim = len(get_aval(y).shape)
    current: list[Any] = [*present, *range(ndim - len(present))]
    positional = iter(range(ndim - len(present)))
    final = [named[d] if d in named else next(positional) for d in range(ndim)]
    perm = tuple(current.index(label) for label in final)
    return y if perm == tuple(range(ndim)) else transpose(y, perm)


def _output_axes(fun, args, in_tree, leaves, in_named, sizes, out_axes):
    """The output structure and each output leaf's ``{dimension: name}`` (final ranks)."""
    per_pos = []
    for x, named in zip(leaves, in_named):
        a = shaped_abstractify(x)
        shape = tuple(s for d, s in enumerate(a.shape) if d not in named)
        per_pos.append(ShapeDtypeStruct(shape, a.dtype))
    with axis_env.extend_axis_env(list(sizes.items())):
        shapes = eval_shape(lambda *flat: fun(*tree_unflatten(in_tree, flat)), *per_pos)
    out_leaves, out_tree = tree_flatten(shapes)
    specs = _leaf_specs(out_axes, shapes, "out_axes")
    out_named = []
    for spec, o in zip(specs, out_leaves):
        if isinstance(spec, dict):
            rank = len(o.shape) + len(spec)
        else:
            rank = len(o.shape) + len([v for v in spec if isinstance(v, str)])
        named = _normalize(spec, rank, "out_axes")
        _check_unique(named, "out_axes")
        for n in named.values():
            if n not in sizes:
                raise ValueError(f"xmap out_axes names {n!r}, which is not a named axis")
        out_named.append(named)
    return out_tree, out_named


def _vmap_level(inner, name, size, present, out_present):
    """``inner`` vmapped over the leading dimension of the leaves that have ``name``."""
    in_axes = tuple(0 if name in p else None for p in present)
    out_axes = [0 if name in p else None for p in out_present]

    def level(*flat: Any) -> list[Any]:
        try:
            return vmap(inner, in_axes=in_axes, out_axes=out_axes, axis_name=name, axis_size=size)(
                *flat
            )
        except XmapOutputError:
            raise
        except ValueError as e:
            if "but out_axes is None" not in str(e):
                raise
            raise XmapOutputError(
                f"xmap: an output varies over the named axis {name!r}, which its out_axes do "
                f"not mention; reduce it first (e.g. with psum(x, {name!r})) or add {name!r} to "
                "out_axes"
            ) from None

    return level


def _shard_level(inner, mesh, res_names, present, out_present):
    in_specs = [PartitionSpec(*[n for n in res_names if n in p]) for p in present]
    out_specs = [PartitionSpec(*[n for n in res_names if n in p]) for p in out_present]
    in_count = [len([n for n in res_names if n in p]) for p in present]
    out_count = [len([n for n in res_names if n in p]) for p in out_present]

    def body(*flat: Any) -> list[Any]:
        blocks = [squeeze(x, tuple(range(k))) if k else x for x, k in zip(flat, in_count)]
        outs = inner(*blocks)
        return [expand_dims(y, tuple(range(k))) if k else y for y, k in zip(outs, out_count)]

    def call(*flat: Any) -> list[Any]:
        try:
            return shard_map(
                body, mesh=mesh, in_specs=tuple(in_specs), out_specs=_Fixed(out_specs)
            )(*flat)
        except ValueError as e:
            if "can't be statically inferred" not in str(e):
                raise
            raise XmapOutputError(
                "xmap: an output varies over a named axis with resources that its out_axes do "
                f"not mention ({', '.join(map(repr, res_names))}); reduce it first (e.g. with "
                "psum) or add the axis to out_axes"
            ) from None

    return call


class _Fixed:
    """Flat output specs handed to shard_map as they are."""

    def __init__(self, specs: list):
        self.specs = specs

    def resolve(self) -> list:
        return self.specs
