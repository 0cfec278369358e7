"""``out_sharding=`` of the contractions (`dot`, `matmul`, `einsum`) in explicit mode.

A contraction built of several lax operations gives its result the requested
sharding in two steps: each inner ``dot_general`` is asked for a replicated
result (which settles a contraction over a sharded dimension, an error
otherwise; unreduced over the axes the request leaves unreduced), then the
result is resharded to the requested sharding. The
inner request is a ``dot_general`` parameter, so transformations that rebind
the equation see it. (docs/explicit-sharding.md)
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from polyjax_core import mesh_context
from polyjax_core.mesh import AbstractMesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_numpy.lax import _sharding_constraint

__all__ = ["finish", "inner", "requesting"]

_inner: contextvars.ContextVar[Any] = contextvars.ContextVar("inner_out_sharding", default=None)


def _replicated_like(out_sharding: Any) -> Any:
    """Replicated, and unreduced over the axes ``out_sharding`` leaves unreduced (so
    that the inner contraction over them stays a partial sum, as asked)."""
    mesh = getattr(out_sharding, "mesh", None)
    mesh = mesh_context.get_abstract_mesh() if mesh is None else mesh.abstract_mesh
    spec = getattr(out_sharding, "spec", out_sharding)
    unreduced = getattr(spec, "unreduced", frozenset())
    return mesh_context.abstract_sharding(mesh, PartitionSpec(unreduced=unreduced))


@contextlib.contextmanager
def requesting(out_sharding: Any) -> Iterator[None]:
    """Inner contractions in the block ask for replicated results (if ``out_sharding``)."""
    if out_sharding is None:
        yield
        return
    token = _inner.set(_replicated_like(out_sharding))
    try:
        yield
    finally:
        _inner.reset(token)


def inner() -> Any:
    """The ``out_sharding`` an inner ``dot_general`` gets now (None: none)."""
    return _inner.get()


def _says_nothing(out_sharding: Any) -> bool:
    """A sharding over a mesh with no devices that splits nothing: what
    ``typeof(x).sharding`` is for an array outside explicit mode (libraries pass it
    on as ``out_sharding``). It asks for no layout, as in JAX."""
    mesh = getattr(out_sharding, "mesh", None)
    spec = getattr(out_sharding, "spec", None)
    return (
        isinstance(mesh, AbstractMesh) and spec is not None and all(entry is None for entry in spec)
    )


def finish(x: Any, out_sharding: Any) -> Any:
    """``x`` resharded to ``out_sharding`` (unchanged for None or a sharding that says
    nothing, `_says_nothing`)."""
    if out_sharding is None or _says_nothing(out_sharding):
        return x
    return _sharding_constraint.reshard(x, out_sharding)
