"""`pbroadcast` and `pswapaxes`: two collectives composed from the others.

`pbroadcast(x, axis_name, source)` gives every member of the named axis the
value of member `source` (a `psum` of `x` masked to that member).
`pswapaxes(x, axis_name, axis)` exchanges the named axis with positional
axis `axis` of equal size (an `all_to_all` splitting and concatenating
`axis`). Both work wherever their parts do: `vmap` with an `axis_name`,
`shard_map`, `pmap`.

Example:
  >>> import numpy as np
  >>> from polyjax_interpreters.batching import vmap
  >>> out = vmap(lambda v: pbroadcast(v, "i", 2), axis_name="i")(np.arange(3.0, dtype=np.float32))
  >>> np.asarray(out)
  array([2., 2., 2.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._parallel import all_to_all, axis_index, psum
from polyjax_numpy.lax._shape_ops import full_like

__all__ = ["pbroadcast", "pswapaxes"]


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member of `axis_name` receives `x` of member `source`.

    Args:
      x: an array (pytrees are not accepted).
      axis_name: the named axis.
      source: the index (along `axis_name`) of the member whose value is sent.

    Returns:
      `x` of member `source`, on every member.
    """
    mine = ew.eq(axis_index(axis_name), source)
    return psum(ew.select_n(mine, full_like(x, 0), x), axis_name)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swaps the named axis `axis_name` with the positional axis `axis` of `x`.

    Args:
      x: an array whose axis `axis` has the size of `axis_name`.
      axis_name: the named axis.
      axis: the positional axis.
      axis_index_groups: as `all_to_all`'s.

    Returns:
      `x` with the two axes exchanged: member `i` holds, along `axis`, the
      slices `i` of every member's `x`.
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
