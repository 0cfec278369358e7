"""polyjax: composable transformations of Python+NumPy programs, compiled by XLA.

This is the JAX-shaped public namespace. Programs written for JAX change one
import::

    import polyjax as jax

    @jax.jit
    def f(x, y):
        return jax.lax.sin(x) * 2.0 + y

Every public name is loaded on first use. ``import polyjax`` itself imports
nothing but the standard library: jaxlib, the XLA client and the lowering
machinery are imported when a name that needs them (``jit``, ``devices``,
``Array``, ``lax``, ...) is first looked up, and no backend starts before a
device is asked for. ``polyjax.__all__`` lists every public name; ``dir(polyjax)``
shows them without loading any.

Example:
  >>> import polyjax
  >>> polyjax.config.update("jax_enable_checks", False)
  >>> polyjax.config.jax_enable_checks
  False
  >>> "jit" in dir(polyjax)
  True
"""

from __future__ import annotations

import importlib as _importlib
import sys as _sys

# `typing` alone costs more than the rest of this module to import, and type
# checkers need the real names: they see them here, the interpreter never does.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from polyjax import (
        ad_checkpoint,
        custom_batching,
        custom_derivatives,
        debug,
        distributed,
        dlpack,
        dtypes,
        errors,
        export,
        extend,
        ffi,
        image,
        interpreters,
        lax,
        monitoring,
        nn,
        numpy,
        ops,
        profiler,
        random,
        ref,
        scipy,
        sharding,
        stages,
        test_util,
        tree,
        tree_util,
        typing,
        version,
    )
    from polyjax._copy_to_host import copy_to_host_async
    from polyjax._custom_gradient import closure_convert, custom_gradient
    from polyjax._environment import live_arrays, print_environment_info
    from polyjax._fwd_and_bwd import fwd_and_bwd
    from polyjax._host_aliases import host_count, host_id, host_ids
    from polyjax._scopes import ensure_compile_time_eval, named_call, named_scope
    from polyjax_core.abstract_values import ShapeDtypeStruct
    from polyjax_core.abstract_values import get_aval as typeof
    from polyjax_core.basearray import Array
    from polyjax_core.config import (
        allow_f16_reductions,
        array_garbage_collection_guard,
        check_tracer_leaks,
        checking_leaks,
        config,
        debug_infs,
        debug_key_reuse,
        debug_nans,
        default_device,
        default_matmul_precision,
        default_prng_impl,
        enable_checks,
        enable_x64,
        explain_cache_misses,
        legacy_prng_key,
        log_compiles,
        no_execution,
        no_tracing,
        numpy_dtype_promotion,
        numpy_rank_promotion,
        softmax_custom_jvp,
        thread_guard,
        threefry_partitionable,
        transfer_guard,
        transfer_guard_device_to_device,
        transfer_guard_device_to_host,
        transfer_guard_host_to_device,
    )
    from polyjax_core.dtypes import float0
    from polyjax_core.make_jaxpr import make_jaxpr
    from polyjax_core.partition_spec import PartitionSpec as P
    from polyjax_core.user_context import make_user_context
    from polyjax_interpreters.ad import (
        grad,
        hessian,
        jacfwd,
        jacobian,
        jacrev,
        jvp,
        linear_transpose,
        linearize,
        value_and_grad,
        vjp,
    )
    from polyjax_interpreters.array import (
        Shard,
        block_until_ready,
        device_get,
        device_put,
        make_array_from_callback,
        make_array_from_process_local_data,
        make_array_from_single_device_arrays,
    )
    from polyjax_interpreters.backends import (
        Device,
        default_backend,
        device_count,
        devices,
        local_device_count,
        local_devices,
        process_count,
        process_index,
        process_indices,
    )
    from polyjax_interpreters.batching import vmap
    from polyjax_interpreters.custom_derivatives import custom_jvp, custom_vjp
    from polyjax_interpreters.dispatch import effects_barrier
    from polyjax_interpreters.jit import eval_shape, jit
    from polyjax_interpreters.remat import checkpoint, checkpoint_policies, remat
    from polyjax_numpy.callback import pure_callback
    from polyjax_numpy.indexing import ds
    from polyjax_numpy.ref import Ref, empty_ref, free_ref, freeze, new_ref
    from polyjax_sharding import (
        NamedSharding,
        make_mesh,
        pmap,
        reshard,
        set_mesh,
        shard_map,
        smap,
    )

