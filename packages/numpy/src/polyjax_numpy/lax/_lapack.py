"""Calls into the LAPACK kernels that jaxlib ships, as typed-FFI custom calls on CPU.

`jaxlib.lapack.registrations()` maps ``"cpu"`` to ``(name, capsule, api_version)``
triples (``lapack_<s|d|c|z><routine>_ffi``); importing this module registers them
with XLA (`xla_client.register_custom_call_target`; registrations queue until the
CPU client installs its handler, so the order does not matter). The first lowering
of a LAPACK call runs `lapack._lapack.initialize()`, which binds the kernels to
the LAPACK routines: not at import (as in JAX), because it imports SciPy's LAPACK
(about 0.4 s), which a program without linear algebra never needs.

`custom_call` emits ``stablehlo.custom_call`` in the typed-FFI form
(``api_version = 4``): the kernel's attributes go in ``backend_config`` as a
dictionary (``ui8`` for LAPACK's character flags such as ``uplo = 76``, 'L').
Matrices are column-major: each matrix operand and result gets the layout
``[n-2, n-1, n-3, ..., 0]`` (minor-to-major), which XLA arranges with transposes
around the call; batches of vectors (eigenvalues, pivots, ``info``) keep the
row-major default. Leading dimensions are batch dimensions: the kernels loop over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import xla_client
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray
from polyjax_interpreters import mlir

try:  # jaxlib's LAPACK bindings
    from jaxlib import lapack as _lapack_mod
except ImportError:  # pragma: no cover - jaxlib always ships them on CPU
    _lapack_mod = None

_PREFIX = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}


def _register() -> None:
    if _lapack_mod is None:
        return
    for platform, targets in _lapack_mod.registrations().items():
        for name, capsule, api_version in targets:
            xla_client.register_custom_call_target(name, capsule, platform, api_version=api_version)


_register()
_initialized = False


def initialize() -> None:
    """Binds the kernels to the LAPACK routines, once, before the first module using them."""
    global _initialized
    if not _initialized and _lapack_mod is not None:
        _lapack_mod._lapack.initialize()
        _initialized = True


# An exported artifact may be the process's first user of the kernels.
mlir.register_custom_call_initializer("lapack_", initialize)


def target_name(fn_base: str, dtype: Any) -> str:
    """``lapack_<s|d|c|z><fn_base>_ffi`` for the element type `dtype`."""
    initialize()
    return f"lapack_{_PREFIX[np.dtype(dtype)]}{fn_base}_ffi"


def column_major(ndim: int) -> list[int]:
    """Minor-to-major layout with the last two dimensions column-major."""
    if ndim < 2:
        return list(range(ndim - 1, -1, -1))
    return [ndim - 2, ndim - 1, *range(ndim - 3, -1, -1)]


def _layout_attr(ndim: int, matrix: bool) -> ir.Attribute:
    layout = column_major(ndim) if matrix else list(range(ndim - 1, -1, -1))
    return ir.DenseIntElementsAttr.get(np.array(layout, np.int64), type=ir.IndexType.get())


def _attr(value: Any) -> ir.Attribute:
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, bool):
        return ir.BoolAttr.get(value)
    if isinstance(value, str):  # a LAPACK character flag
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(value))
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def custom_call(
    ctx: Any,
    target: str,
    operands: Sequence[ir.Value],
    operand_avals: Sequence[ShapedArray],
    result_avals: Sequence[ShapedArray],
    attributes: dict[str, Any],
    aliases: dict[int, int] | None = None,
    vectors: Sequence[int] = (),
    operand_vectors: Sequence[int] = (),
) -> list[ir.Value]:
    """A typed-FFI ``stablehlo.custom_call`` to `target` (one op, several results).

    Results with symbolic dimensions (a batch of size `b` under export) get their
    shapes as extra `tensor<Nxi32>` operands, listed in `indices_of_shape_operands`:
    shape refinement reads them to give the results static types.

    Args:
      ctx: the lowering context (its dimension variables compute symbolic shapes).
      target: the kernel's name (`target_name`).
      attributes: the kernel's attributes; strings become ``ui8`` character codes.
      aliases: result index -> operand index whose buffer the result may reuse.
      vectors, operand_vectors: indices of the results (operands) that are batches of
        vectors (eigenvalues, pivots, ...), laid out row-major; every other array of
        rank 2 or more is a batch of column-major matrices.
    """
    initialize()
    result_types = [mlir.aval_to_ir_type(a) for a in result_avals]
    alias_attrs = [
        hlo.OutputOperandAlias.get(
            output_tuple_indices=[out] if len(result_avals) > 1 else [],
            operand_index=operand,
            operand_tuple_indices=[],
        )
        for out, operand in (aliases or {}).items()
    ]
    operands = list(operands)
    operand_layouts = [
        _layout_attr(a.ndim, i not in operand_vectors) for i, a in enumerate(operand_avals)
    ]
    dynamic = any(map(sd.is_symbolic_dim, (d for a in result_avals for d in a.shape)))
    if dynamic:
        first_shape = len(operands)
        for a in result_avals:
            operands.append(mlir.shape_tensor(ctx, a.shape))
            operand_layouts.append(_layout_attr(1, False))
    op = hlo.CustomCallOp(
        result_types,
        operands,
        call_target_name=ir.StringAttr.get(target),
        has_side_effect=ir.BoolAttr.get(False),
        backend_config=ir.DictAttr.get({k: _attr(v) for k, v in attributes.items()}),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
        called_computations=ir.ArrayAttr.get([]),
        operand_layouts=ir.ArrayAttr.get(operand_layouts),
        result_layouts=ir.ArrayAttr.get(
            [_layout_attr(a.ndim, i not in vectors) for i, a in enumerate(result_avals)]
        ),
        output_operand_aliases=ir.ArrayAttr.get(alias_attrs),
    )
    if dynamic:
        op.attributes["indices_of_shape_operands"] = ir.DenseIntElementsAttr.get(
            np.arange(first_shape, len(operands), dtype=np.int64)
        )
    return list(op.results)
