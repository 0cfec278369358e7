"""polyjax.scipy.spatial: 3-D rotations, as ``jax.scipy.spatial``.

The classes live in polyjax-numpy (``polyjax_numpy.scipy.spatial``).
"""

from polyjax.scipy.spatial import transform

__all__ = ["transform"]
