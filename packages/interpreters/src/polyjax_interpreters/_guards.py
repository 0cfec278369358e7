"""The runtime's guards: transfer guards, the Array garbage-collection guard, the
thread guard, and the `no_tracing` / `no_execution` checks.

Core defines the options (``jax_transfer_guard*``, ``jax_array_garbage_collection_guard``,
``jax_thread_guard``, ``jax_no_tracing``, ``jax_no_execution``); the first three are
enforced by jaxlib itself, in C++, from its ``guard_lib`` state. This module mirrors
the options' global values and thread-local overrides into that state, so that
jaxlib's checks (an implicit host-to-device transfer under ``"disallow"`` raises
``JaxRuntimeError``; an Array freed by the cycle collector under ``"log"`` is
logged) hold for every transfer and every array, including those the C++ jit
fast path makes.

An explicit transfer (`device_put`, `device_get`) runs inside
:func:`explicit_device_put` / :func:`explicit_device_get`: only the
``*_explicit`` levels guard those.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from jaxlib import _jax

from polyjax_core import config

__all__ = [
    "check_execution_allowed",
    "check_tracing_allowed",
    "explicit_device_get",
    "explicit_device_put",
]

_guard_lib = _jax.guard_lib
_TRANSFER = _guard_lib.TransferGuardLevel
_TRANSFER_LEVELS = {
    "allow": _TRANSFER.ALLOW,
    "log": _TRANSFER.LOG,
    "disallow": _TRANSFER.DISALLOW,
    "log_explicit": _TRANSFER.LOG_EXPLICIT,
    "disallow_explicit": _TRANSFER.DISALLOW_EXPLICIT,
}
_GC = _guard_lib.GarbageCollectionGuardLevel
_GC_LEVELS = {"allow": _GC.ALLOW, "log": _GC.LOG, "fatal": _GC.FATAL}
_DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")


def _mirror(state: config.State, fields: tuple[str, ...], levels: dict[str, Any]) -> None:
    """Keeps jaxlib's guard fields `fields` equal to `state`'s value (global and local)."""

    def write(guard_state: Any, value: str | None) -> None:
        level = None if value is None else levels[value]
        for field in fields:
            setattr(guard_state, field, level)

    state.set_hooks(
        lambda value: write(_guard_lib.global_state(), value),
        lambda value: write(_guard_lib.thread_local_state(), value),
    )


# `jax_transfer_guard` sets all three directions; each direction's own option sets
# one. They write the same jaxlib fields, so the latest setting wins (as in JAX).
_mirror(config.transfer_guard, _DIRECTIONS, _TRANSFER_LEVELS)
for _direction in _DIRECTIONS:
    _mirror(getattr(config, f"transfer_guard_{_direction}"), (_direction,), _TRANSFER_LEVELS)
_mirror(config.array_garbage_collection_guard, ("garbage_collect_array",), _GC_LEVELS)


def _thread_guard_local(value: bool | None) -> None:
    # jaxlib records the calling thread when the guard turns on, and forgets it when off.
    _guard_lib.update_thread_guard_global_state(bool(value))


config.thread_guard.set_hooks(None, _thread_guard_local)


def _explicit(field: str) -> Callable[[], contextlib.AbstractContextManager[None]]:
    @contextlib.contextmanager
    def scope() -> Iterator[None]:
        state = _guard_lib.thread_local_state()
        previous = getattr(state, field)
        setattr(state, field, True)
        try:
            yield
        finally:
            setattr(state, field, previous)

    return scope


#: Transfers inside are explicit host-to-device ones (`device_put`).
explicit_device_put = _explicit("explicit_device_put")
#: Transfers inside are explicit device-to-host ones (`device_get`).
explicit_device_get = _explicit("explicit_device_get")


def check_tracing_allowed(fun_name: str, where: str) -> None:
    """Raises when ``jax_no_tracing`` is set (called on a trace-cache miss).

    Raises:
      RuntimeError: naming the function that would be traced.
    """
    if config.no_tracing.value:
        raise RuntimeError(f"re-tracing function {fun_name} {where}, but 'no_tracing' is set")


def check_execution_allowed(fun_name: str) -> None:
    """Raises when ``jax_no_execution`` is set (called before a computation runs).

    ``jax_no_execution`` is part of the trace context, so a call under it always
    misses the caches, C++ fast path included, and reaches this check.

    Raises:
      RuntimeError: naming the computation.
    """
    if config.no_execution.value:
        raise RuntimeError(
            f"polyjax tried to execute function {fun_name}, but the no_execution config "
            "option is set"
        )
