"""``out_sharding=`` of every function JAX 0.10.2 gives one, on 8 host devices.

On a (2, 4) mesh of Explicit axes ``a``, ``b``: the result's type has the
requested sharding (what JAX's ``typeof`` shows for the same call) and its
values equal the same call without ``out_sharding`` (for the samplers: the
same key gives the same draws, as in JAX). The contractions, creation
functions and ``reshape`` are in md_explicit.py; docs/explicit-sharding.md
lists the sites.
"""

import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core.aval_sharding import ShardingTypeError
from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_interpreters import array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, random
from polyjax_sharding import NamedSharding, make_mesh, set_mesh
from polyjax_sharding import PartitionSpec as P


@pytest.fixture(scope="module")
def mesh():
    m = make_mesh((2, 4), ("a", "b"))
    with set_mesh(m):
        yield m


def _x(mesh, *spec):
    value = np.arange(32, dtype=np.float32).reshape(8, 4) / 7
    return array.device_put(value, NamedSharding(mesh, P(*spec)))


S = (8, 4)
# name -> f(key, **out_sharding); each result's leading dimension has size 8.
SAMPLERS = {
    "ball": lambda k, **o: random.ball(k, 4, shape=(8,), **o),
    "bernoulli": lambda k, **o: random.bernoulli(k, 0.3, S, **o),
    "beta": lambda k, **o: random.beta(k, 2.0, 3.0, S, **o),
    "categorical": lambda k, **o: random.categorical(k, jnp.zeros((8, 5)), **o),
    "cauchy": lambda k, **o: random.cauchy(k, S, **o),
    "chisquare": lambda k, **o: random.chisquare(k, 3.0, S, **o),
    "dirichlet": lambda k, **o: random.dirichlet(k, jnp.ones(3), (8,), **o),
    "exponential": lambda k, **o: random.exponential(k, S, **o),
    "f": lambda k, **o: random.f(k, 2.0, 3.0, S, **o),
    "gamma": lambda k, **o: random.gamma(k, 2.0, S, **o),
    "generalized_normal": lambda k, **o: random.generalized_normal(k, 1.5, S, **o),
    "geometric": lambda k, **o: random.geometric(k, 0.3, S, **o),
    "gumbel": lambda k, **o: random.gumbel(k, S, **o),
    "laplace": lambda k, **o: random.laplace(k, S, **o),
    "loggamma": lambda k, **o: random.loggamma(k, 2.0, S, **o),
    "logistic": lambda k, **o: random.logistic(k, S, **o),
    "lognormal": lambda k, **o: random.lognormal(k, 1.0, S, **o),
    "maxwell": lambda k, **o: random.maxwell(k, S, **o),
    "multivariate_normal": lambda k, **o: random.multivariate_normal(
        k, jnp.zeros(3), jnp.eye(3), (8,), **o
    ),
    "orthogonal": lambda k, **o: random.orthogonal(k, 4, (8,), **o),
    "pareto": lambda k, **o: random.pareto(k, 2.0, S, **o),
    "permutation": lambda k, **o: random.permutation(k, 8, **o),
    "poisson": lambda k, **o: random.poisson(k, 3.0, S, **o),
    "rademacher": lambda k, **o: random.rademacher(k, S, **o),
    "randint": lambda k, **o: random.randint(k, S, 0, 10, **o),
    "rayleigh": lambda k, **o: random.rayleigh(k, 2.0, S, **o),
    "t": lambda k, **o: random.t(k, 3.0, S, **o),
    "triangular": lambda k, **o: random.triangular(k, 0.0, 0.5, 1.0, S, **o),
    "truncated_normal": lambda k, **o: random.truncated_normal(k, -1.0, 1.0, S, **o),
    "wald": lambda k, **o: random.wald(k, 1.0, S, **o),
    "normal": lambda k, **o: random.normal(k, S, **o),
    "uniform": lambda k, **o: random.uniform(k, S, minval=-1.0, **o),
    "bits": lambda k, **o: random.bits(k, S, **o),
}


