"""`polyjax.scipy.cluster`: vector quantization (`vq`), as ``jax.scipy.cluster``."""

from __future__ import annotations

from polyjax_numpy.scipy.cluster import vq

__all__ = ["vq"]
