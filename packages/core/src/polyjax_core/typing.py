"""Static type annotations for polyjax code, as in ``jax.typing``.

- `ArrayLike`: any value that converts implicitly to an array: a polyjax
  `Array` (device array, key array or tracer), a NumPy array or scalar, or a
  Python ``bool``/``int``/``float``/``complex``.
- `DTypeLike`: any value that names a dtype: a string (``"float32"``), a scalar
  type (``float``, ``np.int32``), a ``np.dtype``, or an object with a ``dtype``
  attribute (``jnp.float32``).

Annotate inputs with `ArrayLike` and outputs with `Array`:

Example:
  >>> from polyjax_core.basearray import Array
  >>> def norm2(x: ArrayLike) -> Array: ...
  >>> import numpy as np
  >>> isinstance(np.float32(1), ArrayLike.__args__)
  True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np

from polyjax_core.basearray import Array
from polyjax_core.dtypes import DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]


# `Union[...]` rather than `|`: the members must stay inspectable at run time
# (`ArrayLike.__args__`) on every supported Python, and `type[Any] | ...` is not.
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]  # noqa: UP007

# The `shape` argument of public functions (`random.normal(key, shape)`). Shared by the
# packages' annotations; not one of `jax.typing`'s public names, so not in `__all__`.
Shape = Sequence[int]
