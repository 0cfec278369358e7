"""polyjax.scipy.cluster.vq: `vq`, as ``jax.scipy.cluster.vq``.

The function lives in polyjax-numpy (``polyjax_numpy.scipy.cluster.vq``); this
module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy.cluster import vq as _vq
from polyjax_numpy.scipy.cluster.vq import *  # noqa: F403

__all__ = list(_vq.__all__)
