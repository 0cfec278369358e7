"""Tensor contractions: `dot_general`, and `dot` / `batch_matmul` built on it.

`dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))`
multiplies and sums over the contracting axes, and pairs up the batch axes. The
result's axes are: the batch axes, then the remaining (free) axes of `lhs`, then
those of `rhs`, each in their original order.

    dot_general[dimension_numbers=(([1], [0]), ([], []))]   f32[2,3] x f32[3,4] -> f32[2,4]

Element types follow XLA (and JAX): the two inputs may differ when one is
"wider" than the other (more exponent range, then mantissa, then bits; signed
over unsigned), and the result has the wider type, or `preferred_element_type`
when given (the accumulation and result type, e.g. `int8 x int8 -> int32`).
`precision` is None, a `Precision`, or a pair of them (one per operand).
"""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import config, dtypes, mesh_context
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.aval_sharding import cotangent_type
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax._complex import real
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._dot_algorithm import (
    CPU_PRESETS,
    DotAlgorithm,
    DotAlgorithmPreset,
    preset_named,
)
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._shape_ops import transpose

__all__ = [
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "batch_matmul",
    "dot",
    "dot_general",
    "dot_general_p",
]


class Precision(enum.Enum):
    """How precisely a matmul or convolution computes on 32-bit float inputs.

    `DEFAULT` is fastest (e.g. one bfloat16 pass on TPU), `HIGH` uses three
    bfloat16 passes (or tensorfloat32), `HIGHEST` full float32. CPUs compute in
    full precision whatever is asked. Names are accepted too:
    `Precision("highest")`, `Precision("bfloat16")`, `Precision("float32")`.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if isinstance(value, str):
            return _PRECISION_NAMES.get(value.lower())
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_NAMES = {
    "default": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
}


# What a `precision` argument accepts (JAX's alias, without its dot algorithms).
PrecisionLike = str | Precision | tuple[str, str] | tuple[Precision, Precision] | None


def canonicalize_precision(
    precision: Any,
) -> tuple[Precision, Precision] | DotAlgorithm | DotAlgorithmPreset | None:
    """`precision` as None, a pair of `Precision`s (one per operand), or a dot algorithm.

    None falls back to the `jax_default_matmul_precision` option when it is set.

    Raises:
      TypeError: `precision` is not None, a `Precision` or its name, or a pair of them.
    """
    if isinstance(precision, DotAlgorithm | DotAlgorithmPreset):
        return precision
    preset = preset_named(precision)
    if preset is not None:
        return preset
    if precision is None:
        default = config.default_matmul_precision.value
        if default is None:
            return None
        default_preset = preset_named(default)
        if default_preset is not None:
            return default_preset
        if default.lower() not in _PRECISION_NAMES:
            raise NotImplementedError(
                f"jax_default_matmul_precision={default!r}: dot algorithm presets are not "
                "supported yet; use one of " + ", ".join(sorted(_PRECISION_NAMES))
            )
        p = Precision(default)
        return (p, p)
    if isinstance(precision, str | Precision):
        try:
            p = Precision(precision)
        except ValueError:
            raise TypeError(_precision_error(precision)) from None
        return (p, p)
    if isinstance(precision, tuple | list) and len(precision) == 2:
        try:
            pair = tuple(Precision(p) for p in precision)
        except ValueError:
            raise TypeError(_precision_error(precision)) from None
        return pair  # type: ignore[return-value]  # a pair: len checked above
    raise TypeError(_precision_error(precision))


def _precision_error(precision: Any) -> str:
    return (
        "Precision argument must be None, a string in "
        f"{sorted(_PRECISION_NAMES)}, a lax.Precision value or a tuple of two "
        f"lax.Precision values or strings; got {precision!r}."
    )


def _index_tuple(xs: Any, what: str) -> tuple[int, ...]:
    if isinstance(xs, int | np.integer):
        return (operator.index(xs),)
    try:
        return tuple(operator.index(x) for x in xs)
    except TypeError:
        raise TypeError(f"dot_general {what} must be a sequence of ints, got {xs!r}.") from None


# ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), as JAX spells the type.
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]

dot_general_p = Primitive("dot_general")


def dot_general(
    lhs: Any,
    rhs: Any,
    dimension_numbers: DotDimensionNumbers,
    precision: Any = None,
    preferred_element_type: Any = None,
    *,
    out_sharding: Any = None,
) -> Any:
    """General tensor contraction.

    `precision` may also be a `DotAlgorithmPreset` (or its name) or a
    `DotAlgorithm`: see `_dot_algorithm`.

    Args:
      lhs: an array.
      rhs: an array.
      dimension_numbers: `((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`,
        each a sequence of axes; paired axes must have equal sizes.
      precision: None, a `Precision` (or its name), or a pair of them.
      preferred_element_type: the accumulation and result dtype, or None for the
        wider of the input dtypes.
      out_sharding: the result's sharding (explicit mode: its type's sharding).

    Returns:
      An array whose axes are the batch axes, then the free axes of `lhs`, then those
      of `rhs`.

    Example:
      >>> dot_general(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32),
      ...             (((1,), (0,)), ((), ()))).shape
      (2, 4)
    """
    try:
        (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}."
        ) from None
    dnums = (
        (_index_tuple(lhs_contract, "contracting dimensions"),
         _index_tuple(rhs_contract, "contracting dimensions")),
        (_index_tuple(lhs_batch, "batch dimensions"),
         _index_tuple(rhs_batch, "batch dimensions")),
    )  # fmt: skip
    if preferred_element_type is not None:
        dtypes.check_user_dtype_supported(preferred_element_type, "dot_general")
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=dnums,
        out_sharding=out_sharding,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
    )


def _check_dims(side: str, aval: ShapedArray, batch: tuple, contract: tuple) -> None:
    if not all(0 <= d < aval.ndim for d in batch + contract):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less than the "
            f"number of axes of the {side} value, got {side}_batch of {batch} and "
            f"{side}_contracting of {contract} for {side} of rank {aval.ndim}"
        )
    if len(set(batch + contract)) != len(batch + contract):
        raise TypeError(
            f"dot_general requires {side} batch and contracting dimensions to be distinct, got "
            f"{side}_batch of {batch} and {side}_contracting of {contract}"
        )


def _matching_sizes(
    lhs: ShapedArray, rhs: ShapedArray, lhs_dims: tuple, rhs_dims: tuple, what: str
) -> tuple:
    """The sizes of ``lhs_dims`` of ``lhs``, checked equal to those of ``rhs_dims`` of ``rhs``."""
    lhs_sizes = tuple(lhs.shape[d] for d in lhs_dims)
    rhs_sizes = tuple(rhs.shape[d] for d in rhs_dims)
    if not sd.definitely_equal_shape(lhs_sizes, rhs_sizes):
        raise TypeError(
            f"dot_general requires {what} to have the same shape, got {lhs_sizes} and {rhs_sizes}."
        )
    return lhs_sizes


def _dot_general_shape(lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: Any) -> tuple:
    (lc, rc), (lb, rb) = dimension_numbers
    if len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lb} and rhs_batch {rb}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            "dot_general requires equal numbers of lhs_contracting and rhs_contracting "
            f"dimensions, got lhs_contracting {lc} and rhs_contracting {rc}."
        )
    _check_dims("lhs", lhs, lb, lc)
    _check_dims("rhs", rhs, rb, rc)
    lhs_batch_shape = _matching_sizes(
        lhs, rhs, lb, rb, "lhs batch dimensions and rhs batch dimensions"
    )
    _matching_sizes(lhs, rhs, lc, rc, "contracting dimensions")
    lhs_free = tuple(d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc)
    rhs_free = tuple(d for i, d in enumerate(rhs.shape) if i not in rb and i not in rc)
    return lhs_batch_shape + lhs_free + rhs_free


def _width_key(dtype: np.dtype) -> tuple:
    """Orders dtypes as XLA does to pick the result of a mixed-type dot.

    Complex beats real; then floats by exponent range and mantissa; then bit width;
    then signed beats unsigned.
    """
    is_complex = dtypes.issubdtype(dtype, np.complexfloating)
    base = np.dtype(np.float64 if dtype == np.complex128 else np.float32) if is_complex else dtype
    if dtypes.issubdtype(base, np.floating):
        fi = dtypes.finfo(base)
        exp_range, mantissa = int(fi.maxexp), int(fi.nmant)
    else:
        exp_range = mantissa = -1
    bits = 1 if base == np.dtype(bool) else dtypes.itemsize_bits(base)
    return (is_complex, exp_range, mantissa, bits, not dtypes.issubdtype(base, np.unsignedinteger))


def _input_dtype(lhs: ShapedArray, rhs: ShapedArray) -> np.dtype:
    """The wider of the two input dtypes (the result dtype without preferred_element_type)."""
    kl, kr = _width_key(lhs.dtype), _width_key(rhs.dtype)
    if kl > kr:
        return lhs.dtype
    if kr > kl:
        return rhs.dtype
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.dot_general argument type error: {lhs.dtype}, {rhs.dtype}")
    return lhs.dtype


def _check_preferred(input_dtype: np.dtype, preferred: np.dtype) -> None:
    if dtypes.issubdtype(input_dtype, np.integer) and dtypes.issubdtype(preferred, np.floating):
        pass  # integer inputs may accumulate in floats, whatever their signedness
    else:
        for kind in (np.integer, np.floating, np.complexfloating):
            if dtypes.issubdtype(input_dtype, kind) and not dtypes.issubdtype(preferred, kind):
                raise TypeError(
                    "Input type is incompatible with `preferred_element_type`. The compatible "
                    "combinations of (input_type, preferred_element_type) are (integral, "
                    "integral), (integral, floating), (floating, floating), (complex, complex)."
                )
        if dtypes.issubdtype(input_dtype, np.signedinteger) and not dtypes.issubdtype(
            preferred, np.signedinteger
        ):
            raise TypeError(
                "`preferred_element_type` must have the same signedness as the original type."
            )
    if dtypes.itemsize_bits(preferred) < dtypes.itemsize_bits(input_dtype):
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type, got "
            f"preferred_element_type of {preferred.name} for inputs of {input_dtype.name}."
        )


def _dot_general_abstract_eval(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: Any,
    out_sharding: Any,
    precision: Any,
    preferred_element_type: Any,
) -> ShapedArray:
    shape = _dot_general_shape(lhs, rhs, dimension_numbers)
    dtype = _input_dtype(lhs, rhs)
    if preferred_element_type is not None and preferred_element_type != dtype:
        if dtype != np.dtype(bool):
            _check_preferred(dtype, preferred_element_type)
        dtype = preferred_element_type
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _dot_general_print_params(params: dict[str, Any]) -> dict[str, Any]:
    # As JAX prints it: None-valued params are left out, axes are shown as lists.
    shown = {k: v for k, v in params.items() if v is not None}
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    shown["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
    return shown


def _dot_general_lowering(
    ctx, lhs, rhs, *, dimension_numbers, out_sharding, precision, preferred_element_type
):
    lhs_aval, rhs_aval = ctx.avals_in
    aval_out = ctx.avals_out[0]
    # StableHLO wants one input element type: bring the narrower input up to the wider.
    common = _input_dtype(lhs_aval, rhs_aval)
    if lhs_aval.dtype != common:
        lhs = mlir.convert_hlo(ctx, lhs, lhs_aval, lhs_aval.update(dtype=common))
    if rhs_aval.dtype != common:
        rhs = mlir.convert_hlo(ctx, rhs, rhs_aval, rhs_aval.update(dtype=common))
    (lc, rc), (lb, rb) = dimension_numbers
    dnums = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    if isinstance(precision, DotAlgorithm | DotAlgorithmPreset):
        return [
            _dot_with_algorithm(ctx, lhs, rhs, dnums, precision, common, preferred_element_type)
        ]
    precision_config = None
    if precision is not None:
        precision_config = ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in precision])
    out = hlo.dot_general(
        mlir.aval_to_ir_type(aval_out), lhs, rhs, dnums, precision_config=precision_config
    )
    return [out]


def _dot_with_algorithm(ctx, lhs, rhs, dnums, algorithm, input_dtype, preferred):
    """A dot_general carrying StableHLO's `algorithm` attribute (see `_dot_algorithm`)."""
    name = algorithm.name if isinstance(algorithm, DotAlgorithmPreset) else repr(algorithm)
    if not isinstance(algorithm, DotAlgorithmPreset) or name not in CPU_PRESETS:
        raise ValueError(f"The precision '{name}' is not supported by dot_general on CPU")
    aval_out = ctx.avals_out[0]
    default = ir.ArrayAttr.get([hlo.PrecisionAttr.get("DEFAULT")] * 2)
    spec = algorithm.algorithm()
    if spec is None:  # DEFAULT: no attribute
        return hlo.dot_general(mlir.aval_to_ir_type(aval_out), lhs, rhs, dnums,
                               precision_config=default)  # fmt: skip
    # Inputs the algorithm does not take are converted to its first input type.
    dtype = np.dtype(input_dtype)
    supported = algorithm.supported_lhs_types or (dtype,)
    if dtype not in supported:
        dtype = supported[0]
        lhs_aval, rhs_aval = ctx.avals_in
        common = lhs_aval.update(dtype=input_dtype)
        lhs = mlir.convert_hlo(ctx, lhs, common, common.update(dtype=dtype))
        rhs = mlir.convert_hlo(ctx, rhs, rhs_aval.update(dtype=input_dtype),
                               rhs_aval.update(dtype=dtype))  # fmt: skip
    result = aval_out if preferred is not None else aval_out.update(dtype=dtype)
    attr = hlo.DotAlgorithm.get(
        mlir.dtype_to_ir_type(spec.lhs_precision_type),
        mlir.dtype_to_ir_type(spec.rhs_precision_type),
        mlir.dtype_to_ir_type(spec.accumulation_type),
        spec.lhs_component_count,
        spec.rhs_component_count,
        spec.num_primitive_operations,
        spec.allow_imprecise_accumulation,
    )
    out = hlo.dot_general(mlir.aval_to_ir_type(result), lhs, rhs, dnums,
                          precision_config=default, algorithm=attr)  # fmt: skip
    if result.dtype != aval_out.dtype:
        out = mlir.convert_hlo(ctx, out, result, aval_out)
    return out


