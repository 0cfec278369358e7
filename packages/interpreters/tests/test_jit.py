"""jit: compiling, caching, static and donated arguments, placement, stages, threads."""

from __future__ import annotations

import gc
import logging
import threading
import weakref

import numpy as np
import pytest

from polyjax_core import config
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import backends, dispatch
from polyjax_interpreters.array import Array, device_put
from polyjax_interpreters.jit import clear_jit_caches, eval_shape, jit
from polyjax_interpreters.stages import Compiled, Lowered, Traced

f32 = np.float32


def arr(*shape, dtype=f32, start=0.0):
    return np.arange(start, start + int(np.prod(shape)), dtype=dtype).reshape(shape)


def test_jit_runs_and_returns_arrays(toy):
    f = jit(lambda x, y: toy.sin(toy.add(x, y)))
    x, y = arr(4), arr(4, start=1.0)
    out = f(x, y)
    assert type(out) is Array
    assert out.aval.shape == (4,) and out.aval.dtype == f32
    np.testing.assert_allclose(np.asarray(out), np.sin(x + y), rtol=1e-6)


def test_closing_over_non_contiguous_numpy_arrays(toy):
    # They become constants of the computation, copied to C order on the way.
    q = arr(4, 6)
    for c in (q[1, ::2], q[::-1, ::-2], np.asfortranarray(q)):
        out = jit(lambda x, c=c: toy.add(x, c))(np.ones(c.shape, f32))
        np.testing.assert_array_equal(np.asarray(out), c + 1)


def test_pytrees_and_keyword_arguments(toy):
    @jit
    def f(tree, *, scale):
        a, b = tree["a"], tree["b"]
        return {"sum": toy.add(a, b), "scaled": [toy.mul(a, scale)]}

    x = arr(3)
    out = f({"a": x, "b": x}, scale=np.full(3, 2.0, f32))
    assert set(out) == {"sum", "scaled"}
    np.testing.assert_array_equal(np.asarray(out["sum"]), 2 * x)
    np.testing.assert_array_equal(np.asarray(out["scaled"][0]), 2 * x)


def test_compiles_once_per_signature(toy):
    calls = []

    def f(x):
        calls.append(1)
        return toy.sin(x)

    g = jit(f)
    for _ in range(3):
        g(arr(3))
    assert len(calls) == 1 and g._cache_size() == 1
    g(arr(5))
    assert len(calls) == 2 and g._cache_size() == 2
    # a second jit of the same function reuses the trace
    jit(f)(arr(3))
    assert len(calls) == 2


def test_weak_types_flow_through(toy):
    f = jit(lambda x, y: toy.add(x, y))
    out = f(1.0, 2.0)
    assert out.aval.weak_type and out.aval.dtype == f32
    assert float(np.asarray(out)) == 3.0
    strong = f(f32(1.0), f32(2.0))
    assert not strong.aval.weak_type


def test_static_argnums_and_argnames(toy):
    calls = []

    def f(x, n, *, mode):
        calls.append((n, mode))
        y = x
        for _ in range(n):
            y = toy.add(y, x)
        return toy.sin(y) if mode == "sin" else y

    g = jit(f, static_argnums=1, static_argnames="mode")
    x = arr(3)
    np.testing.assert_allclose(np.asarray(g(x, 2, mode="id")), 3 * x)
    np.testing.assert_allclose(np.asarray(g(x, 2, mode="sin")), np.sin(3 * x), rtol=1e-6)
    g(x, 2, mode="sin")
    assert calls == [(2, "id"), (2, "sin")]
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        g(x, [2], mode="id")


def test_static_argnums_out_of_range():
    with pytest.raises(ValueError, match="static_argnums"):
        jit(lambda x: x, static_argnums=3)


