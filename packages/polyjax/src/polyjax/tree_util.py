"""polyjax.tree_util: pytrees, as in ``jax.tree_util``.

Flattening nested containers into leaves and a structure (``tree_flatten``),
mapping over leaves (``tree_map``), key paths, and registering new node types
(``register_pytree_node``, ``register_dataclass``, ...). polyjax keeps its own
registry, so registrations made here and in JAX do not mix. Array types that
transformations take apart (typed PRNG key arrays) are leaves here, as in JAX.

Example:
  >>> from polyjax import tree_util
  >>> tree_util.tree_map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
  {'a': 2, 'b': (4, 6)}
"""

from polyjax_core import jax_tree_util as _tree_util
from polyjax_core.jax_tree_util import *  # noqa: F403

__all__ = [n for n in _tree_util.__all__ if n != "register_array_node"]
