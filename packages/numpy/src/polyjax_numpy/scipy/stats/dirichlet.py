"""The Dirichlet distribution on the probability simplex, as `scipy.stats.dirichlet`.

`x` holds the `K` components along its first axis (or `K - 1` of them: the
last is then `1 - sum`); `alpha` is the vector of `K` concentrations.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import dirichlet
  >>> dirichlet.pdf(np.array([0.25, 0.75]), np.array([1.0, 1.0]))
  Array(0.99999905, dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.special import xlogy
from polyjax_numpy.scipy.stats._common import neg_inf_outside

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, alpha: ArrayLike) -> Any:
    """Log of the probability density function.

    `sum_i (alpha_i - 1) log(x_i) - sum_i log Gamma(alpha_i) + log Gamma(sum_i alpha_i)`.

    Args:
      x: points of the simplex, components along the first axis (`K` or `K - 1`).
      alpha: the `K` concentrations (a vector of positive numbers).

    Returns:
      The log-densities, of shape `x.shape[1:]` (`-inf` off the simplex: a
      negative component, or components that do not sum to 1).

    Raises:
      ValueError: `alpha` is not a vector, or `x`'s first axis is neither `K` nor `K - 1`.
    """
    _u.check_arraylike("dirichlet.logpdf", x, alpha)
    x, alpha = (jnp.asarray(v) for v in _u.promote_dtypes_inexact(x, alpha))
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be a vector, got shape {alpha.shape}.")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(
            f"dirichlet.logpdf: x must have {k} or {k - 1} components along its first axis "
            f"to match alpha of shape {alpha.shape}, got shape {x.shape}."
        )
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    alpha = jnp.reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    eps = float(jnp.finfo(x.dtype).eps)
    on_simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) <= max(1e-6, 8 * eps))
    log_norm = jnp.sum(lax.lgamma(alpha), axis=0) - lax.lgamma(jnp.sum(alpha, axis=0))
    value = jnp.sum(xlogy(alpha - 1, jnp.maximum(x, 0)), axis=0) - log_norm
    return neg_inf_outside(on_simplex, value)


def pdf(x: ArrayLike, alpha: ArrayLike) -> Any:
    """The probability density function, `exp(logpdf(x, alpha))`."""
    return jnp.exp(logpdf(x, alpha))
