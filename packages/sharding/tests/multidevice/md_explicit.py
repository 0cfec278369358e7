"""Explicit sharding on 8 host devices: shardings in the types (docs/explicit-sharding.md).

Every expected type and error below is what JAX 0.10.2 gives for the same
program on a (2, 4) mesh of Explicit axes ``a``, ``b``; values are checked
against the same program run on one device (NumPy operands).
"""

import re

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core.aval_sharding import ShardingTypeError
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import ad, array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, random
from polyjax_sharding import (
    AxisType,
    NamedSharding,
    auto_axes,
    explicit_axes,
    get_abstract_mesh,
    make_mesh,
    reshard,
    set_mesh,
    shard_map,
)
from polyjax_sharding import PartitionSpec as P


@pytest.fixture(scope="module")
def mesh():
    m = make_mesh((2, 4), ("a", "b"))
    assert m.axis_types == (AxisType.Explicit,) * 2
    with set_mesh(m):
        yield m


def _value(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _put(mesh, shape, *spec, seed=0):
    return array.device_put(_value(shape, seed), NamedSharding(mesh, P(*spec)))


def _type(x):
    return str(x.aval)


# name -> (function, operands as (shape, spec), JAX 0.10.2's result type); values are
# checked against the function on one device, or against REFERENCE's where the
# function names shardings.
MATRIX = {
    "add a+ab": (lambda x, y: x + y, [((8, 4), ("a",)), ((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "add a+none": (lambda x, y: x + y, [((8, 4), ("a",)), ((8, 4), ())], "float32[8@a,4]"),
    "add a+(None,b)": (
        lambda x, y: x + y,
        [((8, 4), ("a",)), ((8, 4), (None, "b"))],
        "float32[8@a,4@b]",
    ),
    "broadcast rank": (lambda x, y: x + y, [((8, 4), ("a",)), ((4,), ("b",))], "float32[8@a,4@b]"),
    "scalar": (lambda x: x * 2, [((8, 4), ("a",))], "float32[8@a,4]"),
    "sin": (jnp.sin, [((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "astype": (lambda x: x.astype(jnp.int32), [((8, 4), ("a", "b"))], "int32[8@a,4@b]"),
    "reshape merge": (lambda x: x.reshape(32), [((8, 4), ("a",))], "float32[32@a]"),
    "reshape merge ab": (lambda x: x.reshape(32), [((8, 4), ("a", "b"))], "float32[32@(a,b)]"),
    "reshape split": (lambda x: x.reshape(2, 4, 4), [((8, 4), ("a",))], "float32[2@a,4,4]"),
    "reshape split 4": (lambda x: x.reshape(4, 2, 4), [((8, 4), ("a",))], "float32[4@a,2,4]"),
    "transpose": (lambda x: x.T, [((8, 4), ("a", "b"))], "float32[4@b,8@a]"),
    "sum 0": (lambda x: x.sum(0), [((8, 4), ("a", "b"))], "float32[4@b]"),
    "sum 1": (lambda x: x.sum(1), [((8, 4), ("a", "b"))], "float32[8@a]"),
    "slice unsharded dim": (lambda x: x[:, :2], [((8, 4), ("a",))], "float32[8@a,2]"),
    "concat 0": (lambda x: jnp.concatenate([x, x], 0), [((8, 4), ("a",))], "float32[16@a,4]"),
    "concat 1": (lambda x: jnp.concatenate([x, x], 1), [((8, 4), ("a",))], "float32[8@a,8]"),
    "broadcast_to": (
        lambda x: jnp.broadcast_to(x, (3, 8, 4)),
        [((8, 4), ("a", "b"))],
        "float32[3,8@a,4@b]",
    ),
    "expand": (lambda x: x[None], [((8, 4), ("a", "b"))], "float32[1,8@a,4@b]"),
    "rev": (lambda x: x[::-1], [((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "full_like": (lambda x: jnp.full_like(x, 3.0), [((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "zeros_like": (jnp.zeros_like, [((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "matmul free": (
        lambda x, w: x @ w,
        [((8, 4), ("a",)), ((4, 8), (None, "b"))],
        "float32[8@a,8@b]",
    ),
    "matmul one side contracted": (
        lambda x, w: x @ w,
        [((8, 4), (None, "b")), ((4, 8), ())],
        "float32[8,8]",
    ),
    "dot out_sharding": (
        lambda x, w: jnp.dot(x, w, out_sharding=P("a", "b")),
        [((8, 4), (None, "b")), ((4, 8), ("b", None))],
        "float32[8@a,8@b]",
    ),
    "matmul out_sharding": (
        lambda x, w: jnp.matmul(x, w, out_sharding=P("a", None)),
        [((8, 4), (None, "b")), ((4, 8), ("b", None))],
        "float32[8@a,8]",
    ),
    "einsum out_sharding": (
        lambda x, w: jnp.einsum("ij,jk->ik", x, w, out_sharding=P("a", None)),
        [((8, 4), (None, "b")), ((4, 8), ("b", None))],
        "float32[8@a,8]",
    ),
    "batched einsum": (
        lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
        [((2, 4, 4), ("a",)), ((2, 4, 4), ())],
        "float32[2@a,4,4]",
    ),
    "reshard": (lambda x: reshard(x, P(None, "a")), [((8, 4), ("a", "b"))], "float32[8,4@a]"),
    "grad": (
        ad.grad(lambda x: (jnp.sin(x) ** 2).sum()),
        [((8, 4), ("a", "b"))],
        "float32[8@a,4@b]",
    ),
    "vmap": (vmap(lambda r: r * 2), [((8, 4), ("a", "b"))], "float32[8@a,4@b]"),
    "vmap sum": (vmap(lambda r: r.sum()), [((8, 4), ("a", "b"))], "float32[8@a]"),
    "vmap spmd": (
        vmap(lambda r: r * 2, spmd_axis_name="a"),
        [((8, 4), (None, "b"))],
        "float32[8,4@b]",
    ),
    "scan": (
        lambda x: lax.scan(lambda c, _: (c * 2, None), x, None, length=3)[0],
        [((8, 4), ("a", "b"))],
        "float32[8@a,4@b]",
    ),
    "where scalar": (lambda x: jnp.where(x > 0, x, 0.0), [((8, 4), ("a",))], "float32[8@a,4]"),
    "take_along_axis": (
        lambda x: jnp.take_along_axis(x, jnp.zeros((8, 1), jnp.int32), axis=1),
        [((8, 4), ("a",))],
        "float32[8@a,1]",
    ),
    "grad relu": (
        ad.grad(lambda x: jnp.maximum(x, 0.0).sum()),
        [((8, 4), ("a", "b"))],
        "float32[8@a,4@b]",
    ),
    "cond": (
        lambda x: lax.cond(True, lambda: x, lambda: x * 2),
        [((8, 4), ("a", "b"))],
        "float32[8@a,4@b]",
    ),
}

REFERENCE = {
    "dot out_sharding": np.dot,
    "matmul out_sharding": np.matmul,
    "einsum out_sharding": np.matmul,
    "reshard": lambda x: x,
}

# name -> (function, operands, a piece of JAX 0.10.2's ShardingTypeError message)
ERRORS = {
    "add ab+ba": (
        lambda x, y: x + y,
        [((8, 4), ("a", "b")), ((8, 4), ("b", "a"))],
        "add got incompatible shardings for broadcasting: ('a', 'b'), ('b', 'a').",
    ),
    "add a+ba": (
        lambda x, y: x + y,
        [((8, 4), ("a",)), ((8, 4), ("b", "a"))],
        "add got incompatible shardings for broadcasting: ('a', None), ('b', 'a').",
    ),
    "matmul ambiguous": (
        lambda x, w: x @ w,
        [((8, 4), (None, "b")), ((4, 8), ("b", None))],
        "Contracting dimensions are sharded and it is ambiguous how the output should be "
        "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
        "lhs_contracting_spec=('b',) and rhs_contracting_spec=('b',)",
    ),
    "matmul duplicate": (
        lambda x: x @ x.T,
        [((8, 4), ("a",))],
        "dot_general operation with inputs: f32[8@a,4], f32[4,8@a] produces an illegally "
        "sharded result: f32[8@a,8@a]",
    ),
    "concat mismatch": (
        lambda x, y: jnp.concatenate([x, y], 1),
        [((8, 4), ("a",)), ((8, 4), ())],
        "All operands should have the same sharding.",
    ),
    "cumsum": (
        lambda x: jnp.cumsum(x, 0),
        [((8, 4), ("a", "b"))],
        "Input should be unsharded over the axis being reduced. Got input type="
        "float32[8@a,4@b] and axis=0",
    ),
    "sort": (
        lambda x: jnp.sort(x, 0),
        [((8, 4), ("a", "b"))],
        "Arguments to sort must be unsharded over the sorting dimension.",
    ),
    "where cases": (
        lambda x, y: jnp.where(x > 0, x, y),
        [((8, 4), ("a",)), ((8, 4), ("a", "b"))],
        "select cases must have the same shardings",
    ),
}


def _operands(mesh, specs):
    return [_put(mesh, shape, *spec, seed=k) for k, (shape, spec) in enumerate(specs)]


def test_types_print_as_jax(mesh):
    x = _put(mesh, (8, 4), "a")
    assert repr(x.aval) == "ShapedArray(float32[8@a,4])"
    assert _type(_put(mesh, (8, 4), ("a", "b"))) == "float32[8@(a,b),4]"
    assert repr(x.aval.sharding.spec) == "P('a', None)"
    text = str(make_jaxpr(lambda v: v * 2)(x))
    assert text == "{ lambda ; a:f32[8@a,4]. let b:f32[8@a,4] = mul a 2.0:f32[] in (b,) }"
    # Auto axes stay out of the type.
    auto = make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    y = array.device_put(_value((8, 4)), NamedSharding(auto, P("a")))
    assert _type(y) == "float32[8,4]"


@pytest.mark.parametrize("name", list(MATRIX))
def test_matrix_types(mesh, name):
    f, specs, expected = MATRIX[name]
    out = make_jaxpr(f)(*_operands(mesh, specs)).out_avals[0]
    assert str(out) == expected


# One case of each kind of rule (XLA compiles a program of every case too slowly).
VALUE_CASES = (
    "add a+ab",
    "broadcast rank",
    "reshape merge ab",
    "transpose",
    "sum 0",
    "concat 0",
    "dot out_sharding",
    "einsum out_sharding",
    "reshard",
    "grad",
    "take_along_axis",
)


def test_matrix_values_equal_one_device(mesh):
    """Cases of MATRIX in one jitted program (one compilation), against the same
    program on one device (or REFERENCE)."""
    names = list(VALUE_CASES)
    args = [_operands(mesh, MATRIX[n][1]) for n in names]

    def run_all(fs, groups):
        return [f(*g) for f, g in zip(fs, groups)]

    sharded = jit(lambda groups: run_all([MATRIX[n][0] for n in names], groups))(args)
    assert [str(o.aval) for o in sharded] == [MATRIX[n][2] for n in names]
    plain = [[np.asarray(a) for a in g] for g in args]
    local = [n for n in names if n not in REFERENCE]  # (REFERENCE: cases naming shardings)
    with set_mesh(None):  # the same programs on one device, unsharded
        one = jit(lambda groups: run_all([MATRIX[n][0] for n in local], groups))(
            [plain[names.index(n)] for n in local]
        )
    expected = dict(zip(local, one))
    for n in set(REFERENCE) & set(names):
        expected[n] = REFERENCE[n](*plain[names.index(n)])
    for n, got in zip(names, sharded):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected[n]), 1e-5, 1e-5, err_msg=n)


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(mesh, name):
    f, specs, message = ERRORS[name]
    args = _operands(mesh, specs)
    with pytest.raises(ShardingTypeError) as info:
        make_jaxpr(f)(*args)
    assert message in str(info.value)


def test_types_are_part_of_the_cache_key(mesh):
    traces = []

    @jit
    def f(x):
        traces.append(str(x.aval))
        return x + 1

    f(_put(mesh, (8, 4), "a"))
    f(_put(mesh, (8, 4), None, "b"))
    f(_put(mesh, (8, 4), "a", seed=3))
    assert traces == ["float32[8@a,4]", "float32[8,4@b]"]


def test_lowering_pins_the_typed_intermediates(mesh):
    x, w = _put(mesh, (8, 4), "a"), _put(mesh, (4, 8), None, "b")
    text = jit(lambda x, w: jnp.sin(x @ w)).lower(x, w).as_text()
    assert text.count("sdy.sharding_constraint") == 2
    assert '<@mesh, [{"a"}, {"b"}]>' in text
    out = jit(lambda x, w: jnp.sin(x @ w))(x, w)
    assert out.sharding.spec == P("a", "b")


def test_creation_and_random_out_sharding(mesh):
    z = jnp.zeros((8, 4), out_sharding=P("a"))  # eagerly: placed as typed
    assert _type(z) == "float32[8@a,4]" and z.sharding.spec == P("a")
    x = _put(mesh, (8, 4), "a", "b")

    def make(key, x):
        return (
            jnp.arange(8, out_sharding=P("a")),
            jnp.full((8, 4), 2.0, np.float32, out_sharding=P(None, "b")),
            random.normal(key, (8, 4), out_sharding=P("a")),
            jnp.reshape(x, (32,), out_sharding=P("b")),
        )

    key = random.key(0)
    outs = jit(make)(key, x)
    assert [_type(o) for o in outs] == [
        "int32[8@a]",
        "float32[8,4@b]",
        "float32[8@a,4]",
        "float32[32@b]",
    ]
    np.testing.assert_array_equal(np.asarray(outs[0]), np.arange(8))
    np.testing.assert_array_equal(np.asarray(outs[3]), np.asarray(x).reshape(32))
    with set_mesh(None):
        np.testing.assert_array_equal(np.asarray(outs[2]), np.asarray(random.normal(key, (8, 4))))


def test_random_gamma_sharding(mesh):
    from polyjax_numpy.random._gamma import random_gamma_p

    a = _put(mesh, (8, 4), "a", "b")
    k = random.key(0)
    # The sampler reshards its parameters unsplit first and gives unsplit draws (JAX's type).
    draw = jit(lambda k, a: random.gamma(k, a))
    out = draw(k, a)
    assert str(out.aval) == "float32[8,4]"
    np.testing.assert_allclose(np.asarray(out), np.asarray(draw(k, np.asarray(a))), rtol=1e-6)
    # The primitive's rule: draws split as the parameters; keys split otherwise: an error.
    keys = _put(mesh, (8, 2), "a").astype(np.uint32)
    bind = lambda k, p: random_gamma_p.bind(k, p, log_space=False)  # noqa: E731
    assert str(make_jaxpr(bind)(keys, a).out_avals[0]) == "float32[8@a,4@b]"
    with pytest.raises(ShardingTypeError, match="the keys must be split as the parameters"):
        make_jaxpr(bind)(keys, _put(mesh, (8, 4), None, "b"))


def test_abstract_mesh_inside_traced_code(mesh):
    seen = []
    jit(lambda x: seen.append(get_abstract_mesh()) or x)(_put(mesh, (8, 4), "a"))
    assert seen == [mesh.abstract_mesh]


def test_grad_cotangents_take_the_primal_sharding(mesh):
    x, w = _put(mesh, (8, 4), "a"), _put(mesh, (4, 8), None, "b", seed=1)
    gx, gw = jit(ad.grad(lambda x, w: jnp.sin(x @ w).sum(), argnums=(0, 1)))(x, w)
    assert (_type(gx), _type(gw)) == ("float32[8@a,4]", "float32[4,8@b]")


def test_scan_carry_mismatch_is_a_clear_error(mesh):
    x = _put(mesh, (8, 4), "a")
    body = lambda c, _: (reshard(c, P("a", "b")), None)  # noqa: E731
    with pytest.raises(TypeError, match=r"has type float32\[8@a,4\] but the corresponding output"):
        jit(lambda x: lax.scan(body, x, None, length=2))(x)
    with pytest.raises(TypeError, match="cond branches must have equal output types"):
        y = _put(mesh, (8, 4), "a", "b")
        jit(lambda x, y: lax.cond(True, lambda: x, lambda: y))(x, y)


@pytest.mark.parametrize("spmd", [None, "a"])
@pytest.mark.parametrize(
    "batch, want", [(None, "float32[8,4@b]"), ("a", "float32[8@a,4@b]")], ids=["unsplit", "a"]
)
def test_vmap_constraint_keeps_the_batched_split(mesh, spmd, batch, want):
    # JAX 0.10.2: the batched dimension of a reshard keeps its operand's split, with
    # or without spmd_axis_name; the array is laid out as its type says.
    x = _put(mesh, (8, 4), batch, "b")
    f = vmap(lambda r: reshard(r * 2, P("b")), spmd_axis_name=spmd)
    assert str(make_jaxpr(f)(x).out_avals[0]) == want
    out = jit(f)(x)
    assert str(out.aval) == want and out.sharding.spec[:2] == (batch, "b")
    np.testing.assert_allclose(np.asarray(out), 2 * np.asarray(x))


def test_auto_and_explicit_axes(mesh):
    x = _put(mesh, (8, 4), "a")
    seen = []

    def inner(v):
        seen.append(str(v.aval))
        return v * 2

    out = jit(auto_axes(inner, out_sharding=P(None, "b")))(x)
    assert seen == ["float32[8,4]"] and _type(out) == "float32[8,4@b]"
    np.testing.assert_allclose(np.asarray(out), 2 * np.asarray(x))
    auto = make_mesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto,) * 2)
    with set_mesh(auto):
        y = explicit_axes(lambda v: (seen.append(str(v.aval)), v + 1)[1], in_sharding=P("a"))(
            np.ones((8, 4), np.float32)
        )
    assert seen[-1] == "float32[8@a,4]" and _type(y) == "float32[8,4]"


def test_shard_map_makes_explicit_axes_manual(mesh):
    x = _put(mesh, (8, 4), "a", "b")
    seen = []

    def body(v):
        seen.append((str(v.aval), get_abstract_mesh().manual_axes))
        return v * 2

    out = jit(shard_map(body, mesh=mesh, in_specs=P("a", "b"), out_specs=P("a", "b")))(x)
    assert seen[0][0].startswith("float32[4,1]") and set(seen[0][1]) == {"a", "b"}
    np.testing.assert_allclose(np.asarray(out), 2 * np.asarray(x))


@pytest.mark.parametrize(
    "spec, have, arg",
    [
        (P("b"), ("a",), "float32[8@a,4]"),
        (P("a", "b"), ("a",), "float32[8@a,4]"),
        (P("a"), ("a", "b"), "float32[8@a,4@b]"),
        (P("a"), (), "float32[8,4]"),
    ],
)
def test_shard_map_checks_operand_types_against_in_specs(mesh, spec, have, arg):
    x = _put(mesh, (8, 4), *have)
    f = shard_map(lambda v: v, mesh=mesh, in_specs=spec, out_specs=spec)
    want = spec._normalized_spec_for_aval(2)
    message = (
        f"in_specs passed to shard_map: {want} does not match the specs of the input: "
        f"{P(*have)._normalized_spec_for_aval(2)} for arg: {arg}. `in_specs` is an optional"
    )
    for g in (f, jit(f)):  # (JAX 0.10.2's message, eagerly and under jit)
        with pytest.raises(ValueError, match=re.escape(message)):
            g(x)
    # Matching types pass, with in_specs given (padded or not) or inferred.
    y = _put(mesh, (8, 4), *spec)
    assert str(f(y).aval) == str(y.aval)
    assert str(shard_map(lambda v: v, mesh=mesh, out_specs=spec)(y).aval) == str(y.aval)


def test_mlp_training_step_matches_one_device(mesh):
    """Data parallel over `a`, tensor parallel over `b`: the loss curve of 3 SGD steps."""
    xs, ys = _value((16, 8), 1), _value((16, 4), 2)
    params = {"w1": _value((8, 16), 3) * 0.3, "w2": _value((16, 4), 4) * 0.3}
    specs = {"w1": P(None, "b"), "w2": P("b", None)}

    def loss(p, x, y, out_sharding):
        h = jnp.maximum(jnp.dot(x, p["w1"]), 0.0)
        # `h` is split over `b` along the contracted dimension, and so is `w2`.
        out = jnp.dot(h, p["w2"], out_sharding=out_sharding)
        return jnp.mean((out - y) ** 2)

    def curve(p, x, y, out_sharding=None):
        @jit
        def step(p, x, y):
            value, g = ad.value_and_grad(loss)(p, x, y, out_sharding)
            return value, {k: p[k] - 0.1 * g[k] for k in p}

        losses = []
        for _ in range(3):
            value, p = step(p, x, y)
            losses.append(float(value))
        return losses, p

    p = {k: array.device_put(v, NamedSharding(mesh, specs[k])) for k, v in params.items()}
    x = array.device_put(xs, NamedSharding(mesh, P("a")))
    y = array.device_put(ys, NamedSharding(mesh, P("a")))
    sharded, p_out = curve(p, x, y, P("a"))
    assert _type(p_out["w1"]) == "float32[8,16@b]" and _type(p_out["w2"]) == "float32[16@b,4]"
    with set_mesh(None):
        one, _ = curve(dict(params), xs, ys)
    np.testing.assert_allclose(sharded, one, rtol=1e-4)
    assert sharded[-1] < sharded[0]


def test_vmap_body_sees_the_other_dimensions_split(mesh):
    seen = []
    vmap(lambda r: seen.append(str(r.aval)) or r)(_put(mesh, (8, 4), "a", "b"))
    assert seen == ["float32[4@b]"]  # as JAX 0.10.2's typeof inside vmap


def test_inspect_array_sharding_reports_the_type_sharding_under_jit():
    from polyjax_interpreters.array import device_put
    from polyjax_interpreters.jit import jit
    from polyjax_numpy.debugging import inspect_array_sharding
    from polyjax_sharding import NamedSharding, make_mesh, set_mesh

    mesh = make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    x = device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x", "y")))
    seen = []
    inspect_array_sharding(x, callback=seen.append)
    with set_mesh(mesh):
        jit(lambda a: inspect_array_sharding(a.T, callback=seen.append))(x)
    assert [tuple(s.spec) for s in seen] == [("x", "y"), ("y", "x")]
    # Auto axes: the partitioner decides, and polyjax says it cannot tell.
    auto = make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    z = device_put(np.ones(8, np.float32), NamedSharding(auto, P("x")))
    with set_mesh(None), pytest.raises(NotImplementedError, match="laid out by the partitioner"):
        jit(lambda a: inspect_array_sharding(a, callback=seen.append))(z)
