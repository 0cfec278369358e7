"""Mutable array references: their type, their effect and the concrete `Ref` box.

A *reference* is a mutable cell holding an array. Programs read and write it
through stateful primitives (`get`, `swap`, `addupdate`, declared by
polyjax-numpy), so a jaxpr that uses references is no longer purely functional:

    { lambda ; a:f32[3]. let
        b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
        c:f32[3] <- b[...]
        d:f32[3] = add c 1.0:f32[]
        b[...] <- d
        e:f32[3] = freeze b
      in (e,) }

- `AbstractRef` is the type of a reference: it wraps the abstract value of
  what the cell holds and prints as ``Ref{f32[3]}``.
- `RefEffect` is the effect of every equation that creates, reads or writes a
  reference. It keeps such equations alive through dead-code elimination and
  marks the jaxprs that must be *discharged* (turned back into functional code,
  `polyjax_interpreters.discharge`) before they lower.
- `Ref` is a concrete reference outside any trace: a box around an array whose
  contents the stateful primitives replace. Inside a trace a reference is a
  tracer whose aval is an `AbstractRef`; ``isinstance(x, Ref)`` holds for both.

Indexing (``ref[idx]``, ``ref[idx] = v``) is defined by the array library,
which registers it with `register_ref_indexing`; core knows no primitives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polyjax_core import effects
from polyjax_core.abstract_values import AbstractValue, get_aval, register_aval_handler
from polyjax_core.tracing import Tracer

__all__ = [
    "AbstractRef",
    "Ref",
    "RefEffect",
    "is_ref_aval",
    "ref_effect",
    "register_ref_indexing",
]


class RefEffect(effects.Effect):
    """Creating, reading or writing a mutable array reference."""

    def __repr__(self) -> str:
        return "Ref"


ref_effect = RefEffect()
# A loop or branch body may use references: discharge turns them into carries.
effects.control_flow_allowed_effects.add_type(RefEffect)
effects.lowerable_effects.add_type(RefEffect)
effects.remat_allowed_effects.add_type(RefEffect)


_indexing: dict[str, Callable[..., Any]] = {}


def register_ref_indexing(
    getitem: Callable[[Any, Any], Any], setitem: Callable[[Any, Any, Any], None]
) -> None:
    """Defines ``ref[idx]`` and ``ref[idx] = value`` for references (the array library's)."""
    _indexing["get"] = getitem
    _indexing["set"] = setitem


def _index_op(name: str) -> Callable[..., Any]:
    op = _indexing.get(name)
    if op is None:
        raise TypeError("indexing a reference needs an array library (import polyjax.numpy)")
    return op


class AbstractRef(AbstractValue):
    """The type of a mutable reference to an array of type `inner_aval`.

    Example:
      >>> import numpy as np
      >>> from polyjax_core.abstract_values import ShapedArray
      >>> t = AbstractRef(ShapedArray((3,), np.float32))
      >>> str(t), t.str_short(short_dtypes=True), t.shape
      ('Ref{float32[3]}', 'Ref{f32[3]}', (3,))
    """

    __slots__ = ("inner_aval",)

    def __init__(self, inner_aval: AbstractValue):
        if isinstance(inner_aval, AbstractRef):
            raise TypeError("a reference cannot hold another reference")
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: self.inner_aval.ndim)
    size = property(lambda self: self.inner_aval.size)
    vma = property(lambda self: getattr(self.inner_aval, "vma", frozenset()))
    aval_sharding = property(lambda self: getattr(self.inner_aval, "aval_sharding", None))

    # (A reference's type updated is a reference's type, not a ShapedArray.)
    def update(  # type: ignore[override]  # returns the reference type
        self, shape: Any = None, dtype: Any = None, weak_type: Any = None, vma: Any = None,
        sharding: Any = None,
    ) -> AbstractRef:  # fmt: skip
        return AbstractRef(self.inner_aval.update(shape, dtype, weak_type, vma))

    def strip_weak_type(self) -> AbstractRef:  # type: ignore[override]  # a reference type
        return AbstractRef(self.inner_aval.strip_weak_type())

    def str_short(self, short_dtypes: bool = False) -> str:
        return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __str__(self) -> str:
        return self.str_short()

    __repr__ = __str__  # (JAX's repr: `Ref{float32[3]}`)

    def __eq__(self, other: object) -> bool:
        return type(other) is AbstractRef and self.inner_aval == other.inner_aval

    def __hash__(self) -> int:
        return hash((AbstractRef, self.inner_aval))

    # Tracers forward indexing to their aval's hooks (see `Tracer.__getitem__`).
    def _getitem(self, ref: Any, index: Any) -> Any:
        return _index_op("get")(ref, index)

    def _setitem(self, ref: Any, index: Any, value: Any) -> None:
        _index_op("set")(ref, index, value)


def is_ref_aval(aval: Any) -> bool:
    """Whether `aval` is the type of a reference."""
    return type(aval) is AbstractRef


class _RefMeta(type):
    # `isinstance(x, Ref)` also holds for a traced reference, as in JAX.
    def __instancecheck__(cls, x: Any) -> bool:
        return type.__instancecheck__(cls, x) or (
            isinstance(x, Tracer) and type(x.aval) is AbstractRef
        )


class Ref(metaclass=_RefMeta):
    """A mutable reference to an array (what `new_ref` returns outside a trace).

    Read it with ``ref[idx]``, write it with ``ref[idx] = value`` or
    ``ref[idx] += value``; `freeze` gives its contents back as an array.
    Indexing needs the array library (polyjax-numpy), which defines it.

    Example:
      >>> import numpy as np
      >>> r = Ref(np.zeros(2, np.float32))
      >>> r.aval, len(r)
      (Ref{float32[2]}, 2)
    """

    __slots__ = ("_value", "_owned", "__weakref__")

    def __init__(self, value: Any, *, owned: bool = False):
        self._value = value
        # Whether no one else holds `_value`: then writes may reuse its buffer.
        self._owned = owned

    @property
    def aval(self) -> AbstractRef:
        return AbstractRef(get_aval(self._value))

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index: Any) -> Any:
        return _index_op("get")(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        _index_op("set")(self, index, value)

    def __repr__(self) -> str:
        text = repr(self._value)
        return "Ref(" + text[len("Array(") :] if text.startswith("Array(") else f"Ref({text})"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


register_aval_handler(Ref, lambda r: r.aval)
