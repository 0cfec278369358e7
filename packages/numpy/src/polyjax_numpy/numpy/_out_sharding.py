"""``out_sharding=`` of the composite numpy and random functions in explicit mode.

`finish` reshards a result to the requested sharding (creation functions).
`replicated_inside` is the pattern of the functions JAX computes on replicated
operands (the samplers, `repeat`, `percentile`, `bincount`): with an
``out_sharding``, split operands are made replicated, the function runs, and
its result is resharded, so its values are those of the call without it.

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
import functools
from collections.abc import Iterator
from typing import Any

from polyjax_core import mesh_context
from polyjax_core.aval_sharding import ShardingTypeError, entries_of
from polyjax_core.mesh import AbstractMesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import tree_map
from polyjax_numpy.lax import _sharding_constraint

__all__ = ["check_device", "finish", "inner", "replicated_inside", "requesting"]

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


def _replicated_for(out_sharding: Any) -> Any:
    """The replicated layout over ``out_sharding``'s mesh (a bare spec: the context's)."""
    mesh = getattr(out_sharding, "mesh", None)
    if mesh is None:
        return PartitionSpec()
    return mesh_context.spec_to_sharding(PartitionSpec(), mesh)


def _unsplit(x: Any, replicated: Any) -> Any:
    aval = getattr(x, "aval", None)
    if aval is None or not any(entries_of(aval)):
        return x
    return _sharding_constraint.reshard(x, replicated)


def _check_replicated(fun_name: str, out_sharding: Any) -> None:
    spec = getattr(out_sharding, "spec", out_sharding)
    if any(entry is not None for entry in spec):
        raise ShardingTypeError(
            f"out_sharding passed to `jnp.{fun_name}` can only be fully replicated or fully "
            f"unreduced along all mesh axes, got {out_sharding}"
        )


def replicated_inside(fn: Any = None, *, replicated_only: bool = False) -> Any:
    """Decorator: ``fn`` takes ``out_sharding=`` as JAX's samplers (`repeat`, ...) do.

    ``fn`` declares the keyword (for its signature and docs) but never sees a
    value: with one, its split operands are resharded to replicated first and
    its result to ``out_sharding`` after, so the values equal the call without
    it. None (or a sharding that says nothing) calls ``fn`` unchanged.
    ``replicated_only``: an ``out_sharding`` that splits the result is JAX's
    `ShardingTypeError` (`bincount`).
    """
    if fn is None:
        return functools.partial(replicated_inside, replicated_only=replicated_only)

    @functools.wraps(fn)
    def wrapper(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        if out_sharding is None or _says_nothing(out_sharding):
            return fn(*args, **kwargs)
        if replicated_only:
            _check_replicated(fn.__name__, out_sharding)
        replicated = _replicated_for(out_sharding)
        args, kwargs = tree_map(lambda x: _unsplit(x, replicated), (args, kwargs))
        return finish(fn(*args, **kwargs), out_sharding)

    return wrapper


def check_device(device: Any, out_sharding: Any) -> None:
    """JAX's error for a creation function given both ``device`` and ``out_sharding``."""
    if device is not None and out_sharding is not None:
        raise ValueError(
            "Only one of `device` or `out_sharding` can be set. Got "
            f"device={device} and out_sharding={out_sharding}"
        )
