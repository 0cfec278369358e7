"""The current mesh, readable from every layer.

``polyjax.set_mesh(mesh)`` (polyjax-sharding) installs a concrete mesh for the
current thread; lower layers read it here without knowing what a concrete
mesh is: `get_abstract_mesh` gives its axes (for shape and sharding rules),
`get_concrete_mesh` the object itself, and `spec_to_sharding` turns a bare
`PartitionSpec` into a sharding over it (jit's ``in_shardings=P('x')``) with
the factory polyjax-sharding registers.

The mesh lives in configuration states included in the trace context, so
every trace and compile cache keys on it: the same function traced under
another mesh is traced again.

Three states, because JAX distinguishes them: ``set_mesh`` sets the concrete
and the abstract mesh; ``use_abstract_mesh`` only the abstract one; the
deprecated ``with mesh:`` only a *legacy* concrete mesh, which
`get_concrete_mesh` falls back to (so a bare `PartitionSpec` resolves under
it) but which ``get_mesh``/``get_abstract_mesh`` do not report.

Example:
  >>> from polyjax_core.mesh import AbstractMesh
  >>> get_abstract_mesh().empty
  True
  >>> with use_abstract_mesh(AbstractMesh((2,), ("x",))):
  ...     get_abstract_mesh()
  AbstractMesh('x': 2, axis_types=(Auto,))
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from polyjax_core import config
from polyjax_core.mesh import EMPTY_ABSTRACT_MESH, AbstractMesh
from polyjax_core.partition_spec import PartitionSpec

__all__ = [
    "MeshContext",
    "get_abstract_mesh",
    "get_concrete_mesh",
    "get_set_mesh",
    "pop_legacy_mesh",
    "push_legacy_mesh",
    "abstract_sharding",
    "default_aval_sharding",
    "register_spec_to_sharding",
    "spec_to_sharding",
    "use_abstract_mesh",
]

_abstract_mesh = config._define_object_state(
    "jax_abstract_mesh_context",
    None,
    "Internal: the abstract mesh of the innermost set_mesh / use_abstract_mesh (None: none).",
    include_in_trace_context=True,
)
_concrete_mesh = config._define_object_state(
    "jax_mesh_context",
    None,
    "Internal: the mesh installed by the innermost set_mesh (None: none).",
    include_in_trace_context=True,
)
_legacy_mesh = config._define_object_state(
    "jax_legacy_mesh_context",
    None,
    "Internal: the mesh of the innermost deprecated `with mesh:` block (None: none).",
    include_in_trace_context=True,
)


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context: of the innermost ``set_mesh``/``use_abstract_mesh``.

    Returns:
      That `AbstractMesh`, or the empty one (``.empty`` is True) outside any.
    """
    mesh = _abstract_mesh.value
    return EMPTY_ABSTRACT_MESH if mesh is None else mesh


def get_set_mesh() -> Any | None:
    """The concrete mesh installed by the innermost ``set_mesh``, or None."""
    return _concrete_mesh.value


def get_concrete_mesh() -> Any | None:
    """The concrete mesh in context: ``set_mesh``'s, else the ``with mesh:`` one, else None."""
    mesh = _concrete_mesh.value
    return _legacy_mesh.value if mesh is None else mesh


class MeshContext:
    """Installs a mesh in the current thread on creation; restores the previous on exit.

    It takes effect when created, so ``set_mesh(m)`` works both as a statement
    (the mesh stays until the thread ends or another ``set_mesh``) and as
    ``with set_mesh(m): ...`` (restored at the end of the block).

    Args:
      concrete: the concrete mesh (or None for none).
      abstract: its abstract mesh (or None for none).
    """

    __slots__ = ("_overrides",)

    def __init__(self, concrete: Any | None, abstract: AbstractMesh | None):
        overrides = [_concrete_mesh(concrete), _abstract_mesh(abstract)]
        for o in overrides:
            o.__enter__()
        self._overrides = overrides

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        overrides, self._overrides = self._overrides, []
        for o in reversed(overrides):
            o.__exit__(None, None, None)


