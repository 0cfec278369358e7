"""The pure-Python pytree engine: node kinds, the registry, and tree definitions.

A pytree is a tree of Python containers whose leaves are everything else.
Which types count as containers ("nodes") is decided by a *registry* that maps
a type to a `_NodeKind`: how to take an instance apart into children plus
static auxiliary data, and how to put it back together.

Flattening a tree returns two things: the list of leaves, left to right, and a
*tree definition* describing everything but the leaves. Here a tree definition
is a tree of `_Node` objects, one per container, that mirrors the container
tree; every leaf position holds the shared `_LEAF` node, and every ``None``
holds the shared `_NONE_NODE` (``None`` is a container with no children).
The public `PyTreeDef` wraps either such a `_Node` or, when the jaxlib backend
is in use, jaxlib's C++ tree definition; see ``tree_util`` for the backend.

Speed matters because every traced call flattens its arguments. The flatten
loop therefore does exactly one dictionary lookup per visited object
(``type(x)`` in `_Registry.lookup`, a cache that also remembers which types are
leaves), treats tuples and lists specially (the container *is* its sequence of
children), and handles leaf children inline instead of recursing into them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from polyjax_core._pytree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    SequenceKey,
)

# Node tags. Tuples and lists come first so that `tag <= _LIST` picks both.
_TUPLE, _LIST, _DICT, _NONE, _NAMEDTUPLE, _CUSTOM, _DATACLASS = range(7)


class _NodeKind:
    """How one container type is flattened and rebuilt.

    ``flatten(x) -> (children, aux_data)`` and ``unflatten(aux_data, children)``
    are only used for custom kinds; the built-in kinds are special-cased by
    ``tag`` in the hot loops. ``flatten_with_keys(x) -> (((key, child), ...),
    aux_data)`` is optional. Dataclass kinds record their field names instead.
    """

    __slots__ = (
        "type",
        "tag",
        "flatten",
        "unflatten",
        "flatten_with_keys",
        "data_fields",
        "meta_fields",
    )

    def __init__(
        self,
        type_: type,
        tag: int,
        flatten: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
        unflatten: Callable[[Any, Iterable[Any]], Any] | None = None,
        flatten_with_keys: Callable[[Any], tuple[Iterable[Any], Any]] | None = None,
        data_fields: tuple[str, ...] = (),
        meta_fields: tuple[str, ...] = (),
    ) -> None:
        self.type: type[Any] = type_
        self.tag = tag
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.data_fields = data_fields
        self.meta_fields = meta_fields


class _Node:
    """One container of a tree definition (or the shared leaf `_LEAF`).

    ``kind`` is None for a leaf. ``data`` is the static part of the container:
    the sorted key list of a dict, the aux data of a custom node, the tuple of
    meta-field values of a dataclass, None otherwise. ``num_nodes`` is computed
    on first use because flattening never needs it.
    """

    __slots__ = ("kind", "data", "children", "num_leaves", "_num_nodes")

    def __init__(
        self, kind: _NodeKind | None, data: Any, children: tuple[_Node, ...], num_leaves: int
    ) -> None:
        self.kind = kind
        self.data = data
        self.children = children
        self.num_leaves = num_leaves
        self._num_nodes = -1

    @property
    def num_nodes(self) -> int:
        n = self._num_nodes
        if n < 0:
            n = 1 + sum(c.num_nodes for c in self.children)
            self._num_nodes = n
        return n


_LEAF = _Node(None, None, (), 1)
_LEAF._num_nodes = 1


class _Registry:
    """A polyjax pytree registry: node kinds by type, plus a type→kind cache.

    ``kinds`` holds what was registered (the built-ins and custom types).
    ``lookup`` caches the classification of every type seen so far, including
    None for leaf types and a fresh kind for each namedtuple class, so the hot
    loops classify any object with a single dict lookup. ``cpp`` is the
    matching jaxlib ``PyTreeRegistry`` once the jaxlib backend created it; every
    later registration is forwarded to it so both registries stay in step.
    """

    def __init__(self) -> None:
        self.kinds: dict[type, _NodeKind] = {}
        self.lookup: dict[type, _NodeKind | None] = {}
        self.custom: list[_NodeKind] = []  # registration order, replayed into `cpp`
        self.cpp: Any = None
        self.cpp_register: Callable[[Any, _NodeKind], None] | None = None
        # Further C++ registries kept in step (e.g. jit's, where Array is a node).
        self.cpp_mirrors: list[Any] = []
        for t, tag in ((tuple, _TUPLE), (list, _LIST), (dict, _DICT), (type(None), _NONE)):
            self.kinds[t] = self.lookup[t] = _NodeKind(t, tag)

    def register(self, kind: _NodeKind) -> None:
        """Adds a custom kind; raises ValueError if its type is already a node."""
        if kind.type in self.kinds:
            raise ValueError(f"Duplicate custom PyTreeDef type registration for {kind.type!r}.")
        if self.cpp is not None and self.cpp_register is not None:
            self.cpp_register(self.cpp, kind)
        if self.cpp_register is not None:
            for mirror in self.cpp_mirrors:
                self.cpp_register(mirror, kind)
        self.kinds[kind.type] = kind
        self.custom.append(kind)
        self.lookup[kind.type] = kind

    def classify(self, t: type) -> _NodeKind | None:
        """The kind of objects of type ``t`` (None for leaves); fills the cache."""
        kind = self.kinds.get(t)
        if kind is None and issubclass(t, tuple) and hasattr(t, "_fields"):
            kind = _NodeKind(t, _NAMEDTUPLE)
        self.lookup[t] = kind
        return kind

    def is_node(self, t: type) -> bool:
        """Whether objects of type ``t`` are pytree containers (not leaves)."""
        kind = self.lookup.get(t, _MISSING)
        return (self.classify(t) if kind is _MISSING else kind) is not None

    def flatten_one_level(self, x: Any) -> tuple[Any, Any]:
        """``(children, aux_data)`` of the container ``x``; ValueError for a leaf."""
        return _take_apart_one_level(self._node_kind(x), x, keyed=False)

    def flatten_one_level_with_keys(self, x: Any) -> tuple[Any, Any]:
        """``([(key, child), ...], aux_data)`` of the container ``x``; ValueError for a leaf."""
        return _take_apart_one_level(self._node_kind(x), x, keyed=True)

    def _node_kind(self, x: Any) -> _NodeKind:
        kind = self.lookup.get(type(x), _MISSING)
        kind = self.classify(type(x)) if kind is _MISSING else kind
        if kind is None:
            raise ValueError(f"can't tree-flatten type: {type(x)}")
        return kind


default_registry = _Registry()
_lookup_get = default_registry.lookup.get
_classify = default_registry.classify
_MISSING: Any = object()  # Any: `lookup.get(t, _MISSING)` is then a kind, None or this
_NONE_NODE = _Node(default_registry.kinds[type(None)], None, (), 0)
_NONE_NODE._num_nodes = 1


def _kind_of(x: Any) -> _NodeKind | None:
    kind = _lookup_get(type(x), _MISSING)
    return _classify(type(x)) if kind is _MISSING else kind


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _custom_children(kind: _NodeKind, x: Any) -> tuple[Any, Any]:
    """Calls a custom flatten function and checks that it returned a pair."""
    out = kind.flatten(x)  # type: ignore[misc]  # custom kinds always have a flatten
    if type(out) is not tuple or len(out) != 2:
        raise ValueError(
            "The to_iterable function for a custom PyTree node should return a "
            f"(children, aux_data) tuple, got {out!r}"
        )
    children, data = out
    try:
        children = tuple(children)
    except TypeError:
        raise ValueError(
            "The to_iterable function for a custom PyTree node should return a "
            f"(children, aux_data) tuple where 'children' is iterable, got {out!r}"
        ) from None
    return children, data


def _take_apart(kind: _NodeKind, x: Any) -> tuple[Any, Any]:
    """(children, data) of a container ``x`` of the given kind."""
    tag = kind.tag
    if tag <= _LIST:
        return x, None
    if tag == _DICT:
        keys = _sorted_keys(x)
        return [x[k] for k in keys], keys
    if tag == _NONE:
        return (), None
    if tag == _NAMEDTUPLE:
        return x, None
    if tag == _DATACLASS:
        return (
            [getattr(x, f) for f in kind.data_fields],
            tuple(getattr(x, f) for f in kind.meta_fields),
        )
    return _custom_children(kind, x)


def _take_apart_one_level(kind: _NodeKind, x: Any, keyed: bool) -> tuple[Any, Any]:
    """One level of flattening as the public API shows it: a dict's aux data is its
    keys as a tuple, a namedtuple's is its class (the engine keeps those in the kind)."""
    if kind.tag == _NONE:
        return (), None
    children, data = _keyed_children(kind, x) if keyed else _take_apart(kind, x)
    if kind.tag == _DICT:
        data = tuple(data)
    elif kind.tag == _NAMEDTUPLE:
        data = kind.type
    return children, data


