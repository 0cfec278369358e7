"""polyjax.ref: mutable array references, as ``jax.ref``.

The functions live in polyjax-numpy (``polyjax_numpy.ref``); this module
re-exports that public namespace unchanged. See docs/refs.md.

Example:
  >>> import polyjax
  >>> r = polyjax.ref.new_ref(polyjax.numpy.zeros(2))
  >>> polyjax.ref.addupdate(r, 0, polyjax.numpy.float32(3.0))
  >>> polyjax.ref.freeze(r)
  Array([3., 0.], dtype=float32)
"""

from polyjax_numpy import ref as _ref
from polyjax_numpy.ref import *  # noqa: F403

__all__ = list(_ref.__all__)
