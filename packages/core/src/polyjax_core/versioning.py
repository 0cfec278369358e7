"""The `__version__` of the polyjax packages, read from their installed metadata on first use.

Example:
  >>> __getattr__ = version_getattr("polyjax_core", "polyjax-core")
  >>> __getattr__("__version__").count(".")
  2
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["version_getattr"]


def version_getattr(module: str, distribution: str) -> Callable[[str], str]:
    """A module-level `__getattr__` for `module` that gives `__version__`.

    The version is looked up on first use: `importlib.metadata` is slow to import.

    Args:
      module: the module's name (`__name__`), for the error of other names.
      distribution: the installed distribution whose version it is.

    Returns:
      `__getattr__(name)`: the version for `"__version__"`, else an `AttributeError`.
    """

    def __getattr__(name: str) -> str:
        if name == "__version__":
            from importlib.metadata import version

            return version(distribution)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
