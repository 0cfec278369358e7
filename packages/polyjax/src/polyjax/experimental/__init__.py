"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, `maps.xmap`, `multihost_utils` (collectives between processes),
`ode` (`odeint`), `jet` and `sparse` (`BCOO`, `BCSR`, `sparsify`)."""

__all__ = ["jet", "maps", "multihost_utils", "ode", "shard_map", "sparse"]
