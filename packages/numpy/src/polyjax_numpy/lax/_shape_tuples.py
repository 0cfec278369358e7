"""Output shapes of convolutions and windowed reductions, computed from shapes alone.

`conv_shape_tuple` and friends answer "what shape would this convolution
return?" without building any array, as JAX's helpers of the same names do;
library code sizes buffers and parameters with them.

Example:
  >>> conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME",
  ...                          ("NHWC", "HWIO", "NHWC"))
  (1, 4, 4, 4)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from polyjax_numpy.lax._convolution import (
    _conv_transpose_padding,
    conv_dimension_numbers,
    padtype_to_pads,
)
from polyjax_numpy.lax._windowed import _window_out_shape

__all__ = [
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose_shape_tuple",
    "reduce_window_shape_tuple",
]


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(operator.index(x) for x in xs)


def _pairs(padding: Any) -> list[tuple[int, int]]:
    return [(operator.index(lo), operator.index(hi)) for lo, hi in padding]


def conv_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    strides: Sequence[int],
    pads: str | Sequence[tuple[int, int]],
    batch_group_count: int = 1,
) -> tuple[int, ...]:
    """The output shape of a convolution in NC... / OI... layout.

    Args:
      lhs_shape: the input's shape, batch then feature then spatial axes.
      rhs_shape: the kernel's shape, output then input feature then spatial axes.
      strides: one stride per spatial axis.
      pads: (low, high) pairs per spatial axis, or "VALID"/"SAME"/"SAME_LOWER".
      batch_group_count: the batch groups (the output batch is divided by it).

    Returns:
      `(batch, out_features, *spatial)`.

    Raises:
      TypeError: the lengths of the arguments disagree.

    Example:
      >>> conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), [(1, 1), (1, 1)])
      (1, 4, 8, 8)
    """
    lhs_shape, rhs_shape, strides = _ints(lhs_shape), _ints(rhs_shape), _ints(strides)
    if len(lhs_shape) != len(rhs_shape) or len(strides) != len(lhs_shape) - 2:
        raise TypeError(
            "conv_shape_tuple: lhs_shape and rhs_shape must have the same rank and strides "
            f"one entry per spatial axis, got {lhs_shape}, {rhs_shape}, {strides}."
        )
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = _pairs(pads)
    if len(pads) != len(strides):
        raise TypeError(f"conv_shape_tuple: pads must have {len(strides)} pairs, got {pads}.")
    spatial = tuple(
        max(0, (n + lo + hi - k) // s + 1)
        for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads)
    )
    return (lhs_shape[0] // batch_group_count, rhs_shape[0], *spatial)


def conv_general_permutations(
    dimension_numbers: Any,
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The axis permutations that bring three conv layout strings to NC.../OI.../NC....

    Args:
      dimension_numbers: three layout strings such as `("NHWC", "HWIO", "NHWC")`.

    Returns:
      `(lhs_perm, rhs_perm, out_perm)`, each listing the axes of the batch (or
      output feature), feature (input feature) and spatial dimensions.

    Raises:
      TypeError: the strings are not three layouts of one rank.

    Example:
      >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
      ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    specs = tuple(dimension_numbers)
    if len(specs) != 3 or not all(isinstance(s, str) for s in specs):
        raise TypeError(
            f"conv_general_permutations expects three layout strings, got {dimension_numbers!r}."
        )
    n = len(specs[0])
    return tuple(conv_dimension_numbers((0,) * n, (0,) * n, specs))  # type: ignore[return-value]  # a NamedTuple of three tuples


def _nc_shapes(lhs_shape, rhs_shape, dimension_numbers):
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs = tuple(lhs_shape[a] for a in dn.lhs_spec)
    rhs = tuple(rhs_shape[a] for a in dn.rhs_spec)
    return dn, lhs, rhs


def _to_out_layout(out_nc: Sequence[int], out_spec: Sequence[int]) -> tuple[int, ...]:
    out = [0] * len(out_nc)
    for size, axis in zip(out_nc, out_spec):
        out[axis] = size
    return tuple(out)


def conv_general_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The output shape of `conv_general_dilated` (without dilation), in the output layout.

    Args:
      lhs_shape: the input's shape.
      rhs_shape: the kernel's shape.
      window_strides: one stride per spatial axis.
      padding: (low, high) pairs per spatial axis, or "VALID"/"SAME"/"SAME_LOWER".
      dimension_numbers: as `conv_general_dilated`'s (None, strings or axis tuples).

    Returns:
      The output shape.

    Example:
      >>> conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "VALID",
      ...                          ("NHWC", "HWIO", "NHWC"))
      (1, 6, 6, 4)
    """
    lhs_shape, rhs_shape = _ints(lhs_shape), _ints(rhs_shape)
    dn, lhs, rhs = _nc_shapes(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(lhs, rhs, window_strides, padding)
    return _to_out_layout(out, dn.out_spec)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[int],
    rhs_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[int, ...]:
    """The output shape of the transposed convolution of `conv_general_shape_tuple`.

    As `conv_transpose`, the input is dilated by the strides and padded: each
    spatial size is `stride * (n - 1) + 2 + low + high - k`, where explicit
    pads apply to the dilated input and "SAME" / "VALID" choose the pads that
    give `n * stride` and `n * stride + max(k - stride, 0)`.

    Args:
      lhs_shape: the input's shape.
      rhs_shape: the kernel's shape.
      window_strides: one stride per spatial axis.
      padding: (low, high) pairs per spatial axis, or "VALID"/"SAME"/"SAME_LOWER".
      dimension_numbers: as `conv_general_dilated`'s.

    Returns:
      The output shape.

    Example:
      >>> conv_transpose_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME",
      ...                            ("NHWC", "HWIO", "NHWC"))
      (1, 16, 16, 4)
    """
    lhs_shape, rhs_shape, strides = _ints(lhs_shape), _ints(rhs_shape), _ints(window_strides)
    dn, lhs, rhs = _nc_shapes(lhs_shape, rhs_shape, dimension_numbers)
    if isinstance(padding, str):
        padding = [_conv_transpose_padding(k, s, padding) for k, s in zip(rhs[2:], strides)]
    pads = _pairs(padding)
    spatial = tuple(
        s * (n - 1) + 2 + lo + hi - k for n, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], strides, pads)
    )
    return _to_out_layout((lhs[0], rhs[0], *spatial), dn.out_spec)


