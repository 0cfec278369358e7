"""polyjax.monitoring: listeners for the events polyjax records, as in ``jax.monitoring``.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> from polyjax import monitoring
  >>> seen = []
  >>> monitoring.register_event_duration_secs_listener(
  ...     lambda event, seconds, **kw: seen.append(event))
  >>> _ = polyjax.jit(lambda x: x + 41.0)(np.float32(1.0))
  >>> "/jax/core/compile/backend_compile_duration" in seen
  True
  >>> monitoring.clear_event_listeners()
"""

from polyjax_core import monitoring as _monitoring
from polyjax_core.monitoring import *  # noqa: F403

__all__ = list(_monitoring.__all__)
