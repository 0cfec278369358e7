"""`platform_dependent`: a different function per platform, chosen when lowering.

``platform_dependent(x, cpu=f, cuda=g, default=h)`` is a `switch` whose index is
the `platform_index` primitive. That primitive has no operands; its lowering
is the branch index of the platform lowered for, a constant, or, in a module
lowered for several platforms (`export(..., platforms=(...))`), a
`stablehlo.case` on the module's platform-index argument. Every branch must
be lowerable on every platform the module is lowered for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax._cond import switch
from polyjax_numpy.lax._declare import define_rules

__all__ = ["platform_dependent", "platform_index_p"]

_ALIASES = {"gpu": ("cuda", "rocm")}

platform_index_p = Primitive("platform_index")


def platform_dependent(
    *args: Any, default: Callable[..., Any] | None = None, **per_platform: Callable[..., Any]
) -> Any:
    """Calls the function given for the platform the computation is lowered for.

    Args:
      *args: the operands, passed to the chosen function.
      default: the function for platforms not named in ``per_platform``.
      **per_platform: a function per platform name (``cpu``, ``cuda``,
        ``rocm``, ``tpu``; ``gpu`` means ``cuda`` and ``rocm``).

    Returns:
      The result of the chosen function (all must return the same types).

    Raises:
      NotImplementedError: at lowering, for a platform without a function and
        no ``default``.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy import lax
      >>> float(platform_dependent(np.float32(0.0), cpu=lax.cos, default=lax.sin))
      1.0
    """
    names: list[tuple[str, ...] | None] = []
    branches = []
    for name, fun in per_platform.items():
        names.append(_ALIASES.get(name.lower(), (name.lower(),)))
        branches.append(fun)
    if default is not None:
        names.append(None)
        branches.append(default)
    if not branches:
        raise TypeError("platform_dependent needs at least one platform function or a default.")
    index = platform_index_p.bind(platforms=tuple(names))
    return switch(index, branches, *args)


def _abstract_eval(*, platforms: tuple) -> ShapedArray:
    return ShapedArray((), np.int32)


def _branch_of(platform: str, platforms: tuple) -> int:
    for i, names in enumerate(platforms):
        if names is not None and platform in names:
            return i
    for i, names in enumerate(platforms):
        if names is None:
            return i
    raise NotImplementedError(
        f"platform_dependent has no function for platform '{platform}' (it has "
        f"{[n for n in platforms if n is not None]} and no default)."
    )


def _lowering(ctx: mlir.LoweringRuleContext, *, platforms: tuple) -> list:
    branch_of = [_branch_of(p, platforms) for p in ctx.module_context.platforms]
    i32 = mlir.aval_to_ir_type(ctx.avals_out[0])
    values = sorted(set(branch_of))

    def emit(k: int) -> list:
        return [mlir.ir_constant(np.int32(values[k]))]

    return mlir.case_on_platform(ctx, [values.index(b) for b in branch_of], [i32], emit)


def _batch(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    # No operands: the index is the same for every member of the batch.
    return platform_index_p.bind(**params), batching.not_mapped


define_rules(platform_index_p, _abstract_eval, _lowering, jvp="zero", batching=_batch)
