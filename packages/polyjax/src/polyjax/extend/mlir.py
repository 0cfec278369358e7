"""polyjax.extend.mlir: StableHLO module utilities, as in ``jax.extend.mlir``.

jaxlib's conversions between StableHLO and its portable (versioned bytecode)
form, HLO-to-StableHLO translation, and shape refinement of modules with
symbolic dimensions:

- `serialize_portable_artifact(module, target)`: a module (or its text) as
  portable bytecode for StableHLO version `target`;
- `deserialize_portable_artifact(data)`: the module text back from that bytecode;
- `hlo_to_stablehlo(computation)`: a serialized ``HloModuleProto`` as StableHLO
  bytecode;
- `refine_polymorphic_shapes(module)`: a module with symbolic shapes made static
  where its arguments' shapes decide them.

`lower_with_sharding_in_types` (a helper of JAX's own lowering rules for
sharding-in-types) is not here: polyjax's lowering rules apply shardings through
`polyjax.interpreters.mlir`.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> from polyjax.extend import mlir
  >>> module = polyjax.jit(lambda x: x * 2).lower(np.float32(1)).compiler_ir()
  >>> data = mlir.serialize_portable_artifact(module, "1.15.0")
  >>> with module.context:
  ...     "stablehlo.multiply" in str(mlir.deserialize_portable_artifact(data))
  True
"""

from jaxlib._jax.mlir import (
    deserialize_portable_artifact,
    hlo_to_stablehlo,
    refine_polymorphic_shapes,
    serialize_portable_artifact,
)

__all__ = [
    "deserialize_portable_artifact",
    "hlo_to_stablehlo",
    "refine_polymorphic_shapes",
    "serialize_portable_artifact",
]
