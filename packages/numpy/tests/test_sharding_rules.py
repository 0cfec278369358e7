"""Sharding rules (explicit mode) of the lax primitives, on abstract meshes (no devices).

`test_every_primitive_has_a_sharding_rule` is the coverage gate: a new lax
primitive needs a rule (docs/explicit-sharding.md). The 8-device behaviour
(values, lowering, JAX's printed types) is in
packages/sharding/tests/multidevice/md_explicit.py.
"""

import numpy as np
import pytest

from polyjax_core import aval_sharding
from polyjax_core.abstract_values import ShapeDtypeStruct
from polyjax_core.aval_sharding import AvalSharding, ShardingTypeError
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_core.mesh import AbstractMesh, AxisType
from polyjax_core.mesh_context import use_abstract_mesh
from polyjax_core.partition_spec import PartitionSpec as P
from polyjax_core.primitive import Primitive
from polyjax_numpy import lax, ref
from polyjax_numpy import numpy as jnp
from polyjax_numpy.lax import linalg

MESH = AbstractMesh((2, 4), ("a", "b"), AxisType.Explicit)


def _exported_primitives() -> dict[str, Primitive]:
    return {
        v.name: v
        for m in (lax, linalg)
        for k, v in vars(m).items()
        if k.endswith("_p") and isinstance(v, Primitive)
    }


# Primitives whose outputs are all tokens: a token has no dimensions to shard, so
# these need no rule (`apply_rule` leaves a token's type as it is).
TOKEN_RESULTS = {"create_token", "after_all", "psend"}


def test_every_primitive_has_a_sharding_rule():
    missing = sorted(
        n
        for n, p in _exported_primitives().items()
        if p not in aval_sharding.sharding_rules and n not in TOKEN_RESULTS
    )
    assert not missing, (
        f"lax primitives without a sharding rule: {missing}. Add each name to DEFAULT_RULES "
        "(or ELEMENTWISE) in polyjax_numpy/lax/_sharding_rules.py, or pass sharding=rule "
        "to its define_rules call (docs/explicit-sharding.md)."
    )


def test_tokens_need_no_sharding_rule():
    # Tokens made and joined next to a sharded array: the array keeps its type.
    def f(x):
        return lax.after_all(lax.create_token(), lax.create_token(x)), x * 2

    with use_abstract_mesh(MESH):
        out = make_jaxpr(f)(_arg((8, 4), "a")).out_avals
    assert [a.str_short() for a in out] == ["Tok", "float32[8@a,4]"]


def _arg(shape, *spec):
    return ShapeDtypeStruct(shape, np.float32, sharding=AvalSharding.make(MESH, spec, len(shape)))


def _out_type(f, *args):
    return str(make_jaxpr(f)(*args).out_avals[0])


