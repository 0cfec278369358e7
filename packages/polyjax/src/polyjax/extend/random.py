"""polyjax.extend.random: the threefry PRNG's pieces, as in ``jax.extend.random``.

Example:
  >>> import numpy as np
  >>> from polyjax.extend import random
  >>> random.threefry_2x32((np.uint32(0), np.uint32(0)), np.zeros(2, np.uint32)).shape
  (2,)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax import numpy as jnp
from polyjax_numpy.lax import threefry2x32, threefry2x32_p

__all__ = ["threefry2x32_p", "threefry_2x32"]


def threefry_2x32(keypair: tuple[Any, Any], count: Any) -> Any:
    """The Threefry-2x32 hash of the uint32 array `count` under the key `keypair`.

    The counts are flattened, padded with a zero to an even length, and their
    two halves hashed as the pairs `(first[i], second[i])`.

    Args:
      keypair: two uint32 scalars, the key.
      count: a uint32 array.

    Returns:
      A uint32 array shaped like `count`.

    Raises:
      TypeError: the key or the counts are not uint32.
    """
    key1, key2 = (jnp.asarray(k) for k in keypair)
    count = jnp.asarray(count)
    for what, x in (("key", key1), ("key", key2), ("count", count)):
        if x.dtype != np.uint32:
            raise TypeError(f"threefry_2x32 requires uint32 arguments, got {what} of {x.dtype}.")
    flat = count.ravel()
    odd = flat.shape[0] % 2
    if odd:
        flat = jnp.concatenate([flat, jnp.zeros(1, np.uint32)])
    half = flat.shape[0] // 2
    x = threefry2x32(key1, key2, flat[:half], flat[half:])
    out = jnp.concatenate(x)
    return (out[:-1] if odd else out).reshape(count.shape)
