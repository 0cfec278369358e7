"""The von Mises distribution on the circle with concentration `kappa`, as `scipy.stats.vonmises`.

Density `exp(kappa cos(x)) / (2 pi I0(kappa))`, periodic in `x` (as SciPy
evaluates it). The normalizer uses the scaled Bessel function `i0e`, so large
concentrations do not overflow.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import vonmises
  >>> vonmises.pdf(np.array([0.0, np.pi]), 1.0)
  Array([0.34171045, 0.04624548], dtype=float32)
"""

from __future__ import annotations

import math
from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.stats._common import inexact_args, where_invalid_nan

__all__ = ["logpdf", "pdf"]


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Any:
    """Log of the probability density function, `kappa (cos(x) - 1) - log(2 pi i0e(kappa))`.

    Args:
      x: the angle.
      kappa: the concentration (positive; NaN otherwise).
    """
    x, kappa = inexact_args("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * lax.bessel_i0e(kappa))
    return where_invalid_nan(kappa <= 0, value)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Any:
    """The probability density function, `exp(logpdf(x, kappa))`."""
    return jnp.exp(logpdf(x, kappa))
