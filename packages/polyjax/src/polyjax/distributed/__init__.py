"""polyjax.distributed: running one program as several processes, as ``jax.distributed``.

See `polyjax_sharding.distributed` and docs/distributed.md.

Example:
  >>> import polyjax
  >>> polyjax.distributed.is_initialized()
  False
"""

from polyjax_sharding.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
