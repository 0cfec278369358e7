"""Special functions: incomplete gamma and beta functions, Bessel functions, zeta.

`bessel_i1e` and `zeta` lower to the CHLO ops of the same name. The others
have no XLA op: they lower to a `stablehlo.while` loop whose body is one
step of a series or continued fraction written with lax operations, run on
every element at once until every element has converged (with a cap on the
trip count; a converged element stops changing).

- `igamma(a, x)` is the regularized lower incomplete gamma function
  `P(a, x) = gamma(a, x) / Gamma(a)`, `igammac(a, x) = Q(a, x) = 1 - P(a, x)`:
  the power series of `P` when `x < a + 1`, else the continued fraction of
  `Q` (evaluated with the modified Lentz method), as in Numerical Recipes.
- `igamma_grad_a(a, x)` is `dP/da`, carried along the same iterations
  (forward-mode by hand), and `random_gamma_grad(a, x)` is the derivative of
  a Gamma(a) sample `x` with respect to `a` (implicit differentiation of
  `P(a, x) = u`): `-(dP/da) / (dP/dx)`.
- `regularized_incomplete_beta(a, b, x)` is `I_x(a, b)`, by its continued
  fraction (with `I_x(a, b) = 1 - I_{1-x}(b, a)` where that converges faster).
- `bessel_i0e(x) = exp(-|x|) I0(x)`: power series for `|x| <= 30`, the
  asymptotic expansion beyond.

16-bit floats are computed in float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.typing import ArrayLike
from polyjax_interpreters import mlir
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._elementwise import (
    _binary,
    _nary_lowering,
    _naryop_rule,
    _unop_rule,
    abs,
    add,
    bitwise_and,
    bitwise_or,
    convert_element_type,
    digamma,
    div,
    eq,
    exp,
    gt,
    le,
    lgamma,
    log,
    log1p,
    lt,
    mul,
    ne,
    neg,
    reciprocal,
    select,
    sign,
    sqrt,
    sub,
)
from polyjax_numpy.lax._reductions import reduce_max
from polyjax_numpy.lax._shape_ops import full_like

__all__ = [
    "bessel_i0e",
    "bessel_i0e_p",
    "bessel_i1e",
    "bessel_i1e_p",
    "betainc",
    "igamma",
    "igamma_grad_a",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac",
    "igammac_p",
    "random_gamma_grad",
    "random_gamma_grad_p",
    "regularized_incomplete_beta",
    "regularized_incomplete_beta_p",
    "zeta",
    "zeta_p",
]


# ---------------------------------------------------------------------------
# Lowering helpers: lax code inlined into a lowering, and fixed-trip loops


def _emit(ctx: mlir.LoweringRuleContext, fn: Callable, avals: Sequence, vals: Sequence) -> list:
    """Inlines `fn` (lax operations on arrays of `avals`) applied to `vals`."""
    closed = trace_to_jaxpr(lambda *xs: list(fn(*xs)), list(avals))
    return list(
        mlir.jaxpr_subcomp(
            ctx.module_context, closed.jaxpr, closed.consts, list(vals), ctx.dim_var_values
        )
    )


def _any_active(active: Any) -> list:
    return [gt(reduce_max(active, tuple(range(len(active.shape)))), 0.0)]


def _fixed_loop(
    ctx: mlir.LoweringRuleContext, trips: int, step: Callable, avals: Sequence, init: Sequence
) -> list:
    """Applies `step` (a function of the loop state, in lax operations) until no
    element is active, at most `trips` times.

    The last component of the state says which elements are still active (1.0,
    else 0.0). The loop is a `stablehlo.while` over an int32 counter and the
    state, so the program stays small whatever the trip count.
    """
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    types = [i32] + [mlir.aval_to_ir_type(a) for a in avals]
    op = hlo.WhileOp(types, [mlir._i32_constant(0), *init])
    cond = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond):
        pred = mlir.compare_hlo(cond.arguments[0], mlir._i32_constant(trips), "LT", "SIGNED")
        (active,) = _emit(ctx, _any_active, avals[-1:], list(cond.arguments)[-1:])
        hlo.return_([hlo.and_(pred, active)])
    body = op.body.blocks.append(*types)
    with ir.InsertionPoint(body):
        outs = _emit(ctx, step, avals, list(body.arguments)[1:])
        counter = hlo.add(body.arguments[0], mlir._i32_constant(1))
        hlo.return_([counter, *outs])
    return list(op.results)[1:]


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype.itemsize < 4 else np.dtype(dtype)


def _series_lowering(ctx: mlir.LoweringRuleContext, args: Sequence[ir.Value], algorithm):
    """Broadcasts and upcasts the operands, runs `algorithm`, casts back.

    `algorithm(run_loop, *avals)` gets the compute avals and calls
    `run_loop(prologue, trips, step, epilogue)`: `prologue(*operands)` gives the
    initial loop state, `step(*state)` the next one followed by a boolean array
    (the elements that have not converged yet), and `epilogue(*operands, *state)`
    the result.
    """
    out = ctx.avals_out[0]
    cdt = _compute_dtype(out.dtype)
    caval = ShapedArray(out.shape, cdt)
    vals = []
    for v, aval in zip(args, ctx.avals_in):
        if aval.shape != out.shape:
            dims = tuple(range(len(out.shape))) if aval.shape else ()
            v = mlir.broadcast_in_dim(ctx, v, aval.update(shape=out.shape), dims)
        if aval.dtype != cdt:
            v = mlir.convert_hlo(ctx, v, aval.update(shape=out.shape), caval)
        vals.append(v)
    n_in = len(vals)

    def run_loop(prologue: Callable, trips: int, step: Callable, epilogue: Callable):
        def first(*operands):
            state = prologue(*operands)
            return [*state, _full(state[0], 1.0)]

        def next_(*state):
            *new, active = step(*state[:-1])
            return [*new, convert_element_type(active, cdt)]

        init = _emit(ctx, first, [caval] * n_in, vals)
        state = _fixed_loop(ctx, trips, next_, [caval] * len(init), init)[:-1]
        (res,) = _emit(ctx, epilogue, [caval] * (n_in + len(state)), [*vals, *state])
        return res

    res = algorithm(run_loop)
    if cdt != out.dtype:
        res = mlir.convert_hlo(ctx, res, caval, out)
    return [res]


def _full(x: Any, value: float) -> Any:
    return full_like(x, value)


def _nan_where(pred: Any, x: Any) -> Any:
    return select(pred, _full(x, math.nan), x)


def _tiny(x: Any) -> float:
    return float(np.finfo(x.dtype).tiny) * 16


def _eps(x: Any) -> float:
    return float(np.finfo(x.dtype).eps)


# The most iterations: the series and fraction need O(sqrt(a)) steps near x = a.
_MAX_TRIPS = 2000


# ---------------------------------------------------------------------------
# Incomplete gamma functions
#
# Loop state (all of the operands' broadcast shape):
#   a, x,
#   series of P: r (a + n), c (the term), s (the sum), dc, ds (their d/da),
#   continued fraction of Q (Lentz): i, b, cc, d, h and db, dcc, dd, dh (d/da).


def _igamma_prologue(a: Any, x: Any) -> list:
    tiny = _tiny(a)
    one = _full(a, 1.0)
    zero = _full(a, 0.0)
    b = add(sub(x, a), 1.0)
    b = select(lt(abs(b), tiny), _full(b, tiny), b)
    d = reciprocal(b)
    dd = mul(d, d)  # d(1/b)/da with db/da = -1
    return [
        a, x,
        a, one, one, zero, zero,
        zero, b, _full(a, 1.0 / tiny), d, d, _full(a, -1.0), zero, dd, dd,
    ]  # fmt: skip


def _igamma_step(a, x, r, c, s, dc, ds, i, b, cc, d, h, db, dcc, dd, dh) -> list:
    tiny = _tiny(a)
    # Series: c_n = c_{n-1} x / (a + n), summed in s; dc by the product rule.
    r = add(r, 1.0)
    x_over_r = div(x, r)
    dc = mul(sub(dc, div(c, r)), x_over_r)
    c = mul(c, x_over_r)
    s, ds = add(s, c), add(ds, dc)
    # Continued fraction, one Lentz step: a_i = -i (i - a), b_i = b_{i-1} + 2.
    i = add(i, 1.0)
    an = neg(mul(i, sub(i, a)))
    dan = i
    b = add(b, 2.0)
    dpre = add(mul(an, d), b)
    ddpre = add(add(mul(dan, d), mul(an, dd)), db)
    small = lt(abs(dpre), tiny)
    dpre = select(small, _full(dpre, tiny), dpre)
    cpre = add(b, div(an, cc))
    dcc = sub(add(db, div(dan, cc)), div(mul(an, dcc), mul(cc, cc)))
    cc = select(lt(abs(cpre), tiny), _full(cpre, tiny), cpre)
    d = reciprocal(dpre)
    dd = neg(mul(ddpre, mul(d, d)))
    delta = mul(d, cc)
    ddelta = add(mul(dd, cc), mul(d, dcc))
    dh = add(mul(dh, delta), mul(h, ddelta))
    h = mul(h, delta)
    eps = _eps(a)
    active = select(
        lt(x, add(a, 1.0)),
        bitwise_or(gt(abs(c), mul(abs(s), eps)), gt(abs(dc), mul(abs(ds), eps))),
        bitwise_or(gt(abs(sub(delta, 1.0)), eps), gt(abs(mul(h, ddelta)), mul(abs(dh), eps))),
    )
    return [a, x, r, c, s, dc, ds, i, b, cc, d, h, db, dcc, dd, dh, active]


def _igamma_result(which: str) -> Callable:
    """The epilogue giving P ("p"), Q ("q") or dP/da ("da") from the loop state."""

    def epilogue(a, x, _a, _x, r, c, s, dc, ds, i, b, cc, d, h, db, dcc, dd, dh) -> list:
        logx = log(x)
        use_series = lt(x, add(a, 1.0))
        # P = x^a e^-x / Gamma(a + 1) * s;  Q = x^a e^-x / Gamma(a) * h.
        p_pre = exp(sub(sub(mul(a, logx), x), lgamma(add(a, 1.0))))
        q_pre = exp(sub(sub(mul(a, logx), x), lgamma(a)))
        p_series = mul(p_pre, s)
        q_cf = mul(q_pre, h)
        bad = _invalid_igamma(a, x)
        if which == "p":
            out = select(use_series, p_series, sub(1.0, q_cf))
            out = select(eq(x, 0.0), _full(x, 0.0), out)
            out = select(eq(x, math.inf), _full(x, 1.0), out)
        elif which == "q":
            out = select(use_series, sub(1.0, p_series), q_cf)
            out = select(eq(x, 0.0), _full(x, 1.0), out)
            out = select(eq(x, math.inf), _full(x, 0.0), out)
        else:
            dp_series = mul(p_pre, add(ds, mul(s, sub(logx, digamma(add(a, 1.0))))))
            dq_cf = mul(q_pre, add(dh, mul(h, sub(logx, digamma(a)))))
            out = select(use_series, dp_series, neg(dq_cf))
            out = select(eq(x, 0.0), _full(x, 0.0), out)
            out = select(eq(x, math.inf), _full(x, 0.0), out)
        return [_nan_where(bad, out)]

    return epilogue


def _invalid_igamma(a: Any, x: Any) -> Any:
    # NaN outside the domain (a > 0, x >= 0) and for NaN operands.
    return _or(lt(x, 0.0), le(a, 0.0), ne(a, a), ne(x, x))


def _or(*preds: Any) -> Any:
    out = preds[0]
    for p in preds[1:]:
        out = bitwise_or(out, p)
    return out


def _igamma_lowering(which: str) -> Callable:
    def rule(ctx: mlir.LoweringRuleContext, a: ir.Value, x: ir.Value) -> list:
        trips = _MAX_TRIPS

        def algorithm(run_loop):
            return run_loop(_igamma_prologue, trips, _igamma_step, _igamma_result(which))

        return _series_lowering(ctx, (a, x), algorithm)

    return rule


def _binary_float(name: str, lowering: Callable, jvp_terms: Sequence[Callable]):
    # Elementwise over two float operands, broadcasting their ranks.
    rule = _naryop_rule(name, (sr.FLOAT, sr.FLOAT))
    return standard_primitive(name, rule, lowering, jvp_terms=jvp_terms, batching="broadcasting")


def _no_jvp(name: str) -> Callable:
    def jvp(g: Any, *args: Any) -> Any:
        raise NotImplementedError(f"differentiation rule for '{name}' not implemented")

    return jvp


def _igamma_dx(g: Any, a: Any, x: Any) -> Any:
    # dP/dx = exp(-x) x^(a - 1) / Gamma(a)
    return mul(g, exp(sub(sub(mul(sub(a, 1.0), log(x)), x), lgamma(a))))


igamma_p = _binary_float(
    "igamma",
    _igamma_lowering("p"),
    (lambda g, a, x: mul(g, igamma_grad_a(a, x)), _igamma_dx),
)
igammac_p = _binary_float(
    "igammac",
    _igamma_lowering("q"),
    (
        lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))),
        lambda g, a, x: neg(_igamma_dx(g, a, x)),
    ),
)
igamma_grad_a_p = _binary_float(
    "igamma_grad_a", _igamma_lowering("da"), (_no_jvp("igamma_grad_a"),) * 2
)


def _random_gamma_grad_lowering(ctx: mlir.LoweringRuleContext, a: ir.Value, x: ir.Value):
    trips = _MAX_TRIPS

    def epilogue(a, x, *state):
        (dp_da,) = _igamma_result("da")(a, x, *state)
        log_dp_dx = sub(sub(mul(sub(a, 1.0), log(x)), x), lgamma(a))
        out = neg(div(dp_da, exp(log_dp_dx)))
        return [select(eq(x, 0.0), _full(x, 0.0), out)]

    def algorithm(run_loop):
        return run_loop(_igamma_prologue, trips, _igamma_step, epilogue)

    return _series_lowering(ctx, (a, x), algorithm)


random_gamma_grad_p = _binary_float(
    "random_gamma_grad", _random_gamma_grad_lowering, (_no_jvp("random_gamma_grad"),) * 2
)


# ---------------------------------------------------------------------------
# Regularized incomplete beta function
#
# I_x(a, b) = x^a (1 - x)^b / (a B(a, b)) * 1 / (1 + d_1 / (1 + d_2 / (1 + ...)))
# with d_{2m+1} = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) and
# d_{2m} = m (b - m) x / ((a + 2m - 1)(a + 2m)); the fraction converges fast
# for x < (a + 1) / (a + b + 2), and the symmetry covers the other side.
# Loop state: a, b, x (swapped where needed), n (the index of d_n), c, d, h.


def _beta_swap(a: Any, b: Any, x: Any) -> Any:
    return gt(x, div(add(a, 1.0), add(add(a, b), 2.0)))


def _beta_prologue(a: Any, b: Any, x: Any) -> list:
    swap = _beta_swap(a, b, x)
    a, b, x = select(swap, b, a), select(swap, a, b), select(swap, sub(1.0, x), x)
    tiny = _tiny(a)
    one = _full(a, 1.0)
    # The Lentz state after the leading 1 + d_1 / ...: f = 1 / (1 + d_1 ...).
    d = sub(1.0, div(mul(mul(add(a, b), x), 1.0), add(a, 1.0)))
    d = select(lt(abs(d), tiny), _full(d, tiny), d)
    d = reciprocal(d)
    return [a, b, x, one, one, d, d]


def _beta_step(a, b, x, n, c, d, h) -> list:
    tiny = _tiny(a)

    def lentz(coef, c, d, h):
        d = add(1.0, mul(coef, d))
        d = reciprocal(select(lt(abs(d), tiny), _full(d, tiny), d))
        c = add(1.0, div(coef, c))
        c = select(lt(abs(c), tiny), _full(c, tiny), c)
        delta = mul(d, c)
        return c, d, mul(h, delta), delta

    # Two terms per step: d_{2m} then d_{2m+1}, with m = n.
    m = n
    a2m = add(a, mul(2.0, m))
    even = div(mul(mul(m, sub(b, m)), x), mul(sub(a2m, 1.0), a2m))
    c, d, h, _ = lentz(even, c, d, h)
    odd = neg(div(mul(mul(add(a, m), add(add(a, b), m)), x), mul(a2m, add(a2m, 1.0))))
    c, d, h, delta = lentz(odd, c, d, h)
    return [a, b, x, add(n, 1.0), c, d, h, gt(abs(sub(delta, 1.0)), _eps(a))]


def _beta_epilogue(a0, b0, x0, a, b, x, n, c, d, h) -> list:
    log_front = sub(
        add(mul(a, log(x)), mul(b, log1p(neg(x)))),
        add(log(a), sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))),
    )
    out = mul(exp(log_front), h)
    out = select(_beta_swap(a0, b0, x0), sub(1.0, out), out)
    out = select(eq(x0, 0.0), _full(out, 0.0), out)
    out = select(eq(x0, 1.0), _full(out, 1.0), out)
    bad = _or(
        le(a0, 0.0), le(b0, 0.0), lt(x0, 0.0), gt(x0, 1.0), ne(x0, x0), ne(a0, a0), ne(b0, b0)
    )
    return [_nan_where(bad, out)]


def _beta_lowering(ctx: mlir.LoweringRuleContext, a: ir.Value, b: ir.Value, x: ir.Value):
    trips = _MAX_TRIPS

    def algorithm(run_loop):
        return run_loop(_beta_prologue, trips, _beta_step, _beta_epilogue)

    return _series_lowering(ctx, (a, b, x), algorithm)


def _betainc_dx(g: Any, a: Any, b: Any, x: Any) -> Any:
    # dI/dx = x^(a - 1) (1 - x)^(b - 1) / B(a, b)
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    return mul(
        g,
        exp(sub(add(mul(sub(a, 1.0), log(x)), mul(sub(b, 1.0), log1p(neg(x)))), log_beta)),
    )


regularized_incomplete_beta_p = standard_primitive(
    "regularized_incomplete_beta",
    _naryop_rule("regularized_incomplete_beta", (sr.FLOAT,) * 3),
    _beta_lowering,
    jvp_terms=(
        _no_jvp("regularized_incomplete_beta with respect to a"),
        _no_jvp("regularized_incomplete_beta with respect to b"),
        _betainc_dx,
    ),
    batching="broadcasting",
)


# ---------------------------------------------------------------------------
# Bessel functions and zeta


def _bessel_i1e_jvp(g: Any, ans: Any, x: Any) -> Any:
    # d/dx [e^-|x| I1(x)] = i0e(x) - i1e(x) (sign(x) + 1 / x); the limit at 0 is 1/2.
    eps = float(np.finfo(get_aval(x).dtype).eps)
    not_tiny = gt(abs(x), eps)
    safe_x = select(not_tiny, x, _full(x, eps))
    dy = sub(bessel_i0e(safe_x), mul(ans, add(sign(safe_x), reciprocal(safe_x))))
    return mul(g, select(not_tiny, dy, _full(x, 0.5)))


bessel_i1e_p = standard_primitive(
    "bessel_i1e",
    _unop_rule("bessel_i1e", sr.FLOAT),
    _nary_lowering(chlo.bessel_i1e),
    jvp_ans_terms=(_bessel_i1e_jvp,),
    batching="vectorized",
)

# Beyond this |x| the asymptotic expansion of I0 is used (its terms shrink
# like k / (2 |x|), so a dozen reach float64 precision).
_I0E_SWITCH = 30.0


def _i0e_prologue(x: Any) -> list:
    # Terms of the series exp(-|x|) sum_k (x^2 / 4)^k / (k!)^2, scaled from the start.
    t = exp(neg(abs(x)))
    return [x, _full(x, 0.0), t, t]


def _i0e_step(x, k, t, s) -> list:
    k = add(k, 1.0)
    t = mul(t, div(mul(mul(x, x), 0.25), mul(k, k)))
    s = add(s, t)
    active = bitwise_or(lt(k, 2.0), gt(t, mul(s, _eps(x))))
    return [x, k, t, s, bitwise_and(le(abs(x), _I0E_SWITCH), active)]


def _i0e_epilogue(x0, x, k, t, s) -> list:
    ax = abs(x0)
    safe = select(gt(ax, _I0E_SWITCH), ax, _full(ax, _I0E_SWITCH + 1.0))
    term, total = _full(ax, 1.0), _full(ax, 1.0)
    for j in range(1, 16):
        term = mul(term, div(_full(ax, (2 * j - 1) ** 2 / (8.0 * j)), safe))
        total = add(total, term)
    asym = div(total, sqrt(mul(safe, 2 * math.pi)))
    return [select(gt(ax, _I0E_SWITCH), asym, s)]


def _bessel_i0e_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value) -> list:
    trips = 200

    def algorithm(run_loop):
        return run_loop(_i0e_prologue, trips, _i0e_step, _i0e_epilogue)

    return _series_lowering(ctx, (x,), algorithm)


bessel_i0e_p = standard_primitive(
    "bessel_i0e",
    _unop_rule("bessel_i0e", sr.FLOAT),
    _bessel_i0e_lowering,
    jvp_ans_terms=(lambda g, ans, x: mul(g, sub(bessel_i1e(x), mul(sign(x), ans))),),
    batching="vectorized",
)

# zeta(x, q): the Hurwitz zeta function sum_n (n + q)^-x.
zeta_p = _binary_float(
    "zeta",
    _nary_lowering(chlo.zeta),
    (
        _no_jvp("zeta with respect to x"),
        lambda g, x, q: mul(g, mul(neg(x), zeta(add(x, 1.0), q))),
    ),
)


# ---------------------------------------------------------------------------
# Public functions


def igamma(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized lower incomplete gamma function `P(a, x)`.

    `P(a, x) = 1 / Gamma(a) * integral_0^x t^(a-1) e^-t dt`, for `a > 0` and
    `x >= 0` (NaN elsewhere).
    """
    return _binary(igamma_p, a, x)


