"""AvalSharding: a type's explicit sharding, printed as JAX 0.10.2 prints it."""

import numpy as np

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.aval_sharding import AvalSharding
from polyjax_core.mesh import AbstractMesh, AxisType

MESH = AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit)


def test_printing_and_equality():
    a = ShapedArray((8, 4), np.float32, sharding=AvalSharding.make(MESH, ("a",), 2))
    assert str(a) == "float32[8@a,4]" and a.str_short(short_dtypes=True) == "f32[8@a,4]"
    b = ShapedArray((8, 4), np.float32, sharding=AvalSharding.make(MESH, (("a", "b"),), 2))
    assert str(b) == "float32[8@(a,b),4]"
    plain = ShapedArray((8, 4), np.float32)
    assert a != b and a != plain and hash(a) != hash(plain)
    assert a == ShapedArray((8, 4), np.float32, sharding=AvalSharding.make(MESH, ("a", None), 2))


def test_update_keeps_the_sharding_only_at_the_same_rank():
    a = ShapedArray((8, 4), np.float32, sharding=AvalSharding.make(MESH, ("a",), 2))
    assert a.update(dtype=np.int32).aval_sharding == a.aval_sharding
    assert a.update(shape=(32,)).aval_sharding is None
    assert a.update(sharding=None).aval_sharding is None


def test_only_explicit_axes_enter_the_type():
    mixed = AbstractMesh((2, 4), ("a", "b"), (AxisType.Explicit, AxisType.Auto))
    s = AvalSharding.make(mixed, ("a", "b"), 2)
    assert s.entries == (("a",), ())
    assert AvalSharding.make(mixed, (None, "b"), 2) is None


def test_unreduced_and_reduced_axes_print_hash_and_swap_for_cotangents():
    from polyjax_core.aval_sharding import cotangent_type
    from polyjax_core.partition_spec import PartitionSpec as P

    u = AvalSharding.make(MESH, P("a", None, unreduced={"b"}), 2)
    r = AvalSharding.make(MESH, P("a", None, reduced={"b"}), 2)
    assert str(ShapedArray((8, 4), np.float32, sharding=u)) == "float32[8@a,4]{U:b}"
    assert str(ShapedArray((), np.float32, sharding=AvalSharding.make(MESH, (), 0, (), {"b"}))) == (
        "float32[]{R:b}"
    )
    both = AvalSharding.make(MESH, (), 1, {"a"}, {"b"})
    vma = frozenset({"a"})
    assert str(ShapedArray((8,), np.float32, vma=vma, sharding=both)) == "float32[8]{V:a, U:a, R:b}"
    plain = AvalSharding.make(MESH, ("a",), 2)
    assert len({u, r, plain}) == 3 and u.spec == P("a", None, unreduced={"b"})
    assert cotangent_type(u) == r and cotangent_type(r) == u and cotangent_type(plain) is plain
