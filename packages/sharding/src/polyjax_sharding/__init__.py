"""Meshes and named shardings for polyjax (``polyjax.sharding``).

- `Mesh` arranges devices in a grid with named axes; `make_mesh` builds one
  over the available devices; `set_mesh` makes one the mesh in context.
- `PartitionSpec` (``P``) says which mesh axes split each array dimension;
  `NamedSharding` is the sharding it gives over a mesh.
- `shard_map` runs a per-device function on the blocks of its arguments,
  with collectives over the mesh axes; `pmap`, `xmap` and `smap` (one mesh
  axis, vmap-style axes) are built on it.
- `visualize_sharding` / `visualize_array_sharding` draw which device holds
  which block.
- `distributed` joins a run of several processes (XLA's distributed service);
  `multihost_utils` moves values between them; `launch` starts N processes
  on this machine (docs/distributed.md).

`AbstractMesh`, `AxisType` and `PartitionSpec` come from polyjax-core (they
need no devices); the rest needs jaxlib's devices. Importing this package
registers `NamedSharding` as the way bare `PartitionSpec`s become shardings
(``polyjax_core.spec_to_sharding``).

Example:
  >>> from polyjax_sharding import NamedSharding, PartitionSpec as P, make_mesh
  >>> mesh = make_mesh((1,), ("x",))
  >>> NamedSharding(mesh, P("x")).is_fully_replicated
  True
"""

from polyjax_core.mesh import AbstractDevice, AbstractMesh, AxisType
from polyjax_core.mesh_context import register_spec_to_sharding, use_abstract_mesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_interpreters.sharding import Sharding, SingleDeviceSharding
from polyjax_sharding._explicit import auto_axes, explicit_axes, reshard
from polyjax_sharding._mesh import Mesh, get_abstract_mesh, get_mesh, make_mesh, set_mesh, use_mesh
from polyjax_sharding._named_sharding import (
    DuplicateSpecError,
    IndivisibleError,
    NamedSharding,
    make_single_device_sharding,
)
from polyjax_sharding._pmap import pmap
from polyjax_sharding._shard_map import shard_map, shard_map_p
from polyjax_sharding._smap import smap
from polyjax_sharding._visualize import visualize_array_sharding, visualize_sharding
from polyjax_sharding._xmap import xmap

# Submodules that are part of the API (after the names they use).
from polyjax_sharding import distributed, launch, multihost_utils  # noqa: E402  isort: skip

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "DuplicateSpecError",
    "IndivisibleError",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "__version__",
    "auto_axes",
    "distributed",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "launch",
    "make_mesh",
    "make_single_device_sharding",
    "multihost_utils",
    "pmap",
    "reshard",
    "set_mesh",
    "shard_map",
    "shard_map_p",
    "smap",
    "use_abstract_mesh",
    "use_mesh",
    "visualize_array_sharding",
    "visualize_sharding",
    "xmap",
]

register_spec_to_sharding(NamedSharding)


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata is slow to import.
    if name == "__version__":
        from importlib.metadata import version

        return version("polyjax-sharding")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
