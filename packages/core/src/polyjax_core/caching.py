"""Caches keyed on functions and jaxprs, whose entries die with their key.

Tracing caches are keyed on a user's function (or a jaxpr), plus hashable
parameters. Holding the function strongly in the key would keep it, and
everything it closes over, alive forever; so the function is held *weakly*:
when it is garbage-collected its entries disappear. Every key also includes
:func:`polyjax_core.config.trace_context`, so that a thread-local override of
an option that changes tracing (``enable_x64``...) gets its own entry.

Both decorators here share one mechanism, :class:`_WeakOwnerLRU`: an LRU dict
of entries, each recording the *owner* object whose death purges it. A weak
reference callback cannot safely edit the dict itself (it may fire in the
middle of an edit, in any thread), so it only appends the owner's id to a list
of deaths, and every lookup purges those first, under the lock. Keys identify
the owner by ``id``; the purge-before-lookup order makes that sound, because an
id can only be reused after its owner died, which queued the purge.

The lock covers only bookkeeping, never the call being cached: two threads
that miss on the same key both compute, and the first to store wins (both get
its value back, so callers always see one value per key).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple, TypeVar, overload

from polyjax_core import config
from polyjax_core.wrapped_fun import WrappedFun

__all__ = ["CacheInfo", "cache", "clear_all_caches", "weakref_lru_cache"]

F = TypeVar("F", bound=Callable[..., Any])


class CacheInfo(NamedTuple):
    """Statistics of a cache, as :func:`functools.lru_cache` reports them."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


# All live caches, for clear_all_caches(). Weak, so a cache made inside a test
# (or any other short-lived scope) is not kept alive by the registry.
_all_caches: weakref.WeakSet[_WeakOwnerLRU] = weakref.WeakSet()


def clear_all_caches() -> None:
    """Empties every cache made by :func:`weakref_lru_cache` and :func:`cache`.

    ``polyjax.clear_caches()`` calls this.
    """
    for c in list(_all_caches):
        c.clear()


class _WeakOwnerLRU:
    """An LRU map from hashable keys to values, each entry owned by an object.

    An entry disappears when its owner is garbage-collected. Owners that cannot
    be weakly referenced (ints, tuples, most builtins) own nothing: their
    entries are evicted only by LRU order or ``clear``.
    """

    def __init__(self, maxsize: int, name: str):
        if maxsize <= 0:
            raise ValueError(f"maxsize must be positive, got {maxsize}")
        self.maxsize = maxsize
        self.name = name
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Any, int | None]] = OrderedDict()
        # id(owner) -> (weakref to owner, keys it owns)
        self._owners: dict[int, tuple[weakref.ref, set[Hashable]]] = {}
        self._dead: list[int] = []
        self.hits = 0
        self.misses = 0
        _all_caches.add(self)

    def _on_death(self, ref: weakref.ref, owner_id: int) -> None:
        self._dead.append(owner_id)  # list.append is atomic; purged at next use

    def _purge_dead(self) -> None:
        # Called with the lock held. Swap the list first: a callback firing
        # now appends to the new list, which the next call purges.
        dead, self._dead = self._dead, []
        for owner_id in dead:
            _, keys = self._owners.pop(owner_id, (None, ()))
            for key in keys:
                self._entries.pop(key, None)

    def lookup(
        self, owner: Any, key: Hashable, fn: Callable[..., Any], args: tuple, kwargs: dict
    ) -> Any:
        """The value for ``key``, computing ``fn(*args, **kwargs)`` on a miss."""
        with self._lock:
            if self._dead:
                self._purge_dead()
            try:
                entry = self._entries.get(key)
            except TypeError as e:
                raise TypeError(
                    f"The arguments of the cached function {self.name} must be hashable: {e}"
                ) from None
            if entry is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry[0]
            self.misses += 1
        value = fn(*args, **kwargs)  # never under the lock: it may recurse into this cache
        with self._lock:
            if self._dead:
                self._purge_dead()
            entry = self._entries.get(key)
            if entry is not None:  # another thread stored it meanwhile
                return entry[0]
            self._entries[key] = (value, self._own(owner, key))
            if len(self._entries) > self.maxsize:
                old_key, (_, old_owner) = self._entries.popitem(last=False)
                self._disown(old_owner, old_key)
        return value

    def _own(self, owner: Any, key: Hashable) -> int | None:
        if owner is None:
            return None
        owner_id = id(owner)
        record = self._owners.get(owner_id)
        if record is None:
            try:
                ref = weakref.ref(owner, functools.partial(self._on_death, owner_id=owner_id))
            except TypeError:
                return None  # not weakly referenceable: a strong key, LRU only
            record = self._owners[owner_id] = (ref, set())
        record[1].add(key)
        return owner_id

    def _disown(self, owner_id: int | None, key: Hashable) -> None:
        if owner_id is None:
            return
        record = self._owners.get(owner_id)
        if record is not None:
            record[1].discard(key)
            if not record[1]:
                del self._owners[owner_id]  # drops the weakref and its callback

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._owners.clear()
            self._dead = []
            self.hits = self.misses = 0

    def info(self) -> CacheInfo:
        with self._lock:
            if self._dead:
                self._purge_dead()
            return CacheInfo(self.hits, self.misses, self.maxsize, len(self._entries))


