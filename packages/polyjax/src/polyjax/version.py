"""polyjax's version, as a module (JAX's `jax.version`).

Example:
  >>> from polyjax import version
  >>> version.__version__ == ".".join(map(str, version.__version_info__))
  True
"""

from __future__ import annotations

from importlib.metadata import version as _distribution_version

__all__ = ["__version__", "__version_info__"]

#: The installed polyjax distribution's version string.
__version__: str = _distribution_version("polyjax")
#: The version as a tuple of ints (its numeric release part).
__version_info__: tuple[int, ...] = tuple(
    int(part) for part in __version__.split("+")[0].split(".") if part.isdigit()
)
