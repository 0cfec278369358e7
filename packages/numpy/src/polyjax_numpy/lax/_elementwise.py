"""Elementwise lax primitives: arithmetic, math functions, comparisons, bitwise ops.

Each operation is a `Primitive` with three pieces:

- a *shape rule* (abstract evaluation) with lax's strict checks: operands of one
  dtype (from the categories the operation accepts), shapes of one rank with
  size-1 and rank-0 operands stretched (see `_shape_rules`), and a weak result
  type only when every operand is weak;
- an *impl*, the eager path: a cached one-primitive executable
  (`polyjax_interpreters.dispatch.apply_primitive`);
- a *lowering rule* to StableHLO (CHLO for the special functions, which XLA
  expands into polynomial approximations).

The public functions bind the primitives and let Python scalars take the dtype
of the other operands: ``lax.add(x, 1.0)`` works for any floating ``x``, as in
JAX, while ``lax.add(int32_x, 1.5)`` is a dtype error.

    >>> from polyjax_core.make_jaxpr import make_jaxpr
    >>> print(make_jaxpr(lambda x: mul(sin(x), 2.0))(np.ones(3, np.float32)))
    { lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = mul b 2.0:f32[] in (c,) }
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import EvalTrace, Tracer, current_trace
from polyjax_core.typing import ArrayLike, DTypeLike
from polyjax_interpreters import ad, array, batching, dispatch, mlir
from polyjax_numpy.lax import _shape_rules as sr
from polyjax_numpy.lax._declare import standard_primitive

__all__ = [
    "AccuracyMode",
    "RoundingMethod",
    "Tolerance",
    "abs",
    "abs_p",
    "acos",
    "acos_p",
    "acosh",
    "acosh_p",
    "add",
    "add_p",
    "and_p",
    "asin",
    "asin_p",
    "asinh",
    "asinh_p",
    "atan",
    "atan2",
    "atan2_p",
    "polygamma",
    "polygamma_p",
    "atan_p",
    "atanh",
    "atanh_p",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "cbrt_p",
    "ceil",
    "ceil_p",
    "clamp",
    "clamp_p",
    "convert_element_type",
    "convert_element_type_p",
    "cos",
    "cos_p",
    "cosh",
    "cosh_p",
    "digamma",
    "digamma_p",
    "div",
    "div_p",
    "eq",
    "eq_p",
    "erf",
    "erf_inv",
    "erf_inv_p",
    "erf_p",
    "erfc",
    "erfc_p",
    "exp",
    "exp2",
    "exp2_p",
    "exp_p",
    "expm1",
    "expm1_p",
    "floor",
    "floor_p",
    "ge",
    "ge_p",
    "gt",
    "gt_p",
    "integer_pow",
    "integer_pow_p",
    "is_finite",
    "is_finite_p",
    "le",
    "le_p",
    "lgamma",
    "lgamma_p",
    "log",
    "log1p",
    "log1p_p",
    "log_p",
    "logistic",
    "logistic_p",
    "lt",
    "lt_p",
    "max",
    "max_p",
    "min",
    "min_p",
    "mul",
    "mul_p",
    "ne",
    "ne_p",
    "neg",
    "neg_p",
    "not_p",
    "or_p",
    "pow",
    "pow_p",
    "reciprocal",
    "rem",
    "rem_p",
    "round",
    "round_p",
    "rsqrt",
    "rsqrt_p",
    "select",
    "select_n",
    "select_n_p",
    "shift_left",
    "shift_left_p",
    "shift_right_arithmetic",
    "shift_right_arithmetic_p",
    "shift_right_logical",
    "shift_right_logical_p",
    "sign",
    "sign_p",
    "sin",
    "sin_p",
    "sinh",
    "sinh_p",
    "sqrt",
    "sqrt_p",
    "square",
    "square_p",
    "sub",
    "sub_p",
    "tan",
    "tan_p",
    "tanh",
    "tanh_p",
    "xor_p",
]


# ---------------------------------------------------------------------------
# Params: rounding and accuracy


class RoundingMethod(enum.IntEnum):
    """How `round` breaks ties: away from zero (C's `round`) or to the even neighbour."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class AccuracyMode(enum.Enum):
    """A named accuracy for the transcendental functions (`sin(x, accuracy=...)`)."""

    DEFAULT = "DEFAULT"
    HIGHEST = "HIGHEST"


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """An error bound for a transcendental function: XLA may pick a cheaper
    implementation whose result is within `atol`, `rtol` or `ulps` of the exact one."""

    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0


def _accuracy_attr(accuracy: Tolerance | AccuracyMode) -> ir.Attribute:
    if isinstance(accuracy, Tolerance):
        return hlo.ResultAccuracyAttr.get(
            float(accuracy.atol), float(accuracy.rtol), int(accuracy.ulps), "TOLERANCE"
        )
    if isinstance(accuracy, AccuracyMode):
        return hlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.value)
    raise TypeError(f"accuracy must be a Tolerance or an AccuracyMode, got {accuracy!r}")


# ---------------------------------------------------------------------------
# Declaring primitives


def _same_dtype(dtype: Any) -> Any:
    return dtype


def _bool_dtype(dtype: Any) -> Any:
    return np.dtype(np.bool_)


