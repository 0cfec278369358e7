"""Tests of polyjax_core.tree_util, run once per pytree backend.

Every test runs under the pure-Python engine and, where jaxlib is installed,
under the jaxlib C++ engine (the autouse ``backend`` fixture); the two must be
observably identical. Expected reprs and messages are JAX's documented forms.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polyjax_core import tree_util as tu
from polyjax_core.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    Partial,
    PyTreeDef,
    SequenceKey,
)

BACKENDS = ["python", "jaxlib"]


@pytest.fixture(autouse=True, params=BACKENDS)
def backend(request):
    if request.param == "jaxlib":
        pytest.importorskip("jaxlib._jax")
    previous = tu._set_backend(request.param)
    assert tu._active_backend() == request.param
    yield request.param
    tu._set_backend(previous)


def _has_jaxlib() -> bool:
    try:
        import jaxlib._jax  # noqa: F401
    except ImportError:
        return False
    return True


def _other_backend(name: str) -> str:
    """The backend to compare with (itself when jaxlib is not installed)."""
    return "python" if name == "jaxlib" or not _has_jaxlib() else "jaxlib"


def _in_backend(name, fn, *args):
    """Runs fn under another backend and restores the current one."""
    previous = tu._set_backend(name)
    try:
        return fn(*args)
    finally:
        tu._set_backend(previous)


Point = collections.namedtuple("Point", "x y")
Point2 = collections.namedtuple("Point2", "x y")


class Pair:
    """A custom node with aux data, registered once for the whole module."""

    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self):
        return f"Pair({self.a!r}, {self.b!r}, {self.tag!r})"


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), p.tag), lambda tag, c: Pair(*c, tag))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


# --------------------------------------------------------------------------- basics

REPR_CASES = [
    (1, [1], "PyTreeDef(*)"),
    (None, [], "PyTreeDef(None)"),
    ((), [], "PyTreeDef(())"),
    ((1,), [1], "PyTreeDef((*,))"),
    ([1, (2, 3)], [1, 2, 3], "PyTreeDef([*, (*, *)])"),
    ({"b": 1, "a": [2, None]}, [2, 1], "PyTreeDef({'a': [*, None], 'b': *})"),
    (Point(1, 2), [1, 2], "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
    (Pair(1, [2]), [1, 2], "PyTreeDef(CustomNode(Pair[t], [*, [*]]))"),
    (Params(1, 2), [1, 2], "PyTreeDef(CustomNode(Params[('p',)], [*, *]))"),
    (
        collections.OrderedDict(b=1, a=2),
        [1, 2],
        "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))",
    ),
    (
        collections.defaultdict(list, b=1, a=2),
        [2, 1],
        "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))",
    ),
]


@pytest.mark.parametrize("tree,leaves,text", REPR_CASES)
def test_flatten_leaves_repr_roundtrip(tree, leaves, text):
    got, treedef = tu.tree_flatten(tree)
    assert got == leaves
    assert repr(treedef) == text
    assert tu.tree_leaves(tree) == leaves
    assert tu.tree_structure(tree) == treedef
    rebuilt = tu.tree_unflatten(treedef, got)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert treedef.num_leaves == len(leaves)


@pytest.mark.parametrize("tree,leaves,text", REPR_CASES)
def test_both_backends_agree(backend, tree, leaves, text):
    here = tu.tree_structure(tree)
    there = _in_backend(_other_backend(backend), tu.tree_structure, tree)
    assert here == there and there == here
    assert hash(here) == hash(there)
    assert repr(here) == repr(there)
    assert here.num_nodes == there.num_nodes
    assert here.node_data() == there.node_data()
    assert here.children() == there.children()


def test_none_is_an_empty_node():
    assert tu.tree_leaves(None) == []
    assert tu.tree_leaves([None, 1, (None,)]) == [1]
    treedef = tu.tree_structure(None)
    assert (treedef.num_leaves, treedef.num_nodes) == (0, 1)
    assert not tu.treedef_is_leaf(treedef)
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_dict_keys_sorted_and_restored():
    tree = {"c": 1, "a": 2, "b": 3}
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [2, 3, 1]
    rebuilt = treedef.unflatten(leaves)
    assert list(rebuilt) == ["a", "b", "c"]
    assert tu.tree_structure({"a": 1, "b": 2}) == tu.tree_structure({"b": 0, "a": 0})
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting"):
        tu.tree_flatten({1: 1, "a": 2})


def test_namedtuple_classes_are_distinct_nodes():
    a, b = tu.tree_structure(Point(1, 2)), tu.tree_structure(Point2(1, 2))
    assert a != b
    assert a != tu.tree_structure((1, 2))
    assert tu.tree_unflatten(a, [3, 4]) == Point(3, 4)


def test_ordered_dict_order_is_structure():
    a = tu.tree_structure(collections.OrderedDict(a=1, b=2))
    b = tu.tree_structure(collections.OrderedDict(b=1, a=2))
    assert a != b
    assert a != tu.tree_structure({"a": 1, "b": 2})
    assert list(b.unflatten([5, 6]).items()) == [("b", 5), ("a", 6)]


def test_defaultdict_keeps_factory():
    tree = collections.defaultdict(list, b=1, a=2)
    out = tu.tree_map(lambda x: x * 10, tree)
    assert type(out) is collections.defaultdict and out.default_factory is list
    assert dict(out) == {"a": 20, "b": 10}
    other = tu.tree_structure(collections.defaultdict(int, b=1, a=2))
    assert tu.tree_structure(tree) != other


@pytest.mark.parametrize("cls", [dict, list, tuple])
def test_subclasses_of_builtins_are_leaves(cls):
    class Sub(cls):
        pass

    x = Sub()
    assert tu.tree_leaves(x) == [x]


def test_is_leaf_stops_traversal():
    tree = [(1, 2), [3, (4,)]]
    leaves = tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3, (4,)]
    leaves, treedef = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert repr(treedef) == "PyTreeDef([*, [*, *]])"


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("n", [0, 1, 3, 4])
def test_unflatten_wrong_leaf_count(n):
    treedef = tu.tree_structure((1, [2]))
    with pytest.raises(ValueError, match="expected 2") as info:
        tu.tree_unflatten(treedef, list(range(n)))
    if n < 2:
        assert f"got {n}" in str(info.value) and "Too few" in str(info.value)
    else:
        assert "Too many" in str(info.value)


UP_TO_CASES = [
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
    ([1, 2], [1], "List arity mismatch: 1 != 2; list: [1]."),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}, "Dict key mismatch; expected keys: ['a', 'b']; "),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict"),
    (None, 1, "Expected None, got 1."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Point(1, 2), Point2(1, 2), "Named tuple type mismatch: expected type: "),
    (Pair(1, 2), (1, 2), "Custom node type mismatch: expected type: "),
    (Pair(1, 2, "x"), Pair(1, 2, "y"), "Mismatch custom node data: 'x' != 'y'; value: "),
    (Params(1, 2, "p"), Params(1, 2, "q"), "Mismatch custom dataclass node data: "),
]


@pytest.mark.parametrize("tree,other,message", UP_TO_CASES)
def test_flatten_up_to_errors(backend, tree, other, message):
    treedef = tu.tree_structure(tree)
    with pytest.raises(ValueError) as info:
        treedef.flatten_up_to(other)
    assert str(info.value).startswith(message)
    with pytest.raises(ValueError) as info2:
        tu.tree_map(lambda *xs: None, tree, other)
    assert str(info2.value) == str(info.value)

    # Identical under the other backend.
    def other_error():
        with pytest.raises(ValueError) as e:
            tu.tree_structure(tree).flatten_up_to(other)
        return str(e.value)

    assert _in_backend(_other_backend(backend), other_error) == str(info.value)


def test_register_twice_raises():
    class Once:
        pass

    tu.register_pytree_node(Once, lambda x: ((), None), lambda a, c: Once())
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type registration"):
        tu.register_pytree_node(Once, lambda x: ((), None), lambda a, c: Once())
    with pytest.raises(ValueError, match="Duplicate"):
        tu.register_pytree_node(tuple, lambda x: (x, None), lambda a, c: tuple(c))


@pytest.mark.parametrize(
    "bad,message",
    [
        (5, "should return a (children, aux_data) tuple, got 5"),
        ((5, None), "where 'children' is iterable, got (5, None)"),
    ],
)
def test_bad_custom_flatten(bad, message):
    class Bad:
        pass

    tu.register_pytree_node(Bad, lambda x: bad, lambda a, c: Bad())
    with pytest.raises(ValueError) as info:
        tu.tree_flatten([Bad()])
    assert message in str(info.value)


# --------------------------------------------------------------------------- tree_map & co


def test_tree_map_multiple_trees_with_prefix():
    tree = {"a": 1, "b": (2, 3)}
    assert tu.tree_map(operator.add, tree, {"a": 10, "b": (20, 30)}) == {"a": 11, "b": (22, 33)}
    # `rest` may be deeper than `tree`: the subtree is passed whole.
    out = tu.tree_map(lambda x, y: (x, y), [1, 2], [(5, 6), {"k": 7}])
    assert out == [(1, (5, 6)), (2, {"k": 7})]
    assert tu.tree_map(lambda x: x, None) is None


def test_tree_map_is_leaf():
    out = tu.tree_map(lambda x: len(x), [(1, 2), [(3,)]], is_leaf=lambda x: isinstance(x, tuple))
    assert out == [2, [1]]


@pytest.mark.parametrize("leaves", [[1, 2, 3], [5], []])
def test_tree_reduce(leaves):
    tree = tu.tree_unflatten(tu.tree_structure([0] * len(leaves)), leaves)
    assert tu.tree_reduce(operator.add, tree, 100) == functools.reduce(operator.add, leaves, 100)
    if leaves:
        assert tu.tree_reduce(operator.add, tree) == functools.reduce(operator.add, leaves)
    else:
        with pytest.raises(TypeError):
            tu.tree_reduce(operator.add, tree)


def test_tree_all_and_all_leaves():
    assert tu.tree_all([1, (True, None)]) and not tu.tree_all({"a": [1, 0]})
    assert tu.tree_all([])
    assert tu.all_leaves([1, "a", 2.0])
    assert not tu.all_leaves([1, None]) and not tu.all_leaves([(1,)])
    assert tu.all_leaves([(1,), 2], is_leaf=lambda x: isinstance(x, tuple))


@pytest.mark.parametrize("infer", [False, True])
def test_tree_transpose(infer):
    tree = [(1, 2, 3), (4, 5, 6)]
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0, 0))
    got = tu.tree_transpose(outer, None if infer else inner, tree)
    assert got == ([1, 4], [2, 5], [3, 6])
    back = tu.tree_transpose(inner, outer, got)
    assert back == tree


def test_tree_transpose_mismatch():
    outer, inner = tu.tree_structure([0, 0]), tu.tree_structure((0, 0))
    with pytest.raises(TypeError, match="Mismatch"):
        tu.tree_transpose(outer, inner, [(1, 2, 3), (4, 5, 6)])


# --------------------------------------------------------------------------- PyTreeDef API


def test_treedef_methods():
    treedef = tu.tree_structure({"a": (1, 2), "b": [3]})
    kids = tu.treedef_children(treedef)
    assert [repr(k) for k in kids] == ["PyTreeDef((*, *))", "PyTreeDef([*])"]
    assert treedef.node_data() == (dict, ["a", "b"])
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure((1, 2)).node_data() == (tuple, None)
    assert tu.tree_structure(Pair(1, 2, "z")).node_data() == (Pair, "z")
    assert treedef.num_nodes == 1 + (1 + 2) + (1 + 1)
    assert tu.treedef_is_leaf(tu.tree_structure(7)) and not tu.treedef_is_leaf(treedef)
    tup = tu.treedef_tuple(kids)
    assert tup == tu.tree_structure(((1, 2), [3]))
    assert repr(tup) == "PyTreeDef(((*, *), [*]))"
    composed = tu.tree_structure((1, None, 2)).compose(tu.tree_structure([1, 2]))
    assert composed == tu.tree_structure(([0, 0], None, [0, 0]))
    assert composed.num_leaves == 4


def test_treedef_equality_and_hash():
    a, b = tu.tree_structure([1, {"x": 2}]), tu.tree_structure([5, {"x": 6}])
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != tu.tree_structure([1, {"y": 2}])
    assert a != tu.tree_structure((1, {"x": 2}))
    assert (a == 5) is False and a != "PyTreeDef"
    assert tu.tree_structure(Pair(1, 2, "x")) != tu.tree_structure(Pair(1, 2, "y"))


def test_flatten_up_to_prefix():
    treedef = tu.tree_structure([1, {"a": 2}])
    assert treedef.flatten_up_to([(1, 2), {"a": [3]}]) == [(1, 2), [3]]
    assert tu.tree_structure(1).flatten_up_to((1, [2])) == [(1, [2])]


def test_registration_visible_after_switching(backend):
    class Late:
        def __init__(self, v):
            self.v = v

    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda _, c: Late(*c))
    here = tu.tree_flatten([Late(1)])
    there = _in_backend(_other_backend(backend), tu.tree_flatten, [Late(1)])
    assert here[0] == there[0] == [1]
    assert here[1] == there[1]


# --------------------------------------------------------------------------- registration


def test_register_pytree_node_class():
    @tu.register_pytree_node_class
    class Vec:
        def __init__(self, *xs):
            self.xs = xs

        def tree_flatten(self):
            return self.xs, len(self.xs)

        @classmethod
        def tree_unflatten(cls, aux, children):
            assert aux == len(children)
            return cls(*children)

    out = tu.tree_map(lambda x: x + 1, Vec(1, 2))
    assert type(out) is Vec and out.xs == (2, 3)
    assert [str(p[0]) for p, _ in tu.tree_leaves_with_path(Vec(1, 2))] == [
        "[<flat index 0>]",
        "[<flat index 1>]",
    ]


@pytest.mark.parametrize("give_flatten", [False, True])
def test_register_pytree_with_keys(give_flatten):
    class Named:
        def __init__(self, **kw):
            self.kw = kw

    def with_keys(x):
        return [(GetAttrKey(k), x.kw[k]) for k in sorted(x.kw)], tuple(sorted(x.kw))

    def flat(x):
        return [x.kw[k] for k in sorted(x.kw)], tuple(sorted(x.kw))

    tu.register_pytree_with_keys(
        Named,
        with_keys,
        lambda keys, c: Named(**dict(zip(keys, c))),
        flat if give_flatten else None,
    )
    tree = Named(b=1, a=[2])
    assert tu.tree_leaves(tree) == [2, 1]
    paths = [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(tree)]
    assert paths == [".a[0]", ".b"]
    out = tu.tree_map_with_path(lambda p, x: tu.keystr(p), tree)
    assert out.kw == {"a": [".a[0]"], "b": ".b"}


def test_register_dataclass_inferred_and_explicit():
    assert tu.tree_leaves(Params(1, 2, "n")) == [1, 2]
    assert tu.tree_map(lambda x: x * 2, Params(1, 2, "n")) == Params(2, 4, "n")
    paths = tu.tree_leaves_with_path(Params(1, 2))
    assert [p for p, _ in paths] == [(GetAttrKey("w"),), (GetAttrKey("b"),)]

    @functools.partial(tu.register_dataclass, data_fields=["y"], meta_fields=["x"])
    @dataclasses.dataclass
    class Explicit:
        x: int
        y: int

    leaves, treedef = tu.tree_flatten(Explicit(1, 2))
    assert leaves == [2] and repr(treedef) == "PyTreeDef(CustomNode(Explicit[(1,)], [*]))"
    assert treedef.unflatten([5]) == Explicit(1, 5)


def test_register_dataclass_drop_fields_and_plain_class():
    @functools.partial(tu.register_dataclass, drop_fields=["cache"])
    @dataclasses.dataclass
    class WithCache:
        v: int
        cache: int = 0

    assert tu.tree_map(lambda x: x + 1, WithCache(1, 9)) == WithCache(2, 0)

    class Plain:
        def __init__(self, a, s):
            self.a, self.s = a, s

    tu.register_dataclass(Plain, data_fields=["a"], meta_fields=["s"])
    out = tu.tree_map(lambda x: -x, Plain(3, "k"))
    assert (out.a, out.s) == (-3, "k")


def test_register_dataclass_errors():
    class NotDC:
        pass

    with pytest.raises(TypeError):
        tu.register_dataclass(NotDC)
    with pytest.raises(TypeError):
        tu.register_dataclass(NotDC, data_fields=["a"])

    @dataclasses.dataclass
    class DC:
        a: int
        b: int

    with pytest.raises(ValueError, match="missing"):
        tu.register_dataclass(DC, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="both"):
        tu.register_dataclass(DC, data_fields=["a", "b"], meta_fields=["a"])


def test_register_static():
    @tu.register_static
    class Cfg:
        def __init__(self, n):
            self.n = n

        def __eq__(self, other):
            return isinstance(other, Cfg) and other.n == self.n

        def __hash__(self):
            return hash(self.n)

    c = Cfg(3)
    leaves, treedef = tu.tree_flatten([c, 1])
    assert leaves == [1]
    assert treedef.unflatten([2])[0] is c
    assert treedef != tu.tree_structure([Cfg(4), 1])
    assert treedef == tu.tree_structure([Cfg(3), 5])


# --------------------------------------------------------------------------- key paths


@pytest.mark.parametrize(
    "key,text,rep",
    [
        (SequenceKey(0), "[0]", "SequenceKey(idx=0)"),
        (DictKey("a"), "['a']", "DictKey(key='a')"),
        (DictKey(1), "[1]", "DictKey(key=1)"),
        (GetAttrKey("x"), ".x", "GetAttrKey(name='x')"),
        (FlattenedIndexKey(2), "[<flat index 2>]", "FlattenedIndexKey(key=2)"),
    ],
)
def test_key_classes(key, text, rep):
    assert str(key) == text and repr(key) == rep
    same = type(key)(key._value)
    assert same == key and hash(same) == hash(key)
    assert key != type(key)(object())
    with pytest.raises(AttributeError):
        key.anything = 1
    match key:
        case SequenceKey(idx=i):
            assert i == key.idx
        case DictKey(key=k) | FlattenedIndexKey(key=k):
            assert k == key.key
        case GetAttrKey(name=n):
            assert n == key.name


def test_keys_of_different_classes_differ():
    assert DictKey(0) != SequenceKey(0) and FlattenedIndexKey(0) != DictKey(0)


def test_keystr():
    params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
    paths = [p for p, _ in tu.tree_leaves_with_path(params)]
    assert [tu.keystr(p) for p in paths] == [
        "['foo']['bar']['bat'][0]",
        "['foo']['bar']['bat'][1]",
        "['foo']['bar']['baz']",
    ]
    assert [tu.keystr(p, simple=True, separator="/") for p in paths] == [
        "foo/bar/bat/0",
        "foo/bar/bat/1",
        "foo/bar/baz",
    ]
    assert tu.keystr((GetAttrKey("x"), FlattenedIndexKey(0)), simple=True, separator=".") == "x.0"


def test_flatten_with_path_matches_flatten():
    tree = {"a": [1, Point(2, (3,))], "b": Pair(4, None), "c": Params(5, 6)}
    pairs, treedef = tu.tree_flatten_with_path(tree)
    leaves, treedef2 = tu.tree_flatten(tree)
    assert [x for _, x in pairs] == leaves and treedef == treedef2
    assert [tu.keystr(p) for p, _ in pairs] == [
        "['a'][0]",
        "['a'][1].x",
        "['a'][1].y[0]",
        "['b'][<flat index 0>]",
        "['c'].w",
        "['c'].b",
    ]


def test_is_leaf_takes_path():
    tree = {"a": (1, 2), "b": (3, 4)}
    pairs = tu.tree_leaves_with_path(
        tree, is_leaf=lambda p, x: bool(p) and p[0] == DictKey("a"), is_leaf_takes_path=True
    )
    assert [x for _, x in pairs] == [(1, 2), 3, 4]
    pairs = tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((DictKey("a"),), (1, 2)), ((DictKey("b"),), (3, 4))]


def test_tree_map_with_path_multiple_trees():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), [1, 2], [10, 20])
    assert out == [("[0]", 11), ("[1]", 22)]


# --------------------------------------------------------------------------- Partial


def test_partial_is_a_pytree():
    p = Partial(operator.add, 1)
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1]
    q = treedef.unflatten([41])
    assert isinstance(q, Partial) and q(1) == 42
    assert repr(p).startswith("Partial(<built-in function add>, 1")
    kw = Partial(lambda a, b=0: a - b, b=3)
    assert tu.tree_leaves(kw) == [3] and tu.tree_map(lambda x: x * 2, kw)(10) == 4
    assert tu.tree_structure(Partial(operator.add, 1)) == treedef
    assert tu.tree_structure(Partial(operator.sub, 1)) != treedef


def test_nested_partial_keeps_inner_static():
    inner = functools.partial(operator.sub, 10)
    p = Partial(inner, 3)
    assert p.func is inner and p.args == (3,) and p() == 7
    assert tu.tree_leaves(p) == [3]


# --------------------------------------------------------------------------- property tests

_leaf = st.one_of(st.integers(-5, 5), st.text(max_size=2), st.none())
_keys = st.text(alphabet="abcd", min_size=1, max_size=2)


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(_keys, children, max_size=3),
        st.builds(Point, children, children),
        st.builds(Pair, children, children, st.sampled_from(["s", "t"])),
        st.builds(Params, children, children),
        st.dictionaries(_keys, children, max_size=3).map(collections.OrderedDict),
        st.dictionaries(_keys, children, max_size=3).map(lambda d: collections.defaultdict(int, d)),
    )


trees = st.recursive(_leaf, _containers, max_leaves=12)
_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_settings
@given(trees)
def test_roundtrip_property(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert tu.tree_unflatten(treedef, leaves) == tree
    assert treedef.num_leaves == len(leaves) == len(tu.tree_leaves(tree))
    assert treedef.flatten_up_to(tree) == leaves
    assert tu.tree_map(lambda x: x, tree) == tree
    assert [x for _, x in tu.tree_leaves_with_path(tree)] == leaves
    assert tu.tree_structure(tu.tree_map(lambda x: 0, tree)) == treedef


@_settings
@given(trees)
def test_backends_identical_property(backend, tree):
    leaves, treedef = tu.tree_flatten(tree)
    other_leaves, other = _in_backend(_other_backend(backend), tu.tree_flatten, tree)
    assert leaves == other_leaves
    assert treedef == other and hash(treedef) == hash(other)
    assert repr(treedef) == repr(other) and treedef.num_nodes == other.num_nodes
    assert tu.treedef_tuple([treedef, other]) == tu.tree_structure((tree, tree))


@_settings
@given(trees, trees)
def test_equality_is_consistent_with_hash(a, b):
    ta, tb = tu.tree_structure(a), tu.tree_structure(b)
    if ta == tb:
        assert hash(ta) == hash(tb)
        assert repr(ta) == repr(tb)
    else:
        assert repr(ta) != repr(tb) or ta.node_data() != tb.node_data()


# --------------------------------------------------------------------------- backends


def test_set_backend_rejects_unknown_names():
    with pytest.raises(ValueError, match="Unknown pytree backend"):
        tu._set_backend("fortran")


def test_auto_backend_follows_jaxlib():
    previous = tu._set_backend("auto")
    try:
        expected = "jaxlib" if sys.modules.get("jaxlib._jax") is not None else "python"
        assert tu._active_backend() == expected
    finally:
        tu._set_backend(previous)


def test_import_does_not_load_jaxlib_and_auto_upgrades():
    # "auto" must not import jaxlib itself, and switches to it once someone else does.
    code = (
        "import sys, polyjax_core.tree_util as tu\n"
        "before = tu.tree_structure({'a': (1, 2)})\n"
        "print('jaxlib._jax' in sys.modules, tu._active_backend())\n"
        "try:\n"
        "    import jaxlib._jax\n"
        "except ImportError:\n"
        "    print('jaxlib', True)\n"
        "else:\n"
        "    after = tu.tree_structure({'a': (3, 4)})\n"
        "    print(tu._active_backend(), after == before and hash(after) == hash(before))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "POLYJAX_PYTREE_BACKEND"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    assert out == ["False", "python", "jaxlib", "True"]


def test_treedefs_from_both_backends_as_dict_keys(backend):
    cache = {tu.tree_structure([1, (2,)]): "here"}
    there = _in_backend(_other_backend(backend), tu.tree_structure, [3, (4,)])
    assert cache[there] == "here"
    assert isinstance(there, PyTreeDef)


# --------------------------------------------------------------------------- one level, broadcast


def test_key_classes_take_their_field_by_keyword_and_repr_round_trips():
    keys = [DictKey(key="a"), SequenceKey(idx=1), GetAttrKey(name="x"), FlattenedIndexKey(key=2)]
    for k in keys:
        assert eval(repr(k)) == k  # the repr is the keyword call, as in JAX
    assert DictKey(key="a") == DictKey("a") and SequenceKey(idx=3).idx == 3


Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize(
    "tree, children, aux",
    [
        ({"b": 1, "a": (2, 3)}, [(2, 3), 1], ("a", "b")),
        ((1, [2]), (1, [2]), None),
        ([1, 2], [1, 2], None),
        (None, (), None),
        (Point(1, 2), Point(1, 2), Point),
        (Partial(max, 1, key=2), ((1,), {"key": 2}), max),
    ],
)
def test_flatten_one_level(tree, children, aux):
    got_children, got_aux = tu.flatten_one_level(tree)
    assert list(got_children) == list(children) and got_aux == aux
    pairs, aux_k = tu.flatten_one_level_with_keys(tree)
    assert [c for _, c in pairs] == list(got_children) and aux_k == got_aux
    # The keys are those that tree_flatten_with_path puts first on each path.
    first_keys = [p[0] for p, _ in tu.tree_flatten_with_path(tree)[0]]
    assert all(k in first_keys for k, _ in pairs)


@pytest.mark.parametrize("leaf", [1, 1.5, "s", object()])
def test_flatten_one_level_of_a_leaf_raises(leaf):
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(leaf)
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level_with_keys(leaf)


def test_is_tree_node_and_default_registry():
    for typ in (tuple, list, dict, type(None), Point, collections.OrderedDict, Partial):
        assert tu.is_tree_node(typ) and tu.default_registry.is_node(typ)
    for typ in (int, float, str, object):
        assert not tu.is_tree_node(typ)
    assert tu.default_registry.flatten_one_level([1, 2]) == ([1, 2], None)


@pytest.mark.parametrize(
    "prefix, full, expected",
    [
        (1, (1, 2), (1, 1)),
        ({"a": 1, "b": (2, 3)}, {"a": [4, 5], "b": (6, (7, 8))}, {"a": [1, 1], "b": (2, (3, 3))}),
        (1, None, None),
        ([1, 2], [3, 4], [1, 2]),
    ],
)
def test_tree_broadcast(prefix, full, expected):
    assert tu.tree_broadcast(prefix, full) == expected


def test_tree_broadcast_is_leaf_and_errors():
    is_tuple = lambda x: isinstance(x, tuple)  # noqa: E731
    assert tu.tree_broadcast(1, [1, (2, 3)], is_leaf=is_tuple) == [1, (1, 1)]
    for prefix, full in [
        ([1, 2], (3, 4)),
        ([1, 2], [3, 4, 5]),
        (None, 1),
        ([1, (2, 3)], [(4, 5), 6]),
    ]:
        with pytest.raises(ValueError):
            tu.tree_broadcast(prefix, full)


@given(st.integers(0, 20))
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_tree_reduce_associative_is_balanced_and_agrees_with_tree_reduce(n):
    leaves = list(range(n))
    if n == 0:
        with pytest.raises(TypeError, match="identity"):
            tu.tree_reduce_associative(operator.add, leaves)
        assert tu.tree_reduce_associative(operator.add, leaves, identity=0) == 0
        return
    assert tu.tree_reduce_associative(operator.add, leaves) == sum(leaves)
    # Nesting depth is logarithmic: count parentheses of a string "sum".
    text = tu.tree_reduce_associative(lambda a, b: f"({a}+{b})", [str(i) for i in leaves])
    depth = max_depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        max_depth = max(max_depth, depth)
    assert max_depth == (n - 1).bit_length()


def test_tree_reduce_associative_matches_jax_grouping():
    fmt = lambda a, b: f"({a}+{b})"  # noqa: E731 -- JAX's grouping for 5 and 7 leaves
    assert tu.tree_reduce_associative(fmt, [1, 2, 3, 4, 5]) == "((1+2)+(3+(4+5)))"
    assert tu.tree_reduce_associative(fmt, [1, 2, 3, 4, 5, 6, 7]) == "((1+(2+3))+((4+5)+(6+7)))"
    pair = tu.tree_reduce_associative(
        lambda a, b: (a, b), [1, (2, 3)], is_leaf=lambda x: isinstance(x, tuple)
    )
    assert pair == (1, (2, 3))


# --------------------------------------------------------------------------- JAX's view


class _Boxed:
    """An array-like node: transformations see its data, users see one leaf."""

    def __init__(self, data):
        self.data = data


def _register_boxed():
    from polyjax_core import jax_tree_util as jtu

    if _Boxed not in jtu._ARRAY_NODES:
        jtu.register_array_node(
            _Boxed, lambda b: ((b.data,), None), lambda _, c: _Boxed(c[0]), lambda b: 1
        )
    return jtu


def test_array_nodes_are_leaves_in_jax_view_and_nodes_in_core():
    jtu = _register_boxed()
    b = _Boxed(5)
    tree = {"x": b, "y": (1, b)}
    assert tu.tree_leaves(tree) == [5, 1, 5]
    assert jtu.tree_leaves(tree) == [b, 1, b]
    assert repr(jtu.tree_structure(tree)) == "PyTreeDef({'x': *, 'y': (*, *)})"
    assert jtu.tree_map(lambda v: v, tree)["x"] is b
    assert jtu.tree_map(lambda v, w: w, [b], [7]) == [7]
    assert [p for p, _ in jtu.tree_leaves_with_path([b])] == [(SequenceKey(0),)]
    assert jtu.tree_leaves([b, [2]], is_leaf=lambda t: t == [2]) == [b, [2]]
    assert jtu.tree_flatten_with_path([b, 3], is_leaf=lambda p, t: t == 3, is_leaf_takes_path=True)[
        0
    ] == [((SequenceKey(0),), b), ((SequenceKey(1),), 3)]
    assert jtu.tree_reduce(lambda a, c: a + [c], [b, 1], []) == [b, 1]
    assert jtu.tree_broadcast([0, 1], [b, (b, 2)]) == [0, (1, 1)]
    outer, inner = jtu.tree_structure([0, 0]), jtu.tree_structure((0, 0))
    assert jtu.tree_transpose(outer, inner, [(b, 1), (2, b)]) == ([b, 2], [1, b])
    assert jtu.all_leaves([b, 1]) and not jtu.is_tree_node(_Boxed) and tu.is_tree_node(_Boxed)
    with pytest.raises(ValueError, match="can't tree-flatten"):
        jtu.flatten_one_level(b)
    assert tu.flatten_one_level(b) == ((5,), None)


def test_trailing_ndims_count_the_data_axes_of_array_nodes():
    jtu = _register_boxed()
    treedef = tu.tree_structure({"a": _Boxed(0), "b": [1, _Boxed(2)]})
    assert jtu.trailing_ndims(treedef) == [1, 0, 1]
    assert jtu.trailing_ndims(tu.tree_structure((1, 2))) == [0, 0]
