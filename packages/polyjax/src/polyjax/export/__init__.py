"""polyjax.export: saving, loading and calling lowered functions, as ``jax.export``.

`deserialize` reads the bytes of an `Exported` (written by JAX or polyjax) and
`Exported.call` runs it. `python -m polyjax.export show FILE [--module]` prints
an artifact's signature. See docs/export.md.

Example:
  >>> from polyjax import export
  >>> export.minimum_supported_calling_convention_version
  9
"""

import polyjax_export as _impl
from polyjax_export import *  # noqa: F403  (the public API of polyjax-export)

__all__ = [name for name in _impl.__all__ if name != "__version__"]
