"""multihost_utils in a single process (one participant); the runs of several
processes are in tests_integration/test_multiprocess.py."""

import numpy as np
import pytest

import polyjax_numpy  # noqa: F401  (the primitives the compiled gathers use)
from polyjax_core.partition_spec import PartitionSpec as P
from polyjax_interpreters import backends
from polyjax_sharding import Mesh
from polyjax_sharding import multihost_utils as mu


def test_allgather_of_one_process_stacks_or_tiles():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(mu.process_allgather(x), x[None])
    np.testing.assert_array_equal(mu.process_allgather(x, tiled=True), x)
    out = mu.process_allgather({"s": np.int32(4)})
    assert isinstance(out["s"], np.ndarray) and out["s"].tolist() == [4]


def test_broadcast_sync_and_assert_equal_with_one_process():
    out = mu.broadcast_one_to_all({"a": np.arange(3), "b": 2.5})
    assert out["a"].tolist() == [0, 1, 2] and out["b"].dtype == np.float32
    assert mu.sync_global_devices("x") is None
    assert mu.assert_equal((np.arange(2), 1.0)) is None


@pytest.mark.parametrize("spec", [P("x"), P(), P(None, "x")])
def test_host_local_and_global_round_trip(spec):
    mesh = Mesh(np.array(backends.devices()[:1]), ("x",))
    value = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    g = mu.host_local_array_to_global_array({"v": value}, mesh, {"v": spec})["v"]
    assert g.shape == (2, 3) and g.sharding.spec == spec
    local = mu.global_array_to_host_local_array(g, mesh, spec)
    np.testing.assert_array_equal(np.asarray(local), value)


def test_preemption_and_live_devices_outside_a_multi_process_run():
    assert mu.reached_preemption_sync_point(0) is False
    with pytest.raises(RuntimeError, match="Distributed JAX not initialized"):
        with mu.live_devices(backends.devices()):
            pass
    device = backends.devices()[0]
    error = mu.ProcessFailureError({device})
    assert error.failed_devices == {device} and "processes failed" in str(error)
