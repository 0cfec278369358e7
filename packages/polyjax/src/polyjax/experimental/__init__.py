"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, `maps.xmap`, and `multihost_utils` (collectives between processes)."""

__all__ = ["checkify", "maps", "multihost_utils", "shard_map"]
