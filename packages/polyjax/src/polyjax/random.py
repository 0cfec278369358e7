"""polyjax.random: counter-based pseudo-random numbers, as ``jax.random``.

The functions live in polyjax-numpy (``polyjax_numpy.random``); this module
re-exports that public namespace unchanged.

Example:
  >>> import polyjax
  >>> polyjax.random.uniform(polyjax.random.key(0), (2,)).shape
  (2,)
"""

from polyjax_numpy import random as _random
from polyjax_numpy.random import *  # noqa: F403

__all__ = list(_random.__all__)
