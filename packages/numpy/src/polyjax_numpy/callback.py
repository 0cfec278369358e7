"""Host callbacks: calling back into Python from traced and compiled programs.

Three primitives, one per kind of callback, each lowered to a call into Python
on the host (`mlir.emit_python_callback`):

    pure_callback[callback result_avals vmap_method sharding]   no effect: may be
        dropped when unused, duplicated or moved, like any pure operation;
    io_callback[callback ordered result_avals sharding]         effect `IOEffect`
        (or `OrderedIOEffect`, whose calls keep program order);
    debug_callback[callback effect partitioned]                 effect `DebugEffect`
        (or `OrderedDebugEffect`); no outputs.

The eager implementation of `pure_callback` and `io_callback` is the compiled
one-primitive executable, so they run the same way eagerly and under `jit`, and
a failing one raises the same error (`JaxRuntimeError`, chained to the
callback's own exception). `debug_callback` eagerly calls its callback directly
(as JAX does), so its exception propagates as it is.

The callback receives NumPy arrays (`pure_callback`, `io_callback`) or polyjax
arrays (`debug_callback`) and its results are checked against the declared
shapes and dtypes (`RuntimeError` naming both when they differ).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import effects as core_effects
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten, tree_leaves, tree_unflatten
from polyjax_interpreters import batching, mlir
from polyjax_interpreters.array import device_put
from polyjax_numpy.lax import scan
from polyjax_numpy.lax._declare import define_rules

__all__ = [
    "debug_callback",
    "debug_callback_p",
    "io_callback",
    "io_callback_p",
    "pure_callback",
    "pure_callback_p",
]

VMAP_METHODS = (
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
)


class _FlatCallback:
    """The user's callback, called on flat leaves and returning flat leaves.

    Equal when the function and argument structure are: calling
    `pure_callback(np.sin, ...)` eagerly again reuses the compiled executable.
    """

    __slots__ = ("callback_func", "in_tree")

    def __init__(self, callback_func: Callable[..., Any], in_tree: Any):
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args: Any) -> list[Any]:
        args, kwargs = tree_unflatten(self.in_tree, flat_args)
        return tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is _FlatCallback
            and self.callback_func == other.callback_func
            and self.in_tree == other.in_tree
        )

    def __hash__(self) -> int:
        return hash((self.callback_func, self.in_tree))

    def __repr__(self) -> str:
        return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


def _check_results(outs: Sequence[Any], result_avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """The callback's results as arrays of the declared types, or a `RuntimeError`."""
    if len(outs) != len(result_avals):
        raise RuntimeError(
            "Mismatched number of outputs from callback. "
            f"Expected: {len(result_avals)}, Actual: {len(outs)}"
        )
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals)):
        arr = np.asarray(out)
        if arr.shape != tuple(aval.shape):
            raise RuntimeError(
                f"Incorrect output shape for return value #{i}: "
                f"Expected: {tuple(aval.shape)}, Actual: {arr.shape}"
            )
        if arr.dtype != aval.dtype:
            # A Python float (float64) where float32 is expected is fine without x64,
            # as JAX would have canonicalized it; anything else is an error.
            if dtypes.canonicalize_dtype(arr.dtype) != aval.dtype:
                raise RuntimeError(
                    f"Incorrect output dtype for return value #{i}: "
                    f"Expected: {aval.dtype}, Actual: {arr.dtype}"
                )
            arr = arr.astype(aval.dtype)
        checked.append(arr)
    return checked


def _result_avals(result_shape_dtypes: Any, api: str) -> tuple[tuple[ShapedArray, ...], Any]:
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"{api}: result_shape_dtypes must be a pytree of values with .shape and "
                f".dtype (e.g. ShapeDtypeStruct), got a leaf {leaf!r} "
                f"of type {type(leaf).__name__}."
            )
        avals.append(ShapedArray(tuple(shape), dtypes.canonicalize_dtype(dtype)))
    return tuple(avals), tree


def _bind_callback(
    prim: Primitive,
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    args: tuple,
    kwargs: dict,
    **params: Any,
) -> Any:
    """Binds `prim` (named as the API) on the flattened arguments; results as a pytree."""
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes, prim.name)
    outs = prim.bind(
        *flat_args,
        callback=_FlatCallback(callback, in_tree),
        result_avals=result_avals,
        **params,
    )
    return tree_unflatten(out_tree, outs)


def _host_numpy(callback: _FlatCallback, result_avals: Sequence[ShapedArray]) -> Callable:
    def host(*arrays: np.ndarray) -> list[np.ndarray]:
        return _check_results(callback(*arrays), result_avals)

    return host


def _result_lowering(
    ctx: Any, *args: Any, callback: _FlatCallback, result_avals: tuple, ordered: bool = False, **_
) -> list:
    return mlir.emit_python_callback(
        ctx,
        _host_numpy(callback, result_avals),
        args,
        result_avals,
        ordered=ordered,
        has_side_effect=ctx.primitive is not pure_callback_p,
    )


