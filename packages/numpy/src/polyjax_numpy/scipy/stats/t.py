"""Student's t distribution with `df` degrees of freedom, as `scipy.stats.t`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import t
  >>> t.logpdf(np.array([0.0, 1.0]), 3.0)
  Array([-1.0008892, -1.5762534], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function.

    Args:
      x: where to evaluate.
      df: the degrees of freedom (positive).
      loc: the centre.
      scale: the scale.

    Returns:
      `log Gamma((df + 1) / 2) - log Gamma(df / 2) - log(pi df) / 2 - log(scale)
      - (df + 1) / 2 log(1 + z^2 / df)`.
    """
    z, scale, df = standardize("t.logpdf", x, loc, scale, df)
    half = 0.5 * (df + 1)
    normalizer = lax.lgamma(half) - lax.lgamma(0.5 * df) - 0.5 * jnp.log(math.pi * df)
    return normalizer - jnp.log(scale) - half * jnp.log1p(z * z / df)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, df, loc, scale))`."""
    return jnp.exp(logpdf(x, df, loc, scale))
