"""`polyjax.random`: counter-based pseudo-random numbers, bit-identical to JAX's.

Keys are values: make one with `key(seed)`, `split` it to get independent keys,
and give one to each sampler (`uniform`, `normal`, ...). The same key always
gives the same numbers, under `jit`, `vmap` and on every backend.

Example:
  >>> from polyjax_numpy import random
  >>> k1, k2 = random.split(random.key(0))
  >>> random.uniform(k1, (2,)).shape
  (2,)
"""

from polyjax_numpy.random._choice import categorical, choice, permutation
from polyjax_numpy.random._counts import binomial, multinomial, poisson
from polyjax_numpy.random._distributions import bits, normal, randint, uniform
from polyjax_numpy.random._gamma import (
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    random_gamma_p,
    t,
)
from polyjax_numpy.random._key_reuse import clone, consumes_key
from polyjax_numpy.random._multivariate import ball, multivariate_normal, orthogonal
from polyjax_numpy.random._prng import (
    PRNGKey,
    PRNGKeyArray,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from polyjax_numpy.random._univariate import (
    bernoulli,
    cauchy,
    double_sided_maxwell,
    exponential,
    geometric,
    gumbel,
    laplace,
    logistic,
    lognormal,
    maxwell,
    pareto,
    rademacher,
    rayleigh,
    triangular,
    truncated_normal,
    wald,
    weibull_min,
)

# The functions that consume their key, wrapped for the optional key-reuse checker.
_CONSUMERS = """ball bernoulli beta binomial bits categorical cauchy chisquare choice dirichlet
double_sided_maxwell exponential f fold_in gamma generalized_normal geometric gumbel laplace
loggamma logistic lognormal maxwell multinomial multivariate_normal normal orthogonal pareto
permutation poisson rademacher randint rayleigh split t triangular truncated_normal uniform wald
weibull_min""".split()
for _name in _CONSUMERS:
    globals()[_name] = consumes_key(globals()[_name])
del _name

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "random_gamma_p",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]