# ---------------------------------------------------------------------------
# Autodiff and vmap rules
#
# dot_general is bilinear: its jvp is dot(t_lhs, rhs) + dot(lhs, t_rhs), and it is
# linear in each operand with the other held fixed, so it transposes to either one.


def _dot_general_jvp_lhs(g, lhs, rhs, **params):
    return dot_general_p.bind(g, rhs, **params)


def _dot_general_jvp_rhs(g, lhs, rhs, **params):
    return dot_general_p.bind(lhs, g, **params)


def _free_axes(ndim: int, batch: Sequence[int], contract: Sequence[int]) -> list[int]:
    return [i for i in range(ndim) if i not in batch and i not in contract]


def _cotangent_sharding(aval: ShapedArray, layout: Sequence[int]) -> Any:
    """Explicit mode: the cotangent of an operand is sharded as the operand (its
    axes in `layout` order, before the transpose back), as JAX's types say; its
    unreduced and reduced axes exchanged (a reduced operand's cotangent is unreduced)."""
    s = cotangent_type(aval.aval_sharding)
    if s is None:
        return None
    spec = PartitionSpec(
        *(s.spec[axis] if axis < len(s.spec) else None for axis in layout),
        unreduced=s.unreduced,
        reduced=s.reduced,
    )
    return mesh_context.abstract_sharding(s.mesh, spec)