def _real_dtype(dtype: Any) -> Any:
    """complex64 -> float32, complex128 -> float64; real dtypes unchanged."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        return np.finfo(dtype).dtype
    return dtype


def _unop_rule(name: str, accepted: tuple, out_dtype: Callable = _same_dtype) -> Callable:
    def rule(x: ShapedArray, **params: Any) -> ShapedArray:
        sr.check_dtypes(name, (x,), (accepted,))
        return ShapedArray(x.shape, out_dtype(x.dtype), x.weak_type)

    return rule


def _naryop_rule(name: str, accepted: Sequence[tuple], out_dtype: Callable = _same_dtype):
    def rule(*avals: ShapedArray, **params: Any) -> ShapedArray:
        sr.check_dtypes(name, avals, accepted)
        shape = sr.broadcasting_shape(name, *(a.shape for a in avals))
        return ShapedArray(shape, out_dtype(avals[0].dtype), all(a.weak_type for a in avals))

    return rule


# ---------------------------------------------------------------------------
# Lowering helpers


def _broadcast_operands(ctx: mlir.LoweringRuleContext, args: Sequence[ir.Value]) -> list:
    """Stretches rank-0 and size-1 operands to the output shape (lax's broadcasting)."""
    out_shape = ctx.avals_out[0].shape
    out = []
    for x, aval in zip(args, ctx.avals_in):
        if aval.shape != out_shape:
            dims = tuple(range(len(out_shape))) if aval.shape else ()
            x = mlir.broadcast_in_dim(ctx, x, aval.update(shape=out_shape), dims)
        out.append(x)
    return out


def _set_accuracy(value: ir.Value, accuracy: Any) -> ir.Value:
    if accuracy is not None:
        value.owner.attributes["result_accuracy"] = _accuracy_attr(accuracy)
    return value


def _nary_lowering(op: Callable[..., ir.Value]) -> Callable:
    """A lowering rule applying `op` to the (broadcast) operands."""

    def rule(ctx: mlir.LoweringRuleContext, *args: ir.Value, accuracy: Any = None, **params):
        if len(args) > 1:
            args = _broadcast_operands(ctx, args)
        return [_set_accuracy(op(*args), accuracy)]

    return rule


def _comparison_type(dtype: Any) -> str:
    """How `stablehlo.compare` orders values of `dtype` (bools compare as unsigned)."""
    if dtypes.issubdtype(dtype, np.inexact):
        return "FLOAT"
    if dtypes.issubdtype(dtype, np.signedinteger):
        return "SIGNED"
    return "UNSIGNED"


def _compare_lowering(direction: str) -> Callable:
    def rule(ctx: mlir.LoweringRuleContext, x: ir.Value, y: ir.Value) -> list[ir.Value]:
        x, y = _broadcast_operands(ctx, (x, y))
        kind = _comparison_type(ctx.avals_in[0].dtype)
        return [mlir.compare_hlo(x, y, direction, kind)]

    return rule


# ---------------------------------------------------------------------------
# Helpers for the differentiation and batching rules
#
# The rules sit next to their primitives below. Every derivative is written with
# lax operations, so that it can itself be differentiated (higher orders), batched
# and staged. lax's broadcasting stretches rank-0 and size-1 operands, so an
# operand's tangent may be smaller than the output: `_bcast_to` stretches it to the
# output's shape in jvp rules, and transpose rules sum cotangents back down with
# `_unbroadcast`.


def _shape_of(x: Any) -> tuple:
    return get_aval(x).shape


def _dtype_of(x: Any) -> Any:
    return get_aval(x).dtype


def _const(x: Any, value: Any) -> Any:
    """`value` as a weakly typed scalar of `x`'s dtype: a rule's constant beside `x`.

    Rules must not put a Python number beside a primal: the primal itself may be
    a Python scalar (`grad(f)(3.0)` differentiates at one, as does `hessian`'s
    inner pass), and lax's binary operations give a Python scalar the dtype of
    the *other* operand only, so `mul(2, 3.0)` mixes int32 with float32. A
    constant built in the primal's dtype works for every primal and stays weak,
    as the Python number would have beside an array.
    """
    return sr.weak_scalar(value, _dtype_of(x))


def _is_inexact(dtype: Any) -> bool:
    """Whether values of `dtype` have tangents of their own (not float0)."""
    return isinstance(dtype, np.dtype) and dtypes.issubdtype(dtype, np.inexact)


def _is_complex(x: Any) -> bool:
    return dtypes.issubdtype(_dtype_of(x), np.complexfloating)


def _zero_tangent(aval: ShapedArray) -> ad.Zero:
    """The symbolic zero (co)tangent of a value of type `aval`."""
    return ad.Zero(ad.tangent_aval(aval))


def _zeros_like(x: Any) -> Any:
    """An array of zeros of `x`'s type (a cheap broadcast of a literal under a trace)."""
    return ad.zeros_like_aval(get_aval(x))


def _bcast_to(t: Any, shape: tuple) -> Any:
    """`t`, an operand's tangent, stretched to the output `shape` as lax's broadcasting does."""
    t_shape = _shape_of(t)
    if sd.definitely_equal_shape(t_shape, shape):
        return t
    return sr.ops.broadcast_in_dim(t, shape, tuple(range(len(shape))) if t_shape else ())


def _unbroadcast(aval: ShapedArray, ct: Any) -> Any:
    """The cotangent `ct` of an output summed down to the shape of an operand of type `aval`.

    The transpose of `_bcast_to`: a rank-0 operand gets the sum of all of `ct`, a
    size-1 axis stretched to size n the sum over that axis.
    """
    if type(ct) is ad.Zero:
        return _zero_tangent(aval)
    ct_shape, shape = _shape_of(ct), aval.shape
    if sd.definitely_equal_shape(ct_shape, shape):
        return ct
    reduce_sum, reshape = sr.ops.reduce_sum, sr.ops.reshape
    if not shape:
        return reduce_sum(ct, tuple(range(len(ct_shape))))
    axes = tuple(
        i for i, (d, c) in enumerate(zip(shape, ct_shape)) if not sd.definitely_equal(d, c)
    )
    return reshape(reduce_sum(ct, axes), shape)


def _replace_zero(x: Any) -> Any:
    """`x` with its zeros replaced by ones (to divide by, or take the log of, safely)."""
    return select_n(eq(x, _const(x, 0)), x, add(_zeros_like(x), _const(x, 1)))


def _linear_cts(ct: Any, args: Sequence[Any], make: Callable[[Any, int], Any]) -> list:
    """One cotangent per argument of a transpose rule: `make(ct, i)` for the linear
    (undefined) arguments, a symbolic zero for them if `ct` is zero, None for the others."""
    out = []
    for i, a in enumerate(args):
        if not ad.is_undefined_primal(a):
            out.append(None)
        elif type(ct) is ad.Zero:
            out.append(_zero_tangent(a.aval))
        else:
            out.append(make(ct, i))
    return out


# ---------------------------------------------------------------------------
# Unary arithmetic and math


# Autodiff of the unary operations, declared with each primitive below: neg is linear;
# rounding, sign and tests have zero derivatives (their tangents are symbolic zeros,
# float0 for bool results); the others give one tangent term `dx`, or `dx_ans`
# when it is simpler written with the result.
_LN2 = float(np.log(2.0))
_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))
_SQRT_PI_OVER_TWO = float(np.sqrt(np.pi) / 2.0)


def _abs_jvp(g: Any, ans: Any, x: Any) -> Any:
    if _is_complex(x):
        # d|x| = Re(conj(x) dx) / |x|; taken as 0 at x = 0.
        conj, real = sr.ops.conj, sr.ops.real
        scale = div(conj(x), _convert_element_type(_replace_zero(ans), _dtype_of(x)))
        return real(mul(g, scale))
    return select_n(ge(x, _const(x, 0)), neg(g), g)


