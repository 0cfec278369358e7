"""polyjax.nn: activations, softmax, attention and initializers, as ``jax.nn``.

The functions live in polyjax-numpy (``polyjax_numpy.nn``); this module
re-exports that public namespace unchanged (``polyjax.nn.initializers`` too).

Example:
  >>> import polyjax
  >>> polyjax.nn.relu(polyjax.numpy.array([-1.0, 2.0]))
  Array([0., 2.], dtype=float32)
"""

import sys as _sys

from polyjax_numpy import nn as _nn
from polyjax_numpy.nn import *  # noqa: F403

# `import polyjax.nn.initializers` finds the implementation module.
_sys.modules[f"{__name__}.initializers"] = _nn.initializers

__all__ = list(_nn.__all__)
