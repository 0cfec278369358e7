"""A symbolic dimension used as a value: `x * x.shape[0]`, `fori_loop(0, x.shape[0], ...)`.

Under `export` with symbolic shapes, `x.shape[0]` is a `DimExpr`, not an int.
Where a program computes with it as a number, it becomes the rank-0 result of
`dim_as_value`, a weakly typed integer (it combines with other operands as a
Python int would). The lowering computes the expression from the dimension
variables of the function being lowered, so after shape refinement it is a
constant of the concrete shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax._declare import define_rules

__all__ = ["dim_as_value", "dim_as_value_p"]

dim_as_value_p = Primitive("dim_as_value")


def dim_as_value(d: Any) -> Any:
    """The dimension `d` as a rank-0 weakly typed integer: an int stays an int.

    Example:
      >>> dim_as_value(3)
      3
    """
    if not sd.is_symbolic_dim(d):
        return d
    return dim_as_value_p.bind(dim=d)


def _int_type() -> np.dtype:
    return dtypes.canonicalize_dtype(np.int64)


def _abstract_eval(*, dim: Any) -> ShapedArray:
    return ShapedArray((), _int_type(), weak_type=True)


def _impl(*, dim: Any) -> Any:
    # NotImplementedError, as JAX: the dimension has a value only inside a function
    # traced for export, where the argument shapes determine it.
    raise NotImplementedError(
        f"Evaluation rule for 'dim_as_value' is not implemented: the symbolic dimension "
        f"'{dim}' has a value only inside a function exported with symbolic shapes "
        "(polyjax.export.export)."
    )


def _lowering(ctx: Any, *, dim: Any) -> list[Any]:
    value = mlir.eval_dim(ctx.dim_var_values, dim)  # a tensor<i32>
    out_type = mlir.aval_to_ir_type(ctx.avals_out[0])
    return [value if value.type == out_type else hlo.convert(out_type, value)]


def _batch(args: Any, dims: Any, *, dim: Any) -> Any:
    return dim_as_value_p.bind(dim=dim), batching.not_mapped


define_rules(dim_as_value_p, _abstract_eval, _lowering, impl=_impl, jvp="zero", batching=_batch)
# `x.shape[0] * 0.5`, `x.shape[0] / 2`: core's dimensions compute with their value.
sd.register_dim_as_value(dim_as_value)
