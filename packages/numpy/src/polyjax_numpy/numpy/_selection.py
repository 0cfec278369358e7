"""Choosing elements by condition: `where`, `select`, `piecewise`, `choose`, `compress`,
`extract`, `place`, `trim_zeros`.

Elementwise choices (`where(c, x, y)`, `select`, `piecewise`, `choose`) become
lax `select_n`, so they trace, batch and differentiate (the gradient flows to
the chosen values). Functions whose result size depends on the data
(`where(c)`, `compress`, `extract`) need a concrete condition, or a static
`size=`: the result then has `size` entries, the found ones first and
`fill_value` after them (cut short if more are found), as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core.tracing import concrete_or_error
from polyjax_interpreters.batching import vmap
from polyjax_numpy.lax import _cumulative, _shape_ops, _slicing
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import (
    broadcast_arrays,
    concrete_or_none,
    flat_or_axis,
    moveaxis,
    ravel,
    reshape,
    take_axis,
)

_I32 = np.dtype(np.int32)


def _as_bool(x: Any) -> Any:
    """A condition as a bool array: nonzero is true."""
    x = asarray(x)
    if _u.is_bool(x):
        return x
    return lax.ne(x, _u.scalar_like(0, x))


# ---------------------------------------------------------------------------
# Elementwise choices


def where(
    condition: Any,
    x: Any = None,
    y: Any = None,
    /,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """`x` where `condition` holds, else `y` (elementwise, broadcast together).

    With only `condition`, returns the indices of its nonzero elements, one array per
    axis (as `nonzero`); that form needs a concrete condition or a static `size`.

    Args:
      condition: a bool array (other dtypes: nonzero is true).
      x, y: the values chosen from (promoted to a common dtype; Python scalars are weak).
      size: for the one-argument form, the static number of indices returned.
      fill_value: for the one-argument form, the index used to pad to `size`.

    Raises:
      ValueError: only one of `x` and `y` is given, or `size`/`fill_value` come with
        `x` and `y`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.where(jnp.arange(4) > 1, 1.0, -1.0)
      Array([-1., -1.,  1.,  1.], dtype=float32, weak_type=True)
    """
    if x is None and y is None:
        return nonzero_static(condition, size=size, fill_value=fill_value, name="where")
    if x is None or y is None:
        raise ValueError(
            "Either both or neither of the x and y arguments should be provided to "
            f"jax.numpy.where, got {x} and {y}."
        )
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    _u.check_arraylike("where", condition, x, y)
    return _u.where(condition, x, y)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """For each element, the value of the first choice whose condition holds (else `default`).

    Args:
      condlist: bool arrays.
      choicelist: arrays, one per condition (all broadcast together).
      default: the value where no condition holds.

    Raises:
      ValueError: the lists differ in length or are empty.
      TypeError: a condition is not boolean.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.arange(5)
      >>> jnp.select([x < 2, x > 3], [x, x * 10], default=-1)
      Array([ 0,  1, -1, -1, 40], dtype=int32)
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if not condlist:
        raise ValueError("condlist must be non-empty")
    _u.check_arraylike("select", *condlist, *choicelist, default)
    for i, c in enumerate(condlist):
        if not _u.is_bool(c):
            raise TypeError(
                f"invalid entry {i} in condlist: should be boolean ndarray, got {_u.dtype(c)}"
            )
    choices = _u.promote_dtypes(default, *choicelist)
    arrays = broadcast_arrays(*condlist, *choices)
    conds, (out, *values) = arrays[: len(condlist)], arrays[len(condlist) :]
    # The first true condition wins: apply them from the last to the first.
    for cond, value in zip(reversed(conds), reversed(values)):
        out = lax.select_n(cond, out, value)
    return out


