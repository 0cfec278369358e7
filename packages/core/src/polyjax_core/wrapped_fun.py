"""Wrapped functions: a user's callable plus the transformations stacked on it.

Every transformation (``jit``, ``vmap``, ``grad``...) eventually *traces* a
Python function to a jaxpr, and tracing is expensive, so it is cached. A cache
needs a key that says when two functions are "the same". Python gives us only
object identity for that, which is both too fine (``jit`` of the same function
re-wrapped by ``functools.partial`` each call should hit) and subtly too coarse
when a cache holds functions by weak reference and ids get reused. So we wrap
the callable in a :class:`WrappedFun`, whose equality and hash *are* the cache
identity, defined from what determines the function's behaviour:

* a plain Python function is its code object, its closure cells and its
  globals dict, all by identity, and its defaults and keyword defaults;
* a ``functools.partial`` is the identity of ``.func`` plus its bound arguments
  (by value when hashable, by identity otherwise);
* any other callable is itself, through its own ``__hash__``/``__eq__`` (or
  its identity when it has none).

Keying on the code object is what distinguishes two lambdas written on one
line; keying on the cells distinguishes two closures created by two calls of
the same outer function. Two *distinct* function objects with the same code
and the *same* cells (the same ``lambda x: x * 2`` evaluated twice in a loop,
or two closures created in one scope) share an identity. That is sound: a
cell is a variable binding, not a value, so two functions that share code,
cells, defaults and globals read exactly the same variables and behave the
same on every call. (Mutating a captured variable between calls is not
detected; caching by plain function identity would not detect it either, and
transformations already assume the function is pure.)

The transformations applied on top of ``f`` are a tuple of
``(transform, params)`` pairs. ``WrappedFun.wrap(t, *params)`` adds one; calling
the wrapped function builds ``t(inner, *params)`` around the callable so far,
innermost first. ``params`` are part of the cache identity, so they should be
hashable values (unhashable ones fall back to identity rather than crash).
A transformation that must report something back to its caller (an output
tree, say) through a mutable store should be applied *inside* the cached
function, where a fresh store costs no cache hits.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import types
import weakref
from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["DebugInfo", "WrappedFun", "debug_info", "wrap_init"]


# ---------------------------------------------------------------------------
# Debug info


@dataclasses.dataclass(frozen=True)
class DebugInfo:
    """What error messages and printed jaxprs say about a traced function.

    Attributes:
      traced_for: the transformation that traced it: ``"jit"``, ``"vmap"``,
        ``"make_jaxpr"``...
      func_src_info: ``"f at /path/file.py:12"``, or ``None`` when unknown.
      arg_names: one name per flattened (non-static) argument, such as
        ``"x"`` or ``"y['a']"``; ``""`` where no name could be found.
      result_paths: one path per flattened result (``"result[0]"``), filled in
        after tracing with :meth:`with_result_paths`; ``None`` before.
    """

    traced_for: str
    func_src_info: str | None
    arg_names: tuple[str, ...]
    result_paths: tuple[str, ...] | None = None

    @property
    def func_name(self) -> str:
        """The function's name, the first word of ``func_src_info``."""
        if not self.func_src_info:
            return "<unknown>"
        return self.func_src_info.split(" ", 1)[0]

    def with_result_paths(self, result_paths: tuple[str, ...]) -> DebugInfo:
        """Returns a copy with ``result_paths`` filled in."""
        return dataclasses.replace(self, result_paths=tuple(result_paths))

    def safe_arg_names(self, n: int) -> tuple[str, ...]:
        """``arg_names`` if there are ``n`` of them, else ``n`` empty names.

        Best-effort names can disagree with the real flattening (a custom
        pytree node the name-finder did not know); a printer should then show
        no names rather than wrong ones.
        """
        if len(self.arg_names) == n:
            return self.arg_names
        return ("",) * n


