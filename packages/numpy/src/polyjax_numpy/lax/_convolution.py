"""Convolutions: `conv_general_dilated`, and `conv`, `conv_transpose` built on it.

A convolution slides a kernel (`rhs`) over the spatial axes of an input (`lhs`)
and at each window position contracts the input's feature axis with the
kernel's input-feature axis (no kernel flip: it is a cross-correlation, as in
XLA). Axis roles are given by `ConvDimensionNumbers`:

  - `lhs_spec`: (batch axis, feature axis, spatial axes...) of the input;
  - `rhs_spec`: (output-feature axis, input-feature axis, spatial axes...) of the kernel;
  - `out_spec`: (batch axis, feature axis, spatial axes...) of the result.

Spatial axes are paired by position in those tuples. Strings such as
`("NHWC", "HWIO", "NHWC")` name the same thing letter by letter (N batch, C
feature, O/I output/input features, anything else spatial, matched by letter;
spatial order follows the kernel string).

Per spatial axis, the input is dilated by `lhs_dilation` (holes between
elements: a "transposed" convolution), padded by `padding` (low, high; negative
values crop), the kernel dilated by `rhs_dilation` (atrous), and the window
moved by `window_strides`. `feature_group_count = G` splits input features and
output features into G groups convolved separately (depthwise when G equals
the input features); `batch_group_count = B` splits the batch into B groups,
each convolved with its own slice of output features (what weight gradients of
grouped convolutions need).

Derivatives: the convolution is bilinear. Its transpose with respect to either
operand is again a convolution: for the input, the output cotangent convolved
with the spatially reversed kernel whose feature roles are swapped (strides
become input dilation, input dilation becomes strides); for the kernel, the
input convolved with the output cotangent, with batch and feature roles of the
input swapped (strides become kernel dilation). Groups map to groups: feature
groups of the forward become feature groups of the input transpose and batch
groups of the kernel transpose, and the other way around.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _sharding_constraint as _sc
from polyjax_numpy.lax._declare import define_rules
from polyjax_numpy.lax._dot import _check_preferred, canonicalize_precision
from polyjax_numpy.lax._elementwise import _convert_element_type
from polyjax_numpy.lax._shape_ops import reshape, rev, transpose

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_transpose",
    "conv_with_general_padding",
    "padtype_to_pads",
]


class ConvDimensionNumbers(NamedTuple):
    """Axis roles of a convolution's input, kernel and output.

    Attributes:
      lhs_spec: (batch axis, feature axis, spatial axes...) of the input.
      rhs_spec: (output-feature axis, input-feature axis, spatial axes...) of the kernel.
      out_spec: (batch axis, feature axis, spatial axes...) of the output.
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


# What `conv_general_dilated`'s `dimension_numbers` accepts: None, the named tuple, or
# three layout strings such as ``("NHWC", "HWIO", "NHWC")`` (JAX's alias).
ConvGeneralDilatedDimensionNumbers = ConvDimensionNumbers | tuple[str, str, str] | None