def piecewise(
    x: Any,
    condlist: Any,
    funclist: Sequence[Any],
    *args: Any,
    **kw: Any,
) -> Any:
    """`x` transformed piecewise: `funclist[i]` where `condlist[i]` holds (the last wins).

    As in JAX, each function is applied to single elements (vectorized with
    `vmap`), so it may be any traceable scalar function; constants stand for
    constant functions. One extra function is the default where no condition holds
    (else the default is 0).

    Args:
      x: the array.
      condlist: bool arrays of `x`'s shape (or one such array).
      funclist: functions `f(x, *args, **kw)` or constants, `len(condlist)` or one more.
      *args, **kw: passed on to the functions.

    Raises:
      ValueError: `funclist` has the wrong length.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.linspace(-2, 2, 5)
      >>> jnp.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])
      Array([2., 1., 0., 1., 4.], dtype=float32)
    """
    _u.check_arraylike("piecewise", x)
    x = asarray(x)
    if isinstance(condlist, _u.ARRAY_TYPES + (np.ndarray,)) and (
        _u.ndim(condlist) == _u.ndim(x) and _u.ndim(x) != 0 or _u.ndim(condlist) == 0
    ):
        condlist = [condlist]
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        default, funcs = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default, funcs = 0, list(funclist)
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    dtype = _u.dtype(x)
    shape = _u.shape(x)

    def evaluate(f: Any) -> Any:
        if not callable(f):
            return _shape_ops.full(shape, np.asarray(f).astype(dtype)[()])
        if _u.shape(ravel(x))[0] == 0:
            return x
        flat = vmap(lambda v: asarray(f(v, *args, **kw)).astype(dtype))(ravel(x))
        return reshape(flat, shape)

    out = evaluate(default)
    for cond, f in zip(condlist, funcs):
        out = lax.select_n(_u.broadcast_to(_as_bool(cond), shape), out, evaluate(f))
    return out


