"""Symbolic dimensions: the arithmetic of shape polymorphism.

A shape may contain, besides plain ``int`` sizes, *dimension expressions* (``DimExpr``):
polynomials with integer coefficients over named dimension variables, where each variable
stands for an integer ``>= 1``. Expressions that cannot be simplified keep ``floordiv``,
``mod``, ``max`` and ``min`` as opaque atoms::

    >>> b = symbolic_dim("b")
    >>> (2 * b + 4) // 2, (2 * b) % 2, b - b
    (b + 2, 0, 0)
    >>> b // 3, dim_max(b, 4)
    (floordiv(b, 3), max(b, 4))

Every expression is kept in a canonical normal form, so algebraically equal polynomials are
``==`` and hash equal (``b + 1 == 1 + b``), and any result that is constant is returned as a
plain ``int``: shapes stay tuples of ints when nothing is symbolic.

**Comparisons** follow JAX's documented semantics:

* ``==`` is total: it returns True when the two sides are the same polynomial (so equal for
  all values of the variables) and **False otherwise**, even when the answer depends on the
  values (``b == 1`` and ``a == b`` are False). Raising there would break hashing and ``in``
  tests on shapes. ``!=`` is its negation. Code like ``if d != 1: raise Error`` is therefore
  sound, while ``if d != 1: return x`` is not.
* ``>=``, ``>``, ``<=``, ``<`` are decided from bounds: each variable is ``>= 1`` and the
  constraints of the expression's ``SymbolicScope`` narrow things further. When the result
  differs between values of the variables, they raise ``InconclusiveDimensionOperation``,
  naming both sides and the range the difference is known to lie in. ``b >= 1``, ``b >= 0``
  and ``2*a + b >= 3`` are True; ``b >= 2`` and ``a >= b`` are inconclusive.

Variables live in a ``SymbolicScope``, which owns their constraints. ``symbolic_dim`` uses a
shared default scope (without constraints) unless given one; combining expressions from
different scopes raises ``ValueError``. Add a scope's constraints before building expressions
with it: simplifications made earlier (e.g. of ``max``) do not see later constraints.

The helpers at the end of the module (``canonicalize_shape``, ``shape_size``,
``definitely_equal`` ...) are what shape rules call; they take fast paths for plain ints.
"""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from polyjax_core import _symbolic_bounds as B
from polyjax_core import _symbolic_poly as P

__all__ = [
    "DimExpr",
    "DimSize",
    "InconclusiveDimensionOperation",
    "Shape",
    "SymbolicScope",
    "bounds",
    "canonicalize_dim",
    "canonicalize_shape",
    "definitely_equal",
    "definitely_equal_shape",
    "dilate_dim",
    "dilate_shape",
    "dim_as_value",
    "dim_max",
    "dim_min",
    "divide_shape_sizes",
    "evaluate",
    "is_constant_dim",
    "is_dim",
    "is_empty_shape",
    "is_symbolic_dim",
    "register_dim_as_value",
    "broadcast_shapes",
    "shape_size",
    "shape_vars",
    "stride_dim",
    "stride_shape",
    "symbolic_dim",
]


class InconclusiveDimensionOperation(Exception):
    """Raised when an operation on symbolic dimensions has no answer valid for all values.

    For example ``symbolic_dim("b") >= 2`` (true for ``b = 5``, false for ``b = 1``), or
    ``int(symbolic_dim("b"))``.
    """


# ---------------------------------------------------------------------------------------------
# Scopes


