"""The runtime's guards: transfer guards (jaxlib enforces them), the Array
garbage-collection guard, `jax_no_tracing` and `jax_no_execution`."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from jaxlib import _jax

from polyjax_core import config
from polyjax_interpreters import _guards  # noqa: F401  (installs the hooks)
from polyjax_interpreters.array import Array, device_get, device_put
from polyjax_interpreters.jit import jit

DISALLOWED = "Disallowed host-to-device transfer"


@pytest.mark.parametrize("option", [config.transfer_guard_host_to_device, config.transfer_guard])
def test_disallow_refuses_implicit_host_to_device_transfers(toy, option):
    f = jit(lambda x: toy.sin(x))
    host = np.ones(3, np.float32)
    with option("disallow"):
        with pytest.raises(_jax.JaxRuntimeError, match=DISALLOWED):
            f(host)
        # An explicit transfer is allowed, and arrays on the device need none.
        x = device_put(host)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(host), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(f(host)), np.sin(host), rtol=1e-6)


def test_disallow_explicit_refuses_device_put_too():
    with config.transfer_guard_host_to_device("disallow_explicit"):
        with pytest.raises(_jax.JaxRuntimeError, match=DISALLOWED):
            device_put(np.ones(2, np.float32))
    assert type(device_put(np.ones(2, np.float32))) is Array


def test_a_global_transfer_guard_holds_in_other_threads(toy):
    errors = []

    def run():
        try:
            jit(lambda x: toy.sin(x))(np.ones(2, np.float32))
        except _jax.JaxRuntimeError as e:
            errors.append(str(e))

    config.config.update("jax_transfer_guard_host_to_device", "disallow")
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        config.config.update("jax_transfer_guard_host_to_device", None)
    assert len(errors) == 1 and DISALLOWED in errors[0]


def test_device_get_is_an_explicit_transfer():
    x = device_put(np.arange(3, dtype=np.float32))
    with config.transfer_guard_device_to_host("disallow"):
        np.testing.assert_array_equal(device_get(x), [0.0, 1.0, 2.0])


def test_transfer_guard_levels_are_validated():
    with pytest.raises(ValueError, match="disallow_explicit"):
        config.transfer_guard_device_to_device("never")


def test_gc_guard_log_reports_arrays_freed_by_the_cycle_collector(capfd):
    class Holder:
        pass

    with config.array_garbage_collection_guard("log"):
        holder = Holder()
        holder.self = holder
        holder.array = device_put(np.ones(2, np.float32))
        del holder
        gc.collect()
    assert "deleted by the Python garbage collector" in capfd.readouterr().err


def test_no_tracing_refuses_new_traces_and_allows_cached_calls(toy):
    f = jit(lambda x: toy.sin(x))
    x = device_put(np.ones(2, np.float32))
    f(x)
    with config.no_tracing(True):
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.ones(2)), rtol=1e-6)
        with pytest.raises(RuntimeError, match="re-tracing function .* 'no_tracing' is set"):
            f(device_put(np.ones(3, np.float32)))
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            toy.mul(x, device_put(np.ones(2, np.float32) * 3))


def test_no_execution_refuses_even_cached_calls(toy):
    f = jit(lambda x: toy.sin(x))
    x = device_put(np.ones(2, np.float32))
    f(x)
    compiled = f.lower(x).compile()
    with config.no_execution(True):
        for call in (lambda: f(x), lambda: compiled(x), lambda: toy.add(x, x)):
            with pytest.raises(RuntimeError, match="no_execution config option is set"):
                call()
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.ones(2)), rtol=1e-6)