def choose(a: Any, choices: Sequence[Any], out: None = None, mode: str = "raise") -> Any:
    """For each element, `choices[a]` at that position (all broadcast together).

    Args:
      a: an integer array of indices into `choices`.
      choices: a sequence of arrays (or an array whose rows are the choices).
      out: not supported.
      mode: what to do with indices outside `[0, len(choices))`: "raise" (needs a
        concrete `a`), "wrap" (modulo) or "clip".

    Raises:
      ValueError: an index is out of range in "raise" mode, or an unknown mode.
      ConcretizationTypeError: `a` is traced in "raise" mode.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.choose(jnp.array([0, 1, 0]), [jnp.zeros(3), jnp.ones(3)])
      Array([0., 1., 0.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if isinstance(choices, _u.ARRAY_TYPES + (np.ndarray,)):
        choices = [choices[i] for i in range(_u.shape(choices)[0])]
    _u.check_arraylike("choose", a, *choices)
    n = len(choices)
    if n == 0:
        raise ValueError("jnp.choose: choices must not be empty")
    if not _u.issubdtype_of(a, np.integer):
        raise TypeError(f"jnp.choose: a must be an integer array, got {_u.dtype(a)}")
    a = asarray(a)
    if mode == "raise":
        host = concrete_or_error(
            np.asarray,
            a,
            "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
            "mode='wrap' or mode='clip' instead.",
        )
        if ((host < 0) | (host >= n)).any():
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        size = _u.scalar_like(n, a)
        a = lax.rem(lax.add(lax.rem(a, size), size), size)  # Python's modulo
    elif mode == "clip":
        a = lax.clamp(_u.scalar_like(0, a), a, _u.scalar_like(n - 1, a))
    else:
        raise ValueError(f"{mode=} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *values = broadcast_arrays(_u.convert(a, _I32), *_u.promote_dtypes(*choices))
    return lax.select_n(a, *values) if n > 1 else values[0]


# ---------------------------------------------------------------------------
# Data-dependent sizes


def nonzero_static(
    a: Any, *, size: int | None = None, fill_value: Any = None, name: str = "nonzero"
) -> tuple[Any, ...]:
    """The indices of the nonzero elements of `a`, one int32 array per axis.

    A private version of `jnp.nonzero` for the functions here: without `size` the
    condition must be concrete; with it, the first `size` indices are returned and
    the rest filled with `fill_value` (0 by default; one value per axis allowed).
    """
    _u.check_arraylike(name, a)
    shape = _u.shape(a)
    if not shape:
        raise ValueError(
            f"Calling {name} on 0d arrays is not allowed. Use jnp.atleast_1d(scalar) instead."
        )
    if size is None:
        host = concrete_or_error(
            np.asarray,
            a,
            f"The size argument of jnp.{name} must be statically specified to use jnp.{name} "
            "within JAX transformations.",
        )
        return tuple(asarray(i.astype(np.int32)) for i in np.nonzero(host))
    size = concrete_int(size, f"'size' argument of jnp.{name}")
    ndim = len(shape)
    fills = [0] * ndim if fill_value is None else list(np.broadcast_to(fill_value, (ndim,)))
    flat = ravel(_as_bool(a))
    total = _u.shape(flat)[0]
    found, count = _first_true(flat, size)
    valid = lax.lt(_shape_ops.iota(_I32, size), count)
    out = []
    stride = total
    for axis, dim in enumerate(shape):
        stride //= max(dim, 1)
        index = lax.rem(lax.div(found, np.int32(max(stride, 1))), np.int32(max(dim, 1)))
        fill = _shape_ops.full((size,), np.asarray(fills[axis], _I32)[()])
        out.append(lax.select_n(valid, fill, index))
    return tuple(out)


def _first_true(flat: Any, size: int) -> tuple[Any, Any]:
    """The positions of the first `size` true entries of a bool vector, and their count."""
    n = _u.shape(flat)[0]
    if n == 0:
        return _shape_ops.full((size,), np.int32(0)), np.int32(0)
    counts = _cumulative.cumsum(_u.convert(flat, _I32), 0)
    # The k-th true entry goes to slot k; false ones to an out-of-range slot (dropped).
    slot = lax.select_n(flat, _shape_ops.full((n,), np.int32(size)), lax.sub(counts, np.int32(1)))
    found = _slicing.scatter(
        _shape_ops.full((size,), np.int32(0)),
        _shape_ops.expand_dims(slot, (1,)),
        _shape_ops.iota(_I32, n),
        _slicing.ScatterDimensionNumbers((), (0,), (0,)),
        mode="drop",
    )
    return found, _shape_ops.reshape(_shape_ops.slice(counts, (n - 1,), (n,)), ())


def compress(
    condition: Any,
    a: Any,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: Any = 0,
    out: None = None,
) -> Any:
    """The slices of `a` along `axis` where the 1-D `condition` holds.

    Args:
      condition: a 1-D array (nonzero is true); entries past the axis's length must be
        false, and a shorter condition counts as false for the rest.
      a: the array (flattened when `axis` is None).
      axis: the axis to select along.
      size: the static number of slices to return (needed when `condition` is traced);
        missing slices are filled with `fill_value`, extra ones dropped.
      fill_value: the value of the filling slices.
      out: not supported.

    Raises:
      ValueError: `condition` is not 1-D, or true past the end of the axis.
      ConcretizationTypeError: `condition` is traced and `size` is None.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.compress(jnp.array([True, False, True]), jnp.arange(3))
      Array([0, 2], dtype=int32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    _u.check_arraylike("compress", condition, a)
    cond = _as_bool(condition)
    if _u.ndim(cond) != 1:
        raise ValueError(f"condition must be a 1D array, got shape {_u.shape(cond)}")
    a, axis = flat_or_axis(asarray(a), axis)
    a = moveaxis(a, axis, 0)
    n, m = _u.shape(a)[0], _u.shape(cond)[0]
    if m > n:
        extra = concrete_or_none(_shape_ops.slice(cond, (n,), (m,)))
        if extra is None or extra.any():
            raise ValueError("condition contains entries that are out of bounds")
        cond = _shape_ops.slice(cond, (0,), (n,))
    elif m < n:
        a = _shape_ops.slice_in_dim(a, 0, m, axis=0)
    if size is None:
        (idx,) = nonzero_static(cond, name="compress")
        result = take_axis(a, np.asarray(idx), 0)
    else:
        (idx,) = nonzero_static(cond, size=size, fill_value=-1, name="compress")
        rest = _u.shape(a)[1:]
        zero = np.zeros((), _u.dtype(a))[()]
        picked = (
            take_axis(a, lax.max(idx, np.int32(0)), 0)
            if m
            else _shape_ops.full((size, *rest), zero)
        )
        valid = _shape_ops.broadcast_in_dim(lax.ge(idx, np.int32(0)), _u.shape(picked), (0,))
        fill = _shape_ops.full(_u.shape(picked), np.asarray(fill_value).astype(_u.dtype(a))[()])
        result = lax.select_n(valid, fill, picked)
    return moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of `arr` where `condition` holds, flattened (`compress` on both
    flattened).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.extract(jnp.arange(4) % 2 == 0, jnp.arange(4) * 10)
      Array([ 0, 20], dtype=int32)
    """
    _u.check_arraylike("extract", condition, arr)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """`arr` with its elements where `mask` holds replaced by `vals`, taken in order and
    repeated cyclically.

    JAX arrays are immutable: `inplace=False` is required, and the updated array is
    returned. `mask` may be traced.

    Raises:
      ValueError: `inplace` is True, `mask` has another shape than `arr`, or `vals` is
        empty while `mask` may hold.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.place(jnp.zeros(4), jnp.arange(4) > 0, jnp.array([1.0, 2.0]), inplace=False)
      Array([0., 1., 2., 1.], dtype=float32)
    """
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    _u.check_arraylike("place", arr, mask, vals)
    arr = asarray(arr)
    if _u.shape(mask) != _u.shape(arr):
        raise ValueError(
            f"place: mask and data must be the same shape, got {_u.shape(mask)} and {_u.shape(arr)}"
        )
    flat_mask = ravel(_as_bool(mask))
    values = ravel(_u.convert(asarray(vals), _u.dtype(arr)))  # a cast: Python ints wrap
    k = _u.shape(values)[0]
    if k == 0:
        found = concrete_or_none(flat_mask)
        if found is not None and not found.any():
            return arr
        raise ValueError("Cannot place from an empty array")
    n = _u.shape(flat_mask)[0]
    if n == 0:
        return arr
    rank = lax.sub(_cumulative.cumsum(_u.convert(flat_mask, _I32), 0), np.int32(1))
    picked = take_axis(values, lax.rem(lax.max(rank, np.int32(0)), np.int32(k)), 0)
    return reshape(lax.select_n(flat_mask, ravel(arr), picked), _u.shape(arr))


def trim_zeros(filt: Any, trim: str = "fb") -> Any:
    """The 1-D `filt` without its leading ("f") and/or trailing ("b") zeros.

    The result's size depends on the values, so `filt` must be concrete.

    Raises:
      ConcretizationTypeError: `filt` is traced.
      ValueError: `filt` is not 1-D, or `trim` holds letters other than "f" and "b".

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.trim_zeros(jnp.array([0, 1, 0, 2, 0]))
      Array([1, 0, 2], dtype=int32)
    """
    _u.check_arraylike("trim_zeros", filt)
    host = concrete_or_error(np.asarray, filt, "Error arose in the `filt` argument of trim_zeros()")
    if host.ndim != 1:
        raise ValueError(f"trim_zeros requires a 1-D array, got shape {host.shape}")
    letters = set(trim.lower())
    if not letters <= {"f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    nz = np.flatnonzero(host)
    if nz.size == 0:
        return _shape_ops.slice(asarray(filt), (0,), (0,))
    start = int(nz[0]) if "f" in letters else 0
    stop = int(nz[-1]) + 1 if "b" in letters else host.shape[0]
    return _shape_ops.slice(asarray(filt), (start,), (stop,))
