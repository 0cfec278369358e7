"""Packages whose submodules are imported on first lookup.

A package that declares its submodules and installs the two functions from
`lazy_submodules` costs nothing to import: ``pkg.linalg`` (or ``import
pkg.linalg``) imports the submodule the first time it is looked up.

Example:
  >>> import sys, types
  >>> pkg = types.ModuleType("json_lazy_demo")
  >>> pkg.__path__ = sys.modules["json"].__path__
  >>> sys.modules["json_lazy_demo"] = pkg
  >>> pkg.__getattr__, pkg.__dir__ = lazy_submodules("json_lazy_demo", frozenset({"decoder"}))
  >>> pkg.decoder.__name__, "decoder" in dir(pkg)
  ('json_lazy_demo.decoder', True)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_submodules"]


def lazy_submodules(
    package: str, names: frozenset[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for the package ``package``.

    Args:
      package: the package's ``__name__``; it must be in ``sys.modules`` (it is,
        while its ``__init__`` runs).
      names: its submodules, each imported (and then kept in the package's
        namespace) on first lookup.

    Returns:
      ``(__getattr__, __dir__)``, to assign to the package's module globals.
    """
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        if name in names:
            module = importlib.import_module(f"{package}.{name}")
            namespace[name] = module
            return module
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | names)

    return __getattr__, __dir__
