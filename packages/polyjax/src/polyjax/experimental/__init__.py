"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, `maps.xmap`, `multihost_utils` (collectives between processes),
`ode` (`odeint`) and `sparse` (`BCOO`, `BCSR`, `sparsify`)."""

__all__ = ["maps", "multihost_utils", "ode", "shard_map", "sparse"]