def _integer_pow_jvp(g: Any, x: Any, *, y: int) -> Any:
    if y == 0:
        return _zero_tangent(get_aval(x))
    if y == 1:
        return g
    return mul(g, mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


def _hide_default_accuracy(params: dict[str, Any]) -> dict[str, Any]:
    # JAX prints `accuracy` only when one was asked for.
    return dict(sorted((k, v) for k, v in params.items() if k != "accuracy" or v is not None))


def _unop(
    name: str,
    accepted: tuple,
    op: Callable,
    out_dtype: Callable = _same_dtype,
    *,
    dx: Callable | None = None,
    dx_ans: Callable | None = None,
    accuracy: bool = False,
    **rules: Any,
) -> Primitive:
    """An elementwise unary primitive; its jvp is `dx(g, x, **params)` (the tangent
    term), `dx_ans(g, ans, x, **params)` (a term that also uses the result), or a rule.
    With `accuracy`, it has an `accuracy` param, printed only when one is given."""
    # Their params (accuracy, rounding_method, y) do not depend on the shape.
    rule = _unop_rule(name, accepted, out_dtype)
    if accuracy:
        rules["print_params"] = _hide_default_accuracy
    if dx is not None:
        rules["jvp_terms"] = (dx,)
    if dx_ans is not None:
        rules["jvp_ans_terms"] = (dx_ans,)
    return standard_primitive(name, rule, _nary_lowering(op), batching="vectorized", **rules)


neg_p = _unop("neg", sr.NUM, hlo.negate, linear_transpose=lambda ct, x: [neg(ct)])
floor_p = _unop("floor", sr.FLOAT, hlo.floor, jvp="zero")
ceil_p = _unop("ceil", sr.FLOAT, hlo.ceil, jvp="zero")
is_finite_p = _unop("is_finite", sr.FLOAT, hlo.is_finite, _bool_dtype, jvp="zero")
abs_p = _unop("abs", sr.SIGNED_NUM, hlo.abs, _real_dtype, dx_ans=_abs_jvp)
exp_p = _unop(
    "exp",
    sr.INEXACT,
    hlo.exponential,
    dx_ans=lambda g, ans, x, accuracy: mul(g, ans),
    accuracy=True,
)
log_p = _unop("log", sr.INEXACT, hlo.log, dx=lambda g, x, accuracy: div(g, x), accuracy=True)
log1p_p = _unop(
    "log1p",
    sr.INEXACT,
    hlo.log_plus_one,
    dx=lambda g, x, accuracy: div(g, add(x, _const(x, 1))),
    accuracy=True,
)
expm1_p = _unop(
    "expm1",
    sr.INEXACT,
    hlo.exponential_minus_one,
    dx_ans=lambda g, ans, x, accuracy: mul(g, add(ans, 1)),
    accuracy=True,
)
sin_p = _unop(
    "sin", sr.INEXACT, hlo.sine, dx=lambda g, x, accuracy: mul(g, cos(x, accuracy)), accuracy=True
)
cos_p = _unop(
    "cos",
    sr.INEXACT,
    hlo.cosine,
    dx=lambda g, x, accuracy: neg(mul(g, sin(x, accuracy))),
    accuracy=True,
)
tan_p = _unop(
    "tan",
    sr.INEXACT,
    hlo.tan,
    dx_ans=lambda g, ans, x, accuracy: mul(g, add(1, square(ans))),
    accuracy=True,
)
tanh_p = _unop(
    "tanh",
    sr.INEXACT,
    hlo.tanh,
    dx_ans=lambda g, ans, x, accuracy: mul(g, sub(1, square(ans))),
    accuracy=True,
)
logistic_p = _unop(
    "logistic",
    sr.INEXACT,
    hlo.logistic,
    dx_ans=lambda g, ans, x, accuracy: mul(g, mul(ans, sub(1, ans))),
    accuracy=True,
)
sqrt_p = _unop(
    "sqrt",
    sr.INEXACT,
    hlo.sqrt,
    dx_ans=lambda g, ans, x, accuracy: div(g, mul(2, ans)),
    accuracy=True,
)
rsqrt_p = _unop(
    "rsqrt",
    sr.INEXACT,
    hlo.rsqrt,
    dx_ans=lambda g, ans, x, accuracy: mul(g, mul(-0.5, div(ans, x))),
    accuracy=True,
)
cbrt_p = _unop(
    "cbrt",
    sr.FLOAT,
    hlo.cbrt,
    dx_ans=lambda g, ans, x, accuracy: div(g, mul(3, square(ans))),
    accuracy=True,
)
asin_p = _unop(
    "asin", sr.INEXACT, chlo.asin, dx=lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x))))
)
acos_p = _unop(
    "acos",
    sr.INEXACT,
    chlo.acos,
    dx=lambda g, x: neg(mul(g, rsqrt(sub(_const(x, 1), square(x))))),
)
atan_p = _unop("atan", sr.INEXACT, chlo.atan, dx=lambda g, x: div(g, add(_const(x, 1), square(x))))
sinh_p = _unop("sinh", sr.INEXACT, chlo.sinh, dx=lambda g, x: mul(g, cosh(x)))
cosh_p = _unop("cosh", sr.INEXACT, chlo.cosh, dx=lambda g, x: mul(g, sinh(x)))
asinh_p = _unop(
    "asinh",
    sr.INEXACT,
    chlo.asinh,
    dx=lambda g, x: mul(g, rsqrt(add(square(x), _const(x, 1)))),
)
# 1/(sqrt(x - 1) sqrt(x + 1)) rather than rsqrt(x**2 - 1): the same for real x > 1,
# and the right branch for complex x.
acosh_p = _unop(
    "acosh",
    sr.INEXACT,
    chlo.acosh,
    dx=lambda g, x: div(g, mul(sqrt(sub(x, _const(x, 1))), sqrt(add(x, _const(x, 1))))),
)
atanh_p = _unop(
    "atanh",
    sr.INEXACT,
    chlo.atanh,
    dx=lambda g, x: div(g, mul(sub(_const(x, 1), x), add(_const(x, 1), x))),
)
erf_p = _unop(
    "erf",
    sr.FLOAT,
    chlo.erf,
    dx=lambda g, x: mul(g, mul(_TWO_OVER_SQRT_PI, exp(neg(square(x))))),
)
erfc_p = _unop(
    "erfc",
    sr.FLOAT,
    chlo.erfc,
    dx=lambda g, x: mul(g, mul(-_TWO_OVER_SQRT_PI, exp(neg(square(x))))),
)
erf_inv_p = _unop(
    "erf_inv",
    sr.FLOAT,
    chlo.erf_inv,
    dx_ans=lambda g, ans, x: mul(g, mul(_SQRT_PI_OVER_TWO, exp(square(ans)))),
)
lgamma_p = _unop("lgamma", sr.FLOAT, chlo.lgamma, dx=lambda g, x: mul(g, digamma(x)))
digamma_p = _unop(
    "digamma",
    sr.FLOAT,
    chlo.digamma,
    dx=lambda g, x: mul(g, polygamma(_const(x, 1), x)),
)
not_p = _unop("not", sr.BOOL_OR_INT, hlo.not_, jvp="zero")
square_p = _unop(
    "square",
    sr.NUM,
    lambda x: hlo.multiply(x, x),
    dx=lambda g, x: mul(g, mul(_const(x, 2), x)),
)


def _exp2_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, *, accuracy: Any) -> list:
    # 2**x = exp(x * ln 2): XLA has no base-2 exponential.
    ln2 = mlir.full_like_aval(ctx, np.log(2), ctx.avals_in[0])
    return [_set_accuracy(hlo.exponential(hlo.multiply(ln2, x)), accuracy)]


exp2_p = standard_primitive(
    "exp2",
    _unop_rule("exp2", sr.INEXACT),
    _exp2_lowering,
    print_params=_hide_default_accuracy,
    jvp_ans_terms=(lambda g, ans, x, accuracy: mul(g, mul(ans, _LN2)),),
    batching="vectorized",
)


def _sign_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value) -> list:
    (aval,) = ctx.avals_in
    if dtypes.issubdtype(aval.dtype, np.unsignedinteger):
        # stablehlo.sign has no unsigned variant: sign(x) is (x != 0).
        zero = mlir.full_like_aval(ctx, 0, aval)
        one = mlir.full_like_aval(ctx, 1, aval)
        return [hlo.select(mlir.compare_hlo(x, zero, "EQ", "UNSIGNED"), zero, one)]
    return [hlo.sign(x)]


sign_p = standard_primitive(
    "sign", _unop_rule("sign", sr.NUM), _sign_lowering, jvp="zero", batching="vectorized"
)


def _round_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, *, rounding_method) -> list:
    if rounding_method == RoundingMethod.AWAY_FROM_ZERO:
        return [hlo.round_nearest_afz(x)]
    return [hlo.round_nearest_even(x)]


round_p = standard_primitive(
    "round", _unop_rule("round", sr.FLOAT), _round_lowering, jvp="zero", batching="vectorized"
)


