"""The multinomial distribution of `n` trials over outcome probabilities `p`, as
`scipy.stats.multinomial`.

The outcomes are the last axis of `x` and `p`; the other axes broadcast.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import multinomial
  >>> multinomial.pmf(np.array([1, 1]), 2, np.array([0.5, 0.5]))
  Array(0.5000001, dtype=float32)
"""

from __future__ import annotations

from typing import Any

from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.scipy.special import xlogy
from polyjax_numpy.scipy.stats._common import is_whole, neg_inf_outside

__all__ = ["logpmf", "pmf"]


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """Log of the probability mass function, `log(n!) + sum_i (x_i log(p_i) - log(x_i!))`.

    Args:
      x: the counts of each outcome, along the last axis.
      n: the number of trials (broadcast against the other axes of `x`).
      p: the probability of each outcome, along the last axis.

    Returns:
      The log-probabilities, of the broadcast shape of `x` and `p` without their
      last axis (`-inf` where the counts are not whole, negative, or do not sum to `n`).
    """
    _u.check_arraylike("multinomial.logpmf", x, n, p)
    x, n, p = (jnp.asarray(v) for v in _u.promote_dtypes_inexact(x, n, p))
    if x.ndim == 0 or p.ndim == 0:
        raise ValueError(
            f"multinomial.logpmf: x and p need an axis of outcomes, got shapes {x.shape} "
            f"and {p.shape}."
        )
    total = jnp.sum(x, axis=-1)
    valid = jnp.all((x >= 0) & is_whole(x), axis=-1) & (total == n)
    terms = jnp.sum(xlogy(x, p) - lax.lgamma(jnp.maximum(x, 0) + 1), axis=-1)
    return neg_inf_outside(valid, lax.lgamma(n + 1) + terms)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Any:
    """The probability mass function, `exp(logpmf(x, n, p))`."""
    return jnp.exp(logpmf(x, n, p))
