"""`polyjax.scipy.signal`: convolution, detrending and spectral analysis, as `jax.scipy.signal`.

Example:
  >>> import numpy as np
  >>> from polyjax_numpy.scipy import signal
  >>> signal.convolve2d(np.ones((2, 2)), np.ones((2, 2)))
  Array([[1., 2., 1.],
         [2., 4., 2.],
         [1., 2., 1.]], dtype=float32)
"""

from polyjax_numpy.scipy.signal._convolution import (
    convolve,
    convolve2d,
    correlate,
    correlate2d,
    fftconvolve,
)
from polyjax_numpy.scipy.signal._detrend import detrend
from polyjax_numpy.scipy.signal._spectral import csd, istft, stft, welch

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]
