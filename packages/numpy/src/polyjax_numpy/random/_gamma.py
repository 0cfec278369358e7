"""The gamma sampler (`random_gamma_p`) and the samplers built on it.

**Gamma draws** use Marsaglia and Tsang's rejection method ("A simple method for
generating gamma variables", ACM TOMS 2000), as JAX does, with the same keys so
that a key gives JAX's numbers. For shape parameter `a >= 1`, with
`d = a - 1/3` and `c = 1 / (3 sqrt(d))`: draw a normal `x` until `v = (1 + c x)`
is positive, and a uniform `u`; accept `d v**3` when
`u < 1 - 0.0331 x**4` or `log u < x**2 / 2 + d (1 - v**3 + log v**3)`. For
`a < 1` the draw for `a + 1` is *boosted* by `u**(1/a)`. Each element has its own
key (`split(key, a.size)`, in row-major order), which every step splits in three
(next key, normal key, uniform key); the normal loop splits its key in two per
try. The loops are vectorized: every element steps until all have accepted,
and an element that accepted keeps its state, which gives each element exactly
the draws of its own scalar loop.

**Derivatives** are implicit reparameterization (Figurnov et al., 2018): the
derivative of a draw in `a` is `-(dF/da) / (dF/dx)` for the gamma CDF `F`, which
`lax.random_gamma_grad` computes. `loggamma` (log-space draws, accurate for tiny
`a`) divides it by the draw.

`random_gamma_p` is a primitive (as in JAX) taking the key data and the shape
parameters; its batching rule lets `vmap` batch keys, parameters or both.
Built on it: `loggamma`, `beta` (two log-gammas), `dirichlet` (log-gammas
normalized in log space), `chisquare`, `t`, `f`, `generalized_normal`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.aval_sharding import ShardingTypeError, concrete_mesh_for, entries_of
from polyjax_core.mesh_context import spec_to_sharding
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_core.typing import Shape
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy import lax
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_broadcast_shapes,
    check_shape,
    const,
    float_dtype,
    float_param_dtype,
    param,
    sample,
    single_key,
    staged,
    to_rank,
)
from polyjax_numpy.random._distributions import normal_draw
from polyjax_numpy.random._univariate import (
    exponential_draw,
    rademacher_draw,
    unit_uniform,
)

__all__ = [
    "beta",
    "chisquare",
    "dirichlet",
    "f",
    "gamma",
    "generalized_normal",
    "loggamma",
    "random_gamma_p",
    "t",
]


# ---------------------------------------------------------------------------
# Marsaglia-Tsang on elementwise keys


def _select_keys(pred: Any, new: _prng.PRNGKeyArray, old: _prng.PRNGKeyArray) -> Any:
    """Per element: `new` key where `pred`, else `old` (`pred` has the keys' shape)."""
    data_new, data_old = new._base_array, old._base_array
    full = lax.broadcast_in_dim(pred, _u.shape(data_new), tuple(range(_u.ndim(pred))))
    return _prng.PRNGKeyArray(new._impl, lax.select_n(full, data_old, data_new))


def _any(pred: Any) -> Any:
    return lax.reduce_or(pred, tuple(range(_u.ndim(pred))))


def _marsaglia_tsang(keys: _prng.PRNGKeyArray, a: Any, log_space: bool) -> Any:
    """Gamma(`a`) draws with one key per element (`keys.shape == a.shape`)."""
    dt = _u.dtype(a)
    shape = tuple(_u.shape(a))
    one, third = const(1.0, dt), const(1.0 / 3.0, dt)
    boost_mask = lax.ge(a, one)
    alpha = lax.select_n(boost_mask, lax.add(a, one), a)
    d = lax.sub(alpha, third)
    c = lax.div(third, lax.sqrt(d))
    key, subkey = _prng.split_keys(keys, 2)

    def rejected(x_sq: Any, v: Any, u: Any) -> Any:
        squeeze_rejects = lax.ge(u, lax.sub(one, lax.mul(const(0.0331, dt), lax.mul(x_sq, x_sq))))
        log_bound = lax.add(
            lax.mul(x_sq, const(0.5, dt)), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))
        )
        return lax.bitwise_and(squeeze_rejects, lax.ge(lax.log(u), log_bound))

    def normal_with_positive_v(k: _prng.PRNGKeyArray) -> tuple[Any, Any]:
        def cond(state: tuple) -> Any:
            return _any(lax.le(state[2], const(0.0, dt)))

        def body(state: tuple) -> tuple:
            k, x, v = state
            trying = lax.le(v, const(0.0, dt))
            k_next, k_normal = _prng.split_keys(k, 2)
            x_new = normal_draw(k_normal, (), dt)
            v_new = lax.add(one, lax.mul(x_new, c))
            return (
                _select_keys(trying, k_next, k),
                lax.select_n(trying, x, x_new),
                lax.select_n(trying, v, v_new),
            )

        init = (k, lax.full(shape, 0.0, dt), lax.full(shape, -1.0, dt))
        _, x, v = lax.while_loop(cond, body, init)
        return x, v

    def cond(state: tuple) -> Any:
        _, x_sq, v, u = state
        return _any(rejected(x_sq, v, u))

    def body(state: tuple) -> tuple:
        k, x_sq, v, u = state
        trying = rejected(x_sq, v, u)
        k_next, k_normal, k_uniform = _prng.split_keys(k, 3)
        x, v_root = normal_with_positive_v(k_normal)
        new = (
            lax.mul(x, x),
            lax.mul(lax.mul(v_root, v_root), v_root),
            unit_uniform(k_uniform, (), dt),
        )
        kept = tuple(lax.select_n(trying, o, n) for o, n in zip((x_sq, v, u), new, strict=True))
        return (_select_keys(trying, k_next, k), *kept)

    init = (key, lax.full(shape, 0.0, dt), lax.full(shape, 1.0, dt), lax.full(shape, 2.0, dt))
    _, _, v, _ = lax.while_loop(cond, body, init)

    if not log_space:
        u = unit_uniform(subkey, (), dt)
        boost = lax.pow(lax.sub(one, u), lax.div(one, a))
        boost = lax.select_n(boost_mask, boost, lax.full(shape, 1.0, dt))
        return lax.mul(lax.mul(d, v), boost)
    # In log space the boost is -e / a for an exponential e, without exp and log.
    neg_e = lax.neg(exponential_draw(subkey, (), dt))
    no_boost = lax.bitwise_or(boost_mask, lax.eq(neg_e, const(0.0, dt)))
    log_boost = lax.select_n(no_boost, lax.mul(neg_e, lax.div(one, a)), lax.full(shape, 0.0, dt))
    return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)


