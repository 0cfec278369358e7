"""Shape manipulation and dtype casts of `jnp`: `reshape`, `transpose`, `squeeze`, `ravel`, ...

These rearrange an array without computing on its values; each becomes one or
two lax structural primitives (`reshape`, `transpose`, `squeeze`,
`convert_element_type`), with NumPy's conventions for `-1` in shapes, negative
axes and `order="F"`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _complex, _shape_ops
from polyjax_numpy.numpy import _util as _u


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """`x` converted to `dtype` (complex to real keeps the real part, with a warning).

    Args:
      x: an array.
      dtype: the target dtype (canonicalized: float64 becomes float32 unless x64 is on).
      copy: accepted for NumPy compatibility; arrays are immutable, so it changes nothing.
      device: not supported yet.

    Returns:
      A strongly typed array of `dtype`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.astype(jnp.arange(3), jnp.float32)
      Array([0., 1., 2.], dtype=float32)
    """
    if device is not None:
        raise NotImplementedError("astype(device=...) is not supported yet")
    if dtype is None:
        dtype = dtypes.float_
    dtypes.check_user_dtype_supported(dtype, "astype")
    dtype = dtypes.canonicalize_dtype(dtype)
    if _u.issubdtype_of(x, np.complexfloating) and not dtypes.issubdtype(dtype, np.complexfloating):
        # NumPy's rule, which JAX follows: keep the real part, and say so.
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
        x = _complex.real(x)
    return _u.convert(x, dtype, False)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None) -> Any:
    """`a` with a new shape holding the same elements (one entry may be -1).

    Args:
      a: an array.
      shape: an int or a sequence of ints (or symbolic dimensions); one may be -1.
      order: "C" (row-major, the default) or "F" (column-major).
      newshape: NumPy's older name for `shape`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.reshape(jnp.arange(6), (2, -1)).shape
      (2, 3)
    """
    if newshape is not None:
        if shape is not None:
            raise TypeError("reshape() got both 'shape' and 'newshape'; pass only 'shape'.")
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    old = _u.shape(a)
    new = _shape_ops._compute_newshape(old, shape)
    if order == "C":
        return _shape_ops.reshape(a, new)
    if order == "F":
        dims = tuple(range(len(old)))[::-1]
        return transpose(_shape_ops.reshape(a, new[::-1], dims))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """`a` with its axes permuted (reversed when `axes` is None).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.transpose(jnp.zeros((2, 3, 4)), (1, 0, 2)).shape
      (3, 2, 4)
    """
    ndim = _u.ndim(a)
    perm = tuple(range(ndim))[::-1] if axes is None else tuple(axes)
    if len(perm) != ndim:
        raise ValueError(
            f"axes {tuple(axes)} don't match the array's {ndim} dimensions (shape {_u.shape(a)})"
        )
    perm = tuple(_u.canonicalize_axis(ax, ndim) for ax in perm)
    return _shape_ops.transpose(a, perm)


def matrix_transpose(x: Any, /) -> Any:
    """`x` with its last two axes swapped."""
    ndim = _u.ndim(x)
    if ndim < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={ndim}"
        )
    return _shape_ops.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """`a` without the given size-1 axes (all of them when `axis` is None)."""
    shape = _u.shape(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(shape) if type(d) is int and d == 1)
    else:
        dims = _u.reduction_axes(axis, len(shape))
    return _shape_ops.squeeze(a, dims)


def ravel(a: Any, order: str = "C") -> Any:
    """`a` flattened to one dimension, in row-major ("C") or column-major ("F") order."""
    shape = _u.shape(a)
    if order == "C":
        return _shape_ops.reshape(a, (sd.shape_size(shape),))
    if order == "F":
        return ravel(transpose(a))
    if order in ("A", "K"):
        raise NotImplementedError(f"Ravel not implemented for order={order!r}.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def real(val: Any, /) -> Any:
    """The real part (a real, integer or bool array is its own real part)."""
    return _complex.real(val) if _u.issubdtype_of(val, np.complexfloating) else val


def imag(val: Any, /) -> Any:
    """The imaginary part (zeros of the array's own dtype for non-complex arrays)."""
    if _u.issubdtype_of(val, np.complexfloating):
        return _complex.imag(val)
    return _shape_ops.full_like(val, 0)


def conjugate(x: Any, /) -> Any:
    """The complex conjugate; unlike `lax.conj`, real arrays are returned untouched."""
    return _complex.conj(x) if _u.issubdtype_of(x, np.complexfloating) else x


conj = conjugate