class SymbolicScope:
    """Owns dimension variables and the constraints that relate them.

    Expressions built from variables of one scope can be combined; mixing scopes raises
    ``ValueError``. Constraints are added programmatically with ``add_constraint``; they are
    used to decide inequalities (not to rewrite expressions: ``==`` stays syntactic).

    Example:
        >>> scope = SymbolicScope()
        >>> a, b = symbolic_dim("a", scope), symbolic_dim("b", scope)
        >>> scope.add_constraint(a, ">=", b + 8)
        >>> a - b >= 8
        True
    """

    def __init__(self) -> None:
        self._vars: dict[str, DimExpr] = {}
        self._constraints: list[str] = []
        self._ineqs: list[dict] = []  # multi-term facts p >= 0
        self._term_bounds: dict = {}  # monomial -> (lo, hi) from single-term facts
        self._cache: dict = {}  # poly -> bounds
        self._is_default = False

    @property
    def constraints(self) -> tuple[str, ...]:
        """The constraints added so far, printed (e.g. ``"a >= b + 8"``)."""
        return tuple(self._constraints)

    @property
    def variables(self) -> tuple[str, ...]:
        """The names of the variables created in this scope, sorted."""
        return tuple(sorted(self._vars))

    def add_constraint(self, lhs: DimSize, cmp: str, rhs: DimSize) -> None:
        """Adds the constraint ``lhs cmp rhs``, with ``cmp`` one of ``>=``, ``<=``, ``==``.

        Args:
          lhs: an int or an expression of this scope.
          cmp: ``">="``, ``"<="`` or ``"=="``.
          rhs: an int or an expression of this scope.

        Raises:
          ValueError: for an unknown ``cmp``, expressions of another scope, a constraint
            between constants that is false, or the shared default scope.
        """
        if self._is_default:
            raise ValueError(
                "Cannot add constraints to the default symbolic scope, which is shared by all "
                "symbolic_dim calls without a scope; create a SymbolicScope() and pass it to "
                "symbolic_dim."
            )
        if cmp not in (">=", "<=", "=="):
            raise ValueError(f"Constraint comparison must be '>=', '<=' or '==', got {cmp!r}.")
        text = f"{lhs} {cmp} {rhs}"
        diff = P.freeze(P.add(_poly_in(lhs, self), _poly_in(rhs, self), -1))  # lhs - rhs
        c = P.as_const(diff)
        if c is not None:
            if not {">=": c >= 0, "<=": c <= 0, "==": c == 0}[cmp]:
                raise ValueError(f"The symbolic constraint {text!r} is false.")
            return
        facts = {">=": [diff], "<=": [_neg(diff)], "==": [diff, _neg(diff)]}[cmp]
        for p in facts:
            self._add_fact(p)
        self._constraints.append(text)
        self._cache.clear()

    def _add_fact(self, p: P.Poly) -> None:
        """Records ``p >= 0``: as a term bound if ``p`` has one non-constant term."""
        terms = [(m, c) for m, c in p if m]
        if len(terms) != 1:
            self._ineqs.append(dict(p))
            return
        (m, c), c0 = terms[0], P.constant_term(p)
        lo, hi = self._term_bounds.get(m, (-math.inf, math.inf))
        if c > 0:  # c*m + c0 >= 0  =>  m >= ceil(-c0 / c)
            lo = max(lo, -(c0 // c))
        else:  # m <= floor(c0 / -c)
            hi = min(hi, c0 // -c)
        self._term_bounds[m] = (lo, hi)

    def __repr__(self) -> str:
        if self._is_default:
            return "SymbolicScope(<default>)"
        return f"SymbolicScope(at {id(self):#x}, constraints={list(self._constraints)!r})"

    # A scope is an identity: copies are the scope itself, and the default scope unpickles
    # to the default scope (other scopes keep their identity within one pickle).
    def __copy__(self) -> SymbolicScope:
        return self

    def __deepcopy__(self, memo) -> SymbolicScope:
        return self

    def __reduce__(self):
        if self._is_default:
            return (_default_scope, ())
        return super().__reduce__()


_DEFAULT_SCOPE = SymbolicScope()
_DEFAULT_SCOPE._is_default = True


def _default_scope() -> SymbolicScope:
    return _DEFAULT_SCOPE


_RESERVED_NAMES = frozenset(P.OPERATIONS)

# Where errors send the user (the user guide's section on symbolic shapes).
_DOCS = "polyjax's docs/export.md"


def symbolic_dim(name: str, scope: SymbolicScope | None = None) -> DimExpr:
    """Makes the dimension variable ``name`` (which stands for an integer ``>= 1``).

    Args:
      name: a Python identifier, other than ``floordiv``, ``mod``, ``max``, ``min``.
      scope: the scope owning the variable; the shared default scope when None.

    Returns:
      The variable as a ``DimExpr``. The same name in the same scope gives equal variables.

    Raises:
      ValueError: if ``name`` is not a valid variable name.

    Example:
        >>> b = symbolic_dim("b")
        >>> 2 * b + 1
        2*b + 1
    """
    if not isinstance(name, str) or not name.isidentifier() or name in _RESERVED_NAMES:
        raise ValueError(
            f"A dimension variable name must be an identifier other than "
            f"{sorted(_RESERVED_NAMES)}; got {name!r}."
        )
    scope = _DEFAULT_SCOPE if scope is None else scope
    if not isinstance(scope, SymbolicScope):
        raise TypeError(f"scope must be a SymbolicScope or None, got {scope!r}.")
    var = scope._vars.get(name)
    if var is None:
        var = scope._vars[name] = DimExpr(P.monomial_poly(P.variable(name)), scope)
    return var


# ---------------------------------------------------------------------------------------------
# Dimension expressions


class DimExpr:
    """A symbolic dimension: a polynomial over dimension variables, in canonical form.

    Immutable and hashable. Never constant: operations whose result is constant return an
    ``int``. Supports ``+ - * // % divmod **`` with ints and other expressions of the same
    scope, comparisons (see the module docstring), ``evaluate`` and ``free_vars``. Create
    variables with ``symbolic_dim``.
    """

    __slots__ = ("_poly", "_scope", "_hash")
    __array_ufunc__ = None  # make NumPy scalars defer to our reflected operators

    def __init__(self, poly: P.Poly, scope: SymbolicScope):
        self._poly = poly
        self._scope = scope
        self._hash = hash(poly)

    @property
    def scope(self) -> SymbolicScope:
        """The scope of the variables of this expression."""
        return self._scope

    def __reduce__(self):  # the cached hash depends on the process: recompute it
        return (DimExpr, (self._poly, self._scope))

    def __copy__(self) -> DimExpr:
        return self

    def __deepcopy__(self, memo) -> DimExpr:
        return self

    # -- printing and identity -----------------------------------------------------------------

    def __str__(self) -> str:
        return P.poly_str(self._poly)

    __repr__ = __str__

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DimExpr):
            return other._scope is self._scope and other._poly == self._poly
        if isinstance(other, numbers.Integral):
            return False  # a DimExpr is never constant
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    # -- arithmetic ----------------------------------------------------------------------------

    def __add__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.add)
        return _make(P.add(self._poly, q), self._scope)

    def __radd__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.add, reflected=True)
        return _make(P.add(self._poly, q), self._scope)

    def __sub__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.sub)
        return _make(P.add(self._poly, q, -1), self._scope)

    def __rsub__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.sub, reflected=True)
        return _make(P.add(q, self._poly, -1), self._scope)

    def __neg__(self):
        return DimExpr(_neg(self._poly), self._scope)

    def __pos__(self):
        return self

    def __mul__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.mul)
        return _make(P.mul(self._poly, q), self._scope)

    def __rmul__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.mul, reflected=True)
        return _make(P.mul(self._poly, q), self._scope)

    def __pow__(self, power):
        if isinstance(power, numbers.Real) and not isinstance(power, numbers.Integral):
            raise ValueError(  # JAX's error
                f"Symbolic dimension cannot be raised to non-integer powers: '{self}' ** '{power}'"
            )
        if not isinstance(power, numbers.Integral) or power < 0:
            return NotImplemented
        result: P.Poly = P.const(1)
        for _ in range(int(power)):
            result = P.freeze(P.mul(result, self._poly))
        return _wrap(result, self._scope)

    def __floordiv__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.floordiv)
        return _wrap(_divmod(self._poly, q, self._scope)[0], self._scope)

    def __rfloordiv__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.floordiv, reflected=True)
        return _wrap(_divmod(q, self._poly, self._scope)[0], self._scope)

    def __mod__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.mod)
        return _wrap(_divmod(self._poly, q, self._scope)[1], self._scope)

    def __rmod__(self, other):
        q = _operand(other, self._scope)
        if q is None:
            return _value_op(self, other, operator.mod, reflected=True)
        return _wrap(_divmod(q, self._poly, self._scope)[1], self._scope)

    def __divmod__(self, other):
        return (self // other, self % other)

    def __rdivmod__(self, other):
        return (other // self, other % self)

    # True division never gives a dimension: as in JAX, it computes with the value.
    def __truediv__(self, other):
        return _value_op(self, other, operator.truediv, integers_too=True)

    def __rtruediv__(self, other):
        return _value_op(self, other, operator.truediv, reflected=True, integers_too=True)

    # -- comparisons ---------------------------------------------------------------------------

    def __ge__(self, other):
        return _compare(self, other, ">=")

    def __gt__(self, other):
        return _compare(self, other, ">")

    def __le__(self, other):
        return _compare(self, other, "<=")

    def __lt__(self, other):
        return _compare(self, other, "<")

    def __bool__(self) -> bool:
        # Truthiness means "!= 0"; sound only when 0 is outside the bounds.
        lo, hi = B.poly_bounds(self._poly, self._scope)
        if lo > 0 or hi < 0:
            return True
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used as a boolean is inconclusive: its value lies in "
            f"[{lo}, {hi}], so it may be 0 for some values of the dimension variables."
        )

    # -- conversions ---------------------------------------------------------------------------

    def _not_constant(self, what: str) -> InconclusiveDimensionOperation:
        return InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant ({what}). "
            "Its value is known only when the shapes are concrete; keep computing with it "
            "symbolically (e.g. 'd + 5' rather than 'int(d) + 5')."
        )

    def __index__(self) -> int:
        raise self._not_constant("operator.index")

    def __int__(self) -> int:
        raise self._not_constant("int()")

    # -- inspection ----------------------------------------------------------------------------

    def free_vars(self) -> frozenset[str]:
        """The names of the dimension variables in this expression (also inside atoms)."""
        return frozenset(P.free_vars(self._poly))

    def evaluate(self, bindings: Mapping[str, Any]) -> Any:
        """The value of this expression given values for its variables.

        Args:
          bindings: maps each variable name to an int (or to a ``DimExpr``, substituting).

        Returns:
          An int when all bindings are ints. ``//`` and ``%`` use Python's floor semantics.

        Raises:
          KeyError: naming a variable missing from ``bindings``.

        Example:
            >>> b = symbolic_dim("b")
            >>> (3 * b // 2).evaluate({"b": 5})
            7
        """
        return _eval_poly(self._poly, bindings)


