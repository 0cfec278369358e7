"""polyjax.scipy.interpolate: `RegularGridInterpolator`, as ``jax.scipy.interpolate``.

The class lives in polyjax-numpy (``polyjax_numpy.scipy.interpolate``); this
module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy import interpolate as _interpolate
from polyjax_numpy.scipy.interpolate import *  # noqa: F403

__all__ = list(_interpolate.__all__)
