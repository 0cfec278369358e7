"""Experimental APIs (``polyjax.experimental``): `shard_map` with JAX's older
argument names, `maps.xmap`, `multihost_utils` (collectives between processes),
`io_callback` (a host callback with side effects), `checkify`,
`compilation_cache`, `ode` (`odeint`), `jet` and `sparse` (`BCOO`, `BCSR`,
`COO`, `CSR`, `CSC`, their primitives, `sparsify`)."""

from typing import Any

__all__ = [
    "checkify",
    "compilation_cache",
    "io_callback",
    "jet",
    "maps",
    "multihost_utils",
    "ode",
    "shard_map",
    "sparse",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use, like the names of `polyjax` itself.
    if name == "io_callback":
        import polyjax._runtime  # noqa: F401  (operators on the arrays it returns)
        from polyjax_numpy.callback import io_callback

        globals()[name] = io_callback
        return io_callback
    if name in __all__:  # a submodule, imported on first lookup
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
