"""Tests for polyjax_core.caching: LRU order, weak keys, config sensitivity, threads."""

import gc
import threading
import weakref

import pytest

from polyjax_core import caching, config
from polyjax_core.wrapped_fun import wrap_init


def _counting(maxsize=4096):
    calls = []

    @caching.weakref_lru_cache(maxsize=maxsize)
    def f(obj, n, *, k=0):
        calls.append((n, k))
        return (id(obj), n, k)

    return f, calls


class Obj:
    pass


def test_hits_and_misses():
    f, calls = _counting()
    a = Obj()
    assert f(a, 1) == (id(a), 1, 0)
    assert f(a, 1) == (id(a), 1, 0)
    assert f(a, 2) == (id(a), 2, 0)
    assert f(a, 1, k=3) == (id(a), 1, 3)
    assert len(calls) == 3
    assert f.cache_info() == caching.CacheInfo(hits=1, misses=3, maxsize=4096, currsize=3)
    f.cache_clear()
    assert f.cache_info() == caching.CacheInfo(0, 0, 4096, 0)
    f(a, 1)
    assert len(calls) == 4


def test_first_argument_is_keyed_by_identity():
    @caching.weakref_lru_cache
    def f(obj):
        return object()

    a, b = [], []  # equal but distinct (and unweakrefable: lists go by identity)
    assert f(a) is f(a)
    assert f(a) is not f(b)
    # Hashable, unweakrefable first arguments go by value.
    assert f((1, 2)) is f((1, 2))
    assert f(10**30) is f(10**30 + 0)


def test_lru_eviction_order():
    f, calls = _counting(maxsize=2)
    a = Obj()
    f(a, 1)
    f(a, 2)
    f(a, 1)  # 1 is now most recent
    f(a, 3)  # evicts 2
    assert f.cache_info().currsize == 2
    n = len(calls)
    f(a, 1)
    f(a, 3)
    assert len(calls) == n  # both still cached
    f(a, 2)
    assert len(calls) == n + 1  # 2 was evicted
    with pytest.raises(ValueError):
        caching.weakref_lru_cache(lambda x: x, maxsize=0)


def test_entries_die_with_first_argument():
    f, _ = _counting()
    a = Obj()
    f(a, 1)
    f(a, 2)
    keep = Obj()
    f(keep, 1)
    ref = weakref.ref(a)
    assert f.cache_info().currsize == 3
    del a
    gc.collect()
    assert ref() is None  # the cache did not keep it alive
    assert f.cache_info().currsize == 1
    # A new object that may reuse the dead one's id misses.
    b = Obj()
    f(b, 1)
    assert f.cache_info().misses == 4


def test_cyclic_garbage_first_argument():
    f, _ = _counting()

    class Node:
        pass

    n = Node()
    n.self = n
    f(n, 1)
    ref = weakref.ref(n)
    del n
    gc.collect()
    assert ref() is None
    assert f.cache_info().currsize == 0


def test_config_override_gives_a_different_entry():
    f, calls = _counting()
    a = Obj()
    f(a, 1)
    with config.enable_x64(not config.enable_x64.value):
        f(a, 1)
        f(a, 1)
    f(a, 1)
    assert len(calls) == 2
    assert f.cache_info().hits == 2


def test_unhashable_arguments_raise_a_clear_error():
    f, _ = _counting()
    with pytest.raises(TypeError, match="must be hashable"):
        f(Obj(), [1])


def test_recursion_into_the_same_cache_does_not_deadlock():
    @caching.weakref_lru_cache
    def depth(obj, n):
        return 0 if n == 0 else 1 + depth(obj, n - 1)

    assert depth(Obj(), 5) == 5


