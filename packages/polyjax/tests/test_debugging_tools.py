"""named_scope / named_call / ensure_compile_time_eval, the profiler, live_arrays,
print_environment_info, typeof and jax_log_compiles."""

import glob
import gzip
import logging
import os

import numpy as np
import pytest

import polyjax
import polyjax.numpy as jnp
from polyjax_core.tracing import Tracer


def _scoped(x):
    with polyjax.named_scope("outer"):
        y = jnp.sin(x)
        with polyjax.named_scope("inner"):
            return y * 2


def test_named_scope_names_the_ops_in_the_stablehlo_locations():
    text = polyjax.jit(_scoped).lower(1.0).as_text(debug_info=True)
    # As JAX's: the jitted function's name, then the scopes, then the primitive.
    assert 'loc("jit(_scoped)/outer/sin"' in text
    assert 'loc("jit(_scoped)/outer/inner/mul"' in text
    # A nested jit adds its name after the scopes of its call site, as in JAX.
    inner = polyjax.jit(jnp.cos)

    def nested(x):
        with polyjax.named_scope("s"):
            return inner(x) * 2

    text = polyjax.jit(nested).lower(1.0).as_text(debug_info=True)
    assert 'loc("jit(nested)/s/jit(cos)/cos"' in text and 'loc("jit(nested)/s/mul"' in text
    eqns = polyjax.make_jaxpr(_scoped)(1.0).jaxpr.eqns
    assert [e.source_info.name_stack for e in eqns] == [("outer",), ("outer", "inner")]
    assert float(polyjax.jit(_scoped)(1.0)) == pytest.approx(2 * np.sin(1.0))
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        polyjax.named_scope(3)


def test_named_call_uses_the_function_name_or_the_given_one():
    def my_fn(x):
        return jnp.cos(x)

    for name, fun in [
        ("my_fn", polyjax.named_call(my_fn)),
        ("g", polyjax.named_call(my_fn, name="g")),
    ]:
        text = polyjax.jit(lambda x, fun=fun: fun(x) + 1).lower(1.0).as_text(debug_info=True)
        assert f'loc("jit(<lambda>)/{name}/cos"' in text and 'loc("jit(<lambda>)/add"' in text
        assert float(fun(0.0)) == 1.0
    # The operations keep the user's line, not the wrapper's.
    (eqn,) = polyjax.make_jaxpr(polyjax.named_call(my_fn))(1.0).jaxpr.eqns
    assert eqn.source_info.frame.function_name == "my_fn"
    assert eqn.source_info.name_stack == ("my_fn",)


def test_ensure_compile_time_eval_computes_constants_while_tracing():
    seen = []

    @polyjax.jit
    def f(x):
        with polyjax.ensure_compile_time_eval():
            y = jnp.sin(2.0)
            seen.append(y)
            z = x + y  # a traced argument stays traced
        assert isinstance(z, Tracer)
        return z

    assert float(f(1.0)) == pytest.approx(1.0 + np.sin(2.0), rel=1e-6)
    assert not isinstance(seen[0], Tracer)
    assert float(seen[0]) == pytest.approx(np.sin(2.0), rel=1e-6)


def test_profiler_trace_names_the_jitted_function(tmp_path):
    @polyjax.jit
    def my_profiled_function(x):
        return jnp.sin(x) * 2

    x = jnp.ones(3)
    with polyjax.profiler.trace(str(tmp_path), create_perfetto_trace=True):
        with polyjax.profiler.StepTraceAnnotation("train", step_num=1):
            with polyjax.profiler.TraceAnnotation("my_annotation"):
                my_profiled_function(x).block_until_ready()
    (xplane,) = glob.glob(os.path.join(tmp_path, "plugins", "profile", "*", "*.xplane.pb"))
    data = open(xplane, "rb").read()
    assert b"my_profiled_function" in data and b"my_annotation" in data
    (perfetto,) = glob.glob(os.path.join(os.path.dirname(xplane), "perfetto_trace.json.gz"))
    assert b"my_profiled_function" in gzip.open(perfetto).read()
    with pytest.raises(RuntimeError, match="No profile started"):
        polyjax.profiler.stop_trace()


def test_annotate_function_and_memory_profile(tmp_path):
    @polyjax.profiler.annotate_function
    def add_one(x):
        return x + 1

    assert add_one(1) == 2 and add_one.__name__ == "add_one"
    keep = jnp.ones(100)
    path = tmp_path / "memory.prof"
    polyjax.profiler.save_device_memory_profile(str(path))
    data = path.read_bytes()
    assert b"space" in data and b"bytes" in data
    del keep


