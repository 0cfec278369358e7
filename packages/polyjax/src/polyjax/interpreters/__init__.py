"""polyjax.interpreters: the transformation rule tables, as in ``jax.interpreters``.

Library code that declares a primitive registers its rules here: its jvp and
transpose in `ad` (``ad.primitive_jvps``, ``ad.defjvp``, ``ad.deflinear2``,
``ad.primitive_transposes``), its vmap rule in `batching`
(``batching.primitive_batchers``, ``batching.defvectorized``), its StableHLO
lowering in `mlir` (``mlir.register_lowering``, ``mlir.lower_fun``), and its
known/unknown split in `partial_eval`. Each submodule re-exports the public
names of polyjax's own module of that name. (JAX's `pxla` and `xla` hold
internals of its own backend; polyjax has no counterpart.)

Example:
  >>> from polyjax.interpreters import ad, batching, mlir
  >>> callable(ad.defjvp) and callable(mlir.register_lowering)
  True
"""

from polyjax.interpreters import ad, batching, mlir, partial_eval

__all__ = ["ad", "batching", "mlir", "partial_eval"]
