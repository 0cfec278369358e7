"""polyjax.extend.core: primitives, jaxprs and effects, as in ``jax.extend.core``.

Example:
  >>> import numpy as np
  >>> import polyjax
  >>> jaxpr = polyjax.make_jaxpr(lambda x: x * 2.0)(np.float32(1.0))
  >>> jaxpr_as_fun(jaxpr)(np.float32(3.0))
  [Array(6., dtype=float32)]
"""

from polyjax import _runtime  # noqa: F401  (operators on traced values)
from polyjax_core.effects import Effect, Effects, no_effects
from polyjax_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, new_jaxpr_eqn
from polyjax_core.jaxpr_check import check_jaxpr
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.primitive import Primitive

__all__ = [
    "ClosedJaxpr",
    "Effect",
    "Effects",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "Var",
    "check_jaxpr",
    "jaxpr_as_fun",
    "new_jaxpr_eqn",
    "no_effects",
]