# Public name -> (module, attribute). Each is imported on first lookup and then
# stored in this module's globals, so later lookups cost a plain dict access.
_CORE = "polyjax_core"
_RT = "polyjax_interpreters"
_SH = "polyjax_sharding"
_NP = "polyjax_numpy"
_LAZY_ATTRS: dict[str, tuple[str, str]] = {
    # Transformations and their stages.
    "jit": (f"{_RT}.jit", "jit"),
    "eval_shape": (f"{_RT}.jit", "eval_shape"),
    "make_jaxpr": (f"{_CORE}.make_jaxpr", "make_jaxpr"),
    "custom_jvp": (f"{_RT}.custom_derivatives", "custom_jvp"),
    "vmap": (f"{_RT}.batching", "vmap"),
    "checkpoint": (f"{_RT}.remat", "checkpoint"),
    "remat": (f"{_RT}.remat", "remat"),
    "checkpoint_policies": (f"{_RT}.remat", "checkpoint_policies"),
    "grad": (f"{_RT}.ad", "grad"),
    "value_and_grad": (f"{_RT}.ad", "value_and_grad"),
    "jvp": (f"{_RT}.ad", "jvp"),
    "vjp": (f"{_RT}.ad", "vjp"),
    "linearize": (f"{_RT}.ad", "linearize"),
    "jacfwd": (f"{_RT}.ad", "jacfwd"),
    "jacrev": (f"{_RT}.ad", "jacrev"),
    "jacobian": (f"{_RT}.ad", "jacobian"),
    "hessian": (f"{_RT}.ad", "hessian"),
    "linear_transpose": (f"{_RT}.ad", "linear_transpose"),
    "custom_vjp": (f"{_RT}.custom_derivatives", "custom_vjp"),
    # Devices and backends.
    "devices": (f"{_RT}.backends", "devices"),
    "local_devices": (f"{_RT}.backends", "local_devices"),
    "device_count": (f"{_RT}.backends", "device_count"),
    "local_device_count": (f"{_RT}.backends", "local_device_count"),
    "default_backend": (f"{_RT}.backends", "default_backend"),
    "process_index": (f"{_RT}.backends", "process_index"),
    "process_count": (f"{_RT}.backends", "process_count"),
    "process_indices": (f"{_RT}.backends", "process_indices"),
    # Arrays and moving them. `Array` is core's abstract type (tracers are instances).
    "Array": (f"{_CORE}.basearray", "Array"),
    "Device": (f"{_RT}.backends", "Device"),
    "Shard": (f"{_RT}.array", "Shard"),
    "device_put": (f"{_RT}.array", "device_put"),
    "device_get": (f"{_RT}.array", "device_get"),
    "block_until_ready": (f"{_RT}.array", "block_until_ready"),
    "make_array_from_callback": (f"{_RT}.array", "make_array_from_callback"),
    "make_array_from_process_local_data": (f"{_RT}.array", "make_array_from_process_local_data"),
    "make_array_from_single_device_arrays": (
        f"{_RT}.array",
        "make_array_from_single_device_arrays",
    ),
    # Effects and host callbacks.
    "pure_callback": (f"{_NP}.callback", "pure_callback"),
    "effects_barrier": (f"{_RT}.dispatch", "effects_barrier"),
    # Meshes and shardings (`P` needs no devices: it comes from core).
    "P": (f"{_CORE}.partition_spec", "PartitionSpec"),
    "NamedSharding": (_SH, "NamedSharding"),
    "make_mesh": (_SH, "make_mesh"),
    "set_mesh": (_SH, "set_mesh"),
    "shard_map": (_SH, "shard_map"),
    "pmap": (_SH, "pmap"),
    "reshard": (_SH, "reshard"),
    "smap": (_SH, "smap"),
    # Mutable array references (`polyjax.ref` has the rest).
    "Ref": (f"{_NP}.ref", "Ref"),
    "new_ref": (f"{_NP}.ref", "new_ref"),
    "empty_ref": (f"{_NP}.ref", "empty_ref"),
    "free_ref": (f"{_NP}.ref", "free_ref"),
    "freeze": (f"{_NP}.ref", "freeze"),
    # Types.
    "ShapeDtypeStruct": (f"{_CORE}.abstract_values", "ShapeDtypeStruct"),
    "typeof": (f"{_CORE}.abstract_values", "get_aval"),
    "float0": (f"{_CORE}.dtypes", "float0"),
    # Naming and debugging.
    "named_scope": ("polyjax._scopes", "named_scope"),
    "named_call": ("polyjax._scopes", "named_call"),
    "ensure_compile_time_eval": ("polyjax._scopes", "ensure_compile_time_eval"),
    "live_arrays": ("polyjax._environment", "live_arrays"),
    "print_environment_info": ("polyjax._environment", "print_environment_info"),
    # Configuration: the option registry, and JAX's top-level context managers.
    "config": (f"{_CORE}.config", "config"),
    "check_tracer_leaks": (f"{_CORE}.config", "check_tracer_leaks"),
    "debug_infs": (f"{_CORE}.config", "debug_infs"),
    "debug_nans": (f"{_CORE}.config", "debug_nans"),
    "auto_pcast": (f"{_CORE}.config", "auto_pcast"),
    "default_device": (f"{_CORE}.config", "default_device"),
    "default_matmul_precision": (f"{_CORE}.config", "default_matmul_precision"),
    "default_prng_impl": (f"{_CORE}.config", "default_prng_impl"),
    "enable_checks": (f"{_CORE}.config", "enable_checks"),
    "enable_x64": (f"{_CORE}.config", "enable_x64"),
    "explain_cache_misses": (f"{_CORE}.config", "explain_cache_misses"),
    "log_compiles": (f"{_CORE}.config", "log_compiles"),
    "numpy_dtype_promotion": (f"{_CORE}.config", "numpy_dtype_promotion"),
    "numpy_rank_promotion": (f"{_CORE}.config", "numpy_rank_promotion"),
    "softmax_custom_jvp": (f"{_CORE}.config", "softmax_custom_jvp"),
    "threefry_partitionable": (f"{_CORE}.config", "threefry_partitionable"),
    "transfer_guard": (f"{_CORE}.config", "transfer_guard"),
    "allow_f16_reductions": (f"{_CORE}.config", "allow_f16_reductions"),
    "array_garbage_collection_guard": (f"{_CORE}.config", "array_garbage_collection_guard"),
    "checking_leaks": (f"{_CORE}.config", "checking_leaks"),
    "debug_key_reuse": (f"{_CORE}.config", "debug_key_reuse"),
    "legacy_prng_key": (f"{_CORE}.config", "legacy_prng_key"),
    "no_execution": (f"{_CORE}.config", "no_execution"),
    "no_tracing": (f"{_CORE}.config", "no_tracing"),
    "thread_guard": (f"{_CORE}.config", "thread_guard"),
    "transfer_guard_device_to_device": (f"{_CORE}.config", "transfer_guard_device_to_device"),
    "transfer_guard_device_to_host": (f"{_CORE}.config", "transfer_guard_device_to_host"),
    "transfer_guard_host_to_device": (f"{_CORE}.config", "transfer_guard_host_to_device"),
    "make_user_context": (f"{_CORE}.user_context", "make_user_context"),
    # Derivative rules written as closures; old names of the process queries; transfers.
    "custom_gradient": ("polyjax._custom_gradient", "custom_gradient"),
    "closure_convert": ("polyjax._custom_gradient", "closure_convert"),
    "host_count": ("polyjax._host_aliases", "host_count"),
    "host_id": ("polyjax._host_aliases", "host_id"),
    "host_ids": ("polyjax._host_aliases", "host_ids"),
    "copy_to_host_async": ("polyjax._copy_to_host", "copy_to_host_async"),
    "fwd_and_bwd": ("polyjax._fwd_and_bwd", "fwd_and_bwd"),
    "ds": (f"{_NP}.indexing", "ds"),
}