def igammac(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized upper incomplete gamma function `Q(a, x) = 1 - P(a, x)`."""
    return _binary(igammac_p, a, x)


def igamma_grad_a(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise derivative of `igamma(a, x)` with respect to `a`."""
    return _binary(igamma_grad_a_p, a, x)


def random_gamma_grad(a: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise derivative of a Gamma(`a`) sample `x` with respect to `a`.

    A sample is `x = P^-1(a, u)` for a uniform `u`; holding `u` fixed,
    `dx/da = -(dP/da) / (dP/dx)`.
    """
    return _binary(random_gamma_grad_p, a, x)


def regularized_incomplete_beta(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized incomplete beta function `I_x(a, b)`.

    `I_x(a, b) = B(x; a, b) / B(a, b)`, for `a, b > 0` and `0 <= x <= 1`
    (NaN elsewhere). Differentiable in `x` only.
    """
    a, b, x = sr.match_python_scalars((a, b, x))
    return regularized_incomplete_beta_p.bind(a, b, x)


def betainc(a: ArrayLike, b: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise regularized incomplete beta function `I_x(a, b)` (JAX's name for
    `regularized_incomplete_beta`)."""
    return regularized_incomplete_beta(a, b, x)


def bessel_i0e(x: ArrayLike) -> Any:
    """Elementwise exponentially scaled modified Bessel function `exp(-|x|) I0(x)`."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x: ArrayLike) -> Any:
    """Elementwise exponentially scaled modified Bessel function `exp(-|x|) I1(x)`."""
    return bessel_i1e_p.bind(x)


def zeta(x: ArrayLike, q: ArrayLike) -> Any:
    """Elementwise Hurwitz zeta function `sum_{n >= 0} (n + q) ** -x`."""
    return _binary(zeta_p, x, q)
