"""split_list, partition_list and merge_lists: round trips and errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polyjax_core.lists import merge_lists, partition_list, split_list


@given(st.lists(st.integers(), max_size=12), st.lists(st.integers(0, 4), max_size=4))
def test_split_list_pieces_concatenate_back(xs, sizes):
    if sum(sizes) > len(xs):
        with pytest.raises(ValueError, match="exceed the list's length"):
            split_list(xs, sizes)
        return
    pieces = split_list(xs, sizes)
    assert len(pieces) == len(sizes) + 1
    assert [len(p) for p in pieces[:-1]] == sizes
    assert [x for p in pieces for x in p] == xs


@given(st.lists(st.tuples(st.booleans(), st.integers()), max_size=12))
def test_merge_lists_inverts_partition_list(pairs):
    flags = [f for f, _ in pairs]
    xs = [x for _, x in pairs]
    falses, trues = partition_list(flags, xs)
    assert falses == [x for f, x in pairs if not f]
    assert trues == [x for f, x in pairs if f]
    assert merge_lists(flags, falses, trues) == xs


def test_mismatched_lengths_are_errors():
    with pytest.raises(ValueError, match="2 flags for 3 elements"):
        partition_list([True, False], [1, 2, 3])
    with pytest.raises(ValueError, match="1 False and 1 True flags for 0 and 1 elements"):
        merge_lists([True, False], [], [1])
