"""The confluent (`hyp1f1`) and Gauss (`hyp2f1`) hypergeometric functions.

Both are sums of their defining series `sum_k (a)_k (b)_k / (c)_k x^k / k!`
over a fixed number of terms (a `fori_loop`, so the function traces once),
after transformations that keep the series short and free of cancellation:

- `hyp1f1(a, b, x)` for `x < 0` uses Kummer's `M(a, b, x) = exp(x) M(b - a, b, -x)`;
  the series then has positive terms (for `b > a > 0`) and 400 terms cover `x`
  up to about 150 (larger `x` overflows float32 anyway from about 88).
- `hyp2f1(a, b, c, x)` for `x < 0` uses Pfaff's
  `F(a, b; c; x) = (1 - x)^(-a) F(a, c - b; c; x / (x - 1))`, which maps it to
  `[0, 1)`; on `(0.75, 1)` the connection to `1 - x`
  `F = G1 F(a, b; a + b - c + 1; 1 - x)
  + (1 - x)^(c - a - b) G2 F(c - a, c - b; c - a - b + 1; 1 - x)`
  (`G1 = G(c) G(c - a - b) / (G(c - a) G(c - b))`, `G2 = G(c) G(a + b - c) / (G(a) G(b))`)
  applies where `c - a - b` is not an integer; elsewhere the series is summed
  directly (600 terms: accurate to about `x = 0.95`). `x = 1` gives Gauss's sum
  where `c > a + b`, `inf` otherwise.

Derivatives are those of the summed series (exact for the truncated sum).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args
from polyjax_numpy.scipy.special._gamma import gamma, gammaln


def _series(tops: tuple, bottom: Any, x: Any, terms: int) -> Any:
    """`sum_k prod(top)_k / (bottom)_k x^k / k!` over `terms` terms."""

    def body(k, carry):
        term, total = carry
        kf = k.astype(x.dtype)
        ratio = x / ((bottom + kf) * (kf + 1))
        for top in tops:
            ratio = ratio * (top + kf)
        term = term * ratio
        return term, total + term

    _, total = lax.fori_loop(0, terms, body, (jnp.ones_like(x), jnp.ones_like(x)))
    return total


def hyp1f1(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """The confluent hypergeometric function `1F1(a; b; x)` (Kummer's `M`), elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.hyp1f1(1.0, 2.0, np.array([-1.0, 2.0]))
      Array([0.6321205, 3.1945283], dtype=float32)
    """
    a, b, x = inexact_args("hyp1f1", a, b, x)
    return _hyp1f1(a, b, x)


@jit
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    negative = x < 0
    top = jnp.where(negative, b - a, a)
    value = _series((top,), b, jnp.abs(x), 400)
    return jnp.where(negative, jnp.exp(x) * value, value)


def _is_integer(x: Any) -> Any:
    return x == jnp.round(x)


def _hyp2f1_unit(a: Any, b: Any, c: Any, x: Any) -> Any:
    """`F(a, b; c; x)` for `0 <= x < 1`."""
    s = c - a - b
    near_one = (x > 0.75) & ~_is_integer(s)
    xs = jnp.where(near_one, jnp.zeros_like(x), x)
    direct = _series((a, b), c, xs, 600)
    y = jnp.where(near_one, 1 - x, jnp.zeros_like(x))
    s_safe = jnp.where(near_one, s, jnp.full_like(s, 0.5))
    g1 = gamma(c) * gamma(s_safe) / (gamma(c - a) * gamma(c - b))
    g2 = gamma(c) * gamma(-s_safe) / (gamma(a) * gamma(b))
    f1 = _series((a, b), 1 - s_safe, y, 200)
    f2 = _series((c - a, c - b), 1 + s_safe, y, 200)
    connected = g1 * f1 + y**s_safe * g2 * f2
    return jnp.where(near_one, connected, direct)


def hyp2f1(a: ArrayLike, b: ArrayLike, c: ArrayLike, x: ArrayLike) -> Any:
    """The Gauss hypergeometric function `2F1(a, b; c; x)` for real `x <= 1`, elementwise.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.hyp2f1(1.0, 2.0, 3.0, np.array([-2.0, 0.5]))
      Array([0.4506938, 1.5451776], dtype=float32)
    """
    a, b, c, x = inexact_args("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)


@jit
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    negative = x < 0
    xn = jnp.where(negative, x, jnp.zeros_like(x))
    z = jnp.where(negative, xn / (xn - 1), jnp.where(x < 1, x, jnp.zeros_like(x)))
    b_eff = jnp.where(negative, c - b, b)
    value = _hyp2f1_unit(a, b_eff, c, z)
    value = jnp.where(negative, (1 - xn) ** (-a) * value, value)
    # Gauss's sum at x = 1, finite where c > a + b.
    s = c - a - b
    s_pos = jnp.where(s > 0, s, jnp.ones_like(s))
    at_one = jnp.exp(gammaln(c) + gammaln(s_pos) - gammaln(c - a) - gammaln(c - b))
    at_one = jnp.where(s > 0, at_one, jnp.full_like(s, np.inf))
    value = jnp.where(x == 1, at_one, value)
    return jnp.where(x > 1, jnp.full_like(x, np.nan), value)
