"""Naming parts of a program, and computing parts of it while tracing.

`named_scope` and `named_call` push a name on the thread's name stack (core's
`source_info`): every equation traced inside records it, the lowering puts it
in the op's StableHLO location (``loc("outer/inner/sin"(...))``), and profiles
of the compiled program show it. `ensure_compile_time_eval` makes operations on
concrete values run now instead of being staged into the traced program.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from polyjax_core import source_info as si
from polyjax_core import tracing

__all__ = ["ensure_compile_time_eval", "named_call", "named_scope"]

F = TypeVar("F", bound=Callable[..., Any])

# `named_call`'s wrapper is not the user's frame (as in `polyjax._runtime`, which
# this module does not need to import).
si.register_exclusion(os.path.dirname(os.path.abspath(__file__)))


def named_scope(name: str) -> Any:
    """A context manager that adds ``name`` to the names of the operations inside it.

    Scopes nest (``outer/inner``); the names show in the StableHLO locations of
    ``jit(f).lower(x).as_text(debug_info=True)`` and in profiles.

    Args:
      name: the scope's name.

    Returns:
      A context manager.

    Raises:
      TypeError: ``name`` is not a string.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> def f(x):
      ...     with polyjax.named_scope("layer1"):
      ...         return jnp.sin(x)
      >>> "layer1/sin" in polyjax.jit(f).lower(1.0).as_text(debug_info=True)
      True
    """
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    return si.extend_name_stack(name)


def named_call(fun: F, *, name: str | None = None) -> F:
    """Wraps ``fun`` so that the operations it traces are named ``name`` (default: its name).

    Args:
      fun: the function.
      name: the scope name; ``fun.__name__`` when omitted.

    Returns:
      A function with ``fun``'s signature.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> g = polyjax.named_call(jnp.cos, name="my_cos")
      >>> "my_cos/cos" in polyjax.jit(g).lower(1.0).as_text(debug_info=True)
      True
    """
    if name is None:
        name = getattr(fun, "__name__", type(fun).__name__)
    if not isinstance(name, str):
        raise TypeError("named_call name argument must be a string.")
    scope_name = name

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with si.extend_name_stack(scope_name):
            return fun(*args, **kwargs)

    return named  # type: ignore[return-value]  # same signature as `fun`


class _CompileTimeEvalTrace(tracing.Trace):
    """Evaluates primitives on concrete values now; a tracer argument stays traced.

    An operation on a value of an enclosing trace (a jit argument) cannot run
    now, so it is handed to that value's trace, as if the block were absent.
    """

    def __init__(self) -> None:
        super().__init__(tracing.eval_trace)

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        owner = _innermost_trace(args)
        if owner is None:
            return tracing.eval_trace.process_primitive(primitive, args, params)
        with tracing.set_current_trace(owner):
            return owner.process_primitive(primitive, args, params)


def _innermost_trace(args: tuple) -> tracing.Trace | None:
    inner: tracing.Trace | None = None
    for x in args:
        if isinstance(x, tracing.Tracer):
            t = x._trace
            if inner is None or inner.is_ancestor_of(t):
                inner = t
    return inner


@contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Runs operations on concrete values immediately, even inside ``jit``.

    Inside the block, an operation whose inputs are all concrete (constants,
    closed-over arrays) is computed while tracing, so its result is a concrete
    array that Python control flow can inspect. Operations on traced values
    (a jitted function's arguments) are staged as usual.

    Returns:
      A context manager.

    Example:
      >>> import polyjax, polyjax.numpy as jnp
      >>> from polyjax_core.tracing import Tracer
      >>> @polyjax.jit
      ... def f(x):
      ...     with polyjax.ensure_compile_time_eval():
      ...         y = jnp.sin(2.0)
      ...         assert not isinstance(y, Tracer)
      ...     return x + y
      >>> float(f(1.0)) == float(1.0 + jnp.sin(2.0))
      True
    """
    with _CompileTimeEvalTrace():
        yield
