"""polyjax.scipy.stats: distributions and sample statistics, as ``jax.scipy.stats``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.stats``); this
module re-exports that public namespace unchanged, and its distribution
submodules can be imported by name (``import polyjax.scipy.stats.norm``).

Example:
  >>> import polyjax.scipy.stats.norm
  >>> polyjax.scipy.stats.norm.cdf(polyjax.numpy.array([0.0]))
  Array([0.5], dtype=float32)
"""

import sys as _sys
import types as _types

from polyjax_numpy.scipy import stats as _stats
from polyjax_numpy.scipy.stats import *  # noqa: F403

__all__ = list(_stats.__all__)

# `import polyjax.scipy.stats.norm` finds the implementation modules.
for _name in __all__:
    if isinstance(getattr(_stats, _name), _types.ModuleType):
        _sys.modules[f"{__name__}.{_name}"] = getattr(_stats, _name)
