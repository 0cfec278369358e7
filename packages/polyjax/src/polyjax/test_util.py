"""polyjax.test_util: checking derivatives numerically, as in ``jax.test_util``.

`check_grads(f, args, order)` compares `f`'s forward-mode derivatives (jvp)
with central finite differences along a random direction, and its reverse-mode
derivatives (vjp) with the same differences through the transposition
identity ``<vjp(ct), t> == <ct, jvp(t)>``, recursing to derivatives of order
`order`. `check_jvp` and `check_vjp` do one such check with a given jvp or vjp
function.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> from polyjax.test_util import check_grads
  >>> check_grads(polyjax.lax.sin, (np.float32(0.5),), order=2)
"""

from polyjax import _runtime  # noqa: F401  (operators for the functions being checked)
from polyjax_interpreters.test_util import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
