"""`polyjax.random`: counter-based pseudo-random numbers, bit-identical to JAX's.

Keys are values: make one with `key(seed)`, `split` it to get independent keys,
and give one to each sampler (`uniform`, `normal`, ...). The same key always
gives the same numbers, under `jit`, `vmap` and on every backend.

Example:
  >>> from polyjax_numpy import random
  >>> k1, k2 = random.split(random.key(0))
  >>> random.uniform(k1, (2,)).shape
  (2,)
"""

from polyjax_numpy.random._distributions import bits, normal, randint, uniform
from polyjax_numpy.random._prng import (
    PRNGKey,
    PRNGKeyArray,
    clone,
    fold_in,
    key,
    key_data,
    key_impl,
    split,
    wrap_key_data,
)

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "bits",
    "clone",
    "fold_in",
    "key",
    "key_data",
    "key_impl",
    "normal",
    "randint",
    "split",
    "uniform",
    "wrap_key_data",
]
