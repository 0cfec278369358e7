"""PJRT plugins: find the GPU/TPU runtimes that are installed, and load them.

A PJRT plugin is a shared library implementing XLA's PJRT C API, shipped in a
Python package. JAX finds them in three places, and so do we:

* modules of the ``jax_plugins`` namespace package, e.g. ``jax_plugins.xla_cuda12``
  from the ``jax-cuda12-pjrt`` wheel (the library is ``xla_cuda_plugin.so`` next
  to its ``__init__.py``);
* entry points in the group ``jax_plugins`` (the same wheels declare one);
* the ``libtpu`` package (``libtpu/libtpu.so``), or ``TPU_LIBRARY_PATH``;
* and the environment variable ``PJRT_NAMES_AND_LIBRARY_PATHS``
  (``"name:/path/lib.so,other:/path/other.so"``).

JAX then imports each plugin module and calls its ``initialize()``. We must not:
those modules import ``jax`` itself. So discovery here never imports a plugin
module; it only looks at files on ``sys.path``. Loading repeats, with jaxlib
alone, what a plugin's ``initialize()`` does: preload the NVIDIA libraries for
CUDA, hand the shared library to ``xla_client.load_pjrt_plugin_dynamically``,
install the plugin's custom-call handler when its extension module exists, and
create the client with ``xla_client.make_c_api_client`` and the platform's
options.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import logging
import os
import re
import sys
import threading
from typing import Any

__all__ = [
    "PluginInfo",
    "PluginLoadError",
    "discover_plugins",
    "make_plugin_client",
    "plugin_options",
]

logger = logging.getLogger("polyjax")

# Priorities decide the default backend when `jax_platforms` is unset: the highest
# one that starts wins. CPU is 0; these match the order JAX uses (GPU, then TPU).
_GPU_PRIORITY = 500
_TPU_PRIORITY = 300
_OTHER_PRIORITY = 400

# Library file names of the plugins whose layout we know.
_KNOWN_LIBRARIES = {
    "cuda": "xla_cuda_plugin.so",
    "rocm": "xla_rocm_plugin.so",
}
_KNOWN_PRIORITIES = {"cuda": _GPU_PRIORITY, "rocm": _GPU_PRIORITY, "tpu": _TPU_PRIORITY}
_LIBRARY_SUFFIXES = (".so", ".dylib", ".dll")


class PluginLoadError(RuntimeError):
    """A PJRT plugin was found but could not be loaded or started."""


@dataclasses.dataclass(frozen=True)
class PluginInfo:
    """A PJRT plugin found on this machine (not loaded yet).

    Attributes:
      name: the plugin's name: its module or entry-point name (``"xla_cuda12"``),
        ``"libtpu"``, or the name given in ``PJRT_NAMES_AND_LIBRARY_PATHS``.
      platform: the platform it provides (``"cuda"``, ``"rocm"``, ``"tpu"``, ...); the
        backend is known by this name.
      library_path: the shared library implementing the PJRT C API, or ``None`` if
        none was found where the plugin lives.
      priority: higher wins when choosing the default backend.
      source: where it was found: ``"jax_plugins"``, ``"entry_point"``, ``"libtpu"``
        or ``"env"``.
      location: the directory of the plugin's package, if it has one.
    """

    name: str
    platform: str
    library_path: str | None
    priority: int
    source: str
    location: str | None = None


# ---------------------------------------------------------------------------
# Discovery (reads the file system only; imports nothing)


def _platform_of(plugin_name: str) -> str:
    """``xla_cuda12`` -> ``cuda``, ``xla_rocm7`` -> ``rocm``, ``xla_fake`` -> ``fake``."""
    short = plugin_name.rsplit(".", 1)[-1]
    short = short.removeprefix("xla_")
    return re.sub(r"\d+$", "", short) or short


def _sys_path_dirs() -> list[str]:
    dirs = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.getcwd())
        if os.path.isdir(path) and path not in dirs:
            dirs.append(path)
    return dirs


def _find_package_dir(module: str) -> str | None:
    """The directory of package ``module`` on ``sys.path``, found without importing it."""
    parts = module.split(".")
    for entry in _sys_path_dirs():
        candidate = os.path.join(entry, *parts)
        if os.path.isdir(candidate):
            return candidate
    return None


def _library_in(directory: str | None, platform: str) -> str | None:
    """The plugin's shared library in ``directory``, or None."""
    if directory is None:
        return None
    known = _KNOWN_LIBRARIES.get(platform)
    if known is not None:
        path = os.path.join(directory, known)
        return path if os.path.exists(path) else None
    found = sorted(
        f
        for f in os.listdir(directory)
        if f.endswith(_LIBRARY_SUFFIXES) and os.path.isfile(os.path.join(directory, f))
    )
    # Prefer a library that says what it is when a package ships several.
    preferred = [f for f in found if "pjrt" in f or "plugin" in f]
    chosen = (preferred or found)[:1]
    return os.path.join(directory, chosen[0]) if chosen else None