def _leading_split(aval):
    dims = str(aval).split("[")[1]
    return dims.startswith("8@a") and "@" not in dims[3:]


# Slow to compile (a rejection loop, a factorization): checked to take
# out_sharding through the same wrapper as the others, whose draws are compared.
SLOW = (
    "ball beta chisquare dirichlet f gamma generalized_normal loggamma multivariate_normal t"
).split()


def test_samplers_draw_the_same_values_split_as_asked(mesh):
    # Eagerly, the split draw reuses the plain draw's compiled body.
    key = random.key(0)
    for name, draw in SAMPLERS.items():
        if name in SLOW:
            fun = getattr(random, name)
            assert fun.__wrapped__.__qualname__ == name, name  # `replicated_inside`
            assert fun.__code__ is random.exponential.__code__, name
            continue
        plain, split = draw(key), draw(key, out_sharding=P("a"))
        assert _leading_split(split.aval) and not _leading_split(plain.aval), (name, split.aval)
        np.testing.assert_array_equal(np.asarray(split), np.asarray(plain), name)


def test_sampler_operands_split_are_replicated_first(mesh):
    # A split parameter is made replicated first: the draw is the unsplit one.
    mean = array.device_put(np.full(8, 2.0, np.float32), NamedSharding(mesh, P("b")))
    key = random.key(1)
    got = random.wald(key, mean, out_sharding=P("a"))
    assert str(got.aval) == "float32[8@a]"
    np.testing.assert_array_equal(np.asarray(got), np.asarray(random.wald(key, np.asarray(mean))))


# name -> (f(x, **out_sharding) on x: f32[8,4], the requested sharding, JAX's result type)
NUMPY = {
    "array": (lambda x, **o: jnp.array(x, **o), P("a"), "float32[8@a,4]"),
    "asarray": (lambda x, **o: jnp.asarray(x, **o), P(None, "b"), "float32[8,4@b]"),
    "broadcast_to": (
        lambda x, **o: jnp.broadcast_to(x, (3, 8, 4), **o),
        P(None, "b"),
        "float32[3,8@b,4]",
    ),
    "full_like": (lambda x, **o: jnp.full_like(x, 2.0, **o), P("b"), "float32[8@b,4]"),
    "ones_like": (lambda x, **o: jnp.ones_like(x, **o), P(None, "a"), "float32[8,4@a]"),
    "zeros_like shape": (
        lambda x, **o: jnp.zeros_like(x, shape=(4, 8), **o),
        P("a"),
        "float32[4@a,8]",
    ),
    "percentile": (
        lambda x, **o: jnp.percentile(x, 50.0, axis=1, **o),
        P("b"),
        "float32[8@b]",
    ),
    "ravel": (lambda x, **o: jnp.ravel(x, **o), P("a"), "float32[32@a]"),
    "ravel F": (lambda x, **o: jnp.ravel(x, order="F", **o), P("a"), "float32[32@a]"),
    "repeat": (lambda x, **o: jnp.repeat(x, 2, axis=1, **o), P("a"), "float32[8@a,8]"),
    "tensordot": (
        lambda x, **o: jnp.tensordot(x, x.T, 1, **o),
        P("a", "b"),
        "float32[8@a,8@b]",
    ),
    "linalg.tensordot": (
        lambda x, **o: jnp.linalg.tensordot(x, x.T, axes=1, **o),
        P("a", "b"),
        "float32[8@a,8@b]",
    ),
    "bincount": (
        lambda x, **o: jnp.bincount(x.astype(jnp.int32).ravel(), length=8, **o),
        P(),
        "int32[8]",
    ),
    "lax.reduce sum": (
        lambda x, **o: lax.reduce(x, np.float32(0), lax.add, (1,), **o),
        P("b"),
        "float32[8@b]",
    ),
    "lax.reduce max": (
        lambda x, **o: lax.reduce(x, np.float32(-np.inf), lax.max, (1,), **o),
        P("a"),
        "float32[8@a]",
    ),
    "lax.reduce other": (
        lambda x, **o: lax.reduce(x, np.float32(0), lambda p, q: p + q, (1,), **o),
        P("a"),
        "float32[8@a]",
    ),
    "lax.conv_general_dilated": (
        lambda x, **o: lax.conv_general_dilated(
            x.reshape(8, 1, 4), jnp.ones((3, 1, 2)), (1,), "VALID", **o
        ),
        P("a"),
        "float32[8@a,3,3]",
    ),
}


