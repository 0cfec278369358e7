"""polyjax.tree: short names for the common pytree functions, as in ``jax.tree``.

``polyjax.tree.map(f, t)`` is ``polyjax.tree_util.tree_map(f, t)``, and so on.

Example:
  >>> import polyjax
  >>> polyjax.tree.leaves({"b": [1, 2], "a": 0})
  [0, 1, 2]
"""

import dataclasses
from typing import Any

from polyjax_core.jax_tree_util import tree_all as all  # noqa: A004
from polyjax_core.jax_tree_util import tree_broadcast as broadcast
from polyjax_core.jax_tree_util import tree_flatten as flatten
from polyjax_core.jax_tree_util import tree_flatten_with_path as flatten_with_path
from polyjax_core.jax_tree_util import tree_leaves as leaves
from polyjax_core.jax_tree_util import tree_leaves_with_path as leaves_with_path
from polyjax_core.jax_tree_util import tree_map as map  # noqa: A004
from polyjax_core.jax_tree_util import tree_map_with_path as map_with_path
from polyjax_core.jax_tree_util import tree_reduce as reduce
from polyjax_core.jax_tree_util import tree_reduce_associative as reduce_associative
from polyjax_core.jax_tree_util import tree_structure as structure
from polyjax_core.jax_tree_util import tree_transpose as transpose
from polyjax_core.jax_tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def static(**kwargs: Any) -> Any:
    """A `dataclasses.field` marked static, for `polyjax.tree_util.register_dataclass`.

    Takes the arguments of `dataclasses.field` and adds ``static=True`` to its
    metadata, which makes the field part of the tree structure instead of a child.

    Example:
      >>> import dataclasses, polyjax
      >>> @polyjax.tree_util.register_dataclass
      ... @dataclasses.dataclass
      ... class Op:
      ...     x: float
      ...     name: str = polyjax.tree.static(default="add")
      >>> polyjax.tree.leaves(Op(1.0))
      [1.0]
    """
    metadata = {**(kwargs.pop("metadata", None) or {}), "static": True}
    return dataclasses.field(metadata=metadata, **kwargs)
