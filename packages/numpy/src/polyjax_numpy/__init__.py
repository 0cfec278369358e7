"""polyjax-numpy: the lax primitives and the NumPy API (random, nn and scipy come next).

Modules:
  lax: every primitive, with its shape rule and lowering, and JAX's `lax` functions.
  numpy: NumPy's API with JAX's semantics (`polyjax.numpy`), built on `lax`.
  callback: host callbacks (`pure_callback`, `io_callback`, `debug_callback`), loaded on use.
  debugging: `debug_print` and `breakpoint`, built on `debug_callback`, loaded on use.
  ref: mutable array references (`new_ref`, `get`, `set`, `swap`, `addupdate`, `freeze`).
  indexing: `ds` and `Slice`, slices whose start may be traced (`x[ds(i, n)]`).

Importing this package also defines the operators and methods of `Array` and
of tracers (``x + y``, ``x[0]``, ``x.sum()``), with JAX's type promotion.
"""

import os as _os

from polyjax_core import source_info as _source_info

# Frames of this package are internal (tracebacks, user source lines).
_source_info.register_exclusion(_os.path.dirname(_os.path.abspath(__file__)))

from polyjax_core.versioning import version_getattr as _version_getattr  # noqa: E402
from polyjax_numpy import _array_methods, lax, numpy, ref  # noqa: E402,F401 (operators register on import)

__all__ = ["__version__", "lax", "numpy", "ref"]


__getattr__ = _version_getattr(__name__, "polyjax-numpy")
