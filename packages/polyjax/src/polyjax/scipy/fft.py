"""polyjax.scipy.fft: SciPy's discrete cosine transforms on polyjax arrays, as ``jax.scipy.fft``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.fft``); this module
re-exports that public namespace unchanged.

Example:
  >>> import polyjax.scipy.fft
  >>> polyjax.scipy.fft.dct(polyjax.numpy.ones(2))
  Array([4., 0.], dtype=float32)
"""

from polyjax_numpy.scipy import fft as _fft
from polyjax_numpy.scipy.fft import *  # noqa: F403

__all__ = list(_fft.__all__)