def test_numpy_and_lax_results_are_split_as_asked(mesh):
    # Under jit on split operands (one compile), eagerly on replicated ones.
    def results(x):
        return {n: f(x, out_sharding=spec) for n, (f, spec, _) in NUMPY.items()}

    host = np.asarray(_x(mesh))
    plain = {n: np.asarray(f(host)) for n, (f, _, _) in NUMPY.items()}
    for got in (jit(results)(_x(mesh, "a", "b")), results(_x(mesh))):
        for name, value in got.items():
            assert str(value.aval) == NUMPY[name][2], name
            np.testing.assert_allclose(np.asarray(value), plain[name], rtol=1e-6, err_msg=name)


def test_rng_bit_generator_splits_the_bits(mesh):
    key = np.zeros(4, np.uint32)
    new_key, bits = lax.rng_bit_generator(key, (8, 4), out_sharding=P("a"))
    assert (str(new_key.aval), str(bits.aval)) == ("uint32[4]", "uint32[8@a,4]")
    np.testing.assert_array_equal(
        np.asarray(bits), np.asarray(lax.rng_bit_generator(key, (8, 4))[1])
    )


def test_primitive_params_as_jax_prints_them(mesh):
    # conv_general_dilated and reduce_sum carry out_sharding as a parameter, as in JAX.
    lhs, rhs = np.ones((8, 1, 4), np.float32), np.ones((3, 1, 2), np.float32)
    conv = make_jaxpr(
        lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, (1,), "VALID", out_sharding=P("a"))
    )(lhs, rhs)
    assert "out_sharding=" in str(conv) and str(conv.out_avals[0]) == "float32[8@a,3,3]"
    summed = make_jaxpr(lambda x: lax.reduce(x, np.float32(0), lax.add, (1,), out_sharding=P("a")))
    assert "reduce_sum[" in str(summed(_x(mesh))) and "out_sharding=" in str(summed(_x(mesh)))


def test_bincount_refuses_a_split_result(mesh):
    with pytest.raises(ShardingTypeError, match="can only be fully replicated"):
        jnp.bincount(jnp.arange(8), length=8, out_sharding=P("a"))


def test_vmap_keeps_the_batch_dimension_unsplit(mesh):
    # A primitive's out_sharding types the unbatched dimensions of each result.
    kernel = np.ones((4, 1, 2), np.float32)

    def row(r):
        summed = lax.reduce(jnp.broadcast_to(r, (2, 4)), np.float32(0), lax.add, (0,),
                            out_sharding=P("b"))  # fmt: skip
        conv = lax.conv_general_dilated(r.reshape(1, 1, 4), kernel, (1,), "VALID",
                                        out_sharding=P(None, "b"))  # fmt: skip
        bits = lax.rng_bit_generator(r.astype(jnp.uint32), (4,), out_sharding=P("b"))[1]
        return summed, conv, bits

    x = _x(mesh)
    got = jit(vmap(row))(x)
    assert [str(g.aval) for g in got] == ["float32[8,4@b]", "float32[8,1,4@b,3]", "uint32[8,4@b]"]
    want = vmap(row)(np.asarray(x))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(got[0]), 2 * np.asarray(x), rtol=1e-6)


def test_device_and_out_sharding_are_exclusive(mesh):
    with pytest.raises(ValueError, match="Only one of `device` or `out_sharding`"):
        jnp.zeros_like(_x(mesh), device=NamedSharding(mesh, P()), out_sharding=P("a"))
