"""`host_count`, `host_id`, `host_ids`: JAX's old names of the process queries.

Each warns (a `UserWarning`, as in JAX) and returns what its new name returns.

Example:
  >>> import warnings
  >>> with warnings.catch_warnings():
  ...     warnings.simplefilter("ignore")
  ...     host_count(), host_id(), host_ids()
  (1, 0, [0])
"""

from __future__ import annotations

import warnings
from typing import Any

from polyjax_interpreters import backends

__all__ = ["host_count", "host_id", "host_ids"]


def _renamed(old: str, new: str) -> None:
    warnings.warn(
        f"polyjax.{old} has been renamed to polyjax.{new}. This alias will eventually be "
        "removed; please update your code.",
        UserWarning,
        stacklevel=3,
    )


def host_count(backend: str | Any | None = None) -> int:
    """The number of processes (renamed `process_count`)."""
    _renamed("host_count", "process_count")
    return backends.process_count(backend)


def host_id(backend: str | Any | None = None) -> int:
    """This process's index (renamed `process_index`)."""
    _renamed("host_id", "process_index")
    return backends.process_index(backend)


def host_ids(backend: str | Any | None = None) -> list[int]:
    """The indices of the processes (renamed `process_indices`)."""
    _renamed("host_ids", "process_indices")
    return backends.process_indices(backend)
