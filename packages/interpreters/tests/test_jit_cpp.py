"""jit's C++ fast path: when calls take it, when they fall back to Python, and that
everything still comes out right (see `polyjax_interpreters._cpp_jit`)."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

from polyjax_core import config
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import backends
from polyjax_interpreters.array import Array, device_put
from polyjax_interpreters.jit import JitWrapped, clear_jit_caches, jit

f32 = np.float32


def counted(jitted):
    """Counts the calls that reach Python (C++ cache misses) of a jitted function."""
    inner = jitted._jit
    misses = []
    original = inner._cpp_miss

    def miss(*args, **kwargs):
        misses.append(1)
        return original(*args, **kwargs)

    inner._cpp_miss = miss
    return misses


def cpp_entries(jitted) -> int:
    return type(jitted)._cache_size(jitted)


def test_a_seen_signature_never_enters_python(toy):
    f = jit(lambda x, y: toy.add(toy.sin(x), y))
    misses = counted(f)
    x, y = device_put(np.arange(3, dtype=f32)), device_put(np.ones(3, f32))
    for _ in range(5):
        out = f(x, y)
    assert len(misses) == 1 and cpp_entries(f) == 1
    assert type(out) is Array and not out.committed
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(3)) + 1, rtol=1e-6)
    f(device_put(np.ones(4, f32)), device_put(np.ones(4, f32)))  # a new shape: a miss
    assert len(misses) == 2


def test_pytrees_kwargs_and_static_arguments_take_it(toy):
    def g(tree, scale, *, shift):
        return {k: toy.add(toy.mul(v, scale), shift) for k, v in tree.items()}

    f = jit(g, static_argnames="scale")
    misses = counted(f)
    tree = {"a": device_put(np.ones(2, f32)), "b": device_put(np.arange(2, dtype=f32))}
    shift = device_put(np.full(2, 3, f32))
    for _ in range(3):
        out = f(tree, scale=2.0, shift=shift)
    assert len(misses) == 1
    np.testing.assert_allclose(np.asarray(out["b"]), np.arange(2) * 2 + 3)
    out = f(tree, scale=5.0, shift=shift)  # another static value: a miss, another result
    np.testing.assert_allclose(np.asarray(out["a"]), [8, 8])
    assert len(misses) == 2


def test_a_traced_call_never_takes_it(toy):
    f = jit(lambda x: toy.sin(x))
    x = device_put(np.arange(3, dtype=f32))
    f(x)
    f(x)
    misses = counted(f)
    # The same concrete argument, but under a trace: a jit equation, not a value.
    jaxpr = make_jaxpr(lambda: f(x))()
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["jit"]
    assert len(misses) == 1
    make_jaxpr(lambda: f(x))()
    assert len(misses) == 2  # every traced call reaches Python
    f(x)
    assert len(misses) == 2  # and outside the trace the fast path is back


def test_config_changes_are_part_of_the_key(toy):
    f = jit(lambda x: toy.add(x, x))
    misses = counted(f)
    x = device_put(np.arange(2, dtype=f32))
    f(x)
    f(x)
    assert len(misses) == 1
    with config.enable_x64(not config.enable_x64.value):
        f(x)
        assert len(misses) == 2
    f(x)
    assert len(misses) == 2

    # another thread's override is its own
    seen = []

    def other():
        with config.enable_x64(not config.enable_x64.value):
            f(x)
        seen.append(len(misses))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [2]  # that signature was already seen (above)
    f(x)
    assert len(misses) == 2


@pytest.mark.parametrize("option", ["jax_debug_nans", "jax_disable_jit"])
def test_calls_under_checks_or_disable_jit_always_reach_python(toy, option):
    calls = []

    def body(x):
        calls.append(1)
        return toy.sin(x)

    f = jit(body)
    misses = counted(f)
    x = device_put(np.arange(2, dtype=f32))
    with getattr(config, option.removeprefix("jax_"))(True):
        for _ in range(3):
            np.testing.assert_allclose(np.asarray(f(x)), np.sin(np.arange(2)), rtol=1e-6)
    assert len(misses) == 3
    if option == "jax_disable_jit":
        assert len(calls) == 3  # ran as Python each time


def test_outputs_keep_weak_types_and_commitment(toy):
    f = jit(lambda x: toy.mul(x, x))
    weak = device_put(f32(3.0))
    weak = Array._make(weak._impl, weak.aval.update(weak_type=True), False)
    dev = backends.local_devices()[0]
    committed = device_put(np.ones(2, f32), dev)
    for _ in range(3):
        a, b = f(weak), f(committed)
    assert a.weak_type and not a.committed and float(a) == 9.0
    assert b.committed and not b.weak_type


def test_fast_path_outputs_equal_the_first_calls(toy):
    # The C++ path rebuilds outputs from what the first (Python) call produced:
    # same type, commitment and sharding object, and commitment on the buffer too.
    f = jit(lambda x: (toy.mul(x, x), x))
    dev = backends.local_devices()[0]
    for x in (device_put(np.ones(2, f32)), device_put(np.ones(2, f32), dev)):
        first = f(x)
        misses = counted(f)
        for again in (f(x), f(x)):
            for a, b in zip(first, again):
                assert a.aval == b.aval and a.committed is b.committed
                assert b._impl._committed is b.committed
                assert a.sharding is b.sharding
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        assert not misses


def test_donation_keeps_to_the_python_object(toy):
    f = jit(lambda x: toy.add(x, x), donate_argnums=0)
    assert type(f) is JitWrapped
    x = device_put(np.ones(2, f32))
    np.testing.assert_allclose(np.asarray(f(x)), [2, 2])
    assert x.is_deleted()


def test_clearing_and_bounding_the_cpp_cache(toy):
    f = jit(lambda x: toy.neg(x))
    for n in (1, 2, 3):
        f(device_put(np.ones(n, f32)))
    assert cpp_entries(f) == 3
    clear_jit_caches()
    assert cpp_entries(f) == 0
    bounded = JitWrapped(
        lambda x: toy.neg(x),
        static_argnums=(),
        static_argnames=(),
        donate_argnums=(),
        donate_argnames=(),
        keep_unused=False,
        in_shardings=None,
        out_shardings=None,
        device=None,
        backend=None,
        inline=False,
        cache_size=2,
    ).as_function()
    for n in (1, 2, 3):
        bounded(device_put(np.ones(n, f32)))
    assert cpp_entries(bounded) == 2


def test_the_function_is_held_weakly(toy):
    def make():
        def body(x):
            return toy.sin(x)

        return body

    body = make()
    ref = weakref.ref(body)
    f = jit(body)
    f(device_put(np.ones(2, f32)))
    f(device_put(np.ones(2, f32)))
    del f, body
    gc.collect()
    assert ref() is None


def test_threads_share_the_fast_path(toy):
    f = jit(lambda x: toy.add(x, x))
    xs = [device_put(np.full(3, i, f32)) for i in range(4)]
    f(xs[0])
    errors = []

    def work(i):
        for _ in range(50):
            if not np.array_equal(np.asarray(f(xs[i])), np.full(3, 2 * i, f32)):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