def debug_info(
    traced_for: str,
    fun: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    static_argnums: tuple[int, ...] = (),
    static_argnames: tuple[str, ...] = (),
) -> DebugInfo:
    """Builds the :class:`DebugInfo` for tracing ``fun(*args, **kwargs)``.

    Everything here is best-effort and never raises: a callable without a
    signature or a call that does not bind gives positional names
    (``args[0]``) instead.

    Args:
      traced_for: the name of the transformation, e.g. ``"jit"``.
      fun: the user's callable.
      args: the positional arguments of the call, static ones included.
      kwargs: the keyword arguments of the call, static ones included.
      static_argnums: positions of static arguments, which get no names.
      static_argnames: names of static keyword arguments, which get no names.

    Returns:
      A ``DebugInfo`` with ``result_paths=None``.

    Example:
      >>> def f(x, y): return x
      >>> debug_info("jit", f, (1,), {"y": {"a": 2}}).arg_names
      ('x', "y['a']")
    """
    try:
        src = _func_src_info(fun)
    except Exception:
        src = None
    try:
        names = _arg_names(fun, args, kwargs, static_argnums, static_argnames)
    except Exception:
        names = ()
    return DebugInfo(traced_for, src, names)


# Per code object: (the function's source summary, its signature). Code
# objects are weakly referenceable, so entries go away with the code.
_code_info: weakref.WeakKeyDictionary[types.CodeType, tuple[str, inspect.Signature | None]] = (
    weakref.WeakKeyDictionary()
)


def _plain_function(fun: Any) -> types.FunctionType | None:
    """The plain Python function behind ``fun``, through partials and wrappers."""
    for _ in range(100):  # bounded: __wrapped__ chains can be cyclic
        if isinstance(fun, types.FunctionType):
            return fun
        if isinstance(fun, functools.partial):
            fun = fun.func
        elif isinstance(fun, types.MethodType):
            fun = fun.__func__
        elif hasattr(fun, "__wrapped__"):
            fun = fun.__wrapped__
        else:
            return None
    return None


def _code_info_of(fn: types.FunctionType) -> tuple[str, inspect.Signature | None]:
    code = fn.__code__
    info = _code_info.get(code)
    if info is None:
        src = f"{fn.__name__} at {code.co_filename}:{code.co_firstlineno}"
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        info = _code_info[code] = (src, sig)
    return info


def _func_src_info(fun: Callable[..., Any]) -> str | None:
    fn = _plain_function(fun)
    if fn is not None:
        return _code_info_of(fn)[0]
    name = getattr(fun, "__name__", None) or type(fun).__name__
    return f"{name} at <unknown>"


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    # The cached signature is only right when `fun` *is* the plain function:
    # a partial or a bound method has fewer parameters.
    if isinstance(fun, types.FunctionType):
        return _code_info_of(fun)[1]
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _arg_names(fun, args, kwargs, static_argnums, static_argnames) -> tuple[str, ...]:
    n = len(args)
    static_pos = {i % n for i in static_argnums if -n <= i < n} if n else set()
    static_kw = set(static_argnames)
    sig = _signature(fun)
    named: list[tuple[str, Any]] = []  # (top-level name, value) in flattening order
    bound = None
    if sig is not None:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            bound = None
    if bound is not None:
        # Positional arguments first, in order, then keywords sorted by name:
        # the order in which a transformation flattens ``(args, kwargs)``.
        assert sig is not None  # `bound` comes from it
        pos_names = _positional_names(sig, bound, n)
        for i, (name, value) in enumerate(zip(pos_names, args)):
            if i not in static_pos:
                named.append((name, value))
    else:
        for i, value in enumerate(args):
            if i not in static_pos:
                named.append((f"args[{i}]", value))
    for k in sorted(kwargs):
        if k not in static_kw:
            named.append((k, kwargs[k]))
    out: list[str] = []
    for name, value in named:
        out.extend(name + path for path in _leaf_paths(value))
    return tuple(out)


