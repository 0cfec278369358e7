"""polyjax.debug: looking inside programs, as in ``jax.debug``.

Printing, logging and inspecting the values a traced program computes (`print`,
`log`, `callback`, `breakpoint`; their effects `DebugEffect` and
`OrderedDebugEffect`), and the shardings a program gives them
(`inspect_array_sharding`), and drawing how an array is laid out over devices
(`visualize_array_sharding`, `visualize_sharding`). See docs/debugging.md.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> polyjax.debug.visualize_array_sharding(polyjax.device_put(np.zeros(4)), use_color=False)
  ┌───────────────────────┐
  │         CPU 0         │
  └───────────────────────┘
  >>> polyjax.jit(lambda x: polyjax.debug.print("x is {}", x))(np.float32(2.0))
  x is 2.0
"""

from polyjax import _runtime  # noqa: F401  (operators on the arrays drawn)
from polyjax_core.effects import DebugEffect, OrderedDebugEffect
from polyjax_numpy.callback import debug_callback as callback
from polyjax_numpy.debugging import (
    breakpoint,  # noqa: A004  (JAX's name)
    inspect_array_sharding,
)
from polyjax_numpy.debugging import debug_log as log
from polyjax_numpy.debugging import debug_print as print  # noqa: A004  (JAX's name)
from polyjax_sharding import visualize_array_sharding, visualize_sharding

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]
