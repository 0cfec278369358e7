"""The decision procedure for symbolic dimensions: lower and upper bounds of a polynomial.

Every comparison ``e1 >= e2`` is decided by bounding ``e = e1 - e2``: if ``lo(e) >= 0`` the
answer is True, if ``hi(e) < 0`` it is False, otherwise it is inconclusive. Bounds come from
two sources:

1. **Interval arithmetic.** Each dimension variable lies in ``[1, inf]``. A constraint of the
   scope that mentions a single term (``a >= 16``, ``a*b <= 100``) narrows that term's interval.
   Operation atoms get intervals from their operands (``mod(x, 3)`` is in ``[0, 2]``).
   Intervals of terms are multiplied by coefficients and summed.
2. **Cancellation against known non-negative polynomials.** Interval arithmetic forgets that
   terms are correlated (``a - b`` is unbounded even when the scope says ``a >= b``). So for
   each known fact ``p >= 0`` — a constraint of the scope, or an implicit fact about an atom
   of ``e`` such as ``max(x, y) - x >= 0`` or ``x - 2*floordiv(x, 2) >= 0`` — and each term
   that ``e`` shares with ``p``, we pick ``k`` cancelling that term and use
   ``e >= e - k*p`` (for ``k > 0``) or ``e <= e + |k|*p``, bounding the residual recursively
   to a small depth. This is sound because ``p >= 0`` always holds, and it is what decides
   ``a >= b`` under the constraint ``a >= b + 8``, ``max(a, b) >= min(a, b)``, or
   ``a - a // 2 >= 1``.

Scopes supply ``_ineqs`` (their multi-term facts ``p >= 0`` as dicts), ``_term_bounds``
(monomial -> interval from single-term facts) and ``_cache`` (cleared when facts change).
"""

from __future__ import annotations

import math
from fractions import Fraction

from polyjax_core import _symbolic_poly as P

INF = math.inf
_DEPTH = 2  # how many cancellation steps a bound may chain
_SPLITS = 3  # how many max/min atoms one decision may split into cases

Interval = tuple  # (lo, hi): numbers, lo may be -inf and hi may be inf


def poly_bounds(p: P.Poly, scope) -> Interval:
    """Integer bounds ``(lo, hi)`` of a canonical polynomial, cached on the scope."""
    c = P.as_const(p)
    if c is not None:
        return (c, c)
    cached = scope._cache.get(p)
    if cached is None:
        # A fact of the scope may mention an atom whose operand is ``p`` itself (``x >= mod(x,
        # 3)``): while ``p`` is being bounded, nested requests for it get the trivial bounds.
        scope._cache[p] = (-INF, INF)
        lo, hi = _bounds(dict(p), scope, _DEPTH)
        cached = (_ceil(lo), _floor(hi))
        scope._cache[p] = cached
    return cached


def decide_ge0(p: P.Poly, scope, splits: int = _SPLITS) -> bool | None:
    """True if ``p >= 0`` always, False if ``p < 0`` always, None when we cannot tell.

    When the bounds do not decide, a ``max``/``min`` atom of ``p`` (a term of its own) is
    split into its cases: its value is always one of its operands, so if ``p`` with
    either operand in its place gives the same answer, that is the answer. This decides
    ``b >= max(b - 1, 1)``, which the bounds of ``max`` alone cannot.
    """
    lo, hi = poly_bounds(p, scope)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    if splits:
        for m, c in p:
            if len(m) == 1 and m[0][1] == 1 and m[0][0].op in ("max", "min"):
                rest = tuple(mc for mc in p if mc[0] != m)
                answers = {
                    decide_ge0(P.freeze(P.add(rest, arg, c)), scope, splits - 1)
                    for arg in m[0][0].args
                }
                if len(answers) == 1 and None not in answers:
                    return answers.pop()
    return None


def factor_bounds(f: P.Factor, scope) -> Interval:
    """Bounds of a factor: ``[1, inf]`` for variables, derived from operands for atoms."""
    known = scope._term_bounds.get(((f, 1),), (-INF, INF))
    if f.op == P.VAR:
        return _intersect((1, INF), known)
    x, y = (poly_bounds(a, scope) for a in f.args)
    if f.op == "max":
        b = (max(x[0], y[0]), max(x[1], y[1]))
    elif f.op == "min":
        b = (min(x[0], y[0]), min(x[1], y[1]))
    elif f.op == "floordiv":
        b = _floordiv_bounds(x, y)
    else:
        b = _mod_bounds(x, y)
    return _intersect(b, known)


# ---------------------------------------------------------------------------------------------
# Interval arithmetic


def _ceil(x):
    return x if x in (INF, -INF) else math.ceil(x)


def _floor(x):
    return x if x in (INF, -INF) else math.floor(x)


def _intersect(a: Interval, b: Interval) -> Interval:
    return (max(a[0], b[0]), min(a[1], b[1]))


def _mul(x, y):
    # 0 * inf is 0 here: the infinite end stands for an unbounded but finite value.
    return 0 if x == 0 or y == 0 else x * y


