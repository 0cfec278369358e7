"""Event listeners: how polyjax reports what it does (compilations, their durations).

Code records events by name, with optional string/int metadata; listeners
registered by the user receive them. Four kinds, as in ``jax.monitoring``:
plain events, durations (seconds), time spans (start and end times) and
scalars. Listeners run synchronously in the recording thread, in registration
order; with no listener, recording costs one list check.

Events polyjax records:
  - ``/jax/core/compile/backend_compile_duration`` (a duration, metadata
    ``fun_name``): each XLA compilation of a jitted function.

Example:
  >>> seen = []
  >>> register_event_listener(lambda event, **kw: seen.append((event, kw)))
  >>> record_event("/my/event", step=3)
  >>> seen
  [('/my/event', {'step': 3})]
  >>> clear_event_listeners()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

Listener = Callable[..., Any]

_event: list[Listener] = []
_duration: list[Listener] = []
_time_span: list[Listener] = []
_scalar: list[Listener] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Reports that `event` happened to every event listener, with `kwargs` as metadata."""
    for callback in list(_event):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Reports that `event` took `duration` seconds to every duration listener."""
    for callback in list(_duration):
        callback(event, duration, **kwargs)


def record_event_time_span(
    event: str, start_time: float, end_time: float, **kwargs: str | int
) -> None:
    """Reports that `event` ran from `start_time` to `end_time` to every time-span listener."""
    for callback in list(_time_span):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Reports the scalar `value` of `event` to every scalar listener."""
    for callback in list(_scalar):
        callback(event, value, **kwargs)


def register_event_listener(callback: Listener) -> None:
    """Adds `callback(event, **metadata)`, called on each `record_event`."""
    _event.append(callback)


def register_event_duration_secs_listener(callback: Listener) -> None:
    """Adds `callback(event, duration, **metadata)`, called on each duration recorded."""
    _duration.append(callback)


def register_event_time_span_listener(callback: Listener) -> None:
    """Adds `callback(event, start_time, end_time, **metadata)`, called on each time span."""
    _time_span.append(callback)


def register_scalar_listener(callback: Listener) -> None:
    """Adds `callback(event, value, **metadata)`, called on each scalar recorded."""
    _scalar.append(callback)


def _unregister(listeners: list[Listener], callback: Listener, kind: str) -> None:
    try:
        listeners.remove(callback)
    except ValueError:
        raise AssertionError(f"{kind} listener {callback!r} is not registered") from None


def unregister_event_listener(callback: Listener) -> None:
    """Removes an event listener (AssertionError if it is not registered, as in JAX)."""
    _unregister(_event, callback, "event")


def unregister_event_duration_listener(callback: Listener) -> None:
    """Removes a duration listener (AssertionError if it is not registered)."""
    _unregister(_duration, callback, "event duration")


def unregister_event_time_span_listener(callback: Listener) -> None:
    """Removes a time-span listener (AssertionError if it is not registered)."""
    _unregister(_time_span, callback, "event time span")


def unregister_scalar_listener(callback: Listener) -> None:
    """Removes a scalar listener (AssertionError if it is not registered)."""
    _unregister(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Removes every listener of every kind."""
    for listeners in (_event, _duration, _time_span, _scalar):
        listeners.clear()
