"""Operand handling shared by the special functions (and the distributions built on them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u


def inexact_args(name: str, *args: Any, real: bool = True) -> list[Any]:
    """Checks `args`, promotes them to one inexact dtype and broadcasts them to one shape.

    Integers and bools become the default float type; Python scalars stay
    weakly typed, as in every `jax.scipy.special` function.

    Raises:
      TypeError: an argument is not array-like, or (with `real`) is complex.
    """
    args = _u.promote_args_inexact(name, *args)
    if real and args and _u.issubdtype_of(args[0], np.complexfloating):
        raise TypeError(f"{name} does not support complex-valued inputs, got {_u.dtype(args[0])}.")
    if len(args) == 1:
        # Host arrays become polyjax arrays: NumPy's operators would promote by NumPy's rules.
        return [jnp.asarray(args[0])]
    args = jnp.broadcast_arrays(*args)
    # Python scalars stay weak beside strong arrays in `promote_args_inexact`; here every
    # operand takes the result's weak type, so that a result computed from the
    # scalars alone (`-log(scale)`) is typed as one computed from all operands.
    weak = all(_u.aval(x).weak_type for x in args)
    return [_u.convert(x, _u.dtype(x), weak) for x in args]


def full_like(x: Any, value: float) -> Any:
    """An array of `x`'s shape and dtype filled with `value`."""
    return jnp.full_like(x, value)


def finfo(x: Any) -> Any:
    """`np.finfo` of `x`'s (floating) dtype."""
    return jnp.finfo(_u.dtype(x))
