"""JAX's view of pytrees: `tree_util` with array-like nodes shown as leaves.

Some array types are, inside polyjax, pytree nodes around plain arrays: a typed
PRNG key array is a node whose one child is its ``uint32`` key data. That is how
transformations carry them: ``jit``, ``vmap``, ``grad``, ``scan`` ... flatten
their arguments with `polyjax_core.tree_util` and see the key data, and rebuild
the key array around whatever stands for the data (a tracer, a batched value)
on the way out. To a user, though, such an object is an array, and JAX's pytree
functions treat it as one leaf.

This module is that user view: the functions of `polyjax_core.tree_util` (the
same names, signatures and `PyTreeDef` class), except that types registered with
`register_array_node` are leaves. The public ``polyjax.tree_util`` and
``polyjax.tree`` are this module; the rest of polyjax uses `tree_util`.

Decision: a tree definition from this module has a leaf where the array-like node
is; unflattening it (or `PyTreeDef.flatten_up_to`) therefore never reaches into
the node, so the two views can be mixed only through leaves, never through
tree definitions.

Example:
  >>> import numpy as np
  >>> class Boxed:  # an array-like type that transformations see through
  ...     def __init__(self, data): self.data = data
  >>> register_array_node(
  ...     Boxed, lambda b: ((b.data,), None), lambda _, c: Boxed(c[0]), lambda b: 0
  ... )
  >>> len(tree_leaves({"a": Boxed(np.zeros(2)), "b": 1.0}))
  2
  >>> from polyjax_core import tree_util
  >>> type(tree_util.tree_leaves(Boxed(np.zeros(2)))[0]).__name__
  'ndarray'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

from polyjax_core import _pytree
from polyjax_core import tree_util as _tu
from polyjax_core.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    default_registry,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

__all__ = [*_tu.__all__, "register_array_node", "trailing_ndims"]

# array node type -> the number of trailing axes its data has beyond its shape
_ARRAY_NODES: dict[type, Callable[[Any], int]] = {}


def register_array_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Iterable[Any]], Any],
    trailing_ndim: Callable[[Any], int],
) -> None:
    """Registers an array type that transformations take apart but users see as a leaf.

    ``nodetype`` becomes a pytree node of `polyjax_core.tree_util` (as with
    `register_pytree_node`) and a leaf of this module's functions. Its one child
    is its data, whose leading axes are the array's own.

    Args:
      nodetype: the array type.
      flatten_func: ``x -> ((data,), aux_data)``.
      unflatten_func: ``(aux_data, (data,)) -> x``; it may receive any stand-in
        for the data (a tracer, an abstract value, an index).
      trailing_ndim: ``x -> n``, the number of axes the data has after the
        array's own (1 for threefry keys, whose data is ``uint32[..., 2]``); it
        must not look at the data.
    """
    _tu.register_pytree_node(nodetype, flatten_func, unflatten_func)
    _ARRAY_NODES[nodetype] = trailing_ndim


def trailing_ndims(treedef: PyTreeDef) -> list[int]:
    """For each leaf of ``treedef`` (a `polyjax_core.tree_util` structure), how many
    trailing data axes it has beyond the array it stands for: 0 for plain leaves.

    Transformations use it to count negative axes (``vmap(in_axes=-1)``) from the
    end of the array a user sees rather than from the end of its data.
    """
    n = treedef.num_leaves
    out = [0] * n
    if not _ARRAY_NODES:
        return out
    for x in tree_leaves(treedef.unflatten(list(range(n)))):
        trailing = _ARRAY_NODES.get(type(x))
        if trailing is not None:
            t = trailing(x)
            for i in _tu.tree_leaves(x):
                out[i] = t
    return out


def _leaf(is_leaf: Callable[[Any], bool] | None) -> Callable[[Any], bool] | None:
    """``is_leaf`` extended to stop at array nodes."""
    if not _ARRAY_NODES:
        return is_leaf
    nodes = _ARRAY_NODES
    if is_leaf is None:
        return lambda x: type(x) in nodes
    return lambda x: is_leaf(x) or type(x) in nodes


def _leaf_with_path(
    is_leaf: Callable[..., bool] | None, takes_path: bool
) -> Callable[..., bool] | None:
    if not takes_path:
        return _leaf(is_leaf)
    nodes = _ARRAY_NODES
    if is_leaf is None:
        return (lambda p, x: type(x) in nodes) if nodes else None
    return lambda p, x: is_leaf(p, x) or type(x) in nodes


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """`polyjax_core.tree_util.tree_flatten`, with array nodes as leaves.

    Example:
        >>> tree_flatten([1, (2, 3)])
        ([1, 2, 3], PyTreeDef([*, (*, *)]))
    """
    return _tu.tree_flatten(tree, _leaf(is_leaf))


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """`polyjax_core.tree_util.tree_leaves`, with array nodes as leaves.

    Example:
        >>> tree_leaves({"b": [1, 2], "a": 0})
        [0, 1, 2]
    """
    return _tu.tree_leaves(tree, _leaf(is_leaf))


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """`polyjax_core.tree_util.tree_structure`, with array nodes as leaves.

    Example:
        >>> tree_structure({"a": 1})
        PyTreeDef({'a': *})
    """
    return _tu.tree_structure(tree, _leaf(is_leaf))


def tree_map(
    f: Callable[..., Any], tree: Any, *rest: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """`polyjax_core.tree_util.tree_map`, with array nodes as leaves.

    Example:
        >>> tree_map(lambda x: x + 1, {"a": 1, "b": (2,)})
        {'a': 2, 'b': (3,)}
    """
    return _tu.tree_map(f, tree, *rest, is_leaf=_leaf(is_leaf))


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _pytree._MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """`polyjax_core.tree_util.tree_reduce`, with array nodes as leaves.

    Example:
        >>> tree_reduce(lambda a, b: a + b, [1, (2, 3)])
        6
    """
    return _tu.tree_reduce(function, tree, initializer, _leaf(is_leaf))


def tree_reduce_associative(
    operation: Callable[[Any, Any], Any],
    tree: Any,
    *,
    identity: Any = _pytree._MISSING,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """`polyjax_core.tree_util.tree_reduce_associative`, with array nodes as leaves.

    Example:
        >>> tree_reduce_associative(lambda a, b: a + b, [1, 2, 3])
        6
    """
    return _tu.tree_reduce_associative(operation, tree, identity=identity, is_leaf=_leaf(is_leaf))


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """`polyjax_core.tree_util.tree_broadcast`, with array nodes as leaves.

    Example:
        >>> tree_broadcast({"a": 1}, {"a": [4, 5]})
        {'a': [1, 1]}
    """
    return _tu._broadcast(prefix_tree, full_tree, _leaf(is_leaf), _leaf(None))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """`polyjax_core.tree_util.tree_all`, with array nodes as leaves.

    Example:
        >>> tree_all([True, (1, None)])
        True
    """
    return _tu.tree_all(tree, is_leaf=_leaf(is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """`polyjax_core.tree_util.all_leaves`, with array nodes as leaves.

    Example:
        >>> all_leaves([1, "a"]), all_leaves([1, (2,)])
        (True, False)
    """
    return _tu.all_leaves(iterable, _leaf(is_leaf))


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """`polyjax_core.tree_util.tree_transpose`, with array nodes as leaves.

    Example:
        >>> outer, inner = tree_structure([0, 0]), tree_structure((0, 0))
        >>> tree_transpose(outer, inner, [(1, 2), (3, 4)])
        ([1, 3], [2, 4])
    """
    return _tu._transpose(outer_treedef, inner_treedef, pytree_to_transpose, _leaf(None))


def is_tree_node(typ: type) -> bool:
    """`polyjax_core.tree_util.is_tree_node`; False for array nodes.

    Example:
        >>> is_tree_node(dict), is_tree_node(int)
        (True, False)
    """
    return typ not in _ARRAY_NODES and _tu.is_tree_node(typ)


def _check_node(tree: Any) -> None:
    if type(tree) in _ARRAY_NODES:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """`polyjax_core.tree_util.flatten_one_level`; array nodes are leaves (ValueError).

    Example:
        >>> flatten_one_level({"b": 1, "a": 2})
        ([2, 1], ('a', 'b'))
    """
    _check_node(tree)
    return _tu.flatten_one_level(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """`polyjax_core.tree_util.flatten_one_level_with_keys`; array nodes are leaves.

    Example:
        >>> flatten_one_level_with_keys([5])
        ([(SequenceKey(idx=0), 5)], None)
    """
    _check_node(tree)
    return _tu.flatten_one_level_with_keys(tree)


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """`polyjax_core.tree_util.tree_flatten_with_path`, with array nodes as leaves.

    Example:
        >>> tree_flatten_with_path({"x": 3})[0]
        [((DictKey(key='x'),), 3)]
    """
    return _tu.tree_flatten_with_path(
        tree, _leaf_with_path(is_leaf, is_leaf_takes_path), is_leaf_takes_path
    )


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """`polyjax_core.tree_util.tree_leaves_with_path`, with array nodes as leaves.

    Example:
        >>> tree_leaves_with_path([7])
        [((SequenceKey(idx=0),), 7)]
    """
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """`polyjax_core.tree_util.tree_map_with_path`, with array nodes as leaves.

    Example:
        >>> tree_map_with_path(lambda p, x: x + p[0].idx, [1, 2])
        [1, 3]
    """
    return _tu.tree_map_with_path(
        f,
        tree,
        *rest,
        is_leaf=_leaf_with_path(is_leaf, is_leaf_takes_path),
        is_leaf_takes_path=is_leaf_takes_path,
    )


# Names taken unchanged from `tree_util`, re-exported as part of this module's API.
_ = (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    Partial,
    SequenceKey,
    default_registry,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)