# --------------------------------------------------------------------------- flatten


def flatten(x: Any, leaves: list) -> _Node:
    """Appends the leaves of ``x`` to ``leaves`` and returns its tree definition."""
    kind = _lookup_get(type(x), _MISSING)
    if kind is _MISSING:
        kind = _classify(type(x))
    if kind is None:
        leaves.append(x)
        return _LEAF
    tag = kind.tag
    if tag <= _LIST:
        children, data = x, None
    elif tag == _NONE:
        return _NONE_NODE
    else:
        children, data = _take_apart(kind, x)
    start = len(leaves)
    kids = []
    for c in children:
        if _lookup_get(type(c), _MISSING) is None:
            leaves.append(c)
            kids.append(_LEAF)
        else:
            kids.append(flatten(c, leaves))
    return _Node(kind, data, tuple(kids), len(leaves) - start)


def flatten_pred(x: Any, leaves: list, is_leaf: Callable[[Any], bool]) -> _Node:
    """Like `flatten`, but any subtree for which ``is_leaf`` is true is a leaf."""
    if is_leaf(x):
        leaves.append(x)
        return _LEAF
    kind = _kind_of(x)
    if kind is None:
        leaves.append(x)
        return _LEAF
    if kind.tag == _NONE:
        return _NONE_NODE
    children, data = _take_apart(kind, x)
    start = len(leaves)
    kids = tuple([flatten_pred(c, leaves, is_leaf) for c in children])
    return _Node(kind, data, kids, len(leaves) - start)


