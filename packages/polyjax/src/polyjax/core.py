"""polyjax.core: the few core types JAX still makes public in ``jax.core``.

Libraries written for JAX reach into ``jax.core`` mostly for ``Tracer``
(``isinstance(x, jax.core.Tracer)`` asks "is this value being traced?") and
``ShapedArray``; these are polyjax's own classes, so the answers are polyjax's.
jaxlib's C++ also looks up ``jax.core.ShapedArray(shape, dtype, weak_type)``
when it makes per-device arrays; under ``polyjax.as_jax`` that lookup finds
this module and gets polyjax's ``ShapedArray``, which takes those arguments.

Example:
  >>> import polyjax
  >>> import polyjax.core
  >>> traced = []
  >>> _ = polyjax.jit(lambda x: traced.append(isinstance(x, polyjax.core.Tracer)) or x)(1.0)
  >>> traced
  [True]
  >>> isinstance(polyjax.numpy.ones(2), polyjax.core.Tracer)
  False
"""

from __future__ import annotations

from typing import Any

from polyjax_core import AbstractValue, ShapedArray, Trace, Tracer, eval_jaxpr
from polyjax_core.jaxpr import Atom
from polyjax_core.symbolic_dims import dim_max as max_dim
from polyjax_core.symbolic_dims import dim_min as min_dim

__all__ = [
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",  # noqa: F822  (loaded on first use, by __getattr__)
    "eval_context",  # noqa: F822  (loaded on first use, by __getattr__)
    "eval_jaxpr",
    "max_dim",
    "min_dim",
]

# As in JAX: the parameters of an equation, and any value a jaxpr can hold.
ParamDict = dict[str, Any]
Value = Any


def __getattr__(name: str) -> Any:
    # They live with the runtime, which `import polyjax.core` need not load.
    if name in ("ensure_compile_time_eval", "eval_context"):
        import polyjax

        value = polyjax.ensure_compile_time_eval
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
