"""Exporting and serializing polyjax functions, with symbolic shapes (`jax.export`).

``export(jit(f))(*specs)`` lowers ``f`` once for (possibly symbolic) shapes
into an `Exported`: a StableHLO artifact with JAX's calling convention.
``symbolic_shape("b, 2*a")`` makes the symbolic dimensions to export with.
`serialize` turns an `Exported` into bytes in JAX's format, `deserialize`
reads bytes that JAX or polyjax wrote, and `Exported.call` runs it on any
arguments its specification accepts, eagerly or under `jit`, `vmap` and
`grad`. See docs/export.md.

Example:
  >>> import numpy as np
  >>> import polyjax_numpy.numpy as jnp
  >>> from polyjax_core import ShapeDtypeStruct
  >>> from polyjax_export import deserialize, export, symbolic_shape
  >>> from polyjax_interpreters.jit import jit
  >>> b, = symbolic_shape("b")
  >>> exp = export(jit(lambda x: jnp.sum(x * 2, axis=1)))(ShapeDtypeStruct((b, 3), np.float32))
  >>> exp.in_avals
  (ShapedArray(float32[b,3]),)
  >>> blob = exp.serialize()  # bytes in JAX's format: save them, load them elsewhere
  >>> print(deserialize(blob).call(np.ones((2, 3), np.float32)))
  [6. 6.]
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
