"""polyjax_sharding.distributed in one process: environment detection, argument
checks, the unreachable coordinator, and the local launcher.

The runs of several processes are in tests_integration/test_multiprocess.py.
"""

import sys
import time

import pytest

from polyjax_interpreters import backends
from polyjax_sharding import _cluster, distributed
from polyjax_sharding.launch import free_port, launch

NONE = _cluster.DetectedParams(None, None, None, None)


@pytest.mark.parametrize(
    ("env", "method", "expected"),
    [
        ({}, None, (None, None, None, None)),
        (
            {"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "2"},
            None,
            ("h:1", 4, 2, None),
        ),
        # Ports derived from the job id: the same in every process of a job.
        (
            {"SLURM_JOB_ID": "123456", "SLURM_PROCID": "3", "SLURM_NTASKS": "8",
             "SLURM_LOCALID": "1", "SLURM_STEP_NODELIST": "node[007-010],gpu2"},
            None,
            ("node007:62016", 8, 3, [1]),
        ),
        (
            {"SLURM_JOB_ID": "77", "SLURM_PROCID": "0", "SLURM_NTASKS": "2",
             "SLURM_LOCALID": "0", "SLURM_STEP_NODELIST": "host-a,host-b"},
            "slurm",
            ("host-a:61517", 2, 0, [0]),
        ),
        (
            {"OMPI_MCA_orte_hnp_uri": "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911",
             "OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4",
             "OMPI_COMM_WORLD_LOCAL_RANK": "1"},
            None,
            ("10.96.0.1:62624", 4, 2, [1]),
        ),
        # The JAX_* variables win over the cluster's; "deactivate" reads no cluster.
        (
            {"JAX_COORDINATOR_ADDRESS": "c:9", "SLURM_JOB_ID": "77", "SLURM_PROCID": "1",
             "SLURM_NTASKS": "2", "SLURM_LOCALID": "0", "SLURM_STEP_NODELIST": "a"},
            None,
            ("c:9", 2, 1, [0]),
        ),
        ({"SLURM_JOB_ID": "77"}, "deactivate", (None, None, None, None)),
    ],
)  # fmt: skip
def test_detect_reads_the_environment(env, method, expected):
    assert tuple(_cluster.detect(NONE, method, env)) == expected


def test_detect_keeps_given_arguments():
    env = {"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "2"}
    given = _cluster.DetectedParams("mine:5", None, 0, None)
    assert tuple(_cluster.detect(given, None, env)) == ("mine:5", 4, 0, None)


@pytest.mark.parametrize(
    ("method", "message"),
    [("bogus", "bogus is not supported"), ("slurm", "slurm is supported but not functional")],
)
def test_detect_rejects_unusable_methods(method, message):
    with pytest.raises(ValueError, match=message):
        _cluster.detect(NONE, method, {})


@pytest.mark.parametrize(
    ("nodelist", "first"),
    [("a", "a"), ("a,b", "a"), ("n[3-5]", "n3"), ("n[08,11-12],m", "n08"), ("x-1[2]", "x-12")],
)
def test_slurm_first_host(nodelist, first):
    assert _cluster.slurm_first_host(nodelist) == first


@pytest.fixture
def backends_not_started(monkeypatch):
    """Makes initialize believe no backend started yet (its checks come first)."""
    monkeypatch.setattr(backends, "_state", None)
    for name in ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "SLURM_JOB_ID",
                 "OMPI_MCA_orte_hnp_uri"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((None, 2, 0), "coordinator_address should be defined"),
        (("127.0.0.1:1", None, 0), "Number of processes must be defined"),
        (("127.0.0.1:1", 2, None), "process id of the current process must be defined"),
        (("127.0.0.1:1", 2, 5), "process_id=5, num_processes=2"),
        (("127.0.0.1:1", 0, 0), "process_id=0, num_processes=0"),
    ],
)
def test_initialize_checks_its_arguments(backends_not_started, args, message):
    with pytest.raises(ValueError, match=message):
        distributed.initialize(*args, initialization_timeout=1)
    assert not distributed.is_initialized()


def test_unreachable_coordinator_fails_after_the_timeout(backends_not_started):
    address = f"127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=f"coordinator at '{address}' within 1 s"):
        distributed.initialize(address, 2, 1, initialization_timeout=1)
    assert 0.9 < time.monotonic() - start < 10
    assert not distributed.is_initialized()


def test_initialize_after_the_backend_started():
    backends.devices()
    with pytest.raises(RuntimeError, match="must be called before any JAX calls"):
        distributed.initialize("127.0.0.1:1", 1, 0)
    assert not distributed.is_initialized()
    distributed.shutdown()  # not in a run: nothing to do


def test_launch_kills_processes_past_the_deadline():
    start = time.monotonic()
    code = (
        "import os, sys, time; print(os.environ['JAX_PROCESS_ID']); sys.stdout.flush(); "
        "time.sleep(60)"
    )
    results = launch(2, [sys.executable, "-c", code], timeout=1.0)
    assert time.monotonic() - start < 30
    assert [r.returncode for r in results] == [None, None]
    assert [r.stdout.strip() for r in results] == ["0", "1"]


def test_launch_reports_each_process():
    code = (
        "import os, sys; "
        "sys.exit(int(os.environ['JAX_PROCESS_ID']) + int(os.environ['JAX_NUM_PROCESSES']))"
    )
    results = launch(2, [sys.executable, "-c", code], timeout=60)
    assert [(r.process_id, r.returncode) for r in results] == [(0, 2), (1, 3)]
    with pytest.raises(ValueError, match="num_processes must be at least 1"):
        launch(0, [sys.executable, "-c", "pass"])
