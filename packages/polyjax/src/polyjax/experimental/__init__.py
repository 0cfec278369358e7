"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, `maps.xmap`, `multihost_utils` (collectives between processes),
and `ode` (`odeint`)."""

__all__ = ["maps", "multihost_utils", "ode", "shard_map"]