class use_abstract_mesh(MeshContext):  # noqa: N801  (JAX's name; a context manager)
    """Context manager making ``mesh`` the abstract mesh (tracing only, no devices).

    Inside, the concrete mesh in context is kept only if its abstract mesh is
    ``mesh``.

    Raises:
      TypeError: ``mesh`` is not an `AbstractMesh`.
    """

    __slots__ = ()

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise TypeError(
                f"use_abstract_mesh expects an AbstractMesh, got {mesh!r} of type "
                f"{type(mesh).__name__}"
            )
        concrete = get_set_mesh()
        if concrete is not None and concrete.abstract_mesh != mesh:
            concrete = None
        super().__init__(concrete, mesh)


class _LegacyStack(threading.local):
    overrides: list[Any]

    def __init__(self) -> None:
        self.overrides = []


_legacy_stack = _LegacyStack()


def push_legacy_mesh(mesh: Any) -> None:
    """Enters a ``with mesh:`` block (the deprecated form of ``set_mesh``)."""
    override = _legacy_mesh(mesh)
    override.__enter__()
    _legacy_stack.overrides.append(override)


def pop_legacy_mesh() -> None:
    """Leaves the innermost ``with mesh:`` block."""
    _legacy_stack.overrides.pop().__exit__(None, None, None)


_spec_to_sharding: Callable[[Any, PartitionSpec], Any] | None = None


def register_spec_to_sharding(fn: Callable[[Any, PartitionSpec], Any]) -> None:
    """Sets how `spec_to_sharding` builds a sharding: ``fn(mesh, spec) -> Sharding``.

    polyjax-sharding registers ``NamedSharding`` here when it is imported.
    """
    global _spec_to_sharding
    _spec_to_sharding = fn


def default_aval_sharding(ndim: int) -> Any:
    """The sharding of an abstract value of rank ``ndim`` that carries none of its own.

    Returns:
      The registered factory's sharding (a ``NamedSharding``) over the abstract mesh
      in context, with a spec of ``ndim`` Nones (replicated); None when no factory
      is registered (polyjax-core alone has no sharding type).
    """
    if _spec_to_sharding is None:
        return None
    return _spec_to_sharding(get_abstract_mesh(), PartitionSpec(*(None,) * ndim))


def abstract_sharding(mesh: AbstractMesh, spec: PartitionSpec) -> Any:
    """The registered factory's sharding of ``spec`` over the abstract ``mesh`` (None
    without a factory): what a type that carries a sharding reports."""
    if _spec_to_sharding is None:
        return None
    return _spec_to_sharding(mesh, spec)


def spec_to_sharding(spec: PartitionSpec, mesh: Any | None = None) -> Any:
    """The sharding that places arrays as ``spec`` says over ``mesh``.

    Args:
      spec: the partition spec.
      mesh: the concrete mesh; default: `get_concrete_mesh`.

    Returns:
      What the registered factory builds (a ``NamedSharding``).

    Raises:
      TypeError: ``spec`` is not a `PartitionSpec`.
      RuntimeError: there is no mesh in context, or no factory is registered.
    """
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"spec_to_sharding expects a PartitionSpec, got {spec!r}")
    if mesh is None:
        mesh = get_concrete_mesh()
    if mesh is None:
        raise RuntimeError(
            f"A PartitionSpec ({spec}) becomes a sharding only over a mesh, and no mesh is "
            "in context. Set one with `polyjax.set_mesh(mesh)`, or pass "
            "`NamedSharding(mesh, spec)` instead of the bare spec."
        )
    if _spec_to_sharding is None:
        raise RuntimeError(
            "No PartitionSpec-to-sharding factory is registered: import polyjax_sharding "
            "(polyjax.sharding), which provides NamedSharding."
        )
    return _spec_to_sharding(mesh, spec)
