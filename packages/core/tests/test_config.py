"""Tests for polyjax_core.config: options, overrides, environment defaults, trace context."""

import itertools
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyjax_core import config as cfg
from polyjax_core.config import config

_counter = itertools.count()


def fresh_name() -> str:
    """A new option name per call: options are global and cannot be redefined."""
    return f"polyjax_test_option_{next(_counter)}"


@pytest.fixture
def restore_global():
    """Restores the global values of every option a test changes with config.update."""
    saved = {name: s.global_value for name, s in config.states.items()}
    yield
    for name, value in saved.items():
        if config.states[name].global_value != value:
            config.update(name, value)


# ---------------------------------------------------------------------------- update/read


def test_update_and_read(restore_global):
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64 is True
    assert cfg.enable_x64.value is True
    assert config.read("jax_enable_x64") is True
    assert config.values["jax_enable_x64"] is True
    config.update("jax_enable_x64", False)
    assert cfg.enable_x64.value is False


@pytest.fixture(scope="module")
def clean_defaults() -> dict[str, str]:
    """Every option's value (repr) in a fresh process without JAX_* environment variables.

    The test run itself may set some (CI points JAX_COMPILATION_CACHE_DIR at a
    shared cache), and those change the defaults read at import.
    """
    code = (
        "import json; from polyjax_core.config import config; "
        "print(json.dumps({n: repr(config.read(n)) for n in config.values}))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize(
    "name, default",
    [
        ("jax_enable_x64", False),
        ("jax_num_cpu_devices", -1),
        ("jax_platforms", None),
        ("jax_platform_name", ""),
        ("jax_default_device", None),
        ("jax_default_matmul_precision", None),
        ("jax_disable_jit", False),
        ("jax_debug_nans", False),
        ("jax_debug_infs", False),
        ("jax_enable_checks", False),
        ("jax_numpy_rank_promotion", "allow"),
        ("jax_numpy_dtype_promotion", "standard"),
        ("jax_traceback_filtering", "auto"),
        ("jax_default_prng_impl", "threefry2x32"),
        ("jax_threefry_partitionable", True),
        ("jax_log_compiles", False),
        ("jax_explain_cache_misses", False),
        ("jax_check_tracer_leaks", False),
        ("jax_use_shardy_partitioner", True),
        ("jax_dynamic_shapes", False),
        ("jax_compilation_cache_dir", None),
        ("jax_softmax_custom_jvp", False),
        ("jax_transfer_guard", None),
    ],
)
def test_jax_option_defaults(clean_defaults, name, default):
    assert clean_defaults[name] == repr(default)


def test_module_level_states_match_config():
    for state in (cfg.enable_x64, cfg.disable_jit, cfg.debug_nans, cfg.numpy_rank_promotion):
        assert config.states[state.name] is state
        assert config.read(state.name) == state.value


def test_unknown_option_errors():
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.update("jax_no_such", 1)
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.jax_no_such
    with pytest.raises(AttributeError, match="Unrecognized config option: jax_no_such"):
        config.read("jax_no_such")


def test_redefinition_is_an_error():
    name = fresh_name()
    cfg.define_bool_state(name, False, "help")
    with pytest.raises(ValueError, match="already defined"):
        cfg.define_bool_state(name, False, "help")


def test_state_bool_is_an_error():
    with pytest.raises(TypeError, match=r"jax_enable_x64\.value"):
        bool(cfg.enable_x64)


# ------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    "name, bad, error",
    [
        ("jax_enable_x64", "yes", TypeError),
        ("jax_enable_x64", 1, TypeError),
        ("jax_num_cpu_devices", 2.0, TypeError),
        ("jax_num_cpu_devices", True, TypeError),
        ("jax_platforms", 3, TypeError),
        ("jax_numpy_rank_promotion", "sometimes", ValueError),
        ("jax_numpy_rank_promotion", None, TypeError),
        ("jax_numpy_dtype_promotion", "loose", ValueError),
        ("jax_default_matmul_precision", "double", ValueError),
        ("jax_transfer_guard", "maybe", ValueError),
        ("jax_default_device", [1], TypeError),
    ],
)
def test_invalid_values_are_rejected(name, bad, error, restore_global):
    before = config.read(name)
    with pytest.raises(error, match=name):
        config.update(name, bad)
    with pytest.raises(error, match=name):
        config.states[name](bad)
    assert config.read(name) == before


def test_enum_error_lists_allowed_values():
    with pytest.raises(ValueError) as info:
        config.update("jax_numpy_rank_promotion", "sometimes")
    for allowed in ("'allow'", "'warn'", "'raise'"):
        assert allowed in str(info.value)


def test_numpy_bool_is_accepted(restore_global):
    config.update("jax_debug_nans", np.True_)
    assert cfg.debug_nans.value is True


