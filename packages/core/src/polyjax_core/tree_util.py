"""Pytrees: functions on nested containers, with JAX's ``jax.tree_util`` semantics.

A *pytree* is a nested structure of containers whose non-container parts are
its *leaves*. Transformations such as ``jit``, ``grad`` and ``vmap`` accept
pytrees of arrays: they flatten their arguments into a list of leaves plus a
`PyTreeDef` that remembers the structure, work on the flat list, and rebuild
results with the same or a related structure.

Which types are containers:

* ``tuple``, ``list`` and ``dict`` (children of a dict are taken in sorted key
  order, and rebuilding restores the keys in that order);
* ``None``, a container with no children, so ``tree_leaves(None) == []``;
* every namedtuple class, each its own node type (children are its fields);
* ``collections.OrderedDict`` (insertion order, which is part of the
  structure) and ``collections.defaultdict`` (sorted keys; the
  ``default_factory`` is part of the structure);
* `Partial`, a ``functools.partial`` whose arguments are children;
* any type registered with `register_pytree_node`, `register_pytree_node_class`,
  `register_pytree_with_keys`, `register_dataclass` or `register_static`.

Everything else, including subclasses of registered types, is a leaf. A type
can be registered only once; a second registration raises ValueError.

Key paths. `tree_flatten_with_path` and friends pair every leaf with the tuple
of key entries (`SequenceKey`, `DictKey`, `GetAttrKey`, `FlattenedIndexKey`)
that leads to it; `keystr` renders such a path as ``['a'][0].x``.

The registry is polyjax's own (``default_registry``), never JAX's, so JAX and
polyjax can be imported in one process without interfering.

Backends. The Python engine in ``_pytree`` always works. When jaxlib is
available, flattening can instead run in jaxlib's C++ pytree code, on a private
``PyTreeRegistry`` that receives every registration made here (see
``_pytree_cpp``). The observable behaviour is the same either way: the same
`PyTreeDef` class, reprs, equality and hashing, key classes and error messages.
To guarantee that, the C++ path is used only for the hot operations (flatten,
unflatten, flatten_up_to, equality, children); reprs are always produced by the
Python engine, key-path flattening always runs in Python, and whenever a C++
call raises, the operation is re-run by the Python engine, whose result or error
is the answer. Tree definitions from the two backends compare equal when they
describe the same structure, and hash alike.

The backend is chosen by the environment variable ``POLYJAX_PYTREE_BACKEND``:
``python``, ``jaxlib`` or ``auto`` (the default). ``auto`` never imports jaxlib
itself (that would cost about 26 ms and 75 MB of memory at ``import
polyjax_core``); it switches to the C++ backend as soon as it sees that
something else, such as ``polyjax_interpreters``, has imported ``jaxlib._jax``.
Tests switch explicitly with `_set_backend`.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from polyjax_core import _pytree, _pytree_cpp
from polyjax_core._pytree import _CUSTOM, _DATACLASS, _Node, _NodeKind
from polyjax_core._pytree_keys import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    SequenceKey,
    keystr,
)

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "default_registry",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_broadcast",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_reduce_associative",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_tuple",
]

T = TypeVar("T")
KeyEntry = Any  # SequenceKey | DictKey | GetAttrKey | FlattenedIndexKey | any str()-able key
KeyPath = tuple[Any, ...]

default_registry = _pytree.default_registry
_REGISTRY = default_registry

# --------------------------------------------------------------------------- backend choice

_BACKENDS = ("python", "jaxlib", "auto")
_cpp: Any = None  # the C++ registry while the jaxlib backend is active, else None
_auto_pending = False  # "auto" mode that has not seen jaxlib yet


def _set_backend(name: str) -> str:
    """Selects the pytree backend; returns the previous setting.

    Args:
      name: ``"python"``, ``"jaxlib"`` (raises ImportError without jaxlib) or
        ``"auto"`` (C++ once ``jaxlib._jax`` has been imported by anyone).
    """
    global _cpp, _auto_pending, _backend
    if name not in _BACKENDS:
        raise ValueError(f"Unknown pytree backend {name!r}; expected one of {_BACKENDS}.")
    previous = _backend
    if name == "jaxlib":
        _cpp = _pytree_cpp.create(_REGISTRY)
    else:
        _cpp = None
    _auto_pending = name == "auto"
    _backend = name
    if _auto_pending:
        _check_auto()
    return previous


def _active_backend() -> str:
    """Which engine flattens right now: ``"python"`` or ``"jaxlib"``."""
    if _auto_pending:
        _check_auto()
    return "python" if _cpp is None else "jaxlib"


def _check_auto() -> None:
    """In auto mode, switch to C++ once someone else has imported jaxlib."""
    global _cpp, _auto_pending
    if sys.modules.get("jaxlib._jax") is not None:
        _auto_pending = False
        try:
            _cpp = _pytree_cpp.create(_REGISTRY)
        except Exception:  # an incompatible jaxlib: stay with Python for good
            _cpp = None


_backend = "auto"
_set_backend(os.environ.get("POLYJAX_PYTREE_BACKEND", "auto").strip().lower() or "auto")


def _engine() -> Any:
    """The C++ registry to use for this call, or None for the Python engine."""
    if _auto_pending:
        _check_auto()
    return _cpp


# --------------------------------------------------------------------------- PyTreeDef


class PyTreeDef:
    """The structure of a pytree: everything but its leaves.

    A PyTreeDef is immutable, hashable and comparable; two are equal when they
    describe the same containers (same types, same static data such as dict
    keys or custom aux data) arranged the same way. It is printed with ``*``
    for each leaf, e.g. ``PyTreeDef((*, {'a': *}))``.

    PyTreeDefs are made by `tree_flatten` / `tree_structure`, not constructed
    directly.

    Example:
        >>> leaves, treedef = tree_flatten((1, {'a': 2}))
        >>> treedef
        PyTreeDef((*, {'a': *}))
        >>> treedef.unflatten([3, 4])
        (3, {'a': 4})
    """

    __slots__ = ("_node", "_cpp")

    def __init__(self, node: _Node | None, cpp: Any = None) -> None:
        self._node = node  # the Python form; filled lazily for C++ definitions
        self._cpp = cpp  # jaxlib's PyTreeDef, or None

    @property
    def _py(self) -> _Node:
        node = self._node
        if node is None:
            node = self._node = _pytree_cpp.to_node(self._cpp, _REGISTRY)
        return node

    @property
    def num_leaves(self) -> int:
        """The number of leaves."""
        cpp = self._cpp
        return cpp.num_leaves if cpp is not None else self._node.num_leaves  # type: ignore[union-attr]  # no cpp: a node

    @property
    def num_nodes(self) -> int:
        """The number of nodes, counting containers, leaves and Nones."""
        cpp = self._cpp
        return cpp.num_nodes if cpp is not None else self._node.num_nodes  # type: ignore[union-attr]  # no cpp: a node

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Builds a pytree of this structure from ``leaves``.

        Raises:
          ValueError: if the number of leaves differs from ``num_leaves``.
        """
        cpp = self._cpp
        if cpp is not None:
            if not isinstance(leaves, (list, tuple)):
                leaves = list(leaves)
            try:
                return cpp.unflatten(leaves)
            except Exception:
                pass  # let the Python engine give the answer or the error
        return _pytree.unflatten(self._py, leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flattens ``tree`` only down to this structure's leaf positions.

        This structure must be a prefix of ``tree``'s; the result holds the
        subtrees of ``tree`` found where this structure has leaves.

        Raises:
          ValueError: naming the first container of ``tree`` that does not
            match (wrong type, arity, dict keys or static data).
        """
        cpp = self._cpp
        if cpp is not None:
            try:
                return cpp.flatten_up_to(tree)
            except Exception:
                pass
        return _pytree.flatten_up_to(self._py, tree)

    def children(self) -> list[PyTreeDef]:
        """The structures of the direct children of the top container."""
        cpp = self._cpp
        if cpp is not None and self._node is None:
            return [PyTreeDef(None, c) for c in cpp.children()]
        return [PyTreeDef(c) for c in self._py.children]

    def node_data(self) -> tuple[type, Any] | None:
        """``(type, static data)`` of the top container, or None for a leaf."""
        return _pytree.node_data(self._py)

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by the structure ``inner``."""
        if self._cpp is not None and inner._cpp is not None:
            return PyTreeDef(None, self._cpp.compose(inner._cpp))
        return PyTreeDef(_pytree.compose(self._py, inner._py))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if self._cpp is not None and other._cpp is not None:
            return self._cpp == other._cpp
        return _pytree.nodes_equal(self._py, other._py)

    def __hash__(self) -> int:
        # Must agree between the two representations, so only cheap facts both
        # can report: leaf and node counts and the type of the top container.
        cpp = self._cpp
        if cpp is not None:
            data = cpp.node_data()
            return hash((cpp.num_leaves, cpp.num_nodes, None if data is None else data[0]))
        node = self._node
        assert node is not None  # a definition holds a node or a cpp PyTreeDef
        top = None if node.kind is None else node.kind.type
        return hash((node.num_leaves, node.num_nodes, top))

    def __repr__(self) -> str:
        return f"PyTreeDef({_pytree.node_repr(self._py)})"


# --------------------------------------------------------------------------- flattening


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Flattens a pytree into its leaves and its structure.

    Leaves come in a left-to-right depth-first order (dict entries by sorted key).

    Args:
      tree: the pytree to flatten.
      is_leaf: optional predicate called on every subtree before it is taken
        apart; a subtree for which it returns True is kept whole as a leaf.

    Returns:
      ``(leaves, treedef)``.

    Example:
        >>> tree_flatten([1, (2, 3), {'b': 4, 'a': 5}])
        ([1, 2, 3, 5, 4], PyTreeDef([*, (*, *), {'a': *, 'b': *}]))
    """
    cpp = _cpp if not _auto_pending else _engine()
    if cpp is not None:
        try:
            leaves, cdef = cpp.flatten(tree, is_leaf)
            return leaves, PyTreeDef(None, cdef)
        except Exception:
            pass  # the Python engine decides: same answer, or the canonical error
    leaves = []
    if is_leaf is None:
        node = _pytree.flatten(tree, leaves)
    else:
        node = _pytree.flatten_pred(tree, leaves, is_leaf)
    return leaves, PyTreeDef(node)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds a pytree from its structure and leaves.

    Args:
      treedef: the structure, e.g. from `tree_flatten`.
      leaves: exactly ``treedef.num_leaves`` leaves.

    Returns:
      The pytree.

    Raises:
      ValueError: if the number of leaves is wrong (the message gives both counts).

    Example:
        >>> tree_unflatten(tree_structure((0, [0])), ['a', 'b'])
        ('a', ['b'])
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of a pytree, in flattening order.

    Example:
        >>> tree_leaves({'x': (1, None), 'y': [2]})
        [1, 2]
    """
    cpp = _cpp if not _auto_pending else _engine()
    if cpp is not None:
        try:
            return cpp.flatten(tree, is_leaf)[0]
        except Exception:
            pass
    leaves: list = []
    if is_leaf is None:
        _pytree.leaves_only(tree, leaves)
    else:
        _pytree.flatten_pred(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The `PyTreeDef` of a pytree.

    Example:
        >>> tree_structure((1, [2, None]))
        PyTreeDef((*, [*, None]))
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Applies ``f`` leafwise over one or more pytrees.

    Args:
      f: called as ``f(x, *xs)`` for each leaf ``x`` of ``tree``, where ``xs``
        are the subtrees of ``rest`` at the same position.
      tree: the pytree whose structure the result has.
      *rest: pytrees that each have ``tree``'s structure as a prefix.
      is_leaf: as in `tree_flatten`, applied to ``tree``.

    Returns:
      A pytree shaped like ``tree`` holding the results of ``f``.

    Raises:
      ValueError: if a tree in ``rest`` does not have ``tree`` as a prefix.

    Example:
        >>> tree_map(lambda x, y: x + y, {'a': 1, 'b': (2,)}, {'a': 10, 'b': (20,)})
        {'a': 11, 'b': (22,)}
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _pytree._MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Folds ``function`` over the leaves of a pytree, like ``functools.reduce``.

    Raises:
      TypeError: if the tree has no leaves and no ``initializer`` is given.

    Example:
        >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)])
        6
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _pytree._MISSING:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: Any = _pytree._MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Combines the leaves of a pytree with an associative ``operation``, as a balanced tree.

    The leaves are split in two halves, each reduced recursively, so the nesting
    depth is logarithmic in the number of leaves (``((a+b)+(c+(d+e)))``); the
    result equals `tree_reduce`'s whenever ``operation`` is associative.

    Args:
      operation: an associative function of two values.
      tree: the pytree whose leaves are combined.
      identity: the result for a tree with no leaves.
      is_leaf: optional predicate marking subtrees to treat as leaves.

    Returns:
      The combined value.

    Raises:
      TypeError: if the tree has no leaves and no ``identity`` is given.

    Example:
        >>> tree_reduce_associative(lambda a, b: f"({a}+{b})", [1, 2, 3, 4, 5])
        '((1+2)+(3+(4+5)))'
    """
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _pytree._MISSING:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity

    def reduce(xs: list[Any]) -> Any:
        if len(xs) == 1:
            return xs[0]
        half = len(xs) // 2
        return operation(reduce(xs[:half]), reduce(xs[half:]))

    return reduce(leaves)


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Repeats each leaf of ``prefix_tree`` over the matching subtree of ``full_tree``.

    Args:
      prefix_tree: a pytree whose structure is a prefix of ``full_tree``'s.
      full_tree: the pytree whose structure the result takes.
      is_leaf: optional predicate marking subtrees of ``prefix_tree`` to treat as leaves.

    Returns:
      A pytree with ``full_tree``'s structure whose leaves are those of ``prefix_tree``.

    Raises:
      ValueError: if ``prefix_tree``'s structure is not a prefix of ``full_tree``'s.

    Example:
        >>> tree_broadcast({'a': 1, 'b': 2}, {'a': [4, 5], 'b': (6, (7, 8))})
        {'a': [1, 1], 'b': (2, (2, 2))}
    """
    return _broadcast(prefix_tree, full_tree, is_leaf, None)


