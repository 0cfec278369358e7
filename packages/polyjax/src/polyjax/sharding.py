"""polyjax.sharding: how an array's data is laid out over devices, as in ``jax.sharding``.

`Sharding` is the abstract interface (device set, addressable devices, memory
kind, shard shape, HLO sharding, equivalence); `SingleDeviceSharding` places a
whole array on one device. Meshes and named shardings come with polyjax-sharding.

Example:
  >>> import polyjax
  >>> from polyjax.sharding import Sharding, SingleDeviceSharding
  >>> s = SingleDeviceSharding(polyjax.devices()[0])
  >>> isinstance(s, Sharding), s.num_devices
  (True, 1)
"""

from polyjax import _runtime  # noqa: F401  (operators on the arrays these shardings place)
from polyjax_interpreters.sharding import Sharding, SingleDeviceSharding

__all__ = ["Sharding", "SingleDeviceSharding"]
