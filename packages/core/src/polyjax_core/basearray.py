"""`Array`: the abstract type of every polyjax array, concrete or traced.

Code written for JAX tests `isinstance(x, jax.Array)` (or `jnp.ndarray`) to
ask "is this an array?", and expects the answer to be the same inside and
outside transformations. So the public `Array` is this abstract class, not the
runtime's concrete one:

* the runtime's device array (`polyjax_interpreters.array.Array`) and other
  array types (typed PRNG key arrays) *register* with it (`Array.register`),
  so they are instances without inheriting anything;
* every tracer whose abstract value is an array is an instance, whatever the
  transformation (`jit`, `grad`, `vmap`, `make_jaxpr`), as in JAX. Tracer
  classes are not subclasses (`issubclass(Tracer, Array)` is False, as in
  JAX): the check looks at the value, not its class.

`type(x)` is unchanged (the concrete class, or the tracer's class), and NumPy
arrays are not instances. Nothing on the dispatch path tests against this
class: internal code checks the concrete types, so the `isinstance` hook
costs only the code that asks.

Example:
  >>> import numpy as np
  >>> isinstance(np.ones(3), Array)
  False
"""

from __future__ import annotations

import abc
from typing import Any

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.tracing import Tracer

__all__ = ["Array"]


class _ArrayMeta(abc.ABCMeta):
    def __instancecheck__(cls, x: Any) -> bool:
        if super().__instancecheck__(x):
            return True
        # Only the root type admits tracers: a subclass of Array is a concrete kind.
        return cls is Array and isinstance(x, Tracer) and isinstance(x.aval, ShapedArray)


class Array(metaclass=_ArrayMeta):
    """The type of polyjax arrays: device arrays, key arrays and tracers of arrays.

    Use it for `isinstance` checks and annotations; arrays are made with
    `polyjax.numpy` functions or `polyjax.device_put`, never by calling `Array`.
    """

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            "Array objects are not created directly; use device_put(x), or the array "
            "functions of polyjax.numpy."
        )
