"""The wrapped Cauchy distribution on `[0, 2 pi]` with shape `c`, as `scipy.stats.wrapcauchy`.

Density `(1 - c^2) / (2 pi (1 + c^2 - 2 c cos(x)))` for `0 < c < 1`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import wrapcauchy
  >>> wrapcauchy.pdf(np.array([-1.0, 1.0]), 0.5)
  Array([0.        , 0.16819303], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import inexact_args, neg_inf_outside, where_invalid_nan

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, c: ArrayLike) -> Any:
    """Log of the probability density function (`-inf` outside `[0, 2 pi]`).

    Args:
      x: the angle.
      c: the shape, in `(0, 1)` (NaN otherwise).
    """
    x, c = inexact_args("wrapcauchy.logpdf", x, c)
    value = jnp.log1p(-c * c) - math.log(2 * math.pi) - jnp.log1p(c * c - 2 * c * jnp.cos(x))
    value = neg_inf_outside((x >= 0) & (x <= 2 * math.pi), value)
    return where_invalid_nan((c <= 0) | (c >= 1), value)


def pdf(x: ArrayLike, c: ArrayLike) -> Any:
    """The probability density function, `exp(logpdf(x, c))`."""
    return jnp.exp(logpdf(x, c))
