"""polyjax.scipy.ndimage: ``map_coordinates``, as ``jax.scipy.ndimage``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy.ndimage``); this
module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy import ndimage as _ndimage
from polyjax_numpy.scipy.ndimage import *  # noqa: F403

__all__ = list(_ndimage.__all__)