def _dot_transpose_operand(
    ct: Any,
    other: Any,
    aval: ShapedArray,
    dnums_self: tuple[tuple[int, ...], tuple[int, ...]],
    dnums_other: tuple[tuple[int, ...], tuple[int, ...]],
    ct_other_free: Sequence[int],
    precision: Any,
) -> Any:
    """The cotangent of one operand of a dot_general given the output cotangent `ct`.

    With the output laid out as (batch, free axes of this operand, free axes of the
    other), the cotangent is `ct` contracted with `other` over the other operand's
    free axes, batched over the batch axes. That result's axes are: batch, this
    operand's free axes, then (in the other operand's axis order) the axes the other
    operand contracted; mapping each back to this operand's axis and inverting the
    permutation gives this operand's layout.

    Args:
      dnums_self: (contracting, batch) axes of this operand.
      dnums_other: (contracting, batch) axes of the other operand, paired with those.
      ct_other_free: the axes of `ct` holding the other operand's free axes.
    """
    (contract, batch), (other_contract, other_batch) = dnums_self, dnums_other
    other_ndim = get_aval(other).ndim
    other_free = _free_axes(other_ndim, other_batch, other_contract)
    nb = len(batch)
    dnums = ((tuple(ct_other_free), tuple(other_free)), (tuple(range(nb)), tuple(other_batch)))
    # Which axis of this operand each axis of `out` is.
    paired = {o: c for c, o in zip(contract, other_contract)}
    layout = (
        list(batch)
        + _free_axes(aval.ndim, batch, contract)
        + [paired[o] for o in sorted(other_contract)]
    )
    out = dot_general_p.bind(
        ct,
        other,
        dimension_numbers=dnums,
        out_sharding=_cotangent_sharding(aval, layout),
        precision=precision,
        preferred_element_type=None,
    )
    perm = [0] * len(layout)
    for i, axis in enumerate(layout):
        perm[axis] = i
    out = transpose(out, tuple(perm))
    out_dtype = get_aval(out).dtype
    if dtypes.issubdtype(out_dtype, np.complexfloating) and not dtypes.issubdtype(
        aval.dtype, np.complexfloating
    ):
        out = real(out)  # a real operand promoted to complex: its cotangent is the real part
    if get_aval(out).dtype != aval.dtype:
        out = _convert_element_type(out, aval.dtype, aval.weak_type)
    return out


