"""Exporting and serializing polyjax functions, with symbolic shapes (`jax.export`).

``export(jit(f))(*specs)`` lowers ``f`` once for (possibly symbolic) shapes
into an `Exported`: a StableHLO artifact with JAX's calling convention.
``symbolic_shape("b, 2*a")`` makes the symbolic dimensions to export with.
`serialize` turns an `Exported` into bytes in JAX's format, `deserialize`
reads bytes that JAX or polyjax wrote, and `Exported.call` runs it on any
arguments its specification accepts, eagerly or under `jit`, `vmap` and
`grad`. See docs/export.md.

Example:
  >>> from polyjax_export import deserialize
  >>> exp = deserialize(open("f.bin", "rb").read())  # doctest: +SKIP
  >>> exp.call(x)  # doctest: +SKIP
"""

from polyjax_core.symbolic_dims import InconclusiveDimensionOperation
from polyjax_export import _call  # noqa: F401  (Exported.call)
from polyjax_export._export import export
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
from polyjax_export._shape_spec import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "InconclusiveDimensionOperation",
    "SymbolicScope",
    "__version__",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata is slow to import.
    if name == "__version__":
        from importlib.metadata import version

        return version("polyjax-export")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
