"""Mesh, make_mesh and the mesh in context, on 8 host devices (JAX 0.10.2's behaviour)."""

import threading
import warnings
from collections import OrderedDict

import numpy as np
import pytest

from polyjax_core import config, get_concrete_mesh, mesh_context, spec_to_sharding
from polyjax_sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    get_abstract_mesh,
    get_mesh,
    make_mesh,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)
from polyjax_sharding import PartitionSpec as P

EXPLICIT, AUTO = AxisType.Explicit, AxisType.Auto


def test_make_mesh_shapes(mesh_shape, devices):
    shape, names = mesh_shape
    m = make_mesh(shape, names)
    # JAX 0.10.2's defaults: Explicit axes, devices by id in row-major order.
    assert m.axis_types == (EXPLICIT,) * len(shape)
    np.testing.assert_array_equal(m.device_ids, np.arange(8).reshape(shape))
    assert m.device_ids.dtype == np.int64 and m.devices.dtype == object
    assert m.devices.shape == shape == m.axis_sizes
    assert m.shape == OrderedDict(zip(names, shape)) and type(m.shape) is OrderedDict
    assert m.axis_names == names and m.size == 8 and not m.empty
    assert m.local_devices == devices and m.local_mesh == m and not m.is_multi_process
    sizes = ", ".join(f"{n!r}: {s}" for n, s in zip(names, shape))
    types = "(" + ", ".join(["Explicit"] * len(shape)) + ("," if len(shape) == 1 else "") + ")"
    assert repr(m) == f"Mesh(axis_sizes={shape}, axis_names={names}, axis_types={types})"
    assert str(m) == f"Mesh({sizes}, axis_types={types})"
    assert m.abstract_mesh == AbstractMesh(
        shape, names, EXPLICIT, abstract_device=AbstractDevice("cpu", None, "cpu")
    )
    assert repr(m.abstract_mesh) == (
        f"AbstractMesh({sizes}, axis_types={types}, device_kind=cpu, num_cores=None, platform=cpu)"
    )


def test_mesh_equality_and_hash(devices):
    grid = np.array(devices).reshape(2, 4)
    a = Mesh(grid, ("a", "b"))
    assert a == Mesh(grid, ("a", "b")) and hash(a) == hash(Mesh(grid, ("a", "b")))
    assert a.axis_types == (AUTO, AUTO)
    assert a == make_mesh((2, 4), ("a", "b"), axis_types=AUTO)
    assert a != make_mesh((2, 4), ("a", "b"))  # Explicit
    assert a != Mesh(grid, ("a", "c"))
    assert a != Mesh(grid.reshape(4, 2), ("a", "b"))
    assert a != Mesh(grid[:, ::-1], ("a", "b"))
    assert len({a, Mesh(grid, ("a", "b")), Mesh(grid, ("b", "a"))}) == 2
    assert a.update(axis_names=("c", "d")) == Mesh(grid, ("c", "d"))


def test_mesh_devices_are_a_read_only_copy(devices):
    grid = np.array(devices).reshape(2, 4)
    m = Mesh(grid, ("a", "b"))
    grid[0, 0] = devices[7]
    assert m.devices[0, 0] == devices[0]
    with pytest.raises(ValueError, match="read-only"):
        m.devices[0, 0] = devices[1]


def test_mesh_accepts_sequences_and_a_name_string(devices):
    assert Mesh(devices, "x").shape == OrderedDict(x=8)
    assert Mesh(tuple(devices), ["x"]).axis_names == ("x",)
    assert Mesh([[devices[0], devices[1]]], ("a", "b")).axis_sizes == (1, 2)


