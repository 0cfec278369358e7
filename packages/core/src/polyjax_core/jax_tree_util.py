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

import functools
import inspect
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from polyjax_core import tree_util as _tu
from polyjax_core.tree_util import (  # noqa: F401  (re-exported unchanged, in __all__)
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


def _leaf(
    is_leaf: Callable[..., bool] | None, takes_path: bool = False
) -> Callable[..., bool] | None:
    """``is_leaf`` extended to stop at array nodes (called with the key path first
    when ``takes_path``)."""
    nodes = _ARRAY_NODES
    if not nodes:
        return is_leaf
    if takes_path:
        if is_leaf is None:
            return lambda p, x: type(x) in nodes
        return lambda p, x: is_leaf(p, x) or type(x) in nodes
    if is_leaf is None:
        return lambda x: type(x) in nodes
    return lambda x: is_leaf(x) or type(x) in nodes


_LEAF_ARGS = ("is_leaf", "is_leaf_takes_path")


def _array_leaves(core_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``core_fn`` (a `polyjax_core.tree_util` function with an ``is_leaf``
    argument), with the same signature, but array nodes are leaves."""
    # Where the two arguments can come positionally (None: keyword-only). Binding the
    # full signature on each call would cost more than the flattening itself.
    positional = [
        p.name
        for p in inspect.signature(core_fn).parameters.values()
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    ]
    leaf_at, path_at = (positional.index(n) if n in positional else None for n in _LEAF_ARGS)

    @functools.wraps(core_fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if path_at is not None and len(args) > path_at:
            takes_path = args[path_at]
        else:
            takes_path = kwargs.get("is_leaf_takes_path", False)
        if leaf_at is not None and len(args) > leaf_at:
            args = (*args[:leaf_at], _leaf(args[leaf_at], takes_path), *args[leaf_at + 1 :])
        else:
            kwargs["is_leaf"] = _leaf(kwargs.get("is_leaf"), takes_path)
        return core_fn(*args, **kwargs)

    wrapper.__doc__ = (
        f"`polyjax_core.tree_util.{core_fn.__name__}`, with array nodes as leaves.\n\n"
        f"{core_fn.__doc__}"
    )
    return wrapper


tree_flatten = _array_leaves(_tu.tree_flatten)
tree_leaves = _array_leaves(_tu.tree_leaves)
tree_structure = _array_leaves(_tu.tree_structure)
tree_map = _array_leaves(_tu.tree_map)
tree_reduce = _array_leaves(_tu.tree_reduce)
tree_reduce_associative = _array_leaves(_tu.tree_reduce_associative)
tree_all = _array_leaves(_tu.tree_all)
all_leaves = _array_leaves(_tu.all_leaves)
tree_flatten_with_path = _array_leaves(_tu.tree_flatten_with_path)
tree_leaves_with_path = _array_leaves(_tu.tree_leaves_with_path)
tree_map_with_path = _array_leaves(_tu.tree_map_with_path)


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """`polyjax_core.tree_util.tree_broadcast`, with array nodes as leaves.

    Example:
        >>> tree_broadcast({"a": 1}, {"a": [4, 5]})
        {'a': [1, 1]}
    """
    return _tu._broadcast(prefix_tree, full_tree, _leaf(is_leaf), _leaf(None))


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
