"""``out_sharding=None`` changes nothing outside explicit mode (no mesh).

Every function that takes ``out_sharding=`` (JAX 0.10.2's list) traces to the
same jaxpr with ``out_sharding=None`` as without it, so its values are the
same. The requested shardings themselves are checked on 8 devices in
packages/sharding/tests/multidevice/md_out_sharding.py.
"""

import inspect

import numpy as np
import pytest

from polyjax_core.make_jaxpr import make_jaxpr
from polyjax_numpy import lax, random
from polyjax_numpy import numpy as jnp

X = np.arange(12, dtype=np.float32).reshape(3, 4)
KEY = np.zeros(2, np.uint32)  # a raw key
S = (3,)

# name -> f(**out_sharding): one call of each function that takes the keyword.
CALLS = {
    "lax.conv_general_dilated": lambda **o: lax.conv_general_dilated(
        X[:, None], np.ones((2, 1, 2), np.float32), (1,), "VALID", **o
    ),
    "lax.reduce": lambda **o: lax.reduce(X, np.float32(0), lax.add, (1,), **o),
    "lax.reduce other": lambda **o: lax.reduce(X, np.float32(0), lambda a, b: a + b, (1,), **o),
    "lax.rng_bit_generator": lambda **o: lax.rng_bit_generator(np.zeros(4, np.uint32), (2,), **o),
    "array": lambda **o: jnp.array(X, **o),
    "asarray": lambda **o: jnp.asarray(X, **o),
    "bincount": lambda **o: jnp.bincount(jnp.arange(3), length=4, **o),
    "broadcast_to": lambda **o: jnp.broadcast_to(X, (2, 3, 4), **o),
    "full_like": lambda **o: jnp.full_like(X, 2.0, **o),
    "ones_like": lambda **o: jnp.ones_like(X, **o),
    "zeros_like": lambda **o: jnp.zeros_like(X, **o),
    "percentile": lambda **o: jnp.percentile(X, 50.0, axis=1, **o),
    "ravel": lambda **o: jnp.ravel(X, **o),
    "repeat": lambda **o: jnp.repeat(X, 2, axis=0, **o),
    "tensordot": lambda **o: jnp.tensordot(X, X.T, 1, **o),
    "linalg.tensordot": lambda **o: jnp.linalg.tensordot(X, X.T, axes=1, **o),
    "ball": lambda **o: random.ball(KEY, 2, shape=S, **o),
    "bernoulli": lambda **o: random.bernoulli(KEY, 0.5, S, **o),
    "beta": lambda **o: random.beta(KEY, 2.0, 3.0, S, **o),
    "categorical": lambda **o: random.categorical(KEY, np.zeros((3, 4), np.float32), **o),
    "cauchy": lambda **o: random.cauchy(KEY, S, **o),
    "chisquare": lambda **o: random.chisquare(KEY, 2.0, S, **o),
    "dirichlet": lambda **o: random.dirichlet(KEY, np.ones(2, np.float32), S, **o),
    "exponential": lambda **o: random.exponential(KEY, S, **o),
    "f": lambda **o: random.f(KEY, 2.0, 3.0, S, **o),
    "gamma": lambda **o: random.gamma(KEY, 2.0, S, **o),
    "generalized_normal": lambda **o: random.generalized_normal(KEY, 1.5, S, **o),
    "geometric": lambda **o: random.geometric(KEY, 0.5, S, **o),
    "gumbel": lambda **o: random.gumbel(KEY, S, **o),
    "laplace": lambda **o: random.laplace(KEY, S, **o),
    "loggamma": lambda **o: random.loggamma(KEY, 2.0, S, **o),
    "logistic": lambda **o: random.logistic(KEY, S, **o),
    "lognormal": lambda **o: random.lognormal(KEY, 1.0, S, **o),
    "maxwell": lambda **o: random.maxwell(KEY, S, **o),
    "multivariate_normal": lambda **o: random.multivariate_normal(
        KEY, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), S, **o
    ),
    "orthogonal": lambda **o: random.orthogonal(KEY, 2, S, **o),
    "pareto": lambda **o: random.pareto(KEY, 2.0, S, **o),
    "permutation": lambda **o: random.permutation(KEY, 4, **o),
    "poisson": lambda **o: random.poisson(KEY, 2.0, S, **o),
    "rademacher": lambda **o: random.rademacher(KEY, S, **o),
    "randint": lambda **o: random.randint(KEY, S, 0, 5, **o),
    "rayleigh": lambda **o: random.rayleigh(KEY, 2.0, S, **o),
    "t": lambda **o: random.t(KEY, 3.0, S, **o),
    "triangular": lambda **o: random.triangular(KEY, 0.0, 0.5, 1.0, S, **o),
    "truncated_normal": lambda **o: random.truncated_normal(KEY, -1.0, 1.0, S, **o),
    "wald": lambda **o: random.wald(KEY, 1.0, S, **o),
    "normal": lambda **o: random.normal(KEY, S, **o),
    "uniform": lambda **o: random.uniform(KEY, S, **o),
    "bits": lambda **o: random.bits(KEY, S, **o),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_out_sharding_none_traces_the_same_program(name):
    call = CALLS[name]
    assert str(make_jaxpr(lambda: call(out_sharding=None))()) == str(make_jaxpr(call)())


def test_keyword_only_where_jax_has_it_so():
    # JAX's conv_general_dilated and reduce take it positionally too (last).
    for fun in (lax.conv_general_dilated, lax.reduce):
        last = list(inspect.signature(fun).parameters.values())[-1]
        assert (last.name, last.kind) == ("out_sharding", last.POSITIONAL_OR_KEYWORD)
    for fun in (jnp.repeat, jnp.ravel, random.gamma, lax.rng_bit_generator):
        assert (
            inspect.signature(fun).parameters["out_sharding"].kind is inspect.Parameter.KEYWORD_ONLY
        )
