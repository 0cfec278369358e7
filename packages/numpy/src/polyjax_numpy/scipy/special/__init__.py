"""`polyjax.scipy.special`: SciPy's special functions, as in `jax.scipy.special`.

Every function is elementwise over broadcast operands (except `bernoulli`,
`multigammaln`'s dimension, the softmax family and `logsumexp`), promotes
integers and bools to the default float type, keeps Python scalars weakly
typed, and is differentiable where JAX's is.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy import special
  >>> special.gammaln(np.array([0.5, 4.0]))
  Array([0.5723648, 1.7917603], dtype=float32)
"""

from polyjax_numpy.nn._softmax import logsumexp
from polyjax_numpy.scipy.special._bessel import i0, i0e, i1, i1e
from polyjax_numpy.scipy.special._entropy import entr, kl_div, rel_entr, xlog1py, xlogy
from polyjax_numpy.scipy.special._error import erf, erfc, erfcx, erfinv, log_ndtr, ndtr, ndtri
from polyjax_numpy.scipy.special._expint import exp1, expi, expn
from polyjax_numpy.scipy.special._gamma import (
    beta,
    betainc,
    betaln,
    digamma,
    factorial,
    gamma,
    gammainc,
    gammaincc,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    poch,
    polygamma,
)
from polyjax_numpy.scipy.special._logistic import expit, log_softmax, logit, softmax
from polyjax_numpy.scipy.special._zeta import bernoulli, zeta

__all__ = [
    "bernoulli",
    "beta",
    "betainc",
    "betaln",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "poch",
    "polygamma",
    "rel_entr",
    "softmax",
    "xlog1py",
    "xlogy",
    "zeta",
]
