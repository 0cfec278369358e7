"""Operand handling shared by the distributions: promotion, location and scale, supports."""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args

__all__ = [
    "discrete_args",
    "inexact_args",
    "is_whole",
    "neg_inf_outside",
    "standardize",
    "where_invalid_nan",
]


def standardize(name: str, x: Any, loc: Any, scale: Any, *params: Any) -> list[Any]:
    """`[(x - loc) / scale, scale, *params]`, promoted to one inexact dtype and one shape."""
    x, loc, scale, *params = inexact_args(name, x, loc, scale, *params)
    return [(x - loc) / scale, scale, *params]


def neg_inf_outside(inside: Any, value: Any) -> Any:
    """`value` where `inside`, else `-inf` (a log-density outside the support)."""
    return jnp.where(inside, value, jnp.full_like(value, -np.inf))


def where_invalid_nan(invalid: Any, value: Any) -> Any:
    """`value`, with NaN where `invalid` (a parameter or probability out of range)."""
    return jnp.where(invalid, jnp.full_like(value, np.nan), value)


def discrete_args(name: str, k: Any, loc: Any, *params: Any) -> list[Any]:
    """`[k - loc, *params]` promoted and broadcast, for a distribution on the integers."""
    k, loc, *params = inexact_args(name, k, loc, *params)
    return [k - loc, *params]


def is_whole(k: Any) -> Any:
    """Whether each element of `k` is a whole number (the support of a discrete distribution)."""
    return k == jnp.floor(k)
