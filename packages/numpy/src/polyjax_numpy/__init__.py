"""lax primitives, the NumPy API, random, nn and scipy for polyjax.

This package is a skeleton for now: it exists so that the layer contracts
cover it from the first commit on.
"""

from importlib.metadata import version as _version

__version__: str = _version("polyjax-numpy")

__all__ = ["__version__"]
