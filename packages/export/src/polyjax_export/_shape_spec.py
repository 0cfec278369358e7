"""The language of symbolic shape specifications: ``"b, 2*a, _, ..."``.

A specification is a comma-separated list of dimensions, optionally in
parentheses. Each dimension is an integer, ``_`` (the size of the same
dimension of ``like``), ``...`` (all remaining dimensions of ``like``, only
last), or an expression over dimension variables::

    expr   := ["-"] term (("+" | "-") term)*
    term   := power (("*" | "//" | "%") power)*
    power  := atom ["^" INT]
    atom   := INT | NAME | OP "(" expr "," expr ")" | "(" expr ")"
    OP     := max | min | mod | floordiv

Constraints are ``expr >= expr``, ``expr <= expr`` or ``expr == expr``. The
expressions are built with core's `DimExpr` arithmetic, so ``"2*b + 1"`` and
``"1 + b*2"`` give the same, canonical, expression.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from polyjax_core import symbolic_dims as sd

__all__ = [
    "SymbolicScope",
    "is_symbolic_dim",
    "parse_constraint",
    "parse_dim",
    "symbolic_args_specs",
    "symbolic_shape",
]

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d*)?)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>\.\.\.|//|[-+*%^(),]))"
)
_FUNCTIONS = {"max": sd.dim_max, "min": sd.dim_min, "mod": None, "floordiv": None}


class SymbolicScope(sd.SymbolicScope):
    """A scope for dimension variables and the constraints between them.

    Args:
      constraints_str: constraints such as ``"a >= b + 2"`` (``>=``, ``<=``,
        ``==``), used to decide comparisons of the scope's expressions.

    Example:
        >>> scope = SymbolicScope(["a >= b + 2"])
        >>> a, b = symbolic_shape("a, b", scope=scope)
        >>> a > b
        True
    """

    def __init__(self, constraints_str: Sequence[str] | str = ()):
        super().__init__()
        if isinstance(constraints_str, str):
            raise ValueError(
                "The symbolic constraints should be a sequence of strings. "
                f"Got {constraints_str!r}."
            )
        for c in constraints_str:
            lhs, cmp, rhs = parse_constraint(c, self)
            self.add_constraint(lhs, cmp, rhs)


class _Parser:
    """Recursive descent over the tokens of one specification."""

    def __init__(self, text: str, scope: sd.SymbolicScope, what: str):
        self.text, self.scope, self.what = text, scope, what
        self.toks: list[tuple[str, str, int]] = []
        self.i = 0
        self.dim_index = 0
        pos = 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip() == "":
                    break
                raise self.error(f"unexpected character {text[pos:].lstrip()[0]!r}", at=pos)
            kind = m.lastgroup
            self.toks.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()

    # -- tokens ------------------------------------------------------------------------------

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def kind(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def take(self) -> str:
        tok = self.toks[self.i][1]
        self.i += 1
        return tok

    def expect(self, tok: str) -> None:
        if self.peek() != tok:
            found = "the end" if self.peek() is None else repr(self.peek())
            raise self.error(f"expected {tok!r} but found {found}")
        self.i += 1

    def error(self, msg: str, at: int | None = None) -> ValueError:
        if at is None:
            at = self.toks[self.i][2] if self.i < len(self.toks) else len(self.text)
        return ValueError(
            f"syntax error in {self.what} {self.text!r}"
            + (f" in dimension {self.dim_index}" if self.what == "symbolic shape" else "")
            + f": {msg}. Parsed {self.text[:at]!r}, remaining {self.text[at:]!r}."
        )

    # -- grammar -----------------------------------------------------------------------------

    def expr(self) -> sd.DimSize:
        negate = False
        if self.peek() == "-":
            self.take()
            negate = True
        value = self.term()
        if negate:
            value = -value
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self) -> sd.DimSize:
        value = self.power()
        while self.peek() in ("*", "//", "%"):
            op = self.take()
            rhs = self.power()
            value = self.binop(op, value, rhs)
        return value

    def binop(self, op: str, x: sd.DimSize, y: sd.DimSize) -> sd.DimSize:
        if op == "*":
            return x * y
        if y == 0:
            raise self.error("division by zero")
        return x // y if op == "//" else x % y

    def power(self) -> sd.DimSize:
        value = self.atom()
        if self.peek() == "^":
            self.take()
            if self.kind() != "num" or not self.peek().isdigit():
                raise self.error("expected an integer exponent")
            value = value ** int(self.take())
        return value

    def atom(self) -> sd.DimSize:
        kind, tok = self.kind(), self.peek()
        if kind == "num":
            if not tok.isdigit():
                raise self.error(f"expecting integer, found {tok}")
            self.take()
            return int(tok)
        if tok == "(":
            self.take()
            value = self.expr()
            self.expect(")")
            return value
        if kind == "name" and tok != "_":
            self.take()
            if tok in _FUNCTIONS and self.peek() == "(":
                self.take()
                x = self.expr()
                self.expect(",")
                y = self.expr()
                self.expect(")")
                if tok in ("max", "min"):
                    return _FUNCTIONS[tok](x, y)
                return self.binop("//" if tok == "floordiv" else "%", x, y)
            return sd.symbolic_dim(tok, self.scope)
        found = "the end" if tok is None else repr(tok)
        raise self.error(f"expected an integer, a name, '-' or '(' but found {found}")

    def at_end(self) -> bool:
        return self.i >= len(self.toks)


def symbolic_shape(
    shape_spec: str | None,
    *,
    constraints: Sequence[str] = (),
    scope: sd.SymbolicScope | None = None,
    like: Sequence[int | None] | None = None,
) -> tuple[sd.DimSize, ...]:
    """Parses a shape specification into a tuple of ints and symbolic dimensions.

    Args:
      shape_spec: e.g. ``"b, 2*a, 3"``; ``_`` takes a dimension from ``like``,
        a final ``...`` takes all remaining dimensions of ``like``. ``None``
        means ``"..."``.
      constraints: constraint strings (``"a >= b"``) for a new scope; give
        either these or ``scope``.
      scope: the `SymbolicScope` the variables belong to; a new one (with
        ``constraints``) when None.
      like: a shape giving the sizes for ``_`` and ``...``, and checked
        against constant dimensions.

    Returns:
      The shape, as a tuple of ints and `DimExpr`s.

    Raises:
      ValueError: a syntax error (naming the dimension and what was parsed),
        ``_``/``...`` without ``like``, a constant that differs from ``like``,
        both ``constraints`` and ``scope`` given.

    Example:
        >>> symbolic_shape("b, 2*a, ...", like=(3, 4, 5))
        (b, 2*a, 5)
    """
    if shape_spec is None:
        shape_spec = "..."
    if not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. Found {shape_spec}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError(
            "Cannot specify both a `scope` and `constraints`: the constraints belong to the "
            "scope; create it with SymbolicScope(constraints)."
        )
    elif not isinstance(scope, sd.SymbolicScope):
        raise TypeError(f"scope must be a SymbolicScope or None, got {scope!r}.")
    return _parse_shape(shape_spec, scope, None if like is None else tuple(like))


def _parse_shape(
    spec: str, scope: sd.SymbolicScope, like: tuple[Any, ...] | None
) -> tuple[sd.DimSize, ...]:
    p = _Parser(spec, scope, "symbolic shape")
    parens = p.peek() == "(" and _is_outer_paren(p)
    if parens:
        p.take()
    dims: list[sd.DimSize] = []
    while not p.at_end() and not (parens and p.peek() == ")"):
        p.dim_index = len(dims)
        if p.peek() == "...":
            p.take()
            if like is None:
                raise p.error("spec contains ... but no 'like' shape was given")
            dims.extend(_known(p, like, i) for i in range(len(dims), len(like)))
            if not p.at_end() and not (parens and p.peek() == ")"):
                raise p.error("'...' may only be the last dimension")
            break
        if p.peek() == "_":
            p.take()
            if like is None or len(dims) >= len(like):
                raise p.error("spec contains _ but no 'like' shape was given for it")
            dims.append(_known(p, like, len(dims)))
        else:
            d = p.expr()
            if type(d) is int and like is not None and len(dims) < len(like):
                if like[len(dims)] is not None and like[len(dims)] != d:
                    raise p.error(f"different size {d} for known dimension; like={like}")
            dims.append(d)
        if p.at_end() or (parens and p.peek() == ")"):
            break
        p.expect(",")
    if parens:
        p.expect(")")
    if not p.at_end():
        raise p.error(f"unexpected {p.peek()!r}")
    for d in dims:
        if type(d) is int and d < 0:
            raise ValueError(f"Dimension {d} in symbolic shape {spec!r} is negative.")
    return tuple(dims)


def _is_outer_paren(p: _Parser) -> bool:
    """Whether the first ``(`` closes at the end (or before a trailing comma)."""
    depth = 0
    for j, (_, tok, _) in enumerate(p.toks):
        depth += {"(": 1, ")": -1}.get(tok, 0)
        if depth == 0:
            return j == len(p.toks) - 1
    return False


def _known(p: _Parser, like: tuple[Any, ...], i: int) -> int:
    d = like[i]
    if d is None:
        raise p.error(f"dimension {i} of like={like} is not known, it cannot be taken by _ or ...")
    return d


def parse_constraint(text: str, scope: sd.SymbolicScope) -> tuple[sd.DimSize, str, sd.DimSize]:
    """Parses ``"lhs >= rhs"`` (or ``<=``, ``==``) into ``(lhs, cmp, rhs)``.

    Raises:
      ValueError: no comparison, or a syntax error in either side.
    """
    if not isinstance(text, str):
        raise ValueError(f"A symbolic constraint must be a string, got {text!r}.")
    for cmp in (">=", "<=", "=="):
        if cmp in text:
            lhs_text, rhs_text = text.split(cmp, 1)
            return _parse_expr(lhs_text, text, scope), cmp, _parse_expr(rhs_text, text, scope)
    raise ValueError(
        f"Constraint parsing error: must contain one of '==' or '>=' or '<=', got {text!r}."
    )


def _parse_expr(
    part: str, whole: str, scope: sd.SymbolicScope, what: str | None = None
) -> sd.DimSize:
    p = _Parser(part, scope, what or f"symbolic constraint {whole!r}, in the part")
    value = p.expr()
    if not p.at_end():
        raise p.error(f"unexpected {p.peek()!r}")
    return value


def parse_dim(text: str, scope: sd.SymbolicScope) -> sd.DimSize:
    """The dimension that `text` prints (``"4"``, ``"2*b + 1"``), its variables in `scope`.

    This reads back the dimensions that serialization stores as strings.

    Raises:
      ValueError: if `text` is not a dimension expression.

    Example:
      >>> str(parse_dim("b + 2*b", SymbolicScope()))
      '3*b'
    """
    try:
        return _parse_expr(text, text, scope, what="dimension")
    except (ValueError, ZeroDivisionError, sd.InconclusiveDimensionOperation) as e:
        raise ValueError(f"Invalid dimension {text!r}: {e}") from None


def symbolic_args_specs(
    args: Any,
    shapes_specs: Any,
    constraints: Sequence[str] = (),
    scope: sd.SymbolicScope | None = None,
) -> Any:
    """``ShapeDtypeStruct``s for ``args`` with the symbolic shapes of ``shapes_specs``.

    Args:
      args: a pytree of arrays or anything with ``shape`` and ``dtype``.
      shapes_specs: a specification string (or None) for every leaf, or a
        pytree prefix of ``args`` with one specification per subtree.
      constraints: constraints of the scope, when ``scope`` is None.
      scope: the scope shared by all the shapes; a new one when None.

    Returns:
      The pytree of ``args`` with ``ShapeDtypeStruct`` leaves.

    Example:
        >>> import numpy as np
        >>> symbolic_args_specs((np.ones((3, 4)), np.ones(2)), "b, ...")
        (ShapeDtypeStruct(shape=(b, 4), dtype=float32), ShapeDtypeStruct(shape=(b,), dtype=float32))
    """
    from polyjax_core import ShapeDtypeStruct, dtypes
    from polyjax_core.tree_util import tree_flatten, tree_unflatten

    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    leaves, tree = tree_flatten(args)
    if shapes_specs is None or isinstance(shapes_specs, str):
        specs = [shapes_specs] * len(leaves)
    else:
        specs = _broadcast_specs(shapes_specs, args)
    out = []
    for leaf, spec in zip(leaves, specs):
        shape = symbolic_shape(spec, scope=scope, like=tuple(leaf.shape))
        # As JAX: the dtype the value would have as an array (float64 -> float32 without x64).
        dtype = dtypes.canonicalize_dtype(leaf.dtype, allow_extended_dtype=True)
        out.append(ShapeDtypeStruct(shape, dtype))
    return tree_unflatten(tree, out)


def _broadcast_specs(specs: Any, args: Any) -> list[Any]:
    from polyjax_core.tree_util import tree_flatten, tree_structure

    spec_leaves, spec_tree = tree_flatten(specs, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_tree.flatten_up_to(args)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"shapes_specs must be a string or None, or a pytree prefix of the arguments; "
            f"{tree_structure(specs)} does not match {tree_structure(args)}: {e}"
        ) from None
    out: list[Any] = []
    for spec, sub in zip(spec_leaves, subtrees):
        out.extend([spec] * len(tree_flatten(sub)[0]))
    return out


def is_symbolic_dim(p: Any) -> bool:
    """Whether ``p`` is a symbolic dimension (not a constant).

    Example:
        >>> b, = symbolic_shape("b")
        >>> is_symbolic_dim(b), is_symbolic_dim(3)
        (True, False)
    """
    return sd.is_symbolic_dim(p)
