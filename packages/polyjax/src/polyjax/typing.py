"""polyjax.typing: static type annotations, as in ``jax.typing``.

`ArrayLike` annotates inputs that convert to arrays (polyjax arrays and
tracers, NumPy arrays and scalars, Python numbers); `DTypeLike` annotates
dtype arguments. Annotate outputs with `polyjax.Array`.

Example:
  >>> import polyjax
  >>> from polyjax.typing import ArrayLike
  >>> def double(x: ArrayLike) -> polyjax.Array:
  ...     return polyjax.numpy.asarray(x) * 2
  >>> double(1.5)
  Array(3., dtype=float32, weak_type=True)
"""

from polyjax_core.typing import ArrayLike, DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
