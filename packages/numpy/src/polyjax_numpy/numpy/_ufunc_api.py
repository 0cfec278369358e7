"""`jnp.ufunc`: NumPy's universal-function objects, with `reduce`, `accumulate`, `outer`, `at`.

A `ufunc` wraps an elementwise function of `nin` operands and `nout` results.
Calling it applies the function elementwise with broadcasting; its methods
apply a binary ufunc along an axis:

    add.reduce(x, axis)          x[0] + x[1] + ...            (jnp.sum)
    add.accumulate(x, axis)      running sums                 (jnp.cumsum)
    add.reduceat(x, idx, axis)   sums over x[idx[i]:idx[i+1]]
    add.outer(x, y)              x[i, ..., None, ...] + y[..., j, ...]
    add.at(x, idx, y, inplace=False)   x with y added at idx (repeats accumulate)

JAX exposes `add`, `subtract`, `multiply`, `negative`, `maximum`, `minimum`,
`logaddexp`, `logaddexp2` and the `bitwise_*`/`logical_*` operations as ufunc
objects; their methods use dedicated primitives where there is one (`reduce_sum`,
`cumsum`, `reduce_and`, `cumlogsumexp`, ...). Any other function (from
`frompyfunc`) gets generic methods: `reduce` and `accumulate` scan the function
along the axis, `reduceat` and `at` loop over the positions, and calls map the
function over the broadcast elements with `vmap`, so it may be written for scalars.

Arrays are immutable, so `at` requires `inplace=False` and returns a new array.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters.batching import vmap
from polyjax_numpy.lax import _bits, _cumulative, _scan, _shape_ops, _slicing, _while
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.numpy import _creation, _index_update, _reductions, _ufuncs, _ufuncs_math
from polyjax_numpy.numpy import _cumulative as jnp_cumulative
from polyjax_numpy.numpy import _util as _u


def _vectorized_call(func: Callable[..., Any], nout: int, args: Sequence[Any]) -> Any:
    """`func`, written for scalars, applied to each element of the broadcast `args`."""
    arrays = [_creation.asarray(a) for a in args]
    shape = sd.broadcast_shapes(*(_u.shape(a) for a in arrays))
    if not shape:
        return func(*arrays)
    size = sd.shape_size(shape)
    flat = [_shape_ops.reshape(_u.broadcast_to(a, shape), (size,)) for a in arrays]
    out = vmap(func)(*flat)
    if nout == 1:
        return _shape_ops.reshape(out, shape)
    return tuple(_shape_ops.reshape(o, shape) for o in out)


def _moveaxis_to_front(x: Any, axis: int) -> Any:
    if axis == 0:
        return x
    perm = (axis, *(d for d in range(_u.ndim(x)) if d != axis))
    return _shape_ops.transpose(x, perm)


def _moveaxis_from_front(x: Any, axis: int) -> Any:
    if axis == 0:
        return x
    ndim = _u.ndim(x)
    perm = (*range(1, axis + 1), 0, *range(axis + 1, ndim))
    return _shape_ops.transpose(x, perm)


def _single_axis(axis: Any, ndim: int, what: str) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{what}: axis must be an int, got {axis!r}") from None
    return _u.canonicalize_axis(axis, ndim)


class ufunc:
    """Universal functions which operate element-by-element on arrays (JAX's `jnp.ufunc`).

    Most users use the predefined ufuncs (`jnp.add`, `jnp.maximum`, ...) or make
    one with `jnp.frompyfunc`.

    Args:
      func: the elementwise function of `nin` arguments, returning `nout` values;
        it is applied to scalars (vectorized with `vmap`) unless `call` is given.
      nin: the number of inputs.
      nout: the number of outputs.
      name: the name (default: `func.__name__`).
      nargs: the number of arguments (default: `nin`).
      identity: the identity of the operation for `reduce`, or None.
      call: an already-vectorized implementation of the call, used instead of
        vectorizing `func`.
      reduce: an implementation of `reduce(a, axis, dtype, keepdims, initial, where)`.
      accumulate: an implementation of `accumulate(a, axis, dtype)`.
      at: an implementation of `at(a, indices, b)`.
      reduceat: an implementation of `reduceat(a, indices, axis, dtype)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.add.nin, jnp.add.identity, jnp.add.reduce(jnp.arange(4))
      (2, 0, Array(6, dtype=int32))
      >>> jnp.add.outer(jnp.arange(2), jnp.arange(3))
      Array([[0, 1, 2],
             [1, 2, 3]], dtype=int32)
    """

    def __init__(
        self,
        func: Callable[..., Any],
        /,
        nin: int,
        nout: int,
        *,
        name: str | None = None,
        nargs: int | None = None,
        identity: Any = None,
        call: Callable[..., Any] | None = None,
        reduce: Callable[..., Any] | None = None,
        accumulate: Callable[..., Any] | None = None,
        at: Callable[..., Any] | None = None,
        reduceat: Callable[..., Any] | None = None,
    ):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self.__qualname__ = self.__name__
        self.nin = operator.index(nin)
        self.nout = operator.index(nout)
        self.nargs = self.nin if nargs is None else operator.index(nargs)
        self.identity = identity
        self._func = func
        self._call = call
        self._reduce = reduce
        self._accumulate = accumulate
        self._at = at
        self._reduceat = reduceat

    def _key(self) -> tuple:
        return (
            self._func,
            self.__name__,
            self.nin,
            self.nout,
            self.nargs,
            self.identity,
            self._call,
            self._reduce,
            self._accumulate,
            self._at,
            self._reduceat,
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(
                f"{self.__name__}() takes {self.nin} positional argument"
                f"{'' if self.nin == 1 else 's'} but {len(args)} were given"
            )
        if self._call is not None:
            return self._call(*args)
        return _vectorized_call(self._func, self.nout, args)

    def _check_binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs, got {self}")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, dtype: np.dtype, weak: bool) -> np.dtype:
        """The dtype `self(x, y)` gives for two operands of `dtype` (found by tracing)."""
        spec = ShapeDtypeStruct((), dtype, weak_type=weak)
        (out,) = make_jaxpr(lambda x, y: self(x, y))(spec, spec).out_avals
        return out.dtype

    # -- reduce --------------------------------------------------------------

    def reduce(
        self,
        a: Any,
        axis: Any = 0,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        """Reduces `a` along `axis` by applying the ufunc repeatedly.

        Args:
          a: the array.
          axis: an int, a tuple of ints, or None (all axes).
          dtype: the dtype of the computation and the result.
          out: not supported.
          keepdims: keep the reduced axes with size 1.
          initial: the starting value (needed for an empty reduction when the
            ufunc has no identity).
          where: a bool mask broadcast against `a`: only elements where it is true
            are reduced (needs `initial` or an identity).

        Returns:
          The reduced array.

        Raises:
          ValueError: a ufunc that is not binary, an empty reduction or `where`
            without an identity or `initial`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.multiply.reduce(jnp.array([[1, 2], [3, 4]]), axis=1)
          Array([ 2, 12], dtype=int32)
        """
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        _u.check_arraylike(f"{self.__name__}.reduce", a)
        if self._reduce is not None:
            return self._reduce(
                a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
            )
        return self._reduce_via_scan(a, axis, dtype, keepdims, initial, where)

    def _reduce_via_scan(
        self, a: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any
    ) -> Any:
        a = _creation.asarray(a)
        if dtype is not None:
            a = _u.convert(a, dtypes.canonicalize_dtype(dtype))
        shape = _u.shape(a)
        axes = _u.reduction_axes(axis, len(shape))
        start = initial if initial is not None else self.identity
        if where is not None and start is None:
            raise ValueError(
                f"reduction operation {self.__name__} does not have an identity, so to use a "
                "where mask one has to specify 'initial'"
            )
        count = sd.shape_size([shape[ax] for ax in axes])
        if start is None and type(count) is int and count == 0:
            raise ValueError(
                f"zero-size array to reduction operation {self.__name__} which has no identity"
            )
        out_dtype = self._result_dtype(_u.dtype(a), _u.aval(a).weak_type)
        kept = tuple(d for d in range(len(shape)) if d not in axes)
        # The reduced axes, in front and merged into one.
        x = _shape_ops.transpose(a, (*axes, *kept))
        rest = tuple(shape[d] for d in kept)
        x = _shape_ops.reshape(x, (count, *rest))
        x = _u.convert(x, out_dtype)
        mask = None
        if where is not None:
            mask = _u.broadcast_to(_creation.asarray(where), shape)
            mask = _shape_ops.reshape(_shape_ops.transpose(mask, (*axes, *kept)), (count, *rest))

        def combine(carry: Any, item: Any) -> Any:
            value = _u.convert(self(carry, item), out_dtype)
            return value

        if start is None:
            init, xs, mask_xs = x[0], x[1:], None
        else:
            init = _shape_ops.full(rest, np.asarray(start, out_dtype)[()], out_dtype)
            xs, mask_xs = x, mask

        def body(carry: Any, step: Any) -> tuple[Any, None]:
            if mask_xs is None:
                return combine(carry, step), None
            item, keep = step
            return _u.where(keep, combine(carry, item), carry), None

        result, _ = _scan.scan(body, init, xs if mask_xs is None else (xs, mask_xs))
        if keepdims:
            result = _shape_ops.expand_dims(result, axes)
        return result

    # -- accumulate ----------------------------------------------------------

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running reduction of `a` along `axis`: `out[i] = reduce(a[:i + 1])`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.add.accumulate(jnp.array([1, 2, 3]))
          Array([1, 3, 6], dtype=int32)
        """
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        _u.check_arraylike(f"{self.__name__}.accumulate", a)
        a = _creation.asarray(a)
        if _u.ndim(a) == 0:
            raise ValueError(
                f"{self.__name__}.accumulate: the input must be an array, not a scalar"
            )
        axis = _single_axis(axis, _u.ndim(a), f"{self.__name__}.accumulate")
        if self._accumulate is not None:
            return self._accumulate(a, axis, dtype)
        if dtype is not None:
            a = _u.convert(a, dtypes.canonicalize_dtype(dtype))
        out_dtype = self._result_dtype(_u.dtype(a), _u.aval(a).weak_type)
        x = _u.convert(_moveaxis_to_front(a, axis), out_dtype)
        if _u.shape(x)[0] == 0:
            return _moveaxis_from_front(x, axis)

        def body(carry: Any, item: Any) -> tuple[Any, Any]:
            new = _u.convert(self(carry, item), out_dtype)
            return new, new

        _, rest = _scan.scan(body, x[0], x[1:])
        result = _shape_ops.concatenate([_shape_ops.expand_dims(x[0], (0,)), rest], 0)
        return _moveaxis_from_front(result, axis)

    # -- reduceat ------------------------------------------------------------

    def reduceat(
        self, a: Any, indices: Any, axis: int = 0, dtype: Any = None, out: None = None
    ) -> Any:
        """Reductions of `a` over the slices `a[indices[i]:indices[i + 1]]` along `axis`.

        As in NumPy, the last slice runs to the end, and where `indices[i] >=
        indices[i + 1]` the result is `a[indices[i]]`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.add.reduceat(jnp.arange(8), jnp.array([0, 4, 1, 5]))
          Array([ 6,  4, 10, 18], dtype=int32)
        """
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        _u.check_arraylike(f"{self.__name__}.reduceat", a)
        a = _creation.asarray(a)
        axis = _single_axis(axis, _u.ndim(a), f"{self.__name__}.reduceat")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis, dtype)
        indices = _creation.asarray(indices)
        if _u.ndim(indices) != 1 or not _u.issubdtype_of(indices, np.integer):
            raise ValueError(
                f"{self.__name__}.reduceat: indices must be a 1-D integer array, got "
                f"{_u.dtype(indices)}{list(_u.shape(indices))}"
            )
        if dtype is not None:
            a = _u.convert(a, dtypes.canonicalize_dtype(dtype))
        out_dtype = self._result_dtype(_u.dtype(a), _u.aval(a).weak_type)
        x = _u.convert(_moveaxis_to_front(a, axis), out_dtype)
        size = _u.shape(x)[0]
        idx = _u.convert(indices, np.dtype(np.int32))
        result = _take_leading(x, idx)
        ends = _shape_ops.concatenate([idx[1:], _shape_ops.full((1,), size, np.int32)], 0)
        mask_shape = (_u.shape(idx)[0],) + (1,) * (_u.ndim(x) - 1)
        starts_b = _shape_ops.reshape(idx, mask_shape)
        ends_b = _shape_ops.reshape(ends, mask_shape)

        def body(i: Any, acc: Any) -> Any:
            # Position i joins segment j where starts[j] < i < ends[j] (starts[j]
            # itself is the initial value).
            inside = lax.bitwise_and(lax.lt(starts_b, i), lax.lt(i, ends_b))
            item = _slicing.dynamic_index_in_dim(x, i, 0, keepdims=True)
            return _u.where(inside, _u.convert(self(acc, item), out_dtype), acc)

        result = _while.fori_loop(0, size, body, result)
        return _moveaxis_from_front(result, axis)

    # -- outer ---------------------------------------------------------------

    def outer(self, A: Any, B: Any, /, **kwargs: Any) -> Any:
        """The ufunc applied to every pair `(A[i...], B[j...])`: shape `A.shape + B.shape`.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.multiply.outer(jnp.array([1, 2]), jnp.array([1, 10]))
          Array([[ 1, 10],
                 [ 2, 20]], dtype=int32)
        """
        self._check_binary("outer")
        _u.check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = _creation.asarray(A), _creation.asarray(B)
        a_shape, b_ndim = _u.shape(A), _u.ndim(B)
        A = _shape_ops.reshape(A, (*a_shape, *(1,) * b_ndim))
        return self(A, B, **kwargs)

    # -- at ------------------------------------------------------------------

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """`a` with the ufunc applied at `indices`: `a[indices] = ufunc(a[indices], b)`.

        Unlike NumPy's, this returns a new array and requires `inplace=False`.
        Repeated indices apply the ufunc repeatedly (`add.at(x, [0, 0], 1)` adds 2).

        Args:
          a: the array.
          indices: an int, an integer array, or a tuple of them (one per leading
            axis of `a`; they broadcast together). Negative indices count from the end.
          b: the second operand of a binary ufunc, broadcast against `a[indices]`.
          inplace: must be False.

        Raises:
          NotImplementedError: `inplace=True` (the default, as in NumPy).
          ValueError: `b` missing for a binary ufunc, or given for a unary one.

        Example:
          >>> import polyjax.numpy as jnp
          >>> jnp.add.at(jnp.zeros(3), jnp.array([0, 0, 2]), 1.0, inplace=False)
          Array([2., 0., 1.], dtype=float32)
        """
        if inplace:
            raise NotImplementedError(
                "jax.numpy.ufunc.at does not support inplace=True, because arrays are "
                "immutable; use inplace=False, which returns the updated array."
            )
        if b is None and self.nin != 1:
            raise ValueError(f"second operand needed for ufunc {self.__name__}.at()")
        if b is not None and self.nin != 2:
            raise ValueError(f"second operand provided for unary ufunc {self.__name__}.at()")
        if self.nout != 1:
            raise ValueError(f"{self.__name__}.at() only supported for single-output ufuncs")
        _u.check_arraylike(f"{self.__name__}.at", a)
        a = _creation.asarray(a)
        if self._at is not None:
            return self._at(a, indices, b)
        return self._at_via_loop(a, indices, b)

    def _at_via_loop(self, a: Any, indices: Any, b: Any) -> Any:
        shape = _u.shape(a)
        items = indices if isinstance(indices, tuple) else (indices,)
        if len(items) > len(shape):
            raise IndexError(
                f"too many indices for {self.__name__}.at(): array is {len(shape)}-dimensional, "
                f"but {len(items)} were indexed"
            )
        index_arrays = []
        for axis, item in enumerate(items):
            if isinstance(item, slice) or item is Ellipsis or item is None:
                raise NotImplementedError(
                    f"{self.__name__}.at() takes integer indices (ints or integer arrays), "
                    f"got {item!r}"
                )
            item = _creation.asarray(item)
            if not _u.issubdtype_of(item, np.integer):
                raise IndexError(
                    f"{self.__name__}.at(): indices must be integers, got {_u.dtype(item)}"
                )
            item = _u.convert(item, np.dtype(np.int32))
            # Negative indices count from the end.
            negative = lax.lt(item, np.int32(0))
            item = _u.where(negative, lax.add(item, np.int32(shape[axis])), item)
            index_arrays.append(item)
        index_shape = sd.broadcast_shapes(*(_u.shape(i) for i in index_arrays))
        n = sd.shape_size(index_shape)
        flat = [_shape_ops.reshape(_u.broadcast_to(i, index_shape), (n,)) for i in index_arrays]
        k = len(items)
        window = tuple(shape[k:])
        if b is not None:
            b = _creation.asarray(b)
            b = _u.broadcast_to(b, (*index_shape, *window))
            b = _shape_ops.reshape(b, (n, *window))

        def body(i: Any, acc: Any) -> Any:
            starts = [_slicing.dynamic_index_in_dim(ix, i, 0, keepdims=False) for ix in flat]
            starts += [np.int32(0)] * len(window)
            current = _slicing.dynamic_slice(acc, starts, (1,) * k + window)
            current = _shape_ops.reshape(current, window)
            if b is None:
                new = self(current)
            else:
                new = self(current, _slicing.dynamic_index_in_dim(b, i, 0, keepdims=False))
            new = _shape_ops.reshape(_u.convert(new, _u.dtype(acc)), (1,) * k + window)
            return _slicing.dynamic_update_slice(acc, new, starts)

        return _while.fori_loop(0, n, body, a)


def _take_leading(x: Any, idx: Any) -> Any:
    """`x[idx]` along the leading axis for a 1-D int32 `idx` (a gather)."""
    shape = _u.shape(x)
    dnums = _slicing.GatherDimensionNumbers(
        offset_dims=tuple(range(1, len(shape))),
        collapsed_slice_dims=(0,),
        start_index_map=(0,),
    )
    starts = _shape_ops.reshape(idx, (_u.shape(idx)[0], 1))
    return _slicing.gather(x, starts, dnums, (1, *shape[1:]), mode="clip")


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A `jnp.ufunc` from a function of scalars (written with jnp/lax operations).

    Args:
      func: a function of `nin` scalar arrays returning `nout` values.
      nin: the number of inputs.
      nout: the number of outputs.
      identity: the identity of the operation, for `reduce` of empty arrays and `where`.

    Returns:
      A `ufunc` that applies `func` elementwise (via `vmap`) and has the generic
      `reduce`, `accumulate`, `reduceat`, `outer` and `at` methods.

    Example:
      >>> import operator
      >>> import polyjax.numpy as jnp
      >>> add = jnp.frompyfunc(operator.add, nin=2, nout=1, identity=0)
      >>> add.accumulate(jnp.arange(4))
      Array([0, 1, 3, 6], dtype=int32)
    """
    return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------
# The dedicated methods of JAX's predefined ufuncs


def _with_dtype(a: Any, dtype: Any) -> Any:
    return (
        a if dtype is None else _u.convert(_creation.asarray(a), dtypes.canonicalize_dtype(dtype))
    )


def _reduce_max(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any):
    return _reductions.max(
        _with_dtype(a, dtype), axis=axis, keepdims=keepdims, initial=initial, where=where
    )


def _reduce_min(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any):
    return _reductions.min(
        _with_dtype(a, dtype), axis=axis, keepdims=keepdims, initial=initial, where=where
    )


def _bitwise_reducer(
    combine: Callable[[Any, Any], Any],
    lax_reduce: Callable[[Any, Any], Any],
    identity: int | bool,
    logical: bool,
) -> Callable[..., Any]:
    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any):
        a = _with_dtype(_creation.asarray(a), dtype)
        if logical:
            a = _ufuncs.not_equal(a, False) if not _u.is_bool(a) else a
        else:
            _ufuncs.check_integer_or_bool("bitwise reduction", a)
        shape = _u.shape(a)
        axes = _u.reduction_axes(axis, len(shape))
        if where is not None:
            mask = _u.broadcast_to(_creation.asarray(where), shape)
            a = _u.where(mask, a, _u.scalar_like(identity, a))
        out = lax_reduce(a, axes)
        if initial is not None:
            out = combine(out, _u.scalar_like(initial, out))
        if keepdims:
            out = _shape_ops.expand_dims(out, axes)
        return out

    return reduce


def _logsumexp_reducer(base2: bool) -> Callable[..., Any]:
    exp_fn, log_fn = (lax.exp2, _ufuncs_math.log2) if base2 else (lax.exp, lax.log)
    pair = _ufuncs_math.logaddexp2 if base2 else _ufuncs_math.logaddexp

    def reduce(a: Any, *, axis: Any, dtype: Any, keepdims: bool, initial: Any, where: Any):
        (a,) = _u.promote_args_inexact("logaddexp.reduce", _with_dtype(a, dtype))
        shape = _u.shape(a)
        axes = _u.reduction_axes(axis, len(shape))
        neg_inf = _u.scalar_like(-np.inf, a)
        if where is not None:
            a = _u.where(_u.broadcast_to(_creation.asarray(where), shape), a, neg_inf)
        # Shift by the maximum, unless it is infinite (then the sum needs no shift).
        top = _reductions.max(a, axis=axes, keepdims=True, initial=-np.inf)
        top = _u.where(lax.is_finite(top), top, _u.scalar_like(0, top))
        total = _reductions.sum(exp_fn(lax.sub(a, top)), axis=axes, keepdims=True)
        out = lax.add(log_fn(total), top)
        if not keepdims:
            out = _shape_ops.squeeze(out, axes)
        if initial is not None:
            out = pair(out, initial)
        return out

    return reduce


def _at_with(method: str) -> Callable[..., Any]:
    """`a.at[indices].<method>(b)`: one scatter, where repeated indices accumulate."""

    def at(a: Any, indices: Any, b: Any) -> Any:
        return getattr(_index_update.at(a)[indices], method)(b)

    return at


def _accumulate_with(cumulative: Callable[..., Any]) -> Callable[..., Any]:
    def accumulate(a: Any, axis: int, dtype: Any) -> Any:
        return cumulative(_with_dtype(a, dtype), axis)

    return accumulate


def _cumlogsumexp(a: Any, axis: int) -> Any:
    (a,) = _u.promote_args_inexact("logaddexp.accumulate", a)
    return _cumulative.cumlogsumexp(a, axis)


add = ufunc(
    _ufuncs.add,
    2,
    1,
    identity=0,
    call=_ufuncs.add,
    reduce=_reductions.sum,
    at=_at_with("add"),
    accumulate=_accumulate_with(jnp_cumulative.cumsum),
)
multiply = ufunc(
    _ufuncs.multiply,
    2,
    1,
    identity=1,
    call=_ufuncs.multiply,
    reduce=_reductions.prod,
    at=_at_with("multiply"),
    accumulate=_accumulate_with(jnp_cumulative.cumprod),
)
subtract = ufunc(_ufuncs.subtract, 2, 1, call=_ufuncs.subtract, at=_at_with("subtract"))
negative = ufunc(_ufuncs.negative, 1, 1, call=_ufuncs.negative)
maximum = ufunc(
    _ufuncs.maximum,
    2,
    1,
    call=_ufuncs.maximum,
    reduce=_reduce_max,
    at=_at_with("max"),
    accumulate=_accumulate_with(_cumulative.cummax),
)
minimum = ufunc(
    _ufuncs.minimum,
    2,
    1,
    call=_ufuncs.minimum,
    reduce=_reduce_min,
    at=_at_with("min"),
    accumulate=_accumulate_with(_cumulative.cummin),
)
logaddexp = ufunc(
    _ufuncs_math.logaddexp,
    2,
    1,
    identity=-np.inf,
    call=_ufuncs_math.logaddexp,
    reduce=_logsumexp_reducer(base2=False),
    accumulate=_accumulate_with(_cumlogsumexp),
)
logaddexp2 = ufunc(
    _ufuncs_math.logaddexp2,
    2,
    1,
    identity=-np.inf,
    call=_ufuncs_math.logaddexp2,
    reduce=_logsumexp_reducer(base2=True),
)
bitwise_and = ufunc(
    _ufuncs.bitwise_and,
    2,
    1,
    identity=-1,
    call=_ufuncs.bitwise_and,
    reduce=_bitwise_reducer(_ufuncs.bitwise_and, _bits.reduce_and, -1, logical=False),
)
bitwise_or = ufunc(
    _ufuncs.bitwise_or,
    2,
    1,
    identity=0,
    call=_ufuncs.bitwise_or,
    reduce=_bitwise_reducer(_ufuncs.bitwise_or, _bits.reduce_or, 0, logical=False),
)
bitwise_xor = ufunc(
    _ufuncs.bitwise_xor,
    2,
    1,
    identity=0,
    call=_ufuncs.bitwise_xor,
    reduce=_bitwise_reducer(_ufuncs.bitwise_xor, _bits.reduce_xor, 0, logical=False),
)
logical_and = ufunc(
    _ufuncs.logical_and,
    2,
    1,
    identity=True,
    call=_ufuncs.logical_and,
    reduce=_bitwise_reducer(_ufuncs.logical_and, _bits.reduce_and, True, logical=True),
)
logical_or = ufunc(
    _ufuncs.logical_or,
    2,
    1,
    identity=False,
    call=_ufuncs.logical_or,
    reduce=_bitwise_reducer(_ufuncs.logical_or, _bits.reduce_or, False, logical=True),
)
logical_xor = ufunc(
    _ufuncs.logical_xor,
    2,
    1,
    identity=False,
    call=_ufuncs.logical_xor,
    reduce=_bitwise_reducer(_ufuncs.logical_xor, _bits.reduce_xor, False, logical=True),
)
