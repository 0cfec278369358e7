"""`copy_to_host_async`: start copying every array of a pytree to the host.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> x = polyjax.device_put(np.ones(2, np.float32))
  >>> copy_to_host_async({"x": x})["x"] is x
  True
"""

from __future__ import annotations

from typing import Any

from polyjax_core.tree_util import tree_leaves
from polyjax_interpreters.array import Array

__all__ = ["copy_to_host_async"]


def copy_to_host_async(x: Any) -> Any:
    """Starts the device-to-host copy of each array in `x`, without waiting; returns `x`.

    A later `device_get` or `np.asarray` then finds the values on the host.
    Leaves that are not arrays are left alone.

    Args:
      x: a pytree.

    Returns:
      `x` itself.
    """
    for leaf in tree_leaves(x):
        if isinstance(leaf, Array):
            leaf.copy_to_host_async()
    return x