def _broadcast(
    prefix_tree: Any,
    full_tree: Any,
    prefix_is_leaf: Callable[[Any], bool] | None,
    full_is_leaf: Callable[[Any], bool] | None,
) -> Any:
    """`tree_broadcast`, with the leaf predicates of both trees given apart."""
    leaves, treedef = tree_flatten(prefix_tree, prefix_is_leaf)
    subtrees = treedef.flatten_up_to(full_tree)
    return treedef.unflatten(
        [tree_map(lambda _, x=x: x, sub, is_leaf=full_is_leaf) for x, sub in zip(leaves, subtrees)]
    )


# Not in __all__ (JAX's tree_util has no such name): for the APIs that take a
# pytree prefix of their operand (device_put, jit's shardings, sharding constraints).
def prefix_subtrees(treedef: PyTreeDef, tree: Any, describe: Callable[[], str]) -> list[Any]:
    """The subtrees of ``tree`` at the leaves of ``treedef``, a prefix of its structure.

    Raises:
      ValueError: ``describe()`` (what was expected of whom), then why
        ``treedef`` is not a prefix of ``tree``'s structure.

    Example:
        >>> treedef = tree_structure({'a': 0, 'b': 0})
        >>> prefix_subtrees(treedef, {'a': [1, 2], 'b': 3}, lambda: 'f')
        [[1, 2], 3]
    """
    try:
        return treedef.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{describe()}: {e}") from None


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every leaf of the pytree is truthy (and for a tree with no leaves).

    Example:
        >>> tree_all([True, (1, None)]), tree_all({'a': 0})
        (True, False)
    """
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every element of ``iterable`` is a leaf rather than a pytree node.

    Example:
        >>> all_leaves([1, 'a']), all_leaves([1, (2,)]), all_leaves([None])
        (True, False, False)
    """
    kind_of = _pytree._kind_of
    if is_leaf is None:
        return all(kind_of(x) is None for x in iterable)
    return all(is_leaf(x) or kind_of(x) is None for x in iterable)


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turns a tree of structure ``outer`` of trees ``inner`` into ``inner`` of ``outer``.

    Args:
      outer_treedef: the structure of the outer tree.
      inner_treedef: the structure shared by the inner trees, or None to infer
        it from the first inner tree.
      pytree_to_transpose: the tree to transpose.

    Returns:
      The transposed tree.

    Raises:
      TypeError: if the leaf counts do not match ``outer`` composed with ``inner``.

    Example:
        >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0, 0))
        >>> tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])
        ([1, 4], [2, 5], [3, 6])
    """
    return _transpose(outer_treedef, inner_treedef, pytree_to_transpose, None)


def _transpose(
    outer_treedef: PyTreeDef,
    inner_treedef: PyTreeDef | None,
    pytree_to_transpose: Any,
    is_leaf: Callable[[Any], bool] | None,
) -> Any:
    """`tree_transpose`, flattening with the leaf predicate ``is_leaf``."""
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError("tree_transpose cannot infer inner_treedef: the outer tree is empty.")
        inner_treedef = tree_structure(subtrees[0], is_leaf)
    flat, treedef = tree_flatten(pytree_to_transpose, is_leaf)
    n_inner, n_outer = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != n_inner * n_outer:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    # Leaf j of inner tree i sits at flat[i * n_inner + j]; column j gathers them.
    columns = [outer_treedef.unflatten(flat[j::n_inner]) for j in range(n_inner)]
    return inner_treedef.unflatten(columns)


# --------------------------------------------------------------------------- treedefs


def is_tree_node(typ: type) -> bool:
    """Whether ``typ`` is a pytree container type (built in, a namedtuple, or registered).

    Example:
        >>> is_tree_node(dict), is_tree_node(type(None)), is_tree_node(int)
        (True, True, False)
    """
    return _REGISTRY.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """Takes apart the top container of ``tree``: its children and its static aux data.

    A dict's aux data is its sorted keys, a namedtuple's its class, a custom
    node's whatever its flatten function returned.

    Raises:
      ValueError: if ``tree`` is a leaf.

    Example:
        >>> flatten_one_level({'b': 1, 'a': (2, 3)})
        ([(2, 3), 1], ('a', 'b'))
    """
    return _REGISTRY.flatten_one_level(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """Like `flatten_one_level`, with each child paired with its key entry.

    Raises:
      ValueError: if ``tree`` is a leaf.

    Example:
        >>> flatten_one_level_with_keys({'b': 1, 'a': 2})
        ([(DictKey(key='a'), 2), (DictKey(key='b'), 1)], ('a', 'b'))
    """
    return _REGISTRY.flatten_one_level_with_keys(tree)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the children of the top container of ``treedef``.

    Example:
        >>> treedef_children(tree_structure((1, [2, 3])))
        [PyTreeDef(*), PyTreeDef([*, *])]
    """
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True when ``treedef`` is the structure of a single leaf.

    Example:
        >>> treedef_is_leaf(tree_structure(1)), treedef_is_leaf(tree_structure(None))
        (True, False)
    """
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the given structures.

    Example:
        >>> treedef_tuple([tree_structure(1), tree_structure([1, 2])])
        PyTreeDef((*, [*, *]))
    """
    defs = list(treedefs)
    if _engine() is not None and all(d._cpp is not None for d in defs):
        return PyTreeDef(None, _pytree_cpp.treedef_tuple(_REGISTRY, [d._cpp for d in defs]))
    return PyTreeDef(_pytree.make_node(_pytree.TUPLE_KIND, None, [d._py for d in defs]))


