"""The Hurwitz zeta function and the Bernoulli numbers."""

from __future__ import annotations

import math
import operator
from fractions import Fraction
from typing import Any

import numpy as np

from polyjax_core.tracing import concrete_or_error
from polyjax_core.typing import ArrayLike
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def zeta(x: ArrayLike, q: ArrayLike | None = None) -> Any:
    """The Hurwitz zeta function `sum_{n >= 0} (n + q)^-x` (Riemann's when `q` is None).

    Defined for `x > 1`; NaN where the series diverges. Differentiable in `q`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.zeta(np.array([2.0]))  # pi^2 / 6
      Array([1.644934], dtype=float32)
    """
    if q is None:
        (x,) = inexact_args("zeta", x)
        q = jnp.ones_like(x)
    else:
        x, q = inexact_args("zeta", x, q)
    return lax.zeta(x, q)


def _bernoulli_numbers(n: int) -> list[Fraction]:
    """B_0 ... B_n exactly (with B_1 = -1/2), by the recurrence sum_k C(m+1, k) B_k = 0."""
    numbers: list[Fraction] = []
    for m in range(n + 1):
        if m == 0:
            numbers.append(Fraction(1))
            continue
        total = Fraction(0)
        binom = 1  # C(m + 1, k)
        for k in range(m):
            total += binom * numbers[k]
            binom = binom * (m + 1 - k) // (k + 1)
        numbers.append(-total / (m + 1))
    return numbers


def _to_float(b: Fraction) -> float:
    try:
        return float(b)
    except OverflowError:  # |B_n| passes the float64 range near n = 260
        return math.inf if b > 0 else -math.inf


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers `B_0, ..., B_n` (with `B_1 = -1/2`, as SciPy).

    Args:
      n: a concrete non-negative integer.

    Returns:
      A float array of shape `(n + 1,)`.

    Raises:
      TypeError: `n` is not an integer.
      ValueError: `n` is negative.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.bernoulli(4)
      Array([ 1.        , -0.5       ,  0.16666667,  0.        , -0.03333334],      dtype=float32)
    """
    n = concrete_or_error(operator.index, n, "bernoulli: n must be a concrete integer.")
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}.")
    dtype = jnp.result_type(float)
    values = np.array([_to_float(b) for b in _bernoulli_numbers(n)])
    # Values beyond the float range become inf (without NumPy's overflow warning).
    values[np.abs(values) > np.finfo(dtype).max] *= np.inf
    return jnp.asarray(values.astype(dtype))
