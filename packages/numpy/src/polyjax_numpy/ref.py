"""Mutable array references (JAX's `jax.ref`): create, read, write, freeze.

A reference is a mutable cell holding an array. Outside a trace it is a
`Ref`; under `jit`, `grad`, `vmap` and in loop bodies it is traced, and the
stateful primitives that read and write it are discharged into functional
code before the program compiles (docs/refs.md).

Example:
  >>> import numpy as np
  >>> r = new_ref(np.zeros(3, np.float32))
  >>> r[0] = 1.0
  >>> r[1:] += np.ones(2, np.float32)
  >>> freeze(r)
  Array([1., 1., 1.], dtype=float32)
"""

from polyjax_core.state import AbstractRef, Ref
from polyjax_numpy.lax._state import (
    addupdate,
    empty_ref,
    free_ref,
    freeze,
    get,
    new_ref,
    set,
    swap,
)

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
