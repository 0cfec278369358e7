"""``polyjax.experimental.multihost_utils``: collectives between the processes of a run.

See `polyjax_sharding.multihost_utils` and docs/distributed.md.
"""

import polyjax._runtime  # noqa: F401  (the lax primitives the compiled gathers use)
from polyjax_sharding.multihost_utils import (
    assert_equal,
    broadcast_one_to_all,
    global_array_to_host_local_array,
    host_local_array_to_global_array,
    process_allgather,
    sync_global_devices,
)

__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "sync_global_devices",
]