def _integer_pow_rule(x: ShapedArray, *, y: int) -> ShapedArray:
    sr.check_dtypes("integer_pow", (x,), (sr.NUM,))
    if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x}, {y})")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _integer_pow_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, *, y: int) -> list:
    (aval,) = ctx.avals_in
    if y == 0:
        return [mlir.full_like_aval(ctx, 1, aval)]
    # Square-and-multiply over the bits of |y|: about 2*log2|y| multiplications.
    n, acc, power = builtins.abs(y), None, x
    while True:
        if n & 1:
            acc = power if acc is None else hlo.multiply(acc, power)
        n >>= 1
        if not n:
            break
        power = hlo.multiply(power, power)
    if y < 0:
        acc = hlo.divide(mlir.full_like_aval(ctx, 1, aval), acc)
    return [acc]


integer_pow_p = standard_primitive(
    "integer_pow",
    _integer_pow_rule,
    _integer_pow_lowering,
    jvp_terms=(_integer_pow_jvp,),
    batching="vectorized",
)


# ---------------------------------------------------------------------------
# Binary arithmetic


# Autodiff of the binary arithmetic, declared with each primitive below. add and sub
# are linear; mul is linear in each operand and div in its numerator, which is what
# their transposes handle.


def _add_sub_jvp(primals: list, tangents: list, *, subtract: bool) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    prim = sub_p if subtract else add_p
    ans = prim.bind(x, y)
    if not _is_inexact(_dtype_of(ans)) or (type(tx) is ad.Zero and type(ty) is ad.Zero):
        return ans, ad.Zero.from_primal_value(ans)
    shape = _shape_of(ans)
    if type(ty) is ad.Zero:
        return ans, _bcast_to(tx, shape)
    if type(tx) is ad.Zero:
        ty = _bcast_to(ty, shape)
        return ans, (neg(ty) if subtract else ty)
    return ans, prim.bind(tx, ty)


def _add_transpose(ct: Any, x: Any, y: Any) -> list:
    return _linear_cts(ct, (x, y), lambda ct, i: _unbroadcast((x, y)[i].aval, ct))


def _sub_transpose(ct: Any, x: Any, y: Any) -> list:
    return _linear_cts(ct, (x, y), lambda ct, i: _unbroadcast((x, y)[i].aval, neg(ct) if i else ct))


def _mul_transpose(ct: Any, x: Any, y: Any) -> list:
    if ad.is_undefined_primal(x) and ad.is_undefined_primal(y):
        raise ValueError("mul is not linear in both operands at once: cannot transpose it")
    return _linear_cts(ct, (x, y), lambda ct, i: _unbroadcast((x, y)[i].aval, mul(ct, (y, x)[i])))


def _div_transpose(ct: Any, x: Any, y: Any) -> list:
    if ad.is_undefined_primal(y):
        raise ValueError("div is linear only in its numerator: cannot transpose it in y")
    return _linear_cts(ct, (x, y), lambda ct, i: _unbroadcast(x.aval, div(ct, y)))


def _trunc(q: Any) -> Any:
    """`q` rounded toward zero."""
    return mul(sign(q), floor(abs(q)))


def _pow_jvp_x(g: Any, ans: Any, x: Any, y: Any) -> Any:
    # d(x**y)/dx = y * x**(y-1).
    jac = mul(_convert_element_type(y, _dtype_of(x)), pow(x, sub(y, _const(y, 1))))
    if dtypes.issubdtype(_dtype_of(y), np.integer):
        # An integer exponent stays integer in x**(y-1), which keeps negative bases
        # exact, and y == 0 gives 0 (not 0 * inf at x = 0). Only then: a float y must
        # keep its dependence on y for higher derivatives.
        jac = select_n(_bcast_to(eq(y, _const(y, 0)), _shape_of(ans)), jac, _zeros_like(jac))
    return mul(g, jac)


def _pow_jvp_y(g: Any, ans: Any, x: Any, y: Any) -> Any:
    # d(x**y)/dy = log(x) * x**y, taken as 0 at x = 0.
    return mul(g, mul(log(_replace_zero(x)), ans))


def _atan2_jvp(g: Any, x: Any, y: Any, *, wrt_x: bool) -> Any:
    # atan2(x, y) is the angle of (y, x): d = (y dx - x dy) / (x**2 + y**2).
    return mul(g, div(y if wrt_x else neg(x), add(square(x), square(y))))


def _balanced_eq(x: Any, z: Any, y: Any) -> Any:
    """1 where x == z != y, 1/2 where x == z == y, 0 elsewhere (in z's dtype).

    The derivative of max/min goes to the operand that won; on a tie it is split
    evenly between both, as in JAX.
    """
    dtype = _dtype_of(z)
    x_won = _convert_element_type(eq(x, z), dtype)
    tie = _convert_element_type(eq(y, z), dtype)
    return mul(x_won, sub(1, mul(0.5, tie)))


def _binop(
    name: str, accepted: tuple, op: Callable, out_dtype: Callable = _same_dtype, **rules: Any
) -> Primitive:
    rule = _naryop_rule(name, (accepted, accepted), out_dtype)
    return standard_primitive(name, rule, _nary_lowering(op), batching="broadcasting", **rules)


add_p = _binop(
    "add",
    sr.NUM,
    hlo.add,
    jvp=functools.partial(_add_sub_jvp, subtract=False),
    transpose=_add_transpose,
)
sub_p = _binop(
    "sub",
    sr.NUM,
    hlo.subtract,
    jvp=functools.partial(_add_sub_jvp, subtract=True),
    transpose=_sub_transpose,
)
mul_p = _binop(
    "mul",
    sr.NUM,
    hlo.multiply,
    jvp_terms=(lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g)),
    transpose=_mul_transpose,
)
# Integer division truncates toward zero and the remainder takes the dividend's sign
# (C semantics, not Python's floor division): that is what XLA's divide/remainder do.
div_p = _binop(
    "div",
    sr.NUM,
    hlo.divide,
    jvp_terms=(lambda g, x, y: div(g, y), lambda g, x, y: div(mul(neg(g), x), square(y))),
    transpose=_div_transpose,
)
# rem(x, y) = x - y * trunc(x / y), and trunc is locally constant.
rem_p = _binop(
    "rem",
    sr.INT + sr.FLOAT,
    hlo.remainder,
    jvp_ans_terms=(
        lambda g, ans, x, y: _bcast_to(g, _shape_of(ans)),
        lambda g, ans, x, y: mul(neg(g), _trunc(div(x, y))),
    ),
)
atan2_p = _binop(
    "atan2",
    sr.INEXACT,
    hlo.atan2,
    jvp_terms=(
        functools.partial(_atan2_jvp, wrt_x=True),
        functools.partial(_atan2_jvp, wrt_x=False),
    ),
)
# polygamma(m, x): the m-th derivative of digamma; m holds whole numbers of x's dtype.
# No derivative in the order m (a whole number): like JAX, its tangent is ignored.
polygamma_p = _binop(
    "polygamma",
    sr.FLOAT,
    chlo.polygamma,
    jvp_terms=(None, lambda g, m, x: mul(g, polygamma(add(m, _const(m, 1)), x))),
)
and_p = _binop("and", sr.BOOL_OR_INT, hlo.and_, jvp="zero")
or_p = _binop("or", sr.BOOL_OR_INT, hlo.or_, jvp="zero")
xor_p = _binop("xor", sr.BOOL_OR_INT, hlo.xor, jvp="zero")
# Shift amounts outside [0, bits) follow XLA: left and logical right shifts give 0,
# arithmetic right shifts fill with the sign bit.
shift_left_p = _binop("shift_left", sr.INT, hlo.shift_left, jvp="zero")
shift_right_logical_p = _binop("shift_right_logical", sr.INT, hlo.shift_right_logical, jvp="zero")
shift_right_arithmetic_p = _binop(
    "shift_right_arithmetic", sr.INT, hlo.shift_right_arithmetic, jvp="zero"
)


