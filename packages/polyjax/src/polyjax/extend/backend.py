"""polyjax.extend.backend: the PJRT clients polyjax runs on, as in ``jax.extend.backend``.

Example:
  >>> from polyjax.extend import backend
  >>> backend.get_backend().platform
  'cpu'
"""

from typing import Any

from polyjax_interpreters.backends import backends, default_device, get_backend

__all__ = ["backends", "get_backend", "get_default_device"]


def get_default_device() -> Any:
    """The device uncommitted computations run on (``jax_default_device`` decides)."""
    return default_device()
