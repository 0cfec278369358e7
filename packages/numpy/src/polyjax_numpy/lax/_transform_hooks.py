"""What the transformations need from the array library, registered at import.

`polyjax_interpreters` must not import `polyjax_numpy` (the layers go the other
way), yet autodiff has to build arrays of zeros and vmap has to move and
broadcast axes. They ask for these through hooks, which this module fills with
lax operations:

  - `ad.register_zeros_maker`: the zeros of an aval, a `broadcast_in_dim` of a
    rank-0 zero literal (so that a zero under a trace is one cheap equation, not
    a constant the size of the array); `float0` avals get NumPy `float0` zeros,
    which carry no data.
  - `batching.register_array_ops`: `transpose`, `broadcast_in_dim`, `reshape`
    and `reduce_sum`, from which batching builds `moveaxis`, `broadcast`,
    `bdim_at_front` and `matchaxis`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters import ad, batching
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcast_in_dim_p,
    reshape,
    transpose,
)

__all__: list[str] = []


def _zeros_like_aval(aval: Any) -> Any:
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    zero = _convert_element_type(0, aval.dtype, aval.weak_type)
    return broadcast_in_dim_p.bind(
        zero, shape=tuple(aval.shape), broadcast_dimensions=(), sharding=None
    )


ad.register_zeros_maker(_zeros_like_aval)
batching.register_array_ops(
    transpose=transpose,
    broadcast_in_dim=broadcast_in_dim,
    reshape=reshape,
    reduce_sum=reduce_sum,
)