def _spec_from_strings(
    lhs: str, rhs: str, out: str
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    for s, roles in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if any(s.count(c) != 1 for c in roles) or len(set(s)) != len(s):
            raise TypeError(
                f"conv dimension numbers: {s!r} must name each of {roles!r} once and have no "
                "repeated letters."
            )
    spatial = [c for c in rhs if c not in "OI"]
    for s, roles in ((lhs, "NC"), (out, "NC")):
        if sorted(c for c in s if c not in roles) != sorted(spatial):
            raise TypeError(
                f"conv dimension numbers: spatial letters of {s!r} and {rhs!r} must match."
            )
    lhs_spec = (lhs.index("N"), lhs.index("C"), *(lhs.index(c) for c in spatial))
    rhs_spec = (rhs.index("O"), rhs.index("I"), *(rhs.index(c) for c in spatial))
    out_spec = (out.index("N"), out.index("C"), *(out.index(c) for c in spatial))
    return lhs_spec, rhs_spec, out_spec


def conv_dimension_numbers(
    lhs_shape: Sequence[Any], rhs_shape: Sequence[Any], dimension_numbers: Any
) -> ConvDimensionNumbers:
    """Canonical `ConvDimensionNumbers` from None, a `ConvDimensionNumbers` or three strings.

    Args:
      lhs_shape: the input's shape.
      rhs_shape: the kernel's shape.
      dimension_numbers: None (NCHW / OIHW / NCHW layouts, any number of spatial axes),
        a `ConvDimensionNumbers` (or a triple of axis tuples), or a triple of strings
        such as `("NHWC", "HWIO", "NHWC")`.

    Returns:
      The `ConvDimensionNumbers` of axis indices.

    Raises:
      TypeError: ranks disagree or the specs are malformed.
    """
    nd = len(lhs_shape)
    if len(rhs_shape) != nd:
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if nd < 2:
        raise TypeError(f"convolution requires operands of rank at least 2, got rank {nd}.")
    if dimension_numbers is None:
        iota = tuple(range(nd))
        return ConvDimensionNumbers(iota, iota, iota)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        specs = tuple(dimension_numbers)
    else:
        try:
            specs = tuple(dimension_numbers)
        except TypeError:
            specs = ()
        if len(specs) != 3:
            raise TypeError(
                "dimension_numbers must be None, a ConvDimensionNumbers or a triple of "
                f"strings or axis tuples, got {dimension_numbers!r}."
            )
        if all(isinstance(s, str) for s in specs):
            if any(len(s) != nd for s in specs):
                raise TypeError(
                    f"conv dimension numbers {specs!r} must each have {nd} letters "
                    f"(the rank of the operands)."
                )
            specs = _spec_from_strings(*specs)
    specs = tuple(tuple(operator.index(a) for a in s) for s in specs)
    for s in specs:
        if sorted(s) != list(range(nd)):
            raise TypeError(
                f"conv dimension numbers must each be a permutation of range({nd}), got {specs}."
            )
    return ConvDimensionNumbers(*specs)


_dilate_dim = sd.dilate_dim


def _divides(g: int, d: Any) -> bool:
    try:
        return sd.definitely_equal(d % g, 0)
    except Exception:
        return False


def padtype_to_pads(
    in_shape: Sequence[Any],
    window_shape: Sequence[Any],
    window_strides: Sequence[int],
    padding: str,
) -> list[tuple[Any, Any]]:
    """Explicit (low, high) padding pairs for a padding name.

    Args:
      in_shape: spatial sizes of the (dilated) input.
      window_shape: spatial sizes of the (dilated) window.
      window_strides: the strides.
      padding: "VALID" (no padding), "SAME" (output size `ceil(in / stride)`, the
        extra element on the high side) or "SAME_LOWER" (extra element low).

    Returns:
      One (low, high) pair per spatial axis.
    """
    if not isinstance(padding, str):
        raise TypeError(f"padding must be a string, got {padding!r}")
    name = padding.upper()
    if name == "VALID":
        return [(0, 0)] * len(in_shape)
    if name not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got {padding}.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-n // s)
        total = sd.dim_max((out - 1) * s + w - n, 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if name == "SAME" else (big, small))
    return pads


def _static(*ds: Any) -> bool:
    return all(isinstance(d, int | np.integer) for d in ds)


def _int_tuple(xs: Any, n: int, what: str, default: int = 1) -> tuple[int, ...]:
    if xs is None:
        return (default,) * n
    try:
        out = tuple(operator.index(x) for x in xs)
    except TypeError:
        raise TypeError(
            f"conv_general_dilated {what} must be a sequence of ints, got {xs!r}."
        ) from None
    if len(out) != n:
        raise TypeError(
            f"conv_general_dilated {what} must have one entry per spatial dimension "
            f"({n}), got {out}."
        )
    return out


conv_general_dilated_p = Primitive("conv_general_dilated")


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """General n-dimensional convolution with strides, padding and dilations.

    Args:
      lhs: the input, rank n + 2.
      rhs: the kernel, rank n + 2.
      window_strides: n strides.
      padding: "SAME", "SAME_LOWER", "VALID", or n (low, high) pairs.
      lhs_dilation: n input dilations (None: ones); > 1 is a transposed convolution.
      rhs_dilation: n kernel dilations (None: ones); atrous convolution.
      dimension_numbers: None, a `ConvDimensionNumbers`, or three layout strings such
        as `("NHWC", "HWIO", "NHWC")`.
      feature_group_count: number of feature groups.
      batch_group_count: number of batch groups.
      precision: None, a `Precision` (or its name) or a pair of them.
      preferred_element_type: the accumulation and result dtype, or None.
      out_sharding: the result's sharding (explicit mode: its type's sharding; a
        parameter of the primitive, as in JAX).

    Returns:
      The convolution, laid out by `dimension_numbers.out_spec`.

    Example:
      >>> x, k = np.ones((1, 1, 5), np.float32), np.ones((1, 1, 3), np.float32)
      >>> conv_general_dilated(x, k, (1,), "VALID").shape
      (1, 1, 3)
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = len(lhs_shape) - 2
    window_strides = _int_tuple(window_strides, n, "window_strides")
    lhs_dilation = _int_tuple(lhs_dilation, n, "lhs_dilation")
    rhs_dilation = _int_tuple(rhs_dilation, n, "rhs_dilation")
    if isinstance(padding, str):
        in_sizes = [_dilate_dim(lhs_shape[a], d) for a, d in zip(dnums.lhs_spec[2:], lhs_dilation)]
        k_sizes = [_dilate_dim(rhs_shape[a], d) for a, d in zip(dnums.rhs_spec[2:], rhs_dilation)]
        pads = padtype_to_pads(in_sizes, k_sizes, window_strides, padding)
    else:
        try:
            pads = [(lo, hi) for lo, hi in padding]
        except (TypeError, ValueError):
            raise TypeError(
                f"padding must be a string or a sequence of (low, high) pairs, got {padding!r}."
            ) from None
        if len(pads) != n:
            raise ValueError(
                f"padding must have one (low, high) pair per spatial dimension ({n}), got "
                f"{padding!r}."
            )
    pads = tuple((_index(lo), _index(hi)) for lo, hi in pads)
    if preferred_element_type is not None:
        dtypes.check_user_dtype_supported(preferred_element_type, "conv_general_dilated")
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=window_strides,
        padding=pads,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        out_sharding=out_sharding,
    )


def _index(d: Any) -> Any:
    return d if sd.is_symbolic_dim(d) else operator.index(d)


def _conv_shape(
    lhs_shape: Sequence[Any],
    rhs_shape: Sequence[Any],
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[Any, Any], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
) -> tuple[Any, ...]:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_shape)
    if len(rhs_shape) != nd or len(lhs_spec) != nd:
        raise TypeError(
            "convolution requires lhs, rhs and dimension numbers of equal rank, got "
            f"{lhs_shape}, {rhs_shape} and {dimension_numbers}."
        )
    for what, xs in (
        ("window_strides", window_strides),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if any(x <= 0 for x in xs):
            raise ValueError(f"conv_general_dilated {what} must be positive, got {xs}.")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        raise ValueError(
            "conv_general_dilated feature_group_count and batch_group_count must be "
            f"positive, got {G} and {B}."
        )
    if G > 1 and B > 1:
        raise ValueError(
            "At most one of feature_group_count and batch_group_count may be > 1, got "
            f"feature_group_count={G} and batch_group_count={B}."
        )
    n_batch, n_in = lhs_shape[lhs_spec[0]], lhs_shape[lhs_spec[1]]
    k_out, k_in = rhs_shape[rhs_spec[0]], rhs_shape[rhs_spec[1]]
    if not sd.definitely_equal(n_in, k_in * G):
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by feature_group_count "
            "must equal the rhs input feature dimension size, but "
            f"{n_in} // {G} != {k_in}."
        )
    if not _divides(G, k_out):
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"feature_group_count, but {k_out} is not a multiple of {G}."
        )
    if not _divides(B, n_batch):
        raise ValueError(
            "conv_general_dilated lhs batch dimension size must be evenly divisible by "
            f"batch_group_count, but {n_batch} is not a multiple of {B}."
        )
    if not _divides(B, k_out):
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a multiple of "
            f"batch_group_count, but {k_out} is not a multiple of {B}."
        )
    spatial = []
    for la, ra, s, (lo, hi), ld, rd in zip(
        lhs_spec[2:], rhs_spec[2:], window_strides, padding, lhs_dilation, rhs_dilation
    ):
        padded = _dilate_dim(lhs_shape[la], ld) + lo + hi
        window = _dilate_dim(rhs_shape[ra], rd)
        spatial.append(sd.stride_dim(padded, window, s))
    out = [None] * nd
    out[out_spec[0]] = n_batch // B
    out[out_spec[1]] = k_out
    for a, d in zip(out_spec[2:], spatial):
        out[a] = d
    return tuple(out)


def _conv_dtype(lhs: ShapedArray, rhs: ShapedArray, preferred: Any) -> np.dtype:
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            "conv_general_dilated requires arguments to have the same dtypes, got "
            f"{lhs.dtype.name}, {rhs.dtype.name}."
        )
    dtype = lhs.dtype
    if dtype == np.dtype(bool):
        raise TypeError("conv_general_dilated does not accept dtype bool.")
    if preferred is not None and preferred != dtype:
        _check_preferred(dtype, preferred)
        dtype = preferred
    return dtype


def _conv_abstract_eval(lhs: ShapedArray, rhs: ShapedArray, **params: Any) -> ShapedArray:
    shape = _conv_shape(
        lhs.shape,
        rhs.shape,
        **{
            k: v
            for k, v in params.items()
            if k not in ("precision", "preferred_element_type", "out_sharding")
        },
    )
    dtype = _conv_dtype(lhs, rhs, params["preferred_element_type"])
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


def _conv_print_params(params: dict[str, Any]) -> dict[str, Any]:
    shown = {**params, "padding": tuple(tuple(p) for p in params["padding"])}
    return dict(sorted(shown.items()))  # all of them, sorted, as JAX prints them


def _conv_lowering(
    ctx,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
    preferred_element_type,
    out_sharding,
):
    aval_out = ctx.avals_out[0]
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if not all(_static(lo, hi) for lo, hi in padding):
        raise NotImplementedError("conv_general_dilated: symbolic padding is not supported yet")
    dnums = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0],
        input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]),
    )
    n = len(lhs_spec) - 2
    pad_attr = ir.DenseIntElementsAttr.get(
        np.asarray(padding, np.int64).reshape(n, 2), type=ir.IntegerType.get_signless(64)
    )
    precision_config = None
    # A dot algorithm (lax.DotAlgorithmPreset) has no convolution attribute: the CPU
    # convolves in the inputs' precision, so it is accepted and has no effect.
    if isinstance(precision, tuple):
        precision_config = ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in precision])
    out = hlo.ConvolutionOp(
        mlir.aval_to_ir_type(aval_out),
        lhs,
        rhs,
        dnums,
        feature_group_count,
        batch_group_count,
        window_strides=list(window_strides),
        padding=pad_attr,
        lhs_dilation=list(lhs_dilation),
        rhs_dilation=list(rhs_dilation),
        precision_config=precision_config,
    ).result
    return [out]


# ---------------------------------------------------------------------------
# Autodiff
#
# The transposes below work in the canonical layouts (N, C, spatial...) and
# (O, I, spatial...): the kernel is rearranged explicitly (transposes and
# reshapes that XLA folds into the convolution), the convolution produces a
# canonical layout, and a final transpose puts the cotangent in the operand's
# own layout.


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def _regroup_kernel(k: Any, groups: int) -> Any:
    """(G*Og, I, K...) -> (G*I, Og, K...): swaps the feature roles within each group."""
    shape = get_aval(k).shape
    k_out, k_in, spatial = shape[0], shape[1], tuple(shape[2:])
    og = k_out // groups
    k = reshape(k, (groups, og, k_in, *spatial))
    k = transpose(k, (0, 2, 1, *range(3, 3 + len(spatial))))
    return reshape(k, (groups * k_in, og, *spatial))


def _bind(lhs, rhs, **params):
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def _to_dtype(x: Any, aval: ShapedArray) -> Any:
    if get_aval(x).dtype != aval.dtype:
        x = _convert_element_type(x, aval.dtype, aval.weak_type)
    return x


def _transpose_lhs(
    ct,
    rhs,
    lhs_aval,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec)
    canonical = tuple(range(nd))
    ct = _to_dtype(ct, lhs_aval)
    k = transpose(rhs, rhs_spec)  # (O, I, K...)
    k = rev(k, tuple(range(2, nd)))
    groups = max(feature_group_count, batch_group_count)
    k = _regroup_kernel(k, groups)  # (G*I, O/G, K...)
    k_shape = get_aval(k).shape
    ct_shape = get_aval(ct).shape
    pads = []
    for i in range(nd - 2):
        n_in = lhs_aval.shape[lhs_spec[2 + i]]
        in_d = _dilate_dim(n_in, lhs_dilation[i])
        k_d = _dilate_dim(k_shape[2 + i], rhs_dilation[i])
        ct_d = _dilate_dim(ct_shape[out_spec[2 + i]], window_strides[i])
        lo = k_d - 1 - padding[i][0]
        hi = in_d + k_d - 1 - ct_d - lo
        pads.append((lo, hi))
    out = _bind(
        ct,
        k,
        window_strides=lhs_dilation,
        padding=tuple(pads),
        lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, canonical, canonical),
        feature_group_count=groups,
        batch_group_count=1,
        precision=precision,
        preferred_element_type=None,
        out_sharding=None,
    )
    if batch_group_count > 1:
        # (Nb, B*C, S...) -> (B*Nb, C, S...): group b of the features is batch group b.
        shape = get_aval(out).shape
        nb, c, spatial = shape[0], shape[1] // groups, tuple(shape[2:])
        out = reshape(out, (nb, groups, c, *spatial))
        out = transpose(out, (1, 0, *range(2, nd + 1)))
        out = reshape(out, (groups * nb, c, *spatial))
    out = transpose(out, _inverse(lhs_spec))
    return _to_dtype(out, lhs_aval)


def _transpose_rhs(
    ct,
    lhs,
    rhs_aval,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd = len(lhs_spec)
    canonical = tuple(range(nd))
    ct = _to_dtype(ct, rhs_aval)
    lhs_shape, ct_shape = get_aval(lhs).shape, get_aval(ct).shape
    pads = []
    for i in range(nd - 2):
        in_d = _dilate_dim(lhs_shape[lhs_spec[2 + i]], lhs_dilation[i])
        ct_d = _dilate_dim(ct_shape[out_spec[2 + i]], window_strides[i])
        k = rhs_aval.shape[rhs_spec[2 + i]]
        lo = padding[i][0]
        hi = (k - 1) * rhs_dilation[i] + ct_d - in_d - lo
        pads.append((lo, hi))
    # The input's features play the batch, its batch is contracted with the
    # cotangent's batch; the cotangent's features are the kernel's output features.
    t_lhs_spec = (lhs_spec[1], lhs_spec[0], *lhs_spec[2:])
    t_rhs_spec = (out_spec[1], out_spec[0], *out_spec[2:])
    out = _bind(
        lhs,
        ct,
        window_strides=rhs_dilation,
        padding=tuple(pads),
        lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(t_lhs_spec, t_rhs_spec, canonical),
        feature_group_count=batch_group_count,
        batch_group_count=feature_group_count,
        precision=precision,
        preferred_element_type=None,
        out_sharding=None,
    )
    # out is (I, O, K...); the kernel's canonical layout is (O, I, K...).
    out = transpose(out, (1, 0, *range(2, nd)))
    out = transpose(out, _inverse(rhs_spec))
    return _to_dtype(out, rhs_aval)


def _conv_transpose_rule(ct, lhs, rhs, *, preferred_element_type, out_sharding, **params):
    # The cotangents are typed by their own convolutions (JAX's grad gives them no
    # requested sharding either).
    lhs_linear, rhs_linear = ad.is_undefined_primal(lhs), ad.is_undefined_primal(rhs)
    if lhs_linear and rhs_linear:
        raise ValueError("conv_general_dilated is not linear in both operands at once")
    if type(ct) is ad.Zero:
        return [ad.Zero(lhs.aval), None] if lhs_linear else [None, ad.Zero(rhs.aval)]
    if lhs_linear:
        return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


def _conv_jvp_lhs(g, lhs, rhs, **params):
    return conv_general_dilated_p.bind(g, rhs, **params)


def _conv_jvp_rhs(g, lhs, rhs, **params):
    return conv_general_dilated_p.bind(lhs, g, **params)


# ---------------------------------------------------------------------------
# vmap: the mapped axis is folded into an axis the convolution already has.
#
#   - input mapped only: into the input batch (inside each batch group);
#   - kernel mapped only: into the output features (inside each group);
#   - both mapped: into the groups themselves (feature groups, or batch groups
#     when the convolution already has them), the new groups outermost.


def _fold_in(x: Any, bd: int, axis: int, groups: int) -> Any:
    """Merges mapped axis `bd` of `x` into `axis` (of the unmapped layout).

    `axis` of size `groups * r` becomes `groups * V * r`, ordered (group, mapped, rest).
    """
    x = batching.moveaxis(x, bd, 0)
    shape = get_aval(x).shape
    v, size = shape[0], shape[axis + 1]
    rest = tuple(shape[1:])
    split = (*rest[:axis], groups, size // groups, *rest[axis + 1 :])
    x = reshape(x, (v, *split))
    # (V, ..., groups, r, ...) -> (..., groups, V, r, ...)
    perm = [*range(1, axis + 2), 0, *range(axis + 2, len(split) + 1)]
    x = transpose(x, perm)
    return reshape(x, (*rest[:axis], groups * v * (size // groups), *rest[axis + 1 :]))


def _split_out(y: Any, axis: int, groups: int, v: Any) -> Any:
    """Inverse of `_fold_in` on a result: the mapped axis comes out in front."""
    shape = get_aval(y).shape
    size = shape[axis]
    r = size // (groups * v)
    y = reshape(y, (*shape[:axis], groups, v, r, *shape[axis + 1 :]))
    nd = len(shape) + 2
    perm = [axis + 1, *range(axis + 1), *range(axis + 2, nd)]
    y = transpose(y, perm)
    return reshape(y, (v, *shape[:axis], groups * r, *shape[axis + 1 :]))


def _conv_batch(args, dims, *, out_sharding, **params):
    # Bound without `out_sharding` (its spec fits the unbatched result); the
    # batched result is laid out as it asks after.
    out, bd = _conv_batch_unsharded(args, dims, **{**params, "out_sharding": None})
    return _sc.batched_out_sharding(out, out_sharding, bd), bd


def _conv_batch_unsharded(args, dims, **params):
    (lhs, rhs), (lbd, rbd) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    G, B = params["feature_group_count"], params["batch_group_count"]
    nm = batching.not_mapped
    if lbd is not nm and rbd is not nm:
        v = get_aval(lhs).shape[lbd]
        if B > 1:
            new_lhs = _fold_in(lhs, lbd, lhs_spec[0], 1)
            new_rhs = _fold_in(rhs, rbd, rhs_spec[0], 1)
            out = _bind(new_lhs, new_rhs, **{**params, "batch_group_count": B * v})
        else:
            new_lhs = _fold_in(lhs, lbd, lhs_spec[1], 1)
            new_rhs = _fold_in(rhs, rbd, rhs_spec[0], 1)
            out = _bind(new_lhs, new_rhs, **{**params, "feature_group_count": G * v})
        return _split_out(out, out_spec[1], 1, v), 0
    if lbd is not nm:
        v = get_aval(lhs).shape[lbd]
        new_lhs = _fold_in(lhs, lbd, lhs_spec[0], B)
        out = _bind(new_lhs, rhs, **params)
        return _split_out(out, out_spec[0], 1, v), 0
    v = get_aval(rhs).shape[rbd]
    groups = max(G, B)
    new_rhs = _fold_in(rhs, rbd, rhs_spec[0], groups)
    out = _bind(lhs, new_rhs, **params)
    return _split_out(out, out_spec[1], groups, v), 0


define_rules(
    conv_general_dilated_p,
    _conv_abstract_eval,
    _conv_lowering,
    print_params=_conv_print_params,
    transpose=_conv_transpose_rule,
    batching=_conv_batch,
    jvp_terms=(_conv_jvp_lhs, _conv_jvp_rhs),
)


# ---------------------------------------------------------------------------
# Conveniences


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Convolution in NCHW / OIHW layouts with named padding ("SAME", "VALID").

    Example:
      >>> conv(np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32),
      ...      (1, 1), "SAME").shape
      (1, 3, 5, 5)
    """
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Convolution in NCHW / OIHW layouts with explicit padding and dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _conv_transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """Padding of the input-dilated convolution that inverts a strided one's shape.

    "SAME" gives output size `in * s`; "VALID" gives `in * s + max(k - s, 0)`.
    """
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    else:
        raise ValueError(f"Padding mode must be 'SAME' or 'VALID', got {padding!r}.")
    return lo, total - lo


_TRANSPOSE_LAYOUTS = {
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Any,
    rhs: Any,
    strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """Transposed ("deconvolution") convolution: the input is dilated by `strides`.

    Args:
      lhs: the input.
      rhs: the kernel.
      strides: n strides of the convolution this one transposes (input dilation here).
      padding: "SAME", "VALID" or n explicit (low, high) pairs.
      rhs_dilation: n kernel dilations (None: ones).
      dimension_numbers: as for `conv_general_dilated`; None means NHC/HIO/NHC,
        NHWC/HWIO/NHWC or NHWDC/HWDIO/NHWDC by rank.
      transpose_kernel: flip the kernel spatially and swap its I and O roles, which
        makes this the exact gradient of `conv_general_dilated` with these strides.
      precision: as for `conv_general_dilated`.
      preferred_element_type: as for `conv_general_dilated`.

    Returns:
      The transposed convolution.
    """
    lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
    nd = len(lhs_shape)
    if dimension_numbers is None:
        if nd not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[nd]
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    n = nd - 2
    rhs_dilation = _int_tuple(rhs_dilation, n, "rhs_dilation")
    strides = _int_tuple(strides, n, "strides")
    if isinstance(padding, str):
        k_sizes = [_dilate_dim(rhs_shape[a], d) for a, d in zip(dn.rhs_spec[2:], rhs_dilation)]
        pads = [_conv_transpose_padding(k, s, padding.upper()) for k, s in zip(k_sizes, strides)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, dn.rhs_spec[2:])
        dn = dn._replace(rhs_spec=(dn.rhs_spec[1], dn.rhs_spec[0], *dn.rhs_spec[2:]))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * n,
        pads,
        lhs_dilation=strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
