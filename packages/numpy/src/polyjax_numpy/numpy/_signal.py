"""1-D convolution and correlation of `jnp`: `convolve`, `correlate`.

Both are one `lax.conv_general_dilated` of the longer sequence with the shorter
one as a single-channel kernel (XLA's convolution is a correlation: `convolve`
flips its kernel, `correlate` conjugates it). `mode` sets the padding:
"full" (every overlap, length `n + m - 1`), "same" (length `max(n, m)`,
centred as NumPy does) or "valid" (complete overlaps only, `max(n, m) -
min(n, m) + 1`).

As in JAX, the inputs are promoted to an inexact dtype unless
`preferred_element_type` is given (then they only share a dtype, and the
convolution accumulates in that type).
"""

from __future__ import annotations

from typing import Any

from polyjax_core import dtypes
from polyjax_numpy.lax import _complex, _convolution, _shape_ops
from polyjax_numpy.numpy import _util as _u

_MODES = ("full", "same", "valid")


def _conv1d(
    name: str, x: Any, y: Any, mode: str, precision: Any, preferred_element_type: Any
) -> Any:
    _u.check_arraylike(name, x, y)
    if _u.ndim(x) != 1 or _u.ndim(y) != 1:
        raise ValueError(
            f"{name}() only supports 1-dimensional inputs, got shapes {_u.shape(x)} and "
            f"{_u.shape(y)}."
        )
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}")
    if preferred_element_type is None:
        x, y = _u.promote_dtypes_inexact(x, y)
    else:
        dtypes.check_user_dtype_supported(preferred_element_type, name)
        x, y = _u.promote_dtypes(x, y)
    x, y = _u.as_operand(x), _u.as_operand(y)
    n, m = _u.shape(x)[0], _u.shape(y)[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {(n,)} and {(m,)}.")
    reverse_output = False
    if name == "correlate":
        if _u.is_complex(y):
            y = _complex.conj(y)
        if n < m:
            # correlate(x, y) is the reversed correlate(y, x).
            x, y, reverse_output = y, x, True
    else:
        if n < m:
            x, y = y, x  # convolution commutes
        y = _shape_ops.rev(y, (0,))
    k = _u.shape(y)[0]
    padding = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}[mode]
    out = _convolution.conv_general_dilated(
        _shape_ops.reshape(x, (1, 1, _u.shape(x)[0])),
        _shape_ops.reshape(y, (1, 1, k)),
        (1,),
        [padding],
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = _shape_ops.reshape(out, (_u.shape(out)[2],))
    return _shape_ops.rev(out, (0,)) if reverse_output else out


def convolve(
    a: Any,
    v: Any,
    mode: str = "full",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The discrete linear convolution of two 1-D arrays: `sum_k a[k] * v[n - k]`.

    Args:
      a: a non-empty 1-D array.
      v: a non-empty 1-D array.
      mode: "full" (default), "same" or "valid".
      precision: None, a `lax.Precision` (or name), or a pair of them.
      preferred_element_type: the accumulation and result dtype (then the inputs are
        not made inexact).

    Raises:
      ValueError: inputs that are not 1-D or are empty, or an unknown `mode`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.convolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]))
      Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)
    """
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(
    a: Any,
    v: Any,
    mode: str = "valid",
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The cross-correlation of two 1-D arrays: `sum_n a[n + k] * conj(v[n])`.

    Arguments are those of `convolve`; the default `mode` is "valid".

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.correlate(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]), mode="full")
      Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float32)
    """
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


__all__ = ["convolve", "correlate"]
