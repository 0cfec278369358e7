"""polyjax-interpreters: the transformations, lowering to StableHLO, and the XLA runtime.

Modules:
  ad: forward and reverse autodiff (`jvp`, `linearize`, `vjp`, `grad`, jacobians).
  batching: `vmap` and named axes.
  partial_eval: splitting jaxprs into known and unknown parts.
  remat: `checkpoint` and its policies.
  custom_derivatives: `custom_jvp`, `custom_vjp`.
  test_util: `check_grads` against finite differences.
  backends: PJRT clients and devices (CPU from jaxlib, GPU/TPU from plugins).
  sharding: the `Sharding` interface and `SingleDeviceSharding`.
  array: `Array`, the concrete array, and moving data (`device_put`...).
  mlir: jaxpr → StableHLO lowering and the per-platform lowering rule tables.
  dispatch: executables, and eager execution of single primitives.
  discharge: turning jaxprs that use mutable references into pure ones (before
    lowering, and for transformations of loops whose bodies use references).
  jit: `jit` (the function is `polyjax_interpreters.jit.jit`; the facade
    exports it as `polyjax.jit`) and the `jit` primitive.
  stages: the ahead-of-time stages `Traced`, `Lowered`, `Compiled`.
  multidevice: running `md_*.py` test files in a pytest process with several
    host CPU devices (for tests; imported on demand, not here).

Nothing here starts a backend at import: clients are created on first use.
"""

import os as _os

# jaxlib's C++ logs at INFO level when a client starts ("PjRt-IFRT device
# count..."); like a quiet JAX session we show warnings and errors only, unless
# the user chose a level. Must be set before jaxlib is loaded.
_os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from polyjax_core import source_info as _source_info  # noqa: E402

# Frames of this package are internal: filtered out of user tracebacks and
# skipped when finding the user's line for an equation.
_source_info.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))

from polyjax_core.versioning import version_getattr as _version_getattr  # noqa: E402
from polyjax_interpreters import (  # noqa: E402 (the exclusion comes first)
    ad,
    array,
    backends,
    batching,
    custom_derivatives,
    discharge,
    dispatch,
    jit,
    mlir,
    partial_eval,
    remat,
    sharding,
    stages,
    test_util,
)
from polyjax_interpreters.array import (  # noqa: E402
    Array,
    block_until_ready,
    device_get,
    device_put,
    from_dlpack,
)
from polyjax_interpreters.backends import (  # noqa: E402
    default_backend,
    device_count,
    devices,
    local_device_count,
    local_devices,
    process_count,
    process_index,
)
from polyjax_interpreters.jit import eval_shape  # noqa: E402
from polyjax_interpreters.sharding import Sharding, SingleDeviceSharding  # noqa: E402
from polyjax_interpreters.stages import Compiled, Lowered, Traced  # noqa: E402

__all__ = [
    "Array",
    "Compiled",
    "Lowered",
    "Sharding",
    "SingleDeviceSharding",
    "Traced",
    "__version__",
    "ad",
    "array",
    "backends",
    "batching",
    "block_until_ready",
    "custom_derivatives",
    "discharge",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "dispatch",
    "eval_shape",
    "from_dlpack",
    "jit",
    "local_device_count",
    "local_devices",
    "mlir",
    "partial_eval",
    "process_count",
    "process_index",
    "remat",
    "sharding",
    "stages",
    "test_util",
]


__getattr__ = _version_getattr(__name__, "polyjax-interpreters")
