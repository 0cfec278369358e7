"""Key-path entries: the names of the edges from a pytree node to its children.

A *key path* is a tuple of key entries leading from the root of a pytree to one
of its leaves. Each entry says how to step from a node to one child:

* ``SequenceKey(idx)`` indexes a tuple or list (printed ``[0]``);
* ``DictKey(key)`` indexes a dict-like node (printed ``['a']``);
* ``GetAttrKey(name)`` reads an attribute of a namedtuple or dataclass
  (printed ``.name``);
* ``FlattenedIndexKey(key)`` is the position of a child of a custom node that
  was registered without key information (printed ``[<flat index 0>]``).

They are small immutable value objects: equal when their class and field are
equal, hashable, and usable in ``match`` statements through ``__match_args__``.
They are polyjax's own classes, whichever pytree backend flattens the tree.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "keystr"]


class _KeyEntry:
    """Shared behaviour of the key classes: one read-only field, value semantics."""

    __slots__ = ("_value",)
    _value: Any
    _field = ""  # the public name of the single field, set by each subclass

    def __init__(self, value: Any) -> None:
        object.__setattr__(self, "_value", value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _KeyEntry) or type(other) is not type(self):
            return NotImplemented
        return self._value == other._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._field}={self._value!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._value,))


class SequenceKey(_KeyEntry):
    """The key of an element of a tuple or list: its index.

    Example:
        >>> str(SequenceKey(0)), repr(SequenceKey(0))
        ('[0]', 'SequenceKey(idx=0)')
    """

    __slots__ = ()
    __match_args__ = ("idx",)
    _field = "idx"

    def __init__(self, idx: int) -> None:
        super().__init__(idx)

    @property
    def idx(self) -> int:
        """The index of the child in its sequence."""
        return self._value

    def __str__(self) -> str:
        return f"[{self._value!r}]"


class DictKey(_KeyEntry):
    """The key of an entry of a dict, OrderedDict or defaultdict.

    Example:
        >>> str(DictKey('a')), repr(DictKey('a'))
        ("['a']", "DictKey(key='a')")
    """

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key: Hashable) -> None:
        super().__init__(key)

    @property
    def key(self) -> Hashable:
        """The dictionary key of the child."""
        return self._value

    def __str__(self) -> str:
        return f"[{self._value!r}]"


class GetAttrKey(_KeyEntry):
    """The key of a named field (namedtuple or dataclass attribute).

    Example:
        >>> str(GetAttrKey('x')), repr(GetAttrKey('x'))
        ('.x', "GetAttrKey(name='x')")
    """

    __slots__ = ()
    __match_args__ = ("name",)
    _field = "name"

    def __init__(self, name: str) -> None:
        super().__init__(name)

    @property
    def name(self) -> str:
        """The attribute name of the child."""
        return self._value

    def __str__(self) -> str:
        return f".{self._value}"


class FlattenedIndexKey(_KeyEntry):
    """The position of a child of a custom node registered without keys.

    Example:
        >>> str(FlattenedIndexKey(1)), repr(FlattenedIndexKey(1))
        ('[<flat index 1>]', 'FlattenedIndexKey(key=1)')
    """

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key: int) -> None:
        super().__init__(key)

    @property
    def key(self) -> int:
        """The position of the child among its node's children."""
        return self._value

    def __str__(self) -> str:
        return f"[<flat index {self._value}>]"


def _simple_str(key: Any) -> str:
    """The compact (and possibly ambiguous) rendering used by ``keystr(simple=True)``."""
    if isinstance(key, _KeyEntry):
        value = key._value
        return value if isinstance(value, str) else str(value)
    return str(key)


def keystr(keys: tuple[Any, ...], *, simple: bool = False, separator: str = "") -> str:
    """Renders a key path as a string.

    Args:
      keys: a key path: a tuple of key entries (or any objects with a ``str``).
      simple: if True, render each entry by its bare value (``0``, ``a``, ``x``)
        instead of its indexing syntax (``[0]``, ``['a']``, ``.x``). The simple
        form is more compact but ambiguous (``0`` may be an index or a key).
      separator: the string placed between the rendered entries.

    Returns:
      The joined string.

    Example:
        >>> keystr((DictKey('a'), SequenceKey(0)))
        "['a'][0]"
        >>> keystr((DictKey('a'), SequenceKey(0)), simple=True, separator='/')
        'a/0'
    """
    render = _simple_str if simple else str
    return separator.join(render(k) for k in keys)
