"""A small pretty-printing library (Wadler-style documents), used to print jaxprs.

A document is text with *optional line breaks*. A `group` is laid out on one
line if it fits in the remaining width, otherwise its breaks become newlines
indented by the enclosing `nest`s. That is how a short jaxpr prints as one
line and a long one as one equation per line, with sub-jaxprs indented.

    group(text("f[") + nest(2, brk("") + text("x=1")) + brk("") + text("]"))
      -> "f[x=1]"  when it fits, else  "f[\\n  x=1\\n]"
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Doc", "brk", "concat", "format_doc", "group", "join", "nest", "text"]


class Doc:
    __slots__ = ()

    def __add__(self, other: Doc) -> Doc:
        return Concat((self, other))


class Text(Doc):
    __slots__ = ("s",)

    def __init__(self, s: str):
        self.s = s


class Break(Doc):
    """A space (or `flat`) when its group fits; a newline plus indentation when not."""

    __slots__ = ("flat",)

    def __init__(self, flat: str):
        self.flat = flat


class Concat(Doc):
    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Doc, ...]):
        self.parts = parts


class Nest(Doc):
    __slots__ = ("indent", "doc")

    def __init__(self, indent: int, doc: Doc):
        self.indent = indent
        self.doc = doc


class Group(Doc):
    __slots__ = ("doc",)

    def __init__(self, doc: Doc):
        self.doc = doc


def text(s: str) -> Doc:
    return Text(s)


def brk(flat: str = " ") -> Doc:
    return Break(flat)


def concat(docs: Iterable[Doc]) -> Doc:
    return Concat(tuple(docs))


def nest(indent: int, doc: Doc) -> Doc:
    return Nest(indent, doc)


def group(doc: Doc) -> Doc:
    return Group(doc)


def join(sep: Doc, docs: Iterable[Doc]) -> Doc:
    out: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return Concat(tuple(out))


def _flat_width(doc: Doc, limit: int) -> int:
    """Width of `doc` laid out flat, stopping early once it exceeds `limit`."""
    width = 0
    stack = [doc]
    while stack and width <= limit:
        d = stack.pop()
        if isinstance(d, Text):
            width += len(d.s)
        elif isinstance(d, Break):
            width += len(d.flat)
        elif isinstance(d, Concat):
            stack.extend(reversed(d.parts))
        else:
            assert isinstance(d, (Nest, Group))
            stack.append(d.doc)
    return width


def format_doc(doc: Doc, width: int = 80) -> str:
    """Lays `doc` out within `width` columns (a group that does not fit is broken)."""
    out: list[str] = []
    column = 0
    # (indent, flat, doc): `flat` says whether the enclosing group fitted.
    stack: list[tuple[int, bool, Doc]] = [(0, False, doc)]
    while stack:
        indent, flat, d = stack.pop()
        if isinstance(d, Text):
            out.append(d.s)
            column += len(d.s)
        elif isinstance(d, Break):
            if flat:
                out.append(d.flat)
                column += len(d.flat)
            else:
                out.append("\n" + " " * indent)
                column = indent
        elif isinstance(d, Concat):
            stack.extend((indent, flat, p) for p in reversed(d.parts))
        elif isinstance(d, Nest):
            stack.append((indent + d.indent, flat, d.doc))
        else:
            assert isinstance(d, Group)
            fits = flat or _flat_width(d.doc, width - column) <= width - column
            stack.append((indent, fits, d.doc))
    return "".join(out)
