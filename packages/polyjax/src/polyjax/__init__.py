"""polyjax: composable transformations of Python+NumPy programs, compiled by XLA. The public facade.

This package is a skeleton for now: it exists so that the layer contracts
cover it from the first commit on.
"""

from importlib.metadata import version as _version

__version__: str = _version("polyjax")

__all__ = ["__version__"]
