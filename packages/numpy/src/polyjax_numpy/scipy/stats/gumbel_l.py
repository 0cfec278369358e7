"""The left-skewed (minimum) Gumbel distribution, as `scipy.stats.gumbel_l`.

With `z = (x - loc) / scale`: density `exp(z - exp(z)) / scale`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import gumbel_l
  >>> gumbel_l.cdf(np.array([-1.0, 0.0]))
  Array([0.30779937, 0.63212055], dtype=float32)
  >>> gumbel_l.ppf(0.5)  # the median, log(log(2))
  Array(-0.36651292, dtype=float32, weak_type=True)
"""

from polyjax_numpy.scipy.stats import _gumbel as _g

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

logpdf, pdf, cdf, logcdf, sf, logsf, ppf = _g.side("gumbel_l", left=True)