def _gamma_impl(key_data: Any, a: Any, *, log_space: bool) -> Any:
    """Draws for a batch of keys (shape B) and parameters of shape B + S."""
    impl = _prng.resolve_prng_impl(None)
    batch = tuple(_u.shape(key_data)[: -len(impl.key_shape)])
    rest = tuple(_u.shape(a)[len(batch) :])
    size = int(np.prod(rest, dtype=np.int64))
    # One key per element, in row-major order of the parameters' own axes.
    data = impl.split(key_data, (size,))
    data = lax.reshape(data, (*batch, *rest, *impl.key_shape))
    return _marsaglia_tsang(_prng.PRNGKeyArray(impl, data), a, log_space)


def _gamma_abstract_eval(key: ShapedArray, a: ShapedArray, *, log_space: bool) -> ShapedArray:
    if key.dtype != np.uint32 or not key.shape:
        raise TypeError(f"random_gamma: the key data must be uint32[..., 2], got {key.str_short()}")
    if not dtypes.issubdtype(a.dtype, np.floating):
        raise TypeError(f"random_gamma: `a` must be of a float dtype, got {a.str_short()}")
    batch = tuple(key.shape[:-1])
    if tuple(a.shape[: len(batch)]) != batch:
        raise ValueError(
            f"random_gamma: keys of shape {batch} need parameters whose shape starts with it, "
            f"got {a.shape}"
        )
    return ShapedArray(a.shape, a.dtype)


