"""`polyjax.experimental.jet.jet`: Taylor-series propagation through a function.

Given the primal point `primals` and, for each argument, the derivatives
``x_1, ..., x_K`` of a curve through it (``x(t) = x_0 + sum_k x_k t^k / k!``),
`jet` returns ``f(x_0)`` and the derivatives ``y_1, ..., y_K`` of ``f(x(t))``
at ``t = 0``. With ``factorial_scaled=False`` the series (in and out) are plain
Taylor coefficients (``x(t) = sum_k x_k t^k``).

polyjax computes the `k`-th derivative by nesting `k` forward-mode
derivatives of the scalar-parameter function ``t -> f(x(t))``: exact for any
function `jvp` handles, and cheap for the few terms jets are used with (the
work grows as ``2^K``, where JAX's Taylor-mode rules grow as ``K^2``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import polyjax
import polyjax.numpy as jnp
from polyjax import tree_util

__all__ = ["jet", "jet2"]


def jet(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    series: Sequence[Sequence[Any]],
    factorial_scaled: bool = True,
    **_: Any,
) -> tuple[Any, Any]:
    """Propagates truncated Taylor series through `fun`.

    Args:
      fun: a function of `len(primals)` array (pytree) arguments.
      primals: the point.
      series: for each primal, its list of `K` terms (each shaped like the primal).
      factorial_scaled: whether the terms are derivatives (True) or Taylor coefficients.

    Returns:
      ``(fun(*primals), terms)``: `terms` has `fun`'s output structure with a list of
      `K` terms at each leaf (a plain list for an array output).

    Raises:
      ValueError: the argument counts or the series lengths do not match.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.experimental.jet import jet
      >>> y, terms = jet(jnp.exp, (jnp.float32(0),), ((jnp.float32(1), jnp.float32(0)),))
      >>> float(y), [float(t) for t in terms]
      (1.0, [1.0, 1.0])
    """
    primals, series = tuple(primals), tuple(series)
    if len(primals) != len(series):
        raise ValueError(f"jet: {len(primals)} primals but series for {len(series)} arguments.")
    lengths = {len(s) for s in series}
    if len(lengths) > 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments")
    order = lengths.pop() if lengths else 0
    primals = tree_util.tree_map(jnp.asarray, primals)
    dtype = jnp.result_type(*tree_util.tree_leaves(primals), float)

    def coefficient(k: int) -> float:
        return 1 / math.factorial(k) if factorial_scaled else 1.0

    def curve(t: Any) -> Any:
        def point(p, terms):
            return tree_util.tree_map(
                lambda x0, *xs: (
                    x0 + sum(coefficient(k + 1) * x * t ** (k + 1) for k, x in enumerate(xs))
                ),
                p,
                *terms,
            )

        return fun(*[point(p, s) for p, s in zip(primals, series)])

    def derivative(g: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda t: polyjax.jvp(g, (t,), (jnp.ones_like(t),))[1]

    t0 = jnp.zeros((), dtype)
    primal_out = fun(*primals)
    terms, g = [], curve
    for k in range(1, order + 1):
        g = derivative(g)
        term = g(t0)
        # Back to Taylor coefficients where asked: y_k / k!.
        terms.append(
            term
            if factorial_scaled
            else tree_util.tree_map(lambda y, k=k: y / math.factorial(k), term)
        )
    leaves, tree = tree_util.tree_flatten(primal_out)
    per_leaf = [[tree_util.tree_leaves(t)[i] for t in terms] for i in range(len(leaves))]
    if tree_util.treedef_is_leaf(tree):
        return primal_out, per_leaf[0] if leaves else []
    return primal_out, tree_util.tree_unflatten(tree, per_leaf)


def jet2(
    fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]], **_: Any
) -> tuple[Any, Any]:
    """`jet` with plain Taylor coefficients in and out (``factorial_scaled=False``).

    Example:
      >>> import polyjax.numpy as jnp
      >>> y, terms = jet2(jnp.exp, (jnp.float32(0),), ((jnp.float32(1), jnp.float32(0)),))
      >>> float(y), [float(t) for t in terms]
      (1.0, [1.0, 0.5])
    """
    return jet(fun, primals, series, factorial_scaled=False)
