"""`x log y` forms that are 0 where `x` is: `xlogy`, `xlog1py`, and the entropies built on them.

The convention `0 log 0 = 0` makes the textbook formula produce NaN (`0 *
-inf`) in the value and, in reverse mode, in the derivative of the branch
that is masked out. `xlogy` and `xlog1py` carry custom JVPs; the entropies
feed their logarithms operands made safe where the result is a constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy.special._common import inexact_args


def _x_log(log_fn: Any, shift: float) -> Any:
    """`x * log_fn(y)`, 0 where `x == 0`, for `log_fn(y) = log(y + shift)`.

    Its derivatives are `log_fn(y) dx + x / (y + shift) dy`; the rule keeps
    the masked `0 * log(0)` of the value out of them.
    """

    @custom_jvp
    def fn(x: Any, y: Any) -> Any:
        return jnp.where(x == 0, jnp.zeros_like(x), x * log_fn(y))

    @fn.defjvp
    def fn_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
        (x, y), (tx, ty) = primals, tangents
        # The primals may be Python scalars (`grad(xlogy)(0.0, 0.0)`): as arrays, their
        # arithmetic is polyjax's, not Python's (which raises ZeroDivisionError).
        x, y = jnp.asarray(x), jnp.asarray(y)
        # x / (y + shift), 0 at the one point 0 / 0 only: masking all of x == 0 would
        # also zero its derivative in x there (the second derivative of x log1p(x) at 0
        # came out 1, not 2).
        denominator = y + shift
        undefined = (x == 0) & (denominator == 0)
        dy = x / jnp.where(undefined, jnp.ones_like(denominator), denominator)
        return fn(x, y), log_fn(y) * tx + dy * ty

    return fn


_xlogy = _x_log(jnp.log, 0.0)
_xlog1py = _x_log(jnp.log1p, 1.0)


def xlogy(x: ArrayLike, y: ArrayLike) -> Any:
    """`x * log(y)`, elementwise, with the convention `0 * log(y) = 0` (also for `y = 0`).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e]))
      Array([0., 2.], dtype=float32)
    """
    x, y = inexact_args("xlogy", x, y)
    return _xlogy(x, y)


def xlog1py(x: ArrayLike, y: ArrayLike) -> Any:
    """`x * log1p(y)`, elementwise, with the convention `0 * log1p(y) = 0` (also for `y = -1`).

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.xlog1py(np.array([0.0, 2.0]), np.array([-1.0, np.e - 1]))
      Array([0., 2.], dtype=float32)
    """
    x, y = inexact_args("xlog1py", x, y)
    return _xlog1py(x, y)


def entr(x: ArrayLike) -> Any:
    """The elementwise entropy `-x log(x)`: 0 at 0, `-inf` for negative `x`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.entr(np.array([0.0, 0.5, -1.0]))
      Array([0.       , 0.3465736,      -inf], dtype=float32)
    """
    (x,) = inexact_args("entr", x)
    positive = x > 0
    safe = jnp.where(positive, x, jnp.ones_like(x))
    out = jnp.where(positive, -safe * jnp.log(safe), jnp.zeros_like(x))
    out = jnp.where(x < 0, jnp.full_like(x, -np.inf), out)
    return jnp.where(jnp.isnan(x), x, out)


def _divergence(name: str, p: Any, q: Any, kl: bool) -> Any:
    p, q = inexact_args(name, p, q)
    both = (p > 0) & (q > 0)
    p_s = jnp.where(both, p, jnp.ones_like(p))
    q_s = jnp.where(both, q, jnp.ones_like(q))
    inside = p_s * jnp.log(p_s / q_s)
    at_zero = jnp.zeros_like(p)
    if kl:
        inside = inside - p_s + q_s
        at_zero = q
    out = jnp.where(both, inside, jnp.where((p == 0) & (q >= 0), at_zero, np.inf))
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), jnp.full_like(p, np.nan), out)


def rel_entr(p: ArrayLike, q: ArrayLike) -> Any:
    """The elementwise relative entropy `p log(p / q)`.

    0 where `p == 0` and `q >= 0`; `inf` where either is negative or `q == 0 < p`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.rel_entr(np.array([1.0, 0.0]), np.array([2.0, 1.0]))
      Array([-0.6931472,  0.       ], dtype=float32)
    """
    return _divergence("rel_entr", p, q, kl=False)


def kl_div(p: ArrayLike, q: ArrayLike) -> Any:
    """The elementwise Kullback-Leibler divergence term `p log(p / q) - p + q`.

    `q` where `p == 0` and `q >= 0`; `inf` where either is negative or `q == 0 < p`.

    Example:
      >>> from polyjax_numpy.scipy import special
      >>> special.kl_div(np.array([1.0, 0.0]), np.array([2.0, 1.0]))
      Array([0.30685282, 1.        ], dtype=float32)
    """
    return _divergence("kl_div", p, q, kl=True)