DimSize = int | DimExpr
Shape = tuple[DimSize, ...]


# -- dimensions as values -----------------------------------------------------------------------

# The function that makes a dimension a traced rank-0 integer (the `dim_as_value`
# primitive). polyjax_numpy registers it: core has no lowering of its own.
_dim_as_value: list[Callable[[DimExpr], Any]] = []


def register_dim_as_value(fun: Callable[[DimExpr], Any]) -> None:
    """Registers the function that turns a dimension into a rank-0 integer value.

    With it, a dimension combined with a float, a complex, a NumPy value (or divided
    with ``/``) computes with its value, as in JAX: ``x.shape[0] * 0.5`` under export.
    """
    _dim_as_value[:] = [fun]


def dim_as_value(d: DimExpr) -> Any:
    """The dimension `d` as a rank-0 integer value (for a jitted function's results).

    Raises:
      TypeError: no value function is registered (polyjax_numpy is not loaded).
    """
    if not _dim_as_value:
        raise TypeError(f"The symbolic dimension '{d}' cannot be used as a value here.")
    return _dim_as_value[0](d)


_VALUE_OPERANDS = (float, complex, np.generic, np.ndarray)


def _value_op(
    d: DimExpr, other: Any, op: Callable, reflected: bool = False, integers_too: bool = False
) -> Any:
    if not _dim_as_value or not (
        isinstance(other, _VALUE_OPERANDS)
        or (integers_too and isinstance(other, numbers.Integral | DimExpr))
    ):
        return NotImplemented
    if isinstance(other, DimExpr):
        other = _dim_as_value[0](other)
    value = _dim_as_value[0](d)
    return op(other, value) if reflected else op(value, other)


