"""`scaled_dot`: a `dot_general` of block-scaled operands.

Each operand comes with a scale array of its rank whose contracting dimension
is shorter by the block size (``K / blocks``); every element stands for
``operand * scale`` with the scale of its block. polyjax computes it by the
definition, as JAX does on CPU: the operands and their repeated scales are
converted to bfloat16 and multiplied, then contracted with
`preferred_element_type` (default bfloat16). Missing scales are ones (one block
per contracting dimension, as JAX's ``float8_e8m0fnu`` defaults).

A composition (JAX binds a `scaled_dot` primitive whose CPU lowering is this
decomposition; the jaxpr shows the parts instead), so every transformation of
`dot_general` and the elementwise operations applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax import _elementwise as ew
from polyjax_numpy.lax._dot import dot_general
from polyjax_numpy.lax._shape_ops import broadcast_in_dim, full, reshape

__all__ = ["scaled_dot"]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _default_dimension_numbers(lhs_ndim: int, rhs_ndim: int) -> tuple:
    """Matrix-product numbers: the leading dimensions are batch dimensions."""
    batch = tuple(range(min(lhs_ndim, rhs_ndim) - 2))
    return ((lhs_ndim - 1,), (rhs_ndim - 2,)), (batch, batch)


def _repeat(scale: Any, dim: int, times: int) -> Any:
    """`scale` with each entry along `dim` repeated `times` times (consecutively)."""
    shape = tuple(get_aval(scale).shape)
    spread = (*shape[: dim + 1], times, *shape[dim + 1 :])
    kept = (*range(dim + 1), *range(dim + 2, len(spread)))
    out = broadcast_in_dim(scale, spread, kept)
    return reshape(out, (*shape[:dim], shape[dim] * times, *shape[dim + 1 :]))


def _scaled(x: Any, scale: Any, contracting: Sequence[int], side: str) -> Any:
    """`x` times its scales, in bfloat16."""
    xs, ss = tuple(get_aval(x).shape), tuple(get_aval(scale).shape)
    if len(ss) != len(xs):
        raise TypeError(f"{side} scale must have the rank of {side}, got {ss} for {xs}")
    for d in range(len(xs)):
        if d in contracting:
            if ss[d] == 0 or xs[d] % ss[d]:
                raise TypeError(
                    f"{side} contracting dim {d} of size {xs[d]} must be divisible by its "
                    f"scale's dim size {ss[d]}."
                )
            scale = _repeat(scale, d, xs[d] // ss[d])
        elif ss[d] != xs[d]:
            raise TypeError(
                f"{side} scale dim {d} has size {ss[d]}; it must match {side}'s {xs[d]} "
                "outside the contracting dimensions"
            )
    return ew.mul(ew.convert_element_type(x, _BF16), ew.convert_element_type(scale, _BF16))


def _unit_scale(x: Any, contracting: Sequence[int]) -> Any:
    shape = tuple(1 if d in contracting else n for d, n in enumerate(get_aval(x).shape))
    return full(shape, 1, _BF16)


def scaled_dot(
    lhs: Any,
    rhs: Any,
    *,
    lhs_scale: Any = None,
    rhs_scale: Any = None,
    dimension_numbers: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """A `dot_general` of block-scaled operands: ``(lhs * lhs_scale) . (rhs * rhs_scale)``.

    Args:
      lhs, rhs: the operands (usually float8 or float4 data).
      lhs_scale, rhs_scale: one scale per block: arrays of the operands' ranks, equal to
        them except along the contracting dimensions, whose sizes they divide (default:
        one block, scale 1).
      dimension_numbers: ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``
        (default: a matrix product over the trailing two dimensions, the leading ones
        batch dimensions).
      preferred_element_type: the result's dtype (default bfloat16).

    Returns:
      The contraction, in `preferred_element_type`.

    Raises:
      TypeError: a scale's shape does not fit its operand.

    Example:
      >>> import numpy as np
      >>> lhs, rhs = np.ones((2, 4), np.float32), np.ones((4, 1), np.float32)
      >>> scaled_dot(lhs, rhs, lhs_scale=np.array([[1.0, 2.0], [1.0, 1.0]], np.float32),
      ...            rhs_scale=np.ones((1, 1), np.float32))
      Array([[6],
             [4]], dtype=bfloat16)
    """
    lhs_ndim, rhs_ndim = get_aval(lhs).ndim, get_aval(rhs).ndim
    if dimension_numbers is None:
        dimension_numbers = _default_dimension_numbers(lhs_ndim, rhs_ndim)
    (lc, rc), _ = dimension_numbers
    lc, rc = tuple(d % lhs_ndim for d in lc), tuple(d % rhs_ndim for d in rc)
    if lhs_scale is None:
        lhs_scale = _unit_scale(lhs, lc)
    if rhs_scale is None:
        rhs_scale = _unit_scale(rhs, rc)
    out_type = (
        _BF16
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(preferred_element_type)
    )
    return dot_general(
        _scaled(lhs, lhs_scale, lc, "LHS"),
        _scaled(rhs, rhs_scale, rc, "RHS"),
        dimension_numbers,
        preferred_element_type=out_type,
    )
