"""`DotAlgorithm` and `DotAlgorithmPreset`: asking `dot_general` for a specific algorithm.

A `precision` may name the algorithm of a matrix product instead of a
`Precision`: the element types the inputs are rounded to, the accumulation
type, and how many products of split components approximate it (bfloat16
"x3" and "x6" emulate float32). `dot_general` lowers it as StableHLO's
`algorithm` attribute, converting inputs the algorithm does not take to its
first input type (and the result back), as JAX does.

On CPU, polyjax's backend, XLA runs the presets `DEFAULT`, `F16_F16_F16`,
`BF16_BF16_F32`, `BF16_BF16_F32_X3`, `BF16_BF16_F32_X6`, `F32_F32_F32` and
`F64_F64_F64`; any other preset, and any explicit `DotAlgorithm`, raises
`ValueError` when the product is lowered (as JAX does on CPU).

Example:
  >>> import numpy as np
  >>> from polyjax_numpy import lax
  >>> x = np.eye(2, dtype=np.float32)
  >>> lax.dot(x, x, precision=DotAlgorithmPreset.F32_F32_F32)
  Array([[1., 0.],
         [0., 1.]], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["CPU_PRESETS", "DotAlgorithm", "DotAlgorithmPreset", "preset_named"]

F16, BF16, F32, F64 = (
    np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)
)


@dataclasses.dataclass(frozen=True)
class DotAlgorithm:
    """An explicit dot algorithm (StableHLO's `DotAlgorithm` attribute).

    Attributes:
      lhs_precision_type: the type the left operand is rounded to.
      rhs_precision_type: the type the right operand is rounded to.
      accumulation_type: the type products are summed in.
      lhs_component_count: components the left operand is split into.
      rhs_component_count: components the right operand is split into.
      num_primitive_operations: the products of components computed.
      allow_imprecise_accumulation: whether a lower-precision accumulation is allowed.
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """The named dot algorithms (JAX's presets, in JAX's order)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[np.dtype, ...] | None:
        """The input types the algorithm takes as they are (None: any)."""
        return _SUPPORTED.get(self.name)

    @property
    def supported_rhs_types(self) -> tuple[np.dtype, ...] | None:
        """As `supported_lhs_types` (the presets are symmetric)."""
        return _SUPPORTED.get(self.name)

    @property
    def accumulation_type(self) -> np.dtype | None:
        """The type products are summed in (None: the inputs')."""
        spec = _ALGORITHMS.get(self.name)
        if spec is not None:
            return spec.accumulation_type
        return F32 if self.name.startswith("ANY_F8_ANY_F8_F32") else None

    def algorithm(self) -> DotAlgorithm | None:
        """The explicit algorithm this preset stands for (None: DEFAULT or the F8 presets)."""
        return _ALGORITHMS.get(self.name)


_SUPPORTED: dict[str, tuple[np.dtype, ...]] = {
    "F16_F16_F16": (F16,),
    "F16_F16_F32": (F16,),
    "BF16_BF16_BF16": (BF16, F32),
    "BF16_BF16_F32": (BF16, F32),
    "BF16_BF16_F32_X3": (F32,),
    "BF16_BF16_F32_X6": (F32,),
    "BF16_BF16_F32_X9": (F32,),
    "TF32_TF32_F32": (F32,),
    "TF32_TF32_F32_X3": (F32,),
    "F32_F32_F32": (F32,),
    "F64_F64_F64": (F64,),
}

_ALGORITHMS: dict[str, DotAlgorithm] = {
    "F16_F16_F16": DotAlgorithm(F16, F16, F16),
    "F16_F16_F32": DotAlgorithm(F16, F16, F32),
    "BF16_BF16_BF16": DotAlgorithm(BF16, BF16, BF16),
    "BF16_BF16_F32": DotAlgorithm(BF16, BF16, F32),
    "BF16_BF16_F32_X3": DotAlgorithm(BF16, BF16, F32, 1, 1, 3),
    "BF16_BF16_F32_X6": DotAlgorithm(BF16, BF16, F32, 1, 1, 6),
    "BF16_BF16_F32_X9": DotAlgorithm(BF16, BF16, F32, 1, 1, 9),
    "F32_F32_F32": DotAlgorithm(F32, F32, F32),
    "F64_F64_F64": DotAlgorithm(F64, F64, F64),
}

# The presets XLA:CPU runs (DEFAULT adds no attribute at all).
CPU_PRESETS = frozenset(
    {"DEFAULT", "F16_F16_F16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
     "F32_F32_F32", "F64_F64_F64"}
)  # fmt: skip


def preset_named(name: Any) -> DotAlgorithmPreset | None:
    """The preset called `name` (exactly as JAX spells it), else None."""
    if isinstance(name, str) and name in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[name]
    return None
