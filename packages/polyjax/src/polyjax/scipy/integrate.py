"""polyjax.scipy.integrate: numerical integration (``trapezoid``), as ``jax.scipy.integrate``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.integrate``); this
module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy import integrate as _integrate
from polyjax_numpy.scipy.integrate import *  # noqa: F403

__all__ = list(_integrate.__all__)
