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


def _run(n: int, scenario: str, heartbeat: int = 10, local_devices: int = 1) -> list:
    env = {**ENV, "JAX_NUM_CPU_DEVICES": str(local_devices)}
    return launch(n, [sys.executable, WORKER, scenario, str(heartbeat)], timeout=DEADLINE, env=env)


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
        # Both processes live; no preemption notice, so no sync point.
        assert out["live"] == [0, 1]
        assert out["live_no_local"] == [
            "ValueError",
            "live_devices: the devices must include at least one local device",
        ]
        assert out["preemption"] == [False, False, False]


@pytest.mark.parametrize(("n", "k"), [(2, 2), (4, 1)])
def test_pmap_maps_over_the_devices_of_every_process(n, k):
    """n processes of k devices each; the NumPy model is the computation on all n * k rows."""
    outs = [_json(r) for r in _run(n, "pmap", local_devices=k)]
    d = n * k
    data = np.random.default_rng(1).normal(size=(d, 3)).astype(np.float32)
    scale = np.repeat(np.arange(1, n + 1), k)[:, None]  # each process's unmapped argument
    batch = np.random.default_rng(2).normal(size=(d, 2, 3)).astype(np.float32)
    xs, ys = batch.reshape(-1, 3), batch.sum(-1).reshape(-1)
    w = np.zeros(3)
    for _ in range(3):
        w = w - 0.1 * 2 * xs.T @ (xs @ w - ys) / len(xs)
    for pid, out in enumerate(outs):
        rows = slice(pid * k, pid * k + k)
        close = lambda got, want: np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # noqa: E731
        close(out["psum"], np.broadcast_to(data.sum(0), (k, 3)))
        assert out["index"] == list(range(pid * k, pid * k + k))
        close(out["gather"], np.broadcast_to(data, (k, d, 3)))
        close(out["permute"], np.roll(data, 1, axis=0)[rows])
        close(out["scaled"], np.broadcast_to((data * scale).sum(0), (k, 3)))
        # Results are this process's blocks, on its own devices.
        assert out["shape"] == [k, 3] and out["addressable"] and out["spec"] == "P('i',)"
        assert len(out["sharding_devices"]) == k
        close(out["asarray"], out["psum"])
        assert out["chained"] == [sum(range(d))] * k
        close(out["one_device"], out["psum"])
        close(out["global_input"], out["psum"])  # a global Array is taken whole, as JAX
        close(out["out_axes"], np.stack([data[rows], -data[rows]]))
        assert out["local_devices"] == list(range(k))
        close(out["in_jit"], np.broadcast_to(data[rows].sum(0), (k, 3)))
        close(out["nested"], np.broadcast_to(data[rows].sum(1, keepdims=True), (k, 3)))
        assert out["wrong_size"][0] == "ValueError"
        assert f"one position per local device ({k} in process {pid})" in out["wrong_size"][1]
        assert out["others_devices"][0] == "ValueError"
        assert f"none of process {pid}'s devices" in out["others_devices"][1]
        assert out["no_mapped"] == [
            "ValueError",
            "pmap requires at least one argument with a mapped axis.",
        ]
        # Three data-parallel SGD steps agree with the single-process run and NumPy.
        close(out["single"], w)
        close(out["sgd"], np.broadcast_to(w, (k, 3)))


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
