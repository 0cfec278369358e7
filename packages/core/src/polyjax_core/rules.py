"""Rule tables: how each interpreter finds its rule for a primitive.

ARCHITECTURE decision 3: a primitive is declared once; every interpreter owns
a table mapping primitives to its rules (jvp, transpose, batching, lowering per
platform...), and the module defining a primitive registers into them. A
missing rule is a `NotImplementedError` naming the primitive and the
transformation, never a `KeyError`.

Example:
  >>> from polyjax_core.primitive import Primitive
  >>> sin_p = Primitive("sin")
  >>> jvp_rules = RuleTable("differentiation (jvp)")
  >>> @jvp_rules.register(sin_p)
  ... def _sin_jvp(primals, tangents): ...
  >>> jvp_rules[sin_p] is _sin_jvp
  True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["RuleTable"]


class RuleTable(dict):
    """A dict from primitives to rules that explains a missing rule."""

    def __init__(self, transformation: str):
        super().__init__()
        self.transformation = transformation

    def __missing__(self, primitive: Any) -> Any:
        raise NotImplementedError(
            f"The {self.transformation} rule for primitive '{primitive}' is not implemented."
        )

    def register(self, primitive: Any) -> Callable[[Callable], Callable]:
        """Decorator registering a rule for `primitive`."""

        def deco(rule: Callable) -> Callable:
            self[primitive] = rule
            return rule

        return deco

    def __repr__(self) -> str:
        return f"RuleTable({self.transformation!r}, {len(self)} rules)"
