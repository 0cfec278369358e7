"""Host callbacks through the facade: pure_callback, io_callback, debug.callback/print.

Each runs eagerly and under jit, vmap, grad and the loops; values are checked
against NumPy, printed output is captured, ordered callbacks are checked to
keep program order, and failing callbacks raise in the caller.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import polyjax as jax
import polyjax.numpy as jnp
from polyjax.errors import JaxRuntimeError
from polyjax.experimental import io_callback

f32 = np.float32
S = jax.ShapeDtypeStruct


def _jit_or_not(request_param, f):
    return jax.jit(f) if request_param else f


both = pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])


# ---------------------------------------------------------------------------
# pure_callback


@both
def test_pure_callback_values_match_numpy(use_jit):
    x = np.linspace(-1, 1, 5, dtype=f32)
    f = _jit_or_not(use_jit, lambda x: jax.pure_callback(np.sin, S(x.shape, x.dtype), x) * 2)
    np.testing.assert_allclose(f(x), np.sin(x) * 2, rtol=1e-6)


def test_pure_callback_pytrees_of_args_kwargs_and_results():
    def cb(pair, *, scale):
        a, b = pair
        return {"sum": a + b, "prod": (a * b * scale).astype(np.int32)}

    shapes = {"sum": S((2,), np.float32), "prod": S((2,), np.int32)}
    a, b = np.array([1.0, 2.0], f32), np.array([3.0, 4.0], f32)
    out = jax.jit(lambda a, b: jax.pure_callback(cb, shapes, (a, b), scale=f32(2)))(a, b)
    np.testing.assert_array_equal(out["sum"], [4.0, 6.0])
    np.testing.assert_array_equal(out["prod"], [6, 16])
    assert out["prod"].dtype == np.int32


def test_pure_callback_is_dropped_when_unused_but_io_callback_is_not():
    calls = []

    def cb(x):
        calls.append(1)
        return x

    s = S((), np.float32)
    jax.jit(lambda x: (jax.pure_callback(cb, s, x), x)[1])(f32(1))
    assert calls == []
    jax.jit(lambda x: (io_callback(cb, s, x), x)[1])(f32(1))
    assert calls == [1]


@pytest.mark.parametrize(
    "method, seen_shapes",
    [
        ("sequential", [((), ()), ((), ()), ((), ())]),
        ("sequential_unrolled", [((), ()), ((), ()), ((), ())]),
        ("expand_dims", [((3,), (1,))]),
        ("broadcast_all", [((3,), (3,))]),
    ],
)
def test_pure_callback_vmap_methods(method, seen_shapes):
    seen = []

    def cb(x, y):
        seen.append((x.shape, y.shape))
        return x * y

    f = jax.vmap(
        lambda x, y: jax.pure_callback(cb, S((), np.float32), x, y, vmap_method=method),
        in_axes=(0, None),
    )
    np.testing.assert_array_equal(f(np.arange(3, dtype=f32), f32(2)), [0.0, 2.0, 4.0])
    assert seen == seen_shapes


def test_pure_callback_vmap_without_a_method_raises():
    f = jax.vmap(lambda x: jax.pure_callback(np.sin, S((), np.float32), x))
    with pytest.raises(NotImplementedError, match="vmap_method=None"):
        f(np.ones(3, f32))


def test_pure_callback_unknown_vmap_method_raises():
    with pytest.raises(ValueError, match="vmap_method must be .* but got: foo"):
        jax.pure_callback(np.sin, S((), np.float32), f32(1), vmap_method="foo")


def test_pure_callback_bad_result_shape_dtypes_names_the_leaf():
    with pytest.raises(TypeError, match="result_shape_dtypes.*leaf 3"):
        jax.pure_callback(lambda: 1, 3)


def test_pure_callback_grad_needs_a_custom_jvp():
    s = S((), np.float32)
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(lambda x: jax.pure_callback(np.sin, s, x))(f32(1))

    @jax.custom_jvp
    def sin(x):
        return jax.pure_callback(np.sin, s, x)

    @sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return sin(x), jax.pure_callback(np.cos, s, x) * t

    for x in (0.3, -1.2):
        np.testing.assert_allclose(jax.jit(jax.grad(sin))(f32(x)), np.cos(f32(x)), rtol=1e-6)


@both
@pytest.mark.parametrize(
    "result, message",
    [
        (
            np.ones(4, f32),
            r"Incorrect output shape for return value #0: Expected: \(3,\), Actual: \(4,\)",
        ),
        (
            np.ones(3, np.int32),
            "Incorrect output dtype for return value #0: Expected: float32, Actual: int32",
        ),
        (
            (np.ones(3, f32), np.ones(3, f32)),
            "Mismatched number of outputs from callback. Expected: 1, Actual: 2",
        ),
    ],
    ids=["shape", "dtype", "count"],
)
def test_wrong_results_raise_naming_expected_and_actual(use_jit, result, message):
    f = _jit_or_not(use_jit, lambda x: jax.pure_callback(lambda _: result, S((3,), np.float32), x))
    with pytest.raises(JaxRuntimeError, match=message) as info:
        f(np.ones(3, f32))
    assert isinstance(info.value.__cause__, RuntimeError)


def test_a_python_float_result_is_accepted_for_float32():
    out = jax.jit(lambda x: jax.pure_callback(lambda _: 2.5, S((), np.float32), x))(f32(0))
    assert out.dtype == np.float32 and float(out) == 2.5


@both
def test_a_raising_callback_surfaces_in_the_caller_with_its_traceback(use_jit):
    def exploding_callback(x):
        raise ZeroDivisionError("no luck")

    f = _jit_or_not(use_jit, lambda x: jax.pure_callback(exploding_callback, S((), np.float32), x))
    with pytest.raises(JaxRuntimeError, match="exploding_callback") as info:
        f(f32(1))
    cause = info.value.__cause__
    assert isinstance(cause, ZeroDivisionError) and str(cause) == "no luck"
    assert cause.__traceback__ is not None
    # Nothing is left broken: the next call runs.
    good = _jit_or_not(use_jit, lambda x: jax.pure_callback(np.negative, S((), np.float32), x))
    assert float(good(f32(2))) == -2.0


# ---------------------------------------------------------------------------
# io_callback and ordering


def _logger(log):
    def record(x):
        log.append(np.asarray(x).item())
        return x

    return record


@pytest.mark.parametrize("reverse", [False, True])
def test_ordered_io_callbacks_keep_their_order_across_a_scan(reverse):
    log = []
    rec = _logger(log)
    s = S((), np.int32)

    def step(c, x):
        io_callback(rec, s, x, ordered=True)
        io_callback(rec, s, -x, ordered=True)
        return c + x, x

    xs = np.arange(1, 5, dtype=np.int32)
    carry, _ = jax.jit(lambda xs: jax.lax.scan(step, 0, xs, reverse=reverse))(xs)
    order = xs[::-1] if reverse else xs
    assert log == [v for x in order for v in (int(x), -int(x))]
    assert int(carry) == 10


def test_ordered_callbacks_through_while_cond_nested_jit_and_checkpoint():
    log = []
    rec = _logger(log)

    def io(x):
        return io_callback(rec, S((), np.int32), x, ordered=True)

    def f(n):
        io(jnp.int32(-1))
        n = jax.lax.while_loop(lambda i: i < 3, lambda i: (io(i), i + 1)[1], n)
        jax.lax.cond(n > 2, lambda: io(jnp.int32(100)), lambda: io(jnp.int32(200)))
        jax.jit(lambda v: io(v * 10))(n)
        jax.checkpoint(lambda v: io(v + 1000))(n)
        return n

    assert int(jax.jit(f)(np.int32(0))) == 3
    assert log == [-1, 0, 1, 2, 100, 30, 1003]
    text = jax.jit(f).lower(np.int32(0)).as_text()
    assert "!stablehlo.token" in text and "xla_ffi_python_cpu_callback" in text


def test_ordered_effects_are_recorded_on_equations_and_jaxprs():
    from polyjax_core import effects as core_effects
    from polyjax_core.dce import dce_jaxpr

    s = S((), np.float32)
    closed = jax.make_jaxpr(lambda x: (io_callback(lambda v: v, s, x, ordered=True), x)[1])(f32(1))
    assert closed.jaxpr.effects == {core_effects.ordered_io_effect}
    assert core_effects.ordered_effects.filter_in(closed.jaxpr.eqns[0].effects)
    pruned, _ = dce_jaxpr(closed.jaxpr, [True])
    assert len(pruned.eqns) == 1  # unused result, but the effect keeps it
    pure = jax.make_jaxpr(lambda x: jax.pure_callback(lambda v: v, s, x))(f32(1))
    assert pure.jaxpr.effects == frozenset()
    unordered = jax.make_jaxpr(lambda x: jax.debug.print("{}", x))(f32(1))
    assert not core_effects.ordered_effects.filter_in(unordered.jaxpr.effects)
    assert "token" not in jax.jit(lambda x: jax.debug.print("{}", x)).lower(f32(1)).as_text()


def test_unordered_io_callback_under_vmap_runs_once_per_example():
    log = []
    out = jax.vmap(lambda x: io_callback(_logger(log), S((), np.float32), x * 2))(
        np.arange(3, dtype=f32)
    )
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    assert log == [0.0, 2.0, 4.0]


def test_transformation_rules_on_io_callbacks():
    s = S((), np.float32)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(lambda x: io_callback(lambda v: v, s, x, ordered=True))(np.ones(2, f32))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(lambda x: io_callback(lambda v: v, s, x))(f32(1))

    def loop(x):
        body = lambda c: (io_callback(lambda v: None, None, c, ordered=True), c + 1)[1]  # noqa: E731
        return jax.lax.while_loop(lambda c: c < 3, body, x)

    with pytest.raises(Exception, match="Ordered IO effects not supported in vmap"):
        jax.vmap(loop)(np.arange(3, dtype=f32))


def test_effects_barrier_after_callbacks():
    log = []
    jax.jit(lambda x: io_callback(lambda v: log.append(float(v)), None, x))(f32(3))
    assert jax.effects_barrier() is None
    assert log == [3.0]


def test_executables_with_callbacks_are_flagged_for_fast_paths():
    ordered = jax.jit(lambda x: jax.debug.print("{}", x, ordered=True)).lower(f32(1)).compile()
    unordered = jax.jit(lambda x: jax.debug.print("{}", x)).lower(f32(1)).compile()
    plain = jax.jit(lambda x: x + 1).lower(f32(1)).compile()
    assert ordered._exe.ordered_effects and ordered._exe.has_host_callbacks
    assert not unordered._exe.ordered_effects and unordered._exe.has_host_callbacks
    assert not plain._exe.ordered_effects and not plain._exe.has_host_callbacks


# ---------------------------------------------------------------------------
# debug.print and debug.callback


@both
def test_debug_print_formats_like_str_format(use_jit, capfd):
    def f(x, y):
        jax.debug.print("x={x} y={} y2={y2:.2f} d={d}", y, x=x, y2=y * 2, d={"a": x})
        return x

    _jit_or_not(use_jit, f)(np.arange(3, dtype=np.int32), f32(1.25))
    out = capfd.readouterr().out
    assert out == "x=[0 1 2] y=1.25 y2=2.50 d={'a': Array([0, 1, 2], dtype=int32)}\n"


def test_debug_print_under_vmap_grad_and_loops(capfd):
    jax.vmap(lambda x: jax.debug.print("v {}", x))(np.arange(3, dtype=f32))
    assert capfd.readouterr().out == "v 0.0\nv 1.0\nv 2.0\n"

    g = jax.grad(lambda x: (jax.debug.print("g {}", x), x * x)[1])(f32(3))
    assert float(g) == 6.0
    assert capfd.readouterr().out == "g 3.0\n"

    def body(c, x):
        jax.debug.print("s {} {}", c, x, ordered=True)
        return c + x, None

    jax.jit(lambda xs: jax.lax.scan(body, 0, xs))(np.arange(3, dtype=np.int32))
    assert capfd.readouterr().out == "s 0 0\ns 0 1\ns 1 2\n"


def test_debug_print_of_tangents_in_a_custom_jvp(capfd):
    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def _(primals, tangents):
        jax.debug.print("primal={} tangent={}", primals[0], tangents[0])
        return f(primals[0]), jnp.cos(primals[0]) * tangents[0]

    jax.jvp(f, (f32(1),), (f32(2),))
    assert capfd.readouterr().out == "primal=1.0 tangent=2.0\n"
    # Under grad the tangent is linear: it has no value to show (as in JAX).
    np.testing.assert_allclose(jax.grad(f)(f32(1)), np.cos(f32(1)), rtol=1e-6)


def test_debug_print_with_a_bad_format_fails_at_trace_time():
    with pytest.raises(IndexError):
        jax.jit(lambda x: jax.debug.print("{} {}", x))(f32(1))
    with pytest.raises(KeyError, match="x"):
        jax.debug.print("{x}", f32(1))


def test_debug_callback_sees_arrays_and_keeps_effects_under_dce():
    seen = []
    jax.jit(lambda x: (jax.debug.callback(lambda a, b: seen.append((a, b)), x, b=x + 1), x)[1])(
        f32(1)
    )
    ((a, b),) = seen
    assert isinstance(a, jax.Array) and float(a) == 1.0 and float(b) == 2.0


def test_debug_print_in_a_failing_callback_does_not_hang():
    with pytest.raises(JaxRuntimeError, match=re.escape("Replacement")):
        fmt = "{} {}"
        jax.jit(lambda x: jax.debug.callback(lambda v: fmt.format(v), x))(f32(1))


# ---------------------------------------------------------------------------
# debug.breakpoint


def test_breakpoint_without_a_terminal_is_skipped_with_a_warning(monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("c\n"))  # not a TTY
    with pytest.warns(UserWarning, match="breakpoint.*not a terminal"):
        out = jax.jit(lambda x: (jax.debug.breakpoint(), x + 1)[1])(f32(1))
    assert float(out) == 2.0


def test_breakpoint_prompt_shows_host_values(monkeypatch, capsys):
    import io

    outer_local = "from the caller"  # noqa: F841  (read at the prompt through `u`)

    def f(x):
        y = x * 2
        jax.debug.breakpoint(backend="cli", num_frames=2)
        return y

    commands = "p y\npp {'x': x}\nl\nnot_a_name\nu\np outer_local\nd\nq\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(commands))
    assert float(jax.jit(f)(f32(3))) == 6.0
    out = capsys.readouterr().out
    assert "(pjdb) Array(6., dtype=float32)" in out
    assert "{'x': Array(3., dtype=float32)}" in out
    assert "->         jax.debug.breakpoint(backend=" in out  # the source listing
    assert "*** NameError" in out
    assert "'from the caller'" in out
    assert "test_breakpoint_prompt_shows_host_values()" in out  # `u` names the frame


def test_exporting_a_callback_raises():
    from polyjax import export

    f = jax.jit(lambda x: jax.pure_callback(np.sin, S((), np.float32), x))
    with pytest.raises(NotImplementedError, match="serialization of host_callbacks"):
        export.export(f)(f32(1))


def test_eager_debug_callback_calls_directly_and_raises_as_is():
    def fail(x):
        raise KeyError("direct")

    with pytest.raises(KeyError, match="direct"):
        jax.debug.callback(fail, f32(1))


def test_eager_pure_callback_reuses_its_executable(monkeypatch):
    from polyjax_interpreters import dispatch

    compiles = []
    compile_primitive = dispatch._compile_primitive

    def counting(*args):
        compiles.append(args[0])
        return compile_primitive(*args)

    s = S((2,), np.float32)
    x = np.ones(2, f32)
    jax.pure_callback(np.cos, s, x)
    monkeypatch.setattr(dispatch, "_compile_primitive", counting)
    for _ in range(3):
        np.testing.assert_allclose(jax.pure_callback(np.cos, s, x), np.cos(x))
    assert compiles == []
