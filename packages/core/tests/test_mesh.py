"""AxisType, AbstractMesh and the mesh in context (core, no devices)."""

import pickle
import threading
from collections import OrderedDict

import pytest

from polyjax_core import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    config,
    get_abstract_mesh,
    get_concrete_mesh,
    mesh_context,
    register_spec_to_sharding,
    spec_to_sharding,
    use_abstract_mesh,
)
from polyjax_core import PartitionSpec as P


def test_axis_type_reprs_and_order():
    assert list(AxisType) == [AxisType.Auto, AxisType.Explicit, AxisType.Manual]
    assert repr(AxisType.Auto) == "Auto" and str(AxisType.Explicit) == "AxisType.Explicit"
    assert AxisType["Manual"] is AxisType.Manual


def test_abstract_mesh_properties():
    m = AbstractMesh((2, 4), ("a", "b"))
    assert m.axis_sizes == (2, 4) and m.axis_names == ("a", "b")
    assert m.axis_types == (AxisType.Auto, AxisType.Auto)
    assert m.shape == OrderedDict([("a", 2), ("b", 4)]) and type(m.shape) is OrderedDict
    assert m.shape_tuple == (("a", 2), ("b", 4))
    assert m.size == 8 and not m.empty and m.abstract_mesh is m
    assert repr(m) == "AbstractMesh('a': 2, 'b': 4, axis_types=(Auto, Auto))"
    with pytest.raises(ValueError, match="AbstractMesh does not implement devices"):
        m.devices


def test_abstract_mesh_axis_type_queries():
    m = AbstractMesh(
        (2, 4, 1), ("a", "b", "c"), (AxisType.Explicit, AxisType.Auto, AxisType.Manual)
    )
    assert m.explicit_axes == ("a",) and m.auto_axes == ("b",) and m.manual_axes == ("c",)
    assert m._name_to_type == {"a": AxisType.Explicit, "b": AxisType.Auto, "c": AxisType.Manual}
    assert not (m.are_all_axes_auto or m.are_all_axes_explicit or m.are_all_axes_manual)
    assert AbstractMesh((2,), ("a",), AxisType.Explicit).are_all_axes_explicit
    assert m.update_axis_types({"b": AxisType.Manual}).manual_axes == ("b", "c")
    assert m.update(axis_sizes=(4, 2, 1)).shape == OrderedDict([("a", 4), ("b", 2), ("c", 1)])


def test_abstract_mesh_with_device_repr_and_equality():
    dev = AbstractDevice("cpu", None, "cpu")
    m = AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit, abstract_device=dev)
    assert repr(m) == (
        "AbstractMesh('a': 2, 'b': 4, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu)"
    )
    assert m == AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit, abstract_device=dev)
    assert hash(m) == hash(AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit, abstract_device=dev))
    assert m != AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit)
    assert m != AbstractMesh((2, 4), ("a", "b"), abstract_device=dev)
    assert pickle.loads(pickle.dumps(m)) == m


def test_empty_abstract_mesh():
    m = AbstractMesh((), ())
    assert m.empty and m.size == 0 and repr(m) == "AbstractMesh((), axis_types=())"


@pytest.mark.parametrize(
    "args, error, message",
    [
        (
            ((2, 4), ("a", "b"), (AxisType.Explicit,)),
            ValueError,
            "Number of axis names should match",
        ),
        (
            ((2, 4), ("a", "b"), ("x", "y")),
            TypeError,
            "must be of type `polyjax.sharding.AxisType`",
        ),
        (((2, 4), ("a",)), ValueError, "one size per axis name"),
        (((2, 4), ("a", "a")), ValueError, "'a' repeats"),
    ],
)
def test_bad_abstract_meshes(args, error, message):
    with pytest.raises(error, match=message):
        AbstractMesh(*args)


def test_no_mesh_outside_any_context():
    assert get_abstract_mesh().empty
    assert get_concrete_mesh() is None


def test_use_abstract_mesh_nests_and_restores():
    outer, inner = AbstractMesh((2,), ("x",)), AbstractMesh((4,), ("y",))
    with use_abstract_mesh(outer):
        assert get_abstract_mesh() == outer
        with use_abstract_mesh(inner):
            assert get_abstract_mesh() == inner
        assert get_abstract_mesh() == outer
    assert get_abstract_mesh().empty
    with pytest.raises(TypeError, match="expects an AbstractMesh"):
        use_abstract_mesh((2,))


class _FakeMesh:
    """Stands for a concrete mesh: core only needs `abstract_mesh` and hashing."""

    def __init__(self, sizes, names):
        self.abstract_mesh = AbstractMesh(sizes, names)


def test_mesh_context_sets_now_and_restores_on_exit():
    m = _FakeMesh((2,), ("x",))
    before = config.trace_context()
    ctx = mesh_context.MeshContext(m, m.abstract_mesh)
    try:
        assert get_concrete_mesh() is m and get_abstract_mesh() == m.abstract_mesh
        # The mesh is part of the trace context: caches key on it.
        assert config.trace_context() != before
    finally:
        with ctx:
            pass
    assert get_concrete_mesh() is None and config.trace_context() == before


def test_mesh_context_is_per_thread():
    m = _FakeMesh((2,), ("x",))
    seen = []
    with mesh_context.MeshContext(m, m.abstract_mesh):
        t = threading.Thread(target=lambda: seen.append(get_concrete_mesh()))
        t.start()
        t.join()
    assert seen == [None]


def test_use_abstract_mesh_keeps_the_concrete_mesh_only_if_it_matches():
    m = _FakeMesh((2,), ("x",))
    with mesh_context.MeshContext(m, m.abstract_mesh):
        with use_abstract_mesh(AbstractMesh((2,), ("x",))):
            assert get_concrete_mesh() is m
        with use_abstract_mesh(AbstractMesh((4,), ("x",))):
            assert get_concrete_mesh() is None


def test_legacy_mesh_is_concrete_but_not_abstract():
    m = _FakeMesh((2,), ("x",))
    mesh_context.push_legacy_mesh(m)
    try:
        assert get_concrete_mesh() is m
        assert mesh_context.get_set_mesh() is None and get_abstract_mesh().empty
    finally:
        mesh_context.pop_legacy_mesh()
    assert get_concrete_mesh() is None


def test_spec_to_sharding_uses_the_registered_factory(monkeypatch):
    monkeypatch.setattr(mesh_context, "_spec_to_sharding", None)
    m = _FakeMesh((2,), ("x",))
    with pytest.raises(RuntimeError, match="no mesh is in context"):
        spec_to_sharding(P("x"))
    with pytest.raises(RuntimeError, match="import polyjax_sharding"):
        spec_to_sharding(P("x"), m)
    register_spec_to_sharding(lambda mesh, spec: ("sharding", mesh, spec))
    assert spec_to_sharding(P("x"), m) == ("sharding", m, P("x"))
    with mesh_context.MeshContext(m, m.abstract_mesh):
        assert spec_to_sharding(P("x")) == ("sharding", m, P("x"))
    with pytest.raises(TypeError, match="expects a PartitionSpec"):
        spec_to_sharding(("x",), m)
