"""Shardings: how an array's data is laid out over devices.

:class:`Sharding` is the interface every sharding implements (ARCHITECTURE.md):
the devices, which of them this process can address, the memory kind, the
shape of each shard, the equivalent XLA ``HloSharding`` for a given rank, and
equality/hashing (shardings are parts of cache keys).

jaxlib's C++ needs sharding objects that *are* its own classes: it reads the
device list from them when it creates, moves and returns arrays. jaxlib's
classes are nanobind types, which allow only one base class, so a concrete
sharding cannot inherit from both jaxlib's class and :class:`Sharding`.
Instead :class:`Sharding` is an abstract base class, and each concrete
sharding subclasses jaxlib's class, implements the whole interface itself
(sharing the generic methods defined here), and is registered as a virtual
subclass. ``isinstance(s, Sharding)`` holds for all of them. jaxlib's own
classes are never modified.

Example:
  >>> from polyjax_interpreters import backends
  >>> s = SingleDeviceSharding(backends.devices()[0])
  >>> s
  SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)
  >>> isinstance(s, Sharding), s.shard_shape((4, 2))
  (True, (4, 2))
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax, xla_client

__all__ = ["GSPMDSharding", "Sharding", "SingleDeviceSharding", "hlo_devices_indices_map"]

Device = Any
Index = tuple[slice, ...]


class Sharding(abc.ABC):
    """The interface of every sharding (abstract).

    Concrete shardings define the abstract members; the others have generic
    definitions here that concrete classes may reuse by assignment (they cannot
    inherit them, see the module docstring).
    """

    # -- abstract ---------------------------------------------------------

    @property
    @abc.abstractmethod
    def device_set(self) -> set[Device]:
        """The set of devices holding (some of) the data."""

    @property
    @abc.abstractmethod
    def _device_assignment(self) -> tuple[Device, ...]:
        """The devices in the order XLA numbers them (logical device ids)."""

    @property
    @abc.abstractmethod
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""

    @property
    @abc.abstractmethod
    def memory_kind(self) -> str | None:
        """The kind of memory the data lives in (``'device'``, ``'pinned_host'``, ...)."""

    @abc.abstractmethod
    def with_memory_kind(self, kind: str) -> Sharding:
        """The same sharding in memory ``kind``."""

    @abc.abstractmethod
    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        """The equivalent XLA sharding for an array of rank ``num_dimensions``."""

    @abc.abstractmethod
    def devices_indices_map(self, global_shape: tuple[int, ...]) -> Mapping[Device, Index]:
        """Which slice of an array of ``global_shape`` each device holds."""

    @abc.abstractmethod
    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of each device's shard of an array of ``global_shape``."""

    # -- generic ----------------------------------------------------------

    @property
    def num_devices(self) -> int:
        """The number of devices the data is spread over."""
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set[Device]:
        """The devices of ``device_set`` attached to this process."""
        return {d for d in self.device_set if d.process_index == d.client.process_index()}

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process can address every device of the sharding."""
        return all(d.process_index == d.client.process_index() for d in self.device_set)

    @property
    def has_addressable_devices(self) -> bool:
        """Whether this process can address any device of the sharding."""
        return any(d.process_index == d.client.process_index() for d in self.device_set)

    def addressable_devices_indices_map(
        self, global_shape: tuple[int, ...]
    ) -> Mapping[Device, Index]:
        """Like :meth:`devices_indices_map`, for this process's devices only."""
        mine = self.addressable_devices
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in mine}

    def is_equivalent_to(self, other: Any, ndim: int) -> bool:
        """Whether ``other`` places an array of rank ``ndim`` the same way.

        Two shardings of different classes are equivalent when they give the same
        XLA sharding on the same devices in the same memory kind.
        """
        try:
            return (
                tuple(self._device_assignment) == tuple(other._device_assignment)
                and self.memory_kind == other.memory_kind
                and _hlo_equivalent(
                    self._to_xla_hlo_sharding(ndim),
                    other._to_xla_hlo_sharding(ndim),
                    len(self._device_assignment),
                )
            )
        except AttributeError:
            return False


def _hlo_equivalent(a: Any, b: Any, num_devices: int) -> bool:
    if a == b:
        return True
    # A tiling over one device, or one whose tiles all hold everything, is a replication.
    return num_devices == 1 or (a.is_replicated() and b.is_replicated())


_REPLICATED = xla_client.HloSharding.replicate()


