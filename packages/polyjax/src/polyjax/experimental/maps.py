"""``polyjax.experimental.maps``: `xmap`, named axes vectorized or partitioned over a mesh.

JAX removed this API; polyjax revives it on `vmap` and `shard_map`
(docs/xmap.md: its semantics and the differences from JAX's last xmap).
"""

import polyjax._runtime  # noqa: F401  (the lax primitives and their rules)
from polyjax_sharding import Mesh, xmap

__all__ = ["Mesh", "xmap"]
