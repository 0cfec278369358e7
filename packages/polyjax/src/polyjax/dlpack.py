"""polyjax.dlpack: exchanging arrays with other libraries through DLPack.

`Array` implements ``__dlpack__`` and ``__dlpack_device__``, so
``np.from_dlpack(x)`` works on it; `from_dlpack` goes the other way.
`is_supported_dtype` says which dtypes can cross.

Example:
  >>> import numpy as np
  >>> import polyjax.dlpack
  >>> polyjax.dlpack.from_dlpack(np.arange(3, dtype=np.float32))
  Array([0., 1., 2.], dtype=float32)
"""

from typing import Any

import ml_dtypes
import numpy as np

from polyjax import _runtime  # noqa: F401  (operators on the arrays it returns)
from polyjax_interpreters.array import from_dlpack

__all__ = ["from_dlpack", "is_supported_dtype"]

# DLPack's type codes cover booleans, integers, IEEE floats, bfloat16 and complex
# numbers; the narrow types (int4, the float8 family) have none.
_DLPACK_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
        np.uint64, np.float16, np.float32, np.float64, ml_dtypes.bfloat16, np.complex64,
        np.complex128,
    )
)  # fmt: skip


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack.

    Args:
      dtype: a dtype-like (a NumPy or ml_dtypes type, a name, a `np.dtype`).

    Returns:
      True for booleans, 8- to 64-bit integers, float16/32/64, bfloat16 and
      complex64/128; False otherwise (int4, float8 types, ...).

    Example:
      >>> import numpy as np
      >>> is_supported_dtype(np.float32), is_supported_dtype("int4")
      (True, False)
    """
    try:
        return np.dtype(dtype) in _DLPACK_DTYPES
    except TypeError:
        return False
