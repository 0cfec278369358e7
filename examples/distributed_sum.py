"""A two-process program: each process holds half of a vector; a jitted sum reduces across both.

Run it as two processes on this machine (docs/distributed.md)::

    python -m polyjax.distributed.launch -n 2 examples/distributed_sum.py

Each process prints the same global sum, 0 + 1 + ... + 7 = 28.
"""

import numpy as np

import polyjax
import polyjax.numpy as jnp
from polyjax.sharding import NamedSharding
from polyjax.sharding import PartitionSpec as P

# The coordinator's address, the number of processes and this one's id come
# from the JAX_* variables that the launcher (or your cluster) sets.
polyjax.distributed.initialize()

mesh = polyjax.make_mesh((polyjax.device_count(),), ("batch",))
sharding = NamedSharding(mesh, P("batch"))
# This process's part of the global vector: 4 consecutive numbers.
me = polyjax.process_index()
local = np.arange(4 * me, 4 * me + 4, dtype=np.float32)
x = polyjax.make_array_from_process_local_data(sharding, local)

total = polyjax.jit(jnp.sum, out_shardings=NamedSharding(mesh, P()))(x)
print(f"process {me} of {polyjax.process_count()}: global shape {x.shape}, sum {float(total)}")
