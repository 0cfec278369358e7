"""Univariate samplers that transform uniform or normal draws in closed form.

Each follows JAX's recipe for its distribution, so a key gives JAX's numbers:

- `exponential` is `-log1p(-u)`, `logistic` `log(u) - log1p(-u)`, `laplace`
  `sign(u) log1p(-|u|)` for `u` in (-1, 1), `cauchy` `tan(pi (u - 1/2))`, `gumbel`
  `-log(-log(u))`, `pareto` `exp(e / b)` for an exponential `e`, `rayleigh`
  `scale sqrt(-2 log u)`, `weibull_min` `scale e^(1/concentration)`,
  `lognormal` `exp(sigma z)`, `geometric` `floor(log u / log1p(-p)) + 1`;
- `bernoulli` compares one uniform with `p`; its `mode='high'` draws two
  uniforms per value (`eps u2 < p - u1`), resolving probabilities below 2**-24;
  `gumbel(mode='high')` likewise refines small uniforms with a second draw;
- `truncated_normal` maps a uniform between `erf(lower/sqrt 2)` and
  `erf(upper/sqrt 2)` through `sqrt 2 erf_inv`, then clips strictly inside the bounds;
- `maxwell` is the norm of three normals; `double_sided_maxwell` gives it a
  Rademacher sign; `triangular` inverts the piecewise CDF; `wald` is
  Michael-Schucany-Haas (one normal, one uniform).

Each public sampler checks its arguments, then calls its staged body (`_name`,
compiled as one computation as in JAX); the `*_draw` functions are the bodies'
parts that the other samplers (`categorical`, the gamma family ...) reuse.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.typing import Shape
from polyjax_numpy import lax
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._manipulation import broadcast_arrays
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_shape,
    const,
    float_dtype,
    float_param_dtype,
    int_dtype,
    param,
    param_shape,
    sample,
    single_key,
    staged,
    to_rank,
)
from polyjax_numpy.random._distributions import normal_draw, symmetric_uniform, uniform_draw

__all__ = [
    "bernoulli",
    "cauchy",
    "double_sided_maxwell",
    "exponential",
    "geometric",
    "gumbel",
    "laplace",
    "logistic",
    "lognormal",
    "maxwell",
    "pareto",
    "rademacher",
    "rayleigh",
    "triangular",
    "truncated_normal",
    "wald",
    "weibull_min",
]


# ---------------------------------------------------------------------------
# Helpers


def unit_uniform(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Uniform draws in [0, 1) (keys may be a batch)."""
    return uniform_draw(typed, shape, dtype, const(0.0, dtype), const(1.0, dtype))


def _unstack2(x: Any) -> tuple[Any, Any]:
    """`x[0], x[1]` of an array whose leading axis has size 2."""
    shape = _u.shape(x)
    rest = tuple(shape[1:])
    first = lax.squeeze(lax.slice(x, (0,) * len(shape), (1, *rest)), (0,))
    second = lax.squeeze(lax.slice(x, (1,) + (0,) * len(rest), (2, *rest)), (0,))
    return first, second


def check_mode(fun_name: str, mode: Any) -> str:
    """`mode` of `bernoulli`/`gumbel`-style samplers: 'low' (default) or 'high'."""
    if mode is None:
        return "low"
    if mode not in ("low", "high"):
        if fun_name == "bernoulli":
            raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
        raise ValueError(f"Must provide valid mode for {fun_name} got: {mode}")
    return mode


# ---------------------------------------------------------------------------
# Bernoulli and Rademacher


@_os.replicated_inside
def bernoulli(
    key: Any,
    p: Any = 0.5,
    shape: Shape | None = None,
    mode: str = "low",
    *,
    out_sharding: Any = None,
) -> Any:
    """Booleans that are True with probability `p`.

    Args:
      key: a single PRNG key (typed or raw).
      p: the probability of True, a float scalar or array broadcasting to `shape`.
      shape: the result's shape (default: `p`'s shape).
      mode: 'low' (one uniform per value, fastest) or 'high' (two uniforms per
        value, exact for probabilities below the float's epsilon).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      A boolean array of `shape`.

    Raises:
      TypeError: `p` is not of a floating dtype.
      ValueError: a bad `mode`, or `p` does not broadcast to `shape`.

    Example:
      >>> from polyjax_numpy import random
      >>> random.bernoulli(random.PRNGKey(0), 0.5, (3,))
      Array([False, False,  True], dtype=bool)
    """
    typed = single_key("bernoulli", key)
    mode = check_mode("bernoulli", mode)
    dt = _u.dtype(p) if _u.is_operand(p) else None
    if dt is None or not dtypes.issubdtype(dt, np.floating):
        shown = dtypes.canonicalize_dtype(dt).name if dt is not None else type(p).__name__
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {shown}.")
    shape = param_shape("bernoulli", shape, p)
    return _bernoulli(typed, p, shape=shape, dtype=dtypes.canonicalize_dtype(dt), mode=mode)


