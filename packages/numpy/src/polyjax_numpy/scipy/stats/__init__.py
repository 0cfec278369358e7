"""`polyjax.scipy.stats`: probability distributions and sample statistics, as `jax.scipy.stats`.

Each distribution is a submodule of functions (`norm.logpdf`, `poisson.pmf`,
...) that are elementwise over broadcast arguments, promote them to one
inexact dtype, and are differentiable in the continuous arguments. Location
and scale follow SciPy: `f(x, loc, scale) = f((x - loc) / scale) / scale`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import norm
  >>> norm.cdf(np.array([0.0, 1.96]))
  Array([0.5      , 0.9750021], dtype=float32)
"""

from polyjax_numpy.scipy.stats import (
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from polyjax_numpy.scipy.stats._descriptive import ModeResult, mode, rankdata, sem
from polyjax_numpy.scipy.stats._kde import gaussian_kde

__all__ = [
    "ModeResult",
    "bernoulli",
    "beta",
    "betabinom",
    "binom",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "gaussian_kde",
    "gennorm",
    "geom",
    "gumbel_l",
    "gumbel_r",
    "laplace",
    "logistic",
    "mode",
    "multinomial",
    "multivariate_normal",
    "nbinom",
    "norm",
    "pareto",
    "poisson",
    "rankdata",
    "sem",
    "t",
    "truncnorm",
    "uniform",
    "vonmises",
    "wrapcauchy",
]
