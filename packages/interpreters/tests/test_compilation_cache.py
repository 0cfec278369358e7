"""The persistent compilation cache, in one process: entries written, loaded, and
broken ones (corrupt, truncated, foreign) ignored with a warning and recompiled.

Between "processes" the in-memory caches are emptied, so the next call compiles
again, or loads the entry. Two real processes: `packages/polyjax/tests`.
"""

from __future__ import annotations

import logging
import os
import threading

import numpy as np
import pytest

from polyjax_core import caching, config
from polyjax_interpreters import compilation_cache
from polyjax_interpreters.jit import clear_jit_caches, jit

X = np.arange(4, dtype=np.float32)


@pytest.fixture
def cache(tmp_path):
    """A cache directory that takes every entry (no minimum compile time)."""
    with (
        config.compilation_cache_dir(str(tmp_path)),
        config.persistent_cache_min_compile_time_secs(0.0),
    ):
        yield tmp_path


def _fresh_start():
    """What a new process has: no in-memory trace or executable caches."""
    caching.clear_all_caches()
    clear_jit_caches()


def _run(toy, caplog):
    """Runs a small jitted program as a new process would; (result, cache hits, compiles)."""
    _fresh_start()
    caplog.clear()
    with config.log_compiles(True), caplog.at_level(logging.WARNING, logger="polyjax"):
        out = np.asarray(jit(lambda x: toy.sin(toy.mul(x, x)))(X))
    messages = [r.getMessage() for r in caplog.records]
    hits = sum("Persistent compilation cache hit" in m for m in messages)
    # A load from the cache logs the hit, then "Finished compiling" (as JAX's log does).
    compiles = sum(m.startswith("Finished compiling") for m in messages) - hits
    return out, hits, compiles, messages


def _entries(directory):
    return sorted(p for p in directory.iterdir() if not p.name.startswith(".tmp"))


@pytest.mark.parametrize(
    "state, default",
    [
        (config.compilation_cache_dir, None),
        (config.enable_compilation_cache, True),
        (config.persistent_cache_min_compile_time_secs, 1.0),
        (config.persistent_cache_min_entry_size_bytes, 0),
    ],
    ids=lambda v: getattr(v, "name", ""),
)
def test_defaults_are_jaxs(state, default):
    # (A run may set them from the environment, as JAX reads JAX_<NAME> too.)
    if state.name.upper() not in os.environ:
        assert state.value == default


def test_second_run_loads_instead_of_compiling(toy, cache, caplog):
    out, hits, compiles, _ = _run(toy, caplog)
    np.testing.assert_allclose(out, np.sin(X * X), rtol=1e-6)
    assert compiles == 1 and hits == 0
    assert len(_entries(cache)) == 1
    out2, hits, compiles, _ = _run(toy, caplog)
    np.testing.assert_array_equal(out2, out)
    assert (hits, compiles) == (1, 0)


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda b: b[: len(b) // 2], "truncated"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]), "checksum mismatch"),
        (lambda b: b[:10], "not a cache entry or truncated"),
        (lambda b: os.urandom(len(b)), "not a cache entry"),
    ],
    ids=["truncated", "corrupt", "cut-in-header", "foreign"],
)
def test_broken_entry_is_ignored_with_a_warning_and_rewritten(toy, cache, caplog, damage, why):
    out, _, _, _ = _run(toy, caplog)
    (entry,) = _entries(cache)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    out2, hits, compiles, messages = _run(toy, caplog)
    np.testing.assert_array_equal(out2, out)
    assert (hits, compiles) == (0, 1)
    assert any("ignoring the entry" in m and why in m for m in messages), messages
    assert compilation_cache._read_entry(str(entry)) is not None  # rewritten whole
    _, hits, compiles, _ = _run(toy, caplog)
    assert (hits, compiles) == (1, 0)


def test_min_compile_time_and_entry_size_gate_writes(toy, tmp_path, caplog):
    with config.compilation_cache_dir(str(tmp_path)):
        with config.persistent_cache_min_compile_time_secs(1e9):
            _run(toy, caplog)
        assert _entries(tmp_path) == []
        with (
            config.persistent_cache_min_compile_time_secs(0.0),
            config.persistent_cache_min_entry_size_bytes(1 << 40),
        ):
            _run(toy, caplog)
        assert _entries(tmp_path) == []


def test_disabled_cache_writes_nothing(toy, cache, caplog):
    with config.enable_compilation_cache(False):
        _run(toy, caplog)
    assert _entries(cache) == []


def test_keys_differ_by_module_and_options(toy, cache):
    from jaxlib import xla_client

    from polyjax_interpreters import backends

    dev = backends.default_device()
    options = xla_client.CompileOptions()
    k = compilation_cache.cache_key(b"module a", [dev], options)
    assert k == compilation_cache.cache_key(b"module a", [dev], options)
    assert k != compilation_cache.cache_key(b"module b", [dev], options)
    other = xla_client.CompileOptions()
    other.num_partitions = 2
    assert k != compilation_cache.cache_key(b"module a", [dev], other)


def test_concurrent_writers_never_leave_a_torn_entry(toy, cache, caplog):
    # Writers race on one entry while a reader keeps reading it: every read is
    # either no entry yet or a whole one (temporary file, then atomic rename).
    out, _, _, _ = _run(toy, caplog)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    entry.unlink()
    payload = data[len(compilation_cache._MAGIC) + compilation_cache._HEADER.size :]

    class _Client:
        def serialize_executable(self, exe):
            return payload

    stop = threading.Event()
    seen = []

    def write():
        while not stop.is_set():
            compilation_cache._write_entry(str(cache), str(entry), _Client(), None)

    def read():
        for _ in range(300):
            seen.append(compilation_cache._read_entry(str(entry)))

    writers = [threading.Thread(target=write) for _ in range(2)]
    for w in writers:
        w.start()
    with caplog.at_level(logging.WARNING, logger="polyjax"):
        caplog.clear()
        read()
    stop.set()
    for w in writers:
        w.join()
    assert all(s is None or s == payload for s in seen)
    assert not [r for r in caplog.records if "ignoring" in r.getMessage()]
    assert _entries(cache) == [entry]
