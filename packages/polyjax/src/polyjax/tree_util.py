"""polyjax.tree_util: pytrees, as in ``jax.tree_util``.

Flattening nested containers into leaves and a structure (``tree_flatten``),
mapping over leaves (``tree_map``), key paths, and registering new node types
(``register_pytree_node``, ``register_dataclass``, ...). polyjax keeps its own
registry, so registrations made here and in JAX do not mix.

Example:
  >>> from polyjax import tree_util
  >>> tree_util.tree_map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
  {'a': 2, 'b': (4, 6)}
"""

from polyjax_core import tree_util as _tree_util
from polyjax_core.tree_util import *  # noqa: F403

__all__ = list(_tree_util.__all__)