def leaves_only(x: Any, leaves: list) -> None:
    """Appends the leaves of ``x`` to ``leaves`` without building a tree definition."""
    kind = _lookup_get(type(x), _MISSING)
    if kind is _MISSING:
        kind = _classify(type(x))
    if kind is None:
        leaves.append(x)
        return
    tag = kind.tag
    if tag <= _LIST:
        children = x
    elif tag == _NONE:
        return
    else:
        children = _take_apart(kind, x)[0]
    for c in children:
        if _lookup_get(type(c), _MISSING) is None:
            leaves.append(c)
        else:
            leaves_only(c, leaves)


_SEQUENCE_KEYS: list[SequenceKey] = []  # SequenceKey(i) at index i; keys are immutable


def _sequence_keys(n: int) -> list[SequenceKey]:
    """The first ``n`` sequence keys, shared between calls to save allocations."""
    keys = _SEQUENCE_KEYS
    if len(keys) < n:
        keys.extend(SequenceKey(i) for i in range(len(keys), n))
    return keys


def _keyed_children(kind: _NodeKind, x: Any) -> tuple[list, Any]:
    """([(key, child), ...], data) of a container ``x``, for key-path flattening."""
    tag = kind.tag
    if tag <= _LIST:
        return list(zip(_sequence_keys(len(x)), x)), None
    if tag == _DICT:
        keys = _sorted_keys(x)
        return [(DictKey(k), x[k]) for k in keys], keys
    if tag == _NAMEDTUPLE:
        return [(GetAttrKey(f), c) for f, c in zip(kind.type._fields, x)], None
    if tag == _DATACLASS:
        children, data = _take_apart(kind, x)
        return [(GetAttrKey(f), c) for f, c in zip(kind.data_fields, children)], data
    if kind.flatten_with_keys is not None:
        pairs, data = kind.flatten_with_keys(x)
        return list(pairs), data
    children, data = _custom_children(kind, x)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], data