def _gamma_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, log_space: bool) -> tuple:
    key, a = primals
    _, t_a = tangents
    sample = random_gamma_p.bind(key, a, log_space=log_space)
    if type(t_a) is ad.Zero:
        return sample, ad.Zero.from_primal_value(sample)
    if log_space:
        x = lax.exp(sample)
        # A draw that underflows to 0 gets the smallest normal float's derivative.
        tiny = lax.full(_u.shape(x), dtypes.finfo(_u.dtype(x)).tiny, _u.dtype(x))
        x = lax.select_n(lax.eq(x, _u.scalar_like(0, x)), x, tiny)
        grad = lax.div(lax.random_gamma_grad(a, x), x)
    else:
        grad = lax.random_gamma_grad(a, sample)
    return sample, lax.mul(t_a, grad)


def _gamma_batch(args: Sequence[Any], dims: Sequence[Any], *, log_space: bool) -> tuple:
    key, a = args
    key_dim, a_dim = dims
    size = _u.shape(key)[key_dim] if key_dim is not None else _u.shape(a)[a_dim]
    key = batching.bdim_at_front(key, key_dim, size)
    a = batching.bdim_at_front(a, a_dim, size)
    return random_gamma_p.bind(key, a, log_space=log_space), 0


def _gamma_sharding(outs: Any, avals: Sequence[Any], *, log_space: bool) -> tuple:
    """Explicit mode: draws split as the parameters (each element's draw needs only
    its key and parameter); a key batch dimension split otherwise than the
    parameters' is a `ShardingTypeError`, as is a split key data dimension."""
    key, a = avals
    ks, as_ = entries_of(key), entries_of(a)
    batch = len(key.shape) - 1
    if ks[batch:] != ((),) * (len(ks) - batch) or any(
        k and k != p for k, p in zip(ks[:batch], as_)
    ):
        raise ShardingTypeError(
            "random_gamma: the keys must be split as the parameters' leading dimensions "
            f"(their data dimension unsplit); got keys {key.str_short(short_dtypes=True)} and "
            f"parameters {a.str_short(short_dtypes=True)}"
        )
    return tuple(k or p for k, p in zip(ks[:batch], as_)) + tuple(as_[batch:])


random_gamma_p = Primitive("random_gamma")
define_rules(
    random_gamma_p,
    _gamma_abstract_eval,
    mlir.lower_fun(_gamma_impl, multiple_results=False),
    jvp=_gamma_jvp,
    batching=_gamma_batch,
    sharding=_gamma_sharding,
)


def gamma_draw(typed: _prng.PRNGKeyArray, a: Any, log_space: bool = False) -> Any:
    """Gamma draws of `a`'s shape and dtype (no checks; `a` already broadcast).

    In explicit mode the keys and parameters are resharded unsplit first and the
    draws are unsplit, as JAX 0.10.2's samplers do without ``out_sharding``.
    """
    key, a = _unsplit(typed._base_array), _unsplit(a)
    return random_gamma_p.bind(key, a, log_space=log_space)


def _unsplit(x: Any) -> Any:
    """``x`` resharded to no split if its type has one (explicit mode), else ``x``."""
    typed = getattr(get_aval(x), "aval_sharding", None)
    mesh = None if typed is None else concrete_mesh_for(typed.mesh)
    if mesh is None:
        return x
    return lax.reshard(x, spec_to_sharding(PartitionSpec(), mesh))


# ---------------------------------------------------------------------------
# Public samplers


