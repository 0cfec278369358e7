"""polyjax.flatten_util: a pytree of arrays as one flat vector, as ``jax.flatten_util``.

Example:
  >>> import polyjax.numpy as jnp
  >>> from polyjax.flatten_util import ravel_pytree
  >>> flat, unravel = ravel_pytree({"a": jnp.ones(2), "b": jnp.zeros(1)})
  >>> flat
  Array([1., 1., 0.], dtype=float32)
  >>> unravel(flat)["b"]
  Array([0.], dtype=float32)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import polyjax.numpy as jnp
from polyjax.lax import convert_element_type
from polyjax_core.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravels every leaf of ``pytree`` and concatenates them into one 1-D array.

    The leaves are promoted to one dtype (``jnp.result_type`` of all of them);
    the returned function undoes the flattening, giving each leaf its shape and
    dtype back. Both directions are traceable and differentiable.

    Args:
      pytree: a pytree whose leaves are arrays or scalars.

    Returns:
      ``(flat, unravel)``: the 1-D array (float32 and empty for a tree without
      leaves) and a function from such a 1-D array back to a pytree like ``pytree``.

    Raises:
      ValueError: from ``unravel``, if its argument's shape is not ``flat``'s.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.flatten_util import ravel_pytree
      >>> flat, unravel = ravel_pytree([jnp.ones((2, 2)), 3])
      >>> flat
      Array([1., 1., 1., 1., 3.], dtype=float32)
      >>> unravel(flat)[1]
      Array(3, dtype=int32)
    """
    leaves, treedef = tree_flatten(pytree)
    arrays = [jnp.asarray(leaf) for leaf in leaves]
    dtype = jnp.result_type(*leaves) if leaves else jnp.float32
    shapes = [a.shape for a in arrays]
    dtypes = [a.dtype for a in arrays]
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)
    flat = (
        jnp.concatenate([jnp.ravel(a).astype(dtype) for a in arrays])
        if arrays
        else jnp.zeros((0,), dtype)
    )

    def unravel(flat_array: Any) -> Any:
        if jnp.shape(flat_array) != (total,):
            raise ValueError(
                f"unravel expects a 1-D array of shape ({total},) like the raveled pytree, "
                f"got shape {jnp.shape(flat_array)}"
            )
        pieces = jnp.split(flat_array, list(itertools.accumulate(sizes))[:-1]) if arrays else []
        out = [
            convert_element_type(piece.reshape(shape), leaf_dtype)
            for piece, shape, leaf_dtype in zip(pieces, shapes, dtypes)
        ]
        return tree_unflatten(treedef, out)

    return flat, unravel
