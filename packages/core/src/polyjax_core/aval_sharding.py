"""Explicit sharding: the sharding an abstract value carries in its type.

Over a mesh whose axes are ``Explicit`` (what ``make_mesh`` gives by default),
an array's type says how it is split: ``float32[8@a,4]`` is split in two along
its first dimension over mesh axis ``a``; ``float32[8@(a,b),4]`` over ``a`` then
``b``. Every primitive computes its outputs' sharding from its operands' at
trace time (its *sharding rule*, kept in `sharding_rules` next to the shape
rule), and the lowering pins each intermediate to the sharding its type says.

An `AvalSharding` is the abstract mesh plus one entry per dimension (a tuple of
explicit axis names, ``()`` for unsplit). Only explicit axes enter the type:
``Auto`` axes are the compiler's business, ``Manual`` ones shard_map's. A type
split along no axis carries no `AvalSharding` at all (``ShapedArray.aval_sharding``
is None), so programs outside explicit mode see no difference.

A sharding rule is ``rule(out_avals, in_avals, **params) -> specs``: one spec
(a sequence of per-dimension entries: None, an axis name or a tuple of them)
per output. `apply_rule` runs it once for every primitive, after the shape
rule, as `polyjax_core.vma` does for varying axes.

Example:
  >>> from polyjax_core.mesh import AbstractMesh, AxisType
  >>> m = AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit)
  >>> s = AvalSharding.make(m, ("a", None))
  >>> s.dim_str(0), s.dim_str(1)
  ('@a', '')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core.mesh import AbstractMesh, AxisType
from polyjax_core.partition_spec import UNCONSTRAINED, PartitionSpec

__all__ = [
    "AvalSharding",
    "ShardingTypeError",
    "apply_rule",
    "concrete_mesh_for",
    "note_concrete_mesh",
    "entries_of",
    "mesh_of",
    "register_rule",
    "requested",
    "sharding_of",
    "sharding_rules",
    "spec_str",
]


class ShardingTypeError(Exception):
    """An operation's operands' shardings do not give its result a sharding.

    Raised at trace time in explicit mode, naming the operation and the operands'
    types; the fix is usually ``reshard`` on an operand or an ``out_sharding=``.
    """


def _entry(e: Any) -> tuple:
    if e is None or e is UNCONSTRAINED:
        return ()
    if isinstance(e, str):
        return (e,)
    return tuple(e)


class AvalSharding:
    """An abstract mesh and, per dimension, the explicit mesh axes splitting it.

    Args:
      mesh: the abstract mesh.
      entries: one tuple of axis names per dimension (``()``: not split).
    """

    __slots__ = ("mesh", "entries", "_hash")

    def __init__(self, mesh: AbstractMesh, entries: tuple[tuple, ...]):
        self.mesh = mesh
        self.entries = entries
        self._hash = hash((mesh, entries))

    @staticmethod
    def make(mesh: Any, spec: Sequence[Any], ndim: int | None = None) -> AvalSharding | None:
        """The type-level sharding of ``spec`` over ``mesh``, or None if it splits nothing.

        Only the mesh's ``Explicit`` axes are kept; ``spec`` is padded with Nones
        to ``ndim``.
        """
        mesh = mesh.abstract_mesh
        explicit = set(mesh.explicit_axes)
        if not explicit:
            return None
        spec = tuple(spec)
        if ndim is not None:
            if len(spec) > ndim:
                raise ValueError(f"sharding spec {spec} has more entries than rank {ndim}")
            spec = spec + (None,) * (ndim - len(spec))
        entries = tuple(tuple(a for a in _entry(e) if a in explicit) for e in spec)
        if not any(entries):
            return None
        return AvalSharding(mesh, entries)

    def with_entries(self, entries: Sequence[Any]) -> AvalSharding | None:
        """The same mesh with other entries (None if they split nothing)."""
        return AvalSharding.make(self.mesh, entries)

    @property
    def spec(self) -> PartitionSpec:
        """The entries as a `PartitionSpec` (one name unwrapped, ``()`` as None)."""
        return PartitionSpec(*(_spec_entry(e) for e in self.entries))

    def dim_str(self, i: int) -> str:
        """``@a``, ``@(a,b)`` or '' for dimension ``i``, as JAX prints a type."""
        e = self.entries[i]
        if not e:
            return ""
        return "@" + (str(e[0]) if len(e) == 1 else "(" + ",".join(map(str, e)) + ")")

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is AvalSharding
            and self._hash == other._hash
            and self.entries == other.entries
            and self.mesh == other.mesh
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"AvalSharding({self.mesh!r}, {self.spec})"


def _spec_entry(e: tuple) -> Any:
    if not e:
        return None
    return e[0] if len(e) == 1 else e


def entries_of(aval: Any) -> tuple[tuple, ...]:
    """``aval``'s per-dimension axes (all ``()`` when it carries no sharding)."""
    s = getattr(aval, "aval_sharding", None)
    if s is None:
        return ((),) * len(getattr(aval, "shape", ()))
    return s.entries


def sharding_of(aval: Any) -> Any:
    """``aval``'s explicit sharding as an ``out_sharding=`` value (a ``NamedSharding``
    over its abstract mesh), or None: for results typed like an operand (a
    cotangent like its primal)."""
    s = getattr(aval, "aval_sharding", None)
    if s is None:
        return None
    from polyjax_core import mesh_context

    return mesh_context.abstract_sharding(s.mesh, s.spec)