# --------------------------------------------------------------------------- key paths


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Flattens a pytree like `tree_flatten`, pairing each leaf with its key path.

    Args:
      tree: the pytree.
      is_leaf: optional predicate, called as ``is_leaf(x)`` or, with
        ``is_leaf_takes_path=True``, as ``is_leaf(key_path, x)``.
      is_leaf_takes_path: see ``is_leaf``.

    Returns:
      ``([(key_path, leaf), ...], treedef)``.

    Example:
        >>> tree_flatten_with_path([1, {'x': 3}])[0]
        [((SequenceKey(idx=0),), 1), ((SequenceKey(idx=1), DictKey(key='x')), 3)]
    """
    out: list = []
    node = _pytree.flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, PyTreeDef(node)


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of a pytree (see `tree_flatten_with_path`).

    Example:
        >>> tree_leaves_with_path({'a': (5,)})
        [((DictKey(key='a'), SequenceKey(idx=0)), 5)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like `tree_map`, but ``f`` also receives each leaf's key path first.

    Example:
        >>> tree_map_with_path(lambda p, x: x + p[0].idx, [1, 2, 3])
        [1, 3, 5]
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


# --------------------------------------------------------------------------- registration


def _register(kind: _NodeKind) -> None:
    _REGISTRY.register(kind)


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Any, Any], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]] | None = None,
) -> None:
    """Makes ``nodetype`` a pytree container.

    Args:
      nodetype: the type to register (exactly this type, not its subclasses).
      flatten_func: ``x -> (children, aux_data)``; ``aux_data`` is static,
        hashable and compared for equality of structures.
      unflatten_func: ``(aux_data, children) -> x``.
      flatten_with_keys_func: optional ``x -> (((key, child), ...), aux_data)``
        giving the key paths of the children.

    Raises:
      ValueError: if ``nodetype`` is already a pytree node type.

    Example:
        >>> class Pair:
        ...     def __init__(self, a, b): self.a, self.b = a, b
        >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None), lambda _, c: Pair(*c))
        >>> tree_leaves(Pair(1, (2, 3)))
        [1, 2, 3]
    """
    _register(_NodeKind(nodetype, _CUSTOM, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Any, Any], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Makes ``nodetype`` a pytree container whose children have key paths.

    Args:
      nodetype: the type to register.
      flatten_with_keys: ``x -> (((key, child), ...), aux_data)``.
      unflatten_func: ``(aux_data, children) -> x``.
      flatten_func: optional faster ``x -> (children, aux_data)`` giving the
        same children and aux data; derived from ``flatten_with_keys`` if None.

    Raises:
      ValueError: if ``nodetype`` is already a pytree node type.

    Example:
        >>> class Box:
        ...     def __init__(self, v): self.v = v
        >>> register_pytree_with_keys(
        ...     Box, lambda b: (((GetAttrKey('v'), b.v),), None), lambda _, c: Box(*c))
        >>> tree_leaves_with_path(Box(7))
        [((GetAttrKey(name='v'),), 7)]
    """
    if flatten_func is None:

        def flatten_func(x: T) -> tuple[list[Any], Hashable]:
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux

    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: type[T]) -> type[T]:
    """Class decorator: registers ``cls`` using its ``tree_flatten`` / ``tree_unflatten``.

    ``cls.tree_flatten(self)`` returns ``(children, aux_data)`` and the
    classmethod ``cls.tree_unflatten(aux_data, children)`` rebuilds an instance.

    Returns:
      ``cls`` itself.

    Example:
        >>> @register_pytree_node_class
        ... class Pt:
        ...     def __init__(self, x): self.x = x
        ...     def tree_flatten(self): return (self.x,), None
        ...     @classmethod
        ...     def tree_unflatten(cls, aux, children): return cls(*children)
        >>> tree_leaves([Pt(1), Pt(2)])
        [1, 2]
    """
    # The methods the decorated class defines (unknown to its type variable).
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)  # type: ignore[attr-defined]  # see above
    return cls


