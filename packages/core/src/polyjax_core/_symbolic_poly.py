"""The data of symbolic dimensions: polynomials over variables and opaque atoms.

A dimension expression is a polynomial with integer coefficients. Its building blocks:

* A ``Factor`` is either a dimension variable (``b``) or an operation that could not be
  simplified away (``floordiv(b, 2)``, ``mod(b, 2)``, ``max(a, b)``, ``min(a, b)``), whose
  operands are themselves polynomials. Factors are compared structurally.
* A *monomial* is a product of factors raised to positive powers: a tuple of
  ``(factor, exponent)`` pairs sorted by the factor order. The empty tuple is the monomial
  ``1`` and carries the constant term.
* A *poly* (the canonical form) is a tuple of ``(monomial, coefficient)`` pairs, without zero
  coefficients, sorted by a fixed term order. Two polynomials are equal exactly when their
  canonical tuples are equal, which is what makes ``b + 1 == 1 + b`` and hashing work.

While a polynomial is being computed it lives in a plain ``dict`` from monomial to
coefficient; ``freeze`` turns the dict into the canonical tuple.

The term order is chosen so that printing matches JAX's documented forms: the "biggest" term
comes first (``a*b + a^2 + b + a``, ``- b + a``) and the constant last. A term is bigger when
it has a bigger *size* (variables count 1, an operation counts 1 plus the size of its
operands), ties are broken by comparing the factors from the largest down; variables order by
name and come before operations, and operations order by name (``floordiv`` < ``max`` <
``min`` < ``mod``) and then by operands.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

Monomial = tuple  # tuple[tuple[Factor, int], ...]
Poly = tuple  # tuple[tuple[Monomial, int], ...]

VAR = "var"
OPERATIONS = ("floordiv", "mod", "max", "min")


class Factor:
    """A dimension variable or an operation atom; immutable, hashable, ordered by ``key``."""

    __slots__ = ("op", "args", "key", "size", "_hash")

    def __init__(self, op: str, args: tuple):
        self.op = op
        self.args = args  # (name,) for a variable, (poly, poly) for an operation
        if op == VAR:
            self.key: tuple[Any, ...] = (0, args[0])
            self.size = 1
        else:
            self.key = (1, op, tuple(poly_key(a) for a in args))
            self.size = 1 + sum(poly_size(a) for a in args)
        self._hash = hash((op, args))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Factor) and self.op == other.op and self.args == other.args

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):  # the cached hash and key are recomputed on unpickling
        return (Factor, (self.op, self.args))

    def __str__(self) -> str:
        if self.op == VAR:
            return self.args[0]
        return f"{self.op}({poly_str(self.args[0])}, {poly_str(self.args[1])})"

    __repr__ = __str__


def variable(name: str) -> Factor:
    return Factor(VAR, (name,))


# ---------------------------------------------------------------------------------------------
# Orders and sizes


@functools.lru_cache(maxsize=4096)
def monomial_key(m: Monomial) -> tuple:
    """Sort key of a term: (size, factor keys from the largest down, repeated by exponent)."""
    size = sum(f.size * e for f, e in m)
    keys = sorted((f.key for f, e in m for _ in range(e)), reverse=True)
    return (size, tuple(keys))


def poly_key(p: Poly) -> tuple:
    return tuple((monomial_key(m), c) for m, c in p)


def poly_size(p: Poly) -> int:
    return sum(monomial_key(m)[0] or 1 for m, _ in p)


# ---------------------------------------------------------------------------------------------
# Building polynomials


def const(c: int) -> Poly:
    return (((), c),) if c else ()


def monomial_poly(f: Factor) -> Poly:
    return ((((f, 1),), 1),)


def freeze(d: dict) -> Poly:
    """The canonical tuple of a {monomial: coefficient} dict (zero coefficients dropped)."""
    items = [(m, c) for m, c in d.items() if c]
    items.sort(key=lambda mc: monomial_key(mc[0]), reverse=True)
    return tuple(items)


def as_const(p: Poly) -> int | None:
    """The value of a constant polynomial, or None when it has a non-constant term."""
    if not p:
        return 0
    if len(p) == 1 and p[0][0] == ():
        return p[0][1]
    return None


def constant_term(p: Poly) -> int:
    return p[-1][1] if p and p[-1][0] == () else 0


def add(p: Iterable, q: Iterable, k: int | Fraction = 1) -> dict:
    """``p + k*q`` as a dict."""
    d = dict(p)
    for m, c in q:
        d[m] = d.get(m, 0) + k * c
    return d


def mono_mul(m1: Monomial, m2: Monomial) -> Monomial:
    if not m1:
        return m2
    if not m2:
        return m1
    exps = dict(m1)
    for f, e in m2:
        exps[f] = exps.get(f, 0) + e
    return tuple(sorted(exps.items(), key=lambda fe: fe[0].key))


def mono_div(m1: Monomial, m2: Monomial) -> Monomial | None:
    """``m1 / m2`` when ``m2`` divides ``m1``, else None."""
    exps = dict(m1)
    for f, e in m2:
        left = exps.get(f, 0) - e
        if left < 0:
            return None
        if left:
            exps[f] = left
        else:
            del exps[f]
    return tuple(sorted(exps.items(), key=lambda fe: fe[0].key))


def mul(p: Poly, q: Poly) -> dict:
    d: dict = {}
    for m1, c1 in p:
        for m2, c2 in q:
            m = mono_mul(m1, m2)
            d[m] = d.get(m, 0) + c1 * c2
    return d


def exact_div(n: Poly, d: Poly) -> Poly | None:
    """The polynomial ``q`` with ``n == q * d`` exactly, or None if we cannot find one.

    Multivariate long division by the leading term of ``d``. The result is correct whenever it
    is returned (the remainder reached zero); the step limit only bounds the search.
    """
    lead_m, lead_c = d[0]
    rem = dict(n)
    quot: dict = {}
    for _ in range(64):
        rem = {m: c for m, c in rem.items() if c}
        if not rem:
            return freeze(quot)
        m = max(rem, key=monomial_key)
        qm = mono_div(m, lead_m)
        if qm is None or rem[m] % lead_c:
            return None
        qc = rem[m] // lead_c
        quot[qm] = quot.get(qm, 0) + qc
        for dm, dc in d:
            pm = mono_mul(qm, dm)
            rem[pm] = rem.get(pm, 0) - qc * dc
    return None


def factors_of(p: Poly):
    """The distinct factors that appear at the top level of ``p`` (not inside operations)."""
    seen: dict[Any, None] = {}
    for m, _ in p:
        for f, _ in m:
            seen[f] = None
    return seen.keys()


def free_vars(p: Poly) -> set:
    out: set = set()
    for m, _ in p:
        for f, _ in m:
            if f.op == VAR:
                out.add(f.args[0])
            else:
                for a in f.args:
                    out |= free_vars(a)
    return out


# ---------------------------------------------------------------------------------------------
# Printing


def _monomial_str(m: Monomial) -> str:
    return "*".join(str(f) if e == 1 else f"{f}^{e}" for f, e in m)


def poly_str(p: Poly) -> str:
    """Print like JAX: ``2*b + 1``, ``- b + a``, ``a^2*b``, ``3*mod(a + 2, b + 2)``."""
    if not p:
        return "0"
    parts = []
    for i, (m, c) in enumerate(p):
        if not m:
            body = str(abs(c))
        elif abs(c) == 1:
            body = _monomial_str(m)
        else:
            body = f"{abs(c)}*{_monomial_str(m)}"
        if i == 0:
            parts.append(f"- {body}" if c < 0 else body)
        else:
            parts.append(f" - {body}" if c < 0 else f" + {body}")
    return "".join(parts)