def _namespace_plugins() -> list[tuple[str, str | None]]:
    """(module name, package dir) of every ``jax_plugins.<name>`` on ``sys.path``."""
    seen: dict[str, str | None] = {}
    for entry in _sys_path_dirs():
        root = os.path.join(entry, "jax_plugins")
        if not os.path.isdir(root):
            continue
        for child in sorted(os.listdir(root)):
            path = os.path.join(root, child)
            if os.path.isdir(path) and child.isidentifier():
                name, where = child, path
            elif child.endswith(".py") and child != "__init__.py":
                # A single-file plugin: its library can only be known by running it.
                name, where = child[:-3], None
            else:
                continue
            seen.setdefault(f"jax_plugins.{name}", where)  # the first on sys.path wins
    return list(seen.items())


def _entry_point_plugins() -> list[tuple[str, str]]:
    """(entry-point name, module) of the ``jax_plugins`` entry points.

    Read from the ``entry_points.txt`` of each distribution on ``sys.path``
    (the first of a name wins, as `importlib.metadata` has it) rather than
    through `importlib.metadata`, whose import alone costs a fresh process a
    quarter of a second before its first result.
    """
    found: dict[str, tuple[str, str]] = {}
    seen_dists: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for child in sorted(names):
            if not child.endswith((".dist-info", ".egg-info")):
                continue
            # `name-version.dist-info`, `name-version-pyX.Y.egg-info` or `name.egg-info`
            stem = child.rsplit(".", 1)[0].split("-", 1)[0]
            dist = re.sub(r"[-_.]+", "-", stem).lower()
            if dist in seen_dists:
                continue
            seen_dists.add(dist)
            try:
                with open(os.path.join(entry or ".", child, "entry_points.txt")) as f:
                    text = f.read()
            except OSError:
                continue
            for name, value in _section(text, "jax_plugins"):
                found.setdefault(name, (name, value.split(":", 1)[0].strip()))
    return list(found.values())


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of the ``[group]`` section of an entry_points.txt."""
    items, inside = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            inside = line[1:-1].strip() == group
        elif inside and "=" in line:
            name, _, value = line.partition("=")
            items.append((name.strip(), value.strip()))
    return items


def _libtpu_plugin() -> PluginInfo | None:
    path = os.environ.get("TPU_LIBRARY_PATH")
    location = None
    if not path:
        location = _find_package_dir("libtpu")
        candidate = location and os.path.join(location, "libtpu.so")
        if not candidate or not os.path.exists(candidate):
            return None
        path = candidate
    return PluginInfo("libtpu", "tpu", path, _TPU_PRIORITY, "libtpu", location)


def _env_plugins() -> list[PluginInfo]:
    text = os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS", "")
    plugins = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        name, sep, path = item.partition(":")
        if not sep or not name or not path:
            logger.warning(
                "Ignoring %r in PJRT_NAMES_AND_LIBRARY_PATHS: expected 'name:/path/to/lib.so'",
                item,
            )
            continue
        prio = _KNOWN_PRIORITIES.get(name, _OTHER_PRIORITY)
        plugins.append(PluginInfo(name, name, path, prio, "env", os.path.dirname(path)))
    return plugins


def discover_plugins() -> list[PluginInfo]:
    """Finds the PJRT plugins installed for this Python, without importing any of them.

    Returns:
      One :class:`PluginInfo` per platform, highest priority first. When several
      plugins provide one platform (say ``xla_cuda12`` and ``xla_cuda13``), the
      first found wins: the environment variable, then the ``jax_plugins``
      namespace (newest name first), then entry points, then ``libtpu``.

    Example:
      >>> [p.platform for p in discover_plugins()]  # on a CPU-only machine
      []
    """
    found: list[PluginInfo] = list(_env_plugins())
    modules_seen: set[str] = set()
    # Newest first, so that xla_cuda13 beats xla_cuda12 when both are installed.
    for module, where in sorted(_namespace_plugins(), reverse=True):
        modules_seen.add(module)
        name = module.rsplit(".", 1)[-1]
        platform = _platform_of(name)
        prio = _KNOWN_PRIORITIES.get(platform, _OTHER_PRIORITY)
        lib = _library_in(where, platform)
        found.append(PluginInfo(name, platform, lib, prio, "jax_plugins", where))
    for ep_name, module in sorted(_entry_point_plugins(), reverse=True):
        if module in modules_seen:
            continue  # the same package seen through the namespace already
        modules_seen.add(module)
        platform = _platform_of(ep_name)
        where = _find_package_dir(module)
        prio = _KNOWN_PRIORITIES.get(platform, _OTHER_PRIORITY)
        found.append(
            PluginInfo(ep_name, platform, _library_in(where, platform), prio, "entry_point", where)
        )
    tpu = _libtpu_plugin()
    if tpu is not None:
        found.append(tpu)

    by_platform: dict[str, PluginInfo] = {}
    for p in found:
        if p.platform == "cpu":
            logger.warning("Ignoring PJRT plugin %r: the 'cpu' platform is built in.", p.name)
        elif p.platform in by_platform:
            logger.info(
                "PJRT plugin %r also provides %r; using %r.",
                p.name,
                p.platform,
                by_platform[p.platform].name,
            )
        else:
            by_platform[p.platform] = p
    return sorted(by_platform.values(), key=lambda p: -p.priority)


# ---------------------------------------------------------------------------
# Loading

_load_lock = threading.Lock()

# (nvidia wheel subdirectory, library name prefixes), in dependency order.
_NVIDIA_LIBRARIES = (
    ("cuda_runtime", ("libcudart",)),
    ("cuda_nvrtc", ("libnvrtc",)),
    ("nvjitlink", ("libnvJitLink",)),
    ("cublas", ("libcublasLt", "libcublas")),
    ("cufft", ("libcufft",)),
    ("cusparse", ("libcusparse",)),
    ("cusolver", ("libcusolver",)),
    ("cudnn", ("libcudnn",)),
    ("nccl", ("libnccl",)),
    ("cuda_cupti", ("libcupti",)),
    ("nvshmem", ("libnvshmem_host",)),
)


@functools.cache
def _preload_nvidia_libraries() -> tuple[str, ...]:
    """Loads the CUDA libraries of the ``nvidia-*`` wheels, if installed, globally.

    The CUDA plugin links against them by soname; loading them first from the
    wheels makes it find those copies rather than require a system CUDA.
    Returns the paths loaded (failures are only logged: a system CUDA may do).
    """
    import ctypes

    loaded = []
    nvidia = _find_package_dir("nvidia")
    if nvidia is None:
        return ()
    for subdir, prefixes in _NVIDIA_LIBRARIES:
        libdir = os.path.join(nvidia, subdir, "lib")
        for prefix in prefixes:
            for path in sorted(glob.glob(os.path.join(libdir, prefix + ".so*"))):
                try:
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    loaded.append(path)
                except OSError as e:
                    logger.debug("Could not preload %s: %s", path, e)
    return tuple(loaded)


# The jaxlib platform names under which GPU plugins' custom calls are registered.
_CUSTOM_CALL_PLATFORMS = {"cuda": "CUDA", "rocm": "ROCM"}


def _register_custom_calls(platform: str, c_api: Any) -> None:
    """Installs the GPU plugin's custom-call and custom-type handlers (best effort).

    The kernels come from ``jax_cuda1x_plugin`` (or ROCm's): its extension module
    registers a target with the loaded plugin's C API.
    """
    xla_name = _CUSTOM_CALL_PLATFORMS.get(platform)
    if xla_name is None:
        return
    from jaxlib import plugin_support, xla_client

    try:
        ext = plugin_support.import_from_plugin(platform, f"{platform}_plugin_extension")
    except Exception as e:  # an incompatible plugin wheel: run without its kernels
        logger.warning("Could not import the %s plugin extension: %s", platform, e)
        return
    if ext is None:
        logger.warning(
            "The %s PJRT plugin is loaded, but its kernels package (jax-%s12/13-plugin) "
            "is not installed: some operations (linear algebra, FFT) will be missing.",
            platform,
            platform,
        )
        return
    xla_client.register_custom_call_handler(
        xla_name, functools.partial(ext.register_custom_call_target, c_api)
    )
    if hasattr(ext, "register_custom_type"):
        xla_client.register_custom_type_handler(
            xla_name, functools.partial(ext.register_custom_type, c_api)
        )


def plugin_options(info: PluginInfo) -> dict[str, Any]:
    """The options the client of ``info`` is created with."""
    from jaxlib import xla_client

    if info.platform in ("cuda", "rocm"):
        # Reads XLA_PYTHON_CLIENT_{ALLOCATOR,MEM_FRACTION,PREALLOCATE} and friends.
        options = dict(xla_client.generate_pjrt_gpu_plugin_options())
        options["platform_name"] = info.platform
        return options
    return {}


def make_plugin_client(info: PluginInfo, options: dict[str, Any] | None = None) -> Any:
    """Loads plugin ``info`` (once per process) and creates its client.

    Args:
      info: a plugin from :func:`discover_plugins`.
      options: client options; by default those of :func:`plugin_options`.

    Returns:
      A jaxlib ``Client`` for the plugin's platform.

    Raises:
      PluginLoadError: the library is missing or fails to load, or the client
        cannot start (e.g. the GPU plugin finds no GPU). The message names the
        plugin, its library and the underlying error.
    """
    from jaxlib import xla_client

    what = f"PJRT plugin {info.name!r} (platform {info.platform!r}, found via {info.source})"
    if info.library_path is None:
        raise PluginLoadError(
            f"{what}: no shared library found in {info.location or 'its package'}. "
            "polyjax loads plugins without importing their Python module, so the "
            "library must sit in the plugin's package directory."
        )
    if not os.path.isfile(info.library_path):
        raise PluginLoadError(f"{what}: library {info.library_path} does not exist.")
    if info.platform == "cuda":
        _preload_nvidia_libraries()
    with _load_lock:
        try:
            if not xla_client.pjrt_plugin_loaded(info.platform):
                c_api = xla_client.load_pjrt_plugin_dynamically(info.platform, info.library_path)
                _register_custom_calls(info.platform, c_api)
            # Only ever after a successful load: initializing an unloaded plugin crashes.
            if not xla_client.pjrt_plugin_initialized(info.platform):
                xla_client.initialize_pjrt_plugin(info.platform)
        except Exception as e:
            raise PluginLoadError(f"{what}: loading {info.library_path} failed: {e}") from e
    try:
        return xla_client.make_c_api_client(
            info.platform, plugin_options(info) if options is None else options
        )
    except Exception as e:
        raise PluginLoadError(f"{what}: creating its client failed: {e}") from e