def _dot_general_transpose(
    ct, lhs, rhs, *, dimension_numbers, out_sharding, precision, preferred_element_type
):
    lhs_linear, rhs_linear = ad.is_undefined_primal(lhs), ad.is_undefined_primal(rhs)
    if lhs_linear and rhs_linear:
        raise ValueError("dot_general is not linear in both operands at once")
    linear = lhs if lhs_linear else rhs
    if type(ct) is ad.Zero:
        zero = ad.Zero(linear.aval)
        return [zero, None] if lhs_linear else [None, zero]
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_aval = lhs.aval if lhs_linear else get_aval(lhs)
    rhs_aval = rhs.aval if rhs_linear else get_aval(rhs)
    nb = len(lb)
    n_lhs_free = len(_free_axes(lhs_aval.ndim, lb, lc))
    n_rhs_free = len(_free_axes(rhs_aval.ndim, rb, rc))
    if lhs_linear:
        ct_rhs_free = range(nb + n_lhs_free, nb + n_lhs_free + n_rhs_free)
        t = _dot_transpose_operand(ct, rhs, lhs.aval, (lc, lb), (rc, rb), ct_rhs_free, precision)
        return [t, None]
    ct_lhs_free = range(nb, nb + n_lhs_free)
    swapped = None if precision is None else (precision[1], precision[0])
    t = _dot_transpose_operand(ct, lhs, rhs.aval, (rc, rb), (lc, lb), ct_lhs_free, swapped)
    return [None, t]


