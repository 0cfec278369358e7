"""polyjax.tree: short names for the common pytree functions, as in ``jax.tree``.

``polyjax.tree.map(f, t)`` is ``polyjax.tree_util.tree_map(f, t)``, and so on.

Example:
  >>> import polyjax
  >>> polyjax.tree.leaves({"b": [1, 2], "a": 0})
  [0, 1, 2]
"""

from polyjax_core.tree_util import tree_all as all  # noqa: A004
from polyjax_core.tree_util import tree_flatten as flatten
from polyjax_core.tree_util import tree_flatten_with_path as flatten_with_path
from polyjax_core.tree_util import tree_leaves as leaves
from polyjax_core.tree_util import tree_leaves_with_path as leaves_with_path
from polyjax_core.tree_util import tree_map as map  # noqa: A004
from polyjax_core.tree_util import tree_map_with_path as map_with_path
from polyjax_core.tree_util import tree_reduce as reduce
from polyjax_core.tree_util import tree_structure as structure
from polyjax_core.tree_util import tree_transpose as transpose
from polyjax_core.tree_util import tree_unflatten as unflatten

__all__ = [
    "all",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "structure",
    "transpose",
    "unflatten",
]
