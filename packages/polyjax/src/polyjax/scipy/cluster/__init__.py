"""polyjax.scipy.cluster: vector quantization, as ``jax.scipy.cluster``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.cluster``).
"""

from polyjax.scipy.cluster import vq

__all__ = ["vq"]
