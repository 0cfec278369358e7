"""jit's C++ fast path: jaxlib's ``pjit`` function object, fed by polyjax's own cache.

jaxlib's ``PjitFunction`` flattens a call's arguments, computes their signature
(pytree structure, static arguments, each array's dtype, shape, weak type,
sharding and commitment, and the values of every jaxlib ``Config`` that is part
of the jit key), looks the signature up in its cache and, on a hit, runs the
executable and rebuilds the output pytree, all in C++. On a miss it calls back
into Python (`JitWrapped`'s ordinary path), which returns the result and, when
the call can be repeated without Python, the "fast-path data" describing the
executable; later calls with the same signature never enter Python.

polyjax's ``Array`` stays a Python wrapper around jaxlib's ``ArrayImpl``
(ARCHITECTURE decision 6). The C++ side sees the ``ArrayImpl``\\ s because it
flattens with a private C++ pytree registry (`REGISTRY`): polyjax's node types,
plus ``Array`` as a node whose one child is its buffer. Output buffers come
back through the same node, so the results are ``Array``\\ s again.

What C++ cannot see is mirrored into its key, through jaxlib ``Config``
objects that are part of the jit key and that polyjax updates when its own
state changes:

- polyjax's configuration (`config.trace_context`): the global values
  (`_GLOBAL_CONFIG`) and the calling thread's overrides (`_LOCAL_CONFIG`);
- whether the calling thread is tracing (`_TRACING`): under ``make_jaxpr``,
  ``grad``, ``vmap`` or an outer ``jit`` the key differs, and the miss handler
  never hands C++ fast-path data then, so a traced call always reaches Python
  (which binds the ``jit`` primitive).
"""

from __future__ import annotations

import itertools
import sys
from typing import Any, NamedTuple

from jaxlib import _jax

from polyjax_core import config, tracing
from polyjax_core.pytree_bridge import cpp_registry_mirror
from polyjax_interpreters.array import Array, _new

__all__ = ["REGISTRY", "FastpathData", "make_pjit"]


class FastpathData(NamedTuple):
    """What jaxlib's C++ needs to run an executable without Python (read by field name)."""

    xla_executable: Any
    out_pytree_def: Any
    in_shardings: list[Any]
    out_shardings: list[Any]
    out_avals: list[Any]
    out_committed: list[bool]
    kept_var_bitvec: list[bool]
    in_device_local_layouts: list[Any]
    const_args: list[Any]


def _in_registry() -> Any:
    # A dataclass-style node: C++ reads ``_impl`` (the child) without calling
    # Python. Commitment is part of the key through the buffer's own flag, which
    # always equals the Array's (`Array._make`).
    cpp = cpp_registry_mirror()
    cpp.register_dataclass_node(Array, ["_impl"], [])
    return cpp


def _rebuild(aux: tuple[Any, bool], children: Any, _new: Any = _new, Array: type = Array) -> Array:
    # Runs once per output of every fast-path call, so it is as short as it can
    # be: the type and commitment are the ones the first (Python) call's output
    # had, kept in the node (a cache entry's outputs never change type); the
    # defaults make `_new` and `Array` local lookups.
    self = _new(Array)
    (self._impl,) = children
    self.aval, self._committed = aux
    return self


def _out_registry() -> Any:
    # Outputs are rebuilt through a custom node: one plain Python call per Array,
    # about half the cost of a dataclass node's keyword construction. (Only the
    # output tree definitions come from it; inputs flatten with `REGISTRY`.)
    cpp = cpp_registry_mirror()
    cpp.register_node(Array, lambda x: ((x._impl,), (x.aval, x._committed)), _rebuild)
    return cpp


REGISTRY = _in_registry()
_OUT_REGISTRY = _out_registry()


