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
    "DebugEffect",
    "Effect",
    "EffectTypeSet",
    "Effects",
    "IOEffect",
    "OrderedDebugEffect",
    "OrderedIOEffect",
    "batched_loop_disallowed_effects",
    "control_flow_allowed_effects",
    "custom_derivatives_allowed_effects",
    "debug_effect",
    "io_effect",
    "lowerable_effects",
    "no_effects",
    "ordered_debug_effect",
    "ordered_effects",
    "ordered_io_effect",
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
# Effects whose repetition would be observable: a `while_loop` whose predicate
# is batched by `vmap` runs its body for every example while any is still
# looping, so these may not appear in its body there.
batched_loop_disallowed_effects = EffectTypeSet("batched_loop_disallowed")


# ---------------------------------------------------------------------------
# The effects of host callbacks. Further kinds (checkify's errors, say) are new
# `Effect` subclasses added to the sets above that describe them.


class IOEffect(Effect):
    """A callback that touches the outside world, in no particular order (`io_callback`)."""

    def __repr__(self) -> str:
        return "IO"  # (as JAX prints it in a jaxpr's params)


class OrderedIOEffect(Effect):
    """An `io_callback(..., ordered=True)`: happens in program order."""

    def __repr__(self) -> str:
        return "OrderedIO"


class DebugEffect(Effect):
    """A debugging callback (`debug.print`, `debug.callback`), in no particular order."""

    def __repr__(self) -> str:
        return "Debug"


class OrderedDebugEffect(Effect):
    """A debugging callback asked to keep program order (``ordered=True``)."""

    def __repr__(self) -> str:
        return "OrderedDebug"


io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()
debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()

for _t in (IOEffect, OrderedIOEffect, DebugEffect, OrderedDebugEffect):
    lowerable_effects.add_type(_t)
    control_flow_allowed_effects.add_type(_t)
    custom_derivatives_allowed_effects.add_type(_t)
    remat_allowed_effects.add_type(_t)
ordered_effects.add_type(OrderedIOEffect)
ordered_effects.add_type(OrderedDebugEffect)
batched_loop_disallowed_effects.add_type(OrderedIOEffect)
del _t