def min_max_hlo(kind: str, x: ir.Value, y: ir.Value, dtype: Any) -> ir.Value:
    """The max (`kind="max"`) or min of same-shaped `x` and `y` of `dtype`, as HLO.

    Bools and numbers use `stablehlo.maximum/minimum` (a NaN operand gives NaN).
    Complex numbers are ordered lexicographically, by real part then imaginary
    part, as in NumPy: XLA's own order for complex operands differs (its
    `reduce` with a complex `maximum` region keeps the wrong element on ties of
    the real parts), so the choice is spelled out with compares and a select.
    Reductions, windows and scatters build their regions from this too.
    """
    if not dtypes.issubdtype(dtype, np.complexfloating):
        return (hlo.maximum if kind == "max" else hlo.minimum)(x, y)
    direction = "GT" if kind == "max" else "LT"
    rx, ry, ix, iy = hlo.real(x), hlo.real(y), hlo.imag(x), hlo.imag(y)
    real_wins = mlir.compare_hlo(rx, ry, direction, "FLOAT")
    real_ties = mlir.compare_hlo(rx, ry, "EQ", "FLOAT")
    imag_wins = mlir.compare_hlo(ix, iy, direction, "FLOAT")
    pick_x = hlo.select(real_ties, imag_wins, real_wins)
    return hlo.select(pick_x, x, y)


def _min_max_lowering(kind: str) -> Callable:
    def rule(ctx: mlir.LoweringRuleContext, x: ir.Value, y: ir.Value) -> list:
        x, y = _broadcast_operands(ctx, (x, y))
        return [min_max_hlo(kind, x, y, ctx.avals_in[0].dtype)]

    return rule


# The derivative goes to the operand that won (split evenly on a tie).
_MIN_MAX_JVP_TERMS = (
    lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
    lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)),
)
max_p = standard_primitive(
    "max",
    _naryop_rule("max", (sr.ANY, sr.ANY)),
    _min_max_lowering("max"),
    jvp_ans_terms=_MIN_MAX_JVP_TERMS,
    batching="broadcasting",
)
min_p = standard_primitive(
    "min",
    _naryop_rule("min", (sr.ANY, sr.ANY)),
    _min_max_lowering("min"),
    jvp_ans_terms=_MIN_MAX_JVP_TERMS,
    batching="broadcasting",
)


def _pow_rule(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    sr.check_dtypes("pow", (x, y), (sr.INEXACT, sr.NUM), require_same=False)
    if x.dtype != y.dtype and not dtypes.issubdtype(y.dtype, np.integer):
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), and "
            "the second argument must have an inexact or integer dtype, and two inexact "
            f"dtypes must match, but got {sr.dtype_name(x.dtype)} and {sr.dtype_name(y.dtype)}."
        )
    shape = sr.broadcasting_shape("pow", x.shape, y.shape)
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _pow_lowering(ctx: mlir.LoweringRuleContext, x: ir.Value, y: ir.Value) -> list:
    x_aval, y_aval = ctx.avals_in
    x, y = _broadcast_operands(ctx, (x, y))
    if y_aval.dtype != x_aval.dtype:
        # An integer exponent: XLA's power wants both operands of one type.
        out_shape = ctx.avals_out[0].shape
        y = mlir.convert_hlo(
            ctx,
            y,
            y_aval.update(shape=out_shape),
            y_aval.update(shape=out_shape, dtype=x_aval.dtype),
        )
    return [hlo.power(x, y)]


pow_p = standard_primitive(
    "pow",
    _pow_rule,
    _pow_lowering,
    jvp_ans_terms=(_pow_jvp_x, _pow_jvp_y),
    batching="broadcasting",
)


# ---------------------------------------------------------------------------
# Comparisons


def _cmp(name: str, accepted: tuple, direction: str) -> Primitive:
    rule = _naryop_rule(name, (accepted, accepted), _bool_dtype)
    # Bool results: zero (float0) tangents.
    return standard_primitive(
        name, rule, _compare_lowering(direction), jvp="zero", batching="broadcasting"
    )


eq_p = _cmp("eq", sr.ANY, "EQ")
ne_p = _cmp("ne", sr.ANY, "NE")
lt_p = _cmp("lt", sr.ORDERED, "LT")
le_p = _cmp("le", sr.ORDERED, "LE")
gt_p = _cmp("gt", sr.ORDERED, "GT")
ge_p = _cmp("ge", sr.ORDERED, "GE")
# The comparisons JAX's shape-polymorphism checks bind on dimension values: the same
# operations, kept apart from the program's own comparisons (no public function).
eq_to_p = _cmp("eq_to", sr.ANY, "EQ")
le_to_p = _cmp("le_to", sr.ORDERED, "LE")
lt_to_p = _cmp("lt_to", sr.ORDERED, "LT")


# ---------------------------------------------------------------------------
# select_n and clamp


def _shape_list(avals: Sequence[ShapedArray]) -> str:
    return ", ".join(str(tuple(a.shape)) for a in avals)


def _select_n_rule(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if not cases:
        raise TypeError("select_n must have at least one case")
    first = cases[0]
    if any(not sd.definitely_equal_shape(c.shape, first.shape) for c in cases[1:]):
        raise TypeError(f"select cases must have the same shapes, got [{_shape_list(cases)}].")
    if which.shape and not sd.definitely_equal_shape(which.shape, first.shape):
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got `which` "
            f"shape {tuple(which.shape)} but case shape {tuple(first.shape)}."
        )
    sr.check_same_dtypes("select_n", cases)
    if not sr.accepts(which.dtype, sr.BOOL_OR_INT):
        raise TypeError(
            f"select `which` must be boolean or integer type, got {sr.dtype_name(which.dtype)}."
        )
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


def _select_n_lowering(ctx: mlir.LoweringRuleContext, which: ir.Value, *cases: ir.Value) -> list:
    which_aval = ctx.avals_in[0]
    if len(cases) == 1:
        return [cases[0]]
    if which_aval.dtype == np.bool_:
        return [hlo.select(which, cases[1], cases[0])]
    kind = _comparison_type(which_aval.dtype)

    # A balanced tree of selects: cases [lo, hi) split at mid by `which < mid`.
    def tree(lo: int, hi: int) -> ir.Value:
        if hi - lo == 1:
            return cases[lo]
        mid = (lo + hi) // 2
        below = mlir.compare_hlo(which, mlir.full_like_aval(ctx, mid, which_aval), "LT", kind)
        return hlo.select(below, tree(lo, mid), tree(mid, hi))

    return [tree(0, len(cases))]


# Autodiff of select_n: the tangent (cotangent) of the output is selected from (routed
# back to) the cases' tangents by the same `which`; `which` itself is an integer or
# bool, so it is never linear.


def _select_n_jvp(primals: list, tangents: list) -> tuple:
    which, *cases = primals
    case_tangents = tangents[1:]
    ans = select_n_p.bind(which, *cases)
    if not _is_inexact(_dtype_of(ans)) or all(type(t) is ad.Zero for t in case_tangents):
        return ans, ad.Zero.from_primal_value(ans)
    return ans, select_n_p.bind(which, *map(ad.instantiate_zeros, case_tangents))


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list:
    if ad.is_undefined_primal(which):
        raise ValueError("select_n is not linear in its predicate `which`")

    def case_ct(ct: Any, i: int) -> Any:
        zeros = _zeros_like(ct)
        return select_n_p.bind(which, *(ct if j == i else zeros for j in range(len(cases))))

    return [None, *_linear_cts(ct, cases, lambda ct, i: case_ct(ct, i))]


