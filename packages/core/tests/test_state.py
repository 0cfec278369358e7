"""The type, effect and box of mutable array references (polyjax_core.state)."""

import numpy as np
import pytest

from polyjax_core import Primitive, make_jaxpr
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.dce import dce_jaxpr
from polyjax_core.effects import control_flow_allowed_effects
from polyjax_core.state import AbstractRef, Ref, is_ref_aval, ref_effect

F32 = ShapedArray((2, 3), np.float32)


def test_abstract_ref_type():
    t = AbstractRef(F32)
    assert (str(t), t.str_short(short_dtypes=True)) == ("Ref{float32[2,3]}", "Ref{f32[2,3]}")
    assert (t.shape, t.dtype, t.ndim, t.size) == ((2, 3), np.dtype(np.float32), 2, 6)
    assert t == AbstractRef(ShapedArray((2, 3), np.float32)) and t != F32
    assert hash(t) == hash(AbstractRef(F32)) and is_ref_aval(t) and not is_ref_aval(F32)
    assert t.update(shape=(4,)) == AbstractRef(ShapedArray((4,), np.float32))
    with pytest.raises(TypeError, match="cannot hold another reference"):
        AbstractRef(t)


def test_ref_box_and_isinstance_of_tracers():
    box = Ref(np.zeros(3, np.float32))
    assert get_aval(box) == AbstractRef(ShapedArray((3,), np.float32))
    assert (box.shape, len(box)) == ((3,), 3)
    seen = []
    make_jaxpr(lambda r, x: seen.append((isinstance(r, Ref), isinstance(x, Ref))) or [x])(
        box, np.float32(1)
    )
    assert seen == [(True, False)]


def test_ref_effect_keeps_equations_and_is_allowed_in_loops():
    touch_p = Primitive("touch")
    touch_p.multiple_results = True
    touch_p.def_effectful_abstract_eval(lambda r: ([], frozenset({ref_effect})))
    closed = make_jaxpr(lambda r: touch_p.bind(r))(Ref(np.zeros(2, np.float32)))
    assert str(closed.jaxpr.in_avals[0]) == "Ref{float32[2]}"
    assert closed.jaxpr.effects == {ref_effect}
    assert len(dce_jaxpr(closed.jaxpr, [])[0].eqns) == 1  # effectful: never dead
    assert control_flow_allowed_effects.contains(ref_effect)


def test_indexing_needs_an_array_library():
    # Without polyjax-numpy's registration indexing explains itself; with it, it reads.
    box = Ref(np.zeros(2, np.float32))
    try:
        value = box[...]
    except TypeError as e:
        assert "needs an array library" in str(e)
    else:
        np.testing.assert_array_equal(value, np.zeros(2))
