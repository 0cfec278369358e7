"""Abstract meshes: named axes of devices, without the devices.

A *mesh* arranges devices in an n-dimensional grid whose axes have names
(``'data'``, ``'model'``, ...). Sharding rules and shape rules need only the
axis names, their sizes and their types, so that part lives here, in core, as
`AbstractMesh`; the concrete `Mesh` (which holds devices) belongs to
polyjax-sharding and gives its abstract mesh through ``mesh.abstract_mesh``.

`AxisType` says how a mesh axis is used: ``Auto`` axes are left to the
compiler's partitioner, ``Explicit`` axes are part of array types (JAX's
"explicit sharding"), and ``Manual`` axes are those a ``shard_map`` body sees
per device.

Example:
  >>> m = AbstractMesh((2, 4), ("x", "y"))
  >>> m
  AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto))
  >>> m.shape["y"], m.size
  (4, 8)
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "canonicalize_axis_types"]


class AxisType(enum.Enum):
    """How a mesh axis is used by sharding.

    Example:
      >>> AxisType.Explicit, str(AxisType.Auto)
      (Explicit, 'AxisType.Auto')
    """

    Auto = 1
    Explicit = 2
    Manual = 3

    def __repr__(self) -> str:
        return self.name


class AbstractDevice(NamedTuple):
    """What an abstract mesh records about its devices: their kind and platform.

    Example:
      >>> AbstractDevice("cpu", None, "cpu")
      AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)
    """

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return (
            f"AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform})"
        )


def canonicalize_axis_types(
    axis_types: Any, axis_names: tuple[Any, ...], owner: str
) -> tuple[AxisType, ...]:
    """The per-axis types of a mesh: ``None`` means all ``Auto``, one type applies to all.

    Args:
      axis_types: ``None``, an `AxisType`, or a sequence of one per axis.
      axis_names: the mesh's axis names.
      owner: the class name used in error messages (``"Mesh"``, ``"AbstractMesh"``).

    Raises:
      TypeError: an entry is not an `AxisType`.
      ValueError: the number of types differs from the number of names.
    """
    if axis_types is None:
        return (AxisType.Auto,) * len(axis_names)
    if isinstance(axis_types, AxisType):
        return (axis_types,) * len(axis_names)
    axis_types = tuple(axis_types)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(
            f"axis_types passed to {owner} must be of type `polyjax.sharding.AxisType`. "
            f"Got {axis_types} of type {tuple(type(t) for t in axis_types)}"
        )
    if len(axis_types) != len(axis_names):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got "
            f"axis_names={axis_names} and axis_types={axis_types}"
        )
    return axis_types


def check_axis_names(axis_names: tuple[Any, ...], owner: str) -> None:
    """Raises ValueError if an axis name repeats (the name would be ambiguous)."""
    seen: set[Any] = set()
    for name in axis_names:
        if name in seen:
            raise ValueError(
                f"{owner} axis names must be unique, but {name!r} repeats in {axis_names}"
            )
        seen.add(name)


class AxisQueries:
    """Questions about axis types, shared by `AbstractMesh` and the concrete `Mesh`.

    A subclass provides ``axis_names``, ``axis_sizes`` and ``axis_types``.
    """

    __slots__ = ()
    axis_names: tuple[Any, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[AxisType, ...]

    @property
    def shape(self) -> OrderedDict[Any, int]:
        """The axis sizes by name, in axis order."""
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def _name_to_type(self) -> dict[Any, AxisType]:
        return dict(zip(self.axis_names, self.axis_types))

    def _axes_of(self, kind: AxisType) -> tuple[Any, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    @property
    def auto_axes(self) -> tuple[Any, ...]:
        """The names of the ``Auto`` axes."""
        return self._axes_of(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple[Any, ...]:
        """The names of the ``Explicit`` axes."""
        return self._axes_of(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple[Any, ...]:
        """The names of the ``Manual`` axes."""
        return self._axes_of(AxisType.Manual)

    @property
    def are_all_axes_auto(self) -> bool:
        return all(t is AxisType.Auto for t in self.axis_types)

    @property
    def are_all_axes_explicit(self) -> bool:
        return all(t is AxisType.Explicit for t in self.axis_types)

    @property
    def are_all_axes_manual(self) -> bool:
        return all(t is AxisType.Manual for t in self.axis_types)

    def _axes_repr(self, sizes: Sequence[int]) -> str:
        """``'x': 2, 'y': 4, axis_types=(Auto, Auto)``: the body of a mesh's short repr."""
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, sizes))
        return f"{axes}, axis_types={self.axis_types}"


