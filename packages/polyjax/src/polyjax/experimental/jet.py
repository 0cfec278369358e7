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

Taylor rules of one's own go in `jet_rules` (`deflinear`, `defzero`,
`def_deriv`, `def_comp` write common ones). Once a rule is registered, `jet`
evaluates the function's jaxpr equation by equation: a primitive with a rule
propagates its series by the rule, any other by the nested derivatives of
that one equation. A rule is called as ``rule(primals_in, series_in,
**params)`` with each input's `K` terms (zeros written out) and returns
``(primal_out, series_out)`` (lists of them for a primitive with several
results), all in the derivative (factorial-scaled) convention.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import polyjax
import polyjax.numpy as jnp
from polyjax import tree_util
from polyjax.extend.core import Literal, Primitive

__all__ = [
    "def_comp",
    "def_deriv",
    "deflinear",
    "defzero",
    "deriv_prop",
    "fact",
    "jet",
    "jet2",
    "jet_rules",
    "linear_prop",
    "zero_prop",
]

#: Taylor rules by primitive: ``rule(primals_in, series_in, **params) ->
#: (primal_out, series_out)``, series in the derivative convention.
jet_rules: dict[Primitive, Callable[..., Any]] = {}


def fact(n: int) -> int:
    """`n!`, the factor between a series' derivative terms and its Taylor coefficients."""
    return math.factorial(n)


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
    if not factorial_scaled:  # Taylor coefficients -> derivatives
        series = tuple(
            [tree_util.tree_map(lambda x, k=k: x * fact(k), term) for k, term in enumerate(s, 1)]
            for s in series
        )
    if jet_rules:
        primal_out, per_leaf = _jet_by_equations(fun, primals, series, order)
    else:
        primal_out, per_leaf = _nested_jet(fun, primals, series, order)
    if not factorial_scaled:  # derivatives -> Taylor coefficients
        per_leaf = [[t / fact(k) for k, t in enumerate(terms, 1)] for terms in per_leaf]
    leaves, tree = tree_util.tree_flatten(primal_out)
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


# ---------------------------------------------------------------------------
# Nested forward-mode derivatives of the whole function


def _nested_jet(
    fun: Callable[..., Any], primals: tuple, series: tuple, order: int
) -> tuple[Any, list[list[Any]]]:
    """`fun(*primals)` and, per output leaf, its `order` derivative terms along the curve."""
    dtype = jnp.result_type(*tree_util.tree_leaves(primals), float)

    def curve(t: Any) -> Any:
        def moved(x0: Any, *xs: Any) -> Any:
            # Integer inputs (indices) have no derivatives: they stay where they are.
            if not jnp.issubdtype(jnp.result_type(x0), jnp.inexact):
                return x0
            return x0 + sum(x * t ** (k + 1) / fact(k + 1) for k, x in enumerate(xs))

        return fun(*[tree_util.tree_map(moved, p, *s) for p, s in zip(primals, series)])

    def derivative(g: Callable[[Any], Any]) -> Callable[[Any], Any]:
        return lambda t: polyjax.jvp(g, (t,), (jnp.ones_like(t),))[1]

    t0 = jnp.zeros((), dtype)
    primal_out = fun(*primals)
    terms, g = [], curve
    for _ in range(order):
        g = derivative(g)
        terms.append(tree_util.tree_leaves(g(t0)))
    n = len(tree_util.tree_leaves(primal_out))
    return primal_out, [[t[i] for t in terms] for i in range(n)]


# ---------------------------------------------------------------------------
# Equation by equation, with the registered rules


def _jet_by_equations(
    fun: Callable[..., Any], primals: tuple, series: tuple, order: int
) -> tuple[Any, list[list[Any]]]:
    leaves, in_tree = tree_util.tree_flatten(primals)
    leaf_series: list[list[Any]] = [[] for _ in leaves]
    offset = 0
    for p, s in zip(primals, series):
        n = len(tree_util.tree_leaves(p))
        for term in s:
            for i, t in enumerate(tree_util.tree_leaves(term)):
                leaf_series[offset + i].append(jnp.asarray(t))
        offset += n
    out_tree_box: list[Any] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out_flat, out_tree = tree_util.tree_flatten(fun(*tree_util.tree_unflatten(in_tree, xs)))
        out_tree_box.append(out_tree)
        return out_flat

    closed = polyjax.make_jaxpr(flat_fun)(*leaves)
    env: dict[Any, tuple[Any, list[Any] | None]] = {}
    for v, c in zip(closed.jaxpr.constvars, closed.consts):
        env[v] = (c, None)
    for v, x, s in zip(closed.jaxpr.invars, leaves, leaf_series):
        env[v] = (x, s)

    def read(v: Any) -> tuple[Any, list[Any] | None]:
        return (v.val, None) if isinstance(v, Literal) else env[v]

    for eqn in closed.jaxpr.eqns:
        ins = [read(v) for v in eqn.invars]
        outs = _propagate(
            eqn.primitive, [x for x, _ in ins], [s for _, s in ins], order, eqn.params
        )
        for v, out in zip(eqn.outvars, outs):
            env[v] = out
    results = [read(v) for v in closed.jaxpr.outvars]
    primal_out = tree_util.tree_unflatten(out_tree_box[0], [x for x, _ in results])
    per_leaf = [s if s is not None else [jnp.zeros_like(x)] * order for x, s in results]
    return primal_out, per_leaf