class SingleDeviceSharding(_jax.SingleDeviceSharding):
    """All of an array on one device.

    Args:
      device: the device.
      memory_kind: the memory to use; ``None`` means the device's default memory
        (reported as ``'device'`` on CPU and GPU).

    Example:
      >>> from polyjax_interpreters import backends
      >>> d = backends.devices()[0]
      >>> SingleDeviceSharding(d) == SingleDeviceSharding(d, memory_kind="device")
      True
    """

    # One object per (device, memory kind): equal shardings are the same object, so
    # equality and hashing are object identity, in C. jaxlib's C++ jit hashes every
    # argument's sharding on every call, and a Python ``__hash__`` there cost about
    # a tenth of a small jitted call. (The number of distinct values is bounded by
    # the devices times their memory kinds, so the table is never pruned.)
    __slots__ = ()

    def __new__(cls, device: Device, *, memory_kind: str | None = None) -> SingleDeviceSharding:
        found = _CANONICAL.get((device, memory_kind))
        if found is None:
            fresh = _jax.SingleDeviceSharding.__new__(cls)
            _jax.SingleDeviceSharding.__init__(fresh, device, memory_kind=memory_kind)
            # ``None`` means the default memory kind: both spellings share one object.
            found = _CANONICAL.setdefault((device, fresh._memory_kind), fresh)
            _CANONICAL.setdefault((device, memory_kind), found)
        return found

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        pass  # (initialised once, in __new__)

    # `_device` and `_memory_kind` (canonicalized) come from the C++ base.

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return 1

    @property
    def is_fully_addressable(self) -> bool:
        d = self._device
        return d.process_index == d.client.process_index()

    has_addressable_devices = is_fully_addressable

    @property
    def addressable_devices(self) -> set[Device]:
        return {self._device} if self.is_fully_addressable else set()

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        return _REPLICATED

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Device, Index]:
        return {self._device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    addressable_devices_indices_map = Sharding.addressable_devices_indices_map
    is_equivalent_to = Sharding.is_equivalent_to

    # (``__eq__`` and ``__hash__`` are object identity: see ``__new__``.)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __reduce__(self) -> Any:
        return (_single_device_sharding, (self._device, self._memory_kind))


_CANONICAL: dict[tuple[Device, str | None], SingleDeviceSharding] = {}


def _single_device_sharding(device: Device, memory_kind: str | None) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


Sharding.register(SingleDeviceSharding)


# ---------------------------------------------------------------------------
# Shardings described by an XLA HloSharding


def _tile_grid(hlo: Any, ndim: int) -> tuple[tuple[int, ...], np.ndarray] | None:
    """(tiles per data dimension, logical device of each tile) of a tiled ``hlo``.

    The device array has the data dimensions first, then one trailing axis of
    replicas (its entries hold the same data). ``None`` means every device holds
    everything (replicated, or a maximal sharding on one device).
    """
    if hlo.is_replicated() or hlo.is_maximal() or not hlo.is_tiled():
        return None
    dims = tuple(hlo.tile_assignment_dimensions())
    devices = np.asarray(hlo.tile_assignment_devices(), dtype=np.int64).reshape(dims)
    data = dims[:ndim]
    devices = devices.reshape((*data, -1))
    return data, devices


def hlo_devices_indices_map(
    hlo: Any, devices: Sequence[Device], global_shape: Sequence[int]
) -> dict[Device, Index]:
    """Which slice of an array of ``global_shape`` each device holds under ``hlo``.

    ``devices`` is the sharding's device assignment (``hlo`` numbers devices by
    their position in it). A dimension of size ``n`` split in ``k`` tiles gives
    tiles of ``ceil(n / k)`` elements, the last ones shorter (as XLA pads them).
    """
    ndim = len(global_shape)
    grid = _tile_grid(hlo, ndim)
    if grid is None:
        full = (slice(None),) * ndim
        return {d: full for d in devices}
    tiles, assignment = grid
    chunks = [math.ceil(n / t) if t else 0 for n, t in zip(global_shape, tiles)]
    out: dict[Device, Index] = {}
    for pos in np.ndindex(*assignment.shape):
        index = tuple(
            slice(min(p * c, n), min((p + 1) * c, n)) if t > 1 else slice(None)
            for p, c, n, t in zip(pos[:ndim], chunks, global_shape, tiles)
        )
        out[devices[int(assignment[pos])]] = index
    return out


def _hlo_shard_shape(hlo: Any, global_shape: Sequence[int]) -> tuple[int, ...]:
    grid = _tile_grid(hlo, len(global_shape))
    if grid is None:
        return tuple(global_shape)
    tiles = grid[0]
    return tuple(math.ceil(n / t) for n, t in zip(global_shape, tiles))


def _hlo_fully_replicated(hlo: Any) -> bool:
    if hlo.is_replicated():
        return True
    if hlo.is_manual() or hlo.is_unknown() or not hlo.is_tiled():
        return hlo.is_maximal() and hlo.num_devices() <= 1
    dims = hlo.tile_assignment_dimensions()
    data = len(dims) - (1 if hlo.replicate_on_last_tile_dim() else len(hlo.subgroup_types()))
    return all(d == 1 for d in dims[:data])


class GSPMDSharding(_jax.GSPMDSharding):
    """A sharding given by an XLA ``HloSharding`` over a list of devices.

    The ``HloSharding`` numbers devices by their position in ``devices`` (the
    device assignment). This is the runtime's general sharding: what the
    partitioner chose for an output that has no named form, and what tests use
    below polyjax-sharding.

    Args:
      devices: the device assignment.
      hlo_sharding: an ``xla_client.HloSharding`` (or ``OpSharding``).
      memory_kind: the memory to use; ``None`` means the devices' default.

    Example:
      >>> from jaxlib import xla_client
      >>> from polyjax_interpreters import backends
      >>> devs = backends.devices()
      >>> s = GSPMDSharding(devs, xla_client.HloSharding.replicate())
      >>> s.is_fully_replicated, s.shard_shape((4, 2))
      (True, (4, 2))
    """

    __slots__ = ("_hash", "_hlo", "_replicated", "_indices_cache")

    def __init__(self, devices: Sequence[Device], hlo_sharding: Any, *, memory_kind=None):
        if isinstance(hlo_sharding, xla_client.OpSharding):
            hlo_sharding = xla_client.HloSharding.from_proto(hlo_sharding)
        devices = tuple(devices)
        if hlo_sharding.is_tiled() and not hlo_sharding.is_replicated():
            tiles = math.prod(hlo_sharding.tile_assignment_dimensions())
            if tiles != len(devices):
                raise ValueError(
                    f"GSPMDSharding: the sharding {hlo_sharding} has {tiles} tiles but "
                    f"{len(devices)} devices were given; they must be equal."
                )
        super().__init__(devices, hlo_sharding, memory_kind)
        self._hlo = hlo_sharding
        self._replicated = _hlo_fully_replicated(hlo_sharding)
        key = "replicated" if self._replicated else hlo_sharding
        self._hash = hash((devices, key, self._memory_kind))
        self._indices_cache: dict = {}

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self._devices

    @property
    def device_set(self) -> set[Device]:
        return set(self._devices)

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    @property
    def is_fully_replicated(self) -> bool:
        return self._replicated

    @property
    def num_devices(self) -> int:
        return len(self._devices)

    def with_memory_kind(self, kind: str) -> GSPMDSharding:
        return GSPMDSharding(self._devices, self._hlo, memory_kind=kind)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> xla_client.HloSharding:
        return self._hlo

    def _from_hlo_sharding(self, hlo_sharding: Any, ndim: int) -> GSPMDSharding:
        return GSPMDSharding(self._devices, hlo_sharding, memory_kind=self._memory_kind)

    def devices_indices_map(self, global_shape: Sequence[int]) -> Mapping[Device, Index]:
        shape = tuple(global_shape)
        out = self._indices_cache.get(shape)
        if out is None:
            out = self._indices_cache[shape] = hlo_devices_indices_map(
                self._hlo, self._devices, shape
            )
        return out

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return _hlo_shard_shape(self._hlo, global_shape)

    addressable_devices = Sharding.addressable_devices
    is_fully_addressable = Sharding.is_fully_addressable
    has_addressable_devices = Sharding.has_addressable_devices
    addressable_devices_indices_map = Sharding.addressable_devices_indices_map
    is_equivalent_to = Sharding.is_equivalent_to

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, GSPMDSharding):
            return NotImplemented
        return (
            self._devices == other._devices
            and self._memory_kind == other._memory_kind
            and (self._hlo == other._hlo or (self._replicated and other._replicated))
        )

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"GSPMDSharding({self._hlo}, memory_kind={self._memory_kind})"


Sharding.register(GSPMDSharding)
