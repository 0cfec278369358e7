"""`stage`: lift a value into the current trace (logically the identity).

Outside any trace it returns an `Array`; inside one, a constant (a Python
scalar or NumPy array) becomes a traced value computed by a `stage` equation,
while a value that is already traced is returned as it is.

Example:
  >>> import numpy as np
  >>> stage(np.float32(2.0))
  Array(2., dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.tracing import Tracer
from polyjax_numpy.lax._declare import standard_primitive

__all__ = ["stage", "stage_p"]


def _abstract_eval(x: ShapedArray) -> ShapedArray:
    return x


stage_p = standard_primitive(
    "stage",
    _abstract_eval,
    lambda ctx, x: [x],
    linear_transpose=lambda ct, x: [ct],
    batching="vectorized",
)


def stage(x: Any, /) -> Any:
    """`x` as a value of the current trace (an `Array` outside any trace).

    Args:
      x: an array, a NumPy value or a Python scalar.

    Returns:
      `x` itself when already traced; otherwise `x` bound through `stage`.
    """
    if isinstance(x, Tracer):
        return x
    return stage_p.bind(x)
