"""polyjax-core: the tracing machinery of polyjax."""

from importlib.metadata import version as _version

__version__: str = _version("polyjax-core")

__all__ = ["__version__"]
