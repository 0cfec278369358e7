"""Backends: the XLA clients that own the devices, started on first use.

A *backend* is a jaxlib ``Client`` for one platform: ``cpu`` always (jaxlib's
own CPU client), plus one per PJRT plugin that is installed (``cuda``,
``rocm``, ``tpu``, ...; see ``_plugins``). Nothing starts at import time: the
first call that needs a device creates the clients, once, under a lock, so
threads racing on that first call all get the same clients.

Which platforms start, and which one is the default, follows
``jax_platforms``:

* unset: every installed platform is tried, highest priority first (GPU, then
  TPU, then CPU); a plugin that fails to start is skipped with a warning, and
  the first that starts is the default;
* ``"cuda,cpu"``: exactly those, in that order (the first is the default);
  one that fails to start is an error. ``"gpu"`` means whichever of ``cuda``
  and ``rocm`` is installed.

``jax_num_cpu_devices`` (when positive) sets how many CPU devices the CPU
client has. Both options are read when the clients are created; tests call
:func:`_clear_backends` to create them again under other settings.

Example:
  >>> default_backend()
  'cpu'
  >>> devices()
  [CpuDevice(id=0)]
"""

from __future__ import annotations

import logging
import threading
import warnings
from typing import Any

from jaxlib._jax import Device

from polyjax_core import config
from polyjax_interpreters import _plugins

__all__ = [
    "Device",
    "backends",
    "backends_are_initialized",
    "default_backend",
    "default_device",
    "device_count",
    "devices",
    "get_backend",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
    "process_indices",
    "set_cpu_client_options",
]

logger = logging.getLogger("polyjax")

# Names that stand for any of several platforms, first installed one wins.
_PLATFORM_ALIASES = {"gpu": ("cuda", "rocm")}


class _Backends:
    """The started clients: a snapshot, replaced as a whole, never mutated."""

    __slots__ = ("clients", "errors", "default", "default_device")

    def __init__(self, clients: dict[str, Any], errors: dict[str, str], default: Any):
        self.clients = clients  # platform name -> Client, in priority order
        self.errors = errors  # platform name -> why it did not start
        self.default = default
        self.default_device = default.local_devices()[0]


_lock = threading.Lock()
_state: _Backends | None = None


def _clear_backends() -> None:
    """Forgets the started clients; the next use creates them again (for tests).

    Arrays and executables made with the old clients stay valid, but must not be
    mixed with new ones: their devices belong to another client.
    """
    global _state
    with _lock:
        _state = None


def _backends_state() -> _Backends:
    state = _state
    if state is None:
        state = _start_backends()
    return state


def _start_backends() -> _Backends:
    global _state
    with _lock:
        if _state is None:  # another thread may have won the race while we waited
            _state = _create_backends()
        return _state


def _requested_platforms() -> list[str] | None:
    text = config.platforms.value
    if not text or not text.strip():
        return None
    return [p.strip().lower() for p in text.split(",") if p.strip()]


# Extra keyword arguments for jaxlib's ``make_cpu_client`` (a distributed
# client, this node's id, the number of nodes, cross-process collectives). The
# multi-process runtime (``polyjax_sharding.distributed``) sets them before the
# backends start; this layer knows nothing else about it.
_cpu_client_options: dict[str, Any] = {}


def backends_are_initialized() -> bool:
    """Whether the backends have started (a device was asked for)."""
    return _state is not None


def set_cpu_client_options(**options: Any) -> None:
    """Sets extra arguments for the CPU client created when the backends start.

    Called with no arguments it clears them. Used by the multi-process runtime
    to give the CPU client its distributed client and collectives.

    Raises:
      RuntimeError: the backends have already started.
    """
    if _state is not None:
        raise RuntimeError("The CPU client's options cannot change after the backends started.")
    _cpu_client_options.clear()
    _cpu_client_options.update(options)


def _make_cpu_client() -> Any:
    from jaxlib import xla_client

    n = config.num_cpu_devices.value
    options = {"num_devices": n if n > 0 else None, **_cpu_client_options}
    return xla_client.make_cpu_client(**options)


def _create_backends() -> _Backends:
    requested = _requested_platforms()
    # Discovery reads the file system and entry points; skip it for a CPU-only request.
    if requested is not None and all(p == "cpu" for p in requested):
        plugins: dict[str, _plugins.PluginInfo] = {}
    else:
        plugins = {p.platform: p for p in _plugins.discover_plugins()}
    installed = ["cpu", *plugins]

    if requested is None:
        priority = {name: p.priority for name, p in plugins.items()}
        order = sorted(installed, key=lambda name: -priority.get(name, 0))
    else:
        order = []
        for name in requested:
            for platform in _resolve_requested(name, installed):
                if platform not in order:
                    order.append(platform)

    clients: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in order:
        try:
            if name == "cpu":
                client = _make_cpu_client()
            else:
                client = _plugins.make_plugin_client(plugins[name])
        except Exception as e:
            if requested is not None:
                raise RuntimeError(
                    f"Unable to initialize backend {name!r}: {e} (jax_platforms="
                    f"{config.platforms.value!r} asks for it; leave jax_platforms unset to "
                    "use whatever platforms start, or list only the ones you need)."
                ) from e
            errors[name] = str(e)
            warnings.warn(
                f"Platform {name!r} is installed but could not be started, so it is skipped "
                f"and the remaining platforms are used. The error was: {e}",
                RuntimeWarning,
                stacklevel=4,
            )
            continue
        clients[name] = client
        logger.debug("Started backend %r with %d devices", name, client.device_count())

    if not clients:  # only reachable with an empty request list
        raise RuntimeError(
            f"No backend could be started (jax_platforms={config.platforms.value!r})."
        )
    default = next(iter(clients.values()))
    legacy = config.platform_name.value  # deprecated jax_platform_name still picks the default
    if legacy:
        default = _lookup(legacy.lower(), clients, errors)
    return _Backends(clients, errors, default)


