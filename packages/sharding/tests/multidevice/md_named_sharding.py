"""NamedSharding over meshes of 8 host devices: layout vs NumPy, the Sharding interface,
the XLA and Shardy forms, and JAX's errors for bad specs."""

import itertools
import math

import numpy as np
import pytest
from jaxlib import xla_client

from polyjax_core import spec_to_sharding
from polyjax_sharding import (
    AxisType,
    DuplicateSpecError,
    IndivisibleError,
    NamedSharding,
    Sharding,
    SingleDeviceSharding,
    make_mesh,
    make_single_device_sharding,
    set_mesh,
)
from polyjax_sharding import PartitionSpec as P

U = P.UNCONSTRAINED


def _entry(axes):
    return None if not axes else (axes[0] if len(axes) == 1 else axes)


def all_specs(names, rank):
    """Every spec of length `rank` over `names`: each axis unused or on one dim, in any order."""
    specs = set()
    for targets in itertools.product(range(rank + 1), repeat=len(names)):
        groups = [[n for n, t in zip(names, targets) if t == d] for d in range(rank)]
        for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
            specs.add(P(*(_entry(o) for o in orders)))
    return sorted(specs, key=repr)


def _tiles(mesh, spec, ndim):
    entries = list(spec) + [None] * (ndim - len(spec))
    axes = [() if e is None or e is U else (e if isinstance(e, tuple) else (e,)) for e in entries]
    return axes, [math.prod(mesh.shape[a] for a in ax) for ax in axes]


def expected_block(mesh, spec, x, device):
    """The block of `x` that `device` must hold, from NumPy's array_split alone."""
    coords = dict(zip(mesh.axis_names, np.argwhere(mesh.devices == device)[0]))
    axes, tiles = _tiles(mesh, spec, x.ndim)
    block = x
    for d, (ax, t) in enumerate(zip(axes, tiles)):
        if ax:
            index = np.ravel_multi_index([coords[a] for a in ax], [mesh.shape[a] for a in ax])
            block = np.array_split(block, t, axis=d)[index]
    return block