def test_unused_arguments_are_pruned_unless_keep_unused(toy):
    def f(x, unused):
        return toy.sin(x)

    x = arr(3)
    text = jit(f).lower(x, x).as_text()
    assert text.count("tensor<3xf32>") >= 1
    main = next(line for line in text.splitlines() if "func.func public @main" in line)
    assert main.count("%arg") == 1
    main_kept = next(
        line
        for line in jit(f, keep_unused=True).lower(x, x).as_text().splitlines()
        if "func.func public @main" in line
    )
    assert main_kept.count("%arg") == 2
    np.testing.assert_allclose(np.asarray(jit(f)(x, x)), np.sin(x), rtol=1e-6)


def test_donated_argument_is_deleted_and_reuse_errors(toy):
    f = jit(lambda x, y: toy.add(x, y), donate_argnums=0)
    x = device_put(arr(4))
    y = device_put(arr(4))
    out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), 2 * arr(4))
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        f(x, y)
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_donate_argnames(toy):
    f = jit(lambda x, y: toy.add(x, y), donate_argnames="y")
    x, y = device_put(arr(2)), device_put(arr(2))
    f(x, y=y)
    assert y.is_deleted() and not x.is_deleted()


def test_static_and_donated_cannot_overlap():
    with pytest.raises(ValueError, match="cannot overlap"):
        jit(lambda x: x, static_argnums=0, donate_argnums=0)


def test_nested_jit_prints_and_lowers_once(toy):
    inner = jit(lambda x: toy.sin(x))

    def outer(x):
        return toy.add(inner(x), inner(x))

    jaxpr = make_jaxpr(outer)(arr(3))
    text = str(jaxpr)
    assert "jit[\n      name=<lambda>\n      jaxpr={ lambda ; " in text
    assert "donated_invars" not in text
    hlo = jit(outer).lower(arr(3)).as_text()
    # the sub-jaxpr is lowered once, as a private function called twice
    assert hlo.count("func.func private") == 1
    assert hlo.count("call @") == 2
    np.testing.assert_allclose(np.asarray(jit(outer)(arr(3))), 2 * np.sin(arr(3)), rtol=1e-6)


def test_inline_puts_the_equations_in_the_outer_jaxpr(toy):
    inner = jit(lambda x: toy.sin(x), inline=True)
    text = str(make_jaxpr(lambda x: inner(x))(arr(3)))
    assert "jit[" not in text and "sin" in text


def test_disable_jit_runs_op_by_op(toy):
    seen = []

    def f(x):
        seen.append(type(x))
        return toy.sin(x)

    g = jit(f)
    with config.disable_jit(True):
        out = g(arr(3))
    assert seen == [np.ndarray]  # called on the concrete value, not a tracer
    np.testing.assert_allclose(np.asarray(out), np.sin(arr(3)), rtol=1e-6)


def test_eval_shape_and_shape_dtype_struct_inputs(toy):
    def f(x, y):
        return {"s": toy.sum(toy.mul(x, y)), "x": x}

    spec = ShapeDtypeStruct((5,), f32)
    out = eval_shape(f, spec, spec)
    assert out["s"].shape == () and out["s"].dtype == f32
    assert out["x"].shape == (5,)
    lowered = jit(f).lower(spec, spec)
    assert "tensor<5xf32>" in lowered.as_text()


def test_aot_stages(toy):
    def f(x, y):
        return toy.sum(toy.mul(x, y))

    x = arr(6)
    traced = jit(f).trace(x, x)
    assert isinstance(traced, Traced)
    assert "reduce_sum" in str(traced.jaxpr)
    assert traced.out_info.shape == () and traced.out_info.dtype == f32
    lowered = traced.lower()
    assert isinstance(lowered, Lowered)
    text = lowered.as_text()
    assert "stablehlo.multiply" in text and "func.func public @main" in text
    assert "HloModule" in lowered.as_text("hlo")
    assert lowered.in_tree == jit(f).lower(x, x).in_tree
    assert str(lowered.out_tree) == "PyTreeDef(*)"
    args_info = lowered.args_info
    assert args_info[0][0].shape == (6,) and args_info[0][0].donated is False
    compiled = lowered.compile()
    assert isinstance(compiled, Compiled)
    assert "HloModule" in compiled.as_text()
    assert compiled.cost_analysis()["flops"] > 0
    assert compiled.memory_analysis().argument_size_in_bytes == 2 * 6 * 4
    assert compiled.runtime_executable().hlo_modules()[0].to_string() in compiled.as_text()
    assert float(np.asarray(compiled(x, x))) == float(np.sum(x * x))


