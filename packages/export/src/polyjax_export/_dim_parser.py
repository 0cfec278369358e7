"""Reading dimension expressions back from the strings that serialization stores.

A serialized aval keeps each dimension as its printed form (``"4"``, ``"b"``,
``"2*b + 1"``, ``"floordiv(b, 3)"``, ``"max(a, 4)"``, ``"- b + a"``). `parse_dim`
rebuilds the expression with the arithmetic of `polyjax_core.symbolic_dims`, so
the result is in canonical form whatever order the terms were printed in.

The grammar (a small recursive-descent parser)::

    sum    := ["-"] term (("+" | "-") term)*
    term   := factor (("*" | "//" | "%") factor)*
    factor := INT | NAME | NAME "(" sum "," sum ")" | "(" sum ")" | "-" factor
"""

from __future__ import annotations

import re

from polyjax_core import symbolic_dims as sd

__all__ = ["parse_dim"]

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(//|[-+*%(),]))")
_FUNCTIONS = {
    "floordiv": lambda x, y: x // y,
    "mod": lambda x, y: x % y,
    "max": sd.dim_max,
    "min": sd.dim_min,
}


def _tokens(text: str) -> list[str]:
    out, pos, text = [], 0, text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected character {text[pos:].lstrip()[:1]!r}")
        out.append(m.group(m.lastindex))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str, scope: sd.SymbolicScope):
        self.toks = _tokens(text)
        self.i = 0
        self.scope = scope

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise ValueError(f"expected {expected or 'more'!r}, found {tok!r}")
        self.i += 1
        return tok

    def sum(self):
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            rhs = self.term()
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(self):
        value = self.factor()
        while self.peek() in ("*", "//", "%"):
            op = self.take()
            rhs = self.factor()
            value = value * rhs if op == "*" else value // rhs if op == "//" else value % rhs
        return value

    def factor(self):
        tok = self.take()
        if tok == "-":
            return -self.factor()
        if tok == "(":
            value = self.sum()
            self.take(")")
            return value
        if tok.isdigit():
            return int(tok)
        if tok[0].isalpha() or tok[0] == "_":
            if self.peek() == "(":
                if tok not in _FUNCTIONS:
                    raise ValueError(f"unknown function {tok!r}")
                self.take("(")
                x = self.sum()
                self.take(",")
                y = self.sum()
                self.take(")")
                return _FUNCTIONS[tok](x, y)
            return sd.symbolic_dim(tok, self.scope)
        raise ValueError(f"unexpected {tok!r}")


def parse_dim(text: str, scope: sd.SymbolicScope) -> sd.DimSize:
    """The dimension that `text` prints, with its variables in `scope`.

    Args:
      text: a dimension as `str()` prints it: an integer or an expression.
      scope: the `SymbolicScope` of the variables.

    Returns:
      An ``int`` or a `DimExpr`.

    Raises:
      ValueError: if `text` is not a dimension expression.

    Example:
      >>> str(parse_dim("b + 2*b", sd.SymbolicScope()))
      '3*b'
    """
    try:
        parser = _Parser(text, scope)
        value = parser.sum()
        if parser.peek() is not None:
            raise ValueError(f"unexpected {parser.peek()!r}")
    except (ValueError, ZeroDivisionError, sd.InconclusiveDimensionOperation) as e:
        raise ValueError(f"Invalid dimension {text!r}: {e}") from None
    return value