@_os.replicated_inside
def gamma(
    key: Any, a: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Gamma draws with shape parameter `a` and scale 1.

    Args:
      key: a single PRNG key (typed or raw).
      a: the shape parameter (> 0), a scalar or array broadcasting to `shape`.
      shape: the result's shape (default: `a`'s shape).
      dtype: a float dtype.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      Draws of `shape`, differentiable in `a` (implicit reparameterization).

    Example:
      >>> from polyjax_numpy import random
      >>> random.gamma(random.PRNGKey(0), 2.0, (3,))
      Array([1.5897877, 1.7599413, 1.1290071], dtype=float32)
    """
    return sample("gamma", _gamma, key, (a,), shape, dtype)


@staged("shape", "dtype")
def _gamma(typed: Any, a: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return gamma_draw(typed, _u.broadcast_to(param("gamma", a, dtype), shape))


@_os.replicated_inside
def loggamma(
    key: Any, a: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """The logarithms of gamma draws, computed in log space (accurate for small `a`).

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.loggamma(random.PRNGKey(0), 0.01, (2,)).shape
      (2,)
    """
    return sample("loggamma", _loggamma, key, (a,), shape, dtype)


@staged("shape", "dtype")
def _loggamma(typed: Any, a: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return gamma_draw(typed, _u.broadcast_to(param("loggamma", a, dtype), shape), log_space=True)


@_os.replicated_inside
def beta(
    key: Any,
    a: Any,
    b: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Beta(`a`, `b`) draws: `g_a / (g_a + g_b)` for two gamma draws, in log space.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.beta(random.PRNGKey(0), 2.0, 3.0, (2,)).shape
      (2,)
    """
    return sample("beta", _beta, key, (a, b), shape, dtype)