def test_layout_of_every_spec_matches_numpy(mesh):
    """devices_indices_map, shard_shape and the replication count, for all rank <= 2 specs."""
    checked = 0
    for rank in (1, 2):
        for spec in all_specs(mesh.axis_names, rank):
            s = NamedSharding(mesh, spec)
            _, tiles = _tiles(mesh, spec, rank)
            shape = tuple(t * (d + 2) for d, t in enumerate(tiles))
            x = np.arange(math.prod(shape)).reshape(shape)
            indices = s.devices_indices_map(shape)
            assert list(indices) == list(mesh.devices.flat), spec
            holders = {}
            for device, index in indices.items():
                np.testing.assert_array_equal(x[index], expected_block(mesh, spec, x, device))
                assert x[index].shape == s.shard_shape(shape), spec
                holders.setdefault(x[index].tobytes(), []).append(device)
            # Every block is held, each by the devices of the axes the spec leaves out.
            assert len(holders) == math.prod(tiles), spec
            assert {len(h) for h in holders.values()} == {8 // math.prod(tiles)}, spec
            assert s.is_fully_replicated == (math.prod(tiles) == 1)
            checked += 1
    assert checked >= 5  # the fewest, for a one-axis mesh


def _blocks_from_hlo(hlo, mesh, shape):
    """device -> block start offsets, read from an HloSharding's tile assignment."""
    flat = mesh._flat_devices_tuple
    if hlo.is_replicated():
        return {d: (0,) * len(shape) for d in flat}
    dims = list(hlo.tile_assignment_dimensions())
    ids = np.array(hlo.tile_assignment_devices()).reshape(dims)
    data_dims = dims[: len(shape)]
    starts = {}
    for tile in itertools.product(*(range(t) for t in data_dims)):
        start = tuple(i * (n // t) for i, n, t in zip(tile, shape, data_dims))
        for logical in np.ravel(ids[tile]):
            starts[flat[logical]] = start
    return starts


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_xla_sharding_places_blocks_as_devices_indices_map(mesh, rank):
    for spec in all_specs(mesh.axis_names, min(rank, 2)):
        s = NamedSharding(mesh, spec)
        _, tiles = _tiles(mesh, spec, rank)
        shape = tuple(tiles)
        hlo = s._to_xla_hlo_sharding(rank)
        from_map = {
            d: tuple(0 if i.start is None else i.start for i in index)
            for d, index in s.devices_indices_map(shape).items()
        }
        assert _blocks_from_hlo(hlo, mesh, shape) == from_map, (spec, hlo)
        assert s._to_xla_hlo_sharding(rank) is hlo  # cached


@pytest.mark.parametrize(
    "shape, names, spec, ndim, text",
    [  # JAX 0.10.2's strings
        ((2, 4), ("a", "b"), P("a", "b"), 2, "{devices=[2,4]<=[8]}"),
        ((2, 4), ("a", "b"), P("b"), 2, "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
        ((2, 4), ("a", "b"), P(None, "a"), 2, "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"),
        ((2, 4), ("a", "b"), P(("b", "a")), 1, "{devices=[8]<=[2,4]T(1,0)}"),
        ((2, 4), ("a", "b"), P(U, "a"), 2, "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"),
        ((2, 4), ("a", "b"), P(), 2, "{replicated}"),
        ((1,), ("x",), P("x"), 1, "{replicated}"),
        (
            (2, 2, 2),
            ("x", "y", "z"),
            P("z", "x"),
            2,
            "{devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}",
        ),
        (
            (2, 2, 2),
            ("x", "y", "z"),
            P("z", None, "y"),
            3,
            "{devices=[2,1,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}",
        ),
    ],
)
def test_xla_sharding_strings(shape, names, spec, ndim, text):
    s = NamedSharding(make_mesh(shape, names, axis_types=AxisType.Auto), spec)
    assert str(s._to_xla_hlo_sharding(ndim)) == text


@pytest.mark.parametrize("rank", [1, 2])
def test_from_hlo_sharding_gives_back_an_equivalent_named_sharding(mesh, rank):
    base = NamedSharding(mesh, P())
    for spec in all_specs(mesh.axis_names, rank):
        s = NamedSharding(mesh, spec)
        hlo = s._to_xla_hlo_sharding(rank)
        # As XLA reports it: an explicit device list, not the iota form.
        explicit = xla_client.HloSharding.from_string(
            str(hlo) if hlo.is_replicated() else _explicit_form(hlo)
        )
        back = base._from_hlo_sharding(explicit, rank)
        assert isinstance(back, NamedSharding) and back.mesh is mesh
        assert back.is_equivalent_to(s, rank), (spec, back)
        trimmed = list(spec)
        while trimmed and trimmed[-1] is None:
            trimmed.pop()
        assert back.spec == P(*trimmed)
        assert s._from_hlo_sharding(hlo, rank) is s  # an unchanged sharding comes back as is
        assert base._from_hlo_sharding(hlo.to_proto(), rank) == back  # an OpSharding too


def _explicit_form(hlo):
    dims = ",".join(map(str, hlo.tile_assignment_dimensions()))
    devices = ",".join(map(str, hlo.tile_assignment_devices()))
    last = " last_tile_dim_replicate" if hlo.replicate_on_last_tile_dim() else ""
    return f"{{devices=[{dims}]{devices}{last}}}"


def test_from_hlo_sharding_keeps_the_memory_kind_and_drops_a_longer_spec(mesh):
    s = NamedSharding(mesh, P("x", None), memory_kind="pinned_host")
    replicated = xla_client.HloSharding.replicate()
    assert s._from_hlo_sharding(replicated, 1) == NamedSharding(
        mesh, P(), memory_kind="pinned_host"
    )


def test_sdy_form(devices):
    m = make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto)
    assert NamedSharding(m, P("a"))._to_sdy_sharding(3) == (
        (("a", 2), ("b", 4)),
        tuple(range(8)),
        (("a",), (), ()),
    )
    axes, ids, dims = NamedSharding(m, P(("b", "a"), U))._to_sdy_sharding(2)
    assert dims == (("b", "a"), None)
    rev = make_mesh((2, 4), ("a", "b"), devices=devices[::-1])
    assert NamedSharding(rev, P())._to_sdy_sharding(0)[1] == tuple(range(7, -1, -1))


def test_sharding_interface(mesh, devices):
    s = NamedSharding(mesh, P(mesh.axis_names[0]))
    assert isinstance(s, Sharding)
    assert s.device_set == set(devices) == s.addressable_devices
    assert s._device_assignment == tuple(mesh.devices.flat)
    assert s.num_devices == 8 and s.is_fully_addressable and s.has_addressable_devices
    assert s.memory_kind == "device" and s.mesh is mesh and s.spec == P(mesh.axis_names[0])
    shape = (16, 3)
    assert s.addressable_devices_indices_map(shape) == s.devices_indices_map(shape)
    assert not s.is_fully_replicated and NamedSharding(mesh, P()).is_fully_replicated
    pinned = s.with_memory_kind("pinned_host")
    assert pinned.memory_kind == "pinned_host" and pinned != s and pinned.spec == s.spec
    assert s.update(spec=P()) == NamedSharding(mesh, P())


def test_repr_equality_and_hash(devices):
    m = make_mesh((2, 4), ("a", "b"))
    s = NamedSharding(m, P("a", "b"))
    assert (
        repr(s)
        == str(s)
        == (
            "NamedSharding(mesh=Mesh('a': 2, 'b': 4, axis_types=(Explicit, Explicit)), "
            "spec=P('a', 'b'), memory_kind=device)"
        )
    )
    assert s == NamedSharding(make_mesh((2, 4), ("a", "b")), P("a", "b"), memory_kind="device")
    assert hash(s) == hash(NamedSharding(make_mesh((2, 4), ("a", "b")), P("a", "b")))
    # As in JAX 0.10.2: equality is the spec's (exact); equivalence is the layout's.
    a, a_none = NamedSharding(m, P("a")), NamedSharding(m, P("a", None))
    assert a != a_none and a.is_equivalent_to(a_none, 2)
    assert not a.is_equivalent_to(NamedSharding(m, P("b")), 2)
    assert NamedSharding(m, P("a")) != NamedSharding(
        make_mesh((2, 4), ("a", "b"), AxisType.Auto), P("a")
    )
    one = make_mesh((1,), ("x",), devices=devices[:1])
    single = SingleDeviceSharding(devices[0])
    assert NamedSharding(one, P("x")).is_equivalent_to(single, 2)
    assert NamedSharding(one, P("x")) != single and NamedSharding(one, P("x")).is_fully_replicated


def test_uneven_and_empty_dimensions():
    m = make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto)
    s = NamedSharding(m, P("a"))
    assert s.shard_shape((0,)) == (0,)
    assert list(s.devices_indices_map((0,)).values()) == [(slice(0, 0),)] * 8
    assert NamedSharding(m, P()).devices_indices_map(())[m.devices.flat[0]] == ()
    assert NamedSharding(m, P(None, "a")).shard_shape((5, 4)) == (5, 2)  # undivided dims may be odd


@pytest.mark.parametrize(
    "spec, error, message",
    [
        (P("c"), ValueError, r"Resource axis: c of P\('c',\) is not found in mesh: \('a', 'b'\)\."),
        (P(("a", "c")), ValueError, r"Resource axis: c of P\(\('a', 'c'\),\) is not found"),
        (P(1), ValueError, r"Resource axis: 1 of P\(1,\) is not found in mesh"),
        (
            P("a", "a"),
            DuplicateSpecError,
            r"at most one positional dimension, but P\('a', 'a'\) has duplicate entries for `a`",
        ),
        (P(("a", "b"), "a"), DuplicateSpecError, "duplicate entries for `a`"),
        (
            P("a", unreduced={"c"}),
            ValueError,
            r"Unreduced axes c is not found in mesh.axis_names=\('a', 'b'\)",
        ),
    ],
)
def test_bad_specs(spec, error, message):
    m = make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto)
    with pytest.raises(error, match=message):
        NamedSharding(m, spec)


def test_spec_longer_than_the_rank():
    s = NamedSharding(make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto), P("a", "b"))
    message = (
        r"Sharding NamedSharding\(mesh=Mesh\('a': 2, 'b': 4, axis_types=\(Auto, Auto\)\), "
        r"spec=P\('a', 'b'\), memory_kind=device\) is only valid for values of rank at least 2, "
        r"but was applied to a value of rank 1\."
    )
    for check in (s.shard_shape, s.devices_indices_map, s.check_compatible_aval):
        with pytest.raises(ValueError, match=message):
            check((8,))
    with pytest.raises(ValueError, match="rank at least 2"):
        s._to_xla_hlo_sharding(1)
    with pytest.raises(ValueError, match="rank at least 2"):
        s._to_sdy_sharding(1)


