"""Index helpers: `ix_`, `s_`, `index_exp`, `mgrid`, `ogrid`, `r_` and `c_`.

    x[jnp.ix_(rows, cols)]        the submatrix at rows x cols (an open mesh of indices)
    x[jnp.s_[1:, ::2]]            index expressions as values (`index_exp` keeps tuples)
    jnp.mgrid[0:2, 0:3]           dense coordinate grids, (2, 2, 3); `ogrid`: broadcastable
    jnp.mgrid[0:1:5j]             a complex step counts points: linspace(0, 1, 5)
    jnp.r_[1:4, 0, [7, 8]]        concatenation along rows; `c_` along the last axis

Grid and range bounds must be concrete (the results' shapes depend on them).
As in JAX, integer grids are int32 (the default integer) and float grids
float32, and the pieces of `r_`/`c_` promote on JAX's lattice.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_numpy.lax import _shape_ops
from polyjax_numpy.numpy import _creation, _joining
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._indexing import _concrete_mask

__all__ = ["c_", "index_exp", "ix_", "mgrid", "ogrid", "r_", "s_"]


def ix_(*args: Any) -> tuple[Any, ...]:
    """An open mesh of index arrays: `x[ix_(a, b)]` is the block at rows `a`, columns `b`.

    Args:
      *args: N one-dimensional integer (or concrete boolean: their nonzero
        positions) sequences.

    Returns:
      N arrays; the k-th has shape `(1, ..., len(args[k]), ..., 1)`.

    Raises:
      ValueError: an argument is not one-dimensional.
      NonConcreteBooleanIndexError: a boolean argument is traced.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.arange(12).reshape(3, 4)
      >>> x[jnp.ix_(jnp.array([0, 2]), jnp.array([1, 3]))]
      Array([[ 1,  3],
             [ 9, 11]], dtype=int32)
    """
    n = len(args)
    out = []
    for k, a in enumerate(args):
        if isinstance(a, list | tuple) and len(a) == 0:
            a = np.zeros(0, np.int32)  # NumPy reads an empty sequence as integer indices
        a = _creation.asarray(a)
        if _u.ndim(a) != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {_u.shape(a)} "
                f"at position {k}"
            )
        if _u.is_bool(a):
            a = _creation.asarray(np.nonzero(_concrete_mask(a))[0].astype(np.int32))
        shape = (1,) * k + (_u.shape(a)[0],) + (1,) * (n - k - 1)
        out.append(_shape_ops.reshape(a, shape))
    return tuple(out)


class _IndexExpression:
    """`s_[...]` and `index_exp[...]` return their index (`index_exp` always a tuple)."""

    def __init__(self, maketuple: bool, name: str):
        self._maketuple = maketuple
        self._name = name

    def __getitem__(self, item: Any) -> Any:
        if self._maketuple and not isinstance(item, tuple):
            return (item,)
        return item

    def __repr__(self) -> str:
        return f"jnp.{self._name}"


index_exp = _IndexExpression(maketuple=True, name="index_exp")
s_ = _IndexExpression(maketuple=False, name="s_")


def _concrete(value: Any, what: str, name: str) -> Any:
    def force(v: Any) -> Any:
        v = np.asarray(v)
        return v[()] if v.ndim == 0 else v

    return concrete_or_error(force, value, f"The problem arose with the {what} of jnp.{name}.")


def _range_of(s: slice, name: str) -> Any:
    """The 1-D array a slice stands for: `arange`, or `linspace` for a complex step."""
    start = 0 if s.start is None else _concrete(s.start, "slice start", name)
    if s.stop is None:
        raise ValueError(f"jnp.{name}: a slice needs a stop, got {s}")
    stop = _concrete(s.stop, "slice stop", name)
    step = 1 if s.step is None else _concrete(s.step, "slice step", name)
    if np.iscomplexobj(step):
        return _creation.linspace(start, stop, operator.index(int(abs(step))))
    return _creation.arange(start, stop, step)


class _Grid:
    """`mgrid[...]` (dense) and `ogrid[...]` (open, broadcastable) coordinate grids."""

    def __init__(self, sparse: bool, name: str):
        self._sparse = sparse
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _range_of(key, self._name)
        if not isinstance(key, tuple) or not all(isinstance(k, slice) for k in key):
            raise TypeError(f"jnp.{self._name} takes slices, e.g. [0:3, 0:1:5j]; got {key!r}")
        axes = _u.promote_dtypes(*(_range_of(k, self._name) for k in key))
        grids = _creation.meshgrid(*axes, indexing="ij", sparse=self._sparse)
        if self._sparse:
            return grids
        if not grids:
            return _creation.arange(0)
        return _joining.stack(grids, 0)

    def __repr__(self) -> str:
        return f"jnp.{self._name}"


mgrid = _Grid(sparse=False, name="mgrid")
ogrid = _Grid(sparse=True, name="ogrid")


def _parse_directive(directive: str, name: str) -> tuple[int, int, int]:
    if directive in ("r", "c"):
        raise NotImplementedError(
            f"jnp.{name}: the matrix directives 'r' and 'c' are not supported (there are no "
            "matrix objects)"
        )
    try:
        values = [int(v) for v in directive.split(",")]
    except ValueError:
        values = []
    if not 1 <= len(values) <= 3:
        raise ValueError(f"jnp.{name}: could not understand directive {directive!r}")
    axis, ndmin, trans1d = values + [1, -1][len(values) - 1 :]
    return axis, ndmin, trans1d


def _upgrade(a: Any, ndmin: int, trans1d: int) -> Any:
    """`a` with size-1 axes added up to `ndmin`; its own axes start at `trans1d`.

    A negative `trans1d` counts where its last axis goes from the end, so the
    default -1 puts the new axes in front.
    """
    k = _u.ndim(a)
    if k >= ndmin:
        return a
    start = trans1d if trans1d >= 0 else ndmin + trans1d - k + 1
    start = min(max(start, 0), ndmin - k)
    shape = [1] * ndmin
    shape[start : start + k] = _u.shape(a)
    return _shape_ops.reshape(a, tuple(shape))


class _AxisConcat:
    """`r_[...]` and `c_[...]`: pieces (slices, scalars, arrays) joined along an axis."""

    def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
        self._defaults = (axis, ndmin, trans1d)
        self._name = name

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._defaults
        if items and isinstance(items[0], str):
            axis, ndmin, trans1d = _parse_directive(items[0], self._name)
            items = items[1:]
        pieces = []
        for item in items:
            if isinstance(item, str):
                raise ValueError(f"jnp.{self._name}: a string is only allowed first, got {item!r}")
            if isinstance(item, slice):
                piece = _range_of(item, self._name)
            else:
                piece = _creation.asarray(item)
                if _u.ndim(piece) == 0:  # a scalar: one element, with no axis to place
                    piece = _shape_ops.reshape(piece, (1,) * max(ndmin, 1))
            pieces.append(_upgrade(piece, ndmin, trans1d))
        if not pieces:
            return _creation.asarray(np.zeros(0, dtypes.default_float_dtype()))
        return _joining.concatenate(_u.promote_dtypes(*pieces), axis=axis)

    def __repr__(self) -> str:
        return f"jnp.{self._name}"


r_ = _AxisConcat(axis=0, ndmin=1, trans1d=-1, name="r_")
c_ = _AxisConcat(axis=-1, ndmin=2, trans1d=0, name="c_")