def _dot_general_batch(
    args, dims, *, dimension_numbers, out_sharding, precision, preferred_element_type
):
    """dot_general under vmap, with the batch axes folded into the dimension numbers.

    Both operands batched: their batch axes become a new leading batch dimension
    pair. One operand batched: its batch axis is one more free axis, which the
    output keeps in place among that operand's free axes. No operand is moved.
    """
    (lhs, rhs), (lbd, rbd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes: Sequence[int], bd: Any) -> tuple[int, ...]:
        if bd is batching.not_mapped:
            return tuple(axes)
        return tuple(a + (a >= bd) for a in axes)

    lc2, lb2, rc2, rb2 = shift(lc, lbd), shift(lb, lbd), shift(rc, rbd), shift(rb, rbd)
    if lbd is not batching.not_mapped and rbd is not batching.not_mapped:
        dnums = ((lc2, rc2), ((lbd, *lb2), (rbd, *rb2)))
        out_bd = 0
    elif lbd is not batching.not_mapped:
        dnums = ((lc2, rc2), (lb2, rb2))
        out_bd = len(lb) + _free_axes(get_aval(lhs).ndim, lb2, lc2).index(lbd)
    else:
        dnums = ((lc2, rc2), (lb2, rb2))
        n_lhs_free = len(_free_axes(get_aval(lhs).ndim, lb2, lc2))
        out_bd = len(lb) + n_lhs_free + _free_axes(get_aval(rhs).ndim, rb2, rc2).index(rbd)
    out = dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=dnums,
        out_sharding=out_sharding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    return out, out_bd


