"""The persistent compilation cache: compiled executables kept on disk between processes.

When ``jax_compilation_cache_dir`` names a directory (and
``jax_enable_compilation_cache`` is on, its default), every compilation first
looks for an entry there, and a compilation that took at least
``jax_persistent_cache_min_compile_time_secs`` (default 1 s, as JAX) and whose
serialized executable has at least ``jax_persistent_cache_min_entry_size_bytes``
(default 0: no minimum) is written there. A second process running the same
program then loads its executables instead of compiling them.

An entry's key is the SHA-256 of everything that decides the compiled code: the
module (StableHLO bytecode), the compile options (serialized), the devices
(platform, kind and ids), the platform version, jaxlib's version and
``XLA_FLAGS``. The entry is the executable as PJRT serializes it
(``client.serialize_executable``), behind a header holding a magic string, the
payload's length and its SHA-256: a file that is truncated, corrupted or not an
entry at all is ignored with a warning (and the computation compiled), never
handed to PJRT. Entries are written to a temporary file in the directory and
renamed into place (atomic on POSIX), so concurrent writers, in this process
or others, never leave a torn entry: a reader sees a whole entry or none.

As in JAX, the cache is trusted: a file put in it by someone else with the
right header runs as compiled code. Do not point it at a directory others can
write to. Computations with host callbacks are never cached (their callbacks
are Python objects of this process).
"""

from __future__ import annotations

import hashlib
import logging
import os
import struct
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from polyjax_core import config

__all__ = ["cache_dir", "compile_or_get_cached", "is_enabled", "reset_cache", "set_cache_dir"]

logger = logging.getLogger("polyjax")

_MAGIC = b"polyjax-xla-cache\x01"
_HEADER = struct.Struct("<Q32s")  # payload length, payload SHA-256
_SUFFIX = "-cache"


def set_cache_dir(path: str | os.PathLike[str]) -> None:
    """Sets the persistent compilation cache directory (``jax_compilation_cache_dir``).

    Args:
      path: the directory; created on the first write if it does not exist.
    """
    config.config.update("jax_compilation_cache_dir", os.fspath(path))


def reset_cache() -> None:
    """Turns the persistent cache off again (no directory), as at start-up without
    ``JAX_COMPILATION_CACHE_DIR``; the files stay on disk."""
    config.config.update("jax_compilation_cache_dir", None)


def cache_dir() -> str | None:
    """The directory in use, or None when the persistent cache is off."""
    if not config.enable_compilation_cache.value:
        return None
    return config.compilation_cache_dir.value or None


def is_enabled() -> bool:
    """Whether compilations read and write the persistent cache."""
    return cache_dir() is not None


def cache_key(code: bytes, devices: Sequence[Any], options: Any) -> str:
    """The entry name for a module, its compile options and devices (hex SHA-256)."""
    import jaxlib

    client = devices[0].client
    h = hashlib.sha256()
    for part in (
        code,
        options.SerializeAsString(),
        repr([(d.platform, d.device_kind, d.id) for d in devices]).encode(),
        str(client.platform_version).encode(),
        jaxlib.__version__.encode(),
        os.environ.get("XLA_FLAGS", "").encode(),
    ):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()


def compile_or_get_cached(
    client: Any,
    code: bytes,
    devices: Sequence[Any],
    options: Any,
    name: str,
    compile_fn: Callable[..., Any] | None = None,
) -> tuple[Any, bool]:
    """Compiles ``code`` for ``devices``, or loads it from the persistent cache.

    ``compile_fn(client, code, device_list, options)`` compiles on a miss (default:
    the client's ``compile_and_load``).

    Returns:
      ``(loaded_executable, from_cache)``.
    """
    from jaxlib import _jax

    if compile_fn is None:
        compile_fn = _compile_and_load
    device_list = _jax.DeviceList(tuple(devices))
    directory = cache_dir()
    if directory is None:
        return compile_fn(client, code, device_list, options), False
    key = cache_key(code, devices, options)
    path = os.path.join(directory, key + _SUFFIX)
    payload = _read_entry(path)
    if payload is not None:
        try:
            exe = client.deserialize_executable(payload, device_list, options)
        except Exception as e:  # a whole entry PJRT still refuses (another build...)
            logger.warning(
                "Persistent compilation cache: could not load %s (%s); compiling instead.", path, e
            )
        else:
            if config.log_compiles.value:
                logger.warning("Persistent compilation cache hit for '%s'", name)
            return exe, True
    t0 = time.perf_counter()
    exe = compile_fn(client, code, device_list, options)
    seconds = time.perf_counter() - t0
    if seconds >= config.persistent_cache_min_compile_time_secs.value:
        _write_entry(directory, path, client, exe)
    return exe, False


def _compile_and_load(client: Any, code: bytes, device_list: Any, options: Any) -> Any:
    return client.compile_and_load(code, device_list, options)


def _read_entry(path: str) -> bytes | None:
    """The payload of the entry at ``path``; None if absent, or (with a warning) broken."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        logger.warning("Persistent compilation cache: cannot read %s (%s).", path, e)
        return None
    why = _defect(data)
    if why is not None:
        logger.warning(
            "Persistent compilation cache: ignoring the entry %s (%s); compiling instead.",
            path,
            why,
        )
        return None
    return data[len(_MAGIC) + _HEADER.size :]


def _defect(data: bytes) -> str | None:
    """What is wrong with an entry's bytes, or None if it is whole."""
    start = len(_MAGIC) + _HEADER.size
    if len(data) < start or not data.startswith(_MAGIC):
        return "not a cache entry or truncated"
    length, digest = _HEADER.unpack_from(data, len(_MAGIC))
    payload = data[start:]
    if len(payload) != length:
        return f"truncated: {len(payload)} of {length} bytes"
    if hashlib.sha256(payload).digest() != digest:
        return "checksum mismatch"
    return None


def _write_entry(directory: str, path: str, client: Any, exe: Any) -> None:
    """Writes ``exe`` at ``path`` atomically; a failure only warns (the cache is optional)."""
    try:
        payload = client.serialize_executable(exe)
    except Exception as e:  # some executables cannot be serialized
        logger.warning("Persistent compilation cache: cannot serialize an executable (%s).", e)
        return
    min_size = config.persistent_cache_min_entry_size_bytes.value
    if min_size > 0 and len(payload) < min_size:
        return
    data = _MAGIC + _HEADER.pack(len(payload), hashlib.sha256(payload).digest()) + payload
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=_SUFFIX)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)  # atomic: readers see the old entry, the new one, or none
        tmp = None
    except OSError as e:
        logger.warning("Persistent compilation cache: cannot write %s (%s).", path, e)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
