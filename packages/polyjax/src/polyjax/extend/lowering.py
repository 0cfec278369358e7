"""polyjax.extend.lowering: what a lowering rule receives, as in ``jax.extend.lowering``.

A rule registered with ``polyjax.interpreters.mlir.register_lowering`` is called
as ``rule(ctx, *operands, **params)`` with `ctx` a `LoweringRuleContext`
(``ctx.avals_in``, ``ctx.avals_out``, ``ctx.module_context``).

Example:
  >>> from polyjax.extend.lowering import LoweringRuleContext
  >>> LoweringRuleContext.__name__
  'LoweringRuleContext'
"""

from polyjax_interpreters.mlir import LoweringRuleContext

__all__ = ["LoweringRuleContext"]
