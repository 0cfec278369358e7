"""Samplers of counts: `poisson`, `binomial` and `multinomial`, by JAX's algorithms.

Each mixes an exact method for small means with a transformed-rejection one for
large means, and runs its loops on the whole array with one key per iteration
(shared by every element), as JAX does, so a key gives JAX's counts:

- `poisson`: Knuth's method (multiply uniforms until the product falls below
  `exp(-lam)`) for `lam < 10`; Hormann's PTRS ("The transformed rejection method
  for generating Poisson random variables", 1993) otherwise.
- `binomial`: counting geometric waiting times (inversion) when `n * q <= 10`
  (`q = min(p, 1 - p)`); Hormann's BTRS ("The generation of binomial random
  variates", 1993) otherwise, whose acceptance bound uses Stirling-series tails
  (tabulated up to 9). For bit-identity the tails of arguments above 9 are, as in
  JAX 0.10, evaluated at 9 (this only loosens the acceptance bound slightly).
  Draws for `p > 1/2` are `n - binomial(n, 1 - p)`.
- `multinomial`: a binomial per category, of the count left over, with the
  probability conditional on the categories not drawn yet (a `scan`).

The loops stop when every element has its draw; an element keeps the last value
it accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.typing import Shape
from polyjax_numpy import lax
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._manipulation import take_axis
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_shape,
    const,
    int_dtype,
    param,
    param_shape,
    sample,
    single_key,
    staged,
)
from polyjax_numpy.random._univariate import unit_uniform

__all__ = ["binomial", "multinomial", "poisson"]


# ---------------------------------------------------------------------------
# The loops: one key per iteration, shared by every element


def _any(pred: Any) -> Any:
    return lax.reduce_or(pred, tuple(range(_u.ndim(pred)))) if _u.ndim(pred) else pred


def _isnan(x: Any) -> Any:
    return lax.ne(x, x)


def _below_cap(i: Any, dtype: np.dtype) -> Any:
    """The loops' safety cap: the iteration count, in the result dtype, below its max."""
    limit = (
        dtypes.iinfo(dtype).max if dtypes.issubdtype(dtype, np.integer) else dtypes.finfo(dtype).max
    )
    return lax.lt(lax.convert_element_type(i, dtype), const(limit, dtype))


def _while_pending(
    pending: Callable[[tuple], Any], body: Callable[[tuple], tuple], init: tuple, dtype: np.dtype
) -> tuple:
    """`body` applied to the loop state from `init` while `pending(state)` holds anywhere.

    An iteration counter stops the loop before it reaches `dtype`'s max, so that
    a parameter for which the loop never ends (NaN) cannot hang it.
    """

    def cond(state: tuple) -> Any:
        i, inner = state
        return lax.bitwise_and(_any(pending(inner)), _below_cap(i, dtype))

    def step(state: tuple) -> tuple:
        i, inner = state
        inner = body(inner)
        return lax.add(i, np.int32(1)), inner

    _, out = lax.while_loop(cond, step, (np.int32(0), init))
    return out


def _transformed_rejection(
    typed: _prng.PRNGKeyArray,
    shape: tuple[int, ...],
    fdt: np.dtype,
    dtype: np.dtype,
    propose: Callable[[Any, Any], tuple[Any, Any]],
) -> Any:
    """Hormann's transformed-rejection loop, shared by PTRS and BTRS.

    Each step splits its key into (next, u, v) and draws `u` uniform in
    [-1/2, 1/2) and `v` uniform in [0, 1); `propose(u, v)` gives the candidate
    counts and where they are accepted. The loop runs until every element has
    accepted a count, and an element keeps the last one it accepted.
    """

    def pending(state: tuple) -> Any:
        _, accepted, _ = state
        return lax.bitwise_not(accepted)

    def body(state: tuple) -> tuple:
        k_out, accepted, key = state
        key, key_u, key_v = _prng.split_keys(key, 3)
        u = lax.sub(unit_uniform(key_u, shape, fdt), const(0.5, fdt))
        v = unit_uniform(key_v, shape, fdt)
        k, accept = propose(u, v)
        return _u.where(accept, k, k_out), lax.bitwise_or(accepted, accept), key

    init = (lax.full(shape, -1.0, fdt), lax.full(shape, False, np.bool_), typed)
    k, _, _ = _while_pending(pending, body, init, dtype)
    return lax.convert_element_type(k, dtype)


