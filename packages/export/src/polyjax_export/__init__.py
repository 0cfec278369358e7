"""Exporting and serializing polyjax functions, with symbolic shapes.

``export(jit(f))(*specs)`` lowers ``f`` once for (possibly symbolic) shapes
into an ``Exported``: a StableHLO artifact with JAX's calling convention.
``symbolic_shape("b, 2*a")`` makes the symbolic dimensions to export with.
"""

from polyjax_core.symbolic_dims import InconclusiveDimensionOperation
from polyjax_export._shape_spec import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "InconclusiveDimensionOperation",
    "SymbolicScope",
    "__version__",
    "is_symbolic_dim",
    "symbolic_args_specs",
    "symbolic_shape",
]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata is slow to import.
    if name == "__version__":
        from importlib.metadata import version

        return version("polyjax-export")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
