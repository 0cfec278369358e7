"""The multivariate normal distribution `N(mean, cov)`, as `scipy.stats.multivariate_normal`.

The last axis of `x` and `mean` holds the `n` coordinates and `cov` is an
`n x n` matrix (or a batch of them); leading axes broadcast. The density is
evaluated through the Cholesky factor `L` of `cov`: with `L y = x - mean`,
`logpdf = -|y|^2 / 2 - sum(log(diag(L))) - n log(2 pi) / 2`. A scalar `mean`
is the univariate case, and a scalar `cov` means `cov * I`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import multivariate_normal
  >>> multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))
  Array(-1.837877, dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.numpy import _util as _u

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def logpdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike, allow_singular: None = None) -> Any:
    """Log of the probability density function.

    Args:
      x: points, coordinates along the last axis.
      mean: the mean, of shape `(..., n)` (or a scalar: the univariate case).
      cov: the covariance, of shape `(..., n, n)` (positive definite), or a scalar
        (`cov * I`).
      allow_singular: not supported (must be None), as in JAX.

    Returns:
      The log-densities, of the broadcast batch shape of `x`, `mean` and `cov`.

    Raises:
      NotImplementedError: `allow_singular` is given.
      ValueError: the shapes of `x`, `mean` and `cov` do not fit together.
    """
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf does not support allow_singular.")
    _u.check_arraylike("multivariate_normal.logpdf", x, mean, cov)
    x, mean, cov = (jnp.asarray(v) for v in _u.promote_dtypes_inexact(x, mean, cov))
    if mean.ndim == 0:
        y = x - mean
        return -0.5 * y * y / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(
            f"multivariate_normal.logpdf: x must have {n} coordinates along its last axis "
            f"to match mean of shape {mean.shape}, got shape {x.shape}."
        )
    y = x - mean
    if cov.ndim == 0:
        return -0.5 * jnp.sum(y * y, axis=-1) / cov - 0.5 * n * (_LOG_2PI + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal.logpdf: cov must have shape (..., {n}, {n}) to match mean "
            f"of shape {mean.shape}, got shape {cov.shape}."
        )
    batch = jnp.broadcast_shapes(y.shape[:-1], cov.shape[:-2])
    y = jnp.broadcast_to(y, (*batch, n))
    chol = jnp.broadcast_to(jnp.linalg.cholesky(cov), (*batch, n, n))
    z = lax_linalg.triangular_solve(chol, y[..., None], left_side=True, lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - log_det - 0.5 * n * _LOG_2PI


def pdf(x: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> Any:
    """The probability density function, `exp(logpdf(x, mean, cov))`."""
    return jnp.exp(logpdf(x, mean, cov))
