"""Traces and tracers, and the current-trace context (ARCHITECTURE decision 1).

A *trace* is an interpretation of primitives. `Primitive.bind` does not
compute anything itself: it hands the primitive and its arguments to the trace
that is *current* in this thread, and that trace decides what binding means.

    EvalTrace           run the primitive's impl on concrete values (the bottom)
    JaxprTrace          record an equation into a jaxpr being built (jaxpr_tracing)
    JVPTrace, BatchTrace, ...   defined by polyjax-interpreters

There are no trace levels to compare. Each trace knows its *parent*, the trace
that was current when it was created. A transformation's rule typically
computes its result by binding primitives again *under the parent trace*
(`with set_current_trace(self.parent): ...`), which is how transformations
nest: jvp-of-jit records jvp'd primitives into the jaxpr being built.

A *tracer* is the value a trace hands back to Python. It knows its trace and
its abstract value, and overloads Python's operators so user code runs on it
unchanged. A tracer is only meaningful while its trace is active: when a
transformation finishes, it invalidates its trace, and any later use of one of
its tracers raises `UnexpectedTracerError` (an "escaped" tracer). The current
trace is thread-local, so two threads tracing at once never see each other's
traces.

Operators and array methods on tracers (`x + y`, `x[0]`, `x.sum()`) are not
known to core: the array library registers them with `register_tracer_method`
(for dunders) and `register_tracer_attribute` (for `x.name`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Self

from polyjax_core import abstract_values as av
from polyjax_core import source_info as si
from polyjax_core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "BINARY_OPERATORS",
    "IMMUTABLE_ARRAY_MESSAGE",
    "OTHER_OPERATORS",
    "EvalTrace",
    "Trace",
    "Tracer",
    "concrete_or_error",
    "current_trace",
    "register_tracer_attribute",
    "register_tracer_method",
    "set_current_trace",
]

# What `x[idx] = y` raises (a TypeError, as in JAX) for tracers and arrays alike.
IMMUTABLE_ARRAY_MESSAGE = (
    "Arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method (add, subtract, multiply, "
    "divide, power, min, max, apply, get)."
)


class Trace:
    """An interpretation of primitives. Subclasses implement `process_primitive`.

    Attributes:
      parent: the trace that was current when this one was created; rules
        usually evaluate under it.
      debug_info: what is being traced (a `wrapped_fun.DebugInfo`), for errors.
    """

    debug_info: Any = None

    def __init__(self, parent: Trace | None = None):
        self.parent = current_trace() if parent is None else parent
        self._valid = True

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not process primitives")

    # A trace is used as a context manager for its extent: it is current inside,
    # and invalid afterwards, so that escaped tracers are caught.
    def __enter__(self) -> Self:
        self._saved = _state.trace
        _state.trace = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.trace = self._saved
        self._valid = False

    def is_ancestor_of(self, other: Trace) -> bool:
        t: Trace | None = other
        while t is not None:
            if t is self:
                return True
            t = t.parent
        return False

    def check_foreign_tracer(self, tracer: Tracer) -> None:
        """Accepts a tracer of an enclosing, still active trace; rejects escaped ones.

        A value from an outer trace is a legitimate constant of this one (a
        closure). A tracer of a finished trace, or of a trace that is not an
        ancestor of this one (another thread's, or a sibling's), escaped.
        """
        owner = tracer._trace
        if not (owner._valid and owner.is_ancestor_of(self)):
            raise UnexpectedTracerError(tracer)

    def __repr__(self) -> str:
        return type(self).__name__


class EvalTrace(Trace):
    """The bottom trace: binding a primitive runs its impl on concrete values."""

    def __init__(self) -> None:
        self.parent = None  # type: ignore[assignment]  # the bottom trace: every other has one
        self._valid = True

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        for x in args:
            if isinstance(x, Tracer):
                raise UnexpectedTracerError(x)
        return primitive.evaluate(*args, **params)


eval_trace = EvalTrace()


# Called with True when a thread leaves the bottom trace and False when it comes
# back (jit mirrors it into jaxlib's C++ cache key: a traced call never takes the
# C++ fast path).
trace_listeners: list[Callable[[bool], None]] = []


class _TraceState(threading.local):
    def __init__(self) -> None:
        self._trace: Trace = eval_trace  # every new thread starts at the bottom

    @property
    def trace(self) -> Trace:
        return self._trace

    @trace.setter
    def trace(self, new: Trace) -> None:
        old, self._trace = self._trace, new
        if (old is eval_trace) is not (new is eval_trace):
            for listener in trace_listeners:
                listener(new is not eval_trace)


_state = _TraceState()


def current_trace() -> Trace:
    """The trace that `bind` hands primitives to in this thread."""
    return _state.trace


@contextmanager
def set_current_trace(trace: Trace) -> Iterator[Trace]:
    """Makes `trace` current for the extent of the block (without invalidating it)."""
    saved = _state.trace
    _state.trace = trace
    try:
        yield trace
    finally:
        _state.trace = saved


# ---------------------------------------------------------------------------
# Tracers

_tracer_methods: dict[str, Callable[..., Any]] = {}
_tracer_attributes: dict[str, Callable[[Any], Any]] = {}


def register_tracer_method(name: str, method: Callable[..., Any]) -> None:
    """Defines an operator of tracers, e.g. `register_tracer_method("__add__", add)`."""
    if name not in _FORWARDED_BINARY and name not in _FORWARDED_OTHER:
        raise ValueError(
            f"{name} is not an operator tracers forward; use register_tracer_attribute"
        )
    _tracer_methods[name] = method


def register_tracer_attribute(name: str, getter: Callable[[Any], Any]) -> None:
    """Defines `tracer.<name>` as `getter(tracer)` (e.g. `sum` -> a bound method, `T`)."""
    _tracer_attributes[name] = getter


class Tracer:
    """A value standing in for an array while a trace is active.

    Subclasses add the data their trace needs and define `aval`.
    """

    __slots__ = ("_trace",)
    __array_priority__ = 1000  # make NumPy defer to our operators in `ndarray * tracer`

    def __init__(self, trace: Trace):
        self._trace = trace

    @property
    def aval(self) -> av.AbstractValue:
        raise NotImplementedError

    def to_concrete_value(self) -> Any:
        """The concrete value if this trace knows it (e.g. a jvp primal), else None."""
        return None

    def _source_info(self) -> Any:
        """Where this tracer's value was created (a `SourceInfo`), if known."""
        return None

    # Array-like attributes, from the abstract value.
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    def _short_repr(self) -> str:
        return f"traced array with shape {self.aval.str_short(short_dtypes=False)}"

    # What the errors of `polyjax_core.errors` say about a tracer, formatted here so
    # that errors.py needs nothing of this module.
    def _traced_where(self) -> str | None:
        """'the function f at file:line traced for jit', or None when not known."""
        debug = self._trace.debug_info
        if debug is None:
            return None
        return f"the function {debug.func_src_info} traced for {debug.traced_for}"

    def _created_at(self) -> str | None:
        """The line that created this tracer's value, summarized, or None when not known."""
        created = self._source_info()
        if created is None or created.frame is None:
            return None
        return si.summarize(created)

    def _origin_message(self) -> str:
        """Where this tracer's value came from and what was being traced, as prose."""
        lines = []
        debug = self._trace.debug_info
        if debug is not None:
            lines.append(
                f"The error occurred while tracing the function {debug.func_src_info} "
                f"for {debug.traced_for}."
            )
        created = self._created_at()
        if created is not None:
            lines.append(f"The value was created at {created}.")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short(short_dtypes=False)}>with<{self._trace}>"

    # Conversions that need a concrete value.
    def __bool__(self) -> bool:
        value = self.to_concrete_value()
        if value is None:
            raise TracerBoolConversionError(self)
        return bool(value)

    def __index__(self) -> int:
        value = self.to_concrete_value()
        if value is None:
            raise TracerIntegerConversionError(self, "__index__")
        return value.__index__()

    def __int__(self) -> int:
        value = self.to_concrete_value()
        if value is None:
            raise TracerIntegerConversionError(self, "__int__")
        return int(value)

    def __float__(self) -> float:
        value = self.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(self, "The problem arose with the `float` function.")
        return float(value)

    def __complex__(self) -> complex:
        value = self.to_concrete_value()
        if value is None:
            raise ConcretizationTypeError(self, "The problem arose with the `complex` function.")
        return complex(value)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        raise TracerArrayConversionError(self)

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r} (traced arrays are unhashable)")

    def __setitem__(self, index: Any, value: Any) -> None:
        aval = self.aval
        if aval._setitem is None:
            raise TypeError(IMMUTABLE_ARRAY_MESSAGE)
        aval._setitem(self, index, value)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))  # type: ignore[index]  # forwarded below

    def __getattr__(self, name: str) -> Any:
        getter = _tracer_attributes.get(name)
        if getter is not None:
            return getter(self)
        if name in _CONCRETE_ATTRIBUTES:
            raise ConcretizationTypeError(self, _not_available(name, "attribute", self))
        if name in _CONCRETE_METHODS:
            return functools.partial(_concrete_method_called, self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# Parts of JAX's `Array` that only a concrete array has. On a tracer, reading one
# of these attributes, or calling one of these methods, is a concretization error
# (as in JAX), not a missing attribute.
_CONCRETE_ATTRIBUTES = frozenset(
    {"addressable_shards", "committed", "global_shards", "is_fully_addressable",
     "is_fully_replicated", "traceback"}
)  # fmt: skip
_CONCRETE_METHODS = frozenset(
    {"addressable_data", "delete", "devices", "is_deleted", "item", "on_device_size_in_bytes",
     "tobytes", "tolist", "unsafe_buffer_pointer"}
)  # fmt: skip


def _not_available(name: str, kind: str, tracer: Tracer) -> str:
    return f"The {name!r} {kind} is not available on {tracer._short_repr()}."


def _concrete_method_called(tracer: Tracer, name: str, *args: Any, **kwargs: Any) -> Any:
    raise ConcretizationTypeError(tracer, _not_available(f"{name}()", "method", tracer))


def _binary(name: str) -> Callable[..., Any]:
    def method(self: Tracer, other: Any) -> Any:
        fn = _tracer_methods.get(name)
        return NotImplemented if fn is None else fn(self, other)

    method.__name__ = name
    return method


def _other(name: str) -> Callable[..., Any]:
    def method(self: Tracer, *args: Any) -> Any:
        fn = _tracer_methods.get(name)
        if fn is None:
            raise TypeError(
                f"{name} of a traced array is not defined: no array library registered it "
                "(import polyjax.numpy)"
            )
        return fn(self, *args)

    method.__name__ = name
    return method


_FORWARDED_BINARY = [
    f"__{op}__"
    for base in (
        "add sub mul truediv floordiv mod divmod pow matmul and or xor lshift rshift".split()
    )
    for op in (base, "r" + base)
] + ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]
_FORWARDED_OTHER = ["__neg__", "__pos__", "__abs__", "__invert__", "__getitem__", "__round__"]