def _neg(p: P.Poly) -> P.Poly:
    return tuple((m, -c) for m, c in p)


def _sub(p: P.Poly, q: P.Poly, c: int = 0) -> P.Poly:
    """``p - q + c``, canonical."""
    return P.freeze(P.add(P.add(p, q, -1).items(), P.const(c)))


def _wrap(p: P.Poly, scope: SymbolicScope | None) -> DimSize:
    c = P.as_const(p)
    if c is not None:
        return c
    assert scope is not None  # a polynomial with a variable came from a scoped expression
    return DimExpr(p, scope)


def _make(d: dict, scope: SymbolicScope) -> DimSize:
    return _wrap(P.freeze(d), scope)


def _operand(x: Any, scope: SymbolicScope | None) -> P.Poly | None:
    """The polynomial of an int or same-scope expression; None for unsupported types."""
    if type(x) is int:
        return P.const(x)
    if isinstance(x, DimExpr):
        if x._scope is not scope:
            _mixed_scopes(x, scope)
        return x._poly
    if isinstance(x, numbers.Integral):
        return P.const(operator.index(x))
    return None


def _poly_in(x: DimSize, scope: SymbolicScope) -> P.Poly:
    p = _operand(x, scope)
    if p is None:
        raise TypeError(f"Expected an int or a symbolic dimension, got {x!r}.")
    return p


def _mixed_scopes(x: DimExpr, scope: SymbolicScope | None):
    raise ValueError(
        f"Cannot combine symbolic dimension '{x}' of {x._scope!r} with an expression of a "
        f"different {scope!r}. Expressions can be mixed only when their variables were made "
        f"in the same SymbolicScope; see 'Symbolic scopes' in {_DOCS}."
    )


