"""polyjax.extend: what libraries built on polyjax use, as in ``jax.extend``.

- `core`: `Primitive` (declare one, then register its rules in
  `polyjax.interpreters`), the jaxpr types (`Jaxpr`, `ClosedJaxpr`,
  `JaxprEqn`, `Var`, `Literal`), `jaxpr_as_fun`, `new_jaxpr_eqn`,
  `check_jaxpr`, effects;
- `backend`: `get_backend`, `backends`, `get_default_device`, `clear_backends`;
- `linear_util`: `WrappedFun`, `wrap_init`;
- `lowering`: `LoweringRuleContext` (what a lowering rule receives);
- `mlir`: jaxlib's StableHLO utilities (portable artifacts, HLO to StableHLO,
  shape refinement);
- `random`: the threefry primitive and `threefry_2x32` (PRNG implementations
  are chosen by name with `jax_default_prng_impl`);
- `sharding`: `GSPMDSharding` and XLA's sharding protos;
- `source_info_util`: source locations and name stacks.

Left out, with reasons (docs/api-coverage.md): `xla` (custom HLO passes in
JAX's compiler pipeline), `pallas` (a kernel language polyjax does not
implement).

Example:
  >>> import numpy as np
  >>> from polyjax.extend.core import Primitive
  >>> from polyjax.interpreters import mlir
  >>> from jaxlib.mlir.dialects import stablehlo as hlo
  >>> double_p = Primitive("double")
  >>> _ = double_p.def_abstract_eval(lambda x: x)
  >>> _ = mlir.register_lowering(double_p, lambda ctx, x: [hlo.add(x, x)])
  >>> import polyjax
  >>> polyjax.jit(double_p.bind)(np.float32(2.0))
  Array(4., dtype=float32)
"""

from polyjax.extend import (
    backend,
    core,
    linear_util,
    lowering,
    mlir,
    random,
    sharding,
    source_info_util,
)

__all__ = [
    "backend",
    "core",
    "linear_util",
    "lowering",
    "mlir",
    "random",
    "sharding",
    "source_info_util",
]