# Expected types: what JAX 0.10.2 gives for the same programs on a (2, 4) mesh.
@pytest.mark.parametrize(
    ("f", "args", "expected"),
    [
        (lambda x, y: x * y, [((8, 4), "a"), ((8, 4), None, "b")], "float32[8@a,4@b]"),
        (lambda x: x.T, [((8, 4), "a", "b")], "float32[4@b,8@a]"),
        (lambda x: x.reshape(2, 4, 4), [((8, 4), "a")], "float32[2@a,4,4]"),
        (lambda x: x.sum(1), [((8, 4), "a", "b")], "float32[8@a]"),
        (lambda x, w: x @ w, [((8, 4), "a"), ((4, 8), None, "b")], "float32[8@a,8@b]"),
        (lambda x: jnp.concatenate([x, x]), [((8, 4), "a")], "float32[16@a,4]"),
        (lambda x: x[:, jnp.array([0, 1])], [((8, 4), "a")], "float32[8@a,2]"),
        (lambda x: x.at[:, jnp.array([0, 1])].set(1.0), [((8, 4), "a")], "float32[8@a,4]"),
        (lambda x: lax.top_k(x, 2)[0], [((8, 4), "a")], "float32[8@a,2]"),
        (lambda x: jnp.fft.fft(x, axis=1), [((8, 4), "a")], "complex64[8@a,4]"),
        (lambda x: lax.dynamic_slice(x, (0, 1), (8, 2)), [((8, 4), "a")], "float32[8@a,2]"),
        (lambda x: ref.freeze(ref.new_ref(x)), [((8, 4), "a")], "float32[8@a,4]"),
        (lambda x: ref.new_ref(x)[...], [((8, 4), "a")], "float32[8@a,4]"),
        (lambda x: linalg.tridiagonal(x)[1], [((8, 4, 4), "a")], "float32[8@a,4]"),
        (lambda x: lax.tile(x, (1, 2)), [((8, 4), "a")], "float32[8@a,8]"),
        (lambda x: lax.stack([x, x], 1), [((8, 4), "a", "b")], "float32[8@a,2,4@b]"),
        (lambda x: lax.unstack(x, 1)[0], [((8, 4), "a")], "float32[8@a]"),
        (
            lambda a, c: linalg.ormqr(a, c[..., 0], c),
            [((8, 4, 4), "a"), ((8, 4, 4), "a")],
            "float32[8@a,4,4]",
        ),
        (lambda a: linalg.symmetric_product(a, a), [((8, 4, 4), "a")], "float32[8@a,4,4]"),
        (
            lambda r: linalg.cholesky_update(r, r[..., 0]),
            [((8, 4, 4), "a")],
            "float32[8@a,4,4]",
        ),
        (
            lambda x: linalg.lu_pivots_to_permutation(lax.convert_element_type(x, "int32"), 5),
            [((8, 4), "a")],
            "int32[8@a,5]",
        ),
        (
            lambda lhs, rhs: lax.conv(lhs, rhs, (1, 1), "VALID"),
            [((8, 3, 6, 6), "a"), ((4, 3, 3, 3),)],
            "float32[8@a,4,4,4]",
        ),
    ],
)
def test_rules_on_an_abstract_mesh(f, args, expected):
    assert _out_type(f, *[_arg(*a) for a in args]) == expected


def test_sharded_references_are_indexed_by_slices_only():
    with pytest.raises(TypeError, match="sharded ref .* only be indexed by slices"):
        make_jaxpr(lambda x: ref.new_ref(x)[0])(_arg((8, 4), "a"))


# out_sharding= as a primitive parameter (JAX 0.10.2's types for the same calls).
@pytest.mark.parametrize(
    ("f", "args", "expected"),
    [
        (
            lambda k: lax.rng_bit_generator(k, (8, 4), out_sharding=P("a"))[1],
            [((4,),)],
            "uint32[8@a,4]",
        ),
        (
            lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, (1,), "VALID", out_sharding=P("a")),
            [((8, 2, 4),), ((3, 2, 2),)],
            "float32[8@a,3,3]",
        ),
        (
            lambda x: lax.reduce_sum(x, (1,), out_sharding=P("b")),
            [((8, 4), "a", "b")],
            "float32[8@b]",
        ),
        (lambda x: lax.reduce_max(x, (0,), out_sharding=P("b")), [((8, 4),)], "float32[4@b]"),
    ],
)
def test_out_sharding_parameters_on_an_abstract_mesh(f, args, expected):
    operands = [ShapeDtypeStruct(a[0], np.uint32) if a[0] == (4,) else _arg(*a) for a in args]
    with use_abstract_mesh(MESH):
        assert _out_type(f, *operands) == expected


def test_batched_linalg_needs_unsplit_matrices():
    with pytest.raises(ShardingTypeError, match="tridiagonal: unsplit matrix dims"):
        make_jaxpr(linalg.tridiagonal)(_arg((8, 4, 4), None, "b"))


def test_errors_name_the_operands():
    x, y = _arg((8, 4), "a", "b"), _arg((8, 4), "b", "a")
    with pytest.raises(ShardingTypeError, match=r"add got incompatible shardings .*\('a', 'b'\)"):
        make_jaxpr(lambda x, y: x + y)(x, y)
    with pytest.raises(ShardingTypeError, match="ambiguous"):
        make_jaxpr(lambda x, w: x @ w)(_arg((8, 4), None, "b"), _arg((4, 8), "b"))


def test_unsharded_programs_carry_no_sharding():
    s = AvalSharding.make(MESH, (None, None), 2)
    assert s is None  # a type split along no axis carries none: nothing changes
    auto = AbstractMesh((2,), ("a",), AxisType.Auto)
    assert AvalSharding.make(auto, ("a",), 1) is None  # Auto axes stay out of types
