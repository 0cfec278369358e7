"""`polyjax.scipy.spatial`: 3-D rotations (`transform`), as ``jax.scipy.spatial``."""

from __future__ import annotations

from polyjax_numpy.scipy.spatial import transform

__all__ = ["transform"]
