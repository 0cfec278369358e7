"""polyjax.as_jax: run unmodified JAX programs and libraries on polyjax.

Importing this module installs an import hook under which ``import jax`` and
every ``import jax.X.Y`` resolve to polyjax's module of the same public path
(``jax.numpy`` is ``polyjax.numpy``, ``jax.scipy.stats.norm`` is
``polyjax.scipy.stats.norm``). Each ``jax...`` module is a real module object
in ``sys.modules`` whose attributes are those of the polyjax module it stands
for, so ``importlib.import_module``, ``from jax.tree_util import tree_map``
and ``import jax.scipy.stats.norm`` all work. Nothing named ``jax`` exists
until this module is imported.

Use it as a program's first import, or run a script or module under it::

    python -m polyjax.as_jax train.py --steps 10
    python -m polyjax.as_jax -m pytest --pyargs optax

Only JAX's public modules are mapped, plus the few private ones that
libraries import (``jax._src.compiler``, see ``polyjax.as_jax._jax_src``):
any other path with a private part (``jax._src.sharding_impls``) is refused
with ``ModuleNotFoundError``, as is a public module polyjax does not have.
``jax.__version__`` is the JAX version whose API polyjax follows
(docs/ecosystem.md says why).

Under the hook, compile logs (``jax.log_compiles()``) are written to JAX's
logger names with JAX's wording, so code that counts compilations by
listening to the ``jax`` loggers sees them.

Example:
  >>> import polyjax.as_jax
  >>> import jax.numpy as jnp
  >>> import polyjax
  >>> jnp.add is polyjax.numpy.add
  True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import logging
import sys
import types
from typing import Any

__all__ = ["JAX_VERSION", "install", "installed"]

# The JAX release whose public API polyjax follows.
JAX_VERSION = "0.10.2"

_ALIAS = "jax"
_TARGET = "polyjax"
# The private modules mapped after all (`jax._src.X` is `_SRC_PACKAGE.X`): see there why.
_SRC_PACKAGE = "polyjax.as_jax._jax_src"
_SRC_SHIMS = ("compiler",)


def _is_polyjax_module(value: object) -> bool:
    return isinstance(value, types.ModuleType) and value.__name__.split(".")[0].startswith(_TARGET)


class AliasModule(types.ModuleType):
    """The module ``jax.X`` under the hook: polyjax's ``polyjax.X``, by another name.

    Attributes are looked up on the polyjax module on each access (so its lazy
    names stay lazy); an attribute that is itself a polyjax module comes back
    as its ``jax...`` alias, so ``jax.numpy is sys.modules["jax.numpy"]``.
    """

    __polyjax_module__: types.ModuleType

    def __getattr__(self, name: str) -> Any:
        target = self.__dict__.get("__polyjax_module__")
        if target is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        try:
            value = getattr(target, name)
        except AttributeError:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None
        if _is_polyjax_module(value) and not name.startswith("_"):
            return importlib.import_module(f"{self.__name__}.{name}")
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(dir(self.__dict__["__polyjax_module__"])) | set(self.__dict__))


def _target_module(polyjax_name: str) -> types.ModuleType | None:
    """Imports ``polyjax_name``, or finds it as a module attribute of its parent."""
    try:
        return importlib.import_module(polyjax_name)
    except ModuleNotFoundError as err:
        if err.name is None or not polyjax_name.startswith(err.name):
            raise  # a dependency of an existing module is missing: a real error
    parent, _, child = polyjax_name.rpartition(".")
    if parent == "":
        return None
    owner = _target_module(parent)
    value = getattr(owner, child, None) if owner is not None else None
    return value if _is_polyjax_module(value) else None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads every ``jax`` / ``jax.X.Y`` module as its polyjax module."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        parts = fullname.split(".")[1:]
        if parts[:1] == ["_src"] and (len(parts) == 1 or parts[1:] in ([n] for n in _SRC_SHIMS)):
            module = importlib.import_module(".".join([_SRC_PACKAGE, *parts[1:]]))
        elif any(part.startswith("_") for part in parts):
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: polyjax.as_jax maps only JAX's public modules",
                name=fullname,
            )
        else:
            module = _target_module(".".join([_TARGET, *parts]))
        if module is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: polyjax has no such public module",
                name=fullname,
            )
        spec = importlib.machinery.ModuleSpec(
            fullname, self, origin=getattr(module, "__file__", None)
        )
        # Every alias is a package, so that `import jax.scipy.stats.norm` can
        # reach modules polyjax keeps as attributes of a plain module.
        spec.submodule_search_locations = list(getattr(module, "__path__", []))
        spec.loader_state = module
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = AliasModule(spec.name, getattr(spec.loader_state, "__doc__", None))
        module.__polyjax_module__ = spec.loader_state
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == _ALIAS:
            module.__version__ = JAX_VERSION
            module.__version_info__ = tuple(int(p) for p in JAX_VERSION.split("."))


_FINDER = _AliasFinder()


# ---------------------------------------------------------------------------
# Compile logs in JAX's words


def _jax_name(name: str) -> str:
    return name if "(" in name else f"jit({name})"


class _CompileLogAsJax(logging.Filter):
    """Restates polyjax's compile-log record as JAX's two records, on JAX's loggers.

    The polyjax record itself is dropped: under the hook a program hears the
    compilation once, in JAX's words.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        compiled = getattr(record, "compiled", None)
        if compiled is None:
            return True
        name, in_avals, seconds = compiled
        shapes = "".join(f"{aval!r}, " for aval in in_avals).rstrip(" ")
        logging.getLogger("jax._src.interpreters.pxla").log(
            record.levelno,
            "Compiling %s with global shapes and types (%s).",
            _jax_name(name),
            shapes,
        )
        logging.getLogger("jax._src.dispatch").log(
            record.levelno, "Finished XLA compilation of %s in %.9f sec", _jax_name(name), seconds
        )
        return False


_COMPILE_LOG_FILTER = _CompileLogAsJax()


def install() -> None:
    """Installs the hook (idempotent): ``jax`` and ``jax.*`` become polyjax's modules.

    Example:
      >>> import polyjax.as_jax
      >>> polyjax.as_jax.install()
      >>> polyjax.as_jax.installed()
      True
    """
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    logging.getLogger(_TARGET).addFilter(_COMPILE_LOG_FILTER)


def installed() -> bool:
    """Whether the hook is installed.

    Example:
      >>> import polyjax.as_jax
      >>> polyjax.as_jax.installed()
      True
    """
    return _FINDER in sys.meta_path


install()
