"""`NamedSharding`: an array laid out over a `Mesh` as a `PartitionSpec` says.

Dimension ``i`` of the array is split into as many equal blocks as the
product of the sizes of the mesh axes named by ``spec[i]`` (the first axis
major); the device at mesh position ``p`` holds the block that ``p``'s
coordinates along those axes select. Mesh axes that the spec does not name
replicate: the devices along them hold the same blocks.

The class subclasses jaxlib's ``GSPMDSharding`` (the runtime hands it to
jaxlib's C++ as is; ARCHITECTURE.md) and implements the runtime's whole
`Sharding` interface, plus the two hooks the lowering uses:
``_to_sdy_sharding`` (the Shardy form) and ``_from_hlo_sharding`` (the
sharding of an output from what XLA's partitioner chose).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from jaxlib import _jax, xla_client

from polyjax_core.mesh import AbstractMesh
from polyjax_core.partition_spec import UNCONSTRAINED, PartitionSpec
from polyjax_interpreters.sharding import Sharding, SingleDeviceSharding
from polyjax_sharding._mesh import Mesh

__all__ = [
    "DuplicateSpecError",
    "IndivisibleError",
    "NamedSharding",
    "make_single_device_sharding",
]

Device = Any
Index = tuple[slice, ...]
_HloSharding = xla_client.HloSharding
_REPLICATED = _HloSharding.replicate()
_REPLICATE_LAST = [xla_client.OpSharding.Type.REPLICATED]


class DuplicateSpecError(Exception):
    """A `PartitionSpec` names one mesh axis for two dimensions (or twice for one)."""

    __module__ = "polyjax_sharding"  # its public home, as tracebacks name it


class IndivisibleError(ValueError):
    """An array dimension is not divisible by the number of blocks a sharding splits it in."""

    __module__ = "polyjax_sharding"


def _entry_axes(entry: Any) -> tuple[Any, ...]:
    """The mesh axes a spec entry splits its dimension over (none for None/UNCONSTRAINED)."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    return entry if isinstance(entry, tuple) else (entry,)


def _check_spec(mesh: Mesh, spec: PartitionSpec) -> None:
    names = mesh.axis_names
    shape = mesh.shape
    used: set[Any] = set()
    for entry in spec:
        for axis in _entry_axes(entry):
            if axis not in shape:
                raise ValueError(f"Resource axis: {axis} of {spec} is not found in mesh: {names}.")
            if axis in used:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at "
                    f"most one positional dimension, but {spec} has duplicate entries for `{axis}`"
                )
            used.add(axis)
    for kind, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for axis in sorted(axes - set(names), key=str):
            raise ValueError(
                f"{kind} axes {axis} is not found in mesh.axis_names={names}. Got pspec={spec}"
            )


def _hlo_sharding(mesh: Mesh, spec: PartitionSpec, ndim: int) -> Any:
    """The XLA sharding of ``spec`` over ``mesh`` for rank ``ndim`` (devices by mesh position).

    Tiles are an "iota" tile assignment: the mesh positions, with the mesh axes
    transposed so that each dimension's axes come in order, then the axes
    that replicate (folded into one last, replicated tile dimension).
    """
    sizes = mesh.shape
    tiles, order = [], []
    for d in range(ndim):
        axes = _entry_axes(spec[d]) if d < len(spec) else ()
        tiles.append(math.prod(sizes[a] for a in axes))
        order.extend(axes)
    if all(t == 1 for t in tiles):
        return _REPLICATED
    rest = [a for a in mesh.axis_names if a not in order]
    replicas = math.prod(sizes[a] for a in rest)
    perm = [mesh.axis_names.index(a) for a in (*order, *rest)]
    if replicas == 1:
        return _HloSharding.iota_tile(tiles, list(mesh.axis_sizes), perm)
    return _HloSharding.iota_tile([*tiles, replicas], list(mesh.axis_sizes), perm, _REPLICATE_LAST)


