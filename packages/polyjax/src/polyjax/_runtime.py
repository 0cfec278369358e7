"""Loads the runtime so that everything the facade hands out works on first use.

`Array` and tracers forward their operators (``x + y``, ``x @ w``, ``x[0]``,
``x.sum()``) to registries that the lax primitives of polyjax-numpy fill in when
they are imported, and each primitive registers its lowering rule at the same
time. A user may reach an `Array` without ever naming `polyjax.lax`
(``polyjax.device_put(np.ones(3)) + 1``), so every facade name that touches
the runtime imports this module first.
"""

import polyjax_numpy.lax  # noqa: F401  (registers the primitives and the operators)

__all__: list[str] = []