@pytest.mark.parametrize(
    "spec, shape, message",
    [
        (
            P("a", "b"),
            (8, 6),
            r"Sharding NamedSharding\(mesh=Mesh\('a': 2, 'b': 4, axis_types=\(Auto, Auto\)\), "
            r"spec=P\('a', 'b'\), memory_kind=device\) implies that array axis 1 is partitioned 4 "
            r"times, but the dimension size is 6 \(full shape: \(8, 6\), per-dimension tiling "
            r"factors: \[2, 4\] should evenly divide the shape\)",
        ),
        (P("a"), (3,), r"axis 0 is partitioned 2 times, but the dimension size is 3 .*\[2\]"),
        (P(None, ("a", "b")), (8, 4), r"axis 1 is partitioned 8 times.*\[1, 8\]"),
    ],
)
def test_indivisible_dimensions(spec, shape, message):
    s = NamedSharding(make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto), spec)
    assert issubclass(IndivisibleError, ValueError)
    for check in (s.shard_shape, s.devices_indices_map):
        with pytest.raises(IndivisibleError, match=message):
            check(shape)


def test_bad_constructor_arguments(mesh):
    with pytest.raises(TypeError, match="needs a polyjax.sharding.Mesh or AbstractMesh, got 3"):
        NamedSharding(3, P())
    # Over an abstract mesh it is a type, with no devices (typeof(x).sharding).
    with pytest.raises(ValueError, match="no devices"):
        NamedSharding(mesh.abstract_mesh, P()).device_set
    with pytest.raises(
        TypeError, match=r"spec must be a PartitionSpec, got \('x',\) of type tuple"
    ):
        NamedSharding(mesh, ("x",))
    with pytest.raises(
        ValueError,
        match="Could not find memory addressable by device cpu.*Got memory kind: bogus",
    ):
        NamedSharding(mesh, P(), memory_kind="bogus")
    with pytest.raises(TypeError, match="memory_kind must be a string or None, got 3"):
        NamedSharding(mesh, P(), memory_kind=3)
    with pytest.raises(TypeError, match="unexpected arguments"):
        NamedSharding(mesh, P()).update(devices=())


