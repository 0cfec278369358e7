"""`polyjax.numpy`: NumPy's API on polyjax arrays, with JAX's semantics.

Arrays are immutable (use `x.at[idx].set(v)`), shapes are static, and dtypes
promote on JAX's lattice, where Python scalars are weakly typed. Every function
is built from `lax` primitives, so it works under `jit`, `grad` and `vmap`.

Example:
  >>> import polyjax.numpy as jnp
  >>> x = jnp.arange(6.0).reshape(2, 3)
  >>> jnp.sum(x * 2, axis=0)
  Array([ 6., 10., 14.], dtype=float32)

Modules (private): `_util` (operands, promotion), `_creation`, `_manipulation`,
`_ufuncs` (elementwise arithmetic), `_products` (`matmul`, ...), `_reductions`,
`_indexing` (`x[idx]`, `take`, `put`, ...), `_index_update` (`x.at[idx]`).
"""

from polyjax_numpy.numpy._creation import array, asarray
from polyjax_numpy.numpy._indexing import put, put_along_axis, take, take_along_axis
from polyjax_numpy.numpy._manipulation import (
    astype,
    conj,
    conjugate,
    imag,
    matrix_transpose,
    ravel,
    real,
    reshape,
    squeeze,
    transpose,
)
from polyjax_numpy.numpy._products import matmul
from polyjax_numpy.numpy._reductions import argmax, argmin, max, mean, min, prod, sum
from polyjax_numpy.numpy._ufuncs import (
    absolute,
    add,
    bitwise_and,
    bitwise_or,
    bitwise_xor,
    divmod,
    equal,
    floor_divide,
    greater,
    greater_equal,
    invert,
    left_shift,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    positive,
    power,
    remainder,
    right_shift,
    subtract,
    true_divide,
)

__all__ = [
    "absolute",
    "add",
    "argmax",
    "argmin",
    "array",
    "asarray",
    "astype",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "conj",
    "conjugate",
    "divmod",
    "equal",
    "floor_divide",
    "greater",
    "greater_equal",
    "imag",
    "invert",
    "left_shift",
    "less",
    "less_equal",
    "matmul",
    "matrix_transpose",
    "max",
    "mean",
    "min",
    "multiply",
    "negative",
    "not_equal",
    "positive",
    "power",
    "prod",
    "put",
    "put_along_axis",
    "ravel",
    "real",
    "remainder",
    "reshape",
    "right_shift",
    "squeeze",
    "subtract",
    "sum",
    "take",
    "take_along_axis",
    "transpose",
    "true_divide",
]
