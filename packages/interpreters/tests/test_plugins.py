"""PJRT plugin discovery and loading, as far as a machine without accelerators allows.

Fake plugin packages are written to a temporary directory put on ``sys.path``.
Their ``__init__.py`` raises if imported: discovery must find them from files
alone, because real plugin modules import ``jax``.
"""

from __future__ import annotations

import sys

import pytest
from jaxlib import xla_client

from polyjax_core import config
from polyjax_interpreters import _plugins, backends
from polyjax_interpreters._plugins import (
    PluginInfo,
    PluginLoadError,
    discover_plugins,
    make_plugin_client,
    plugin_options,
)

_TRAP = "raise AssertionError('polyjax must not import plugin modules')\n"


def _package(root, dotted, files=()):
    path = root.joinpath(*dotted.split("."))
    path.mkdir(parents=True)
    (path / "__init__.py").write_text(_TRAP)
    for name in files:
        (path / name).write_bytes(b"not a shared library")
    return path


@pytest.fixture
def site(tmp_path, monkeypatch):
    """An empty directory on sys.path, and no plugin variables from the environment."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PJRT_NAMES_AND_LIBRARY_PATHS", raising=False)
    monkeypatch.delenv("TPU_LIBRARY_PATH", raising=False)
    return tmp_path


@pytest.fixture
def fresh(monkeypatch):
    backends._backends_state()
    monkeypatch.setattr(backends, "_state", None)
    return backends


def _by_platform(plugins):
    return {p.platform: p for p in plugins}


def test_nothing_installed_here(site):
    assert discover_plugins() == []


@pytest.mark.parametrize(
    "name, platform",
    [
        ("xla_cuda12", "cuda"),
        ("xla_cuda13", "cuda"),
        ("xla_rocm7", "rocm"),
        ("xla_fake", "fake"),
        ("my_plugin", "my_plugin"),
        ("jax_plugins.xla_tpu2", "tpu"),
    ],
)
def test_platform_names(name, platform):
    assert _plugins._platform_of(name) == platform


def test_namespace_plugin_is_found_without_importing_it(site):
    where = _package(site, "jax_plugins.xla_fake", ["pjrt_fake_plugin.so", "README.txt"])
    (found,) = discover_plugins()
    assert found == PluginInfo(
        name="xla_fake",
        platform="fake",
        library_path=str(where / "pjrt_fake_plugin.so"),
        priority=_plugins._OTHER_PRIORITY,
        source="jax_plugins",
        location=str(where),
    )
    assert "jax_plugins.xla_fake" not in sys.modules


def test_cuda_plugin_layout(site):
    where = _package(site, "jax_plugins.xla_cuda12", ["xla_cuda_plugin.so", "version.py"])
    (found,) = discover_plugins()
    assert found.platform == "cuda" and found.priority == 500
    assert found.library_path == str(where / "xla_cuda_plugin.so")


def test_newest_cuda_plugin_wins(site):
    _package(site, "jax_plugins.xla_cuda12", ["xla_cuda_plugin.so"])
    _package(site, "jax_plugins.xla_cuda13", ["xla_cuda_plugin.so"])
    (found,) = discover_plugins()
    assert found.name == "xla_cuda13"


def test_plugins_are_ordered_by_priority(site):
    _package(site, "jax_plugins.xla_fake", ["lib.so"])
    _package(site, "jax_plugins.xla_cuda12", ["xla_cuda_plugin.so"])
    _package(site, "libtpu", ["libtpu.so"])
    assert [p.platform for p in discover_plugins()] == ["cuda", "fake", "tpu"]


def test_package_without_library(site):
    _package(site, "jax_plugins.xla_cuda12", ["something_else.so"])
    (found,) = discover_plugins()
    assert found.library_path is None
    with pytest.raises(PluginLoadError, match="no shared library found"):
        make_plugin_client(found)


def test_single_file_plugin_module(site):
    (site / "jax_plugins").mkdir()
    (site / "jax_plugins" / "xla_single.py").write_text(_TRAP)
    (found,) = discover_plugins()
    assert (found.name, found.platform, found.library_path) == ("xla_single", "single", None)


def test_entry_point_plugin(site):
    where = _package(site, "epfake_pkg.plugin", ["pjrt_plugin_epfake.so"])
    dist = site / "epfake-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: epfake\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[jax_plugins]\nxla_epfake = epfake_pkg.plugin\n")
    (found,) = discover_plugins()
    assert (found.name, found.platform, found.source) == ("xla_epfake", "epfake", "entry_point")
    assert found.library_path == str(where / "pjrt_plugin_epfake.so")
    assert "epfake_pkg" not in sys.modules


def test_entry_point_and_namespace_of_one_package_count_once(site):
    _package(site, "jax_plugins.xla_fake", ["lib.so"])
    dist = site / "fake-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[jax_plugins]\nxla_fake = jax_plugins.xla_fake\n")
    (found,) = discover_plugins()
    assert found.source == "jax_plugins"


def test_libtpu_package_and_variable(site, monkeypatch, tmp_path):
    where = _package(site, "libtpu", ["libtpu.so"])
    (found,) = discover_plugins()
    assert (found.platform, found.source, found.priority) == ("tpu", "libtpu", 300)
    assert found.library_path == str(where / "libtpu.so")
    monkeypatch.setenv("TPU_LIBRARY_PATH", "/opt/tpu/libtpu.so")
    (found,) = discover_plugins()
    assert found.library_path == "/opt/tpu/libtpu.so"


def test_environment_variable(site, monkeypatch):
    monkeypatch.setenv("PJRT_NAMES_AND_LIBRARY_PATHS", "myplat:/x/libmy.so, bad_entry ,")
    (found,) = discover_plugins()
    assert (found.name, found.platform, found.library_path, found.source) == (
        "myplat",
        "myplat",
        "/x/libmy.so",
        "env",
    )


def test_cpu_is_never_a_plugin(site, monkeypatch):
    monkeypatch.setenv("PJRT_NAMES_AND_LIBRARY_PATHS", "cpu:/x/libcpu.so")
    assert discover_plugins() == []


def test_missing_library_file():
    info = PluginInfo("xla_fake", "fake", "/does/not/exist.so", 400, "env")
    with pytest.raises(PluginLoadError, match="does not exist"):
        make_plugin_client(info)


def test_unloadable_library_gives_a_clear_error(site):
    _package(site, "jax_plugins.xla_fake", ["pjrt_fake_plugin.so"])
    (found,) = discover_plugins()
    with pytest.raises(PluginLoadError, match=r"'xla_fake'.*pjrt_fake_plugin\.so.*failed"):
        make_plugin_client(found)
    assert not xla_client.pjrt_plugin_loaded("fake")


def test_options():
    gpu = plugin_options(PluginInfo("xla_cuda12", "cuda", None, 500, "jax_plugins"))
    assert gpu["platform_name"] == "cuda"
    rocm = plugin_options(PluginInfo("xla_rocm7", "rocm", None, 500, "jax_plugins"))
    assert rocm["platform_name"] == "rocm"
    assert plugin_options(PluginInfo("libtpu", "tpu", None, 300, "libtpu")) == {}


# ---------------------------------------------------------------------------
# Backends with a broken plugin installed


def test_broken_plugin_is_skipped_and_cpu_works(site, fresh):
    _package(site, "jax_plugins.xla_fake", ["pjrt_fake_plugin.so"])
    with pytest.warns(RuntimeWarning, match="'fake' is installed but could not be started"):
        assert fresh.default_backend() == "cpu"
    assert list(fresh.backends()) == ["cpu"]
    with pytest.raises(RuntimeError, match="Platforms present are: cpu.*failed to initialize"):
        fresh.get_backend("fake")


def test_requested_broken_plugin_is_an_error(site, fresh):
    _package(site, "jax_plugins.xla_fake", ["pjrt_fake_plugin.so"])
    with config.platforms("cpu,fake"):
        with pytest.raises(RuntimeError, match="Unable to initialize backend 'fake'"):
            fresh.get_backend()


def test_cpu_only_request_skips_discovery(site, fresh, monkeypatch):
    def fail():
        raise AssertionError("discovery ran")

    monkeypatch.setattr(_plugins, "discover_plugins", fail)
    with config.platforms("cpu"):
        assert fresh.default_backend() == "cpu"


def test_gpu_alias_resolves_to_an_installed_plugin(site, fresh):
    _package(site, "jax_plugins.xla_cuda12", ["xla_cuda_plugin.so"])
    # The library is a fake, so starting it fails: but it is the one 'gpu' asked for.
    with config.platforms("gpu"):
        with pytest.raises(RuntimeError, match="Unable to initialize backend 'cuda'"):
            fresh.get_backend()


def test_asking_for_cuda_without_a_plugin(site, fresh):
    with pytest.raises(RuntimeError, match="'cuda'.*Platforms present are: cpu.*jax-cuda12-pjrt"):
        fresh.get_backend("cuda")