define_rules(
    dot_general_p,
    _dot_general_abstract_eval,
    _dot_general_lowering,
    print_params=_dot_general_print_params,
    transpose=_dot_general_transpose,
    batching=_dot_general_batch,
    jvp_terms=(_dot_general_jvp_lhs, _dot_general_jvp_rhs),
)


def dot(
    lhs: Any,
    rhs: Any,
    *,
    dimension_numbers: DotDimensionNumbers | None = None,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """Vector/matrix products, or `dot_general` when `dimension_numbers` is given.

    Without `dimension_numbers`, `lhs` and `rhs` must be 1-D or 2-D and the last
    axis of `lhs` is contracted with the first axis of `rhs` (vector-vector,
    matrix-vector, vector-matrix or matrix-matrix product).

    Raises:
      TypeError: for other shapes ("Incompatible shapes for dot").

    Example:
      >>> dot(np.ones((2, 3), np.float32), np.ones(3, np.float32)).shape
      (2,)
    """
    if dimension_numbers is None:
        lshape, rshape = get_aval(lhs).shape, get_aval(rhs).shape
        if not (
            1 <= len(lshape) <= 2
            and 1 <= len(rshape) <= 2
            and sd.definitely_equal(lshape[-1], rshape[0])
        ):
            raise TypeError(f"Incompatible shapes for dot: got {lshape} and {rshape}.")
        dimension_numbers = (((len(lshape) - 1,), (0,)), ((), ()))
    return dot_general(
        lhs,
        rhs,
        dimension_numbers,
        precision,
        preferred_element_type,
        out_sharding=out_sharding,
    )


def batch_matmul(
    lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """Batched matrix product of arrays of equal rank >= 2 (`[..., m, k] @ [..., k, n]`).

    The leading (batch) axes must have equal sizes.
    """
    lshape, rshape = get_aval(lhs).shape, get_aval(rhs).shape
    if len(lshape) < 2 or len(lshape) != len(rshape):
        raise ValueError(
            "Arguments to batch_matmul must be at least 2D and agree on their number of "
            f"dimensions, got {lshape} and {rshape}."
        )
    if not sd.definitely_equal_shape(lshape[:-2], rshape[:-2]):
        raise ValueError(
            f"Arguments to batch_matmul must agree on batch dimensions, got {lshape} and {rshape}."
        )
    batch = tuple(range(len(lshape) - 2))
    dnums = (((len(lshape) - 1,), (len(rshape) - 2,)), (batch, batch))
    return dot_general(lhs, rhs, dnums, precision, preferred_element_type)