def reduce_window_shape_tuple(
    operand_shape: Sequence[int],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """The output shape of `reduce_window` with these window parameters.

    Args:
      operand_shape: the operand's shape.
      window_dimensions: the window's size along each axis.
      window_strides: the window's stride along each axis.
      padding: (low, high) pairs, one per axis.
      base_dilation: the operand's dilation per axis (default 1).
      window_dilation: the window's dilation per axis (default 1).

    Returns:
      The output shape.

    Raises:
      ValueError: padding is not one pair per axis (names such as "SAME" are not
        accepted, as in JAX).

    Example:
      >>> reduce_window_shape_tuple((4, 5), (2, 2), (1, 1), [(0, 0), (0, 0)])
      (3, 4)
    """
    shape = _ints(operand_shape)
    ones = (1,) * len(shape)
    base = ones if base_dilation is None else _ints(base_dilation)
    wdil = ones if window_dilation is None else _ints(window_dilation)
    dims, strides = _ints(window_dimensions), _ints(window_strides)
    if isinstance(padding, str):
        raise ValueError(
            "reduce_window_shape_tuple: padding must be (low, high) pairs, one per axis, "
            f"got {padding!r}."
        )
    if len(padding) != len(shape):
        raise ValueError(
            f"reduce_window_shape_tuple: padding must have {len(shape)} pairs, got {padding!r}."
        )
    return _window_out_shape(shape, dims, strides, _pairs(padding), base, wdil)
