"""`Mesh`: devices arranged in a grid with named axes; `make_mesh`; the mesh in context.

A `Mesh` is a NumPy array of devices plus one name (and one `AxisType`) per
array axis. Its device-free part is its `abstract_mesh` (core's
`AbstractMesh`), which is what tracing and shape rules see.

``set_mesh(mesh)`` installs a mesh for the current thread: at once when
called as a statement, or for the extent of a ``with`` block. Code that
builds shardings from bare `PartitionSpec`s (``jit(in_shardings=P('x'))``)
uses it. ``with mesh:`` is JAX's deprecated older form: it warns, and only
bare specs see its mesh (``get_mesh`` does not).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from jaxlib import _jax

from polyjax_core import mesh_context
from polyjax_core.mesh import (
    AbstractDevice,
    AbstractMesh,
    AxisQueries,
    AxisType,
    canonicalize_axis_types,
    check_axis_names,
)
from polyjax_interpreters import backends

__all__ = ["Mesh", "get_abstract_mesh", "get_mesh", "make_mesh", "set_mesh", "use_mesh"]

Device = Any


def _device_array(devices: Any) -> np.ndarray:
    array = np.array(devices, dtype=object)  # a copy: later changes to the input don't leak in
    for d in array.flat:
        if not (hasattr(d, "id") and hasattr(d, "platform")):
            raise TypeError(f"Mesh devices must be devices, got {d!r} of type {type(d).__name__}")
    flat = list(array.flat)
    if len(set(flat)) != len(flat):
        repeated = next(d for d in flat if flat.count(d) > 1)
        raise ValueError(f"Mesh devices must be distinct, but {repeated!r} appears more than once")
    array.setflags(write=False)
    return array


class Mesh(AxisQueries):
    """Devices arranged in a grid whose axes have names.

    Args:
      devices: an array (or nested sequence) of devices; its rank is the
        number of axes.
      axis_names: one name per axis of ``devices`` (a string for one axis).
      axis_types: ``None`` (all ``AxisType.Auto``), one `AxisType`, or one per axis.

    Raises:
      ValueError: the number of names differs from the rank of ``devices``, a
        name repeats, or a device appears twice.
      TypeError: an entry of ``devices`` is not a device, or an axis type is
        not an `AxisType`.

    Example:
      >>> import numpy as np
      >>> from polyjax_interpreters import backends
      >>> mesh = Mesh(np.array(backends.devices()[:1]).reshape(1, 1), ("x", "y"))
      >>> dict(mesh.shape), mesh.size
      ({'x': 1, 'y': 1}, 1)
    """

    __slots__ = (
        "devices",
        "axis_names",
        "axis_types",
        "_hash",
        "_flat",
        "_abstract",
        "_device_list",
    )

    def __init__(
        self,
        devices: np.ndarray | Sequence[Device],
        axis_names: str | Sequence[Any],
        axis_types: AxisType | Sequence[AxisType] | None = None,
    ):
        axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        devices = _device_array(devices)
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length of "
                f"its second argument (`axis_names`), but got devices.ndim == {devices.ndim} and "
                f"len(axis_names) == {len(axis_names)}."
            )
        check_axis_names(axis_names, "Mesh")
        self._set(devices, axis_names, canonicalize_axis_types(axis_types, axis_names, "Mesh"))

    def _set(
        self, devices: np.ndarray, names: tuple[Any, ...], types: tuple[AxisType, ...]
    ) -> None:
        self.devices = devices
        self.axis_names = names
        self.axis_types = types
        self._flat = tuple(devices.flat)
        self._hash = hash((names, types, devices.shape, self._flat))
        self._abstract: AbstractMesh | None = None
        self._device_list: Any = None

    @classmethod
    def _empty(cls) -> Mesh:
        """The mesh with no axes and no devices (what `get_mesh` gives outside any)."""
        mesh = cls.__new__(cls)
        empty = np.empty((0,), dtype=object)
        empty.setflags(write=False)
        mesh._set(empty, (), ())
        return mesh

    # -- shape -------------------------------------------------------------

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return () if self.empty else self.devices.shape

    @property
    def size(self) -> int:
        """The number of devices."""
        return self.devices.size

    @property
    def empty(self) -> bool:
        """Whether the mesh has no devices."""
        return self.devices.size == 0

    @property
    def is_scalar(self) -> bool:
        return self.devices.ndim == 0

    # -- devices -----------------------------------------------------------

    @property
    def device_ids(self) -> np.ndarray:
        """The ids of ``devices``, in the same shape."""
        return np.vectorize(lambda d: d.id, otypes=[np.int64])(self.devices)

    @property
    def _flat_devices_tuple(self) -> tuple[Device, ...]:
        """The devices in row-major mesh order: the order XLA numbers them in."""
        return self._flat

    @property
    def _internal_device_list(self) -> Any:
        """The devices as jaxlib's ``DeviceList`` (what jaxlib's sharding classes hold)."""
        if self._device_list is None:
            self._device_list = _jax.DeviceList(self._flat_devices_tuple)
        return self._device_list

    @property
    def local_devices(self) -> list[Device]:
        """The devices attached to this process, in mesh order."""
        return [d for d in self.devices.flat if d.process_index == d.client.process_index()]

    @property
    def is_multi_process(self) -> bool:
        return len({d.process_index for d in self.devices.flat}) > 1

    @property
    def local_mesh(self) -> Mesh:
        """The block of the mesh this process holds, with the same axes.

        In a single process that is the whole mesh.

        Raises:
          ValueError: this process's devices do not form a block of the mesh.
        """
        if not self.is_multi_process:
            return self
        here = np.vectorize(lambda d: d.process_index == d.client.process_index(), otypes=[bool])(
            self.devices
        )
        rows = [np.unique(ix) for ix in np.nonzero(here)]
        block = self.devices[np.ix_(*rows)]
        if block.size != int(here.sum()):
            raise ValueError(
                "This process's devices do not form a contiguous block of the mesh "
                f"{dict(self.shape)}, so it has no local mesh."
            )
        return Mesh(block, self.axis_names, axis_types=self.axis_types)

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The axis names, sizes and types, and the kind of device."""
        if self._abstract is None:
            device = None
            if not self.empty:
                d = self.devices.flat[0]
                device = AbstractDevice(d.device_kind, getattr(d, "num_cores", None), d.platform)
            self._abstract = AbstractMesh(
                self.axis_sizes, self.axis_names, self.axis_types, abstract_device=device
            )
        return self._abstract

    def update(self, **changes: Any) -> Mesh:
        """A copy with some of ``devices``, ``axis_names``, ``axis_types`` replaced."""
        fields = {"devices": self.devices, "axis_names": self.axis_names}
        fields["axis_types"] = self.axis_types
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"Mesh.update() got unexpected arguments {sorted(unknown)}")
        fields.update(changes)
        return Mesh(**fields)

    # -- the deprecated `with mesh:` ---------------------------------------

    def __enter__(self) -> Mesh:
        warnings.warn(
            "`with mesh:` context manager has been deprecated. Please use "
            "`with polyjax.set_mesh(mesh):` instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        mesh_context.push_legacy_mesh(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        mesh_context.pop_legacy_mesh()

    # -- identity ----------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Mesh):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.axis_names == other.axis_names
            and self.axis_types == other.axis_types
            and self.devices.shape == other.devices.shape
            and self._flat_devices_tuple == other._flat_devices_tuple
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={self.axis_types})"
        )

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        return f"Mesh({self._axes_repr(self.axis_sizes)})"


