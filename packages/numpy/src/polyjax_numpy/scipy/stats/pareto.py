"""The Pareto distribution with shape `b`, as `scipy.stats.pareto`.

With `z = (x - loc) / scale`: density `b / (scale z^(b+1))` for `z >= 1`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import pareto
  >>> pareto.pdf(np.array([0.5, 1.0, 2.0]), 2.0)
  Array([0.  , 2.  , 0.25], dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import neg_inf_outside, standardize

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """Log of the probability density function, `log(b / scale) - (b + 1) log(z)` for `z >= 1`.

    Args:
      x: where to evaluate.
      b: the shape (positive).
      loc: shifts the support `[loc + scale, inf)`.
      scale: the scale.
    """
    z, scale, b = standardize("pareto.logpdf", x, loc, scale, b)
    inside = z >= 1
    safe = jnp.where(inside, z, jnp.ones_like(z))
    return neg_inf_outside(inside, jnp.log(b) - jnp.log(scale) - (b + 1) * jnp.log(safe))


def pdf(x: ArrayLike, b: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Any:
    """The probability density function, `exp(logpdf(x, b, loc, scale))`."""
    return jnp.exp(logpdf(x, b, loc, scale))