def _sequential(
    prim: Primitive, args: Sequence[Any], dims: Sequence[Any], size: Any, unroll: bool, **params
) -> tuple[list, list]:
    """The primitive applied to one example at a time, in a `scan` over the batch."""
    batched = [d is not None for d in dims]
    xs = [batching.moveaxis(x, d, 0) for x, d in zip(args, dims) if d is not None]

    def step(carry: None, slices: list) -> tuple[None, list]:
        it = iter(slices)
        return carry, prim.bind(*(next(it) if b else x for x, b in zip(args, batched)), **params)

    _, outs = scan(step, None, xs, length=size, unroll=unroll)
    return list(outs), [0] * len(outs)


# ---------------------------------------------------------------------------
# pure_callback


pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True


def _pure_abstract_eval(*avals: Any, result_avals: tuple, **_: Any) -> list:
    return list(result_avals)


def _pure_jvp(primals: list, tangents: list, **_: Any) -> tuple[list, list]:
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
        "callbacks while taking gradients."
    )


def _pure_transpose(cts: Any, *args: Any, **_: Any) -> list:
    raise ValueError(
        "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use "
        "callbacks while taking gradients."
    )


def _pure_batching(
    axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, vmap_method: Any, **params: Any
) -> tuple[list, list]:
    if all(d is None for d in dims):
        return pure_callback_p.bind(*args, vmap_method=vmap_method, **params), [None] * len(
            params["result_avals"]
        )
    size = axis_data.size
    if vmap_method in ("sequential", "sequential_unrolled"):
        unroll = vmap_method == "sequential_unrolled"
        return _sequential(
            pure_callback_p, args, dims, size, unroll, vmap_method=vmap_method, **params
        )
    if vmap_method == "expand_dims":
        new_args = [
            batching.broadcast(x, 1, 0) if d is None else batching.moveaxis(x, d, 0)
            for x, d in zip(args, dims)
        ]
    elif vmap_method == "broadcast_all":
        new_args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    elif vmap_method == "legacy_vectorized":
        new_args = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    else:
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is "
            "one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', "
            f"or 'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    result_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in params["result_avals"])
    params = {**params, "result_avals": result_avals}
    outs = pure_callback_p.bind(*new_args, vmap_method=vmap_method, **params)
    return outs, [0] * len(outs)


define_rules(
    pure_callback_p,
    _pure_abstract_eval,
    _result_lowering,
    jvp=_pure_jvp,
    transpose=_pure_transpose,
    axis_batching=_pure_batching,
)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Calls a side-effect-free Python function on the host from traced code.

    The callback gets NumPy arrays and must return values of the declared shapes
    and dtypes. Being pure, it may be skipped when its results are unused, or
    run more than once.

    Args:
      callback: the function, called as ``callback(*args, **kwargs)`` on NumPy arrays.
      result_shape_dtypes: a pytree of ``ShapeDtypeStruct``-likes describing its results.
      *args: its positional arguments (a pytree of arrays).
      sharding: accepted for JAX compatibility; the callback runs on the host.
      vmap_method: how `vmap` applies it: ``"sequential"`` (once per example, in
        a loop), ``"sequential_unrolled"`` (the same, unrolled),
        ``"expand_dims"`` (once, unbatched arguments given a leading axis of
        size 1), ``"broadcast_all"`` (once, every argument broadcast to the batch)
        or ``"legacy_vectorized"``; None forbids `vmap`.
      **kwargs: its keyword arguments (a pytree of arrays).

    Returns:
      The callback's results, as arrays, in the structure of ``result_shape_dtypes``.

    Raises:
      ValueError: for an unknown ``vmap_method``.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> f = lambda x: polyjax.pure_callback(np.sin, polyjax.ShapeDtypeStruct((), np.float32), x)
      >>> polyjax.jit(f)(np.float32(0.0))
      Array(0., dtype=float32)
    """
    if vmap_method not in (*VMAP_METHODS, None):
        raise ValueError(
            f"vmap_method must be on of the allowed methods {[*VMAP_METHODS, None]}, "
            f"but got: {vmap_method}"
        )
    return _bind_callback(
        pure_callback_p,
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        vmap_method=vmap_method,
        sharding=sharding,
    )


# ---------------------------------------------------------------------------
# io_callback


io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True


def _io_abstract_eval(*avals: Any, result_avals: tuple, ordered: bool, **_: Any):
    effect = core_effects.ordered_io_effect if ordered else core_effects.io_effect
    return list(result_avals), frozenset({effect})


def _io_jvp(primals: list, tangents: list, **_: Any) -> tuple[list, list]:
    raise ValueError("IO callbacks do not support JVP.")


def _io_transpose(cts: Any, *args: Any, **_: Any) -> list:
    raise ValueError("IO callbacks do not support transpose.")


def _io_batching(
    axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, ordered: bool, **params: Any
) -> tuple[list, list]:
    if all(d is None for d in dims):
        outs = io_callback_p.bind(*args, ordered=ordered, **params)
        return outs, [None] * len(outs)
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, args, dims, axis_data.size, False, ordered=ordered, **params)


define_rules(
    io_callback_p,
    _io_abstract_eval,
    _result_lowering,
    effectful=True,
    jvp=_io_jvp,
    transpose=_io_transpose,
    axis_batching=_io_batching,
)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Calls a Python function with side effects on the host from traced code.

    Unlike `pure_callback`, the call is an effect: it is never dropped, and with
    ``ordered=True`` calls happen in program order (also across the iterations
    of a loop and across calls of a jitted function). It cannot be
    differentiated, and an ordered one cannot be batched by `vmap`.

    Args:
      callback: the function, called as ``callback(*args, **kwargs)`` on NumPy arrays.
      result_shape_dtypes: a pytree of ``ShapeDtypeStruct``-likes, or None.
      *args: its positional arguments (a pytree of arrays).
      sharding: accepted for JAX compatibility; the callback runs on the host.
      ordered: keep the program order of the calls.
      **kwargs: its keyword arguments (a pytree of arrays).

    Returns:
      The callback's results, in the structure of ``result_shape_dtypes``.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> from polyjax.experimental import io_callback
      >>> seen = []
      >>> def log(x):
      ...     seen.append(int(x))
      ...     return x
      >>> s = polyjax.ShapeDtypeStruct((), np.int32)
      >>> polyjax.jit(lambda x: io_callback(log, s, x, ordered=True))(np.int32(7))
      Array(7, dtype=int32)
      >>> seen
      [7]
    """
    return _bind_callback(
        io_callback_p,
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        ordered=ordered,
        sharding=sharding,
    )