@staged("shape", "dtype")
def _beta(typed: Any, a: Any, b: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    a, b = param("beta", a, dtype), param("beta", b, dtype)
    key_a, key_b = _prng.split_keys(typed, 2)
    log_ga = gamma_draw(key_a, _u.broadcast_to(a, shape), log_space=True)
    log_gb = gamma_draw(key_b, _u.broadcast_to(b, shape), log_space=True)
    # Normalized by the larger one, so that tiny `a` and `b` do not give 0 / 0.
    log_max = lax.max(log_ga, log_gb)
    ga = lax.exp(lax.sub(log_ga, log_max))
    gb = lax.exp(lax.sub(log_gb, log_max))
    return lax.div(ga, lax.add(ga, gb))


@_os.replicated_inside
def dirichlet(
    key: Any, alpha: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Dirichlet(`alpha`) draws: normalized gamma draws (normalized in log space).

    Args:
      key: a single PRNG key (typed or raw).
      alpha: the concentrations, an array of shape (..., K).
      shape: the batch shape of the draws (default `alpha.shape[:-1]`); the
        result has shape `shape + (K,)`.
      dtype: a float dtype.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> random.dirichlet(random.PRNGKey(0), np.ones(3), (2,)).shape
      (2, 3)
    """
    typed = single_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    _u.check_arraylike("dirichlet", alpha)
    alpha_shape = tuple(_u.shape(alpha))
    if not alpha_shape:
        raise ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0")
    if shape is None:
        shape = alpha_shape[:-1]
    else:
        shape = check_shape("dirichlet", shape)
        check_broadcast_shapes("dirichlet", shape, alpha_shape[:-1])
    return _dirichlet(typed, alpha, shape=shape, dtype=dtype)


@staged("shape", "dtype")
def _dirichlet(typed: Any, alpha: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    alpha = param("dirichlet", alpha, dtype)
    full = (*shape, _u.shape(alpha)[-1])
    log_g = gamma_draw(typed, _u.broadcast_to(alpha, full), log_space=True)
    # A softmax in log space (the maximum taken out without its gradient).
    axis = len(shape)
    keep = tuple(range(axis))
    top = lax.max(lax.reduce_max(log_g, (axis,)), const(-np.inf, dtype))
    top = lax.stop_gradient(lax.broadcast_in_dim(top, (*shape, 1), keep))
    unnormalized = lax.exp(lax.sub(log_g, top))
    total = lax.broadcast_in_dim(lax.reduce_sum(unnormalized, (axis,)), (*shape, 1), keep)
    return lax.div(unnormalized, total)


@_os.replicated_inside
def chisquare(
    key: Any, df: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Chi-square draws with `df` degrees of freedom: `2 * gamma(df / 2)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.chisquare(random.PRNGKey(0), 3.0, (2,)).shape
      (2,)
    """
    return sample("chisquare", _chisquare, key, (df,), shape, dtype)


@staged("shape", "dtype")
def _chisquare(typed: Any, df: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return chisquare_draw(typed, param("chisquare", df, dtype), shape)


def chisquare_draw(typed: _prng.PRNGKeyArray, df: Any, shape: tuple[int, ...]) -> Any:
    dt = _u.dtype(df)
    half = _u.broadcast_to(lax.div(df, const(2.0, dt)), shape)
    return lax.mul(lax.exp(gamma_draw(typed, half, log_space=True)), const(2.0, dt))


@_os.replicated_inside
def t(
    key: Any, df: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Student's t draws with `df` degrees of freedom: `z * sqrt(df / (2 g))`, `g ~ gamma(df/2)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.t(random.PRNGKey(0), 3.0, (2,)).shape
      (2,)
    """
    return sample("t", _t, key, (df,), shape, dtype)


@staged("shape", "dtype")
def _t(typed: Any, df: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    df = param("t", df, dtype)
    key_n, key_g = _prng.split_keys(typed, 2)
    n = normal_draw(key_n, shape, dtype)
    half_df = lax.div(df, const(2.0, dtype))
    g = gamma_draw(key_g, _u.broadcast_to(half_df, shape))
    return lax.mul(n, lax.sqrt(lax.div(to_rank(half_df, len(shape)), g)))


@_os.replicated_inside
def f(
    key: Any,
    dfnum: Any,
    dfden: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """F draws: the ratio of two chi-square draws, each over its degrees of freedom.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.f(random.PRNGKey(0), 3.0, 4.0, (2,)).shape
      (2,)
    """
    return sample("f", _f, key, (dfnum, dfden), shape, dtype)


@staged("shape", "dtype")
def _f(typed: Any, dfnum: Any, dfden: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    dfnum, dfden = param("f", dfnum, dtype), param("f", dfden, dtype)
    key_den, key_num = _prng.split_keys(typed, 2)
    num = lax.div(chisquare_draw(key_num, dfnum, shape), to_rank(dfnum, len(shape)))
    den = lax.div(chisquare_draw(key_den, dfden, shape), to_rank(dfden, len(shape)))
    return lax.div(num, den)


def inverse_param(p: Any, dtype: np.dtype) -> Any:
    """`1 / p` computed as JAX does: in `p`'s float type (ints as the default float)."""
    pdt = float_param_dtype(p)
    p = param("generalized_normal", p, pdt)
    return lax.convert_element_type(lax.div(const(1.0, pdt), p), dtype)


@_os.replicated_inside
def generalized_normal(
    key: Any, p: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Generalized normal draws: density proportional to `exp(-|x|**p)`.

    `p = 2` is a normal of variance 1/2, `p = 1` a Laplace. Drawn as a random
    sign times `g**(1/p)` for `g ~ gamma(1/p)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.generalized_normal(random.PRNGKey(0), 1.5, (2,)).shape
      (2,)
    """
    shape = check_shape("generalized_normal", shape)
    return sample("generalized_normal", _generalized_normal, key, (p,), shape, dtype)


@staged("shape", "dtype")
def _generalized_normal(typed: Any, p: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return generalized_normal_draw(typed, p, shape, dtype)


def generalized_normal_draw(
    typed: _prng.PRNGKeyArray, p: Any, shape: tuple[int, ...], dtype: np.dtype
) -> Any:
    key_g, key_r = _prng.split_keys(typed, 2)
    inv_p = inverse_param(p, dtype)
    g = gamma_draw(key_g, _u.broadcast_to(inv_p, shape))
    r = rademacher_draw(key_r, shape, dtype)
    return lax.mul(r, lax.pow(g, to_rank(inv_p, len(shape))))
