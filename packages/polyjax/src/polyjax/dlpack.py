"""polyjax.dlpack: exchanging arrays with other libraries through DLPack.

`Array` implements ``__dlpack__`` and ``__dlpack_device__``, so
``np.from_dlpack(x)`` works on it; `from_dlpack` goes the other way.

Example:
  >>> import numpy as np
  >>> import polyjax.dlpack
  >>> polyjax.dlpack.from_dlpack(np.arange(3, dtype=np.float32))
  Array([0., 1., 2.], dtype=float32)
"""

from polyjax import _runtime  # noqa: F401  (operators on the arrays it returns)
from polyjax_interpreters.array import from_dlpack

__all__ = ["from_dlpack"]
