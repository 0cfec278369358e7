"""polyjax.debug: looking inside programs, as in ``jax.debug``.

For now: drawing how an array is laid out over devices
(`visualize_array_sharding`, `visualize_sharding`).

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> polyjax.debug.visualize_array_sharding(polyjax.device_put(np.zeros(4)), use_color=False)
  ┌───────────────────────┐
  │         CPU 0         │
  └───────────────────────┘
"""

from polyjax import _runtime  # noqa: F401  (operators on the arrays drawn)
from polyjax_sharding import visualize_array_sharding, visualize_sharding

__all__ = ["visualize_array_sharding", "visualize_sharding"]