def _select_n_batch(args: Sequence[Any], dims: Sequence[Any]) -> tuple:
    which, *cases = args
    which_dim, *case_dims = dims
    size = next(_shape_of(x)[d] for x, d in zip(args, dims) if d is not None)
    which_ndim, case_ndim = len(_shape_of(which)), len(_shape_of(cases[0]))
    d0 = dims[0]
    if d0 is not None and all(d == d0 for d in dims) and which_ndim == case_ndim:
        return select_n_p.bind(which, *cases), d0  # all batched alike: nothing to move
    cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, case_dims)]
    shape = _shape_of(cases[0])
    if which_dim is None:
        if which_ndim:  # one `which` of the examples' shape, for every example
            which = batching.broadcast(which, size, 0)
    else:
        which = batching.moveaxis(which, which_dim, 0)
        if which_ndim == 1 and len(shape) > 1:  # one `which` per example
            which = sr.ops.broadcast_in_dim(which, shape, (0,))
    return select_n_p.bind(which, *cases), 0


select_n_p = standard_primitive(
    "select_n",
    _select_n_rule,
    _select_n_lowering,
    jvp=_select_n_jvp,
    transpose=_select_n_transpose,
    batching=_select_n_batch,
)


def _clamp_rule(min: ShapedArray, operand: ShapedArray, max: ShapedArray) -> ShapedArray:
    sr.check_dtypes("clamp", (min, operand, max), (sr.ANY, sr.ANY, sr.ANY))
    for what, bound in (("min", min), ("max", max)):
        if bound.shape and not sd.definitely_equal_shape(bound.shape, operand.shape):
            raise TypeError(
                f"clamp requires {what}.shape == operand.shape or {what}.shape == (), "
                f"got {tuple(bound.shape)}."
            )
    weak = min.weak_type and operand.weak_type and max.weak_type
    return ShapedArray(operand.shape, operand.dtype, weak)


def _clamp_lowering(ctx: mlir.LoweringRuleContext, lo: ir.Value, x: ir.Value, hi: ir.Value):
    # stablehlo.clamp takes rank-0 bounds as they are.
    return [hlo.clamp(lo, x, hi)]


# Autodiff of clamp (as JAX): the operand's derivative passes where it is strictly
# inside the bounds; a bound's where the result is that bound.