class AbstractMesh(AxisQueries):
    """A mesh's axis names, sizes and types, without devices.

    Args:
      axis_sizes: the size of each axis.
      axis_names: the name of each axis (unique).
      axis_types: ``None`` (all ``AxisType.Auto``), one `AxisType` for all axes,
        or one per axis.
      abstract_device: the kind of device the mesh stands for, if known.

    Raises:
      TypeError: an axis type is not an `AxisType`.
      ValueError: the sizes, names and types differ in number, or a name repeats.

    Example:
      >>> m = AbstractMesh((2, 4), ("x", "y"), AxisType.Explicit)
      >>> m.axis_types, m.explicit_axes
      ((Explicit, Explicit), ('x', 'y'))
    """

    __slots__ = ("axis_sizes", "axis_names", "axis_types", "abstract_device", "_hash")

    def __init__(
        self,
        axis_sizes: Sequence[int],
        axis_names: Sequence[Any],
        axis_types: AxisType | Sequence[AxisType] | None = None,
        *,
        abstract_device: AbstractDevice | None = None,
    ):
        axis_sizes = tuple(int(s) for s in axis_sizes)
        axis_names = tuple(axis_names)
        if len(axis_sizes) != len(axis_names):
            raise ValueError(
                f"AbstractMesh needs one size per axis name, got axis_sizes={axis_sizes} "
                f"and axis_names={axis_names}"
            )
        check_axis_names(axis_names, "AbstractMesh")
        self.axis_sizes = axis_sizes
        self.axis_names = axis_names
        self.axis_types = canonicalize_axis_types(axis_types, axis_names, "AbstractMesh")
        self.abstract_device = abstract_device
        self._hash = hash((axis_sizes, axis_names, self.axis_types, abstract_device))

    @property
    def size(self) -> int:
        """The number of devices the mesh stands for (0 for the empty mesh)."""
        if not self.axis_sizes:
            return 0
        size = 1
        for s in self.axis_sizes:
            size *= s
        return size

    @property
    def empty(self) -> bool:
        """Whether the mesh has no axes (what `get_abstract_mesh` gives outside any mesh)."""
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    @property
    def devices(self) -> Any:
        raise ValueError("AbstractMesh does not implement devices")

    def update(self, **changes: Any) -> AbstractMesh:
        """A copy with some of ``axis_sizes``, ``axis_names``, ``axis_types``,
        ``abstract_device`` replaced."""
        fields: dict[str, Any] = {
            "axis_sizes": self.axis_sizes,
            "axis_names": self.axis_names,
            "axis_types": self.axis_types,
            "abstract_device": self.abstract_device,
        }
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"AbstractMesh.update() got unexpected arguments {sorted(unknown)}")
        fields.update(changes)
        device = fields.pop("abstract_device")
        return AbstractMesh(**fields, abstract_device=device)

    def update_axis_types(self, name_to_type: dict[Any, AxisType]) -> AbstractMesh:
        """A copy in which the named axes have the given types."""
        types = tuple(name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types))
        return self.update(axis_types=types)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, AbstractMesh):
            return NotImplemented
        return (
            self.axis_sizes == other.axis_sizes
            and self.axis_names == other.axis_names
            and self.axis_types == other.axis_types
            and self.abstract_device == other.abstract_device
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        device = ""
        if self.abstract_device is not None:
            d = self.abstract_device
            device = (
                f", device_kind={d.device_kind}, num_cores={d.num_cores}, platform={d.platform}"
            )
        return f"AbstractMesh({self._axes_repr(self.axis_sizes)}{device})"

    def __reduce__(self) -> Any:
        return (
            _abstract_mesh,
            (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device),
        )


def _abstract_mesh(sizes: Any, names: Any, types: Any, device: Any) -> AbstractMesh:
    return AbstractMesh(sizes, names, types, abstract_device=device)


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())
