"""Runs of several processes on 127.0.0.1 over XLA's distributed service.

Each test starts its processes with `polyjax_sharding.launch.launch` (a free
port each time, a deadline after which every process is killed) running
`_multiprocess_worker.py`, and checks the JSON each prints. Starting a
process costs about 2 s, so these tests are few; they carry the
``multiprocess`` marker (``-m "not multiprocess"`` leaves them out).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from polyjax_sharding.launch import launch

pytestmark = pytest.mark.multiprocess

HERE = Path(__file__).resolve().parent
WORKER = str(HERE / "_multiprocess_worker.py")
DEADLINE = 120.0
# One CPU device per process, whatever the test run's own settings.
ENV = {"JAX_PLATFORMS": "cpu", "JAX_NUM_CPU_DEVICES": "1"}


def _run(n: int, scenario: str, heartbeat: int = 10) -> list:
    return launch(n, [sys.executable, WORKER, scenario, str(heartbeat)], timeout=DEADLINE, env=ENV)


def _json(result) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("n", [2, 4])
def test_global_arrays_and_jit_across_processes(n):
    outs = [_json(r) for r in _run(n, "basics")]
    batch = np.random.default_rng(0).normal(size=(4 * n, 2)).astype(np.float32)
    w = np.array([0.5, -1.0], np.float32)
    expected_grad = 2 * batch.T @ (batch @ w - 1.0) / len(batch)  # the single-process gradient
    for pid, out in enumerate(outs):
        assert out["twice"] == [
            "RuntimeError",
            "distributed.initialize should only be called once.",
        ]
        assert out["process_index"] == pid
        assert out["process_count"] == n and out["process_indices"] == list(range(n))
        assert out["device_count"] == n and sorted(out["device_processes"]) == list(range(n))
        assert out["local_device_processes"] == [pid]
        assert out["mesh_multi_process"] and out["local_mesh_size"] == 1
        assert not out["sharding_fully_addressable"] and not out["x_fully_addressable"]
        # make_array_from_process_local_data inferred the global shape from 3 rows each.
        assert out["x_shape"] == [3 * n]
        assert out["x_local"] == [[3.0 * pid, 3.0 * pid + 1, 3.0 * pid + 2]]
        assert out["y_local"] == [[(2.0 * pid) ** 2, (2.0 * pid + 1) ** 2]]
        assert out["asarray_error"][0] == "RuntimeError"
        assert "spans non-addressable (non process local) devices" in out["asarray_error"][1]
        # sum(range(3n)) + sum of squares of range(2n), reduced across the processes.
        assert out["total"] == sum(range(3 * n)) + sum(i * i for i in range(2 * n))
        np.testing.assert_allclose(out["grad"], expected_grad, rtol=1e-5)


def test_shard_map_collectives_and_multihost_utils_across_processes():
    outs = [_json(r) for r in _run(2, "collectives")]
    for pid, out in enumerate(outs):
        # Process p holds p + 1: psum over both is 3; ppermute shifts by one process.
        assert out["psum"] == [3.0]
        assert out["ppermute_local"] == [float((pid - 1) % 2 + 1)]
        assert out["allgather"] == [[0, 0], [1, 10]]
        assert out["allgather_tiled"] == [0.0, 1.0]
        assert out["allgather_global"] == [1.0, 2.0]
        assert out["allgather_global_untiled"] == [
            "ValueError",
            "Gathering global non-fully-addressable arrays only supports tiled=True",
        ]
        # Process 0's values, as NumPy arrays with JAX's dtypes (x64 off).
        assert out["broadcast"] == {
            "a": ["ndarray", "int32", [0, 1]],
            "b": ["ndarray", "float32", 3.0],
        }
        assert out["broadcast_from_last"] == 1
        assert out["sync"] is None and out["equal"] is None
        assert out["unequal"] == [
            "AssertionError",
            "custom msg. Expected: {'a': array([0, 1, 1, 2], dtype=int32)}; "
            f"got: {{'a': array([{pid}, {pid + 1}])}}.",
        ]
        assert out["sync_mismatch"][0] == "AssertionError"
        assert f"sync_global_devices name mismatch ('name {pid}')" in out["sync_mismatch"][1]
        assert out["h2g_shape"] == [4] and out["h2g_local"] == [[10.0 * pid, 10.0 * pid + 1]]
        assert out["g2h_shape"] == [2] and out["g2h_value"] == [10.0 * pid, 10.0 * pid + 1]
        assert out["g2h_mesh_size"] == 1
        # Not yet across processes: an error, not a process-local result.
        assert out["pmap"][0] == "NotImplementedError" and "shard_map" in out["pmap"][1]


def test_a_dead_process_stops_the_others_within_the_heartbeat_timeout():
    start = time.monotonic()
    survivor, dead = _run(2, "dies", heartbeat=3)
    elapsed = time.monotonic() - start
    assert dead.returncode == 3
    # The survivor was in a loop of cross-process sums; it must not hang there.
    assert survivor.returncode not in (0, None), survivor.stdout
    assert "another task died" in survivor.stderr
    assert elapsed < DEADLINE / 2


def test_the_documented_example_runs_with_the_launcher():
    example = HERE.parent / "examples" / "distributed_sum.py"
    cmd = [sys.executable, "-m", "polyjax.distributed.launch", "-n", "2", "--timeout", "90"]
    env = {**os.environ, **ENV}
    out = subprocess.run([*cmd, str(example)], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    for pid in (0, 1):
        assert f"process {pid} of 2: global shape (8,), sum 28.0" in out.stdout
