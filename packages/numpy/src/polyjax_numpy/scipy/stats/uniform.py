"""The uniform distribution on `[loc, loc + scale]`, as `scipy.stats.uniform`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import uniform
  >>> uniform.pdf(np.array([-0.5, 0.5, 1.5]), 0.0, 1.0)
  Array([0., 1., 0.], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import (
    inexact_args,
    neg_inf_outside,
    standardize,
    where_invalid_nan,
)

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function: `-log(scale)` on the support, else `-inf`.

    Args:
      x: where to evaluate.
      loc: the lower end of the support.
      scale: its width.
    """
    z, scale = standardize("uniform.logpdf", x, loc, scale)
    return neg_inf_outside((z >= 0) & (z <= 1), -jnp.log(scale))


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, loc, scale))`."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The cumulative distribution function, `(x - loc) / scale` clipped to `[0, 1]`."""
    z, _ = standardize("uniform.cdf", x, loc, scale)
    return jnp.clip(z, 0, 1)


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The percent point function, `loc + scale * q` (NaN outside `[0, 1]`)."""
    q, loc, scale = inexact_args("uniform.ppf", q, loc, scale)
    return where_invalid_nan((q < 0) | (q > 1), loc + scale * q)
