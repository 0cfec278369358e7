"""Exporting and serializing polyjax functions, with symbolic shapes.

This package is a skeleton for now: it exists so that the layer contracts
cover it from the first commit on.
"""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # The version is looked up on first use: importlib.metadata is slow to import.
    if name == "__version__":
        from importlib.metadata import version

        return version("polyjax-export")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
