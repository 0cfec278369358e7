"""Loads the runtime so that everything the facade hands out works on first use.

`Array` and tracers forward their operators (``x + y``, ``x @ w``, ``x[0]``,
``x.sum()``) to registries that the lax primitives of polyjax-numpy fill in when
they are imported, and each primitive registers its lowering rule at the same
time. A user may reach an `Array` without ever naming `polyjax.lax`
(``polyjax.device_put(np.ones(3)) + 1``), so every facade name that touches
the runtime imports this module first.
"""

import os

import polyjax_numpy.lax  # noqa: F401  (registers the primitives and the operators)
from polyjax_core import mesh_context, source_info

# The facade's own frames (`named_call`'s wrapper, `checkify.check`) are not the
# user's: the line recorded for an operation is the caller's.
source_info.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

__all__: list[str] = []


def _named_sharding(mesh, spec):  # noqa: ANN001, ANN202
    """The sharding factory of core's `mesh_context`: `NamedSharding`, loaded on first
    use, so that `typeof(x).sharding` needs no `import polyjax.sharding` first."""
    from polyjax_sharding import NamedSharding

    return NamedSharding(mesh, spec)


mesh_context.register_spec_to_sharding(_named_sharding)