# ---------------------------------------------------------------------------
# debug_callback


debug_callback_p = Primitive("debug_callback")
debug_callback_p.multiple_results = True


def _debug_abstract_eval(*avals: Any, effect: core_effects.Effect, **_: Any):
    return [], frozenset({effect})


def _debug_lowering(ctx: Any, *args: Any, callback: _FlatCallback, effect: Any, **_: Any) -> list:
    def host(*arrays: np.ndarray) -> list:
        callback(*map(device_put, arrays))  # a debug callback sees polyjax arrays
        return []

    ordered = core_effects.ordered_effects.contains(effect)
    return mlir.emit_python_callback(ctx, host, args, [], ordered=ordered)


def _debug_impl(*args: Any, callback: _FlatCallback, **_: Any) -> list:
    # Eagerly the values are already on the host side of the program: call
    # directly (no executable to compile for each new callback).
    callback(*map(device_put, args))
    return []


def _debug_jvp(primals: list, tangents: list, **params: Any) -> tuple[list, list]:
    # Debugging shows the values it is given: the primals here (a tangent is
    # shown where user code passes it, e.g. in a custom_jvp rule).
    debug_callback_p.bind(*primals, **params)
    return [], []


def _debug_transpose(cts: Any, *args: Any, **_: Any) -> list:
    # A callback on linear values (tangents under `grad`) has nothing to show
    # on the way back, as in JAX: it contributes no cotangents.
    return [None] * len(args)


def _debug_batching(
    axis_data: Any, args: Sequence[Any], dims: Sequence[Any], **params: Any
) -> tuple[list, list]:
    if all(d is None for d in dims):
        return debug_callback_p.bind(*args, **params), []
    return _sequential(debug_callback_p, args, dims, axis_data.size, False, **params)


define_rules(
    debug_callback_p,
    _debug_abstract_eval,
    _debug_lowering,
    effectful=True,
    impl=_debug_impl,
    jvp=_debug_jvp,
    transpose=_debug_transpose,
    axis_batching=_debug_batching,
)


def debug_callback(
    callback: Callable[..., Any],
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> None:
    """Calls ``callback(*args, **kwargs)`` on the host with the values the program computes.

    For debugging: the callback returns nothing to the program, sees polyjax
    arrays, runs under every transformation (once per example under `vmap`,
    on the primal values under `grad`) and is never removed as dead code.

    Args:
      callback: the function to call.
      *args: its positional arguments (a pytree of arrays).
      ordered: keep the program order of the calls.
      partitioned: accepted for JAX compatibility.
      **kwargs: its keyword arguments (a pytree of arrays).

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> polyjax.jit(lambda x: polyjax.debug.callback(print, x * 2))(np.float32(1.5))
      3.0
    """
    flat_args, in_tree = tree_flatten((args, kwargs))
    effect = core_effects.ordered_debug_effect if ordered else core_effects.debug_effect
    debug_callback_p.bind(
        *flat_args,
        callback=_FlatCallback(callback, in_tree),
        effect=effect,
        partitioned=partitioned,
    )