def spec_str(entries: Sequence[tuple]) -> str:
    """Entries as JAX's errors print them: ``('a', None)``."""
    return str(tuple(_spec_entry(tuple(e)) for e in entries))


def mesh_of(prim_name: str, avals: Sequence[Any]) -> AbstractMesh | None:
    """The mesh of the operands that carry a sharding (None if none does).

    Raises:
      ShardingTypeError: two operands are sharded over different meshes.
    """
    mesh = None
    for a in avals:
        s = getattr(a, "aval_sharding", None)
        if s is None:
            continue
        if mesh is None:
            mesh = s.mesh
        elif s.mesh != mesh:
            raise ShardingTypeError(
                f"{prim_name}: operands are sharded over different meshes: {mesh} and {s.mesh}"
            )
    return mesh


Rule = Callable[..., Any]

# primitive -> rule(out_avals, in_avals, **params) -> one spec per output.
sharding_rules: dict[Any, Rule] = {}


def register_rule(prim: Any, rule: Rule) -> None:
    """Declares ``prim``'s sharding rule (see the module docstring)."""
    sharding_rules[prim] = rule


def _out_sharding_param(params: dict) -> Any:
    s = params.get("out_sharding")
    return s if s is not None and hasattr(s, "spec") or isinstance(s, PartitionSpec) else None


def requested(s: Any, ndim: int) -> AvalSharding | None:
    """The type-level sharding of an ``out_sharding=`` (a ``NamedSharding``, or a
    `PartitionSpec` over the abstract mesh in context) for a result of rank ``ndim``.

    Raises:
      ValueError: a bare spec with no mesh set.
    """
    from polyjax_core import mesh_context

    if isinstance(s, PartitionSpec):
        mesh = mesh_context.get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                f"out_sharding={s} is a bare PartitionSpec and no mesh is set: use "
                "set_mesh(mesh) or pass a NamedSharding."
            )
        return AvalSharding.make(mesh, tuple(s), ndim)
    return AvalSharding.make(s.mesh, tuple(s.spec), ndim)


def _any_sharded(avals: Sequence[Any]) -> bool:
    for a in avals:
        if getattr(a, "aval_sharding", None) is not None:
            return True
    return False


def apply_rule(prim: Any, in_avals: Sequence[Any], outs: Any, params: dict) -> Any:
    """``outs`` (the shape rule's result) with the shardings ``prim``'s rule gives them.

    Nothing happens when no operand carries a sharding and no ``out_sharding``
    is asked for (every program outside explicit mode). A primitive without a
    rule gives unsharded outputs (the coverage test lists such primitives).
    """
    want = _out_sharding_param(params)
    if want is None and params.get("sharding") is None and not _any_sharded(in_avals):
        return outs  # (a `sharding` param: creation ops and constraints, by their rules)
    out_list = list(outs) if prim.multiple_results else [outs]
    if want is not None and len(out_list) == 1:
        specs: list[Any] = [requested(want, len(out_list[0].shape))]
        return _with_shardings(prim, outs, out_list, specs, None)
    rule = sharding_rules.get(prim)
    if rule is None:
        if _has_bodies(params):
            return outs  # typed by its bodies' jaxprs
        return _with_shardings(prim, outs, out_list, [None] * len(out_list), None)
    mesh = mesh_of(prim.name, in_avals)
    got = rule(out_list, list(in_avals), **params)
    specs = [got] if len(out_list) == 1 else list(got)
    return _with_shardings(prim, outs, out_list, specs, mesh)


def _is_jaxpr(v: Any) -> bool:
    return hasattr(v, "eqns") or hasattr(v, "jaxpr") and hasattr(v, "consts")


def _has_bodies(params: dict) -> bool:
    """Whether a primitive's params hold jaxprs (a higher-order primitive)."""
    for v in params.values():
        if _is_jaxpr(v) or type(v) in (tuple, list) and any(_is_jaxpr(e) for e in v):
            return True
    return False


def _with_shardings(prim: Any, outs: Any, out_list: list, specs: list, mesh: Any) -> Any:
    new = []
    for o, spec in zip(out_list, specs):
        if not hasattr(o, "aval_sharding"):
            new.append(o)
            continue
        if isinstance(spec, AvalSharding) or spec is None:
            s = spec
        elif mesh is None:
            s = None
        else:
            s = AvalSharding.make(mesh, spec, len(o.shape))
        new.append(o if o.aval_sharding == s else o.update(sharding=s))
    return new if prim.multiple_results else new[0]


def explicit_only(mesh: AbstractMesh) -> bool:
    """Whether ``mesh`` has an ``Explicit`` axis (so types may carry shardings)."""
    return any(t is AxisType.Explicit for t in mesh.axis_types)


# abstract mesh -> the last concrete mesh seen placing an array with it (lowering
# needs devices to pin a typed value; `set_mesh`'s mesh comes first).
_concrete_meshes: dict[AbstractMesh, Any] = {}


def note_concrete_mesh(mesh: Any) -> None:
    """Remembers a concrete mesh that placed an explicitly sharded array."""
    if not isinstance(mesh, AbstractMesh):
        _concrete_meshes[mesh.abstract_mesh] = mesh


def concrete_mesh_for(abstract: AbstractMesh) -> Any | None:
    """The concrete mesh to lower a type over ``abstract`` with: ``set_mesh``'s if it
    matches, else the last one noted (`note_concrete_mesh`), else None."""
    from polyjax_core import mesh_context

    mesh = mesh_context.get_concrete_mesh()
    if mesh is not None and mesh.abstract_mesh == abstract:
        return mesh
    return _concrete_meshes.get(abstract)
