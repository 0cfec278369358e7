"""A fast "no module named jax" for jaxlib's lookups, when JAX is not installed.

jaxlib's C++ looks for JAX's own modules (``jax.core`` and two of ``jax._src``)
whenever it builds an array without a type, which a host copy does: so every
``np.asarray(x)``, ``float(x)`` and ``print(x)`` tries ``import jax``. Without
JAX installed that import fails, but only after the import system has
searched every ``sys.path`` entry, which cost about 50 µs a time: most of a
host read (117 µs against JAX's 6 µs for a small array).

`install` adds a finder that answers "no such module" for ``jax`` at once
while no other finder can find it. It asks the other finders again whenever
``sys.path`` or ``sys.meta_path`` changes, and after
``importlib.invalidate_caches()``, so a JAX that becomes importable (a path
added, ``polyjax.as_jax`` installed, a package installed meanwhile) is imported
as before: the finder changes how fast ``import jax`` fails, never whether it
does.
"""

from __future__ import annotations

import importlib.abc
import sys
from typing import Any

__all__ = ["install"]


class _AbsentJaxFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self._checked_for: tuple[Any, ...] | None = None
        self._absent = False

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name != "jax":
            return None
        others = tuple(f for f in sys.meta_path if f is not self)
        key = (tuple(sys.path), others)
        if key != self._checked_for:
            self._checked_for = key
            self._absent = all(_finds_nothing(f) for f in others)
        if self._absent:
            raise ModuleNotFoundError("No module named 'jax'", name="jax")
        return None

    def invalidate_caches(self) -> None:
        # importlib.invalidate_caches(): a module may have appeared on disk.
        self._checked_for = None


def _finds_nothing(finder: Any) -> bool:
    find_spec = getattr(finder, "find_spec", None)
    if find_spec is None:
        return False  # a legacy finder: let the import system ask it
    try:
        return find_spec("jax", None) is None
    except ImportError:
        return True


_FINDER = _AbsentJaxFinder()


def install() -> None:
    """Puts the finder first in ``sys.meta_path`` (once)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