def test_optional_enum_accepts_none(restore_global):
    config.update("jax_default_matmul_precision", "highest")
    assert cfg.default_matmul_precision.value == "highest"
    config.update("jax_default_matmul_precision", None)
    assert cfg.default_matmul_precision.value is None


# ------------------------------------------------------------------- environment defaults


@pytest.mark.parametrize(
    "text, expected",
    [("1", True), ("true", True), ("TRUE", True), ("Yes", True), ("on", True)]
    + [("0", False), ("false", False), ("No", False), ("OFF", False)],
)
def test_bool_env_default(text, expected, monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), text)
    state = cfg.define_bool_state(name, not expected, "help")
    assert state.value is expected


def test_bad_bool_env_names_variable(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "maybe")
    with pytest.raises(ValueError, match=name.upper()):
        cfg.define_bool_state(name, False, "help")


def test_int_env_default(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), " 8 ")
    assert cfg.define_int_state(name, 1, "help").value == 8
    bad = fresh_name()
    monkeypatch.setenv(bad.upper(), "eight")
    with pytest.raises(ValueError, match=bad.upper()):
        cfg.define_int_state(bad, 1, "help")


def test_enum_env_default(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "b")
    assert cfg.define_enum_state(name, ["a", "b"], "a", "help").value == "b"
    bad = fresh_name()
    monkeypatch.setenv(bad.upper(), "c")
    with pytest.raises(ValueError, match=bad.upper()) as info:
        cfg.define_enum_state(bad, ["a", "b"], "a", "help")
    assert "'a', 'b'" in str(info.value)


def test_optional_env_defaults(monkeypatch):
    name = fresh_name()
    monkeypatch.setenv(name.upper(), "cpu,cuda")
    assert cfg.define_optional_string_state(name, None, "help").value == "cpu,cuda"
    empty = fresh_name()
    monkeypatch.setenv(empty.upper(), "")
    assert cfg.define_optional_enum_state(empty, ["x"], "x", "help").value is None
    integer = fresh_name()
    monkeypatch.setenv(integer.upper(), "3")
    assert cfg.define_optional_int_state(integer, None, "help").value == 3


def test_unset_env_uses_default(monkeypatch):
    name = fresh_name()
    monkeypatch.delenv(name.upper(), raising=False)
    assert cfg.define_string_state(name, "dflt", "help").value == "dflt"


# -------------------------------------------------------------------- context managers


def test_override_nests_and_restores():
    state = cfg.define_int_state(fresh_name(), 0, "help")
    with state(1):
        assert state.value == 1
        with state(2):
            assert state.value == 2
            assert state.global_value == 0
        assert state.value == 1
    assert state.value == 0


def test_override_restores_on_exception():
    state = cfg.define_enum_state(fresh_name(), ["a", "b", "c"], "a", "help")
    with pytest.raises(RuntimeError, match="boom"):
        with state("b"):
            with state("c"):
                raise RuntimeError("boom")
    assert state.value == "a"


def test_global_update_under_override_shows_after_exit(restore_global):
    state = cfg.define_bool_state(fresh_name(), False, "help")
    with state(False):
        config.update(state.name, True)
        assert state.value is False  # the override still wins
    assert state.value is True


def test_override_as_decorator_is_reentrant():
    state = cfg.define_int_state(fresh_name(), 0, "help")
    seen = []

    @state(5)
    def f(depth):
        seen.append(state.value)
        if depth:
            f(depth - 1)
        seen.append(state.value)

    f(2)
    assert seen == [5] * 6
    assert state.value == 0


_STACK_STATE = cfg.define_int_state(fresh_name(), 0, "help")


@given(st.lists(st.integers(-5, 5), max_size=6))
def test_nested_overrides_form_a_stack(values):
    state = _STACK_STATE
    expected = [state.global_value]

    def enter(i):
        if i == len(values):
            assert state.value == expected[-1]
            return
        with state(values[i]):
            expected.append(values[i])
            assert state.value == values[i]
            enter(i + 1)
            expected.pop()
        assert state.value == expected[-1]

    enter(0)
    assert state.value == state.global_value


def test_update_hooks_are_called(restore_global):
    global_calls, local_calls = [], []
    state = cfg.define_bool_state(
        fresh_name(),
        False,
        "help",
        update_hook=global_calls.append,
        update_thread_local_hook=local_calls.append,
    )
    assert global_calls == [False]  # called once with the initial value
    config.update(state.name, True)
    assert global_calls == [False, True]
    with state(False):
        pass
    assert local_calls == [False, None]


# ---------------------------------------------------------------------------- threads


