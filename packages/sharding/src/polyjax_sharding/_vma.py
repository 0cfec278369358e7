"""shard_map's output check under `check_vma=True`, read from the outputs' types.

In a `shard_map` body traced with `check_vma=True`, every value's type records
the manual mesh axes it varies over (`ShapedArray.vma`, propagated by
`polyjax_core.vma` and the collectives' rules). An output whose `out_specs`
omits an axis says "this value is the same across that axis" (so one copy is
the global value); `check_outputs` raises JAX's error when the output's type
says it varies over such an axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["check_outputs"]


def check_outputs(
    out_avals: Sequence[Any],
    out_specs: Sequence[Any],
    mesh: Any,
    manual_axes: frozenset,
    fun_name: str,
) -> None:
    """Raises JAX's `ValueError` if an output may vary over an axis its spec omits."""
    for aval, spec in zip(out_avals, out_specs):
        vma = aval.vma
        named = {a for entry in spec for a in _entry_axes(entry)}
        bad = (vma & manual_axes) - named
        if not bad:
            continue
        names = [n for n in mesh.axis_names if n in manual_axes]
        shape = tuple(mesh.shape[n] for n in mesh.axis_names)
        if named and vma >= manual_axes:
            missing = [n for n in names if n in bad]
            which = (
                f"mesh axis {missing[0]!r}" if len(missing) == 1 else f"mesh axes {tuple(missing)}"
            )
            detail = (
                f"out_specs is {spec} which implies that the corresponding output value is "
                f"replicated across {which}, but could not infer replication over any axes"
            )
        else:
            detail = (
                f"out_specs is {spec} which implies that the corresponding output value is only "
                f"varying across mesh axes {_set_str(named & manual_axes, names)} and not "
                f"{_set_str(bad, names)}, but it was inferred to be possibly varying over "
                f"{_set_str(vma & manual_axes, names)}"
            )
        raise ValueError(
            f"shard_map applied to the function '{fun_name}' was given out_specs which "
            "require replication which can't be statically inferred given the mesh:\n\n"
            f"The mesh given has shape {shape} with corresponding axis names "
            f"{tuple(mesh.axis_names)}.\n\n"
            f"{detail}\n\n"
            "Check if these output values are meant to be replicated over those mesh axes. "
            "If not, consider revising the corresponding out_specs entries. If so, consider "
            "disabling the check by passing the check_vma=False argument to `jax.shard_map`."
        )


def _entry_axes(entry: Any) -> tuple:
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _set_str(axes: Any, order: Sequence[Any]) -> str:
    return "{" + ",".join(str(n) for n in order if n in axes) + "}"