@staged("shape", "dtype", "mode")
def _bernoulli(typed: Any, p: Any, *, shape: tuple, dtype: np.dtype, mode: str) -> Any:
    return bernoulli_draw(typed, param("bernoulli", p, dtype), shape, mode)


def bernoulli_draw(typed: _prng.PRNGKeyArray, p: Any, shape: tuple[int, ...], mode: str) -> Any:
    """`bernoulli` without the checks: `p` is a float array broadcasting to `shape`."""
    dt = _u.dtype(p)
    p = to_rank(p, len(shape))
    if mode == "low":
        return lax.lt(unit_uniform(typed, shape, dt), p)
    u1, u2 = _unstack2(unit_uniform(typed, (2, *shape), dt))
    return lax.lt(lax.mul(u2, const(dtypes.finfo(dt).eps, dt)), lax.sub(p, u1))


@_os.replicated_inside
def rademacher(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """-1 or +1 with equal probability.

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape.
      dtype: a numeric dtype (default int32).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.rademacher(random.PRNGKey(0), (4,))
      Array([-1, -1,  1,  1], dtype=int32)
    """
    typed = single_key("rademacher", key)
    shape = check_shape("rademacher", shape)
    dtype = dtypes.canonicalize_dtype(dtypes.int_ if dtype is None else dtype)
    if not dtypes.issubdtype(dtype, np.number) and dtype != np.bool_:
        raise ValueError(f"dtype argument to `rademacher` must be numeric, got {dtype}")
    return _rademacher(typed, shape=shape, dtype=dtype)


@staged("shape", "dtype")
def _rademacher(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return rademacher_draw(typed, shape, dtype)


def rademacher_draw(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    half = const(0.5, dtypes.canonicalize_dtype(dtypes.float_))
    coin = bernoulli_draw(typed, half, shape, "low")
    # A boolean result is 2b - 1 computed in int32 and converted (always True), as JAX.
    work = np.dtype(np.int32) if dtype == np.bool_ else dtype
    signs = lax.sub(lax.mul(const(2, work), lax.convert_element_type(coin, work)), const(1, work))
    return lax.convert_element_type(signs, dtype)


# ---------------------------------------------------------------------------
# Transformations of one uniform draw


@_os.replicated_inside
def exponential(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Exponential draws with rate 1: `-log1p(-u)` for a uniform `u`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.exponential(random.PRNGKey(0), (2,))
      Array([2.950128 , 3.8434246], dtype=float32)
    """
    return sample("exponential", _exponential, key, (), check_shape("exponential", shape), dtype)


@staged("shape", "dtype")
def _exponential(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return exponential_draw(typed, shape, dtype)


def exponential_draw(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.neg(lax.log1p(lax.neg(unit_uniform(typed, shape, dtype))))


@_os.replicated_inside
def laplace(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Laplace draws (location 0, scale 1): `sign(u) log1p(-|u|)`, `u` uniform in (-1, 1).

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.laplace(random.PRNGKey(0), (2,)).shape
      (2,)
    """
    return sample("laplace", _laplace, key, (), check_shape("laplace", shape), dtype)


@staged("shape", "dtype")
def _laplace(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    u = symmetric_uniform(typed, shape, dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_os.replicated_inside
def logistic(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard logistic draws: `log(u) - log1p(-u)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.logistic(random.PRNGKey(0), (2,)).shape
      (2,)
    """
    return sample("logistic", _logistic, key, (), check_shape("logistic", shape), dtype)


@staged("shape", "dtype")
def _logistic(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    u = uniform_draw(typed, shape, dtype, const(dtypes.finfo(dtype).tiny, dtype), const(1, dtype))
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


@_os.replicated_inside
def cauchy(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Standard Cauchy draws: `tan(pi (u - 1/2))`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.cauchy(random.PRNGKey(0), (2,)).shape
      (2,)
    """
    return sample("cauchy", _cauchy, key, (), check_shape("cauchy", shape), dtype)


@staged("shape", "dtype")
def _cauchy(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    u = uniform_draw(typed, shape, dtype, const(dtypes.finfo(dtype).eps, dtype), const(1, dtype))
    return lax.tan(lax.mul(const(np.pi, dtype), lax.sub(u, const(0.5, dtype))))


@_os.replicated_inside
def maxwell(key: Any, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None) -> Any:
    """Maxwell draws: the norm of three standard normals.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.maxwell(random.PRNGKey(0), (2,)).shape
      (2,)
    """
    return sample("maxwell", _maxwell, key, (), check_shape("maxwell", shape), dtype)


@staged("shape", "dtype")
def _maxwell(typed: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    return maxwell_draw(typed, shape, dtype)


def maxwell_draw(typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    z = normal_draw(typed, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),)))


@_os.replicated_inside
def gumbel(
    key: Any,
    shape: Shape = (),
    dtype: Any = None,
    mode: str | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Standard Gumbel draws: `-log(-log(u))`.

    Args:
      key: a single PRNG key (typed or raw).
      shape: the result's shape.
      dtype: a float dtype.
      mode: 'low' (default) or 'high': two uniforms per value, for accurate
        values far in the right tail.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.gumbel(random.PRNGKey(0), (2,)).shape
      (2,)
    """
    mode = check_mode("gumbel", mode)
    return sample("gumbel", _gumbel, key, (), check_shape("gumbel", shape), dtype, mode=mode)


@staged("shape", "dtype", "mode")
def _gumbel(typed: Any, *, shape: tuple, dtype: np.dtype, mode: str) -> Any:
    return gumbel_draw(typed, shape, dtype, mode)


def gumbel_draw(
    typed: _prng.PRNGKeyArray, shape: tuple[int, ...], dtype: np.dtype, mode: str
) -> Any:
    finfo = dtypes.finfo(dtype)
    if mode == "low":
        u = uniform_draw(typed, shape, dtype, const(finfo.tiny, dtype), const(1, dtype))
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    # Uniforms below 1/2 are refined by a second draw below their last bit, so
    # that -log(u) keeps its precision where u is tiny.
    u1, u2 = _unstack2(unit_uniform(typed, (2, *shape), dtype))
    refined = lax.add(lax.add(u1, lax.mul(const(finfo.eps, dtype), u2)), const(finfo.tiny, dtype))
    u = _u.where(lax.ge(u1, const(0.5, dtype)), u1, refined)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(u)))))


# ---------------------------------------------------------------------------
# Samplers with parameters


@_os.replicated_inside
def pareto(
    key: Any, b: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Pareto draws with shape parameter `b` (support [1, inf)): `exp(e / b)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.pareto(random.PRNGKey(0), 3.0, (2,)).shape
      (2,)
    """
    return sample("pareto", _pareto, key, (b,), shape, dtype)


@staged("shape", "dtype")
def _pareto(typed: Any, b: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    b = param("pareto", b, dtype)
    e = exponential_draw(typed, shape, dtype)
    return lax.exp(lax.div(e, to_rank(b, len(shape))))


@_os.replicated_inside
def rayleigh(
    key: Any, scale: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Rayleigh draws: `scale * sqrt(-2 log u)`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.rayleigh(random.PRNGKey(0), 2.0, (2,)).shape
      (2,)
    """
    return sample("rayleigh", _rayleigh, key, (scale,), shape, dtype)


@staged("shape", "dtype")
def _rayleigh(typed: Any, scale: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    scale = param("rayleigh", scale, dtype)
    u = unit_uniform(typed, shape, dtype)
    root = lax.sqrt(lax.mul(lax.log(u), const(-2.0, dtype)))
    return lax.mul(_u.broadcast_to(scale, shape), root)


@_os.replicated_inside
def lognormal(
    key: Any,
    sigma: Any = 1.0,
    shape: Shape | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Log-normal draws: `exp(sigma * z)` for a standard normal `z`.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.lognormal(random.PRNGKey(0), 0.5, (2,)).shape
      (2,)
    """
    return sample("lognormal", _lognormal, key, (sigma,), shape, dtype)


@staged("shape", "dtype")
def _lognormal(typed: Any, sigma: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    sigma = param("lognormal", sigma, dtype)
    return lax.exp(lax.mul(normal_draw(typed, shape, dtype), to_rank(sigma, len(shape))))


@_os.replicated_inside
def truncated_normal(
    key: Any,
    lower: Any,
    upper: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Standard normal draws conditioned on `lower < x < upper`.

    Args:
      key: a single PRNG key (typed or raw).
      lower, upper: the bounds, scalars or arrays broadcasting to `shape`.
      shape: the result's shape (default: the bounds' broadcast shape).
      dtype: a float dtype.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Returns:
      Draws strictly inside the bounds (clipped to the next floats inside, as
      JAX does). Differentiable in the bounds.

    Example:
      >>> from polyjax_numpy import random
      >>> random.truncated_normal(random.PRNGKey(0), -1.0, 2.0, (2,)).shape
      (2,)
    """
    return sample("truncated_normal", _truncated_normal, key, (lower, upper), shape, dtype)


@staged("shape", "dtype")
def _truncated_normal(typed: Any, lower: Any, upper: Any, *, shape: tuple, dtype: np.dtype):
    lower = param("truncated_normal", lower, dtype)
    upper = param("truncated_normal", upper, dtype)
    sqrt2 = const(np.sqrt(2.0), dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    u = uniform_draw(typed, shape, dtype, a, b)
    out = lax.mul(sqrt2, lax.erf_inv(u))
    # Rounding can land on (or past) a bound: the draw is kept strictly inside.
    inside_lo = lax.nextafter(lax.stop_gradient(lower), _u.scalar_like(np.inf, lower))
    inside_hi = lax.nextafter(lax.stop_gradient(upper), _u.scalar_like(-np.inf, upper))
    out = lax.max(to_rank(inside_lo, len(shape)), out)
    return lax.min(to_rank(inside_hi, len(shape)), out)


@_os.replicated_inside
def triangular(
    key: Any,
    left: Any,
    mode: Any,
    right: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Triangular draws on [left, right] peaking at `mode` (inverse-CDF sampling).

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.triangular(random.PRNGKey(0), 0.0, 0.3, 1.0, (2,)).shape
      (2,)
    """
    return sample("triangular", _triangular, key, (left, mode, right), shape, dtype)


@staged("shape", "dtype")
def _triangular(typed: Any, left: Any, mode: Any, right: Any, *, shape: tuple, dtype: np.dtype):
    left, mode, right = (
        _u.broadcast_to(param("triangular", v, dtype), shape) for v in (left, mode, right)
    )
    width = lax.sub(right, left)
    cut = lax.div(lax.sub(mode, left), width)
    u = unit_uniform(typed, shape, dtype)
    below = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    above_sq = lax.mul(lax.mul(lax.sub(const(1.0, dtype), u), width), lax.sub(right, mode))
    above = lax.sub(right, lax.sqrt(above_sq))
    return _u.where(lax.lt(u, cut), below, above)


@_os.replicated_inside
def wald(
    key: Any, mean: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Wald (inverse Gaussian) draws with the given mean and shape parameter 1.

    Args:
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.wald(random.PRNGKey(0), 2.0, (2,)).shape
      (2,)
    """
    return sample("wald", _wald, key, (mean,), shape, dtype)


@staged("shape", "dtype")
def _wald(typed: Any, mean: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    k_normal, k_uniform = _prng.split_keys(typed, 2)
    mean = _u.broadcast_to(param("wald", mean, dtype), shape)
    v = normal_draw(k_normal, shape, dtype)
    z = unit_uniform(k_uniform, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    root = lax.sqrt(lax.add(lax.mul(lax.mul(const(4.0, dtype), mean), y), lax.mul(mean_sq, y_sq)))
    x = lax.sub(
        lax.add(mean, lax.div(lax.mul(mean_sq, y), const(2.0, dtype))),
        lax.mul(lax.div(mean, const(2.0, dtype)), root),
    )
    accept = lax.le(z, lax.div(mean, lax.add(mean, x)))
    return _u.where(accept, x, lax.div(mean_sq, x))


def weibull_min(
    key: Any, scale: Any, concentration: Any, shape: Shape = (), dtype: Any = None
) -> Any:
    """Weibull draws: `scale * e ** (1 / concentration)` for an exponential `e`.

    As in JAX, the draws have shape `shape`, then broadcast with the parameters.

    Example:
      >>> from polyjax_numpy import random
      >>> random.weibull_min(random.PRNGKey(0), 2.0, 1.5, (2,)).shape
      (2,)
    """
    typed = single_key("weibull_min", key)
    shape = check_shape("weibull_min", shape)
    dtype = float_dtype("weibull_min", dtype)
    _u.check_arraylike("weibull_min", scale, concentration)
    return _weibull_min(typed, scale, concentration, shape=shape, dtype=dtype)


@staged("shape", "dtype")
def _weibull_min(typed: Any, scale: Any, concentration: Any, *, shape: tuple, dtype: np.dtype):
    scale = param("weibull_min", scale, dtype)
    concentration = param("weibull_min", concentration, dtype)
    e = exponential_draw(typed, shape, dtype)
    e, inv, scale = broadcast_arrays(e, lax.div(const(1.0, dtype), concentration), scale)
    return lax.mul(lax.pow(e, inv), scale)


def double_sided_maxwell(
    key: Any, loc: Any, scale: Any, shape: Shape = (), dtype: Any = None
) -> Any:
    """Double-sided Maxwell draws: a Maxwell draw with a random sign, scaled and shifted.

    As in JAX, the draws have shape `shape + S` where S is the parameters'
    broadcast shape (`shape=()` with array parameters gives `S + S`).

    Example:
      >>> from polyjax_numpy import random
      >>> random.double_sided_maxwell(random.PRNGKey(0), 0.0, 1.0, (2,)).shape
      (2,)
    """
    typed = single_key("double_sided_maxwell", key)
    shape = check_shape("double_sided_maxwell", shape)
    dtype = float_dtype("double_sided_maxwell", dtype)
    _u.check_arraylike("double_sided_maxwell", loc, scale)
    params_shape = param_shape("double_sided_maxwell", None, loc, scale)
    shape = (*(shape or params_shape), *params_shape)
    return _double_sided_maxwell(typed, loc, scale, shape=shape, dtype=dtype)


@staged("shape", "dtype")
def _double_sided_maxwell(typed: Any, loc: Any, scale: Any, *, shape: tuple, dtype: np.dtype):
    loc = param("double_sided_maxwell", loc, dtype)
    scale = param("double_sided_maxwell", scale, dtype)
    k_maxwell, k_sign = _prng.split_keys(typed, 2)
    sample = lax.mul(rademacher_draw(k_sign, shape, dtype), maxwell_draw(k_maxwell, shape, dtype))
    return lax.add(lax.mul(sample, to_rank(scale, len(shape))), to_rank(loc, len(shape)))


@_os.replicated_inside
def geometric(
    key: Any, p: Any, shape: Shape | None = None, dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Geometric draws: the number of Bernoulli(`p`) trials up to the first success (>= 1).

    Args:
      key: a single PRNG key (typed or raw).
      p: the success probability, broadcasting to `shape`.
      shape: the result's shape (default: `p`'s shape).
      dtype: an integer dtype (default int32).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> from polyjax_numpy import random
      >>> random.geometric(random.PRNGKey(0), 0.3, (3,))
      Array([1, 1, 4], dtype=int32)
    """
    return sample("geometric", _geometric, key, (p,), shape, dtype, dtype_rule=int_dtype)


@staged("shape", "dtype")
def _geometric(typed: Any, p: Any, *, shape: tuple, dtype: np.dtype) -> Any:
    fdt = float_param_dtype(p)
    p = param("geometric", p, fdt)
    u = unit_uniform(typed, shape, fdt)
    u = _u.where(lax.eq(u, const(0.0, fdt)), lax.full(shape, 1.0, fdt), u)
    log_q = _u.broadcast_to(lax.log1p(lax.neg(p)), shape)
    trials = lax.add(lax.floor(lax.div(lax.log(u), log_q)), const(1.0, fdt))
    return lax.convert_element_type(trials, dtype)