class NamedSharding(_jax.GSPMDSharding):
    """An array laid out over a mesh as a partition spec says.

    Args:
      mesh: the `Mesh`.
      spec: the `PartitionSpec`: entry ``i`` names the mesh axes that split
        array dimension ``i``.
      memory_kind: the memory to use; ``None`` means the devices' default
        memory (reported as ``'device'`` on CPU and GPU).

    Raises:
      TypeError: ``mesh`` is not a `Mesh` or ``spec`` not a `PartitionSpec`.
      ValueError: ``spec`` names an axis the mesh lacks, or the devices have
        no memory of kind ``memory_kind``.
      DuplicateSpecError: ``spec`` names a mesh axis twice.

    Example:
      >>> from polyjax_sharding import make_mesh, PartitionSpec as P
      >>> s = NamedSharding(make_mesh((1,), ("x",)), P("x"))
      >>> s.shard_shape((4, 2)), s.spec
      ((4, 2), P('x',))
    """

    __slots__ = (
        "_abstract",
        "_abstract_memory_kind",
        "_mesh",
        "_spec",
        "_hash",
        "_replicated",
        "_addressable",
        "_hlo_by_rank",
        "_indices_by_shape",
    )

    def __init__(
        self, mesh: Mesh | AbstractMesh, spec: PartitionSpec, *, memory_kind: str | None = None
    ):
        if not isinstance(mesh, Mesh | AbstractMesh):
            raise TypeError(
                f"NamedSharding needs a polyjax.sharding.Mesh or AbstractMesh, got {mesh!r} of "
                f"type {type(mesh).__name__}"
            )
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                f"NamedSharding spec must be a PartitionSpec, got {spec!r} of type "
                f"{type(spec).__name__}"
            )
        _check_spec(mesh, spec)
        if memory_kind is not None and not isinstance(memory_kind, str):
            raise TypeError(
                f"NamedSharding memory_kind must be a string or None, got {memory_kind!r}"
            )
        self._mesh = mesh
        self._spec = spec
        self._abstract = isinstance(mesh, AbstractMesh)
        if self._abstract:
            # A sharding type (what `typeof(x).sharding` gives): no devices, so the
            # jaxlib half stays uninitialised and the device queries raise.
            self._abstract_memory_kind = memory_kind
            self._hash = hash((mesh, spec, memory_kind))
            self._replicated = True
            return
        super().__init__(
            mesh._internal_device_list,
            _hlo_sharding(mesh, spec, len(spec)),
            memory_kind=memory_kind,
        )
        self._hash = hash((mesh, spec, self._memory_kind))
        sizes = mesh.shape
        self._replicated = all(sizes[a] == 1 for entry in spec for a in _entry_axes(entry))
        self._addressable: set[Device] | None = None  # computed on first use
        self._hlo_by_rank: dict[int, Any] = {}
        self._indices_by_shape: dict[tuple[int, ...], dict[Device, Index]] = {}

    @property
    def mesh(self) -> Mesh:
        return self._mesh

    @property
    def spec(self) -> PartitionSpec:
        return self._spec

    # -- the Sharding interface ------------------------------------------------

    def _devices(self) -> Mesh:
        """The concrete mesh; ValueError for a sharding over an abstract mesh."""
        if self._abstract:
            raise ValueError(
                "device_set is not implemented for `polyjax.sharding.AbstractMesh`: a "
                "NamedSharding over an abstract mesh is a type, with no devices."
            )
        return self._mesh  # type: ignore[return-value]  # not abstract: a concrete Mesh

    @property
    def device_set(self) -> set[Device]:
        return set(self._devices()._flat_devices_tuple)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self._devices()._flat_devices_tuple

    @property
    def num_devices(self) -> int:
        return self._mesh.size

    @property
    def memory_kind(self) -> str | None:
        return self._abstract_memory_kind if self._abstract else self._memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return self._replicated

    # A mesh's devices never change, so which of them this process addresses is
    # computed once (jaxlib asks whenever it prints or moves an array).
    @property
    def addressable_devices(self) -> set[Device]:
        if self._addressable is None:
            self._addressable = Sharding.addressable_devices.fget(self)
        return self._addressable

    @property
    def is_fully_addressable(self) -> bool:
        return len(self.addressable_devices) == self._mesh.size

    @property
    def has_addressable_devices(self) -> bool:
        return bool(self.addressable_devices)

    addressable_devices_indices_map = Sharding.addressable_devices_indices_map
    is_equivalent_to = Sharding.is_equivalent_to

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return NamedSharding(self._mesh, self._spec, memory_kind=kind)

    def update(self, **changes: Any) -> NamedSharding:
        """A copy with some of ``mesh``, ``spec``, ``memory_kind`` replaced."""
        fields = {"mesh": self._mesh, "spec": self._spec, "memory_kind": self.memory_kind}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"NamedSharding.update() got unexpected arguments {sorted(unknown)}")
        fields.update(changes)
        return NamedSharding(fields["mesh"], fields["spec"], memory_kind=fields["memory_kind"])

    def check_compatible_aval(self, aval_shape: Sequence[int]) -> None:
        """Raises ValueError if the spec has more entries than ``aval_shape`` has dimensions."""
        if len(self._spec) > len(aval_shape):
            raise ValueError(
                f"Sharding {self} is only valid for values of rank at least {len(self._spec)}, "
                f"but was applied to a value of rank {len(aval_shape)}."
            )

    def _tiling(self, global_shape: Sequence[int]) -> list[int]:
        """How many blocks each dimension is split in, after checking the shape fits."""
        shape = tuple(global_shape)
        self.check_compatible_aval(shape)
        sizes = self._mesh.shape
        tiles = [
            math.prod(sizes[a] for a in _entry_axes(self._spec[d])) if d < len(self._spec) else 1
            for d in range(len(shape))
        ]
        for d, (n, t) in enumerate(zip(shape, tiles)):
            if n % t:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {d} is partitioned {t} times, but "
                    f"the dimension size is {n} (full shape: {shape}, per-dimension tiling "
                    f"factors: {tiles} should evenly divide the shape)"
                )
        return tiles

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each device's block of an array of ``global_shape``.

        Raises:
          ValueError: the spec is longer than the rank.
          IndivisibleError: a dimension is not divisible by its number of blocks.
        """
        tiles = self._tiling(global_shape)
        return tuple(n // t for n, t in zip(global_shape, tiles))

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Device, Index]:
        """Which slice of an array of ``global_shape`` each device holds.

        Undivided dimensions get ``slice(None)``.

        Raises:
          ValueError: the spec is longer than the rank.
          IndivisibleError: a dimension is not divisible by its number of blocks.
        """
        shape = tuple(global_shape)
        cached = self._indices_by_shape.get(shape)
        if cached is None:
            cached = dict(self._indices(shape))
            self._indices_by_shape[shape] = cached
        return dict(cached)

    def _indices(self, shape: tuple[int, ...]) -> Iterator[tuple[Device, Index]]:
        tiles = self._tiling(shape)
        mesh = self._mesh
        position_of = {name: i for i, name in enumerate(mesh.axis_names)}
        sizes = mesh.shape
        dim_axes = [
            _entry_axes(self._spec[d]) if d < len(self._spec) else () for d in range(len(shape))
        ]
        for coords in itertools.product(*(range(s) for s in mesh.axis_sizes)):
            index = []
            for n, t, axes in zip(shape, tiles, dim_axes):
                if not axes:
                    index.append(slice(None))
                    continue
                block = 0
                for a in axes:  # mixed radix, first axis major
                    block = block * sizes[a] + coords[position_of[a]]
                step = n // t
                index.append(slice(block * step, (block + 1) * step))
            yield mesh.devices[coords], tuple(index)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        hlo = self._hlo_by_rank.get(num_dimensions)
        if hlo is None:
            self.check_compatible_aval((0,) * num_dimensions)
            hlo = _hlo_sharding(self._mesh, self._spec, num_dimensions)
            self._hlo_by_rank[num_dimensions] = hlo
        return hlo

    # -- hooks for the lowering (SHARDING_CONTRACT.md) ----------------------------

    def _to_sdy_sharding(
        self, ndim: int
    ) -> tuple[tuple[tuple[Any, int], ...], tuple[int, ...], tuple[tuple[Any, ...] | None, ...]]:
        """The Shardy form: (mesh axes and sizes, device ids in mesh order, axes per dimension).

        A dimension's entry is the tuple of mesh axes splitting it (``()``:
        not split), or None where the spec leaves it UNCONSTRAINED (open).
        """
        self.check_compatible_aval((0,) * ndim)
        mesh = self._mesh
        dims = tuple(
            None
            if d < len(self._spec) and self._spec[d] is UNCONSTRAINED
            else (_entry_axes(self._spec[d]) if d < len(self._spec) else ())
            for d in range(ndim)
        )
        return mesh.shape_tuple, tuple(int(i) for i in mesh.device_ids.flat), dims

    def _from_hlo_sharding(self, hlo_sharding: Any, ndim: int) -> Any:
        """The sharding over this mesh that places a rank-``ndim`` array as ``hlo_sharding``.

        ``self`` when it already does (so shardings pass through elementwise
        programs unchanged, spelled as the user spelled them); else the
        `NamedSharding` whose spec gives ``hlo_sharding`` (trailing ``None``s
        dropped; ``P()`` when replicated); else a ``GSPMDSharding`` over the
        mesh's devices. ``hlo_sharding`` may also be an ``OpSharding`` (what
        an executable's ``get_output_shardings`` gives).
        """
        if isinstance(hlo_sharding, xla_client.OpSharding):
            hlo_sharding = _HloSharding.from_proto(hlo_sharding)
        if len(self._spec) <= ndim and self._to_xla_hlo_sharding(ndim) == hlo_sharding:
            return self
        for spec in _candidate_specs(self._mesh, hlo_sharding, ndim):
            if _hlo_sharding(self._mesh, spec, ndim) == hlo_sharding:
                return NamedSharding(self._mesh, spec, memory_kind=self._memory_kind)
        from polyjax_interpreters.sharding import GSPMDSharding  # shard-rt's class

        return GSPMDSharding(self._device_assignment, hlo_sharding, memory_kind=self._memory_kind)

    # -- identity ----------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, NamedSharding):
            return NotImplemented
        return (
            self._hash == other._hash
            and self._spec == other._spec
            and self.memory_kind == other.memory_kind
            and self._mesh == other._mesh
        )

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        kind = self.memory_kind
        tail = "" if kind is None and self._abstract else f", memory_kind={kind}"
        return f"NamedSharding(mesh={self._mesh}, spec={self._spec}{tail})"

    __str__ = __repr__


Sharding.register(NamedSharding)


def _ordered_axes_with_product(
    sizes: Mapping[Any, int], free: Sequence[Any], target: int
) -> Iterator[tuple[Any, ...]]:
    """Ordered tuples of distinct axes from ``free`` whose sizes multiply to ``target``."""
    if target == 1:
        yield ()
        return
    for a in free:
        if sizes[a] > 1 and target % sizes[a] == 0:
            rest = [b for b in free if b != a]
            for tail in _ordered_axes_with_product(sizes, rest, target // sizes[a]):
                yield (a, *tail)


def _candidate_specs(mesh: Mesh, hlo: Any, ndim: int) -> Iterator[PartitionSpec]:
    """Specs whose tiling has ``hlo``'s block counts (their device order still to check)."""
    if hlo.is_replicated():
        yield PartitionSpec()
        return
    if not hlo.is_tiled() or (hlo.subgroup_types() and not hlo.replicate_on_last_tile_dim()):
        return
    tiles = list(hlo.tile_assignment_dimensions())
    if hlo.replicate_on_last_tile_dim():
        tiles = tiles[:-1]
    if len(tiles) != ndim:
        return
    sizes = mesh.shape
    useful = [a for a in mesh.axis_names if sizes[a] > 1]

    def assign(d: int, free: list[Any]) -> Iterator[list[Any]]:
        if d == ndim:
            yield []
            return
        for axes in _ordered_axes_with_product(sizes, free, tiles[d]):
            remaining = [a for a in free if a not in axes]
            for tail in assign(d + 1, remaining):
                yield [axes, *tail]

    for per_dim in assign(0, useful):
        entries = [None if not a else (a[0] if len(a) == 1 else a) for a in per_dim]
        while entries and entries[-1] is None:
            entries.pop()
        yield PartitionSpec(*entries)


def make_single_device_sharding(
    device: Device, *, memory_kind: str | None = None
) -> SingleDeviceSharding:
    """A sharding that puts all of an array on ``device``.

    Example:
      >>> from polyjax_interpreters import backends
      >>> make_single_device_sharding(backends.devices()[0])
      SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
    """
    return SingleDeviceSharding(device, memory_kind=memory_kind)