def test_compiled_checks_arguments_like_jax(toy):
    compiled = jit(lambda x, y: toy.add(x, y)).lower(arr(3), arr(3)).compile()
    expected = r"(?s)Argument types differ.*'x' compiled with float32\[3\]"
    with pytest.raises(TypeError, match=expected):
        compiled(arr(4), arr(3))
    with pytest.raises(TypeError, match="pytree"):
        compiled((arr(3), arr(3)))


def test_aot_static_arguments_are_baked_in(toy):
    def f(x, n):
        return toy.mul(x, np.full(x.shape, n, f32))

    compiled = jit(f, static_argnums=1).lower(arr(3), 3).compile()
    np.testing.assert_array_equal(np.asarray(compiled(arr(3))), 3 * arr(3))


def test_same_function_from_eight_threads_compiles_once(toy):
    calls = []

    def f(x):
        calls.append(1)
        return toy.sin(x)

    g = jit(f)
    results = [None] * 8
    barrier = threading.Barrier(8)

    def work(i):
        barrier.wait()
        results[i] = np.asarray(g(arr(16, start=float(i))))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    for i, r in enumerate(results):
        np.testing.assert_allclose(r, np.sin(arr(16, start=float(i))), rtol=1e-6)


def test_different_functions_in_threads_do_not_interfere(toy):
    fns = [jit(lambda x, k=k: toy.mul(x, np.full(x.shape, k, f32))) for k in range(6)]
    results = {}

    def work(k):
        for _ in range(3):
            results[k] = np.asarray(fns[k](arr(5)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(6):
        np.testing.assert_array_equal(results[k], k * arr(5))


def test_dropping_a_jitted_function_frees_its_cache_entries(toy):
    def make():
        def f(x):
            return toy.sin(x)

        return f

    f = make()
    g = jit(f)
    g(arr(7))
    exe = weakref.ref(g._cache[next(iter(g._cache))].exe)
    f_ref, g_ref = weakref.ref(f), weakref.ref(g)
    del f, g
    gc.collect()
    assert f_ref() is None and g_ref() is None
    # Module caches drop dead owners' entries at their next use (see polyjax_core.caching).
    jit(lambda x: toy.add(x, x))(arr(1))
    gc.collect()
    assert exe() is None


def test_clear_caches(toy):
    g = jit(lambda x: toy.sin(x))
    g(arr(2))
    assert g._cache_size() == 1
    clear_jit_caches()
    assert g._cache_size() == 0
    np.testing.assert_allclose(np.asarray(g(arr(2))), np.sin(arr(2)), rtol=1e-6)


def test_explain_cache_misses(toy, caplog):
    g = jit(lambda x, y: toy.add(toy.sum(x), toy.sum(y)))
    g(arr(3), arr(3))
    with config.explain_cache_misses(True), caplog.at_level(logging.WARNING, "polyjax"):
        g(arr(4), arr(3, start=1.0))
    text = caplog.text
    assert "TRACING CACHE MISS" in text
    assert "at x: was float32[3] (a NumPy array), now float32[4]" in text


def test_explain_static_argument_miss(toy, caplog):
    g = jit(lambda x, n: toy.mul(x, np.full(x.shape, n, f32)), static_argnums=1)
    g(arr(3), 2)
    with config.explain_cache_misses(True), caplog.at_level(logging.WARNING, "polyjax"):
        g(arr(3), 3)
    assert "static argument 1: was 2, now 3" in caplog.text


def test_committed_inputs_choose_the_device(toy):
    dev = backends.local_devices()[0]
    x = device_put(arr(3), dev)
    out = jit(lambda x: toy.sin(x))(x)
    assert out._committed
    out2 = jit(lambda x: toy.sin(x))(arr(3))
    assert not out2._committed


def test_device_argument_commits(toy):
    dev = backends.local_devices()[0]
    out = jit(lambda x: toy.sin(x), device=dev)(arr(3))
    assert out._committed and out.sharding.device_set == {dev}


def test_device_and_backend_conflict():
    with pytest.raises(ValueError, match="both a device and a backend"):
        jit(lambda x: x, device=backends.local_devices()[0], backend="cpu")


def test_eager_primitive_executable_is_cached(toy):
    dispatch.clear_eager_cache()
    x = arr(5)
    a = toy.sin(x)
    n = len(dispatch._eager_cache)
    b = toy.sin(x)
    assert len(dispatch._eager_cache) == n == 1
    np.testing.assert_allclose(np.asarray(b), np.sin(x), rtol=1e-6)
    assert type(a) is Array
    toy.sin(arr(6))
    assert len(dispatch._eager_cache) == 2


def test_jit_method_binding(toy):
    class M:
        def __init__(self):
            self.w = arr(3)

        @jit
        def apply(self, x):
            return toy.mul(self.w, x)

    # `self` becomes an argument, and it is not an array: JAX rejects it the same way.
    with pytest.raises(TypeError, match="not a valid JAX type"):
        M().apply(arr(3))


def test_call_cache_is_lru(toy):
    g = jit(lambda x: toy.sin(x))._jit  # the Python object: its cache (C++'s: test_jit_cpp)
    g._max_entries, g._lru_from = 2, 1
    a, b, c = (device_put(arr(n)) for n in (1, 2, 3))
    g(a)
    g(b)
    g(a)  # a is now the most recently used
    g(c)  # so b is evicted
    # a key ends with (aval, sharding, committed) per argument
    assert [key[-1][0].shape for key in g._cache] == [(1,), (3,)]


def test_single_device_shardings_place_the_computation(toy):
    from polyjax_interpreters.sharding import SingleDeviceSharding

    dev = backends.local_devices()[0]
    s = SingleDeviceSharding(dev)
    f = jit(lambda x: toy.sin(x), in_shardings=s, out_shardings=s)
    out = f(arr(3))
    assert out._committed and out.sharding == s
    np.testing.assert_allclose(np.asarray(out), np.sin(arr(3)), rtol=1e-6)


def test_backend_argument(toy):
    out = jit(lambda x: toy.sin(x), backend="cpu")(arr(3))
    assert out.sharding.device_set == {backends.local_devices()[0]}
    with pytest.raises(RuntimeError, match="cpu"):
        jit(lambda x: toy.sin(x), backend="tpu")(arr(3))


_TWO_DEVICES = """
import numpy as np, sys
sys.path.insert(0, {tests!r})
from conftest import TOY as toy
from polyjax_core.config import config
config.update("jax_num_cpu_devices", 2)
from polyjax_interpreters import backends
from polyjax_interpreters.array import device_put
from polyjax_interpreters.jit import jit
d0, d1 = backends.local_devices()
f = jit(lambda x, y: toy.add(x, y))
x = np.arange(3, dtype=np.float32)
out = f(device_put(x, d1), x)
assert out.sharding.device_set == {{d1}} and out._committed, out.sharding
# an uncommitted array on d1 moves to where the committed one is
moved = f(device_put(x, d0), out.__class__._make(out._impl, out.aval, False))
assert moved.sharding.device_set == {{d0}}
np.testing.assert_array_equal(np.asarray(moved), 3 * x)
try:
    f(device_put(x, d0), device_put(x, d1))
except ValueError as e:
    assert "incompatible devices" in str(e) and "argument y" in str(e), e
else:
    raise AssertionError("expected a ValueError")
eager = toy.sin(device_put(x, d1))
assert eager.sharding.device_set == {{d1}}
print("ok")
"""


def test_placement_over_two_devices():
    import os
    import subprocess
    import sys

    tests = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run(
        [sys.executable, "-c", _TWO_DEVICES.format(tests=tests)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
