"""Effect kinds and the type sets that describe them (what each transformation asks)."""

import pytest

from polyjax_core import effects as fx


@pytest.mark.parametrize(
    "effect, ordered, batched_loop_disallowed, printed",
    [
        (fx.io_effect, False, False, "IO"),
        (fx.ordered_io_effect, True, True, "OrderedIO"),
        (fx.debug_effect, False, False, "Debug"),
        (fx.ordered_debug_effect, True, False, "OrderedDebug"),
    ],
)
def test_callback_effects_and_their_properties(effect, ordered, batched_loop_disallowed, printed):
    assert fx.ordered_effects.contains(effect) is ordered
    assert fx.batched_loop_disallowed_effects.contains(effect) is batched_loop_disallowed
    for allowed in (
        fx.lowerable_effects,
        fx.control_flow_allowed_effects,
        fx.custom_derivatives_allowed_effects,
        fx.remat_allowed_effects,
    ):
        assert allowed.contains(effect), allowed
    assert repr(effect) == printed


def test_a_new_effect_kind_joins_the_sets_it_declares():
    class Audit(fx.Effect):
        pass

    audit = Audit()
    sets = fx.EffectTypeSet("test_only")
    assert not sets.contains(audit) and repr(audit) == "Audit"
    sets.add_type(Audit)
    both = [audit, fx.debug_effect]
    assert sets.filter_in(both) == [audit] and sets.filter_not_in(both) == [fx.debug_effect]
    assert not fx.ordered_effects.filter_in(frozenset({audit}))