def test_live_arrays_lists_arrays_until_deleted():
    x = jnp.arange(3.0)
    y = polyjax.jit(lambda a: a + 1)(x)
    live = polyjax.live_arrays()
    assert any(a is x for a in live) and any(a is y for a in live)
    assert not any(a is x for a in polyjax.live_arrays("no_such_platform"))
    y.delete()
    assert not any(a is y for a in polyjax.live_arrays())


def test_print_environment_info(capsys):
    text = polyjax.print_environment_info(return_string=True)
    assert text.startswith("polyjax:") and "jaxlib:" in text and "process_count: 1" in text
    assert polyjax.print_environment_info() is None
    assert capsys.readouterr().out.strip() == text.strip()


def test_typeof_shows_weak_types():
    assert str(polyjax.typeof(1.0)) == "~float32[]"
    assert str(polyjax.typeof(jnp.float32(1))) == "float32[]"
    assert str(polyjax.typeof(jnp.ones(3))) == "float32[3]"


def test_log_compiles_names_the_function_and_the_reason(caplog):
    @polyjax.jit
    def logged_fn(x):
        return x * 2

    with polyjax.log_compiles(True), caplog.at_level(logging.WARNING, logger="polyjax"):
        logged_fn(1.0)
        logged_fn(jnp.ones(3))
        logged_fn(jnp.ones(3))  # cached: no compile
    messages = [r.getMessage() for r in caplog.records]
    compiles = [m for m in messages if m.startswith("Compiling jit(logged_fn)")]
    assert len(compiles) == 2
    assert compiles[0].startswith(
        "Compiling jit(logged_fn) with global shapes and types (float32[])"
    )
    assert compiles[0].endswith("Reason: the first call")
    assert "(float32[3]). Reason: 1 difference(s)" in compiles[1]
    assert "at x: was Python float (weakly typed), now float32[3]" in compiles[1]
    # An eager operation's first call with new types compiles too.
    caplog.clear()
    with polyjax.log_compiles(True), caplog.at_level(logging.WARNING, logger="polyjax"):
        jnp.sin(jnp.ones((2, 7), jnp.float16))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling")]
    assert "Compiling jit(sin) with global shapes and types (float16[2,7]). Reason: " in lines[-1]


def _makes_nan(x):
    y = x * 2
    z = jnp.log(y - 10)  # the line named
    return z + 1


NAN_LINE = _makes_nan.__code__.co_firstlineno + 2


@pytest.mark.parametrize("jit", [False, True])
def test_debug_nans_names_the_primitive_and_the_line(jit, capsys):
    f = polyjax.jit(_makes_nan) if jit else _makes_nan
    with polyjax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
            f(jnp.float32(1.0))
        try:
            f(jnp.float32(1.0))
        except FloatingPointError as e:
            assert any(f"test_debugging_tools.py:{NAN_LINE}" in n for n in e.__notes__)
        np.testing.assert_allclose(f(jnp.float32(10.0)), np.log(10.0) + 1, rtol=1e-6)
    assert ("de-optimized" in capsys.readouterr().out) == jit
    assert np.isnan(f(jnp.float32(1.0)))  # off again: no check


def test_debug_infs():
    with polyjax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in exp"):
            polyjax.jit(jnp.exp)(jnp.float32(1000.0))
    assert np.isinf(polyjax.jit(jnp.exp)(jnp.float32(1000.0)))


# JAX 0.10.2's public names of these modules (from the reference installation).
JAX_PROFILER_NAMES = (
    "ProfileData ProfileEvent ProfileOptions ProfilePlane StepTraceAnnotation TraceAnnotation "
    "annotate_function device_memory_profile register_subprocess save_device_memory_profile "
    "start_server start_trace stop_server stop_trace trace"
)
JAX_CHECKIFY_NAMES = (
    "Error ErrorCategory JaxRuntimeError all_checks automatic_checks check check_error checkify "
    "debug_check div_checks float_checks index_checks init_error nan_checks user_checks"
)


def test_public_names_are_jaxs():
    from polyjax.experimental import checkify

    assert sorted(polyjax.profiler.__all__) == JAX_PROFILER_NAMES.split()
    assert sorted(checkify.__all__) == JAX_CHECKIFY_NAMES.split()
    for name in "named_scope named_call ensure_compile_time_eval live_arrays".split():
        assert name in polyjax.__all__ and callable(getattr(polyjax, name))


def test_profiler_server_starts_once_and_stops():
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    polyjax.profiler.start_server(port)
    try:
        with pytest.raises(ValueError, match="Only one profiler server"):
            polyjax.profiler.start_server(port)
    finally:
        polyjax.profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        polyjax.profiler.stop_server()
