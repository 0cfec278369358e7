"""The axis context of a lowering: which mesh axes are manual, and the device order.

Inside a per-device program (the body of `shard_map`), a collective such as
``psum(x, "i")`` becomes a StableHLO collective (`all_reduce`, ...) whose
*replica groups* list, for each set of devices that communicate, their
logical device ids (positions in the module's device assignment). Those
groups follow from the mesh: the devices that share every coordinate except
those along ``"i"``.

The lowering of a per-device program stores an `SPMDAxisContext` in
``ModuleContext.axis_context`` while its body is lowered; collective lowering
rules read it. It knows axis names, sizes and logical device ids only, not
any mesh or sharding class, so that the collectives (in polyjax-numpy) and
the per-device maps (in polyjax-sharding) meet here without importing each
other.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["SPMDAxisContext", "manual_axis_context", "summing_transpose", "transposing_manual"]


@dataclasses.dataclass(frozen=True)
class SPMDAxisContext:
    """Mesh axes and device order of a per-device program.

    Attributes:
      axis_names: the mesh axes, major to minor.
      axis_sizes: their sizes.
      logical_ids: the logical device id at each mesh position, row-major.
      manual_axes: the axes that the program is written per device over
        (collectives may name only these).
    """

    axis_names: tuple[Any, ...]
    axis_sizes: tuple[int, ...]
    logical_ids: tuple[int, ...]
    manual_axes: frozenset

    def _check(self, names: Sequence[Any]) -> None:
        for n in names:
            if n not in self.manual_axes:
                raise NameError(
                    f"collective over axis {n!r}, which is not a manual axis of the enclosing "
                    f"per-device program (manual axes: {sorted(map(str, self.manual_axes))})"
                )

    def _grid(self, names: Sequence[Any]) -> np.ndarray:
        """Logical ids with the axes ``names`` last (in that order): shape (groups, size)."""
        self._check(names)
        ids = np.asarray(self.logical_ids, np.int64).reshape(self.axis_sizes)
        where = [self.axis_names.index(n) for n in names]
        rest = [i for i in range(len(self.axis_names)) if i not in where]
        size = int(np.prod([self.axis_sizes[i] for i in where])) if where else 1
        return np.transpose(ids, rest + where).reshape(-1, size)

    def replica_groups(self, names: Sequence[Any]) -> np.ndarray:
        """``(groups, size)``: each row the devices that communicate over ``names``,
        ordered by their row-major index along ``names`` (the first name slowest)."""
        return self._grid(names)

    def axis_index_table(self, names: Sequence[Any]) -> np.ndarray:
        """The index along ``names`` of each logical device id (int32, by id)."""
        grid = self._grid(names)
        table = np.zeros(len(self.logical_ids), np.int32)
        for row in grid:
            table[row] = np.arange(len(row), dtype=np.int32)
        return table

    def permute_pairs(self, names: Sequence[Any], perm: Sequence[tuple[int, int]]) -> np.ndarray:
        """``(pairs, 2)`` logical (source, target) ids of a permutation along ``names``."""
        grid = self._grid(names)
        pairs = [(row[s], row[t]) for row in grid for s, t in perm]
        return np.asarray(pairs, np.int64).reshape(-1, 2)


def manual_axis_context(ctx: Any, names: Sequence[Any], what: str) -> SPMDAxisContext:
    """The `SPMDAxisContext` a collective over ``names`` is lowered in.

    Args:
      ctx: the collective's `LoweringRuleContext`.
      names: the axes it names.
      what: the collective's name, for the message.

    Raises:
      NameError: no per-device program encloses it (only `vmap` can evaluate
        such a collective), or an axis is not one of its manual axes.
    """
    axis_ctx = ctx.module_context.axis_context
    if not isinstance(axis_ctx, SPMDAxisContext):
        raise NameError(
            f"{what} over axes {tuple(names)} is not inside shard_map or pmap over those axes "
            "(nor vmapped over them), so there are no devices to communicate between"
        )
    axis_ctx._check(names)
    return axis_ctx


# ---------------------------------------------------------------------------
# Transposing a per-device program
#
# A per-device program treats every value as possibly different on each
# device, so the transpose of `psum` over its manual axes is `psum` again
# (each device's input reached every device's sum). Under `vmap` the same
# primitive is per example and its transpose passes the cotangent through.
# The per-device map says which axes are manual while it transposes its body.


class _Manual(threading.local):
    axes: frozenset = frozenset()


_manual = _Manual()


@contextmanager
def transposing_manual(axes: Any) -> Iterator[None]:
    """Marks ``axes`` as manual axes of a per-device program being transposed."""
    saved = _manual.axes
    _manual.axes = saved | frozenset(axes)
    try:
        yield
    finally:
        _manual.axes = saved


def summing_transpose(names: Sequence[Any]) -> bool:
    """Whether `psum` over ``names`` transposes to `psum` (they are manual axes)."""
    return bool(names) and all(n in _manual.axes for n in names)
