"""Backends: lazy thread-safe client creation, platform selection, device queries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest
from jaxlib import xla_client

from polyjax_core import config
from polyjax_interpreters import backends


@pytest.fixture
def fresh(monkeypatch):
    """Backends created anew inside the test; the process's clients come back after it."""
    backends._backends_state()  # make sure the real ones exist, so they are restored
    monkeypatch.setattr(backends, "_state", None)
    return backends


def test_default_backend_is_cpu():
    assert backends.default_backend() == "cpu"
    assert backends.get_backend().platform == "cpu"
    assert list(backends.backends()) == ["cpu"]


def test_clients_are_created_once():
    assert backends.get_backend() is backends.get_backend()
    assert backends.get_backend("cpu") is backends.get_backend()
    assert backends.get_backend("CPU") is backends.get_backend()


def test_a_client_passes_through():
    client = backends.get_backend()
    assert backends.get_backend(client) is client


def test_device_queries_agree():
    devs = backends.devices()
    assert devs == backends.get_backend().devices()
    assert all(d.platform == "cpu" for d in devs)
    assert backends.device_count() == len(devs) == backends.local_device_count()
    assert backends.local_devices() == devs
    assert backends.local_devices(process_index=0) == devs
    assert backends.local_devices(process_index=1) == []
    assert backends.process_index() == 0
    assert backends.process_count() == 1
    assert backends.process_indices() == [0]
    assert backends.default_device() == devs[0]
    assert backends.devices("cpu") == devs


@pytest.mark.parametrize("name", ["cuda", "gpu", "tpu", "rocm", "no_such_platform"])
def test_absent_platform_lists_the_available_ones(name):
    with pytest.raises(RuntimeError, match=rf"'{name}'.*Platforms present are: cpu"):
        backends.get_backend(name)
    with pytest.raises(RuntimeError, match="Platforms present are: cpu"):
        backends.devices(name)


@pytest.mark.parametrize("n", [1, 3])
def test_num_cpu_devices(fresh, n):
    with config.num_cpu_devices(n):
        assert fresh.device_count() == n
        assert [d.id for d in fresh.devices()] == list(range(n))
        assert fresh.default_device() == fresh.devices()[0]


def test_num_cpu_devices_is_read_when_clients_start(fresh):
    with config.num_cpu_devices(2):
        assert fresh.device_count() == 2
    # Changing the option later does not change the started client.
    assert fresh.device_count() == 2
    fresh._clear_backends()
    assert fresh.device_count() == xla_client.make_cpu_client().device_count()


def test_concurrent_first_use_creates_one_client(fresh, monkeypatch):
    made = []
    real = backends._make_cpu_client

    def counting():
        made.append(1)
        return real()

    monkeypatch.setattr(backends, "_make_cpu_client", counting)
    start = threading.Barrier(8)
    seen = []

    def worker():
        start.wait()
        seen.append(fresh.get_backend())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1
    assert len(seen) == 8 and all(c is seen[0] for c in seen)


@pytest.mark.parametrize("text", ["cpu", "CPU", " cpu ", "cpu,cpu"])
def test_platforms_option_cpu(fresh, text):
    with config.platforms(text):
        assert fresh.default_backend() == "cpu"
        assert list(fresh.backends()) == ["cpu"]


@pytest.mark.parametrize("text", ["cuda", "gpu", "cpu,tpu", "bogus"])
def test_platforms_option_with_absent_platform_raises(fresh, text):
    with config.platforms(text):
        with pytest.raises(RuntimeError, match=r"jax_platforms=.*Platforms installed: cpu"):
            fresh.get_backend()
    # Nothing was half-started: with a valid setting the clients come up.
    assert fresh.default_backend() == "cpu"


def test_legacy_platform_name_picks_the_default(fresh):
    with config.platform_name("cpu"):
        assert fresh.default_backend() == "cpu"
    fresh._clear_backends()
    with config.platform_name("tpu"):
        with pytest.raises(RuntimeError, match="'tpu'"):
            fresh.get_backend()


def test_default_device_option(fresh):
    with config.num_cpu_devices(2):
        d0, d1 = fresh.devices()
    assert fresh.default_device() == d0
    with config.default_device(d1):
        assert fresh.default_device() == d1
    with config.default_device("cpu"):
        assert fresh.default_device() == d0
    with config.default_device("cuda"):
        with pytest.raises(RuntimeError, match="Platforms present are: cpu"):
            fresh.default_device()


def test_environment_variables_in_a_fresh_process():
    script = textwrap.dedent(
        """
        from polyjax_interpreters import backends
        print(backends.device_count(), backends.default_backend())
        """
    )
    env = dict(os.environ, JAX_NUM_CPU_DEVICES="3", JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["3", "cpu"]

    env["JAX_PLATFORMS"] = "cuda"
    bad = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert bad.returncode != 0
    assert "RuntimeError" in bad.stderr and "Platforms installed: cpu" in bad.stderr


def test_importing_starts_no_client():
    script = "import polyjax_interpreters.backends as b; print(b._state is None)"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_cpu_client_options_reach_the_client_and_freeze_once_started(fresh, monkeypatch):
    monkeypatch.setattr(backends, "_cpu_client_options", {})
    assert not fresh.backends_are_initialized()
    # An option jaxlib's make_cpu_client understands, visible in the new client.
    fresh.set_cpu_client_options(num_devices=3)
    assert fresh.device_count() == 3
    assert fresh.backends_are_initialized()
    with pytest.raises(RuntimeError, match="cannot change after the backends started"):
        fresh.set_cpu_client_options()