def _clamp_jvp_min(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    g = _bcast_to(g, _shape_of(x))
    return select_n(bitwise_and(gt(lo, x), lt(lo, hi)), _zeros_like(g), g)


def _clamp_jvp_operand(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    return select_n(bitwise_and(gt(x, lo), lt(x, hi)), _zeros_like(g), g)


def _clamp_jvp_max(g: Any, lo: Any, x: Any, hi: Any) -> Any:
    g = _bcast_to(g, _shape_of(x))
    return select_n(lt(hi, x), _zeros_like(g), g)


def _clamp_batch(args: Sequence[Any], dims: Sequence[Any]) -> tuple:
    (lo, x, hi), (lo_dim, x_dim, hi_dim) = args, dims
    if lo_dim is None and hi_dim is None and not _shape_of(lo) and not _shape_of(hi):
        return clamp_p.bind(lo, x, hi), x_dim  # scalar bounds fit any batched operand
    size = next(_shape_of(v)[d] for v, d in zip(args, dims) if d is not None)
    x = batching.bdim_at_front(x, x_dim, size)
    shape = _shape_of(x)

    def bound(b: Any, dim: Any) -> Any:
        # A bound is rank-0 or of the operand's shape: give it the batched operand's.
        broadcast_in_dim = sr.ops.broadcast_in_dim
        if dim is None:
            if not _shape_of(b):
                return b
            return broadcast_in_dim(b, shape, tuple(range(1, len(shape))))
        b = batching.moveaxis(b, dim, 0)
        if len(_shape_of(b)) != len(shape):  # a scalar bound per example
            b = broadcast_in_dim(b, shape, (0,))
        return b

    return clamp_p.bind(bound(lo, lo_dim), x, bound(hi, hi_dim)), 0


clamp_p = standard_primitive(
    "clamp",
    _clamp_rule,
    _clamp_lowering,
    jvp_terms=(_clamp_jvp_min, _clamp_jvp_operand, _clamp_jvp_max),
    batching=_clamp_batch,
)


# ---------------------------------------------------------------------------
# convert_element_type


def _convert_element_type_rule(
    operand: ShapedArray, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> ShapedArray:
    old = operand.dtype
    if (isinstance(old, dtypes.ExtendedDType) or isinstance(new_dtype, dtypes.ExtendedDType)) and (
        old != new_dtype
    ):
        raise TypeError(f"Cannot convert_element_type from {old} to {new_dtype}")
    return ShapedArray(operand.shape, new_dtype, weak_type)


def _convert_element_type_lowering(
    ctx: mlir.LoweringRuleContext, x: ir.Value, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> list:
    (aval_in,), (aval_out,) = ctx.avals_in, ctx.avals_out
    return [mlir.convert_hlo(ctx, x, aval_in, aval_out)]


# Autodiff and vmap of convert_element_type. It is linear between inexact dtypes
# (complex to real keeps the real part, for tangents too); an integer or bool result
# has a float0 tangent, and an integer operand's tangent is zero anyway.


def _convert_element_type_jvp(
    primals: list, tangents: list, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> tuple:
    (x,), (t,) = primals, tangents
    params = dict(new_dtype=new_dtype, weak_type=weak_type, sharding=sharding)
    ans = convert_element_type_p.bind(x, **params)
    if type(t) is ad.Zero or not (_is_inexact(new_dtype) and _is_inexact(_dtype_of(x))):
        return ans, ad.Zero.from_primal_value(ans)
    return ans, convert_element_type_p.bind(t, **params)


def _convert_element_type_transpose(
    ct: Any, operand: Any, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> list:
    aval = operand.aval
    if type(ct) is ad.Zero or not _is_inexact(aval.dtype):
        return [_zero_tangent(aval)]
    return [
        convert_element_type_p.bind(
            ct, new_dtype=aval.dtype, weak_type=aval.weak_type, sharding=None
        )
    ]


def _convert_element_type_batch(
    args: Sequence[Any], dims: Sequence[Any], *, new_dtype: Any, weak_type: bool, sharding: Any
) -> tuple:
    if sharding is not None:
        raise NotImplementedError("vmap of convert_element_type with a sharding")
    (x,), (d,) = args, dims
    params = dict(new_dtype=new_dtype, weak_type=weak_type, sharding=None)
    return convert_element_type_p.bind(x, **params), d


def _is_host_value(x: Any) -> bool:
    return type(x) in _HOST_SCALAR_TYPES or isinstance(x, np.ndarray | np.generic)


_HOST_SCALAR_TYPES = frozenset({bool, int, float, complex})


def _host_convert(x: Any, new_dtype: np.dtype) -> np.ndarray:
    """`convert_element_type` on the host, with XLA's semantics where NumPy's differ."""
    x = np.asarray(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating) and not dtypes.issubdtype(
        new_dtype, np.complexfloating
    ):
        x = x.real
    if dtypes.issubdtype(x.dtype, np.floating) and dtypes.issubdtype(new_dtype, np.integer):
        # XLA saturates out-of-range values and maps NaN to 0; NumPy leaves them undefined.
        info = dtypes.iinfo(new_dtype)
        wide = x.astype(np.float64)
        wide = np.where(np.isnan(wide), 0.0, np.clip(wide, float(info.min), float(info.max)))
        with np.errstate(invalid="ignore"):
            out = np.where(wide >= float(info.max), info.max, wide.astype(new_dtype))
        return np.asarray(out, new_dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return x.astype(new_dtype)


def _convert_element_type_impl(
    operand: Any, *, new_dtype: Any, weak_type: bool, sharding: Any
) -> array.Array:
    # A host value is converted on the host and transferred once: compiling and running
    # a conversion would cost a transfer there and, for the next op, often one back.
    if sharding is None and _is_host_value(operand) and isinstance(new_dtype, np.dtype):
        value = _host_convert(operand, new_dtype)
        aval = ShapedArray(value.shape, new_dtype, weak_type)
        return array.put_value(
            value, aval, array.default_sharding(), committed=False, may_alias=True
        )
    return dispatch.apply_primitive(
        convert_element_type_p, operand, new_dtype=new_dtype, sharding=sharding, weak_type=weak_type
    )


def _convert_element_type_print_params(params: dict) -> dict:
    # JAX prints the sharding param only when there is one.
    return dict(sorted((k, v) for k, v in params.items() if k != "sharding" or v is not None))


convert_element_type_p = standard_primitive(
    "convert_element_type",
    _convert_element_type_rule,
    _convert_element_type_lowering,
    impl=_convert_element_type_impl,
    print_params=_convert_element_type_print_params,
    jvp=_convert_element_type_jvp,
    transpose=_convert_element_type_transpose,
    batching=_convert_element_type_batch,
)


def _convert_element_type(
    operand: ArrayLike,
    new_dtype: DTypeLike | None = None,
    weak_type: bool = False,
    sharding: Any = None,
) -> Any:
    """`convert_element_type` with control of the result's weak type (used by jnp).

    Args:
      operand: an array, tracer or scalar.
      new_dtype: the target dtype (canonicalized); None keeps the operand's dtype.
      weak_type: whether the result is weakly typed.
      sharding: the result's sharding (None: the operand's).

    Returns:
      The converted value. An array or tracer that already has the requested type is
      returned as it is. Under a trace, a host scalar is converted on the host and
      becomes a literal, without an equation (as JAX's constant folding does).
    """
    new_dtype = _canonical_dtype(new_dtype)
    weak_type = bool(weak_type)
    if isinstance(operand, array.Array | Tracer):
        # The common case, kept cheap: nothing to do when the type is already right.
        old_dtype = operand.dtype
        if sharding is None and old_dtype == new_dtype and operand.weak_type == weak_type:
            return operand
        host = False
    else:
        if not _is_host_value(operand) and hasattr(operand, "__jax_array__"):
            operand = operand.__jax_array__()
            return _convert_element_type(operand, new_dtype, weak_type, sharding)
        old_dtype = dtypes.dtype(operand)
        host = _is_host_value(operand)
    if new_dtype is None:
        new_dtype = dtypes.canonicalize_dtype(old_dtype, allow_extended_dtype=True)
    concrete = isinstance(new_dtype, np.dtype)
    if concrete and getattr(old_dtype, "kind", "") == "c" and new_dtype.kind != "c":
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
    if host and concrete and sharding is None:
        if type(operand) is int:
            # A Python int may not fit the default integer type but still fit the
            # target (2**40 as float32): convert it on the host first.
            operand = _host_convert(np.asarray(operand), new_dtype)
        if np.ndim(operand) == 0 and not isinstance(current_trace(), EvalTrace):
            value = _host_convert(operand, new_dtype)
            return value.view(sr.WeakScalar) if weak_type else value
    return convert_element_type_p.bind(
        operand, new_dtype=new_dtype, sharding=sharding, weak_type=weak_type
    )


def _canonical_dtype(dtype: DTypeLike | None) -> Any:
    if dtype is None or (isinstance(dtype, np.dtype) and dtype in _CANONICAL):
        return dtype
    return dtypes.canonicalize_dtype(dtype, allow_extended_dtype=True)


# dtypes that canonicalization leaves alone whatever jax_enable_x64 says.
_CANONICAL = frozenset(
    np.dtype(t)
    for t in (np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)
    + (np.float16, np.float32, np.complex64, dtypes.bfloat16)
)


def convert_element_type(operand: ArrayLike, new_dtype: DTypeLike) -> Any:
    """Elementwise cast of `operand` to `new_dtype` (`stablehlo.convert`).

    Casting to bool tests for nonzero; complex to real keeps the real part (with a
    warning); float to integer rounds toward zero and saturates at the integer range.

    Args:
      operand: an array or scalar.
      new_dtype: the target dtype. 64-bit dtypes become 32-bit unless x64 is enabled.

    Returns:
      An array of `operand`'s shape and `new_dtype`; `operand` itself if it is an
      array of that dtype already.
    """
    return _convert_element_type(operand, new_dtype, weak_type=False)


# ---------------------------------------------------------------------------
# Public functions


# Symbolic dimensions count as Python ints (`match_python_scalars` makes them values).
_WEAK_SCALARS = (int, float, complex, sd.DimExpr)


def _binary(prim: Primitive, x: ArrayLike, y: ArrayLike) -> Any:
    if type(x) in _WEAK_SCALARS or type(y) in _WEAK_SCALARS:
        x, y = sr.match_python_scalars((x, y))
    return prim.bind(x, y)


def add(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise addition `x + y` (`stablehlo.add`).

    Args:
      x, y: arrays of one numeric dtype; of one rank unless one is a scalar, with
        dimensions equal or 1. Python scalars take the other operand's dtype.
    """
    return _binary(add_p, x, y)


def sub(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise subtraction `x - y` (`stablehlo.subtract`). Operands as for `add`."""
    return _binary(sub_p, x, y)


def mul(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise multiplication `x * y` (`stablehlo.multiply`). Operands as for `add`."""
    return _binary(mul_p, x, y)


def div(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise division `x / y` (`stablehlo.divide`).

    Integer division rounds toward zero (like C, unlike Python's `//`).
    """
    return _binary(div_p, x, y)


def rem(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise remainder of `x / y` with the sign of `x` (C's `fmod`, `stablehlo.remainder`)."""
    return _binary(rem_p, x, y)


def pow(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise power `x ** y` (`stablehlo.power`).

    Args:
      x: a floating or complex array.
      y: an array of `x`'s dtype, or an integer array (exponents need not match then).
    """
    if type(y) is int:  # an integer exponent stays integer: pow accepts it as such
        if type(x) in _WEAK_SCALARS:
            x = sr.match_python_scalars((x, y))[0]
        return pow_p.bind(x, y)
    return _binary(pow_p, x, y)


def integer_pow(x: ArrayLike, y: int) -> Any:
    """Elementwise power `x ** y` for a static integer `y`, by repeated multiplication.

    Args:
      x: a numeric array.
      y: a Python int; negative only for inexact `x`.
    """
    return integer_pow_p.bind(x, y=operator.index(y))


def reciprocal(x: ArrayLike) -> Any:
    """Elementwise reciprocal `1 / x`."""
    return integer_pow(x, -1)


def square(x: ArrayLike) -> Any:
    """Elementwise square `x * x`."""
    return square_p.bind(x)


def neg(x: ArrayLike) -> Any:
    """Elementwise negation `-x` (`stablehlo.negate`)."""
    return neg_p.bind(x)


def sign(x: ArrayLike) -> Any:
    """Elementwise sign: -1, 0 or 1 (for floats also -0.0, 0.0 and NaN as they are)."""
    return sign_p.bind(x)


def floor(x: ArrayLike) -> Any:
    """Elementwise floor of a floating array."""
    return floor_p.bind(x)


def ceil(x: ArrayLike) -> Any:
    """Elementwise ceiling of a floating array."""
    return ceil_p.bind(x)


def round(x: ArrayLike, rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding to the nearest integer.

    Args:
      x: a floating array.
      rounding_method: how ties round: `RoundingMethod.AWAY_FROM_ZERO` (the default)
        or `RoundingMethod.TO_NEAREST_EVEN` (as `numpy.round`).
    """
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def is_finite(x: ArrayLike) -> Any:
    """Elementwise test for finiteness (not infinite, not NaN) of a floating array."""
    return is_finite_p.bind(x)


def abs(x: ArrayLike) -> Any:
    """Elementwise absolute value; of a complex array, the (real) modulus."""
    return abs_p.bind(x)


def max(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise maximum. A NaN operand gives NaN; complex numbers compare lexicographically."""
    return _binary(max_p, x, y)


def min(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise minimum. A NaN operand gives NaN; complex numbers compare lexicographically."""
    return _binary(min_p, x, y)


def _accuracy_unop(prim: Primitive, doc: str) -> Callable:

    def fn(x: ArrayLike, accuracy: Tolerance | AccuracyMode | None = None) -> Any:
        return prim.bind(x, accuracy=accuracy)

    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"""Elementwise {doc}.

    Args:
      x: a floating or complex array.
      accuracy: None, or a `Tolerance` / `AccuracyMode` that lets XLA choose an
        implementation of that accuracy.
    """
    return fn


exp = _accuracy_unop(exp_p, "exponential `e ** x`")
exp2 = _accuracy_unop(exp2_p, "base-2 exponential `2 ** x`")
log = _accuracy_unop(log_p, "natural logarithm")
log1p = _accuracy_unop(log1p_p, "`log(1 + x)`, accurate for small `x`")
expm1 = _accuracy_unop(expm1_p, "`exp(x) - 1`, accurate for small `x`")
sin = _accuracy_unop(sin_p, "sine")
cos = _accuracy_unop(cos_p, "cosine")
tan = _accuracy_unop(tan_p, "tangent")
tanh = _accuracy_unop(tanh_p, "hyperbolic tangent")
logistic = _accuracy_unop(logistic_p, "logistic sigmoid `1 / (1 + exp(-x))`")
sqrt = _accuracy_unop(sqrt_p, "square root")
rsqrt = _accuracy_unop(rsqrt_p, "reciprocal square root `1 / sqrt(x)`")
cbrt = _accuracy_unop(cbrt_p, "cube root (of a floating array)")


def _plain_unop(prim: Primitive, doc: str) -> Callable:
    def fn(x: ArrayLike) -> Any:
        return prim.bind(x)

    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"Elementwise {doc}."
    return fn


asin = _plain_unop(asin_p, "arc sine")
acos = _plain_unop(acos_p, "arc cosine")
atan = _plain_unop(atan_p, "arc tangent")
sinh = _plain_unop(sinh_p, "hyperbolic sine")
cosh = _plain_unop(cosh_p, "hyperbolic cosine")
asinh = _plain_unop(asinh_p, "inverse hyperbolic sine")
acosh = _plain_unop(acosh_p, "inverse hyperbolic cosine")
atanh = _plain_unop(atanh_p, "inverse hyperbolic tangent")
erf = _plain_unop(erf_p, "error function (of a floating array)")
erfc = _plain_unop(erfc_p, "complementary error function `1 - erf(x)`")
erf_inv = _plain_unop(erf_inv_p, "inverse error function")
lgamma = _plain_unop(lgamma_p, "log of the absolute value of the gamma function")
digamma = _plain_unop(digamma_p, "digamma function, the derivative of `lgamma`")


def polygamma(m: ArrayLike, x: ArrayLike) -> Any:
    """Elementwise polygamma function: the `m`-th derivative of `digamma` at `x`."""
    return _binary(polygamma_p, m, x)


def atan2(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise arc tangent of `x / y`, using the signs of both for the quadrant."""
    return _binary(atan2_p, x, y)


def _comparison(prim: Primitive, doc: str) -> Callable:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        return _binary(prim, x, y)

    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"""Elementwise comparison `x {doc} y`, giving a bool array.

    Args:
      x, y: arrays of one dtype (Python scalars take the other operand's dtype).
    """
    return fn


eq = _comparison(eq_p, "==")
ne = _comparison(ne_p, "!=")
lt = _comparison(lt_p, "<")
le = _comparison(le_p, "<=")
gt = _comparison(gt_p, ">")
ge = _comparison(ge_p, ">=")


def bitwise_and(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise AND of bool or integer arrays (logical for bools, bitwise for integers)."""
    return _binary(and_p, x, y)


def bitwise_or(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise OR of bool or integer arrays."""
    return _binary(or_p, x, y)


def bitwise_xor(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise exclusive OR of bool or integer arrays."""
    return _binary(xor_p, x, y)


def bitwise_not(x: ArrayLike) -> Any:
    """Elementwise NOT of a bool or integer array."""
    return not_p.bind(x)


def shift_left(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise `x << y` of integer arrays; shifts of `bits` or more (or negative) give 0."""
    return _binary(shift_left_p, x, y)


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise logical right shift (zeros come in); out-of-range shifts give 0."""
    return _binary(shift_right_logical_p, x, y)


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Any:
    """Elementwise arithmetic right shift (the sign bit comes in); out-of-range shifts
    give 0 or -1 by the sign of `x`."""
    return _binary(shift_right_arithmetic_p, x, y)


def select_n(which: ArrayLike, *cases: ArrayLike) -> Any:
    """Picks each element from one of `cases`: `cases[which]`, elementwise.

    Args:
      which: a bool array (then at most two cases: False picks `cases[0]`) or an
        integer array with values in `[0, len(cases))`; a scalar or of the cases' shape.
      *cases: arrays of one shape and dtype.

    Returns:
      An array of the cases' shape and dtype.
    """
    if not cases:
        raise ValueError("select_n() must have at least one case")
    if any(type(c) in _WEAK_SCALARS for c in cases):
        cases = sr.match_python_scalars(cases)
    return select_n_p.bind(which, *cases)


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Any:
    """Elementwise `on_true if pred else on_false` for a bool `pred` (`select_n(pred, on_false,
    on_true)`)."""
    return select_n(pred, on_false, on_true)


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Any:
    """Elementwise `min(max(x, min), max)`.

    Args:
      min: the lower bound: a scalar or an array of `x`'s shape.
      x: the array to clamp.
      max: the upper bound: a scalar or an array of `x`'s shape.
    """
    if type(min) in _WEAK_SCALARS or type(max) in _WEAK_SCALARS or type(x) in _WEAK_SCALARS:
        x, min, max = sr.match_python_scalars((x, min, max))
    return clamp_p.bind(min, x, max)