def _propagate(
    prim: Primitive, primals: list, series: list, order: int, params: dict
) -> list[tuple[Any, list[Any] | None]]:
    """(primal, terms or None for a zero series) of each result of one equation."""
    if all(s is None for s in series):
        out = prim.bind(*primals, **params)
        return [(o, None) for o in (out if prim.multiple_results else [out])]
    if prim in jet_rules:
        full = [
            s if s is not None else [jnp.zeros_like(x)] * order for x, s in zip(primals, series)
        ]
        out, out_series = jet_rules[prim](primals, full, **params)
        if not prim.multiple_results:
            out, out_series = [out], [out_series]
        return [(o, list(s)) for o, s in zip(out, out_series)]
    # No rule: the nested derivatives of this one equation, perturbing only the
    # inputs with a series (the others, integers among them, stay constants).
    moving = [i for i, s in enumerate(series) if s is not None]

    def one(*xs: Any) -> Any:
        args = list(primals)
        for i, x in zip(moving, xs):
            args[i] = x
        return prim.bind(*args, **params)

    out, per_leaf = _nested_jet(
        one, tuple(primals[i] for i in moving), tuple(series[i] for i in moving), order
    )
    return list(zip(out if prim.multiple_results else [out], per_leaf))


# ---------------------------------------------------------------------------
# Writing rules


def linear_prop(prim: Primitive, primals_in: list, series_in: list, **params: Any) -> tuple:
    """The Taylor rule of a primitive linear in its inputs: applied to each term."""
    primal_out = prim.bind(*primals_in, **params)
    series_out = [prim.bind(*terms, **params) for terms in zip(*series_in)]
    return primal_out, series_out


def zero_prop(prim: Primitive, primals_in: list, series_in: list, **params: Any) -> tuple:
    """The Taylor rule of a primitive whose output does not move (all its terms are zero)."""
    primal_out = prim.bind(*primals_in, **params)
    order = len(series_in[0]) if series_in else 0
    return primal_out, [jnp.zeros_like(primal_out)] * order


def deriv_prop(
    prim: Primitive, deriv: Callable[[Any], Any], primals_in: list, series_in: list, **params: Any
) -> tuple:
    """The Taylor rule of a unary primitive `f` from its derivative ``f' = deriv``.

    ``y = f(x)`` has ``y' = deriv(x) x'``; Leibniz's rule gives
    ``y_k = sum_j C(k-1, j) w_j x_(k-j)`` with ``w = deriv(x)``, whose own terms
    come from a `jet` of `deriv` (one term fewer).
    """
    (x,), (xs,) = primals_in, series_in
    primal_out = prim.bind(x, **params)
    order = len(xs)
    w0, ws = jet(deriv, (x,), (xs[: order - 1],)) if order > 1 else (deriv(x), [])
    w = [w0, *ws]
    series_out = [
        sum(math.comb(k - 1, j) * w[j] * xs[k - 1 - j] for j in range(k))
        for k in range(1, order + 1)
    ]
    return primal_out, series_out


def deflinear(prim: Primitive) -> None:
    """Registers `prim` as linear in its inputs (its rule applies it to each term).

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax import lax
      >>> deflinear(lax.neg_p)
      >>> _, terms = jet(lambda x: -x, (jnp.float32(1),), ((jnp.float32(2),),))
      >>> float(terms[0])
      -2.0
      >>> del jet_rules[lax.neg_p]
    """
    jet_rules[prim] = lambda primals, series, **params: linear_prop(prim, primals, series, **params)


def defzero(prim: Primitive) -> None:
    """Registers `prim` as constant along any curve (all its output terms are zero)."""
    jet_rules[prim] = lambda primals, series, **params: zero_prop(prim, primals, series, **params)


def def_deriv(prim: Primitive, deriv: Callable[[Any], Any]) -> None:
    """Registers a unary `prim`'s Taylor rule from its derivative function `deriv`."""
    jet_rules[prim] = lambda primals, series, **params: deriv_prop(
        prim, deriv, primals, series, **params
    )


def def_comp(prim: Primitive, comp: Callable[..., Any]) -> None:
    """Registers `prim`'s Taylor rule as that of `comp`, a function computing the same."""
    jet_rules[prim] = lambda primals, series, **params: jet(comp, primals, series)
