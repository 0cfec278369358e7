"""Python and library interop: `from_dlpack` (zero-copy import through DLPack) and
`iterable` (whether Python can iterate over a value)."""

from __future__ import annotations

from typing import Any

from polyjax_interpreters.array import from_dlpack


def iterable(y: Any) -> bool:
    """Whether `y` supports Python iteration (rank-0 arrays do not).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.iterable(jnp.arange(3)), jnp.iterable(jnp.float32(1))
      (True, False)
    """
    try:
        iter(y)
    except TypeError:
        return False
    return True


__all__ = ["from_dlpack", "iterable"]