def flatten_with_path(
    x: Any, path: tuple, out: list, is_leaf: Callable[..., bool] | None, takes_path: bool
) -> _Node:
    """Appends ``(key_path, leaf)`` pairs to ``out``; returns the tree definition."""
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        out.append((path, x))
        return _LEAF
    kind = _kind_of(x)
    if kind is None:
        out.append((path, x))
        return _LEAF
    if kind.tag == _NONE:
        return _NONE_NODE
    pairs, data = _keyed_children(kind, x)
    start = len(out)
    kids = []
    for k, c in pairs:
        if is_leaf is None and _lookup_get(type(c), _MISSING) is None:  # a leaf, inline
            out.append(((*path, k), c))
            kids.append(_LEAF)
        else:
            kids.append(flatten_with_path(c, (*path, k), out, is_leaf, takes_path))
    return _Node(kind, data, tuple(kids), len(out) - start)


# --------------------------------------------------------------------------- rebuild


def _build(node: _Node, vals: list) -> Any:
    """Rebuilds one container of kind ``node.kind`` from its rebuilt children."""
    kind = node.kind
    assert kind is not None  # callers pass containers, never the leaf
    tag = kind.tag
    if tag == _TUPLE:
        return tuple(vals)
    if tag == _LIST:
        return vals
    if tag == _DICT:
        return dict(zip(node.data, vals))
    if tag == _NAMEDTUPLE:
        return kind.type(*vals)
    if tag == _DATACLASS:
        kw = dict(zip(kind.data_fields, vals))
        kw.update(zip(kind.meta_fields, node.data))
        return kind.type(**kw)
    assert kind.unflatten is not None  # every custom kind is registered with one
    return kind.unflatten(node.data, tuple(vals))


def _unflatten(node: _Node, nxt: Callable[[], Any]) -> Any:
    if node.kind is None:
        return nxt()
    if node is _NONE_NODE:
        return None
    vals = [nxt() if c is _LEAF else _unflatten(c, nxt) for c in node.children]
    return _build(node, vals)


def unflatten(node: _Node, leaves: Iterable[Any]) -> Any:
    """Builds the tree described by ``node`` with the given leaves."""
    if not isinstance(leaves, (list, tuple)):
        leaves = list(leaves)
    n, expected = len(leaves), node.num_leaves
    if n < expected:
        raise ValueError(f"Too few leaves for PyTreeDef; expected {expected}, got {n}")
    if n > expected:
        raise ValueError(f"Too many leaves for PyTreeDef; expected {expected}.")
    return _unflatten(node, iter(leaves).__next__)


# --------------------------------------------------------------------------- flatten_up_to


_NONE_HINT = (
    "\n\nNote that None is a pytree node with no children, never a prefix of another "
    "value. To treat None as a prefix, map with "
    "is_leaf=lambda x: x is None and test for None in the mapped function."
)


def _mismatch(node: _Node, x: Any) -> str | None:
    """Why ``x`` does not match the top container of ``node`` (None if it does)."""
    kind = node.kind
    assert kind is not None  # callers pass containers, never the leaf
    tag = kind.tag
    xkind = _kind_of(x)
    if tag == _NONE:
        return None if x is None else f"Expected None, got {x!r}.{_NONE_HINT}"
    if tag == _TUPLE or tag == _LIST or tag == _DICT:
        name = ("tuple", "list", "dict")[tag]
        if xkind is not kind:
            return f"Expected {name}, got {x!r}."
        if tag == _DICT:
            keys = _sorted_keys(x)
            if keys != node.data:
                return (
                    f"Dict key mismatch; expected keys: {list(node.data)!r}; "
                    f"present keys: {keys!r}."
                )
        elif len(x) != len(node.children):
            title = name.capitalize()
            return f"{title} arity mismatch: {len(x)} != {len(node.children)}; {name}: {x!r}."
        return None
    if tag == _NAMEDTUPLE:
        if xkind is None or xkind.tag != _NAMEDTUPLE:
            return f"Expected named tuple, got {x!r}."
        if type(x) is not kind.type:
            return f"Named tuple type mismatch: expected type: {kind.type!r}, tuple: {x!r}."
        return None
    what = "dataclass node" if tag == _DATACLASS else "node"
    if xkind is not kind:
        return f"Custom {what} type mismatch: expected type: {kind.type!r}, value: {x!r}."
    children, data = _take_apart(kind, x)
    if data != node.data:
        return f"Mismatch custom {what} data: {node.data!r} != {data!r}; value: {x!r}."
    if len(children) != len(node.children):
        prefix = "Custom dataclass" if tag == _DATACLASS else "Custom type"
        return f"{prefix} arity mismatch: {len(children)} != {len(node.children)}; value: {x!r}."
    return None


