"""Exporting and serializing polyjax functions, with symbolic shapes (`jax.export`).

An `Exported` holds a function lowered to StableHLO for given (possibly
symbolic) argument shapes: `serialize` turns it into bytes in JAX's format,
`deserialize` reads bytes that JAX or polyjax wrote, and `Exported.call` runs
it on any arguments its specification accepts, eagerly or under `jit`,
`vmap` and `grad`. See docs/export.md.

Example:
  >>> from polyjax_export import deserialize
  >>> exp = deserialize(open("f.bin", "rb").read())  # doctest: +SKIP
  >>> exp.call(x)  # doctest: +SKIP
"""

from polyjax_export import _call  # noqa: F401  (Exported.call)
from polyjax_export._exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from polyjax_export._serialization import (
    deserialize,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "__version__",
    "default_export_platform",
    "deserialize",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata is slow to import.
    if name == "__version__":
        from importlib.metadata import version

        return version("polyjax-export")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