_EMPTY_MESH = Mesh._empty()


def _default_devices(count: int) -> list[Device]:
    """``count`` devices of the default backend, neighbours first.

    Devices of one process are kept together (a stable sort by process), so the
    minor mesh axes, where most communication happens, stay within a host;
    within a process the backend's order (by id) is kept.
    """
    devices = sorted(backends.devices(), key=lambda d: d.process_index)
    if len(devices) < count:
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh_shape")
    return devices[:count]


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: str | Sequence[Any],
    axis_types: AxisType | Sequence[AxisType] | None = None,
    *,
    devices: Sequence[Device] | None = None,
) -> Mesh:
    """A mesh of the given shape over the default backend's devices (or ``devices``).

    As in JAX 0.10.2, the axes are ``AxisType.Explicit`` unless ``axis_types``
    says otherwise (polyjax does not yet put shardings in array types, so
    Explicit axes are partitioned like Auto ones; see docs/sharding.md).

    Args:
      axis_shapes: the size of each axis.
      axis_names: the name of each axis.
      axis_types: the axes' types; default: all ``AxisType.Explicit``.
      devices: the devices to use, in order; default: the default backend's
        devices, those of one process together, by id.

    Returns:
      The `Mesh`, over the first ``prod(axis_shapes)`` devices.

    Raises:
      ValueError: there are fewer devices than the mesh needs, or the
        numbers of sizes, names and types differ.

    Example:
      >>> mesh = make_mesh((1,), ("x",))
      >>> mesh
      Mesh(axis_sizes=(1,), axis_names=('x',), axis_types=(Explicit,))
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    count = math.prod(axis_shapes)
    if devices is None:
        try:
            chosen = _default_devices(count)
        except ValueError:
            n = len(backends.devices())
            raise ValueError(
                f"Number of devices {n} must be >= the product of mesh_shape {axis_shapes}"
            ) from None
    else:
        chosen = list(np.array(devices, dtype=object).flat)  # any array of devices, flattened
        if len(chosen) < count:
            raise ValueError(
                f"Number of devices {len(chosen)} must be >= the product of mesh_shape "
                f"{axis_shapes}"
            )
        chosen = chosen[:count]
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_names)
    if len(axis_shapes) != len(axis_names):
        raise ValueError(
            f"make_mesh needs one name per axis size, got axis_shapes={axis_shapes} and "
            f"axis_names={axis_names}"
        )
    array = np.empty(count, dtype=object)
    array[:] = chosen
    return Mesh(array.reshape(axis_shapes), axis_names, axis_types)


class set_mesh(mesh_context.MeshContext):  # noqa: N801  (JAX's name; also a context manager)
    """Makes ``mesh`` the mesh in context, for this thread.

    Called as a statement it takes effect at once and stays; used as
    ``with set_mesh(mesh):`` the previous mesh comes back at the end of the
    block. ``set_mesh(None)`` removes the mesh.

    Args:
      mesh: a `Mesh`, or None.

    Raises:
      ValueError: ``mesh`` is neither a `Mesh` nor None.

    Example:
      >>> mesh = make_mesh((1,), ("x",))
      >>> with set_mesh(mesh):
      ...     get_mesh() == mesh
      True
      >>> get_mesh().empty
      True
    """

    __slots__ = ()

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `polyjax.sharding.Mesh`. Got {type(mesh)}")
        if mesh is None or mesh.empty:
            super().__init__(None, None)
        else:
            super().__init__(mesh, mesh.abstract_mesh)


@contextmanager
def use_mesh(mesh: Mesh) -> Iterator[None]:
    """Context manager form of `set_mesh` (JAX's earlier name): the mesh holds inside only."""
    with set_mesh(mesh):
        yield


def get_mesh() -> Mesh:
    """The mesh installed by the innermost `set_mesh`, or the empty mesh.

    Example:
      >>> get_mesh()
      Mesh(axis_sizes=(), axis_names=())
    """
    mesh = mesh_context.get_set_mesh()
    return _EMPTY_MESH if mesh is None else mesh


get_abstract_mesh = mesh_context.get_abstract_mesh
