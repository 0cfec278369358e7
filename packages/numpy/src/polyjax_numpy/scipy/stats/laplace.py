"""The Laplace (double exponential) distribution, as `scipy.stats.laplace`.

With `z = (x - loc) / scale`: density `exp(-|z|) / (2 scale)`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import laplace
  >>> laplace.cdf(np.array([-1.0, 0.0, 1.0]))
  Array([0.18393973, 0.5       , 0.8160603 ], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import standardize

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function, `-|z| - log(2 scale)`.

    Args:
      x: where to evaluate.
      loc: the centre (mean and median).
      scale: the scale (the variance is `2 scale^2`).
    """
    z, scale = standardize("laplace.logpdf", x, loc, scale)
    return -jnp.abs(z) - jnp.log(scale) - math.log(2.0)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function: `exp(z) / 2` below `loc`, `1 - exp(-z) / 2` above."""
    z, _ = standardize("laplace.cdf", x, loc, scale)
    half_tail = 0.5 * jnp.exp(-jnp.abs(z))
    return jnp.where(z < 0, half_tail, 1 - half_tail)
