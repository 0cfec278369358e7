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

from polyjax_core.errors import (
    ConcretizationTypeError,
    JAXIndexError,
    JaxprTypeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
from polyjax_core.symbolic_dims import InconclusiveDimensionOperation

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",  # noqa: F822  (loaded on first use, in __getattr__)
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]


def __getattr__(name: str) -> Any:
    if name == "JaxRuntimeError":
        from jaxlib import _jax

        globals()[name] = _jax.JaxRuntimeError
        return _jax.JaxRuntimeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
