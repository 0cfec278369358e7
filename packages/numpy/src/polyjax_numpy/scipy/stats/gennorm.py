"""The generalized normal distribution with shape `beta`, as `scipy.stats.gennorm`.

Density `beta / (2 Gamma(1 / beta)) exp(-|x|^beta)`: `beta = 2` is a normal
distribution (variance 1/2), `beta = 1` the Laplace distribution. As in JAX,
there are no `loc` and `scale` arguments.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import gennorm
  >>> gennorm.cdf(np.array([0.0, 1.0]), 1.0)
  Array([0.5       , 0.81606025], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special import gammainc
from polyjax_numpy.scipy.stats._common import inexact_args

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """Log of the probability density function, `log(beta / 2) - log Gamma(1 / beta) - |x|^beta`.

    Args:
      x: where to evaluate.
      beta: the shape (positive).
    """
    x, beta = inexact_args("gennorm.logpdf", x, beta)
    return jnp.log(beta) - math.log(2.0) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """The probability density function, `exp(logpdf(x, beta))`."""
    return jnp.exp(logpdf(x, beta))


def cdf(x: ArrayLike, beta: ArrayLike) -> Any:
    """The cumulative distribution function, `1/2 + sign(x) P(1 / beta, |x|^beta) / 2`."""
    x, beta = inexact_args("gennorm.cdf", x, beta)
    return 0.5 + 0.5 * jnp.sign(x) * gammainc(1 / beta, jnp.abs(x) ** beta)