def _imul(a: Interval, b: Interval) -> Interval:
    ps = [_mul(x, y) for x in a for y in b]
    return (min(ps), max(ps))


def _monomial_bounds(m: P.Monomial, scope) -> Interval:
    b: Interval = (1, 1)
    for f, e in m:
        fb = factor_bounds(f, scope)
        for _ in range(e):
            b = _imul(b, fb)
    return _intersect(b, scope._term_bounds.get(m, (-INF, INF)))


def _interval(items: dict, scope) -> Interval:
    lo = hi = 0
    for m, c in items.items():
        if not c:
            continue
        mlo, mhi = _monomial_bounds(m, scope) if m else (1, 1)
        tlo, thi = (_mul(c, mlo), _mul(c, mhi)) if c > 0 else (_mul(c, mhi), _mul(c, mlo))
        lo += tlo
        hi += thi
    return (lo, hi)


def _floordiv_bounds(n: Interval, d: Interval) -> Interval:
    if d[0] <= 0 <= d[1]:
        return (-INF, INF)  # the divisor may be 0 (or change sign)
    if d[1] < 0:  # floor(n / d) == floor(-n / -d)
        n, d = (-n[1], -n[0]), (-d[1], -d[0])
    # Now d >= 1. floor(n/d) grows with n; it shrinks with d when n > 0 and grows when n < 0.
    nlo, nhi = n
    dlo, dhi = d
    if nhi == INF:
        hi = INF
    elif nhi >= 0:
        hi = nhi // dlo
    else:
        hi = -1 if dhi == INF else nhi // dhi
    if nlo == -INF:
        lo = -INF
    elif nlo >= 0:
        lo = 0 if dhi == INF else nlo // dhi
    else:
        lo = nlo // dlo
    return (lo, hi)


def _mod_bounds(n: Interval, d: Interval) -> Interval:
    if d[0] >= 1:  # the result has the sign of the divisor
        lo, hi = 0, d[1] - 1
        if n[0] >= 0:
            hi = min(hi, n[1])
        return (lo, hi)
    if d[1] <= -1:
        lo, hi = d[0] + 1, 0
        if n[1] <= 0:
            lo = max(lo, n[0])
        return (lo, hi)
    return (-INF, INF)


# ---------------------------------------------------------------------------------------------
# Cancellation against known facts


def _bounds(items: dict, scope, depth: int) -> Interval:
    lo, hi = _interval(items, scope)
    if depth == 0 or lo == hi:
        return (lo, hi)
    for p in _facts_about(items, scope):
        for m, ce in items.items():
            cp = p.get(m)
            if not m or not cp or not ce:
                continue
            k = Fraction(ce, cp)
            residual = dict(items)
            for pm, pc in p.items():
                residual[pm] = residual.get(pm, 0) - k * pc
            rlo, rhi = _bounds({q: c for q, c in residual.items() if c}, scope, depth - 1)
            if k > 0:  # e >= e - k*p
                lo = max(lo, rlo)
            else:  # e <= e + |k|*p
                hi = min(hi, rhi)
    return (lo, hi)


def _facts_about(items: dict, scope) -> list:
    """Polynomials (as dicts) known to be >= 0 that may help to bound ``items``."""
    facts = list(scope._ineqs)
    seen = set()
    for m in items:
        for f, _ in m:
            if f.op != P.VAR and f not in seen:
                seen.add(f)
                facts.extend(_implicit_facts(f, scope))
    return facts


def _implicit_facts(f: P.Factor, scope) -> list:
    """What the definition of an atom says, as polynomials (dicts) that are >= 0."""
    q = P.monomial_poly(f)
    x, y = f.args
    if f.op == "max":  # max(x, y) >= x and max(x, y) >= y
        return [_sum(q, _neg(x)), _sum(q, _neg(y))]
    if f.op == "min":
        return [_sum(x, _neg(q)), _sum(y, _neg(q))]
    dlo, dhi = poly_bounds(y, scope)
    one = P.const(1)
    if f.op == "floordiv":
        dq = P.mul(y, q)  # d * floordiv(x, d)
        if dlo >= 1:  # d*q <= x <= d*q + d - 1
            return [_sum(x, _neg(dq)), _sum(dq, y, _neg(one), _neg(x))]
        if dhi <= -1:  # d*q + d + 1 <= x <= d*q
            return [_sum(dq, _neg(x)), _sum(x, _neg(dq), _neg(y), _neg(one))]
        return []
    # mod: for d >= 1, mod(x, d) <= d - 1 and, when x >= 0, mod(x, d) <= x
    if dlo >= 1:
        facts = [_sum(y, _neg(one), _neg(q))]
        if poly_bounds(x, scope)[0] >= 0:
            facts.append(_sum(x, _neg(q)))
        return facts
    return []


def _neg(p) -> dict:
    items = p.items() if isinstance(p, dict) else p
    return {m: -c for m, c in items}


def _sum(*ps) -> dict:
    d: dict = {}
    for p in ps:
        for m, c in p.items() if isinstance(p, dict) else p:
            d[m] = d.get(m, 0) + c
    return {m: c for m, c in d.items() if c}
