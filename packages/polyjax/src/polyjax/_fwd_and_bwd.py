"""`fwd_and_bwd`: a function's forward and backward passes as two (jitted) functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from polyjax_interpreters.ad import vjp
from polyjax_interpreters.jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(
    fun: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool = False,
    jitted: bool = True,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """Splits `fun`'s reverse-mode derivative into a forward and a backward function.

    ``fwd(*args)`` is like ``vjp(fun, *args)`` but returns the residuals, a pytree
    of arrays, instead of a closure, so that ``bwd(residuals, cotangent)`` can be
    one jitted function reused across steps (a ``jit`` of the closure ``vjp``
    returns would compile again for every new closure).

    Args:
      fun: the function to differentiate.
      argnums: the position (or positions) of the arguments to differentiate by.
      has_aux: whether `fun` returns ``(output, aux)``; `aux` is not differentiated.
      jitted: whether `fwd` and `bwd` are jitted.

    Returns:
      ``(fwd, bwd)``. ``fwd(*args)`` returns ``(fun(*args), residuals)`` (and `aux`
      third when `has_aux`). ``bwd(residuals, cotangent)`` returns the cotangent of
      the argument `argnums` names: one value for an int, a tuple for a sequence.

    Raises:
      TypeError: `argnums` is not an int or a sequence of ints.

    Example:
      >>> import polyjax
      >>> import polyjax.numpy as jnp
      >>> fwd, bwd = polyjax.fwd_and_bwd(lambda x, w: (x * w).sum(), argnums=(0, 1))
      >>> y, residuals = fwd(jnp.ones(2), jnp.full(2, 3.0))
      >>> float(y), [g.tolist() for g in bwd(residuals, 1.0)]
      (6.0, [[3.0, 3.0], [1.0, 1.0]])
    """
    single = isinstance(argnums, int)
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not all(isinstance(i, int) for i in positions):
        raise TypeError(f"fwd_and_bwd: argnums must be an int or ints, got {argnums!r}")

    def fwd(*args: Any) -> tuple[Any, ...]:
        def of_diff_args(*diff: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, diff):
                full[i] = x
            return fun(*full)

        diff_args = [args[i] for i in positions]
        if has_aux:
            out, backward, aux = vjp(of_diff_args, *diff_args, has_aux=True)
            return out, backward, aux
        out, backward = vjp(of_diff_args, *diff_args)
        return out, backward

    def bwd(residuals: Any, cotangent: Any) -> Any:
        # The residuals are `vjp`'s closure, a pytree (`tree_util.Partial`) of arrays.
        cts = residuals(cotangent)
        return cts[0] if single else cts

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)
