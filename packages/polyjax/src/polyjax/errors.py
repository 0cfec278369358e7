"""polyjax.errors: the errors polyjax raises, as in ``jax.errors``.

The tracer errors explain what a traced value could not be used for
(``if x:`` under `jit` raises `TracerBoolConversionError`, naming the line);
`JaxRuntimeError` is what XLA raises at compile or run time (jaxlib's class,
loaded on first use so that importing this module does not import jaxlib).

Example:
  >>> from polyjax import errors
  >>> issubclass(errors.TracerBoolConversionError, errors.ConcretizationTypeError)
  True
"""

from typing import Any

from polyjax_core import errors as _core_errors
from polyjax_core.errors import *  # noqa: F403  (re-exported unchanged)
from polyjax_core.symbolic_dims import (
    InconclusiveDimensionOperation as InconclusiveDimensionOperation,
)

# JaxRuntimeError is loaded on first use, in __getattr__.
__all__ = sorted([*_core_errors.__all__, "InconclusiveDimensionOperation", "JaxRuntimeError"])


def __getattr__(name: str) -> Any:
    if name == "JaxRuntimeError":
        from jaxlib import _jax

        globals()[name] = _jax.JaxRuntimeError
        return _jax.JaxRuntimeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
