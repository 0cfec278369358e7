"""The standard right-skewed Gumbel functions of `z`, shared by `gumbel_r` and `gumbel_l`.

`gumbel_l` at `z` is `gumbel_r` at `-z` with the distribution and survival
functions exchanged.
"""

from __future__ import annotations

from typing import Any

from polyjax_numpy import numpy as jnp


def logpdf(z: Any) -> Any:
    return -z - jnp.exp(-z)


def cdf(z: Any) -> Any:
    return jnp.exp(-jnp.exp(-z))


def logcdf(z: Any) -> Any:
    return -jnp.exp(-z)


def sf(z: Any) -> Any:
    return -jnp.expm1(-jnp.exp(-z))


def logsf(z: Any) -> Any:
    return jnp.log(sf(z))


def isf(q: Any) -> Any:
    """The `z` with `sf(z) = q`."""
    return -jnp.log(-jnp.log1p(-q))


def ppf(q: Any) -> Any:
    """The `z` with `cdf(z) = q`."""
    return -jnp.log(-jnp.log(q))
