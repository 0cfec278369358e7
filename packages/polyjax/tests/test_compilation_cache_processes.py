"""The persistent compilation cache across processes: the second run compiles nothing.

Configured as JAX's is, from the environment (`JAX_COMPILATION_CACHE_DIR`,
`JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS`) and through
`polyjax.experimental.compilation_cache.compilation_cache.set_cache_dir`.
Compiles are counted from the `jax_log_compiles` messages (loads log a hit).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(format="%(message)s")
    import polyjax as jax
    import polyjax.numpy as jnp
    from polyjax.experimental.compilation_cache import compilation_cache as cc

    if len(sys.argv) > 1:
        cc.set_cache_dir(sys.argv[1])
    jax.config.update("jax_log_compiles", True)

    @jax.jit
    def f(x):
        return jnp.tanh(x @ x.T).sum(0) * 2.0

    x = jnp.ones((2, 3))
    print(f(x), x + 1)
    """
)


def _run(env_extra: dict[str, str], *args: str) -> tuple[str, int, int]:
    env = {**os.environ, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", **env_extra}
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    hits = proc.stderr.count("Persistent compilation cache hit")
    # A load from the cache logs the hit, then "Finished compiling" (as JAX's log does).
    compiles = proc.stderr.count("Finished compiling") - hits
    return proc.stdout, compiles, hits


@pytest.mark.multiprocess
def test_second_process_compiles_nothing(tmp_path):
    # The first process sets the directory with set_cache_dir, the second from the
    # environment: the same directory, so the second loads every executable.
    out1, compiles1, hits1 = _run({}, str(tmp_path))
    assert compiles1 > 0 and hits1 == 0
    assert len(os.listdir(tmp_path)) == compiles1
    out2, compiles2, hits2 = _run({"JAX_COMPILATION_CACHE_DIR": str(tmp_path)})
    assert out2 == out1
    assert (compiles2, hits2) == (0, compiles1)