# Public so that other array types (polyjax's `Array`) forward the same operator set.
BINARY_OPERATORS: tuple[str, ...] = tuple(_FORWARDED_BINARY)
OTHER_OPERATORS: tuple[str, ...] = tuple(_FORWARDED_OTHER)

for _name in _FORWARDED_BINARY:
    setattr(Tracer, _name, _binary(_name))


def _ref_aware_getitem(array_getitem: Callable[..., Any]) -> Callable[..., Any]:
    def __getitem__(self: Tracer, index: Any) -> Any:
        # A traced reference indexes through its type's hook (a read), arrays as arrays.
        aval = self.aval
        if aval._getitem is not None:
            return aval._getitem(self, index)
        return array_getitem(self, index)

    return __getitem__


for _name in _FORWARDED_OTHER:
    _method = _other(_name)
    setattr(Tracer, _name, _ref_aware_getitem(_method) if _name == "__getitem__" else _method)

av.register_aval_handler(Tracer, lambda t: t.aval)


def concrete_or_error(force: Callable[[Any], Any] | None, val: Any, context: str = "") -> Any:
    """`force(val)`, or `ConcretizationTypeError` if `val` is a tracer with no known value.

    Args:
      force: makes the Python value (`int`, `operator.index`...); None returns
        the concrete value as it is.
      val: a value that may be a tracer.
      context: a sentence for the error saying why a concrete value is needed.

    Example:
      >>> concrete_or_error(int, 3.0)
      3
    """
    if isinstance(val, Tracer):
        concrete = val.to_concrete_value()
        if concrete is None:
            raise ConcretizationTypeError(val, context)
        val = concrete
    return val if force is None else force(val)
