"""PartitionSpec: normalisation, equality, hashing, sequence behaviour and repr (JAX 0.10.2's)."""

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyjax_core import PartitionSpec as P
from polyjax_core import tree_util

U = P.UNCONSTRAINED


@pytest.mark.parametrize(
    "spec, text",
    [
        (P(), "P()"),
        (P("a"), "P('a',)"),
        (P("a", None), "P('a', None)"),
        (P(("a", "b"), None, "c"), "P(('a', 'b'), None, 'c')"),
        (P(("a",), ("b", "c")), "P('a', ('b', 'c'))"),
        (P(()), "P(None,)"),
        (P(["a", "b"]), "P(('a', 'b'),)"),
        (P(U, "a"), "P(UNCONSTRAINED, 'a')"),
        (P(("a", U)), "P(('a', UNCONSTRAINED),)"),
        (P("a", unreduced={"b"}), "P('a', unreduced={'b'})"),
        (
            P("a", reduced={"d", "c"}, unreduced={"b"}),
            "P('a', unreduced={'b'}, reduced={'c', 'd'})",
        ),
        (P("a", "b", reduced={"c"}), "P('a', 'b', reduced={'c'})"),
    ],
)
def test_repr_and_normalisation(spec, text):
    assert repr(spec) == text == str(spec)


def test_one_name_tuples_are_the_name_and_empty_tuples_none():
    assert P(("a",)) == P("a") and hash(P(("a",))) == hash(P("a"))
    assert P((), "a") == P(None, "a")
    assert P(("a",)).partitions == ("a",)


def test_equality_is_exact_but_hash_ignores_trailing_nones():
    # JAX 0.10.2: P('a', None) != P('a'), yet both hash alike.
    assert P("a", None) != P("a")
    assert hash(P("a", None)) == hash(P("a"))
    assert P(None) != P()
    assert P("a") != ("a",) and ("a",) != P("a")
    assert P("a") != P("a", unreduced={"c"})
    assert P(U) == P(U)


def test_sequence_protocol():
    spec = P("a", None, ("b", "c"))
    assert len(spec) == 3
    assert spec[0] == "a" and spec[-1] == ("b", "c")
    assert spec[1:] == (None, ("b", "c"))
    assert list(spec) == ["a", None, ("b", "c")]
    assert spec.count(None) == 1 and spec.index(("b", "c")) == 2
    assert "a" in spec
    assert not isinstance(spec, tuple)


def test_concatenation():
    assert P("a") + P("b") == P("a", "b")
    assert P("a") + ("b",) == P("a", "b")
    assert ("b",) + P("a") == P("b", "a")
    assert P("a", reduced={"c"}) + P("b") == P("a", "b", reduced={"c"})


def test_update_and_padding():
    assert P("a", None).update(partitions=("b", None, None)) == P("b", None, None)
    assert P("a")._normalized_spec_for_aval(3) == P("a", None, None)
    with pytest.raises(TypeError, match="unexpected arguments"):
        P("a").update(spec=1)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"unreduced": "b"}, TypeError, "unreduced argument of PartitionSpec should be of type"),
        ({"unreduced": {"b"}, "reduced": {"b"}}, ValueError, "cannot overlap"),
    ],
)
def test_bad_reduced_axes(kwargs, error, message):
    with pytest.raises(error, match=message):
        P("a", **kwargs)


def test_unreduced_axes_may_not_be_partitions():
    with pytest.raises(ValueError, match="partitions cannot overlap with unreduced axes"):
        P("a", unreduced={"a"})


def test_unhashable_entry_is_a_type_error_naming_it():
    with pytest.raises(
        TypeError, match=r"PartitionSpec entries must be .* got \{'a'\} of type set"
    ):
        P({"a"})


def test_unconstrained_is_one_object():
    assert repr(U) == "UNCONSTRAINED"
    assert pickle.loads(pickle.dumps(U)) is U
    assert P.UNCONSTRAINED is U


def test_a_spec_is_a_pytree_leaf():
    assert tree_util.tree_leaves((P("a", "b"), 1)) == [P("a", "b"), 1]


entries = st.one_of(
    st.none(),
    st.sampled_from(["x", "y", "z"]),
    st.lists(st.sampled_from(["x", "y", "z"]), max_size=3).map(tuple),
    st.just(U),
)


@given(st.lists(entries, max_size=4), st.lists(entries, max_size=4))
def test_equal_specs_hash_alike_and_pickle(a, b):
    pa, pb = P(*a), P(*b)
    if pa == pb:
        assert hash(pa) == hash(pb)
    assert pickle.loads(pickle.dumps(pa)) == pa
    assert pa + pb == P(*a, *b)
    assert len(pa) == len(a)
