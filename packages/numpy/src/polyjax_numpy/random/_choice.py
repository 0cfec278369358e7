"""Random choices of elements: `permutation`, `choice` and `categorical`, as JAX draws them.

- **Shuffling** sorts by random 32-bit keys (a stable sort, so ties keep their
  order), repeated `ceil(3 ln(size) / ln(2**32 - 1))` times with a fresh key each
  round, which makes the chance of a tie anywhere negligible. A permutation of
  an array along an axis shuffles the indices and takes them (or, with
  `independent=True`, sorts every slice with its own keys).
- **Categorical** draws are the Gumbel-max trick: `argmax(logits + gumbel)`;
  without replacement, the indices of the `k` largest perturbed logits.
- **choice** draws indices uniformly (`randint`), by inverting the cumulative
  probabilities (a binary search of `total * (1 - u)`, returning the first index
  whose cumulative sum reaches it), by a shuffle (without replacement), or by
  Gumbel top-k (weighted, without replacement).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_core.typing import Shape
from polyjax_numpy import lax
from polyjax_numpy.lax._shape_ops import canonicalize_axis
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._creation import asarray
from polyjax_numpy.numpy._indexing import take
from polyjax_numpy.numpy._manipulation import take_axis
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_broadcast_shapes,
    check_shape,
    const,
    single_key,
    staged,
)
from polyjax_numpy.random._distributions import randint
from polyjax_numpy.random._univariate import check_mode, gumbel_draw, unit_uniform

__all__ = ["categorical", "choice", "permutation"]


@staged("axis")
def _shuffle(typed: _prng.PRNGKeyArray, x: Any, *, axis: int) -> Any:
    """`x` with the slices along `axis` in a random order (each slice its own order)."""
    size = math.prod(_u.shape(x))
    # Rounds of sorting by 32-bit keys: enough that a tie is unlikely anywhere.
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        typed, subkey = _prng.split_keys(typed, 2)
        sort_keys = _prng.random_bits(subkey, 32, tuple(_u.shape(x)))
        _, x = lax.sort((sort_keys, x), dimension=axis, is_stable=True, num_keys=1)
    return x


def operator_index(v: Any) -> int:
    """An integer-valued scalar (Python or NumPy, any numeric type) as an int."""
    v = np.asarray(v)
    if dtypes.issubdtype(v.dtype, np.integer):
        return int(v)
    return int(v.item())


@_os.replicated_inside
def permutation(
    key: Any, x: Any, axis: int = 0, independent: bool = False, *, out_sharding: Any = None
) -> Any:
    """A random permutation of `range(x)` (int `x`), or of `x`'s slices along `axis`.

    Args:
      key: a single PRNG key (typed or raw).
      x: an integer (permute `arange(x)`) or an array of rank >= 1.
      axis: the axis of `x` to permute.
      independent: permute each slice along `axis` independently (each
        one-dimensional slice gets its own order) instead of permuting whole slices.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Raises:
      TypeError: `x` is a non-integer scalar.

    Example:
      >>> from polyjax_numpy import random
      >>> random.permutation(random.PRNGKey(0), 5)
      Array([0, 1, 4, 3, 2], dtype=int32)
    """
    typed = single_key("permutation", key)
    axis = operator_index(axis)
    if not np.ndim(x):
        if not dtypes.issubdtype(_u.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        n = concrete_or_error(int, x, "The argument x of random.permutation")
        return _shuffle(typed, lax.iota(dtypes.canonicalize_dtype(dtypes.int_), max(n, 0)), axis=0)
    x = asarray(x)
    axis = canonicalize_axis(axis, _u.ndim(x))
    if independent or _u.ndim(x) == 1:
        return _shuffle(typed, x, axis=axis)
    n = _u.shape(x)[axis]
    order = _shuffle(typed, lax.iota(dtypes.canonicalize_dtype(dtypes.int_), n), axis=0)
    return take(x, order, axis=axis, unique_indices=True)


def _searchsorted_left(sorted_values: Any, queries: Any) -> Any:
    """For each query, the first index whose value is >= it (a binary search, as JAX's).

    Not `jnp.searchsorted`: this is the halving sequence of JAX's default search
    (`mid = (lo + hi) // 2`, `bit_length(n)` steps, no early stop). On sorted
    values any binary search agrees, but the cumulative sums of weights that are
    negative are not sorted, and there only the same sequence picks JAX's indices.
    """
    n = _u.shape(sorted_values)[0]
    dt = _u.dtype(queries)

    def canonical(v: Any) -> Any:
        # -0 compares as 0, and every NaN as the largest value.
        v = lax.select_n(lax.eq(v, const(0.0, dt)), v, lax.full(_u.shape(v), 0.0, dt))
        return lax.select_n(lax.ne(v, v), v, lax.full(_u.shape(v), np.nan, dt))

    u32 = np.dtype(np.uint32)
    lo = lax.full(_u.shape(queries), 0, u32)
    hi = lax.full(_u.shape(queries), n, u32)
    q = canonical(queries)
    for _ in range(int(n).bit_length()):
        mid = lax.add(lo, lax.div(lax.sub(hi, lo), const(2, u32)))
        v = canonical(take_axis(sorted_values, mid, 0, "clip"))
        go_left = lax.bitwise_or(lax.le(q, v), lax.ne(v, v))
        lo = lax.select_n(go_left, mid, lo)
        hi = lax.select_n(go_left, hi, mid)
    return lax.convert_element_type(hi, np.int32)


def choice(
    key: Any,
    a: Any,
    shape: Shape = (),
    replace: bool = True,
    p: Any = None,
    axis: int = 0,
    mode: str | None = None,
) -> Any:
    """Random draws from `range(a)` (int `a`) or from `a`'s slices along `axis`.

    Args:
      key: a single PRNG key (typed or raw).
      a: an integer (choose from `arange(a)`) or an array of rank >= 1.
      shape: how many draws, as a shape; an array `a` gives a result of shape
        `a.shape[:axis] + shape + a.shape[axis + 1:]`.
      replace: draw with replacement.
      p: the probabilities of the `a.shape[axis]` candidates (default: uniform).
      axis: the axis of `a` to choose along.
      mode: 'low' or 'high' (the Gumbel draws of weighted sampling without
        replacement; see `gumbel`).

    Raises:
      ValueError: `a` is empty (unless no draws), more draws than candidates
        without replacement, or `p` of the wrong shape.

    Example:
      >>> from polyjax_numpy import random
      >>> random.choice(random.PRNGKey(0), 5, (3,), replace=False)
      Array([0, 1, 4], dtype=int32)
    """
    typed = single_key("choice", key)
    mode = check_mode("gumbel", mode)
    shape = check_shape("choice", shape)
    scalar = not np.ndim(a)
    if scalar:
        n_inputs = concrete_or_error(operator_index, a, "The error occurred in random.choice()")
    else:
        a = asarray(a)
        axis = canonicalize_axis(axis, _u.ndim(a))
        n_inputs = _u.shape(a)[axis]
    n_draws = math.prod(shape)
    int_dtype = dtypes.canonicalize_dtype(dtypes.int_)
    if n_draws == 0:
        if scalar:
            return lax.full(shape, 0, int_dtype)
        a_shape = _u.shape(a)
        return lax.full((*a_shape[:axis], *shape, *a_shape[axis + 1 :]), 0, _u.dtype(a))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) "
            "when 'replace=False'"
        )
    if p is not None:
        p = asarray(p)
        if tuple(_u.shape(p)) != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {tuple(_u.shape(p))} and a.shape[axis] is {n_inputs}."
            )
        if not dtypes.issubdtype(_u.dtype(p), np.floating):
            p = lax.convert_element_type(p, dtypes.canonicalize_dtype(dtypes.float_))

    if not replace and p is None:
        if scalar:
            order = _shuffle(typed, lax.iota(int_dtype, n_inputs), axis=0)
            return lax.reshape(lax.slice(order, (0,), (n_draws,)), shape)
        order = _shuffle(typed, lax.iota(int_dtype, n_inputs), axis=0)
        shuffled = take(a, order, axis=axis, unique_indices=True)
        a_shape = _u.shape(a)
        start = (0,) * len(a_shape)
        limit = tuple(n_draws if d == axis else s for d, s in enumerate(a_shape))
        drawn = lax.slice(shuffled, start, limit)
        return lax.reshape(drawn, (*a_shape[:axis], *shape, *a_shape[axis + 1 :]))

    if p is None:
        index = randint(typed, shape, 0, n_inputs)
    elif replace:
        index = _inverse_cdf_choice(typed, p, shape=shape)
    else:
        index = _gumbel_top_k_choice(typed, p, shape=shape, mode=mode)
    return index if scalar else take(a, index, axis=axis)


@staged("shape")
def _inverse_cdf_choice(typed: Any, p: Any, *, shape: tuple) -> Any:
    """Indices drawn with probabilities `p`: the cumulative sums searched for `total * u`."""
    pdt = _u.dtype(p)
    n = _u.shape(p)[0]
    cumulative = lax.cumsum(p, axis=0)
    total = lax.squeeze(lax.slice(cumulative, (n - 1,), (n,)), (0,))
    u = unit_uniform(typed, shape, pdt)
    targets = lax.mul(total, lax.sub(const(1.0, pdt), u))
    return _searchsorted_left(cumulative, targets)


@staged("shape", "mode")
def _gumbel_top_k_choice(typed: Any, p: Any, *, shape: tuple, mode: str) -> Any:
    """Distinct indices drawn with weights `p`: the top k of `log p` plus Gumbel noise."""
    perturbed = lax.add(gumbel_draw(typed, _u.shape(p), _u.dtype(p), mode), lax.log(p))
    _, top = lax.top_k(perturbed, math.prod(shape))
    index = lax.convert_element_type(top, dtypes.canonicalize_dtype(dtypes.int_))
    return lax.reshape(index, shape)


@_os.replicated_inside
def categorical(
    key: Any,
    logits: Any,
    axis: int = -1,
    shape: Shape | None = None,
    replace: bool = True,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Category indices drawn with probabilities `softmax(logits)` along `axis`.

    Args:
      key: a single PRNG key (typed or raw).
      logits: unnormalized log-probabilities; the other axes are batch axes.
      axis: the categories' axis.
      shape: the result's shape, ending with the batch shape (default: the batch
        shape); leading axes are independent draws.
      replace: draw with replacement; without it, the draws in each batch are
        distinct categories (at most as many as there are).
      mode: 'low' or 'high' (see `gumbel`).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      int32 indices of `shape`.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> random.categorical(random.PRNGKey(0), np.log(np.float32([0.1, 0.9])), shape=(4,))
      Array([1, 1, 1, 1], dtype=int32)
    """
    typed = single_key("categorical", key)
    mode = check_mode("gumbel", mode)
    _u.check_arraylike("categorical", logits)
    logits = asarray(logits)
    dt = _u.dtype(logits)
    if not dtypes.issubdtype(dt, np.floating):
        raise ValueError(f"categorical: logits must have a float dtype, got {dt}")
    ndim = _u.ndim(logits)
    if ndim == 0:
        raise ValueError("categorical: logits must have at least one axis (the categories)")
    axis = canonicalize_axis(axis, ndim)
    logits_shape = tuple(_u.shape(logits))
    batch_shape = logits_shape[:axis] + logits_shape[axis + 1 :]
    if shape is None:
        shape = batch_shape
    else:
        shape = check_shape("categorical", shape)
        check_broadcast_shapes("categorical", shape, batch_shape, what="logits of batch shape")
    prefix = shape[: len(shape) - len(batch_shape)]
    if not replace:
        n_draws = math.prod(prefix)
        if n_draws > logits_shape[axis]:
            raise ValueError(
                f"Number of samples without replacement ({n_draws}) cannot exceed number of "
                f"categories ({logits_shape[axis]})."
            )
        if tuple(shape[len(prefix) :]) != batch_shape:
            raise ValueError(
                f"categorical: without replacement, shape {shape} must end with the logits' "
                f"batch shape {batch_shape}"
            )
    return _categorical(typed, logits, axis=axis, shape=shape, replace=replace, mode=mode)


@staged("axis", "shape", "replace", "mode")
def _categorical(
    typed: Any, logits: Any, *, axis: int, shape: tuple, replace: bool, mode: str
) -> Any:
    """The Gumbel-max trick: argmax (or top k) of the logits plus Gumbel noise."""
    dt = _u.dtype(logits)
    logits_shape = tuple(_u.shape(logits))
    ndim = len(logits_shape)
    n = logits_shape[axis]
    prefix = shape[: len(shape) - (ndim - 1)]
    if replace:
        cat_axis = len(prefix) + axis
        noise_shape = (*shape[:cat_axis], n, *shape[cat_axis:])
        noise = gumbel_draw(typed, noise_shape, dt, mode)
        perturbed = lax.add(noise, _u.broadcast_to(logits, noise_shape))
        return lax.argmax(perturbed, cat_axis, np.int32)

    perturbed = lax.add(logits, gumbel_draw(typed, logits_shape, dt, mode))
    last = ndim - 1
    if axis != last:
        perm = (*range(axis), *range(axis + 1, ndim), axis)
        perturbed = lax.transpose(perturbed, perm)
    _, top = lax.top_k(perturbed, math.prod(prefix))
    top = lax.transpose(top, (last, *range(last)))
    return lax.reshape(top, shape)
