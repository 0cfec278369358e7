"""polyjax.scipy: SciPy's API on polyjax arrays, as ``jax.scipy``.

The functions live in polyjax-numpy (``polyjax_numpy.scipy``). Each submodule
here re-exports one of its submodules and is imported on first use
(``polyjax.scipy.linalg``, or ``import polyjax.scipy.linalg``).

Example:
  >>> import polyjax.scipy
  >>> polyjax.scipy.linalg.det(polyjax.numpy.eye(2))
  Array(1., dtype=float32)
"""

from __future__ import annotations

import importlib as _importlib
from typing import Any

from polyjax_numpy import scipy as _impl

# The same submodules as the implementation's, each imported on first lookup.
_SUBMODULES = frozenset(_impl.__all__)

__all__ = sorted(_SUBMODULES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = _importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES)
