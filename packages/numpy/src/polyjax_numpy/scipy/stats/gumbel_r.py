"""The right-skewed (maximum) Gumbel distribution, as `scipy.stats.gumbel_r`.

With `z = (x - loc) / scale`: density `exp(-z - exp(-z)) / scale`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy.stats import gumbel_r
  >>> gumbel_r.cdf(np.array([-1.0, 0.0]))
  Array([0.06598804, 0.36787945], dtype=float32)
"""

from polyjax_numpy.scipy.stats import _gumbel as _g

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

logpdf, pdf, cdf, logcdf, sf, logsf, ppf = _g.side("gumbel_r", left=False)