def test_make_mesh_with_given_devices_keeps_their_order(devices):
    m = make_mesh((4, 2), ("a", "b"), devices=devices[::-1])
    np.testing.assert_array_equal(m.device_ids, np.arange(8)[::-1].reshape(4, 2))
    m = make_mesh((2, 2), ("a", "b"), devices=devices[4:])
    np.testing.assert_array_equal(m.device_ids, [[4, 5], [6, 7]])
    assert make_mesh((2, 3), ("a", "b")).size == 6  # the first 6 devices
    grid = make_mesh((2, 4), ("a", "b"), devices=devices[::-1]).devices
    np.testing.assert_array_equal(
        make_mesh((8,), ("a",), devices=grid).device_ids, np.arange(8)[::-1]
    )
    assert make_mesh((8,), "a").axis_names == ("a",)
    assert make_mesh((2, 4), ("a", "b"), EXPLICIT).axis_types == (EXPLICIT, EXPLICIT)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda d: make_mesh((16,), ("a",)),
            ValueError,
            r"Number of devices 8 must be >= .*\(16,\)",
        ),
        (lambda d: make_mesh((4,), ("a",), devices=d[:2]), ValueError, "Number of devices 2"),
        (lambda d: make_mesh((2, 4), ("a",)), ValueError, "one name per axis size"),
        (lambda d: make_mesh((4, 2), ("a", "b"), axis_types=(AUTO,)), ValueError, "should match"),
        (lambda d: make_mesh((4, 2), ("a", "b"), axis_types=("x", "y")), TypeError, "AxisType"),
        (
            lambda d: Mesh(np.array(d).reshape(2, 4), ("a",)),
            ValueError,
            r"devices.ndim == 2 and len\(axis_names\) == 1",
        ),
        (lambda d: Mesh(np.array(d).reshape(2, 4), ("a", "a")), ValueError, "'a' repeats"),
        (
            lambda d: Mesh(d[:4] * 2, ("a",)),
            ValueError,
            r"CpuDevice\(id=0\) appears more than once",
        ),
        (lambda d: Mesh([1, 2], ("a",)), TypeError, "Mesh devices must be devices, got 1"),
    ],
)
def test_bad_meshes(make, error, message, devices):
    with pytest.raises(error, match=message):
        make(devices)


def test_no_mesh_outside_any_context():
    assert get_mesh().empty and get_mesh().size == 0
    assert repr(get_mesh()) == "Mesh(axis_sizes=(), axis_names=())" and str(get_mesh()) == "Mesh()"
    assert get_abstract_mesh().empty and get_concrete_mesh() is None


def test_set_mesh_as_context_manager_nests(mesh):
    other = make_mesh((8,), ("w",))
    with set_mesh(mesh) as entered:
        assert entered is None
        assert get_mesh() is mesh and get_abstract_mesh() == mesh.abstract_mesh
        with set_mesh(other):
            assert get_mesh() is other
        assert get_mesh() is mesh
        with use_mesh(other):
            assert get_mesh() is other
        with set_mesh(None):
            assert get_mesh().empty and get_concrete_mesh() is None
    assert get_mesh().empty


def test_set_mesh_as_a_statement_stays_until_replaced(mesh):
    set_mesh(mesh)
    try:
        assert get_mesh() is mesh
        seen = []
        t = threading.Thread(target=lambda: seen.append(get_mesh()))
        t.start()
        t.join()
        assert seen[0].empty  # per thread, as in JAX
    finally:
        set_mesh(None)
    assert get_mesh().empty


def test_set_mesh_rejects_other_objects(mesh):
    with pytest.raises(
        ValueError, match=r"Expected mesh of type `polyjax.sharding.Mesh`. Got <class 'int'>"
    ):
        set_mesh(3)
    with pytest.raises(ValueError, match="AbstractMesh"):
        set_mesh(mesh.abstract_mesh)


def test_the_mesh_is_part_of_the_trace_context(mesh):
    before = config.trace_context()
    with set_mesh(mesh):
        assert config.trace_context() != before
    assert config.trace_context() == before


def test_bare_specs_become_named_shardings_over_the_mesh_in_context(mesh):
    with set_mesh(mesh):
        assert spec_to_sharding(P("x")) == NamedSharding(mesh, P("x"))
    with pytest.raises(RuntimeError, match="no mesh is in context"):
        spec_to_sharding(P("x"))


def test_with_mesh_is_deprecated_and_only_feeds_bare_specs(mesh):
    with pytest.warns(DeprecationWarning, match=r"use `with polyjax.set_mesh\(mesh\):`"):
        with mesh as entered:
            assert entered is mesh
            assert get_concrete_mesh() is mesh
            assert get_mesh().empty and get_abstract_mesh().empty  # as in JAX 0.10.2
            assert spec_to_sharding(P("x")) == NamedSharding(mesh, P("x"))
    assert get_concrete_mesh() is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with mesh, set_mesh(make_mesh((8,), ("w",))):
            assert get_concrete_mesh().axis_names == ("w",)  # set_mesh wins


def test_use_abstract_mesh_under_a_concrete_one(mesh):
    with set_mesh(mesh):
        with use_abstract_mesh(mesh.abstract_mesh):
            assert get_mesh() is mesh
        with use_abstract_mesh(AbstractMesh((8,), ("q",))):
            assert get_abstract_mesh().axis_names == ("q",)
            assert get_mesh().empty
        assert mesh_context.get_set_mesh() is mesh
