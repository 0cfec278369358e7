"""``jax_debug_nans`` / ``jax_debug_infs``: find the operation that made a NaN or Inf.

With either flag on, executables are wrapped when they are compiled (the flags
are part of the trace context, so the caches keep checked and unchecked
executables apart and the unchecked fast paths pay nothing). A checked
executable looks at its floating-point outputs after each call:

* a one-primitive (eager) executable raises `FloatingPointError` naming the
  primitive, with a note giving the user's line;
* a jitted program calls its *de-optimized* version: its jaxpr evaluated
  primitive by primitive, each checked, so the error names the first primitive
  that produced the value and the line that created it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core import config
from polyjax_core import source_info as si

__all__ = ["CheckedExecutable", "maybe_checked"]


def _bad_value(outs: Sequence[Any]) -> str | None:
    """``"nan"`` or ``"inf"`` if an output has one the flags ask about, else None."""
    nans, infs = config.debug_nans.value, config.debug_infs.value
    for x in outs:
        dtype = getattr(x, "dtype", None)
        if dtype is None or not np.issubdtype(dtype, np.inexact):
            continue
        v = np.asarray(x)
        if nans and np.isnan(v).any():
            return "nan"
        if infs and np.isinf(v).any():
            return "inf"
    return None


def _error(kind: str, name: str) -> FloatingPointError:
    err = FloatingPointError(f"invalid value ({kind}) encountered in {name}")
    where = si.current()
    if where.frame is not None:
        err.add_note(f"The operation was created at {si.summarize(where)}")
    return err


class CheckedExecutable:
    """An executable whose outputs are checked for NaNs/Infs after each call.

    Attributes:
      name: the primitive's or the jitted function's name.
      rerun: for a jitted program, ``rerun(args)`` evaluates it primitive by
        primitive (each primitive checked); None for one primitive.
    """

    def __init__(self, exe: Any, name: str, rerun: Callable[[Sequence[Any]], Any] | None):
        self._exe = exe
        self.name = name
        self.rerun = rerun

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._exe, attr)

    def call(self, args: Sequence[Any]) -> Any:
        outs = self._exe.call(args)
        kind = _bad_value(outs)
        if kind is None:
            return outs
        if self.rerun is None:
            raise _error(kind, self.name)
        print(
            f"Invalid {kind} value encountered in the output of a jax.jit function. "
            "Calling the de-optimized version."
        )
        self.rerun(args)
        # The de-optimized run found nothing: XLA's optimizations made the value.
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in jit({self.name}), but not when its "
            "operations ran one by one: an optimization of the compiled program produced it."
        )


def maybe_checked(exe: Any, name: str, jaxpr: Any = None) -> Any:
    """``exe``, wrapped in a `CheckedExecutable` when debug_nans or debug_infs is on.

    Args:
      exe: a compiled executable (with ``call(args)``).
      name: what it computes, for the error message.
      jaxpr: the `ClosedJaxpr` of a jitted program, to re-run primitive by
        primitive; None for one primitive.
    """
    if not (config.debug_nans.value or config.debug_infs.value):
        return exe
    rerun = None
    if jaxpr is not None:
        from polyjax_core.jaxpr_eval import eval_jaxpr

        def rerun(args: Sequence[Any]) -> Any:
            # Only the program's own arguments: leading dimension-variable or
            # token arguments are not in the jaxpr.
            n = len(jaxpr.jaxpr.invars)
            return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *list(args)[len(args) - n :])

    return CheckedExecutable(exe, name, rerun)
