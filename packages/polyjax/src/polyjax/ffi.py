"""polyjax.ffi: calling compiled kernels through XLA's foreign function interface.

As ``jax.ffi``: a kernel written against XLA's FFI headers (shipped with
jaxlib: `include_dir()`), compiled into a shared library, is registered under
a name with `register_ffi_target(name, pycapsule(fn_pointer))`; then
`ffi_call(name, result_shape_dtypes)` returns a function that calls it on
arrays, with keyword arguments passed as the kernel's attributes (Python
ints become int64, floats float64, bools and strings stay; NumPy scalars
keep their dtype). The call lowers to a `stablehlo.custom_call` (typed FFI,
API version 4) with row-major layouts, so it works under `jit`. Under `vmap`
it follows `vmap_method`: "sequential" (one call per batch element,
`lax.map`), "sequential_unrolled" (the same, unrolled), "expand_dims"
(unbatched operands get a unit batch axis; the kernel must broadcast) or
"broadcast_all" (every operand broadcast to the batch). It has no
derivative (wrap it in `custom_jvp`/`custom_vjp`).

Example:
  >>> import os
  >>> os.path.isfile(os.path.join(include_dir(), "xla", "ffi", "api", "ffi.h"))
  True
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax import (
    _runtime,  # noqa: F401  (every lax rule registered)
    lax,
)
from polyjax import numpy as jnp
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import batching, dispatch, mlir

__all__ = [
    "ffi_call",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def include_dir() -> str:
    """The directory holding XLA's FFI headers (``xla/ffi/api/ffi.h``), shipped with jaxlib."""
    import jaxlib

    return os.path.join(os.path.dirname(os.path.abspath(jaxlib.__file__)), "include")


def pycapsule(funcptr: Any) -> Any:
    """Wraps a ctypes function pointer in the PyCapsule `register_ffi_target` takes.

    Args:
      funcptr: a function of a `ctypes.CDLL` (or any ctypes function pointer).

    Returns:
      A PyCapsule named ``xla._CUSTOM_CALL_TARGET`` holding the address.
    """
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    address = ctypes.cast(funcptr, ctypes.c_void_p).value
    return new(address, b"xla._CUSTOM_CALL_TARGET", destructor(0))