def test_make_single_device_sharding(devices):
    s = make_single_device_sharding(devices[3])
    assert s == SingleDeviceSharding(devices[3]) and s.device_set == {devices[3]}
    assert repr(s) == "SingleDeviceSharding(device=CpuDevice(id=3), memory_kind=device)"
    assert make_single_device_sharding(devices[3], memory_kind="pinned_host").memory_kind == (
        "pinned_host"
    )


def test_registered_as_the_spec_to_sharding_factory(mesh):
    with set_mesh(mesh):
        assert spec_to_sharding(P(mesh.axis_names[-1])) == NamedSharding(
            mesh, P(mesh.axis_names[-1])
        )


_SPMD_MODULE = """
module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func public @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>})
      -> (tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) {
    %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %r = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
        : (tensor<8x8xf32>, tensor<f32>) -> tensor<8xf32>
    %d = stablehlo.add %x, %x : tensor<8x8xf32>
    return %t, %r, %d : tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>
  }
}
"""


def test_from_hlo_sharding_reads_what_xla_chose(devices):
    """The output shardings XLA's partitioner picks for a transpose, a row sum and an add."""
    from jaxlib import _jax
    from jaxlib.mlir import ir

    from polyjax_interpreters import backends, mlir

    with mlir.make_ir_context():
        module = ir.Module.parse(_SPMD_MODULE)
        options = xla_client.CompileOptions()
        build = options.executable_build_options
        build.num_partitions, build.num_replicas = 8, 1
        build.use_spmd_partitioning = build.use_shardy_partitioner = True
        build.allow_spmd_sharding_propagation_to_output = [True]
        options.device_assignment = xla_client.DeviceAssignment.create(np.arange(8).reshape(1, 8))
        exe = backends.get_backend().compile_and_load(
            module, _jax.DeviceList(tuple(devices)), options
        )
    m = make_mesh((2, 4), ("a", "b"), axis_types=AxisType.Auto)
    s = NamedSharding(m, P("a", "b"))
    got = [s._from_hlo_sharding(o, n) for o, n in zip(exe.get_output_shardings(), (2, 1, 2))]
    assert got[0] == NamedSharding(m, P("b", "a"))
    assert got[1] == NamedSharding(m, P("a"))
    assert got[2] is s
