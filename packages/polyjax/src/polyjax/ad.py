"""``polyjax.ad``: the markers of `vjp`'s ``with_refs``, as ``jax.ad``.

``vjp_fn.with_refs(*targets)(ct)`` sends each primal's cotangent where its
target says: into a `Ref` (added in place; `GradRef()` comes back), nowhere
(`DontWant()`; `DidntWant()` comes back), or back as a value (`GradValue()`).

Example:
  >>> import polyjax, polyjax.numpy as jnp
  >>> from polyjax.ad import DontWant, GradValue
  >>> _, f_vjp = polyjax.vjp(lambda x, w: jnp.sum(x * w), jnp.ones(2), 2 * jnp.ones(2))
  >>> f_vjp.with_refs(GradValue(), DontWant())(1.0)
  (Array([2., 2.], dtype=float32), DidntWant())
"""

from polyjax_interpreters.ad import DidntWant, DontWant, GradRef, GradValue

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
