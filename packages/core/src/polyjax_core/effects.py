"""Effects: what a primitive does besides computing its outputs.

Most primitives are pure. A few (printing, callbacks, stateful RNG) have
*effects*, which tracing must keep in order and transformations must not
drop, duplicate or reorder. An effect is an instance of an `Effect` subclass;
an equation carries the set of its effects and a jaxpr the union of those of
its equations.

Properties of effect *types* are declared by adding them to an `EffectTypeSet`
(e.g. `ordered_effects.add_type(MyEffect)`), so each interpreter can ask only
what it needs ("may this effect appear inside a loop body?") without knowing
every effect.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "Effect",
    "EffectTypeSet",
    "Effects",
    "control_flow_allowed_effects",
    "custom_derivatives_allowed_effects",
    "lowerable_effects",
    "no_effects",
    "ordered_effects",
    "remat_allowed_effects",
]


class Effect:
    """Base class of effects. Subclasses must be hashable; equal effects merge."""

    def __repr__(self) -> str:
        return type(self).__name__


Effects = frozenset  # a set of effects; kept a frozenset so equations stay hashable
no_effects: frozenset[Effect] = frozenset()


class EffectTypeSet:
    """A named set of effect types with one property in common."""

    def __init__(self, name: str):
        self.name = name
        self._types: set[type[Effect]] = set()

    def add_type(self, effect_type: type[Effect]) -> None:
        self._types.add(effect_type)

    def contains(self, effect: Effect) -> bool:
        return isinstance(effect, tuple(self._types))

    def filter_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Effect]) -> list[Effect]:
        return [e for e in effects if not self.contains(e)]

    def __repr__(self) -> str:
        return f"EffectTypeSet({self.name!r})"


ordered_effects = EffectTypeSet("ordered")
lowerable_effects = EffectTypeSet("lowerable")
control_flow_allowed_effects = EffectTypeSet("control_flow_allowed")
custom_derivatives_allowed_effects = EffectTypeSet("custom_derivatives_allowed")
remat_allowed_effects = EffectTypeSet("remat_allowed")
