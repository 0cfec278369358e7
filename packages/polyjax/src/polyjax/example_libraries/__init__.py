"""Small example libraries built on polyjax, as ``jax.example_libraries``.

Submodules: `optimizers` (first-order optimizers over pytrees, as triples of
functions) and `stax` (neural-network layers as ``(init_fun, apply_fun)`` pairs).
"""

__all__ = ["optimizers", "stax"]
