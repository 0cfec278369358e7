"""`polyjax.scipy`: SciPy's API on polyjax arrays, with JAX's semantics (``jax.scipy``).

Each submodule is imported on first use (``polyjax_numpy.scipy.linalg``, or
``import polyjax_numpy.scipy.linalg``), so importing this package costs nothing.

Submodules:
  cluster: `vq` (nearest-code assignment).
  fft: the discrete cosine transforms (`dct`, `idct`, `dctn`, `idctn`).
  integrate: `trapezoid`.
  interpolate: `RegularGridInterpolator`.
  linalg: SciPy's linear algebra (`scipy.linalg`), built on `lax.linalg`.
  ndimage: `map_coordinates` (orders 0 and 1).
  optimize: `minimize` with BFGS (and an experimental L-BFGS), jittable.
  signal: N-dimensional and FFT convolution and correlation, `detrend`.
  spatial: `transform.Rotation` and `transform.Slerp`.
  special: special functions (`scipy.special`): gamma, beta, error and Bessel families.
  stats: probability distributions (`norm`, `gamma`, `poisson`, ...) and `mode`,
    `rankdata`, `sem`.
"""

from __future__ import annotations

from polyjax_core.lazy_import import lazy_submodules as _lazy_submodules

# Submodules, imported on first lookup (add new ones here; `__all__` follows).
_SUBMODULES = frozenset(
    {
        "cluster",
        "fft",
        "integrate",
        "interpolate",
        "linalg",
        "ndimage",
        "optimize",
        "signal",
        "spatial",
        "special",
        "stats",
    }
)

__all__ = sorted(_SUBMODULES)
__getattr__, __dir__ = _lazy_submodules(__name__, _SUBMODULES)
