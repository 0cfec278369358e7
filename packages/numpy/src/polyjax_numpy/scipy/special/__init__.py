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
from polyjax_numpy.scipy.special._bessel import bessel_jn, i0, i0e, i1, i1e
from polyjax_numpy.scipy.special._boxcox import boxcox, boxcox1p
from polyjax_numpy.scipy.special._entropy import entr, kl_div, rel_entr, xlog1py, xlogy
from polyjax_numpy.scipy.special._error import erf, erfc, erfcx, erfinv, log_ndtr, ndtr, ndtri
from polyjax_numpy.scipy.special._expint import exp1, expi, expn
from polyjax_numpy.scipy.special._faddeeva import dawsn, fresnel, wofz
from polyjax_numpy.scipy.special._gamma import (
    beta,
    betainc,
    betaln,
    comb,
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
from polyjax_numpy.scipy.special._hypergeometric import hyp1f1, hyp2f1
from polyjax_numpy.scipy.special._logistic import expit, log_softmax, logit, softmax
from polyjax_numpy.scipy.special._owens_t import owens_t
from polyjax_numpy.scipy.special._spence import spence
from polyjax_numpy.scipy.special._sph_harm import sph_harm_y
from polyjax_numpy.scipy.special._trig_integrals import sici
from polyjax_numpy.scipy.special._zeta import bernoulli, zeta

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
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
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
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
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "xlogy",
    "zeta",
]
