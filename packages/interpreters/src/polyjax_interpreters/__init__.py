"""polyjax-interpreters: autodiff, batching, partial evaluation, lowering, runtime.

This package is a skeleton for now: it exists so that the layer contracts
cover it from the first commit on.
"""

from importlib.metadata import version as _version

__version__: str = _version("polyjax-interpreters")

__all__ = ["__version__"]
