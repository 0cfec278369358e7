"""polyjax.sharding: how an array's data is laid out over devices, as in ``jax.sharding``.

`Sharding` is the interface every sharding implements (device set, addressable
devices, memory kind, shard shape, HLO sharding, equivalence);
`SingleDeviceSharding` places a whole array on one device. A `Mesh` arranges
devices in a grid with named axes (`make_mesh` builds one, `set_mesh` makes it
the mesh in context), a `PartitionSpec` names the mesh axes that split each
array dimension, and `NamedSharding(mesh, spec)` is the sharding they give.
See docs/sharding.md.

Example:
  >>> import polyjax
  >>> from polyjax.sharding import NamedSharding, PartitionSpec as P, Sharding
  >>> mesh = polyjax.make_mesh((1,), ("x",))
  >>> s = NamedSharding(mesh, P("x"))
  >>> isinstance(s, Sharding), s.num_devices
  (True, 1)
"""

from polyjax import _runtime  # noqa: F401  (operators on the arrays these shardings place)
from polyjax_sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    get_mesh,
    make_single_device_sharding,
    reshard,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
    "use_mesh",
]
