"""``polyjax.experimental.shard_map``: `shard_map` with JAX's older argument names.

`shard_map(f, mesh, in_specs, out_specs, check_rep=True, auto=frozenset())`
is ``polyjax.shard_map`` with ``check_vma=check_rep`` and the manual axes
being the mesh axes not in ``auto``. As in JAX, it is deprecated: looking it up
warns (`DeprecationWarning`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polyjax._runtime  # noqa: F401  (the lax primitives and their rules)
from polyjax_sharding import shard_map as _new_shard_map

__all__ = ["shard_map"]  # noqa: F822  (deprecated: given by __getattr__, with a warning)


def _shard_map(
    f: Callable[..., Any],
    mesh: Any,
    in_specs: Any,
    out_specs: Any,
    check_rep: bool = True,
    auto: Any = frozenset(),
) -> Callable[..., Any]:
    """`polyjax.shard_map` with the older signature.

    Args:
      f: the per-device function.
      mesh: the `Mesh`.
      in_specs: `PartitionSpec`s of the arguments (a pytree prefix).
      out_specs: `PartitionSpec`s of the outputs (a pytree prefix).
      check_rep: check that outputs replicated by `out_specs` are (JAX's
        `check_vma`).
      auto: mesh axes left to the partitioner (not manual).

    Returns:
      The mapped function.

    Example:
      >>> import numpy as np
      >>> import polyjax
      >>> from polyjax.sharding import PartitionSpec as P
      >>> mesh = polyjax.make_mesh((1,), ("x",), axis_types=(polyjax.sharding.AxisType.Auto,))
      >>> import warnings
      >>> with warnings.catch_warnings():  # deprecated, as in JAX: use polyjax.shard_map
      ...     warnings.simplefilter("ignore", DeprecationWarning)
      ...     from polyjax.experimental.shard_map import shard_map
      >>> shard_map(lambda a: a * 2, mesh, P("x"), P("x"))(np.ones(2))
      Array([2., 2.], dtype=float32)
    """
    manual = frozenset(a for a in mesh.axis_names if a not in frozenset(auto))
    return _new_shard_map(
        f,
        mesh=mesh,
        in_specs=in_specs,
        out_specs=out_specs,
        check_vma=check_rep,
        axis_names=manual if auto else frozenset(),
    )


from polyjax._jax_deprecations import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)  # `shard_map` warns, as JAX's does