def _register_jaxlib_states() -> None:
    """The config states jaxlib's C++ jit reads; JAX registers its own if it is imported.

    Either set works for polyjax: its own options are in the key through
    `_CONTEXT`, and only calls whose inputs are all Arrays take the fast path (so
    jaxlib's x64 flag, which types Python scalars, never matters).
    """
    if "jax._src.config" in sys.modules:
        return
    jit_state = _jax.jax_jit
    new = _jax.config.Config
    jit_state.set_enable_x64_state(
        new("jax_enable_x64", False, include_in_jit_key=True, include_in_trace_context=True)
    )
    jit_state.set_disable_jit_state(
        new("jax_disable_jit", False, include_in_jit_key=True, include_in_trace_context=True)
    )
    jit_state.set_post_hook_state(new("jax_post_hook", None))


_register_jaxlib_states()

# What C++ cannot see, as part of its key: polyjax's configuration (the global
# values, and this thread's overrides) and whether this thread is tracing.
_GLOBAL_CONFIG = _jax.config.Config("polyjax_config", None, include_in_jit_key=True)
_LOCAL_CONFIG = _jax.config.Config("polyjax_config_overrides", None, include_in_jit_key=True)
_TRACING = _jax.config.Config("polyjax_tracing", False, include_in_jit_key=True)


# Each distinct snapshot gets a small int: C++ hashes and compares the key's
# config values on every call, and an int is cheaper than a tuple of ~30 options.
_snapshot_ids: dict[tuple, int] = {}
_next_id = itertools.count()  # (atomic: two threads never get the same id)


def _snapshot_id(snapshot: tuple) -> int:
    found = _snapshot_ids.get(snapshot)
    if found is None:
        found = _snapshot_ids.setdefault(snapshot, next(_next_id))
    return found


def _mirror_config() -> None:
    _GLOBAL_CONFIG.set_global(_snapshot_id(config.global_snapshot()))
    overrides = config.local_overrides()
    _LOCAL_CONFIG.set_local(_snapshot_id(overrides) if overrides else None)


_mirror_config()
config.trace_context_listeners.append(_mirror_config)
tracing.trace_listeners.append(_TRACING.set_local)


def _no_fallback(x: Any, sharding: Any, layout: Any) -> Any:
    # Fast-path entries are only made for calls whose every input is an Array,
    # and any other input changes the signature, so C++ never needs this.
    raise TypeError(f"polyjax's jit fast path got an argument of type {type(x).__name__}")


def make_pjit(
    name: str,
    fun: Any,
    cache_miss: Any,
    static_argnums: tuple[int, ...],
    static_argnames: tuple[str, ...],
    cache: Any,
) -> Any:
    """A jaxlib ``PjitFunction`` calling ``cache_miss(*args, **kwargs)`` on a miss.

    ``cache_miss`` returns ``(outputs, FastpathData or None, False)``.
    """
    return _jax.pjit(
        name,
        fun,
        cache_miss,
        list(static_argnums),
        list(static_argnames),
        "polyjax",  # (each function has a cache of its own: nothing to tell apart)
        REGISTRY,
        _no_fallback,
        cache,
    )


def new_cache(capacity: int) -> Any:
    """A C++ call cache holding at most ``capacity`` signatures per function."""
    return _jax.PjitFunctionCache(capacity)


def is_plain(leaves: Any) -> bool:
    """Whether C++ can take these flat inputs as they are: all Arrays."""
    return all(type(x) is Array for x in leaves)


def fastpath_data(exe: Any, n_args: int, outputs: Any) -> FastpathData:
    """The fast-path data of single- or multi-device executable ``exe`` for ``outputs``."""
    out_def = _OUT_REGISTRY.flatten(outputs)[1]
    n_out = len(exe.out_avals)
    ins = getattr(exe, "in_shardings", None) or [exe.sharding] * n_args
    outs = getattr(exe, "out_shardings", None) or [exe.sharding] * n_out
    return FastpathData(
        exe.xla,
        out_def,
        list(ins),
        list(outs),
        list(exe.out_avals),
        [exe.out_committed] * n_out,
        [True] * n_args,
        [None] * n_args,
        [],
    )
