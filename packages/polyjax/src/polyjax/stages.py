"""polyjax.stages: the ahead-of-time stages of a jitted function, as in ``jax.stages``.

``jit(f).trace(*args)`` gives a `Traced` (the jaxpr), ``.lower()`` a `Lowered`
(the StableHLO module), ``.compile()`` a `Compiled` (the XLA executable, which
can be called). `ArgInfo` describes one argument of a stage; `Wrapped` is the
interface of what `jit` returns. `CompilerOptions` is JAX's type of a mapping of
XLA compiler option names to values (``Lowered.compile`` takes no options yet).

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> from polyjax.stages import Lowered, Wrapped
  >>> f = polyjax.jit(lambda x: x * 2.0)
  >>> isinstance(f, Wrapped), isinstance(f.lower(np.float32(1.0)), Lowered)
  (True, True)
"""

from typing import Any, Protocol, runtime_checkable

from polyjax import _runtime  # noqa: F401  (operators for the functions being staged)
from polyjax_interpreters.stages import ArgInfo, Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

# XLA compiler option name -> its value, as ``jax.stages.CompilerOptions``.
CompilerOptions = dict[str, str | bool]


@runtime_checkable
class Wrapped(Protocol):
    """What `jit` returns: a callable that can also be traced and lowered ahead of time."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the function (compiling it on the first call for these argument types)."""

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Traces the function for these arguments (arrays or `ShapeDtypeStruct`\\ s)."""

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Traces and lowers the function for these arguments to StableHLO."""
