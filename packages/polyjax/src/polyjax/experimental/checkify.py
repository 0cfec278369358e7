"""polyjax.experimental.checkify: errors as values, as ``jax.experimental.checkify``.

`checkify` transforms a function to return an `Error` with its result: user
`check`s, and with ``errors=`` the automatic checks (NaNs, integer division by
zero, out-of-bounds indexing), run inside the compiled program without host
callbacks, under ``jit``, ``vmap``, ``grad``, ``cond``, ``scan`` and
``while_loop``.

Example:
  >>> import polyjax, polyjax.numpy as jnp
  >>> from polyjax.experimental import checkify
  >>> def f(x, i):
  ...     checkify.check(i >= 0, "index needs to be non-negative, got {i}", i=i)
  ...     return x[i]
  >>> checked = polyjax.jit(checkify.checkify(f, errors=checkify.all_checks))
  >>> err, out = checked(jnp.arange(3.0), 5)
  >>> print(err.get())
  out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 with size 3.
"""

from polyjax._checkify import (
    Error,
    ErrorCategory,
    JaxRuntimeError,
    all_checks,
    automatic_checks,
    check,
    check_error,
    checkify,
    debug_check,
    div_checks,
    float_checks,
    index_checks,
    init_error,
    nan_checks,
    user_checks,
)

__all__ = [
    "Error",
    "ErrorCategory",
    "JaxRuntimeError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]
