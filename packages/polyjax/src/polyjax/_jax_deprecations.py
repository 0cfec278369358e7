"""The names JAX 0.10.2 deprecated or removed, answered as JAX answers them.

Code written for JAX may still reach for a name JAX has deprecated. JAX keeps
such a name behind its module's ``__getattr__``: looking it up either warns
with a `DeprecationWarning` and gives the object, or, once the name is removed,
raises `AttributeError` with the message that says what to use instead. The
facade modules do the same with this table, so that a user porting JAX code
meets JAX's advice (in polyjax's names; the versions are JAX's, whose API
polyjax follows).

Only names JAX still answers for are here; the rest are simply absent.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

from polyjax_core.deprecations import deprecation_message

__all__ = ["module_getattr"]


def _removed(name: str, since: str, use: str) -> tuple[str, None]:
    message = deprecation_message(
        name, since=since, removal="0.10.0", use=use, package="JAX", removed=True
    )
    return message, None


def _moved(message: str, target: str) -> tuple[str, Callable[[], Any]]:
    module, _, attr = target.rpartition(".")
    return message, lambda: getattr(importlib.import_module(module), attr)


def _pmap_migration(name: str) -> tuple[str, None]:
    return (
        f"{name} is deprecated; use polyjax.device_put instead. See "
        "https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements for a "
        "drop-in replacement.",
        None,
    )


# module -> old name -> (message, None once removed | a function giving the object)
_TABLE: dict[str, dict[str, tuple[str, Callable[[], Any] | None]]] = {
    "polyjax": {
        "device_put_replicated": _pmap_migration("polyjax.device_put_replicated"),
        "device_put_sharded": _pmap_migration("polyjax.device_put_sharded"),
    },
    "polyjax.numpy": {
        "fix": (
            deprecation_message(
                "polyjax.numpy.fix", since="0.9.0", removal="0.10.0",
                use="polyjax.numpy.trunc", package="JAX",
            ),
            None,
        ),
    },
    "polyjax.lax": {
        "pvary": _removed("polyjax.lax.pvary", "0.8.2", "polyjax.lax.pcast(..., to='varying')"),
    },
    "polyjax.scipy.special": {
        "sph_harm": _removed(
            "polyjax.scipy.special.sph_harm", "0.7.0", "polyjax.scipy.special.sph_harm_y"
        ),
    },
    # JAX 0.10 removed these; polyjax 0.1 had them, so they warn through its own
    # deprecation period (docs/releasing.md) before they go.
    "polyjax.ad_checkpoint": {
        name: _moved(
            deprecation_message(
                f"polyjax.ad_checkpoint.{name}", since="0.1.1", removal="0.2.0",
                use=f"polyjax.{name}", package="polyjax",
            ) + f" (JAX 0.10 removed jax.ad_checkpoint.{name}.)",
            f"polyjax_interpreters.remat.{name}",
        )
        for name in ("checkpoint", "remat")
    },
    "polyjax.experimental.shard_map": {
        "shard_map": _moved(
            "polyjax.experimental.shard_map is deprecated in JAX v0.8.0. "
            "Use polyjax.shard_map instead.",
            "polyjax.experimental.shard_map._shard_map",
        ),
    },
}  # fmt: skip


def module_getattr(
    module: str, fallback: Callable[[str], Any] | None = None
) -> Callable[[str], Any]:
    """The ``__getattr__`` of facade ``module``: JAX's deprecated names, then ``fallback``.

    A deprecated name warns (`DeprecationWarning`, attributed to the caller) and
    gives its object; a removed one raises `AttributeError` with JAX's advice.
    """
    table = _TABLE[module]

    def __getattr__(name: str) -> Any:
        entry = table.get(name)
        if entry is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        message, get = entry
        if get is None:
            raise AttributeError(message)
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return get()

    return __getattr__
