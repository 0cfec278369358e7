"""Switching mesh axes between Explicit and Auto for a part of a program.

Explicit mode (docs/explicit-sharding.md) types every value's sharding; some
code is easier left to the compiler. ``auto_axes(f, out_sharding=...)`` runs
``f`` with the mesh axes made ``Auto`` (its operands' types forget those axes)
and gives its results the explicit sharding asked for; ``explicit_axes(f,
in_sharding=...)`` is the converse, for explicit code called from Auto code.
Both change the mesh in context (``set_mesh``) for the extent of ``f``.

Example:
  >>> import numpy as np, polyjax
  >>> from polyjax.sharding import PartitionSpec as P
  >>> mesh = polyjax.make_mesh((1,), ("x",))
  >>> with polyjax.sharding.set_mesh(mesh):
  ...     y = auto_axes(lambda a: a * 2, out_sharding=P("x"))(np.ones(2, np.float32))
  >>> polyjax.typeof(y)
  ShapedArray(float32[2@x])
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core.mesh import AxisType
from polyjax_core.mesh_context import get_set_mesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_numpy.lax import reshard
from polyjax_sharding._mesh import Mesh, set_mesh
from polyjax_sharding._named_sharding import NamedSharding

__all__ = ["auto_axes", "explicit_axes", "reshard"]


def _context_mesh(api: str) -> Mesh:
    mesh = get_set_mesh()
    if mesh is None:
        raise ValueError(f"{api} needs a mesh in context: call it under `set_mesh(mesh)`.")
    return mesh


def _retyped(mesh: Mesh, axes: Any, frm: AxisType, to: AxisType) -> Mesh:
    if axes is None:
        axes = [n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is frm]
    elif isinstance(axes, str):
        axes = [axes]
    types = {n: t for n, t in zip(mesh.axis_names, mesh.axis_types)}
    for a in axes:
        if a not in types:
            raise ValueError(f"axis {a!r} is not an axis of the mesh {mesh}")
        types[a] = to
    return mesh.update(axis_types=tuple(types[n] for n in mesh.axis_names))


def _put(tree: Any, mesh: Mesh, specs: Any) -> Any:
    """Each leaf of ``tree`` laid out over ``mesh`` as ``specs`` (a spec or one per leaf),
    or, for ``specs`` None, as it is (its own spec) over ``mesh``."""
    leaves, treedef = tree_flatten(tree)
    if specs is None or isinstance(specs, (PartitionSpec, NamedSharding)):
        specs = [specs] * len(leaves)
    else:
        specs, _ = tree_flatten(specs, is_leaf=lambda s: isinstance(s, PartitionSpec))
    out = []
    for x, s in zip(leaves, specs):
        if s is None:
            typed = getattr(getattr(x, "aval", None), "aval_sharding", None)
            s = PartitionSpec() if typed is None else typed.spec
        if isinstance(s, NamedSharding):
            s = s.spec
        out.append(reshard(x, NamedSharding(mesh, s)))
    return tree_unflatten(treedef, out)


def auto_axes(
    fun: Callable[..., Any], *, out_sharding: Any, axes: str | Sequence[str] | None = None
) -> Callable[..., Any]:
    """``fun`` run with mesh axes ``axes`` (default: every Explicit one) made Auto.

    Args:
      fun: the function.
      out_sharding: a `PartitionSpec` (or `NamedSharding`), or a pytree of them
        matching ``fun``'s outputs: the results' explicit shardings.
      axes: the axes to make Auto.

    Returns:
      The wrapped function.

    Raises:
      ValueError: no mesh is set, or an axis is not the mesh's.
    """

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        mesh = _context_mesh("auto_axes")
        inner = _retyped(mesh, axes, AxisType.Explicit, AxisType.Auto)
        with set_mesh(inner):
            args, kwargs = _put((args, kwargs), inner, None)
            out = fun(*args, **kwargs)
        return _put(out, mesh, out_sharding)

    return wrapped


def explicit_axes(
    fun: Callable[..., Any], *, in_sharding: Any, axes: str | Sequence[str] | None = None
) -> Callable[..., Any]:
    """``fun`` run with mesh axes ``axes`` (default: every Auto one) made Explicit.

    Args:
      fun: the function.
      in_sharding: a `PartitionSpec`, or a pytree of them matching the positional
        arguments: how the arguments are typed inside.
      axes: the axes to make Explicit.

    Returns:
      The wrapped function; its results are typed over the caller's mesh again.
    """

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        mesh = _context_mesh("explicit_axes")
        inner = _retyped(mesh, axes, AxisType.Auto, AxisType.Explicit)
        with set_mesh(inner):
            args = _put(args, inner, in_sharding)
            out = fun(*args)
        return _put(out, mesh, None)

    return wrapped
