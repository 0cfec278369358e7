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

It also carries the mesh axes over which the value is *unreduced* (each device
along them holds a partial sum; the value is their sum: ``float32[8@a,4]{U:b}``)
or *reduced* (replicated, but its cotangent is unreduced: ``{R:b}``). Each
primitive's `reduction rule` (`register_reduction_rule`) says which operands may
be unreduced or reduced and what its outputs are; by default an unreduced
operand is an error (docs/explicit-sharding.md).

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
    "cotangent_type",
    "note_concrete_mesh",
    "entries_of",
    "mesh_of",
    "register_reduction_rule",
    "register_rule",
    "reductions",
    "same_reduced",
    "reduction_rules",
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

    __slots__ = ("mesh", "entries", "unreduced", "reduced", "_hash")

    def __init__(
        self,
        mesh: AbstractMesh,
        entries: tuple[tuple, ...],
        unreduced: frozenset = frozenset(),
        reduced: frozenset = frozenset(),
    ):
        self.mesh = mesh
        self.entries = entries
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)
        self._hash = hash((mesh, entries, self.unreduced, self.reduced))

    @staticmethod
    def make(
        mesh: Any,
        spec: Sequence[Any] | PartitionSpec,
        ndim: int | None = None,
        unreduced: Any = None,
        reduced: Any = None,
    ) -> AvalSharding | None:
        """The type-level sharding of ``spec`` over ``mesh``, or None if it splits,
        and leaves unreduced or reduced, nothing.

        Only the mesh's ``Explicit`` axes are kept; ``spec`` is padded with Nones
        to ``ndim``. ``unreduced``/``reduced`` default to a `PartitionSpec`'s own.
        """
        if unreduced is None:
            unreduced = getattr(spec, "unreduced", frozenset())
        if reduced is None:
            reduced = getattr(spec, "reduced", frozenset())
        mesh = mesh.abstract_mesh
        explicit = set(mesh.explicit_axes)
        # Unreduced/reduced axes may also be Manual ones (inside a shard_map body).
        summable = explicit | set(mesh.manual_axes)
        if not explicit and not (summable & (set(unreduced) | set(reduced))):
            return None
        spec = tuple(spec)
        if ndim is not None:
            if len(spec) > ndim:
                raise ValueError(f"sharding spec {spec} has more entries than rank {ndim}")
            spec = spec + (None,) * (ndim - len(spec))
        entries = tuple(tuple(a for a in _entry(e) if a in explicit) for e in spec)
        unreduced = frozenset(unreduced) & summable
        reduced = frozenset(reduced) & summable
        if not any(entries) and not unreduced and not reduced:
            return None
        return AvalSharding(mesh, entries, unreduced, reduced)

    def with_entries(self, entries: Sequence[Any]) -> AvalSharding | None:
        """The same mesh (and unreduced/reduced axes) with other entries (None if
        that leaves nothing)."""
        return AvalSharding.make(self.mesh, entries, None, self.unreduced, self.reduced)

    def with_reductions(self, unreduced: Any, reduced: Any) -> AvalSharding | None:
        """The same mesh and entries with other unreduced/reduced axes."""
        return AvalSharding.make(self.mesh, self.entries, None, unreduced, reduced)

    @property
    def spec(self) -> PartitionSpec:
        """The entries as a `PartitionSpec` (one name unwrapped, ``()`` as None)."""
        return PartitionSpec(
            *(_spec_entry(e) for e in self.entries),
            unreduced=self.unreduced,
            reduced=self.reduced,
        )

    def reductions_str(self) -> str:
        """``U:b``, ``R:b``, ``U:(a,b), R:c`` or '' as JAX prints them in braces."""
        parts = []
        for tag, axes in (("U", self.unreduced), ("R", self.reduced)):
            if axes:
                names = [a for a in self.mesh.axis_names if a in axes]
                inner = names[0] if len(names) == 1 else "(" + ",".join(map(str, names)) + ")"
                parts.append(f"{tag}:{inner}")
        return ", ".join(parts)

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
            and self.unreduced == other.unreduced
            and self.reduced == other.reduced
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
    """The ``out_sharding=`` (a ``NamedSharding`` over the abstract mesh) of a
    cotangent of ``aval``, or None: split as ``aval``, with its unreduced and
    reduced axes exchanged (a reduced primal's cotangent is unreduced, as in JAX)."""
    s = cotangent_type(getattr(aval, "aval_sharding", None))
    if s is None:
        return None
    from polyjax_core import mesh_context

    return mesh_context.abstract_sharding(s.mesh, s.spec)


