"""`PartitionSpec`: which mesh axes split each dimension of an array.

Entry ``i`` of a spec says how array dimension ``i`` is split over the mesh:
``None`` (not split: every device along the mesh holds all of it), a mesh axis
name (split into as many blocks as the axis has devices), a tuple of names
(split over all of them, the first one major), or
``PartitionSpec.UNCONSTRAINED`` (the partitioner may choose). Dimensions past
the end of the spec are not split.

Entries are normalised as JAX does: a one-name tuple is that name, an empty
tuple is ``None``, a list is a tuple. Equality compares the entries exactly
(``P('x') != P('x', None)``, as in JAX 0.10.2; shardings built from them are
still *equivalent*, see ``Sharding.is_equivalent_to``), and the hash ignores
trailing ``None``s.

Example:
  >>> P = PartitionSpec
  >>> P(("x",), None, ("x", "y"))
  P('x', None, ('x', 'y'))
  >>> len(P("x", None)), P("x", None)[1]
  (2, None)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["UNCONSTRAINED", "PartitionSpec"]


class _Unconstrained:
    """The entry that leaves a dimension's sharding to the partitioner (one instance)."""

    _instance: _Unconstrained | None = None

    def __new__(cls) -> _Unconstrained:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> Any:
        return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _normalize_entry(entry: Any) -> Any:
    if entry is None or entry is UNCONSTRAINED or isinstance(entry, str):
        return entry
    if isinstance(entry, (tuple, list)):
        if len(entry) == 0:
            return None
        if len(entry) == 1:
            return entry[0]
        return tuple(entry)
    try:
        hash(entry)
    except TypeError:
        raise TypeError(
            "PartitionSpec entries must be None, a mesh axis name, a tuple of axis names or "
            f"PartitionSpec.UNCONSTRAINED; got {entry!r} of type {type(entry).__name__}"
        ) from None
    return entry


def _axis_set(value: Any, name: str) -> frozenset:
    if not isinstance(value, (set, frozenset)):
        raise TypeError(
            f"{name} argument of PartitionSpec should be of type `frozenset` or `set`. "
            f"Got type {type(value).__name__}"
        )
    return frozenset(value)


def _set_repr(axes: frozenset) -> str:
    return "{" + ", ".join(repr(a) for a in sorted(axes, key=str)) + "}"


class PartitionSpec:
    """How each dimension of an array is split over the axes of a mesh.

    Args:
      *partitions: one entry per leading array dimension: ``None``, an axis
        name, a tuple of axis names, or ``PartitionSpec.UNCONSTRAINED``.
      reduced: mesh axes over which the array is reduced (explicit sharding).
      unreduced: mesh axes over which the array holds unreduced partial sums.

    Raises:
      TypeError: an entry is not hashable, or ``reduced``/``unreduced`` is not a set.
      ValueError: ``unreduced`` overlaps the partitions or ``reduced``.

    Example:
      >>> P = PartitionSpec
      >>> P(("x",)) == P("x"), P("x") == P("x", None)
      (True, False)
      >>> P("x") + (None, "y")
      P('x', None, 'y')
    """

    __slots__ = ("_partitions", "reduced", "unreduced", "_hash")

    UNCONSTRAINED = UNCONSTRAINED

    def __init__(
        self,
        *partitions: Any,
        reduced: set | frozenset = frozenset(),
        unreduced: set | frozenset = frozenset(),
    ):
        self._partitions = tuple(_normalize_entry(p) for p in partitions)
        self.reduced = _axis_set(reduced, "reduced")
        self.unreduced = _axis_set(unreduced, "unreduced")
        if self.unreduced & self.reduced:
            raise ValueError(
                "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. Got "
                f"unreduced: {self.unreduced} and reduced: {self.reduced}"
            )
        if self.unreduced & set(self._axis_names()):
            raise ValueError(
                "partitions cannot overlap with unreduced axes passed to PartitionSpec. Got "
                f"partitions: {self._partitions} and unreduced axes: {self.unreduced}"
            )
        trimmed = self._partitions
        while trimmed and trimmed[-1] is None:
            trimmed = trimmed[:-1]
        self._hash = hash((trimmed, self.reduced, self.unreduced))

    def _axis_names(self) -> Iterator[Any]:
        """The mesh axis names the partitions use, in order (with repeats)."""
        for p in self._partitions:
            if p is None or p is UNCONSTRAINED:
                continue
            if isinstance(p, tuple):
                yield from p
            else:
                yield p

    @property
    def partitions(self) -> tuple[Any, ...]:
        """The normalised entries."""
        return self._partitions

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i: Any) -> Any:
        return self._partitions[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._partitions)

    def count(self, value: Any) -> int:
        return self._partitions.count(value)

    def index(self, value: Any) -> int:
        return self._partitions.index(value)

    def __add__(self, other: Any) -> PartitionSpec:
        if isinstance(other, PartitionSpec):
            return self.update(
                partitions=(*self._partitions, *other._partitions),
                reduced=self.reduced | other.reduced,
                unreduced=self.unreduced | other.unreduced,
            )
        if isinstance(other, tuple):
            return self.update(partitions=(*self._partitions, *other))
        return NotImplemented

    def __radd__(self, other: Any) -> PartitionSpec:
        if isinstance(other, tuple):
            return self.update(partitions=(*other, *self._partitions))
        return NotImplemented

    def update(self, **changes: Any) -> PartitionSpec:
        """A copy with some of ``partitions``, ``reduced``, ``unreduced`` replaced."""
        unknown = set(changes) - {"partitions", "reduced", "unreduced"}
        if unknown:
            raise TypeError(f"PartitionSpec.update() got unexpected arguments {sorted(unknown)}")
        return PartitionSpec(
            *changes.get("partitions", self._partitions),
            reduced=changes.get("reduced", self.reduced),
            unreduced=changes.get("unreduced", self.unreduced),
        )

    def _normalized_spec_for_aval(self, ndim: int) -> PartitionSpec:
        """The spec padded with ``None`` to ``ndim`` entries."""
        if len(self._partitions) >= ndim:
            return self
        return self.update(partitions=self._partitions + (None,) * (ndim - len(self._partitions)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PartitionSpec):
            return NotImplemented
        return (
            self._partitions == other._partitions
            and self.reduced == other.reduced
            and self.unreduced == other.unreduced
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        parts = [repr(p) for p in self._partitions]
        if self.unreduced:
            parts.append(f"unreduced={_set_repr(self.unreduced)}")
        if self.reduced:
            parts.append(f"reduced={_set_repr(self.reduced)}")
        trailing = "," if len(parts) == 1 and len(self._partitions) == 1 else ""
        return f"P({', '.join(parts)}{trailing})"

    def __reduce__(self) -> Any:
        return (_partition_spec, (self._partitions, self.reduced, self.unreduced))


def _partition_spec(partitions: tuple, reduced: frozenset, unreduced: frozenset) -> PartitionSpec:
    return PartitionSpec(*partitions, reduced=reduced, unreduced=unreduced)
