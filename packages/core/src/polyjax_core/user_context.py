"""`make_user_context`: a user-defined value that jit caches are keyed on.

A user context is an unnamed configuration option whose value enters
`config.trace_context()`, so a jitted function traced under one value is
traced (and compiled) again under another: library code can read
``ctx.value`` while tracing and rely on the cache never mixing values. Like
every option, ``ctx(v)`` overrides the value in the current thread for a
``with`` block; ``set_global``/``get_global`` change and read the global value.

Example:
  >>> ctx = make_user_context(1)
  >>> with ctx(2):
  ...     ctx.value
  2
  >>> ctx.value
  1
"""

from __future__ import annotations

import itertools
from typing import Any

from polyjax_core import config as _config

__all__ = ["UserContext", "make_user_context"]

_counter = itertools.count()


def _hashable(state: _config.State, value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"a user context's value must be hashable, got {value!r}") from None
    return value


class UserContext(_config.State):
    """A jit-cache-sensitive user value (see the module docstring)."""

    def get_global(self) -> Any:
        """The global value."""
        return self.global_value

    def set_global(self, value: Any) -> None:
        """Sets the global value (later jit calls trace again if it changed)."""
        self._set_global(value)


def make_user_context(default_value: Any = None) -> UserContext:
    """A new user context holding `default_value` (which must be hashable).

    Not thread-safe: create contexts at import time, as in JAX.

    Args:
      default_value: the global value to start with.

    Returns:
      The context: read ``.value``; use ``with ctx(new_value):``.
    """
    # Names order the trace-context tuple; the counter keeps them unique and stable.
    state = UserContext(
        f"user_context_{next(_counter):06d}",
        default_value,
        "a user context (make_user_context)",
        _hashable,
        include_in_trace_context=True,
    )
    _config._trace_context_states.append(state)
    _config._trace_context_states.sort(key=lambda s: s.name)
    _config._invalidate_all_threads()
    return state
