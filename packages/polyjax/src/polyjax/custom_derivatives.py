"""polyjax.custom_derivatives: user-defined derivative rules, as in ``jax.custom_derivatives``.

`custom_jvp` attaches a forward-mode rule to a function, `custom_vjp` a
forward/backward pair for reverse mode; both keep working under `jit`, `vmap`
and higher-order differentiation. `SymbolicZero` and `CustomVJPPrimal` are what
rules defined with ``symbolic_zeros=True`` receive. `custom_gradient` and
`closure_convert` write a reverse-mode rule as a closure; `linear_call` gives a
linear function its own transpose.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> from polyjax import lax
  >>> @polyjax.custom_jvp
  ... def f(x):
  ...     return lax.sin(x)
  >>> @f.defjvp
  ... def f_jvp(primals, tangents):
  ...     (x,), (t,) = primals, tangents
  ...     return f(x), 2.0 * lax.cos(x) * t
  >>> float(polyjax.grad(f)(np.float32(0.0)))
  2.0
"""

from polyjax import _runtime  # noqa: F401  (operators for the functions being transformed)
from polyjax._custom_gradient import closure_convert, custom_gradient
from polyjax._linear_call import linear_call
from polyjax_interpreters import custom_derivatives as _impl
from polyjax_interpreters.custom_derivatives import (  # noqa: F401  (in __all__)
    CustomJVPException,
    CustomVJPException,
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)

# The implementation's public names but custom_lin_p, which stays internal (as in JAX).
__all__ = [
    *(name for name in _impl.__all__ if name != "custom_lin_p"),
    "closure_convert",
    "custom_gradient",
    "linear_call",
]