# Submodules of this package, imported on first lookup (``polyjax.lax``) or by
# an import statement (``import polyjax.lax``).
_SUBMODULES = frozenset(
    {
        "ad",
        "ad_checkpoint",
        "core",
        "custom_batching",
        "custom_derivatives",
        "debug",
        "distributed",
        "dlpack",
        "dtypes",
        "errors",
        "experimental",
        "export",
        "extend",
        "ffi",
        "image",
        "interpreters",
        "lax",
        "monitoring",
        "nn",
        "numpy",
        "ops",
        "profiler",
        "random",
        "ref",
        "scipy",
        "sharding",
        "stages",
        "test_util",
        "tree",
        "tree_util",
        "typing",
        "version",
    }
)

# Every public name, derived from the tables above (and the two functions defined
# below) so that a new name is listed in one place.
__all__ = sorted([*_LAZY_ATTRS, *_SUBMODULES, "__version__", "clear_caches", "disable_jit"])

# Names whose use needs the whole runtime: operators on `Array` and on tracers
# are registered by the lax primitives, so those are loaded first (what
# `polyjax._runtime` imports). `make_jaxpr` is among them because a traced
# `x + y` needs the tracer operators.
_NEEDS_RUNTIME = frozenset(
    name for name, (module, _) in _LAZY_ATTRS.items() if module.startswith((_RT, _SH, _NP))
) | {
    "make_jaxpr",
    "typeof",
    "custom_gradient",
    "closure_convert",
    "copy_to_host_async",
    "fwd_and_bwd",
    "named_call",
    "ensure_compile_time_eval",
    "live_arrays",
    # Options jaxlib enforces: the runtime mirrors them into jaxlib once loaded.
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "array_garbage_collection_guard",
    "thread_guard",
}


