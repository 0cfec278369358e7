"""polyjax.scipy.signal: convolution, correlation and detrending, as ``jax.scipy.signal``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.signal``); this
module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy import signal as _signal
from polyjax_numpy.scipy.signal import *  # noqa: F403

__all__ = list(_signal.__all__)
