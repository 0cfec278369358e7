"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, and `maps.xmap`."""

__all__ = ["maps", "shard_map"]