def _positional_names(sig: inspect.Signature, bound: inspect.BoundArguments, n: int) -> list[str]:
    names: list[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            if len(names) < n:
                names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.extend(f"{p.name}[{i}]" for i in range(n - len(names)))
    return names


def _leaf_paths(value: Any) -> list[str]:
    """Key-path strings of ``value``'s pytree leaves, ``[""]`` for a leaf."""
    flatten = _path_flattener()
    if flatten is not None:
        try:
            return flatten(value)
        except Exception:
            pass
    return _builtin_leaf_paths(value)


def _builtin_leaf_paths(value: Any) -> list[str]:
    # Containers every pytree registry knows: None has no leaves; tuples,
    # lists, namedtuples and dicts (sorted keys) are nodes; the rest is a leaf.
    if value is None:
        return []
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        items = [(f".{k}", v) for k, v in zip(value._fields, value)]
    elif isinstance(value, (tuple, list)):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    elif isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = list(value)
        items = [(f"[{k!r}]", value[k]) for k in keys]
    else:
        return [""]
    return [key + sub for key, v in items for sub in _builtin_leaf_paths(v)]


_UNSET: Any = object()
_flattener: Any = _UNSET


def _path_flattener() -> Callable[[Any], list[str]] | None:
    """The pytree registry's path flattener, when ``polyjax_core.tree_util`` has one.

    Looked up lazily (once) so that custom pytree nodes get the same names the
    transformation's own flattening gives them; without it we fall back to the
    built-in containers above.
    """
    global _flattener
    if _flattener is _UNSET:
        try:
            from polyjax_core import tree_util  # noqa: PLC0415

            flatten_with_path = tree_util.tree_flatten_with_path
            keystr = tree_util.keystr
            _flattener = lambda x: [keystr(p) for p, _ in flatten_with_path(x)[0]]
        except Exception:
            _flattener = None
    return _flattener


# ---------------------------------------------------------------------------
# Cache identity


class _Ident:
    """A hashable stand-in for an unhashable value, by identity, holding no reference.

    Identity keys never hold their object (the fixed identity slots of a key
    are bare ``id`` ints; this class marks ids among *values*, so that they
    cannot be confused with an int value). Not holding the object is what
    lets a cache keyed on a function's identity drop its entry when the
    function dies. It is sound because every object identified this way is
    reachable from the wrapped callable, which the WrappedFun holds alive,
    and caches purge a key when its callable dies (before the id can be
    reused).
    """

    __slots__ = ("ident",)

    def __init__(self, obj: Any):
        self.ident = id(obj)

    def __hash__(self) -> int:
        return self.ident

    def __eq__(self, other: object) -> bool:
        return type(other) is _Ident and other.ident == self.ident

    def __repr__(self) -> str:
        return f"_Ident({self.ident:#x})"


def _value_key(x: Any) -> Hashable:
    """``x`` itself when hashable, else ``x`` by identity."""
    try:
        hash(x)
    except TypeError:
        return _Ident(x)
    return x


def _fun_key(f: Any) -> Hashable:
    """The cache identity of a callable (see the module docstring).

    Objects compared by identity appear as their ``id`` (see :class:`_Ident`
    for why that is sound); in the fixed identity slots of these tuples (code,
    cells, globals) a plain int suffices and keeps hashing in C.
    """
    if isinstance(f, types.FunctionType):
        kwdefaults = f.__kwdefaults__
        return (
            "fn",
            id(f.__code__),
            tuple(map(id, f.__closure__)) if f.__closure__ else (),
            tuple(map(_value_key, f.__defaults__)) if f.__defaults__ else (),
            tuple((k, _value_key(v)) for k, v in sorted(kwdefaults.items())) if kwdefaults else (),
            id(f.__globals__),
        )
    if isinstance(f, functools.partial):
        return (
            "partial",
            _fun_key(f.func),
            tuple(map(_value_key, f.args)),
            tuple((k, _value_key(v)) for k, v in sorted(f.keywords.items())),
        )
    if isinstance(f, types.MethodType):
        # `a.m == b.m` exactly when `a is b` and the functions are equal.
        return ("method", _fun_key(f.__func__), id(f.__self__))
    if type(f).__hash__ is object.__hash__:
        return ("id", id(f))
    # A callable with its own notion of equality (a hashable dataclass with
    # __call__, say): equal objects share entries, and the key holds `f`.
    return ("obj", _value_key(f))


def _transforms_key(transforms: tuple) -> tuple:
    return tuple((_value_key(t), tuple(map(_value_key, params))) for t, params in transforms)


class WrappedFun:
    """A callable plus the transformations applied to it; hashable cache identity.

    Build one with :func:`wrap_init`. Instances are immutable: :meth:`wrap`
    returns a new one.

    Attributes:
      f: the user's Python callable.
      transforms: ``((transform, params), ...)``, innermost first.
      debug_info: a :class:`DebugInfo`, or ``None``. It is *not* part of the
        cache identity: it is derived from the function and the call.

    Example:
      >>> def double(g):
      ...     return lambda x: 2 * g(x)
      >>> wrap_init(lambda x: x + 1).wrap(double).call_wrapped(3)
      8
    """

    __slots__ = ("f", "transforms", "debug_info", "_key")

    f: Callable[..., Any]
    transforms: tuple[tuple[Callable[..., Any], tuple[Any, ...]], ...]
    debug_info: DebugInfo | None
    _key: Hashable | None

    def __init__(
        self,
        f: Callable[..., Any],
        transforms: tuple[tuple[Callable[..., Any], tuple[Any, ...]], ...],
        debug_info: DebugInfo | None,
    ):
        set_ = object.__setattr__
        set_(self, "f", f)
        set_(self, "transforms", transforms)
        set_(self, "debug_info", debug_info)
        set_(self, "_key", None)  # computed on first use: wrapping is cheap

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("WrappedFun is immutable")

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", type(self.f).__name__)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the transformed function: ``t_n(...t_1(f, *p_1)..., *p_n)(*args)``."""
        fun = self.f
        for transform, params in self.transforms:
            fun = transform(fun, *params)
        return fun(*args, **kwargs)

    def wrap(self, transform: Callable[..., Callable[..., Any]], *params: Any) -> WrappedFun:
        """Returns a new WrappedFun with ``transform`` applied outermost.

        Args:
          transform: called as ``transform(inner, *params)`` when the wrapped
            function is called; it returns the callable to call instead of
            ``inner``.
          *params: extra arguments of ``transform``; part of the cache
            identity, so they should be hashable.

        Returns:
          The composed WrappedFun; ``self`` is unchanged.
        """
        return WrappedFun(self.f, (*self.transforms, (transform, params)), self.debug_info)

    def with_debug_info(self, debug_info: DebugInfo | None) -> WrappedFun:
        """Returns a copy with another ``debug_info`` (same cache identity)."""
        return WrappedFun(self.f, self.transforms, debug_info)

    @property
    def cache_key(self) -> Hashable:
        """The hashable cache identity (what ``==`` and ``hash`` compare).

        It may identify ``f`` by ``id``, so it is only meaningful while ``f``
        is alive: hold it only alongside ``f`` or in a cache that drops
        entries when ``f`` dies (see :mod:`polyjax_core.caching`).
        """
        key = self._key
        if key is None:
            key = (_fun_key(self.f), _transforms_key(self.transforms) if self.transforms else ())
            object.__setattr__(self, "_key", key)
        return key

    def __hash__(self) -> int:
        return hash(self.cache_key)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not WrappedFun:
            return NotImplemented
        return self.cache_key == other.cache_key

    def __repr__(self) -> str:
        names = ", ".join(getattr(t, "__name__", repr(t)) for t, _ in self.transforms)
        return f"WrappedFun({self.__name__}, transforms=[{names}])"


def wrap_init(f: Callable[..., Any], debug_info: DebugInfo | None = None) -> WrappedFun:
    """Wraps a Python callable with no transformations yet.

    Args:
      f: the user's callable.
      debug_info: optional :class:`DebugInfo` for error messages.

    Returns:
      A :class:`WrappedFun`.

    Example:
      >>> wrap_init(abs).call_wrapped(-2)
      2
    """
    return WrappedFun(f, (), debug_info)