def register_ffi_target(
    name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any
) -> None:
    """Registers the kernel `fn` (a PyCapsule) under `name` for `platform`.

    Args:
      name: the target name `ffi_call` uses.
      fn: a PyCapsule (`pycapsule`), or a dict of them by execution stage.
      platform: "cpu" (polyjax's backend).
      api_version: 1 for a typed-FFI handler (the default), 0 for the legacy ABI.
      **kwargs: passed to XLA's registration.
    """
    from jaxlib import xla_client

    xla_client.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Declares that the target `name` can be partitioned along batch dimensions."""
    from jaxlib import xla_client

    xla_client.register_custom_call_as_batch_partitionable(name)


ffi_call_p = Primitive("ffi_call")
ffi_call_p.multiple_results = True


def _abstract_eval(*avals: Any, result_avals: tuple, **_: Any) -> list[ShapedArray]:
    return list(result_avals)


def _row_major(ndim: int) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(
        np.arange(ndim - 1, -1, -1, dtype=np.int64), type=ir.IndexType.get()
    )


def _lowering(ctx: Any, *args: Any, target_name: str, result_avals: tuple, attributes: tuple,
              has_side_effect: bool, aliases: tuple, **_: Any) -> list[Any]:  # fmt: skip
    alias_attrs = [
        hlo.OutputOperandAlias.get(
            output_tuple_indices=[out] if len(result_avals) > 1 else [],
            operand_index=operand,
            operand_tuple_indices=[],
        )
        for operand, out in aliases
    ]
    op = hlo.CustomCallOp(
        [mlir.aval_to_ir_type(a) for a in result_avals],
        list(args),
        call_target_name=ir.StringAttr.get(target_name),
        has_side_effect=ir.BoolAttr.get(has_side_effect),
        backend_config=ir.DictAttr.get(
            {k: mlir.scalar_attribute(v, "ffi_call") for k, v in attributes}
        ),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get([_row_major(a.ndim) for a in ctx.avals_in]),
        result_layouts=ir.ArrayAttr.get([_row_major(a.ndim) for a in result_avals]),
        output_operand_aliases=ir.ArrayAttr.get(alias_attrs),
    )
    return list(op.results)


def _batch(args, dims, *, vmap_method, result_avals, **params):
    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            "vmap is only supported for ffi_call when vmap_method is one of "
            f"{', '.join(repr(m) for m in _VMAP_METHODS)}; got vmap_method={vmap_method!r}."
        )
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    fixed = dict(vmap_method=vmap_method, result_avals=result_avals, **params)
    if vmap_method.startswith("sequential"):
        mapped = [i for i, d in enumerate(dims) if d is not None]

        def one(xs):
            full = list(moved)
            for i, x in zip(mapped, xs):
                full[i] = x
            return ffi_call_p.bind(*full, **fixed)

        outs = lax.map(one, [moved[i] for i in mapped])
        return list(outs), [0] * len(result_avals)
    if vmap_method == "expand_dims":
        operands = [x if d is not None else jnp.expand_dims(x, 0) for x, d in zip(moved, dims)]
    else:
        operands = [
            x if d is not None else batching.broadcast(x, size, 0) for x, d in zip(moved, dims)
        ]
    batched = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
    outs = ffi_call_p.bind(*operands, **{**fixed, "result_avals": batched})
    return list(outs), [0] * len(result_avals)


# Registered as any library registers a primitive's rules (polyjax.interpreters).
ffi_call_p.def_impl(functools.partial(dispatch.apply_primitive, ffi_call_p))
ffi_call_p.def_abstract_eval(_abstract_eval)
mlir.register_lowering(ffi_call_p, _lowering)
batching.primitive_batchers[ffi_call_p] = _batch


def ffi_call(
    target_name: str,
    result_shape_dtypes: Any,
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_layouts: Sequence[Any] | None = None,
    output_layouts: Any = None,
    input_output_aliases: Mapping[int, int] | None = None,
    custom_call_api_version: int = 4,
    legacy_backend_config: str | None = None,
) -> Callable[..., Any]:
    """A function calling the registered FFI target `target_name`.

    Args:
      target_name: the name given to `register_ffi_target`.
      result_shape_dtypes: the result's shape and dtype (anything with `.shape` and
        `.dtype`, e.g. a `ShapeDtypeStruct`), or a sequence (or pytree) of them.
      has_side_effect: keep the call even when its results are unused.
      vmap_method: how `vmap` batches the call (see the module docstring).
      input_layouts: only None (row-major).
      output_layouts: only None (row-major).
      input_output_aliases: operand index -> result index sharing its buffer.
      custom_call_api_version: only 4 (typed FFI).
      legacy_backend_config: only None.

    Returns:
      `call(*args, **attributes)`: the results, structured as
      `result_shape_dtypes`.

    Raises:
      NotImplementedError: custom layouts, another API version or a legacy
        backend config.
    """
    if input_layouts is not None or output_layouts is not None:
        raise NotImplementedError("ffi_call: only the default (row-major) layouts are supported.")
    if custom_call_api_version != 4 or legacy_backend_config is not None:
        raise NotImplementedError("ffi_call: only the typed FFI (API version 4) is supported.")
    leaves, tree = tree_flatten(
        result_shape_dtypes, is_leaf=lambda x: hasattr(x, "shape") and hasattr(x, "dtype")
    )
    result_avals = tuple(ShapedArray(tuple(r.shape), np.dtype(r.dtype)) for r in leaves)
    aliases = tuple(sorted((input_output_aliases or {}).items()))

    @functools.wraps(ffi_call)
    def call(*args: Any, **attributes: Any) -> Any:
        outs = ffi_call_p.bind(
            *(jnp.asarray(a) for a in args),
            target_name=target_name,
            result_avals=result_avals,
            attributes=tuple(sorted(attributes.items())),
            has_side_effect=has_side_effect,
            vmap_method=vmap_method,
            aliases=aliases,
        )
        return tree_unflatten(tree, list(outs))

    return call
