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
from collections.abc import Mapping, Sequence
from typing import Any

from jaxlib import _jax, xla_client

__all__ = ["Sharding", "SingleDeviceSharding"]

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

    # `_hash` caches the hash: shardings are hashed on every dispatch-cache lookup.
    __slots__ = ("_hash",)

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        super().__init__(device, memory_kind=memory_kind)
        self._hash = hash((device, self._memory_kind))

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

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, SingleDeviceSharding):
            return NotImplemented
        return self._device == other._device and self._memory_kind == other._memory_kind

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    def __reduce__(self) -> Any:
        return (_single_device_sharding, (self._device, self._memory_kind))


def _single_device_sharding(device: Device, memory_kind: str | None) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


Sharding.register(SingleDeviceSharding)