def cotangent_type(s: AvalSharding | None) -> AvalSharding | None:
    """The type-level sharding of a cotangent of a value typed ``s``: ``s`` with its
    unreduced and reduced axes exchanged."""
    if s is None or not (s.unreduced or s.reduced):
        return s
    return s.with_reductions(s.reduced, s.unreduced)


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


# primitive -> reduction rule(out_avals, in_avals, **params) -> one (unreduced,
# reduced) pair of axis sets per output.
reduction_rules: dict[Any, Rule] = {}


def register_reduction_rule(prim: Any, rule: Rule) -> None:
    """Declares which of ``prim``'s operands may be unreduced or reduced and what its
    outputs are: ``rule(out_avals, in_avals, **params)`` gives one ``(unreduced,
    reduced)`` pair per output (``out_avals`` carry any ``out_sharding``'s sets);
    it raises `ShardingTypeError` for operands it does not accept."""
    reduction_rules[prim] = rule


def reductions(aval: Any) -> tuple[frozenset, frozenset]:
    """``aval``'s (unreduced, reduced) mesh axes."""
    s = getattr(aval, "aval_sharding", None)
    if s is None:
        return frozenset(), frozenset()
    return s.unreduced, s.reduced


def _default_reduction_rule(prim: Any):
    def rule(outs, avals, **params):
        """No unreduced operand; the outputs are reduced as the operands are
        (`same_reduced`), or as an ``out_sharding=`` asks."""
        for a in avals:
            if reductions(a)[0]:
                raise NotImplementedError(
                    f"unreduced rule for {prim.name} is not implemented: an unreduced "
                    f"operand ({a.str_short(short_dtypes=True)}) must be reduced with "
                    "`reshard` first."
                )
        pairs = []
        for o in outs:  # (an output's own axes come from an `out_sharding=`)
            u, r = reductions(o)
            pairs.append((u, r or same_reduced(prim.name, avals)))
        return pairs

    return rule


def same_reduced(name: str, avals: Sequence[Any]) -> frozenset:
    """The reduced axes shared by ``avals`` (scalars without any take no part); an
    operand replicated over axes another is reduced on is a `ShardingTypeError`."""
    taking = [a for a in avals if getattr(a, "shape", ()) or reductions(a)[1]]
    sets = {reductions(a)[1] for a in taking}
    if len(sets) <= 1:
        return next(iter(sets), frozenset())
    red = next(r for r in sets if r)
    other = next(a for a in taking if reductions(a)[1] != red)
    raise ShardingTypeError(
        f"{name}: inputs cannot be replicated on the same axes that another input is reduced "
        f"on. Got input type: {other.str_short(short_dtypes=False)} and reduced spec: "
        f"{set(red)}"
    )


def _with_reductions(prim: Any, in_avals: Sequence[Any], outs: Any, params: dict) -> Any:
    """``outs`` with the unreduced/reduced axes ``prim``'s reduction rule gives them
    (nothing to do when no operand or output has any: almost always)."""
    out_list = list(outs) if prim.multiple_results else [outs]
    if not any(any(reductions(a)) for a in (*in_avals, *out_list)) or _has_bodies(params):
        return outs  # (a primitive with bodies: typed by their jaxprs)
    rule = reduction_rules.get(prim) or _default_reduction_rule(prim)
    pairs = rule(out_list, list(in_avals), **params)
    new = []
    for o, (u, r) in zip(out_list, pairs):
        s = getattr(o, "aval_sharding", None)
        if s is None:
            mesh = mesh_of(prim.name, in_avals)
            s2 = None if mesh is None else AvalSharding.make(mesh, (), o.ndim, u, r)
        else:
            s2 = s.with_reductions(u, r)
        new.append(o if s2 == s else o.update(sharding=s2))
    return new if prim.multiple_results else new[0]


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
        return AvalSharding.make(mesh, s, ndim)
    return AvalSharding.make(s.mesh, s.spec, ndim)


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
        outs = _with_shardings(prim, outs, out_list, specs, None)
        return _with_reductions(prim, in_avals, outs, params)
    rule = sharding_rules.get(prim)
    if rule is None:
        if _has_bodies(params):
            return outs  # typed by its bodies' jaxprs
        return _with_shardings(prim, outs, out_list, [None] * len(out_list), None)
    mesh = mesh_of(prim.name, in_avals)
    got = rule(out_list, list(in_avals), **params)
    specs = [got] if len(out_list) == 1 else list(got)
    outs = _with_shardings(prim, outs, out_list, specs, mesh)
    return _with_reductions(prim, in_avals, outs, params)


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
