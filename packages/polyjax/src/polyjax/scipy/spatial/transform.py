"""polyjax.scipy.spatial.transform: `Rotation` and `Slerp`, as ``jax.scipy.spatial.transform``.

The classes live in polyjax-numpy (``polyjax_numpy.scipy.spatial.transform``);
this module re-exports that public namespace unchanged.
"""

from polyjax_numpy.scipy.spatial import transform as _transform
from polyjax_numpy.scipy.spatial.transform import *  # noqa: F403

__all__ = list(_transform.__all__)
