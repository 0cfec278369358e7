"""polyjax.profiler: traces of what the host and devices run, as in ``jax.profiler``.

Traces are recorded by jaxlib's profiler (XLA's profiler session) and written
as ``<log_dir>/plugins/profile/<run>/<host>.xplane.pb``, the layout that
TensorBoard's profile plugin reads; ``create_perfetto_trace=True`` also writes
``perfetto_trace.json.gz`` next to it, which https://ui.perfetto.dev opens.

Example:
  >>> import tempfile, polyjax, polyjax.numpy as jnp
  >>> with tempfile.TemporaryDirectory() as d:
  ...     with polyjax.profiler.trace(d):
  ...         with polyjax.profiler.TraceAnnotation("my_step"):
  ...             _ = jnp.ones(3).block_until_ready()
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from jaxlib import _profiler
from jaxlib._profile_data import ProfileData, ProfileEvent, ProfilePlane

__all__ = [
    "ProfileData",
    "ProfileEvent",
    "ProfileOptions",
    "ProfilePlane",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "register_subprocess",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]

ProfileOptions = _profiler.ProfileOptions
TraceAnnotation = _profiler.TraceMe


class _State:
    lock = threading.Lock()
    session: Any = None
    log_dir: str | None = None
    perfetto: bool = False
    server: Any = None


_state = _State()


def start_trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Starts recording a trace of host and device activity, written by `stop_trace`.

    Args:
      log_dir: the directory the trace goes under
        (``plugins/profile/<run>/<host>.xplane.pb``, for TensorBoard).
      create_perfetto_link: also write the Perfetto trace (polyjax does not
        serve it: open the written file in https://ui.perfetto.dev).
      create_perfetto_trace: also write ``perfetto_trace.json.gz`` in the run directory.
      profiler_options: jaxlib's `ProfileOptions` (tracer levels, duration).

    Raises:
      RuntimeError: a trace is already being recorded.
    """
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError(
                "Profile has already been started. Only one profile may be run at a time."
            )
        # The profiler records device activity only for backends that exist.
        from polyjax_interpreters import backends

        backends.get_backend()
        if profiler_options is None:
            _state.session = _profiler.ProfilerSession()
        else:
            _state.session = _profiler.ProfilerSession(profiler_options)
        _state.log_dir = os.fspath(log_dir)
        _state.perfetto = create_perfetto_link or create_perfetto_trace


def stop_trace() -> None:
    """Stops the trace `start_trace` began and writes it under its ``log_dir``.

    Raises:
      RuntimeError: no trace is being recorded.
    """
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started")
        session, log_dir = _state.session, _state.log_dir
        _state.session = None
        xspace = session.stop()
        assert log_dir is not None
        session.export(xspace, log_dir)
        if _state.perfetto:
            _write_perfetto_trace(xspace, log_dir)


def _latest_run_dir(log_dir: str) -> str:
    root = os.path.join(log_dir, "plugins", "profile")
    runs = [os.path.join(root, r) for r in os.listdir(root)]
    return max(runs, key=os.path.getmtime)


def _write_perfetto_trace(xspace: bytes, log_dir: str) -> None:
    data = ProfileData.from_serialized_xspace(xspace)
    events = []
    for pid, plane in enumerate(data.planes):
        for tid, line in enumerate(plane.lines):
            for ev in line.events:
                events.append(
                    {
                        "ph": "X",
                        "pid": pid,
                        "tid": tid,
                        "name": ev.name,
                        "ts": ev.start_ns / 1e3,
                        "dur": ev.duration_ns / 1e3,
                    }
                )
    path = os.path.join(_latest_run_dir(log_dir), "perfetto_trace.json.gz")
    with gzip.open(path, "wt") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns"}, f)


@contextlib.contextmanager
def trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> Iterator[None]:
    """A context manager recording a trace of its block (`start_trace`, then `stop_trace`).

    Args: as `start_trace`.
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` marking one training step (TensorBoard's step view).

    Args:
      name: the step's name.
      **kwargs: metadata shown with the event, e.g. ``step_num=3``.
    """

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any) -> Callable:
    """Wraps ``func`` so that each call shows in traces as an event named ``name``.

    Args:
      func: the function.
      name: the event name (default: ``func``'s qualified name).
      **decorator_kwargs: metadata shown with the event.

    Returns:
      The wrapped function.
    """
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


def start_server(port: int) -> Any:
    """Starts a profiler server on ``port`` (for TensorBoard's capture button).

    Args:
      port: the TCP port.

    Returns:
      jaxlib's `ProfilerServer`; the server runs until `stop_server`.

    Raises:
      ValueError: a server was already started.
    """
    if _state.server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    from polyjax_interpreters import backends

    backends.get_backend()
    _state.server = _profiler.start_server(port)
    return _state.server


def stop_server() -> None:
    """Stops the server `start_server` started.

    Raises:
      ValueError: no server is running.
    """
    if _state.server is None:
        raise ValueError("No active profiler server.")
    _state.server = None  # the server stops when released


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profiles the subprocess ``pid``, whose profiler server listens on ``port``, with this one.

    Args:
      pid: the subprocess's process id.
      port: the port of its profiler server (`start_server` in the subprocess).

    Returns:
      A function that unregisters it (also called when garbage collected).

    Raises:
      RuntimeError: it could not be registered (already registered, unreachable).
    """
    return _profiler.register_subprocess(pid, port)


def device_memory_profile(backend: str | None = None) -> bytes:
    """The live device memory, by allocation site, as a pprof ``Profile`` protobuf.

    Open it with ``pprof`` (``pprof --web memory.prof``).

    Args:
      backend: the platform whose devices are profiled (default: the default one).

    Returns:
      The profile's bytes.

    Example:
      >>> import polyjax
      >>> b"space" in polyjax.profiler.device_memory_profile()
      True
    """
    from polyjax_interpreters import backends

    return backends.get_backend(backend).heap_profile()


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Writes `device_memory_profile` to ``filename``.

    Args:
      filename: where to write.
      backend: as in `device_memory_profile`.
    """
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
