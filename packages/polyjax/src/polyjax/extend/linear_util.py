"""polyjax.extend.linear_util: wrapped functions, as in ``jax.extend.linear_util``.

A `WrappedFun` is a function with its debug information (name, argument
names), what traces and transformations take. `wrap_init` makes one.

Example:
  >>> from polyjax.extend import linear_util as lu
  >>> isinstance(lu.wrap_init(abs), lu.WrappedFun)
  True
"""

from polyjax_core.wrapped_fun import WrappedFun, wrap_init

__all__ = ["WrappedFun", "wrap_init"]