def test_overrides_are_thread_local():
    state = cfg.define_int_state(fresh_name(), 0, "help")
    barrier = threading.Barrier(2, timeout=10)
    seen: dict[int, list] = {}
    errors: list[BaseException] = []

    def worker(value):
        try:
            with state(value):
                barrier.wait()  # both threads are now inside their overrides
                seen[value] = [state.value, cfg.trace_context()]
                barrier.wait()
            seen[value].append(state.value)
        except BaseException as e:  # surface failures from the thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert seen[1][0] == 1 and seen[2][0] == 2
    assert seen[1][2] == 0 and seen[2][2] == 0
    assert state.value == 0  # the main thread never saw either override


def test_trace_context_is_per_thread():
    barrier = threading.Barrier(2, timeout=10)
    contexts: dict[bool, tuple] = {}

    def worker(x64):
        with cfg.enable_x64(x64):
            barrier.wait()
            contexts[x64] = cfg.trace_context()
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(v,)) for v in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    index = cfg.trace_context_names().index("jax_enable_x64")
    assert contexts[True][index] is True
    assert contexts[False][index] is False


def test_global_update_is_seen_by_other_threads(restore_global):
    state = cfg.define_string_state(fresh_name(), "a", "help", include_in_trace_context=True)
    index = cfg.trace_context_names().index(state.name)
    results = []
    ready, updated = threading.Event(), threading.Event()

    def reader():
        results.append(cfg.trace_context()[index])  # fills this thread's cache
        ready.set()
        updated.wait(10)
        results.append((state.value, cfg.trace_context()[index]))

    t = threading.Thread(target=reader)
    t.start()
    ready.wait(10)
    config.update(state.name, "b")
    updated.set()
    t.join()
    assert results == ["a", ("b", "b")]


# ------------------------------------------------------------------------ trace context


def test_trace_context_is_hashable_and_cached():
    ctx = cfg.trace_context()
    hash(ctx)
    assert cfg.trace_context() is ctx
    assert len(ctx) == len(cfg.trace_context_names())


def test_trace_context_lists_jax_options():
    names = cfg.trace_context_names()
    for name in (
        "jax_enable_x64",
        "jax_default_matmul_precision",
        "jax_numpy_rank_promotion",
        "jax_numpy_dtype_promotion",
        "jax_debug_nans",
        "jax_default_device",
    ):
        assert name in names
    assert "jax_log_compiles" not in names
    assert list(names) == sorted(names)


def test_trace_context_follows_overrides():
    base = cfg.trace_context()
    index = cfg.trace_context_names().index("jax_numpy_rank_promotion")
    with cfg.numpy_rank_promotion("raise"):
        inner = cfg.trace_context()
        assert inner != base
        assert inner[index] == "raise"
        with cfg.numpy_rank_promotion("warn"):
            assert cfg.trace_context()[index] == "warn"
        assert cfg.trace_context() == inner
    assert cfg.trace_context() == base


def test_trace_context_ignores_other_options():
    base = cfg.trace_context()
    with cfg.log_compiles(True):
        assert cfg.trace_context() is base


def test_trace_context_follows_global_update(restore_global):
    base = cfg.trace_context()
    config.update("jax_debug_nans", not cfg.debug_nans.value)
    assert cfg.trace_context() != base


def test_new_traced_option_joins_trace_context():
    before = cfg.trace_context()
    state = cfg.define_int_state(fresh_name(), 7, "help", include_in_trace_context=True)
    after = cfg.trace_context()
    assert len(after) == len(before) + 1
    assert after[cfg.trace_context_names().index(state.name)] == 7


def _is_bool_state(state: cfg.State) -> bool:
    return isinstance(state.global_value, bool) and state._validate is cfg._validate_bool


@pytest.mark.parametrize("name", sorted(config.states))
def test_every_option_as_a_context_manager_without_argument(name):
    # JAX's rule: a boolean option called with no argument means True; the others
    # need the new value and say so.
    state = config.states[name]
    if _is_bool_state(state):
        with state():
            assert state.value is True
        with state(new_val=False):
            assert state.value is False
    else:
        short = name.removeprefix("jax_")
        with pytest.raises(TypeError, match=f"Context manager for {short} config option requires"):
            state()


def test_bool_options_include_jaxs_top_level_flags():
    bools = {n for n, s in config.states.items() if _is_bool_state(s)}
    assert {"jax_log_compiles", "jax_enable_x64", "jax_debug_nans", "jax_enable_checks"} <= bools


def test_set_hooks_mirror_global_and_thread_local_values():
    from polyjax_core.config import define_bool_state

    state = define_bool_state("polyjax_test_hooked_flag", False, "A test flag.")
    seen_global, seen_local = [], []
    state.set_hooks(seen_global.append, seen_local.append)
    assert seen_global == [False]  # the current global value, at once
    with state(True):
        assert seen_local == [True]
    assert seen_local == [True, None]  # leaving: no override remains
    config.update("polyjax_test_hooked_flag", True)
    assert seen_global == [False, True]
    config.update("polyjax_test_hooked_flag", False)