def _common_scope(*dims: DimSize) -> SymbolicScope | None:
    scope = None
    for d in dims:
        if isinstance(d, DimExpr):
            if scope is None:
                scope = d._scope
            elif d._scope is not scope:
                _mixed_scopes(d, scope)
    return scope


# -- division ----------------------------------------------------------------------------------


def _divmod(n: P.Poly, d: P.Poly, scope: SymbolicScope) -> tuple[P.Poly, P.Poly]:
    """Canonical polynomials ``(n // d, n % d)``, simplifying when possible."""
    dc, nc = P.as_const(d), P.as_const(n)
    if dc == 0:
        raise ZeroDivisionError(f"Division of '{P.poly_str(n)}' by zero.")
    if nc is not None and dc is not None:
        q, r = divmod(nc, dc)
        return P.const(q), P.const(r)
    if dc is not None and all(c % dc == 0 for m, c in n if m):
        # n = dc*q + c0: the constant term alone decides the remainder (floor semantics).
        c0 = P.constant_term(n)
        q0, r0 = divmod(c0, dc)
        quotient = {m: c // dc for m, c in n if m}
        quotient[()] = q0
        return P.freeze(quotient), P.const(r0)
    exact = P.exact_div(n, d)
    if exact is not None:
        return exact, ()
    if B.decide_ge0(n, scope) and B.decide_ge0(_sub(d, n, -1), scope):
        return (), n  # 0 <= n <= d - 1
    return _atom("floordiv", n, d, scope), _atom("mod", n, d, scope)


def _atom(op: str, x: P.Poly, y: P.Poly, scope: SymbolicScope) -> P.Poly:
    """The polynomial of a single operation atom, or a constant if its bounds pin it down."""
    f = P.Factor(op, (x, y))
    lo, hi = B.factor_bounds(f, scope)
    if lo == hi:
        return P.const(lo)
    return P.monomial_poly(f)


# -- comparisons -------------------------------------------------------------------------------


def _compare(x: DimExpr, y: Any, op: str) -> bool:
    scope = x._scope
    py = _operand(y, scope)
    if py is None:
        return NotImplemented
    px = x._poly
    # Reduce everything to "diff >= 0", for integers.
    diff = {
        ">=": lambda: _sub(px, py),
        ">": lambda: _sub(px, py, -1),
        "<=": lambda: _sub(py, px),
        "<": lambda: _sub(py, px, -1),
    }[op]()
    result = B.decide_ge0(diff, scope)
    if result is None:
        lo, hi = B.poly_bounds(diff, scope)
        raise InconclusiveDimensionOperation(_inconclusive_message(x, op, y, diff, lo, hi))
    return result


def _inconclusive_message(x, op, y, diff, lo, hi) -> str:
    constraints = x.scope.constraints
    known = "the dimension variables being >= 1"
    if constraints:
        known += " and the scope's constraints " + ", ".join(constraints)
    return (
        f"Symbolic dimension comparison '{x}' {op} '{y}' is inconclusive.\n"
        f"From {known}, we can only tell that the difference of the two sides "
        f"'{P.poly_str(diff)}' lies in [{lo}, {hi}], so the comparison is true for some values "
        "of the dimension variables and false for others. Consider dim_max/dim_min, which "
        "defer the decision until shapes are known, or add a constraint to the SymbolicScope.\n"
        f"The section 'Comparisons of symbolic dimensions' of {_DOCS} explains which can be "
        "decided."
    )


# -- evaluation --------------------------------------------------------------------------------


def _eval_poly(p: P.Poly, bindings: Mapping[str, Any]) -> Any:
    total: Any = 0
    for m, c in p:
        term: Any = c
        for f, e in m:
            term = term * _eval_factor(f, bindings) ** e
        total = total + term
    return total


def _eval_factor(f: P.Factor, bindings: Mapping[str, Any]) -> Any:
    if f.op == P.VAR:
        name = f.args[0]
        try:
            v = bindings[name]
        except KeyError:
            raise KeyError(
                f"Dimension variable '{name}' has no value in the bindings "
                f"(which bind {sorted(bindings)})."
            ) from None
        return v if isinstance(v, DimExpr) else operator.index(v)
    x, y = (_eval_poly(a, bindings) for a in f.args)
    if f.op == "floordiv":
        return x // y
    if f.op == "mod":
        return x % y
    return dim_max(x, y) if f.op == "max" else dim_min(x, y)


# ---------------------------------------------------------------------------------------------
# Public functions


def _max_min(a: DimSize, b: DimSize, op: str) -> DimSize:
    scope = _common_scope(a, b)
    pa, pb = _operand(a, scope), _operand(b, scope)
    if pa is None or pb is None:
        raise TypeError(f"{op}_dim expects ints or symbolic dimensions, got {a!r} and {b!r}.")
    if B.decide_ge0(_sub(pa, pb), scope):  # a >= b
        return _wrap(pa if op == "max" else pb, scope)
    if B.decide_ge0(_sub(pb, pa), scope):  # b >= a
        return _wrap(pb if op == "max" else pa, scope)
    # max(a, b) and max(b, a) are the same atom; print constants last: max(b, 3).
    x, y = sorted((pa, pb), key=lambda p: (P.as_const(p) is not None, P.poly_key(p)))
    assert scope is not None  # two constants were decided above
    return DimExpr(P.monomial_poly(P.Factor(op, (x, y))), scope)


def dim_max(a: DimSize, b: DimSize) -> DimSize:
    """The maximum of two dimensions, symbolic if it cannot be decided now.

    Args:
      a: an int or a ``DimExpr``.
      b: an int or a ``DimExpr``.

    Returns:
      ``a`` or ``b`` when the comparison is decidable, else the atom ``max(a, b)``.

    Example:
        >>> b = symbolic_dim("b")
        >>> dim_max(b, 1), dim_max(b, b + 2), dim_max(b, 3)
        (b, b + 2, max(b, 3))
    """
    if type(a) is int and type(b) is int:
        return a if a >= b else b
    return _max_min(a, b, "max")


def dim_min(a: DimSize, b: DimSize) -> DimSize:
    """The minimum of two dimensions, symbolic if it cannot be decided now.

    Args:
      a: an int or a ``DimExpr``.
      b: an int or a ``DimExpr``.

    Returns:
      ``a`` or ``b`` when the comparison is decidable, else the atom ``min(a, b)``.

    Example:
        >>> b = symbolic_dim("b")
        >>> dim_min(b, 0), dim_min(b, 3)
        (0, min(b, 3))
    """
    if type(a) is int and type(b) is int:
        return a if a <= b else b
    return _max_min(a, b, "min")


def is_symbolic_dim(x: Any) -> bool:
    """Whether ``x`` is a symbolic dimension (a ``DimExpr``)."""
    return isinstance(x, DimExpr)


def is_constant_dim(x: Any) -> bool:
    """Whether ``x`` is a constant dimension: an int or NumPy integer (not a bool)."""
    return type(x) is int or (
        isinstance(x, numbers.Integral)
        and not isinstance(x, bool | np.bool_)
        and not isinstance(x, DimExpr)
    )


def is_dim(x: Any) -> bool:
    """Whether ``x`` may be a dimension size: an int, a NumPy integer or a ``DimExpr``."""
    return type(x) is int or isinstance(x, DimExpr) or is_constant_dim(x)


def evaluate(dim: DimSize, bindings: Mapping[str, Any]) -> Any:
    """The value of a dimension given values for the dimension variables.

    Args:
      dim: an int (returned unchanged) or a ``DimExpr``.
      bindings: maps variable names to ints (or to ``DimExpr`` s, to substitute).

    Returns:
      The value; an int when ``bindings`` has ints.

    Raises:
      KeyError: naming a variable of ``dim`` missing from ``bindings``.

    Example:
        >>> a, b = symbolic_dim("a"), symbolic_dim("b")
        >>> evaluate(a * b + 1, {"a": 2, "b": 3})
        7
    """
    if isinstance(dim, DimExpr):
        return dim.evaluate(bindings)
    return operator.index(dim)


def shape_vars(shapes: Iterable[Sequence[DimSize]]) -> tuple[str, ...]:
    """The sorted names of all dimension variables in some shapes.

    Lowering passes these, in this order, as the leading ``i32`` arguments of functions.

    Example:
        >>> a, b = symbolic_dim("a"), symbolic_dim("b")
        >>> shape_vars([(b, 3), (a * 2,), ()])
        ('a', 'b')
    """
    names: set[str] = set()
    for shape in shapes:
        for d in shape:
            if isinstance(d, DimExpr):
                names |= P.free_vars(d._poly)
    return tuple(sorted(names))


def bounds(dim: DimSize) -> tuple[int | float, int | float]:
    """Known lower and upper bounds of a dimension (``-inf``/``inf`` when unbounded).

    Example:
        >>> b = symbolic_dim("b")
        >>> bounds(b), bounds(5 - b), bounds(b % 4), bounds(7)
        ((1, inf), (-inf, 4), (0, 3), (7, 7))
    """
    if isinstance(dim, DimExpr):
        return B.poly_bounds(dim._poly, dim._scope)
    d = operator.index(dim)
    return (d, d)


def definitely_equal(a: DimSize, b: DimSize) -> bool:
    """Whether two dimensions are equal for all values of the dimension variables.

    False when they may differ (``a`` vs ``b``, ``b`` vs ``1``), as for ``==``; never raises,
    also not for expressions of different scopes (they are not equal).
    """
    if type(a) is int and type(b) is int:
        return a == b
    if isinstance(a, DimExpr) or isinstance(b, DimExpr):
        return isinstance(a, DimExpr) and isinstance(b, DimExpr) and a == b
    return a == b


def definitely_equal_shape(s1: Sequence[DimSize], s2: Sequence[DimSize]) -> bool:
    """Whether two shapes have the same rank and definitely equal dimensions."""
    return len(s1) == len(s2) and all(definitely_equal(a, b) for a, b in zip(s1, s2))


def _describe(x: Any) -> str:
    if x is None:
        return "None"
    if isinstance(x, bool | np.bool_):
        return f"the bool {x!r}"
    if isinstance(x, numbers.Integral):
        return f"the negative integer {x!r}"
    if isinstance(x, DimExpr):
        return f"the symbolic dimension '{x}', which is always negative"
    return f"{x!r} of type {type(x).__name__}"


def _dim_error(x: Any, context: str, where: str = "") -> TypeError:
    prefix = f"{context}: " if context else ""
    return TypeError(
        f"{prefix}Shapes must be sequences of non-negative integers or symbolic dimensions; "
        f"got {_describe(x)}{where}."
    )


def canonicalize_dim(d: Any, context: str = "") -> DimSize:
    """Checks a dimension size and returns it as an ``int`` or a ``DimExpr``.

    Args:
      d: an int, a NumPy integer or a ``DimExpr``.
      context: a prefix for the error message, e.g. ``"reshape new_sizes"``.

    Returns:
      ``d`` as a Python int, or the ``DimExpr`` unchanged.

    Raises:
      TypeError: for floats, bools, None, negative ints, definitely negative expressions and
        anything else, naming the offending value and the context.
    """
    if type(d) is int:
        if d >= 0:
            return d
        raise _dim_error(d, context)
    if isinstance(d, DimExpr):
        if B.poly_bounds(d._poly, d._scope)[1] < 0:
            raise _dim_error(d, context)
        return d
    if isinstance(d, numbers.Integral) and not isinstance(d, bool | np.bool_):
        v = operator.index(d)
        if v >= 0:
            return v
    raise _dim_error(d, context)


def canonicalize_shape(shape: Any, context: str = "") -> Shape:
    """Checks a shape and returns it as a tuple of ints and ``DimExpr`` s.

    Args:
      shape: a sequence (tuple, list, 1-D array) of dimension sizes.
      context: a prefix for the error message.

    Returns:
      The shape as a tuple, NumPy integers turned into ints.

    Raises:
      TypeError: if ``shape`` is not a sequence, or an element is not a valid dimension
        (the error names the element, its position and the whole shape).

    Example:
        >>> canonicalize_shape([2, np.int64(3), symbolic_dim("b")])
        (2, 3, b)
    """
    if isinstance(shape, tuple) and all(type(d) is int and d >= 0 for d in shape):
        return shape
    if isinstance(shape, str | bytes) or not isinstance(shape, Iterable) or is_dim(shape):
        prefix = f"{context}: " if context else ""
        raise TypeError(
            f"{prefix}Shapes must be sequences of non-negative integers or symbolic "
            f"dimensions; got {shape!r} of type {type(shape).__name__}."
        )
    shape = tuple(shape)
    out = []
    for i, d in enumerate(shape):
        try:
            out.append(canonicalize_dim(d))
        except TypeError:
            raise _dim_error(d, context, f" at position {i} of the shape {shape!r}") from None
    return tuple(out)


def is_empty_shape(shape: Sequence[DimSize]) -> bool:
    """Whether a shape definitely has a zero dimension."""
    return any(type(d) is int and d == 0 for d in shape)


def broadcast_shapes(*shapes: Sequence[DimSize]) -> Shape:
    """NumPy's broadcasting of shapes, accepting symbolic dimensions.

    Shapes are aligned on the right; a dimension of 1 stretches to the other,
    and any other two dimensions must be equal (for symbolic ones: provably).

    Raises:
      ValueError: the shapes do not broadcast; the message names them all.

    Example:
      >>> broadcast_shapes((3, 1), (4,))
      (3, 4)
    """
    if all(all(type(d) is int for d in s) for s in shapes):
        try:
            return tuple(np.broadcast_shapes(*shapes))
        except ValueError:
            raise ValueError(_incompatible(shapes)) from None
    ndim = max((len(s) for s in shapes), default=0)
    result: list[DimSize] = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if definitely_equal(d, 1) or definitely_equal(d, result[i]):
                continue
            if not definitely_equal(result[i], 1):
                raise ValueError(_incompatible(shapes))
            result[i] = d
    return tuple(result)


def _incompatible(shapes: Sequence[Sequence[DimSize]]) -> str:
    listed = ", ".join(str(tuple(s)) for s in shapes)
    return f"Incompatible shapes for broadcasting: {listed}"


def shape_size(shape: Sequence[DimSize]) -> DimSize:
    """The number of elements of a shape: the product of its dimensions (symbolic ok)."""
    size: DimSize = 1
    for d in shape:
        size = d * size
    return size


def divide_shape_sizes(s1: Sequence[DimSize], s2: Sequence[DimSize]) -> DimSize:
    """``shape_size(s1) // shape_size(s2)``, requiring an exact division (as for reshape).

    Returns 1 when both sizes are 0 (any size fits an empty array).

    Raises:
      InconclusiveDimensionOperation: if the division may leave a remainder, or the divisor
        is 0 while the dividend is not.

    Example:
        >>> b = symbolic_dim("b")
        >>> divide_shape_sizes((4 * b, 3), (2, 3))
        2*b
    """
    n, d = shape_size(s1), shape_size(s2)
    if type(n) is int and type(d) is int:
        if d == 0:
            if n == 0:
                return 1
            raise InconclusiveDimensionOperation(
                f"Cannot divide the size of shape {tuple(s1)} by the size 0 of shape {tuple(s2)}."
            )
        q, r = divmod(n, d)
    else:
        if d == 0:
            raise InconclusiveDimensionOperation(
                f"Cannot divide the size of shape {tuple(s1)} by the size 0 of shape {tuple(s2)}."
            )
        q, r = divmod(n, d)
    if r != 0:
        raise InconclusiveDimensionOperation(
            f"Cannot divide evenly the sizes of shapes {tuple(s1)} and {tuple(s2)}: the "
            f"remainder '{r}' should be 0."
        )
    return q


def stride_dim(d: DimSize, window_size: DimSize, window_stride: DimSize) -> DimSize:
    """The number of windows of ``window_size`` that fit in ``d`` at ``window_stride``.

    ``(d - window_size) // window_stride + 1``, and 0 when the window does not fit.

    Example:
        >>> stride_dim(10, 3, 2), stride_dim(2, 3, 1)
        (4, 0)
    """
    if type(d) is int and type(window_size) is int and type(window_stride) is int:
        return 0 if d < window_size else (d - window_size) // window_stride + 1
    # max(d - w, -1) // s + 1 is 0 when d < w (for s >= 1) and the usual formula otherwise.
    return dim_max(d - window_size, -1) // window_stride + 1


def stride_shape(
    shape: Sequence[DimSize], window_sizes: Sequence[DimSize], strides: Sequence[DimSize]
) -> Shape:
    """``stride_dim`` applied along each axis."""
    return tuple(stride_dim(d, w, s) for d, w, s in zip(shape, window_sizes, strides))


def dilate_dim(d: DimSize, dilation: DimSize) -> DimSize:
    """The size of ``d`` elements spread ``dilation`` apart: ``1 + dilation*(d - 1)``, or 0.

    Example:
        >>> dilate_dim(3, 2), dilate_dim(0, 2)
        (5, 0)
    """
    if type(d) is int and type(dilation) is int:
        return 0 if d == 0 else 1 + dilation * (d - 1)
    # For d >= 1 this is the formula; for d == 0, 1 - dilation <= 0 becomes 0.
    return dim_max(0, 1 + dilation * (d - 1))


def dilate_shape(shape: Sequence[DimSize], dilation: Sequence[DimSize]) -> Shape:
    """``dilate_dim`` applied along each axis."""
    return tuple(dilate_dim(d, k) for d, k in zip(shape, dilation))
