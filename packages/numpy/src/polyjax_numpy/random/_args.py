"""Argument handling shared by the samplers: keys, shapes, dtypes and distribution parameters.

JAX's samplers take a static `shape`, a `dtype` and array parameters that must
broadcast to `shape` (by default `shape` is the parameters' broadcast shape).
Parameters are converted to the sampler's dtype as strongly typed values, so a
draw's dtype is the sampler's, never a weak Python-scalar type.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_interpreters.jit import jit
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.random import _prng
from polyjax_numpy.random._prng import check_shape

__all__ = [
    "check_broadcast",
    "check_broadcast_shapes",
    "check_shape",
    "const",
    "float_dtype",
    "float_param_dtype",
    "int_dtype",
    "param",
    "param_shape",
    "sample",
    "single_key",
    "staged",
    "to_rank",
]

_PY_SCALARS = (bool, int, float, complex)


def float_dtype(fun_name: str, dtype: Any) -> np.dtype:
    """`dtype` canonicalized (None: the default float), which must be a real float."""
    dtype = dtypes.canonicalize_dtype(dtypes.float_ if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{fun_name}` must be a float dtype, got {dtype}")
    return dtype


def int_dtype(fun_name: str, dtype: Any) -> np.dtype:
    """`dtype` canonicalized (None: the default int), which must be an integer dtype."""
    dtype = dtypes.canonicalize_dtype(dtypes.int_ if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `{fun_name}` must be an int dtype, got {dtype}")
    return dtype


def float_param_dtype(p: Any) -> np.dtype:
    """The float dtype a parameter is computed in: its own float type, or the default float."""
    dt = _u.dtype(p)
    if dtypes.issubdtype(dt, np.floating):
        return dtypes.canonicalize_dtype(dt)
    return dtypes.canonicalize_dtype(dtypes.float_)


def check_broadcast(fun_name: str, shape: tuple[int, ...], *args: Any) -> None:
    """Raises ValueError unless every argument broadcasts to exactly `shape`."""
    check_broadcast_shapes(fun_name, shape, *(_u.shape(arg) for arg in args))


def check_broadcast_shapes(
    fun_name: str, shape: tuple[int, ...], *shapes: Any, what: str = "arguments of shape"
) -> None:
    """Raises ValueError unless every one of `shapes` broadcasts to exactly `shape`.

    `what` names the shapes in the message (e.g. "logits of batch shape").
    """
    for s in shapes:
        s = tuple(s)
        if len(s) > len(shape) or any(
            d not in (1, t) for d, t in zip(s[::-1], shape[::-1], strict=False)
        ):
            raise ValueError(
                f"{fun_name}: {what} {s} do not broadcast to the requested shape {shape}"
            )


def param_shape(fun_name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """The draw's shape: `shape` checked against the parameters, or their broadcast shape."""
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*(_u.shape(p) for p in params)))
        except ValueError:
            shapes = [_u.shape(p) for p in params]
            raise ValueError(
                f"{fun_name}: parameter shapes {shapes} do not broadcast together"
            ) from None
    shape = check_shape(fun_name, shape)
    check_broadcast(fun_name, shape, *params)
    return shape


def const(value: Any, dtype: Any) -> Any:
    """A rank-0 host constant of `dtype` (a literal when traced)."""
    return np.asarray(value, dtype)[()]


def param(fun_name: str, value: Any, dtype: Any) -> Any:
    """A distribution parameter as a strongly typed array (or scalar) of `dtype`.

    A Python scalar goes through its default dtype first (float32 for a float),
    as a traced weak-typed argument would: the double rounding is JAX's.
    """
    if isinstance(value, _PY_SCALARS):
        return np.asarray(value, dtypes.canonicalize_dtype(dtypes.dtype(value))).astype(dtype)[()]
    _u.check_arraylike(fun_name, value)
    return _u.convert(value, np.dtype(dtype))


def to_rank(x: Any, rank: int) -> Any:
    """`x` with leading size-1 axes up to `rank` (lax stretches size-1 axes, not ranks)."""
    return _shape_ops.broadcast_to_rank(x, rank) if _u.shape(x) else x


def single_key(fun_name: str, key: Any) -> _prng.PRNGKeyArray:
    """`key` (typed or raw) as a typed single key; see `_prng.check_single_key`."""
    return _prng.check_single_key(fun_name, key)[0]


def staged(*static_argnames: str) -> Callable[[Callable[..., Any]], Any]:
    """Decorates a sampler's body to run as one compiled computation, as JAX's do.

    Staging is what makes the bits JAX's: XLA evaluates a fused computation with
    excess precision (e.g. float16 chains kept in float32) and treats the
    distribution parameters as runtime values, and eager op-by-op evaluation
    would round differently. The `static_argnames` (shapes, dtypes, modes) are
    Python values; the key and the parameters are traced arguments.
    """
    return functools.partial(jit, static_argnames=static_argnames)


def sample(
    fun_name: str,
    body: Callable[..., Any],
    key: Any,
    params: Sequence[Any],
    shape: Any,
    dtype: Any,
    *,
    dtype_rule: Callable[[str, Any], np.dtype] = float_dtype,
    **static: Any,
) -> Any:
    """A sampler's argument checks, then its staged `body`.

    `key` must be a single key, `dtype` pass `dtype_rule` and the `params` be
    array-likes broadcasting to `shape` (None: to their broadcast shape). A
    sampler whose `shape` is required checks it with `check_shape` first.

    Returns:
      `body(key, *params, shape=shape, dtype=dtype, **static)`.
    """
    typed = single_key(fun_name, key)
    dtype = dtype_rule(fun_name, dtype)
    _u.check_arraylike(fun_name, *params)
    shape = param_shape(fun_name, shape, *params)
    return body(typed, *params, shape=shape, dtype=dtype, **static)
