"""polyjax.dtypes: dtype utilities and JAX's type promotion, as in ``jax.dtypes``.

`result_type` and `promote_types` follow JAX's promotion lattice, where Python
scalars are weakly typed (an ``f32`` array times ``2.0`` stays ``f32``);
`canonicalize_dtype` maps 64-bit types to 32 bits unless ``jax_enable_x64`` is on.

Example:
  >>> import numpy as np
  >>> from polyjax import dtypes
  >>> dtypes.result_type(np.float32, 2.0)
  dtype('float32')
"""

from polyjax_core.dtypes import (
    TypePromotionError,
    bfloat16,
    canonicalize_dtype,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    itemsize_bits,
    prng_key,
    promote_types,
    result_type,
    scalar_type_of,
)

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "promote_types",
    "result_type",
    "scalar_type_of",
]
