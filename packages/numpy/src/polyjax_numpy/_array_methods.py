"""Operators and methods of arrays and tracers: `x + 1`, `x @ y`, `x[1:, None]`, `x.sum()`.

Core's `Tracer` and the runtime's `Array` know no arithmetic: they forward every
operator to a registry. This module fills both registries (importing it is
enough) with the `jnp` functions, so `x + y` and `jnp.add(x, y)` share one code
path and one set of semantics (JAX's type promotion, NumPy's broadcasting; see
`polyjax_numpy.numpy._util`).

Operands that are not array-like (lists, strings, None ...) make the operator
return `NotImplemented`, so Python raises its usual `TypeError` (or, for `==`,
compares identities).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from polyjax_core import symbolic_dims as sd
from polyjax_core import tracing
from polyjax_interpreters import array as array_mod
from polyjax_interpreters.jit import jit as _jit
from polyjax_numpy.numpy import (
    _creation,
    _cumulative,
    _indexing,
    _manipulation,
    _matrices,
    _products,
    _reductions,
    _selection,
    _sorting,
    _statistics,
    _ufuncs,
    _ufuncs_math,
)
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._index_update import at as _at

_PY_NUMBERS = _u._PY_NUMBERS
# The operators whose Python-scalar operand takes the jitted fast path (see `_defer`).
_ARITHMETIC = frozenset(
    {
        _ufuncs.add,
        _ufuncs.subtract,
        _ufuncs.multiply,
        _ufuncs.true_divide,
        _ufuncs.floor_divide,
        _ufuncs.remainder,
        _ufuncs.power,
    }
)

__all__: list[str] = []  # importing the module registers everything; it exports nothing


def _defer(fn: Callable[[Any, Any], Any], reflected: bool) -> Callable[[Any, Any], Any]:
    """The operator method: `NotImplemented` for operands that are not arrays."""

    # `Array op Python scalar` outside any trace: both operands as Arrays (the
    # scalar from the device-scalar cache) into a jitted `fn`, which jit's C++
    # fast path runs without entering Python, as JAX's jitted ufuncs do.
    jitted = _jit(fn)
    numbers = _PY_NUMBERS if fn in _ARITHMETIC else frozenset()

    if reflected:

        def method(self: Any, other: Any) -> Any:
            if type(other) in numbers:
                both = _u._array_and_python_scalar((other, self))
                if both is not None:
                    return jitted(*both)
            if not _u.is_operand(other):
                return NotImplemented
            return fn(_u.from_protocol(other), self)

    else:

        def method(self: Any, other: Any) -> Any:
            if type(other) in numbers:
                both = _u._array_and_python_scalar((self, other))
                if both is not None:
                    return jitted(*both)
            if not _u.is_operand(other):
                return NotImplemented
            return fn(self, _u.from_protocol(other))

    method.__name__ = getattr(fn, "__name__", "op")
    return method


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": _ufuncs.add,
    "sub": _ufuncs.subtract,
    "mul": _ufuncs.multiply,
    "truediv": _ufuncs.true_divide,
    "floordiv": _ufuncs.floor_divide,
    "mod": _ufuncs.remainder,
    "divmod": _ufuncs.divmod,
    "pow": _ufuncs.power,
    "matmul": _products.matmul,
    "and": _ufuncs.bitwise_and,
    "or": _ufuncs.bitwise_or,
    "xor": _ufuncs.bitwise_xor,
    "lshift": _ufuncs.left_shift,
    "rshift": _ufuncs.right_shift,
}

_COMPARISONS: dict[str, Callable[[Any, Any], Any]] = {
    "eq": _ufuncs.equal,
    "ne": _ufuncs.not_equal,
    "lt": _ufuncs.less,
    "le": _ufuncs.less_equal,
    "gt": _ufuncs.greater,
    "ge": _ufuncs.greater_equal,
}


# Methods whose signature differs from the jnp function's: `x.reshape(2, 3)` and
# `x.transpose(1, 0)` take the shape or axes unpacked.


def _reshape_method(self: Any, *args: Any, order: str = "C") -> Any:
    shape = args[0] if len(args) == 1 and not sd.is_dim(args[0]) else args
    return _manipulation.reshape(self, shape, order)


def _transpose_method(self: Any, *args: Any) -> Any:
    if not args or (len(args) == 1 and args[0] is None):
        return _manipulation.transpose(self)
    axes = args[0] if len(args) == 1 and isinstance(args[0], tuple | list) else args
    return _manipulation.transpose(self, axes)


def _astype_method(self: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    return _manipulation.astype(self, dtype, copy=copy, device=device)


def _compress_method(
    self: Any,
    condition: Any,
    axis: int | None = None,
    *,
    out: None = None,
    size: int | None = None,
    fill_value: Any = 0,
) -> Any:
    # `x.compress(condition)` is `jnp.compress(condition, x)`: the array comes second.
    return _selection.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


_METHODS: dict[str, Callable[..., Any]] = {
    "sum": _reductions.sum,
    "prod": _reductions.prod,
    "max": _reductions.max,
    "min": _reductions.min,
    "mean": _reductions.mean,
    "argmax": _reductions.argmax,
    "argmin": _reductions.argmin,
    "all": _reductions.all,
    "any": _reductions.any,
    "ptp": _reductions.ptp,
    "var": _statistics.var,
    "std": _statistics.std,
    "cumsum": _cumulative.cumsum,
    "cumprod": _cumulative.cumprod,
    "dot": _products.dot,
    "trace": _products.trace,
    "astype": _astype_method,
    "reshape": _reshape_method,
    "transpose": _transpose_method,
    "view": _manipulation.view,
    "byteswap": _manipulation.byteswap,
    "squeeze": _manipulation.squeeze,
    "ravel": _manipulation.ravel,
    "flatten": _manipulation.ravel,
    "repeat": _manipulation.repeat,
    "swapaxes": _manipulation.swapaxes,
    "diagonal": _matrices.diagonal,
    "compress": _compress_method,
    "choose": _selection.choose,
    "copy": _creation.copy,
    "take": _indexing.take,
    "clip": _ufuncs_math.clip,
    "round": _ufuncs_math.round,
    "conj": _manipulation.conjugate,
    "conjugate": _manipulation.conjugate,
    "sort": _sorting.sort,
    "argsort": _sorting.argsort,
    "argpartition": _sorting.argpartition,
    "searchsorted": _sorting.searchsorted,
    "nonzero": _sorting.nonzero,
}

_PROPERTIES: dict[str, Callable[[Any], Any]] = {
    "at": _at,
    "T": _manipulation.transpose,
    "mT": _manipulation.matrix_transpose,
    "real": _manipulation.real,
    "imag": _manipulation.imag,
    "flat": _manipulation.flat,
}


def _bound(fn: Callable[..., Any]) -> Callable[[Any], Any]:
    return lambda self: functools.partial(fn, self)


def register_method(name: str, fn: Callable[..., Any]) -> None:
    """Makes `fn(x, ...)` available as the method `x.<name>(...)` of arrays and tracers."""
    tracing.register_tracer_attribute(name, _bound(fn))
    array_mod.register_array_attribute(name, _bound(fn))


def register_property(name: str, getter: Callable[[Any], Any]) -> None:
    """Makes `getter(x)` available as the attribute `x.<name>` of arrays and tracers."""
    tracing.register_tracer_attribute(name, getter)
    array_mod.register_array_attribute(name, getter)


def _tracer_to_device(x: Any, device: Any, *, stream: Any = None) -> Any:
    # Arrays have their own `to_device`; a traced one is placed as `device_put` places it.
    if stream is not None:
        raise NotImplementedError("to_device(stream=...) is not supported.")
    return array_mod.device_put(x, device)


def _register() -> None:
    operators: dict[str, Callable[..., Any]] = {}
    for base, fn in _BINARY.items():
        operators[f"__{base}__"] = _defer(fn, reflected=False)
        operators[f"__r{base}__"] = _defer(fn, reflected=True)
    for base, fn in _COMPARISONS.items():
        operators[f"__{base}__"] = _defer(fn, reflected=False)
    operators["__neg__"] = _ufuncs.negative
    operators["__pos__"] = _ufuncs.positive
    operators["__abs__"] = _ufuncs.absolute
    operators["__invert__"] = _ufuncs.invert
    operators["__round__"] = _ufuncs_math.round_operator
    operators["__getitem__"] = _indexing.getitem
    missing = set(tracing.BINARY_OPERATORS + tracing.OTHER_OPERATORS) - set(operators)
    assert not missing, missing
    for name, fn in operators.items():
        tracing.register_tracer_method(name, fn)
        array_mod.register_array_method(name, fn)
    for name, fn in _METHODS.items():
        register_method(name, fn)
    for name, getter in _PROPERTIES.items():
        register_property(name, getter)
    tracing.register_tracer_attribute("to_device", _bound(_tracer_to_device))


_register()