# ---------------------------------------------------------------------------
# Poisson


@_os.replicated_inside
def poisson(
    key: Any, lam: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Poisson draws with rate `lam`.

    Args:
      key: a single PRNG key (typed or raw).
      lam: the rate (>= 0), a scalar or array broadcasting to `shape`; computed
        in float32 (as in JAX, also under x64).
      shape: the result's shape (default: `lam`'s shape).
      dtype: an integer dtype (default int32).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      Integer draws of `shape` (0 where `lam == 0`).

    Example:
      >>> from polyjax_numpy import random
      >>> random.poisson(random.PRNGKey(0), 3.0, (4,))
      Array([0, 0, 4, 4], dtype=int32)
    """
    return sample("poisson", _poisson, key, (lam,), shape, dtype, dtype_rule=int_dtype)


@staged("shape", "dtype")
def _poisson(typed: Any, lam: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    # The rate is float32 whatever its type (and under x64), as in JAX.
    lam = param("poisson", lam, np.dtype(np.float32))
    return poisson_draw(typed, _u.broadcast_to(lam, shape), dtype)


def poisson_draw(typed: _prng.PRNGKeyArray, lam: Any, dtype: np.dtype) -> Any:
    """Poisson draws of `lam`'s shape (no checks)."""
    fdt = _u.dtype(lam)
    use_knuth = lax.bitwise_or(_isnan(lam), lax.lt(lam, const(10.0, fdt)))
    lam_knuth = _u.where(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = _u.where(use_knuth, lax.full_like(lam, 1e5), lam)
    out = _u.where(use_knuth, _knuth(typed, lam_knuth, dtype), _ptrs(typed, lam_rejection, dtype))
    return _u.where(lax.eq(lam, const(0.0, fdt)), lax.full(_u.shape(lam), 0, dtype), out)


def _knuth(typed: _prng.PRNGKeyArray, lam: Any, dtype: np.dtype) -> Any:
    fdt = _u.dtype(lam)
    shape = tuple(_u.shape(lam))
    neg_lam = lax.neg(lam)

    def pending(state: tuple) -> Any:
        _, _, log_prod = state
        return lax.gt(log_prod, neg_lam)

    def body(state: tuple) -> tuple:
        k, key, log_prod = state
        key, subkey = _prng.split_keys(key, 2)
        k = _u.where(pending(state), lax.add(k, const(1, dtype)), k)
        log_prod = lax.add(log_prod, lax.log(unit_uniform(subkey, shape, fdt)))
        return k, key, log_prod

    init = (lax.full(shape, 0, dtype), typed, lax.full(shape, 0.0, fdt))
    k, _, _ = _while_pending(pending, body, init, dtype)
    return lax.sub(k, const(1, dtype))


def _ptrs(typed: _prng.PRNGKeyArray, lam: Any, dtype: np.dtype) -> Any:
    fdt = _u.dtype(lam)
    shape = tuple(_u.shape(lam))

    def c(v: float) -> Any:
        return const(v, fdt)

    log_lam = lax.log(lam)
    b = lax.add(c(0.931), lax.mul(c(2.53), lax.sqrt(lam)))
    a = lax.add(c(-0.059), lax.mul(c(0.02483), b))
    inv_alpha = lax.add(c(1.1239), lax.div(c(1.1328), lax.sub(b, c(3.4))))
    v_r = lax.sub(c(0.9277), lax.div(c(3.6224), lax.sub(b, c(2.0))))

    def propose(u: Any, v: Any) -> tuple[Any, Any]:
        u_shifted = lax.sub(c(0.5), lax.abs(u))
        k = lax.floor(
            lax.add(
                lax.add(lax.mul(lax.add(lax.div(lax.mul(c(2.0), a), u_shifted), b), u), lam),
                c(0.43),
            )
        )
        s = lax.log(
            lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(u_shifted, u_shifted)), b))
        )
        t = lax.sub(lax.add(lax.neg(lam), lax.mul(k, log_lam)), lax.lgamma(lax.add(k, c(1.0))))
        accept_fast = lax.bitwise_and(lax.ge(u_shifted, c(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(
            lax.lt(k, c(0.0)),
            lax.bitwise_and(lax.lt(u_shifted, c(0.013)), lax.gt(v, u_shifted)),
        )
        accept = lax.bitwise_or(accept_fast, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, t)))
        return k, accept

    return _transformed_rejection(typed, shape, fdt, dtype, propose)


# ---------------------------------------------------------------------------
# Binomial

# tail(k) = log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], k = 0..9.
_STIRLING_TAILS = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def binomial(key: Any, n: Any, p: Any, shape: Shape | None = None, dtype: Any = None) -> Any:
    """Binomial draws: successes in `n` trials of probability `p`.

    Args:
      key: a single PRNG key (typed or raw).
      n: the number of trials (floored; NaN or negative gives NaN, inf gives inf).
      p: the success probability (NaN or negative gives NaN).
      shape: the result's shape (default: the parameters' broadcast shape).
      dtype: a float dtype (the counts are floats, as in JAX).

    Example:
      >>> from polyjax_numpy import random
      >>> random.binomial(random.PRNGKey(0), 10.0, 0.3, (3,)).shape
      (3,)
    """
    return sample("binomial", _binomial, key, (n, p), shape, dtype)


@staged("shape", "dtype")
def _binomial(typed: Any, n: Any, p: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    # Computed in the parameters' (promoted) float type; the draws are of `dtype`.
    n, p = (_u.broadcast_to(v, shape) for v in _strong_inexact(n, p))
    return binomial_draw(typed, n, p, dtype)


def _strong_inexact(*args: Any) -> list[Any]:
    """The arguments promoted together to a float type (JAX's rules), strongly typed."""
    args = _u.promote_dtypes_inexact(*args)
    return [_u.convert(x, _u.dtype(x)) for x in args]


def _stirling_tail(x: Any) -> Any:
    """tail(x): tabulated for x <= 9, else the series (evaluated at min(x, 9), as JAX)."""
    fdt = _u.dtype(x)
    one = const(1.0, fdt)
    xc = lax.clamp(const(0.0, fdt), x, const(9.0, fdt))
    sq = lax.mul(lax.add(xc, one), lax.add(xc, one))
    series = lax.div(
        lax.sub(
            const(1.0 / 12.0, fdt),
            lax.div(lax.sub(const(1.0 / 360.0, fdt), lax.div(const(1.0 / 1260.0, fdt), sq)), sq),
        ),
        lax.add(xc, one),
    )
    table = np.asarray(_STIRLING_TAILS, fdt)
    tabulated = take_axis(table, lax.convert_element_type(lax.floor(xc), np.int32), 0, "clip")
    return _u.where(lax.le(x, const(9.0, fdt)), tabulated, series)


def binomial_draw(typed: _prng.PRNGKeyArray, count: Any, prob: Any, dtype: np.dtype) -> Any:
    """Binomial draws of `dtype` (no checks).

    `count` and `prob` have one shape and float dtype, which the draws are
    computed in; the loops' safety caps and the results are in `dtype`.
    """
    fdt = _u.dtype(count)
    shape = tuple(_u.shape(count))

    def c(v: float) -> Any:
        return const(v, fdt)

    p_small = lax.lt(prob, c(0.5))
    q = _u.where(p_small, prob, lax.sub(c(1.0), prob))
    count_invalid = lax.bitwise_or(_isnan(count), lax.lt(count, c(0.0)))
    count_inf = lax.eq(lax.abs(count), c(np.inf))
    q_nan, q_negative = _isnan(q), lax.lt(q, c(0.0))
    q = _u.where(lax.bitwise_or(q_nan, q_negative), lax.full_like(q, 0.01), q)
    use_inversion = lax.bitwise_or(count_invalid, lax.le(lax.mul(count, q), c(10.0)))
    count_floor = lax.floor(count)
    count_inv = _u.where(use_inversion, count_floor, lax.full_like(count, 0.0))
    count_btrs = _u.where(use_inversion, lax.full_like(count, 1e4), count_floor)
    q_btrs = _u.where(use_inversion, lax.full_like(q, 0.5), q)

    inversion = _binomial_inversion(typed, count_inv, lax.log1p(lax.neg(q)), shape, dtype)
    btrs = _btrs(typed, count_btrs, q_btrs, shape, dtype)
    out = _u.where(use_inversion, inversion, btrs)

    invalid = lax.bitwise_or(lax.bitwise_or(q_negative, q_nan), count_invalid)
    out = _u.where(invalid, lax.full_like(out, np.nan), out)
    out = _u.where(
        lax.bitwise_and(count_inf, lax.bitwise_not(invalid)), lax.full_like(out, np.inf), out
    )
    # Draws were for q = min(p, 1 - p): those for 1 - p count the failures.
    kept = lax.bitwise_or(lax.bitwise_or(lax.bitwise_or(p_small, count_invalid), q_nan), count_inf)
    return _u.where(kept, out, lax.sub(lax.convert_element_type(count_floor, dtype), out))


def _binomial_inversion(
    typed: _prng.PRNGKeyArray, count: Any, log1m_q: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    fdt = _u.dtype(count)

    def pending(state: tuple) -> Any:
        _, geom_sum, _ = state
        return lax.le(geom_sum, count)

    def body(state: tuple) -> tuple:
        num_geom, geom_sum, key = state
        key_u, key = _prng.split_keys(key, 2)
        num_geom = _u.where(pending(state), lax.add(num_geom, const(1.0, fdt)), num_geom)
        u = unit_uniform(key_u, shape, fdt)
        geom_sum = lax.add(geom_sum, lax.ceil(lax.div(lax.log(u), log1m_q)))
        return num_geom, geom_sum, key

    zeros = lax.full(shape, 0.0, fdt)
    num_geom, _, _ = _while_pending(pending, body, (zeros, zeros, typed), dtype)
    return lax.convert_element_type(lax.sub(num_geom, const(1.0, fdt)), dtype)


def _btrs(
    typed: _prng.PRNGKeyArray, count: Any, q: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    fdt = _u.dtype(count)

    def c(v: float) -> Any:
        return const(v, fdt)

    stddev = lax.sqrt(lax.mul(lax.mul(count, q), lax.sub(c(1.0), q)))
    b = lax.add(c(1.15), lax.mul(c(2.53), stddev))
    a = lax.add(lax.add(c(-0.0873), lax.mul(c(0.0248), b)), lax.mul(c(0.01), q))
    mid = lax.add(lax.mul(count, q), c(0.5))
    v_r = lax.sub(c(0.92), lax.div(c(4.2), b))
    r = lax.div(q, lax.sub(c(1.0), q))
    alpha = lax.mul(lax.add(c(2.83), lax.div(c(5.1), b)), stddev)
    m = lax.floor(lax.mul(lax.add(count, c(1.0)), q))

    def log_ratio(num: Any, den: Any) -> Any:
        return lax.log(lax.div(num, den))

    def propose(u: Any, v: Any) -> tuple[Any, Any]:
        us = lax.sub(c(0.5), lax.abs(u))
        accept_fast = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        k = lax.floor(lax.add(lax.mul(lax.add(lax.div(lax.mul(c(2.0), a), us), b), u), mid))
        reject = lax.bitwise_or(lax.lt(k, c(0.0)), lax.gt(k, count))
        v_log = lax.log(lax.div(lax.mul(v, alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        n_minus_m1 = lax.add(lax.sub(count, m), c(1.0))
        n_minus_k1 = lax.add(lax.sub(count, k), c(1.0))
        bound = lax.mul(lax.add(m, c(0.5)), log_ratio(lax.add(m, c(1.0)), lax.mul(r, n_minus_m1)))
        bound = lax.add(bound, lax.mul(lax.add(count, c(1.0)), log_ratio(n_minus_m1, n_minus_k1)))
        bound = lax.add(
            bound,
            lax.mul(lax.add(k, c(0.5)), log_ratio(lax.mul(r, n_minus_k1), lax.add(k, c(1.0)))),
        )
        bound = lax.add(bound, _stirling_tail(m))
        bound = lax.add(bound, _stirling_tail(lax.sub(count, m)))
        bound = lax.sub(bound, _stirling_tail(k))
        bound = lax.sub(bound, _stirling_tail(lax.sub(count, k)))
        accept = lax.bitwise_or(
            accept_fast, lax.bitwise_and(lax.bitwise_not(reject), lax.le(v_log, bound))
        )
        return k, accept

    return _transformed_rejection(typed, shape, fdt, dtype, propose)


# ---------------------------------------------------------------------------
# Multinomial


def multinomial(
    key: Any,
    n: Any,
    p: Any,
    *,
    shape: Shape | None = None,
    dtype: Any = None,
    unroll: int | bool = 1,
) -> Any:
    """Multinomial draws: counts of `n` trials over categories of probabilities `p`.

    Args:
      key: a single PRNG key (typed or raw).
      n: the number of trials, broadcasting to `shape[:-1]`.
      p: the category probabilities along the last axis (..., K), broadcasting to
        `shape`; they need not be normalized to 1 (the last category takes what
        is left).
      shape: the result's shape, ending with K (default: `p`'s shape).
      dtype: the result's dtype (default: the default float type).
      unroll: how many categories the `scan` over categories unrolls.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> random.multinomial(random.PRNGKey(0), 10.0, np.full(3, 1 / 3)).shape
      (3,)
    """
    typed = single_key("multinomial", key)
    dtype = dtypes.canonicalize_dtype(dtypes.float_ if dtype is None else dtype)
    _u.check_arraylike("multinomial", n, p)
    if shape is None:
        shape = tuple(_u.shape(p))
    else:
        shape = check_shape("multinomial", shape)
    if not shape:
        raise ValueError("multinomial: p (and shape) must have at least one axis, the categories")
    param_shape("multinomial", shape, p)
    param_shape("multinomial", shape[:-1], n)
    return _multinomial(typed, n, p, shape=shape, dtype=dtype, unroll=unroll)


@staged("shape", "dtype", "unroll")
def _multinomial(
    typed: Any, n: Any, p: Any, *, shape: tuple, dtype: np.dtype, unroll: int | bool
) -> Any:
    n, p = _strong_inexact(n, p)
    fdt = _u.dtype(p)
    n = _u.broadcast_to(n, shape[:-1])
    p = _u.broadcast_to(p, shape)
    last = len(shape) - 1
    p = lax.transpose(p, (last, *range(last)))
    remainder = lax.cumsum(p, axis=0, reverse=True)
    remainder = _u.where(
        lax.eq(remainder, const(0.0, fdt)), lax.full_like(remainder, 1.0), remainder
    )
    conditional = lax.div(p, remainder)
    keys = _prng.PRNGKeyArray(typed._impl, typed._impl.split(typed._base_array, (shape[-1],)))

    def step(left: Any, xs: tuple) -> tuple:
        p_i, key_i = xs
        p_i = lax.min(const(1.0, fdt), lax.max(const(0.0, fdt), p_i))
        draw = binomial_draw(key_i, left, p_i, fdt)
        return lax.sub(left, draw), draw

    _, counts = lax.scan(step, n, (conditional, keys), unroll=unroll)
    counts = lax.transpose(counts, (*range(1, last + 1), 0))
    return lax.convert_element_type(counts, dtype)
