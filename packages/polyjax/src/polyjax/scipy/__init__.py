"""polyjax.scipy: SciPy's API on polyjax arrays, as ``jax.scipy``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy``). Each submodule
here re-exports one of its submodules and is imported on first use
(``polyjax.scipy.linalg``, or ``import polyjax.scipy.linalg``).

Example:
  >>> import polyjax.scipy
  >>> polyjax.scipy.linalg.det(polyjax.numpy.eye(2))
  Array(1., dtype=float32)
"""

from __future__ import annotations

from polyjax_core.lazy_import import lazy_submodules as _lazy_submodules
from polyjax_numpy import scipy as _impl

# The same submodules as the implementation's, each imported on first lookup.
_SUBMODULES = frozenset(_impl.__all__)

__all__ = sorted(_SUBMODULES)
__getattr__, __dir__ = _lazy_submodules(__name__, _SUBMODULES)