def register_pytree_with_keys_class(cls: type[T]) -> type[T]:
    """Class decorator: like `register_pytree_node_class`, with ``tree_flatten_with_keys``.

    Returns:
      ``cls`` itself.
    """
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(
        cls,
        # The methods the decorated class defines (unknown to its type variable).
        lambda x: x.tree_flatten_with_keys(),  # type: ignore[attr-defined]  # see above
        cls.tree_unflatten,  # type: ignore[attr-defined]  # see above
        None if flatten is None else (lambda x: x.tree_flatten()),  # type: ignore[attr-defined]  # see above
    )
    return cls


def register_static(cls: type[T]) -> type[T]:
    """Registers ``cls`` as a node with no children: its instances are pure structure.

    An instance is stored whole in the PyTreeDef, so it must be hashable.

    Returns:
      ``cls`` itself.

    Example:
        >>> @register_static
        ... class Config:
        ...     pass
        >>> tree_leaves([Config(), 1])
        [1]
    """
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def _dataclass_fields(
    nodetype: type, data_fields: Sequence[str] | None, meta_fields: Sequence[str] | None, drop
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (data, meta) field names of a dataclass registration, inferred or checked."""
    is_dc = dataclasses.is_dataclass(nodetype)
    if data_fields is None and meta_fields is None:
        if not is_dc:
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when "
                f"nodetype is not a dataclass. Got nodetype={nodetype!r}."
            )
        data_names: list[str] = []
        meta_names: list[str] = []
        for f in dataclasses.fields(nodetype):
            if f.init and f.name not in drop:
                (meta_names if f.metadata.get("static", False) else data_names).append(f.name)
        return tuple(data_names), tuple(meta_names)
    if data_fields is None or meta_fields is None:
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must both be given, or neither."
        )
    data, meta = tuple(data_fields), tuple(meta_fields)
    if set(data) & set(meta):
        raise ValueError(
            f"register_dataclass: fields {sorted(set(data) & set(meta))} are listed both "
            "as data_fields and as meta_fields."
        )
    if is_dc:
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop)
        given = set(data) | set(meta)
        if given != init:
            raise ValueError(
                "register_dataclass: data_fields and meta_fields must list exactly the "
                f"init fields of {nodetype.__name__} not in drop_fields; missing "
                f"{sorted(init - given)}, unexpected {sorted(given - init)}."
            )
    return data, meta


def register_dataclass(
    nodetype: type[T],
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> type[T]:
    """Registers a dataclass-like type whose fields are children or static metadata.

    Usable as a decorator. Instances are taken apart by reading the fields and
    rebuilt by calling ``nodetype(**fields)``.

    Args:
      nodetype: the class. If it is a dataclass, the field lists may be omitted:
        every ``init`` field is a data field unless its metadata has
        ``static=True`` (``dataclasses.field(metadata=dict(static=True))``),
        which makes it a meta field.
      data_fields: names of the fields that are children (dynamic).
      meta_fields: names of the fields stored in the PyTreeDef (static and
        hashable).
      drop_fields: dataclass fields to leave out entirely (rebuilt from defaults).

    Returns:
      ``nodetype`` itself.

    Raises:
      TypeError: if field lists are missing for a non-dataclass, or only one is given.
      ValueError: if the lists overlap or do not cover the dataclass's init fields;
        or if ``nodetype`` is already registered.

    Example:
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Op:
        ...     x: int
        ...     name: str = dataclasses.field(default='add', metadata=dict(static=True))
        >>> tree_flatten(Op(1))
        ([1], PyTreeDef(CustomNode(Op[('add',)], [*])))
    """
    data, meta = _dataclass_fields(nodetype, data_fields, meta_fields, set(drop_fields))
    _register(_NodeKind(nodetype, _DATACLASS, data_fields=data, meta_fields=meta))
    return nodetype


# --------------------------------------------------------------------------- Partial


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its arguments are its children.

    The wrapped function is static (part of the PyTreeDef); the positional and
    keyword arguments are children, so a Partial can be passed through
    transformations and its bound arguments are traced like any other leaves.
    A Partial of another partial keeps that inner partial as its (static)
    function rather than merging the argument lists.

    Example:
        >>> import operator
        >>> add_one = Partial(operator.add, 1)
        >>> tree_leaves(add_one), add_one(2)
        ([1], 3)
    """

    def __new__(cls, func: Callable[..., Any], *args: Any, **keywords: Any) -> Partial:
        self = super().__new__(cls, func, *args, **keywords)
        if isinstance(func, functools.partial):
            # functools.partial flattens a partial-of-a-partial into one level;
            # restore the two levels so the inner arguments stay static.
            self.__setstate__((func, args, keywords, None))  # type: ignore[attr-defined]  # not in typeshed
        return self


# --------------------------------------------------------------------------- built-in nodes


def _ordered_dict_unflatten(keys: tuple, values: Iterable[Any]) -> collections.OrderedDict:
    return collections.OrderedDict(zip(keys, values))


def _defaultdict_flatten(d: collections.defaultdict) -> tuple[list[Any], tuple]:
    keys = tuple(_pytree._sorted_keys(d))
    return [d[k] for k in keys], (d.default_factory, keys)


def _defaultdict_unflatten(aux: tuple, values: Iterable[Any]) -> collections.defaultdict:
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, values))


def _defaultdict_flatten_with_keys(d: collections.defaultdict) -> tuple[list, tuple]:
    values, aux = _defaultdict_flatten(d)
    return [(DictKey(k), v) for k, v in zip(aux[1], values)], aux


register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d)),
    _ordered_dict_unflatten,
    lambda d: (list(d.values()), tuple(d)),
)
register_pytree_with_keys(
    collections.defaultdict,
    _defaultdict_flatten_with_keys,
    _defaultdict_unflatten,
    _defaultdict_flatten,
)
register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)

# Names re-exported for users who import them from here, as from jax.tree_util.
_ = (FlattenedIndexKey, GetAttrKey, SequenceKey, keystr)