def __getattr__(name: str) -> Any:
    # Called only for names not yet in globals(): each public name once.
    if name in _LAZY_ATTRS:
        if name in _NEEDS_RUNTIME:
            _importlib.import_module("polyjax._runtime")
        module, attr = _LAZY_ATTRS[name]
        value = getattr(_importlib.import_module(module), attr)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f"{__name__}.{name}")
    elif name == "__version__":
        # importlib.metadata is slow to import; not cached, like the other packages.
        from importlib.metadata import version

        return version("polyjax")
    else:
        from polyjax._jax_deprecations import module_getattr

        return module_getattr(__name__)(name)  # JAX's deprecated names, or AttributeError
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def disable_jit(disable: bool = True) -> Any:
    """Context manager that runs jitted functions op by op (for debugging).

    Inside the block, calling a function decorated with `jit` does not compile
    it: its Python body runs with every primitive executed eagerly, so values
    can be printed and inspected. The override holds in the current thread
    only. ``config.update("jax_disable_jit", True)`` sets it globally.

    Args:
      disable: whether to disable jit inside the block.

    Returns:
      A context manager (also usable as a decorator).

    Example:
      >>> import polyjax
      >>> with polyjax.disable_jit():
      ...     polyjax.config.jax_disable_jit
      True
    """
    from polyjax_core.config import disable_jit as state

    return state(disable)


def clear_caches() -> None:
    """Empties every trace, lowering and compilation cache.

    Jitted functions stay usable: their next call traces and compiles again.
    Caches of packages that were never imported are empty already, so this
    loads nothing.

    Example:
      >>> import polyjax
      >>> polyjax.clear_caches()
    """
    caching = _sys.modules.get(f"{_CORE}.caching")
    if caching is not None:
        caching.clear_all_caches()
    jit_module = _sys.modules.get(f"{_RT}.jit")
    if jit_module is not None:
        # The per-function call caches of live jitted functions and the eager cache.
        jit_module.clear_jit_caches()
