"""Shared pieces of the sparse formats: `SparseInfo` and the efficiency warnings.

Example:
  >>> from polyjax.experimental.sparse.util import SparseInfo
  >>> SparseInfo((2, 3))
  SparseInfo(shape=(2, 3), indices_sorted=False, unique_indices=False)
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CuSparseEfficiencyWarning",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "SparseInfo",
]


class SparseEfficiencyError(ValueError):
    """An operation would have to densify or grow a sparse array (``on_inefficient='error'``)."""


class SparseEfficiencyWarning(UserWarning):
    """An operation densifies or grows a sparse array (``on_inefficient='warn'``)."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """A sparse operation takes a slower path than cuSPARSE's (kept for JAX's name)."""


class SparseInfo(NamedTuple):
    """What a sparse primitive knows of its operand besides the buffers (a hashable param)."""

    shape: tuple[int, ...]
    indices_sorted: bool = False
    unique_indices: bool = False