def test_threads():
    calls = []
    lock = threading.Lock()

    @caching.weakref_lru_cache(maxsize=16)
    def f(obj, n):
        with lock:
            calls.append(n)
        return (obj, n)

    objs = [Obj() for _ in range(4)]
    results = []
    errors = []

    def work(i):
        try:
            for j in range(500):
                o = objs[(i + j) % 4]
                r = f(o, j % 3)
                assert r == (o, j % 3)
                results.append(r)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    info = f.cache_info()
    assert info.hits + info.misses == 8 * 500
    assert info.currsize == 12
    assert len(calls) == info.misses
    # Every (obj, n) pair fits, so each was computed about once: concurrent
    # first misses may compute twice, but never 100s of times.
    assert info.misses < 12 * 8


def test_thread_local_config_is_per_thread():
    f, calls = _counting()
    a = Obj()
    seen = []
    flag = not config.enable_x64.value

    def in_thread():
        seen.append(f(a, 1))

    with config.enable_x64(flag):
        f(a, 1)
        t = threading.Thread(target=in_thread)  # the override is not seen there
        t.start()
        t.join()
    assert len(calls) == 2
    f(a, 1)
    assert len(calls) == 2  # the other thread's entry serves the default config


def test_cache_on_wrapped_fun():
    calls = []

    @caching.cache()
    def trace(fun, n):
        calls.append(n)
        return fun.call_wrapped(n)

    def make(k):
        return lambda x: x + k

    f = make(1)
    assert trace(wrap_init(f), 1) == 2
    assert trace(wrap_init(f), 1) == 2  # a new WrappedFun of the same f hits
    assert len(calls) == 1
    g = make(1)  # same code, different cell: misses
    assert trace(wrap_init(g), 1) == 2
    assert len(calls) == 2
    # Transformations are part of the key.
    double = lambda inner: lambda x: 2 * inner(x)
    assert trace(wrap_init(f).wrap(double), 1) == 4
    assert len(calls) == 3
    # Same code, same cells: shared.
    fs = [lambda x: x * 3 for _ in range(2)]
    trace(wrap_init(fs[0]), 2)
    trace(wrap_init(fs[1]), 2)
    assert len(calls) == 4
    with config.enable_x64(not config.enable_x64.value):
        trace(wrap_init(f), 1)
    assert len(calls) == 5


def test_cache_entries_die_with_the_users_function():
    @caching.cache
    def trace(fun, n):
        return n

    def make():
        y = [0]
        return lambda x: x + y[0]

    f = make()
    trace(wrap_init(f), 1)
    trace(wrap_init(f).wrap(lambda inner: inner), 1)
    ref = weakref.ref(f)
    assert trace.cache_info().currsize == 2
    del f
    gc.collect()
    assert ref() is None
    assert trace.cache_info().currsize == 0

    class Callable:
        def __call__(self, x):
            return x

    c = Callable()
    trace(wrap_init(c), 1)
    ref = weakref.ref(c)
    del c
    gc.collect()
    assert ref() is None
    assert trace.cache_info().currsize == 0


def test_cache_on_unweakrefable_callable_holds_it():
    @caching.cache
    def trace(fun, n):
        return object()

    class Slotted:
        __slots__ = ()

        def __call__(self, x):
            return x

    c = Slotted()
    first = trace(wrap_init(c), 1)
    assert trace(wrap_init(c), 1) is first
    assert trace(wrap_init(Slotted()), 1) is not first
    size_before = trace.cache_info().currsize
    del c
    gc.collect()
    # Strongly held: the entry stays until LRU eviction, and is never confused
    # with a new object that might get the same id.
    assert trace.cache_info().currsize == size_before
    for _ in range(20):
        assert trace(wrap_init(Slotted()), 1) is not first


def test_clear_all_caches():
    f, calls = _counting()
    g, _ = _counting()
    a = Obj()
    f(a, 1)
    g(a, 1)
    caching.clear_all_caches()
    assert f.cache_info().currsize == 0 and g.cache_info().currsize == 0
    f(a, 1)
    assert len(calls) == 2
