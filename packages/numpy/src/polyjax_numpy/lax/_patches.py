"""Image patches and locally connected (unshared-weight) convolutions.

`conv_general_dilated_patches` extracts, at every output position of a
convolution, the input window it would see: a convolution with an identity
kernel (one output feature per input feature and window position, grouped by
input feature), so its strides, padding and dilations mean exactly what they
mean for `conv_general_dilated`. `conv_general_dilated_local` then contracts
each position's patch with that position's own weights: a `dot_general`
batched over the output positions. Both are compositions of primitives with
every rule.

Example:
  >>> import numpy as np
  >>> x = np.arange(4, dtype=np.float32).reshape(1, 1, 4)
  >>> conv_general_dilated_patches(x, (2,), (1,), "VALID")
  Array([[[0., 1., 2.],
          [1., 2., 3.]]], dtype=float32)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import get_aval
from polyjax_numpy.lax._convolution import (
    ConvDimensionNumbers,
    conv_dimension_numbers,
    conv_general_dilated,
)
from polyjax_numpy.lax._dot import Precision, dot_general
from polyjax_numpy.lax._shape_ops import transpose

__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches"]


def _identity_kernel(channels: int, filter_shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An (channels * K, 1, *filter_shape) kernel: output feature c * K + j picks position j."""
    size = math.prod(filter_shape)
    eye = np.eye(size, dtype=dtype).reshape((size, 1, *filter_shape))
    return np.tile(eye, (channels, 1) + (1,) * len(filter_shape))


def conv_general_dilated_patches(
    lhs: Any,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The patches a convolution with a `filter_shape` window sees, as output features.

    Args:
      lhs: the input, rank n + 2, laid out by `dimension_numbers`' lhs spec.
      filter_shape: the window's n spatial sizes.
      window_strides: n strides.
      padding: "SAME", "SAME_LOWER", "VALID", or n (low, high) pairs.
      lhs_dilation: n input dilations (None: ones).
      rhs_dilation: n window dilations (None: ones).
      dimension_numbers: as `conv_general_dilated`'s (only the lhs and out specs
        matter).
      precision: as `conv_general_dilated`'s (None: exact, the copy uses HIGHEST).
      preferred_element_type: the result dtype (None: `lhs`'s).

    Returns:
      An array laid out by the out spec whose feature axis has size
      `C * prod(filter_shape)`, ordered by input feature first, then window
      position (row-major over `filter_shape`).

    Example:
      >>> import numpy as np
      >>> conv_general_dilated_patches(np.zeros((1, 3, 5, 5), np.float32), (2, 2),
      ...                              (1, 1), "VALID").shape
      (1, 12, 4, 4)
    """
    aval = get_aval(lhs)
    filter_shape = tuple(int(k) for k in filter_shape)
    dn = conv_dimension_numbers(aval.shape, aval.shape, dimension_numbers)
    channels = aval.shape[dn.lhs_spec[1]]
    dtype = np.dtype(aval.dtype)
    kernel = _identity_kernel(channels, filter_shape, dtype)
    canonical = ConvDimensionNumbers(dn.lhs_spec, tuple(range(aval.ndim)), dn.out_spec)
    out = conv_general_dilated(
        lhs,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        canonical,
        feature_group_count=channels,
        precision=Precision.HIGHEST if precision is None else precision,
        preferred_element_type=preferred_element_type,
    )
    return out


def conv_general_dilated_local(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    precision: Any = None,
) -> Any:
    """A convolution whose weights differ at every output position (locally connected).

    Args:
      lhs: the input, rank n + 2.
      rhs: the weights, laid out by the rhs spec: output features, input features
        times `prod(filter_shape)` (ordered as `conv_general_dilated_patches`'
        features), then the n output spatial sizes.
      window_strides: n strides.
      padding: "SAME", "SAME_LOWER", "VALID", or n (low, high) pairs.
      filter_shape: the window's n spatial sizes.
      lhs_dilation: n input dilations (None: ones).
      rhs_dilation: n window dilations (None: ones).
      dimension_numbers: as `conv_general_dilated`'s.
      precision: as `dot_general`'s, for the contraction.

    Returns:
      The result, laid out by the out spec.

    Raises:
      TypeError: `rhs`'s shape does not match the patches.

    Example:
      >>> import numpy as np
      >>> x, w = np.ones((1, 2, 4), np.float32), np.ones((3, 4, 3), np.float32)
      >>> conv_general_dilated_local(x, w, (1,), "VALID", (2,)).shape
      (1, 3, 3)
    """
    lhs_aval, rhs_aval = get_aval(lhs), get_aval(rhs)
    dn = conv_dimension_numbers(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation, dn, precision
    )
    n = lhs_aval.ndim - 2
    # Both in (batch-or-out, features, *spatial) order.
    p = transpose(patches, dn.out_spec)
    w = transpose(rhs, dn.rhs_spec)
    p_shape, w_shape = get_aval(p).shape, get_aval(w).shape
    if p_shape[1] != w_shape[1] or p_shape[2:] != w_shape[2:]:
        raise TypeError(
            "conv_general_dilated_local: rhs must have input features x window size "
            f"{p_shape[1]} and output spatial sizes {p_shape[2:]}, got {w_shape[1]} and "
            f"{w_shape[2:]} (in rhs spec order)."
        )
    spatial = tuple(range(2, 2 + n))
    dtype = dtypes.result_type(p, w)
    out = dot_general(p, w, (((1,), (1,)), (spatial, spatial)), precision, dtype)
    # `out` is (*spatial, batch, out_features): to (batch, features, *spatial), then out spec.
    canonical = transpose(out, (n, n + 1, *range(n)))
    return transpose(canonical, tuple(int(i) for i in np.argsort(dn.out_spec)))
