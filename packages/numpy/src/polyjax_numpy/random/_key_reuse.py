"""The optional key-reuse checker (``jax_debug_key_reuse``).

With the flag on, every public function that consumes a key (the samplers,
`split`, `fold_in`) marks the typed key object it was given as consumed when it
returns, and refuses a key already consumed with `KeyReuseError`. `clone`
returns a fresh, unconsumed key. Inside a traced function (`jit`, `vmap`) the
key is a new object per trace, so using it twice within one function is caught
when the function is traced.

Decisions: only typed keys (`random.key`) are tracked, not raw ``uint32`` keys
(`PRNGKey`); consumption is tracked per key object, so a key rebuilt from the
same data (`wrap_key_data(key_data(k))`) counts as a new key; `jit` does not
check or consume its arguments (only the random functions do).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from polyjax_core import config
from polyjax_core.errors import KeyReuseError
from polyjax_numpy.random._prng import PRNGKeyArray

_consumed: dict[int, Any] = {}


def _forget(key_id: int) -> None:
    _consumed.pop(key_id, None)


def _mark(key: PRNGKeyArray) -> None:
    key_id = id(key)
    if key_id not in _consumed:
        _consumed[key_id] = weakref.finalize(key, _forget, key_id)


def is_consumed(key: Any) -> bool:
    """Whether `key` was consumed while the checker was on."""
    return isinstance(key, PRNGKeyArray) and id(key) in _consumed


def consumes_key(fun: Callable[..., Any]) -> Callable[..., Any]:
    """Wraps a public function whose first argument (or ``key=``) it consumes."""
    name = fun.__name__

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not config.debug_key_reuse.value:
            return fun(*args, **kwargs)
        key = args[0] if args else kwargs.get("key")
        if is_consumed(key):
            raise KeyReuseError(f"Previously-consumed key passed to {name} at index 0")
        out = fun(*args, **kwargs)
        if isinstance(key, PRNGKeyArray) and not key.shape:
            _mark(key)
        return out

    return wrapped


def clone(key: Any) -> Any:
    """A copy of `key` that the reuse checker sees as unconsumed."""
    if isinstance(key, PRNGKeyArray):
        return PRNGKeyArray(key._impl, key._base_array)
    return key
