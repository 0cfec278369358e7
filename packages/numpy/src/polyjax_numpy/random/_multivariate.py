"""Multivariate samplers: `multivariate_normal`, `orthogonal` and `ball`, as JAX draws them.

- `multivariate_normal` is `mean + A z` for standard normals `z` and a factor
  `A A^T = cov`: the Cholesky factor, `V sqrt(W)` from `eigh`, or `U sqrt(S)`
  from the SVD (`method`).
- `orthogonal` takes the QR decomposition of a matrix of standard normals and
  flips the columns of `Q` by the signs of `R`'s diagonal, which makes `Q`
  Haar-distributed (Mezzadri, "How to generate random matrices from the classical
  compact groups", 2007).
- `ball` draws uniformly from the unit `p`-norm ball: generalized-normal
  coordinates `g` and an exponential `e` give `g / (sum |g|**p + e)**(1/p)`
  (Barthe, Guedon, Mendelson and Naor, 2005).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from polyjax_core.typing import Shape
from polyjax_numpy import lax
from polyjax_numpy.lax import linalg
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.random import _prng
from polyjax_numpy.random._args import (
    check_broadcast_shapes,
    check_shape,
    float_dtype,
    param,
    single_key,
    staged,
)
from polyjax_numpy.random._distributions import normal_draw
from polyjax_numpy.random._gamma import generalized_normal_draw, inverse_param
from polyjax_numpy.random._univariate import exponential_draw

__all__ = ["ball", "multivariate_normal", "orthogonal"]

_METHODS = ("svd", "eigh", "cholesky")


def _diagonal(x: Any) -> Any:
    """The diagonal of the trailing square matrices of `x`, exactly (a strided slice)."""
    shape = tuple(_u.shape(x))
    k = shape[-1]
    flat = lax.reshape(x, (*shape[:-2], k * k))
    lead = len(shape) - 2
    return lax.slice(flat, (0,) * (lead + 1), (*shape[:-2], k * k), (1,) * lead + (k + 1,))


def _scale_columns(m: Any, v: Any) -> Any:
    """`m * v[..., None, :]`."""
    shape = tuple(_u.shape(m))
    dims = (*range(len(shape) - 2), len(shape) - 1)
    return lax.mul(m, lax.broadcast_in_dim(v, shape, dims))


@_os.replicated_inside
def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Shape | None = None,
    dtype: Any = None,
    method: str = "cholesky",
    *,
    out_sharding: Any = None,
) -> Any:
    """Multivariate normal draws with the given mean and covariance.

    Args:
      key: a single PRNG key (typed or raw).
      mean: the mean, of shape (..., n).
      cov: the covariance, of shape (..., n, n), symmetric positive (semi)definite.
      shape: the batch shape of the draws (default: the broadcast of the batch
        shapes of `mean` and `cov`); the result has shape `shape + (n,)`.
      dtype: a float dtype.
      method: the factorization of `cov`: 'cholesky' (fastest), 'eigh' or 'svd'
        (both also work for singular covariances).
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Raises:
      ValueError: a bad `method`, or `mean` and `cov` of mismatched shapes.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), (3,)).shape
      (3, 2)
    """
    typed = single_key("multivariate_normal", key)
    if method not in _METHODS:
        raise ValueError(f"method must be one of {{'svd', 'eigh', 'cholesky'}}, got {method!r}")
    dtype = float_dtype("multivariate_normal", dtype)
    _u.check_arraylike("multivariate_normal", mean, cov)
    mean_shape, cov_shape = tuple(_u.shape(mean)), tuple(_u.shape(cov))
    if not mean_shape:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == 0")
    if len(cov_shape) < 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {len(cov_shape)}"
        )
    n = mean_shape[-1]
    if cov_shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {cov_shape}."
        )
    try:
        batch = tuple(np.broadcast_shapes(mean_shape[:-1], cov_shape[:-2]))
    except ValueError:
        raise ValueError(
            f"multivariate_normal: the batch shapes of mean {mean_shape[:-1]} and cov "
            f"{cov_shape[:-2]} do not broadcast together"
        ) from None
    if shape is None:
        shape = batch
    else:
        shape = check_shape("multivariate_normal", shape)
        check_broadcast_shapes(
            "multivariate_normal", shape, batch, what="mean and cov of batch shape"
        )
    return _multivariate_normal(typed, mean, cov, shape=shape, dtype=dtype, method=method)


@staged("shape", "dtype", "method")
def _multivariate_normal(
    typed: Any, mean: Any, cov: Any, *, shape: tuple, dtype: np.dtype, method: str
) -> Any:
    mean = param("multivariate_normal", mean, dtype)
    cov = param("multivariate_normal", cov, dtype)
    n = _u.shape(mean)[-1]
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = _scale_columns(u, lax.sqrt(s))
    elif method == "eigh":
        v, w = linalg.eigh(cov)
        factor = _scale_columns(v, lax.sqrt(w))
    else:
        factor = linalg.cholesky(cov)
    z = normal_draw(typed, (*shape, n), dtype)
    if len(_u.shape(factor)) == 2:
        # z @ factor^T: one contraction for all draws.
        mixed = lax.dot_general(z, factor, (((len(shape),), (1,)), ((), ())))
    else:
        factor = _u.broadcast_to(factor, (*shape, n, n))
        nb = len(shape)
        batch_dims = tuple(range(nb))
        mixed = lax.dot_general(factor, z, (((nb + 1,), (nb,)), (batch_dims, batch_dims)))
    return lax.add(_u.broadcast_to(mean, (*shape, n)), mixed)


@_os.replicated_inside
def orthogonal(
    key: Any,
    n: int,
    shape: Shape = (),
    dtype: Any = None,
    m: int | None = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """Haar-random matrices with orthonormal columns (or rows).

    Args:
      key: a single PRNG key (typed or raw).
      n: the number of rows.
      shape: the batch shape; the result has shape `shape + (n, m)`.
      dtype: a float dtype.
      m: the number of columns (default `n`: square orthogonal matrices). With
        `m > n` the rows are orthonormal, else the columns.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> q = random.orthogonal(random.PRNGKey(0), 3)
      >>> bool(np.allclose(np.asarray(q).T @ np.asarray(q), np.eye(3), atol=1e-5))
      True
    """
    typed = single_key("orthogonal", key)
    n = operator.index(n)
    m_ = n if m is None else operator.index(m)
    if n < 0 or m_ < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    shape = check_shape("orthogonal", shape)
    dtype = float_dtype("orthogonal", dtype)
    return _orthogonal(typed, n=n, m=m_, shape=shape, dtype=dtype)


@staged("n", "m", "shape", "dtype")
def _orthogonal(typed: Any, *, n: int, m: int, shape: tuple, dtype: np.dtype) -> Any:
    rows, cols = max(n, m), min(n, m)
    z = normal_draw(typed, (*shape, rows, cols), dtype)
    q, r = linalg.qr(z, full_matrices=False)
    q = _scale_columns(q, lax.sign(_diagonal(r)))
    if n < m:
        nd = len(shape) + 2
        q = lax.transpose(q, (*range(nd - 2), nd - 1, nd - 2))
    return q


@_os.replicated_inside
def ball(
    key: Any, d: int, p: Any = 2, shape: Shape = (), dtype: Any = None, *, out_sharding: Any = None
) -> Any:
    """Points drawn uniformly from the unit `p`-norm ball in `d` dimensions.

    Args:
      key: a single PRNG key (typed or raw).
      d: the dimension.
      p: the norm's exponent (> 0).
      shape: the batch shape; the result has shape `shape + (d,)`.
      dtype: a float dtype.
      out_sharding: the result's sharding (explicit mode): drawn as without it,
        then resharded, so the values are the same.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import random
      >>> x = random.ball(random.PRNGKey(0), 3, shape=(4,))
      >>> bool((np.linalg.norm(np.asarray(x), axis=-1) <= 1).all())
      True
    """
    typed = single_key("ball", key)
    d = operator.index(d)
    shape = check_shape("ball", shape)
    dtype = float_dtype("ball", dtype)
    _u.check_arraylike("ball", p)
    return _ball(typed, p, d=d, shape=shape, dtype=dtype)


@staged("d", "shape", "dtype")
def _ball(typed: Any, p: Any, *, d: int, shape: tuple, dtype: np.dtype) -> Any:
    key_g, key_e = _prng.split_keys(typed, 2)
    g = generalized_normal_draw(key_g, p, (*shape, d), dtype)
    e = exponential_draw(key_e, shape, dtype)
    # An integer p stays an integer exponent (XLA's power of a float by an int).
    exponent = p if np.issubdtype(_u.dtype(p), np.integer) else param("ball", p, dtype)
    total = lax.add(lax.reduce_sum(lax.pow(lax.abs(g), exponent), (len(shape),)), e)
    radius = lax.pow(total, inverse_param(p, dtype))
    return lax.div(g, lax.broadcast_in_dim(radius, (*shape, 1), tuple(range(len(shape)))))