def _flatten_up_to(node: _Node, x: Any, out: list) -> None:
    kind = node.kind
    if kind is None:
        out.append(x)
        return
    children = node.children
    tag = kind.tag
    # Fast path: an exact tuple or list of the right length needs no other check.
    subtrees: Any
    if tag <= _LIST and type(x) is kind.type and len(x) == len(children):
        subtrees = x
    else:
        err = _mismatch(node, x)
        if err is not None:
            raise ValueError(err)
        subtrees = _take_apart(kind, x)[0]
    for c, sub in zip(children, subtrees):
        if c is _LEAF:
            out.append(sub)
        else:
            _flatten_up_to(c, sub, out)


def flatten_up_to(node: _Node, x: Any) -> list:
    """The subtrees of ``x`` at the leaf positions of ``node`` (a prefix of ``x``)."""
    out: list = []
    _flatten_up_to(node, x, out)
    return out


# --------------------------------------------------------------------------- structure


def nodes_equal(a: _Node, b: _Node) -> bool:
    """Structural equality of two tree definitions (types, static data, shape)."""
    if a is b:
        return True
    ka, kb = a.kind, b.kind
    if ka is None or kb is None:
        return False
    if ka is not kb and (ka.type is not kb.type or ka.tag != kb.tag):
        return False
    if a.num_leaves != b.num_leaves or len(a.children) != len(b.children):
        return False
    if not (a.data is b.data or a.data == b.data):
        return False
    for x, y in zip(a.children, b.children):
        if x is not y and not nodes_equal(x, y):
            return False
    return True


def node_repr(node: _Node) -> str:
    """The body of a PyTreeDef repr: ``*`` for leaves, Python syntax for containers."""
    kind = node.kind
    if kind is None:
        return "*"
    tag = kind.tag
    kids = [node_repr(c) for c in node.children]
    if tag == _NONE:
        return "None"
    if tag == _TUPLE:
        return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
    if tag == _LIST:
        return "[" + ", ".join(kids) + "]"
    if tag == _DICT:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(node.data, kids)) + "}"
    head = "namedtuple[" + kind.type.__name__ if tag == _NAMEDTUPLE else kind.type.__name__
    data = "" if tag == _NAMEDTUPLE else f"[{node.data}"
    return f"CustomNode({head}{data}], [{', '.join(kids)}])"


def node_data(node: _Node) -> tuple[type, Any] | None:
    """``(type, static data)`` of the top container, or None for a leaf."""
    kind = node.kind
    if kind is None:
        return None
    data = list(node.data) if kind.tag == _DICT else node.data
    return kind.type, data


def make_node(kind: _NodeKind, data: Any, children: Iterable[_Node]) -> _Node:
    """A container node from its parts (used by treedef_tuple, compose and conversions)."""
    kids = tuple(children)
    if kind.tag == _NONE:
        return _NONE_NODE
    return _Node(kind, data, kids, sum(c.num_leaves for c in kids))


def compose(outer: _Node, inner: _Node) -> _Node:
    """``outer`` with every leaf replaced by ``inner``."""
    if outer.kind is None:
        return inner
    if outer is _NONE_NODE:
        return outer
    return make_node(outer.kind, outer.data, [compose(c, inner) for c in outer.children])


TUPLE_KIND = default_registry.kinds[tuple]