class _Held:
    """Keys a first argument that cannot be weakly referenced, holding it.

    By value when it is hashable (``3`` and another ``3`` share entries), by
    identity otherwise. A distinct type, so it never equals an ``id`` key.
    """

    __slots__ = ("obj", "_hash", "_by_value")

    def __init__(self, obj: Any):
        self.obj = obj
        try:
            self._hash, self._by_value = hash(obj), True
        except TypeError:
            self._hash, self._by_value = id(obj), False

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if type(other) is not _Held or self._by_value != other._by_value:
            return False
        return self.obj == other.obj if self._by_value else self.obj is other.obj


@overload
def weakref_lru_cache(fn: F, maxsize: int = 4096) -> F: ...
@overload
def weakref_lru_cache(fn: None = None, maxsize: int = 4096) -> Callable[[F], F]: ...
def weakref_lru_cache(fn: Any = None, maxsize: int = 4096) -> Any:
    """Caches ``fn`` on a weakly held first argument and hashable other arguments.

    The first argument (a callable, a jaxpr, any object) is keyed by identity
    and held weakly: when it is garbage-collected, its entries are dropped.
    A :class:`WrappedFun` first argument is keyed by its cache identity and
    held through its callable ``fun.f`` (see :func:`cache`), weakly when
    ``fun.f`` can be weakly referenced. A first argument
    that cannot be weakly referenced (an int, a tuple...) falls back to a
    strong key: by value when hashable, else by identity; its entries leave
    only by LRU eviction. The other arguments must be hashable. Every key also
    holds ``config.trace_context()``. Beyond ``maxsize`` entries, the least
    recently used goes.

    Args:
      fn: the function to cache. Omit it to get a decorator:
        ``@weakref_lru_cache(maxsize=16)``.
      maxsize: the most entries kept.

    Returns:
      The cached function, with ``cache_clear()`` and ``cache_info()``.

    Raises:
      TypeError: (when called) if an argument after the first is unhashable.

    Example:
      >>> @weakref_lru_cache
      ... def arity(f, extra):
      ...     return f.__code__.co_argcount + extra
      >>> def g(x, y): ...
      >>> arity(g, 1), arity(g, 1), arity.cache_info().hits
      (3, 3, 1)
    """
    if fn is None:
        return functools.partial(weakref_lru_cache, maxsize=maxsize)
    lru = _WeakOwnerLRU(maxsize, getattr(fn, "__qualname__", repr(fn)))

    trace_context = config.trace_context

    @functools.wraps(fn)
    def cached(obj: Any, *args: Any, **kwargs: Any) -> Any:
        # The first argument's key part, and the owner whose death drops it.
        if type(obj) is WrappedFun:
            if type(obj.f).__weakrefoffset__:
                first, owner = obj.cache_key, obj.f  # dies with the user's function
            else:
                first, owner = obj, None  # equal by cache identity, and holds `f`
        elif type(obj).__weakrefoffset__:
            first, owner = id(obj), obj
        else:
            first, owner = _Held(obj), None  # strong key
        kw = tuple(sorted(kwargs.items())) if kwargs else ()
        key = (first, args, kw, trace_context())
        return lru.lookup(owner, key, fn, (obj, *args), kwargs)

    # The methods `functools.lru_cache` gives its wrappers, set on a plain function.
    cached.cache_clear = lru.clear  # type: ignore[attr-defined]  # see above
    cached.cache_info = lru.info  # type: ignore[attr-defined]  # see above
    return cached


def cache(maxsize: int | Callable[..., Any] = 4096) -> Callable[[F], F]:
    """Caches a function whose first argument is a :class:`WrappedFun`.

    The key is the WrappedFun's cache identity (its function's code, closure
    cells, defaults and globals, and its transformations; see
    :mod:`polyjax_core.wrapped_fun`), the other arguments (hashable) and
    ``config.trace_context()``. Entries are owned by the underlying Python
    callable ``fun.f``, held weakly: they die with the user's function. (This
    is :func:`weakref_lru_cache` used as a decorator factory.)

    Args:
      maxsize: the most entries kept. ``@cache`` without parentheses works too.

    Returns:
      A decorator; the cached function has ``cache_clear()`` and
      ``cache_info()``.

    Example:
      >>> from polyjax_core.wrapped_fun import wrap_init
      >>> @cache()
      ... def trace(fun, n):
      ...     return fun.call_wrapped(n)
      >>> f = lambda n: n + 1
      >>> trace(wrap_init(f), 1), trace(wrap_init(f), 1), trace.cache_info().hits
      (2, 2, 1)
    """
    if callable(maxsize):
        return weakref_lru_cache(maxsize)
    return functools.partial(weakref_lru_cache, maxsize=maxsize)