def _resolve_requested(name: str, installed: list[str]) -> list[str]:
    """Platforms meant by ``name`` in ``jax_platforms`` (aliases expanded)."""
    if name in installed:
        return [name]
    alias = [p for p in _PLATFORM_ALIASES.get(name, ()) if p in installed]
    if alias:
        return alias[:1]
    raise RuntimeError(
        f"Unknown or absent platform {name!r} in jax_platforms={config.platforms.value!r}. "
        f"Platforms installed: {', '.join(installed)}." + _install_hint(name)
    )


def _install_hint(name: str) -> str:
    if name in ("gpu", "cuda"):
        return " For NVIDIA GPUs install the PJRT plugin: pip install jax-cuda12-pjrt."
    if name == "rocm":
        return " For AMD GPUs install the ROCm PJRT plugin (jax-rocm7-pjrt)."
    if name == "tpu":
        return " For TPUs install libtpu."
    return ""


def _lookup(name: str, clients: dict[str, Any], errors: dict[str, str]) -> Any:
    client = clients.get(name)
    if client is not None:
        return client
    for platform in _PLATFORM_ALIASES.get(name, ()):
        if platform in clients:
            return clients[platform]
    # The client's own platform name may differ from its backend name (a CUDA
    # client reports 'gpu'); accept it too.
    for client in clients.values():
        if client.platform == name:
            return client
    why = ""
    failed = [p for p in (name, *_PLATFORM_ALIASES.get(name, ())) if p in errors]
    if failed:
        why = f" Backend {failed[0]!r} failed to initialize: {errors[failed[0]]}."
    raise RuntimeError(
        f"Unknown backend: {name!r} requested, but no platform by that name is present. "
        f"Platforms present are: {', '.join(clients)}.{why}{_install_hint(name)}"
    )


def get_backend(platform: str | Any | None = None) -> Any:
    """Returns the client of a platform, starting the backends on first use.

    Args:
      platform: a platform name (``"cpu"``, ``"cuda"``, ``"gpu"``, ``"tpu"``, any
        case), ``None`` for the default backend, or a client (returned as is).

    Returns:
      A jaxlib ``Client``.

    Raises:
      RuntimeError: the platform is not present (the message lists those that
        are), or a platform that ``jax_platforms`` asks for failed to start.

    Example:
      >>> get_backend("cpu").platform
      'cpu'
    """
    state = _state or _start_backends()
    if platform is None:
        return state.default
    if not isinstance(platform, str):
        return platform
    return _lookup(platform.lower(), state.clients, state.errors)


def backends() -> dict[str, Any]:
    """The started clients by platform name, default first (starting them if needed)."""
    return dict(_backends_state().clients)


def default_backend() -> str:
    """The platform name of the default backend, e.g. ``'cpu'`` or ``'gpu'``."""
    return get_backend().platform


def devices(backend: str | Any | None = None) -> list[Any]:
    """All devices of a backend (of every process), ordered by id.

    Args:
      backend: a platform name or client; ``None`` for the default backend.

    Example:
      >>> devices("cpu")[0].platform
      'cpu'
    """
    return get_backend(backend).devices()


def local_devices(process_index: int | None = None, backend: str | Any | None = None) -> list[Any]:
    """The devices of a backend attached to one process (by default, this one).

    Args:
      process_index: which process; ``None`` for this process.
      backend: a platform name or client; ``None`` for the default backend.
    """
    client = get_backend(backend)
    if process_index is None:
        return client.local_devices()
    return [d for d in client.devices() if d.process_index == process_index]


def device_count(backend: str | Any | None = None) -> int:
    """The number of devices of a backend, over all processes."""
    return get_backend(backend).device_count()


def local_device_count(backend: str | Any | None = None) -> int:
    """The number of devices of a backend attached to this process."""
    return get_backend(backend).local_device_count()


def process_index(backend: str | Any | None = None) -> int:
    """This process's index in a multi-process run (0 in a single process)."""
    return get_backend(backend).process_index()


def process_count(backend: str | Any | None = None) -> int:
    """The number of processes sharing the backend's devices (1 in a single process)."""
    return max(d.process_index for d in get_backend(backend).devices()) + 1


def process_indices(backend: str | Any | None = None) -> list[int]:
    """The indices of the processes sharing the backend's devices, ``[0, ..., n - 1]``."""
    return sorted({d.process_index for d in get_backend(backend).devices()})


def default_device() -> Any:
    """The device that uncommitted computations run on.

    ``jax_default_device`` decides: a device is used as is, a platform name
    means the first local device of that platform, and ``None`` (the default)
    the first local device of the default backend.
    """
    chosen = config.default_device.value
    if chosen is None:
        return (_state or _start_backends()).default_device
    if isinstance(chosen, str):
        return get_backend(chosen).local_devices()[0]
    return chosen
