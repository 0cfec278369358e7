"""Deprecating public names in JAX's style: a warning that says when the name goes.

A public name that moves or goes away keeps working for the deprecation period
(docs/releasing.md): using it warns with a `DeprecationWarning` that names the
release that deprecated it, the release that removes it and what to use instead,
worded as JAX words its own. Two forms:

- `deprecated(...)` wraps a function or class: calling it warns.
- `deprecation_getattr(...)` is a module-level `__getattr__` for names that moved:
  looking the old name up warns and returns the new object; once removed, the
  lookup raises `AttributeError` with the same message.

Example:
  >>> import warnings
  >>> def new(x):
  ...     return x + 1
  >>> old = deprecated(new, "pkg.old", since="0.2.0", removal="0.3.0", use="pkg.new",
  ...                  package="polyjax-core")
  >>> with warnings.catch_warnings(record=True) as caught:
  ...     warnings.simplefilter("always")
  ...     old(1)
  2
  >>> print(caught[0].message)
  pkg.old was deprecated in polyjax-core v0.2.0, and will be removed in polyjax-core v0.3.0. Use pkg.new instead.
"""  # noqa: E501

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["deprecated", "deprecation_getattr", "deprecation_message"]

T = TypeVar("T")


def deprecation_message(
    name: str,
    *,
    since: str,
    removal: str,
    use: str | None = None,
    package: str = "polyjax",
    removed: bool = False,
) -> str:
    """JAX's wording of a deprecation.

    Args:
      name: the deprecated name, dotted from its package (``polyjax.numpy.fix``).
      since: the version of `package` that deprecated it.
      removal: the version that removes (or removed) it.
      use: what to use instead (a dotted name, or a sentence ending without a period).
      package: the distribution whose versions these are.
      removed: the name is gone already (the message says so).

    Returns:
      ``"<name> was deprecated in <package> v<since>, and will be removed in <package>
      v<removal>. Use <use> instead."``; "and removed in" once removed.
    """
    when = "and removed in" if removed else "and will be removed in"
    text = f"{name} was deprecated in {package} v{since}, {when} {package} v{removal}."
    if use:
        text += f" Use {use} instead."
    return text


def deprecated(
    obj: T,
    name: str,
    *,
    since: str,
    removal: str,
    use: str | None = None,
    package: str = "polyjax",
) -> T:
    """`obj` (a function or class) under its deprecated `name`: calling it warns.

    Args:
      obj: what the deprecated name now means (usually the object at its new place).
      name, since, removal, use, package: as in `deprecation_message`.

    Returns:
      A callable that warns with a `DeprecationWarning` attributed to its caller, then
      calls `obj`.
    """
    message = deprecation_message(name, since=since, removal=removal, use=use, package=package)

    @functools.wraps(obj)  # type: ignore[arg-type]  # obj is a callable: a function or class
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return obj(*args, **kwargs)  # type: ignore[operator]  # obj is a callable

    wrapper.__deprecated__ = message  # type: ignore[attr-defined]  # PEP 702's marker
    return wrapper  # type: ignore[return-value]  # same call signature as obj


def deprecation_getattr(
    module: str,
    deprecations: dict[str, tuple[str, Any]],
    fallback: Callable[[str], Any] | None = None,
) -> Callable[[str], Any]:
    """A module-level `__getattr__` for names that moved or went away, as JAX's modules have.

    Args:
      module: the module's name (`__name__`), for the error of unknown names.
      deprecations: old name -> (message, value); the value is what the old name
        gives (with a warning), or None once removed (an `AttributeError` with the
        message). Build messages with `deprecation_message`.
      fallback: the `__getattr__` to try for other names (e.g. `version_getattr`).

    Returns:
      `__getattr__(name)`.
    """

    def __getattr__(name: str) -> Any:
        if name in deprecations:
            message, value = deprecations[name]
            if value is None:
                raise AttributeError(message)
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return value
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
