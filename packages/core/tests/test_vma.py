"""Varying manual axes in avals: printing, equality, and the central propagation rule."""

import numpy as np
import pytest

from polyjax_core import vma
from polyjax_core.abstract_values import ShapedArray, note_axis_order, ordered_axes, vma_str
from polyjax_core.axis_env import extend_axis_env
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.primitive import Primitive

f32 = np.float32


@pytest.mark.parametrize(
    "axes, printed",
    [((), "float32[4]"), (("i",), "float32[4]{V:i}"), (("i", "j"), "float32[4]{V:(i,j)}")],
)
def test_printed_like_jax(axes, printed):
    note_axis_order(("i", "j"))
    a = ShapedArray((4,), f32, vma=frozenset(axes))
    assert str(a) == printed
    assert a.str_short(short_dtypes=True) == "f" + printed[5:]
    assert str(a.update(weak_type=True)) == "~" + printed


def test_axes_print_in_the_noted_mesh_order():
    note_axis_order(("q", "p"))
    assert vma_str(frozenset({"p", "q"})) == "{V:(q,p)}"
    assert ordered_axes({"p", "zz", "q"}) == ("q", "p", "zz")  # unknown names last
    note_axis_order(("p", "q"))
    assert vma_str(frozenset({"p", "q"})) == "{V:(p,q)}"


def test_equality_hash_and_update_include_vma():
    a = ShapedArray((2,), f32)
    b = a.update(vma=frozenset({"i"}))
    assert a.vma == frozenset() and b.vma == frozenset({"i"})
    assert a != b and hash(a) != hash(b)
    assert b == ShapedArray((2,), f32, vma={"i"}) and hash(b) == hash(
        ShapedArray((2,), f32, vma={"i"})
    )
    assert b.update(shape=(3,)).vma == b.vma  # update keeps what it is not told to change
    assert b.update(vma=frozenset()) == a


def _binary(name):
    p = Primitive(name)
    p.def_abstract_eval(lambda x, y: ShapedArray(x.shape, x.dtype))
    return p


def test_outputs_vary_over_the_union_of_inputs():
    add = _binary("toy_add")
    avals = [
        ShapedArray((3,), f32, vma={"i"}),
        ShapedArray((3,), f32, vma={"j"}),
        ShapedArray((3,), f32),
    ]
    # (When lax is loaded, its `pvary` is first applied to the mixed operands; its
    # shape rule needs the axes bound.)
    with extend_axis_env([("i", 2), ("j", 2)]), vma.checking_axes(frozenset({"i", "j"})):
        closed = trace_to_jaxpr(lambda x, y, z: [add.bind(x, y), add.bind(z, z)], avals)
    assert [a.vma for a in closed.out_avals] == [frozenset({"i", "j"}), frozenset()]


def test_a_primitive_with_its_own_rule_is_trusted():
    reduce = Primitive("toy_reduce")
    reduce.own_vma = True
    reduce.def_abstract_eval(lambda x: x.update(vma=x.vma - {"i"}))
    closed = trace_to_jaxpr(lambda x: [reduce.bind(x)], [ShapedArray((3,), f32, vma={"i", "j"})])
    assert closed.out_avals[0].vma == frozenset({"j"})


def test_collectives_add_only_checked_axes():
    assert vma.checked_axes() == frozenset()
    with vma.checking_axes(frozenset({"i"})):
        assert vma.checked_axes() == frozenset({"i"})
    assert vma.checked_axes() == frozenset()
    assert vma.union([frozenset({"a"}), frozenset(), frozenset({"b"})]) == {"a", "b"}
    assert vma.union([]) == frozenset()
