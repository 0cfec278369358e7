"""Activation functions of `polyjax.nn`: elementwise nonlinearities for neural networks.

Each takes an array (or scalar) and promotes it to an inexact dtype, as JAX's
do, so `relu6(jnp.arange(3))` is a float array; `relu` alone keeps integer
(and bool, made int32) inputs integer, as JAX's `maximum(x, 0)` does. Where the mathematical
derivative is undefined or numerically fragile, JAX fixes one with a custom
derivative and so do we: `relu`'s derivative at 0 is 0 (so a dead unit stays
dead, and `grad` agrees with the subgradient most code assumes), and `relu6`'s
is 0 at both kinks.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.typing import ArrayLike
from polyjax_interpreters.custom_derivatives import custom_jvp
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _shape_ops, _shape_rules
from polyjax_numpy.numpy import _selection, _ufuncs, _ufuncs_math
from polyjax_numpy.numpy import _util as _u


def _inexact(name: str, x: ArrayLike) -> Any:
    _u.check_arraylike(name, x)
    (x,) = _u.promote_dtypes_inexact(x)
    return x


def _const(value: float, x: Any) -> Any:
    # A weakly typed `x` (a Python scalar) keeps a weakly typed result, as JAX's.
    if dtypes.is_weakly_typed(x):
        return _shape_rules.weak_scalar(value, _u.dtype(x))
    return np.asarray(value, _u.dtype(x))[()]


def _select(pred: Any, on_true: Any, on_false: Any) -> Any:
    shape = _u.shape(pred)
    on_true = _shape_ops.broadcast_in_dim(on_true, shape, ()) if not _u.shape(on_true) else on_true
    on_false = (
        _shape_ops.broadcast_in_dim(on_false, shape, ()) if not _u.shape(on_false) else on_false
    )
    return lax.select_n(pred, on_false, on_true)


@custom_jvp
def relu(x: ArrayLike) -> Any:
    """Rectified linear unit, `max(x, 0)`, with derivative 0 at 0.

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.relu(np.array([-1.0, 0.0, 2.0]))
      Array([0., 0., 2.], dtype=float32)
    """
    _u.check_arraylike("relu", x)
    if not _u.is_inexact(x):  # integers and bools keep an integer dtype, as in JAX
        return _ufuncs.maximum(x, 0)
    x = _inexact("relu", x)
    return lax.max(x, _const(0.0, x))


@relu.defjvp
def _relu_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    if not _u.is_inexact(x):  # an integer input has a float0 tangent: nothing to select
        return relu(x), t
    x = _inexact("relu", x)
    positive = lax.gt(x, _const(0.0, x))
    zeros = _shape_ops.full_like(x, 0)
    return relu(x), _select(positive, lax.convert_element_type(t, _u.dtype(x)), zeros)


@custom_jvp
def relu6(x: ArrayLike) -> Any:
    """`min(max(x, 0), 6)`, with derivative 0 at both kinks."""
    x = _inexact("relu6", x)
    return lax.min(lax.max(x, _const(0.0, x)), _const(6.0, x))


@relu6.defjvp
def _relu6_jvp(primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    x = _inexact("relu6", x)
    inside = lax.bitwise_and(lax.gt(x, _const(0.0, x)), lax.lt(x, _const(6.0, x)))
    zeros = _shape_ops.full_like(x, 0)
    return relu6(x), _select(inside, lax.convert_element_type(t, _u.dtype(x)), zeros)


def sigmoid(x: ArrayLike) -> Any:
    """The logistic sigmoid, `1 / (1 + exp(-x))`."""
    return lax.logistic(_inexact("sigmoid", x))


def log_sigmoid(x: ArrayLike) -> Any:
    """`log(sigmoid(x))`, computed as `-softplus(-x)` (no underflow for large negative x)."""
    return lax.neg(softplus(lax.neg(_inexact("log_sigmoid", x))))


def log1mexp(x: ArrayLike) -> Any:
    """`log(1 - exp(-x))`, accurate for small and large `x` (NaN for `x < 0`).

    Below `log(2)` it is `log(-expm1(-x))`, above `log1p(-exp(-x))`: each form
    keeps the digits the other loses there.

    Example:
      >>> from polyjax_numpy import nn
      >>> nn.log1mexp(np.array([0.5, 2.0]))
      Array([-0.93275213, -0.14541346], dtype=float32)
    """
    x = _inexact("log1mexp", x)
    minus = lax.neg(x)
    near_zero = lax.log(lax.neg(lax.expm1(minus)))
    far = lax.log1p(lax.neg(lax.exp(minus)))
    return _select(lax.lt(x, _const(np.log(2.0), x)), near_zero, far)


def softplus(x: ArrayLike) -> Any:
    """`log(1 + exp(x))`, stable for large `|x|`."""
    x = _inexact("softplus", x)
    # logaddexp(x, 0): stable, and its smooth derivative gives 1/2 at 0, where the
    # max(x, 0) + log1p(exp(-|x|)) form would split the kinks of max and |x| unevenly.
    return _ufuncs_math.logaddexp(x, _const(0.0, x))


def soft_sign(x: ArrayLike) -> Any:
    """`x / (1 + |x|)`."""
    x = _inexact("soft_sign", x)
    return lax.div(x, lax.add(lax.abs(x), _const(1.0, x)))


def silu(x: ArrayLike) -> Any:
    """Sigmoid-weighted linear unit, `x * sigmoid(x)` (also called swish)."""
    x = _inexact("silu", x)
    return lax.mul(x, lax.logistic(x))


swish = silu


def gelu(x: ArrayLike, approximate: bool = True) -> Any:
    """Gaussian error linear unit, `x * Phi(x)`.

    Args:
      x: input array.
      approximate: if True (JAX's default), the tanh approximation
        `x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))`; else the exact form
        with `erf`.
    """
    x = _inexact("gelu", x)
    # JAX's gelu gives a strongly typed result even for a Python scalar.
    x = _u.convert(x, _u.dtype(x))
    half = _const(0.5, x)
    if approximate:
        inner = lax.mul(
            _const(np.sqrt(2 / np.pi), x),
            lax.add(x, lax.mul(_const(0.044715, x), lax.integer_pow(x, 3))),
        )
        return lax.mul(lax.mul(half, x), lax.add(_const(1.0, x), lax.tanh(inner)))
    return lax.mul(
        lax.mul(half, x), lax.add(_const(1.0, x), lax.erf(lax.mul(x, _const(np.sqrt(0.5), x))))
    )


def elu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Any:
    """Exponential linear unit: `x` for `x > 0`, else `alpha * (exp(x) - 1)`."""
    x = _inexact("elu", x)
    positive = lax.gt(x, _const(0.0, x))
    # expm1 of the clamped input: the branch not taken must not overflow (NaN grads).
    # A select, not min(x, 0), clamps it: at 0 the exponential branch is taken
    # whole (derivative alpha, as in JAX) instead of half of it.
    safe_x = _select(positive, _const(0.0, x), x)
    negative_part = lax.mul(_u.convert(alpha, _u.dtype(x)), lax.expm1(safe_x))
    return _select(positive, x, negative_part)


def celu(x: ArrayLike, alpha: ArrayLike = 1.0) -> Any:
    """Continuously differentiable ELU: `max(x, 0) + alpha * min(expm1(x / alpha), 0)`."""
    x = _inexact("celu", x)
    alpha = _u.convert(alpha, _u.dtype(x))
    # expm1 of min(x, 0), not min of expm1: the same values, and the derivatives at
    # the kink 0 are JAX's (the second is 1 / (4 alpha)).
    return lax.add(
        lax.max(x, _const(0.0, x)),
        lax.mul(alpha, lax.expm1(lax.div(lax.min(x, _const(0.0, x)), alpha))),
    )


def selu(x: ArrayLike) -> Any:
    """Scaled ELU with the self-normalizing constants (Klambauer et al., 2017)."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    x = _inexact("selu", x)
    return lax.mul(_const(scale, x), elu(x, alpha))


def leaky_relu(x: ArrayLike, negative_slope: ArrayLike = 1e-2) -> Any:
    """`x` for `x >= 0`, else `negative_slope * x`."""
    x = _inexact("leaky_relu", x)
    return _select(
        lax.ge(x, _const(0.0, x)), x, lax.mul(_u.convert(negative_slope, _u.dtype(x)), x)
    )


def hard_tanh(x: ArrayLike) -> Any:
    """`x` clipped to [-1, 1], with derivative 1 at the kinks -1 and 1 (as in JAX).

    Integer and bool inputs keep an integer dtype, as JAX's
    `where(x > 1, 1, where(x < -1, -1, x))` gives (bools become int32, and an
    unsigned `x` compares with -1 wrapped around, as there).
    """
    _u.check_arraylike("hard_tanh", x)
    if not _u.is_inexact(x):
        inner = _selection.where(_ufuncs.less(x, -1), -1, x)
        return _selection.where(_ufuncs.greater(x, 1), 1, inner)
    x = _inexact("hard_tanh", x)
    # Selects on strict comparisons keep the identity branch at the kinks, where
    # min/max would split the derivative in half.
    one = _const(1.0, x)
    inside = _select(lax.lt(x, _const(-1.0, x)), _const(-1.0, x), x)
    return _select(lax.gt(x, one), one, inside)


def hard_sigmoid(x: ArrayLike) -> Any:
    """`relu6(x + 3) / 6`, a piecewise-linear sigmoid."""
    x = _inexact("hard_sigmoid", x)
    return lax.div(relu6(lax.add(x, _const(3.0, x))), _const(6.0, x))


def hard_silu(x: ArrayLike) -> Any:
    """`x * hard_sigmoid(x)` (also called hard swish)."""
    x = _inexact("hard_silu", x)
    return lax.mul(x, hard_sigmoid(x))


hard_swish = hard_silu


def mish(x: ArrayLike) -> Any:
    """`x * tanh(softplus(x))` (Misra, 2019)."""
    x = _inexact("mish", x)
    return lax.mul(x, lax.tanh(softplus(x)))


def squareplus(x: ArrayLike, b: ArrayLike = 4) -> Any:
    """`(x + sqrt(x**2 + b)) / 2`, a smooth relu."""
    x = _inexact("squareplus", x)
    b = _u.convert(b, _u.dtype(x))
    return lax.div(lax.add(x, lax.sqrt(lax.add(lax.mul(x, x), b))), _const(2.0, x))


def sparse_plus(x: ArrayLike) -> Any:
    """0 for `x <= -1`, `(x + 1)**2 / 4` for `-1 < x < 1`, `x` for `x >= 1`."""
    x = _inexact("sparse_plus", x)
    quad = lax.div(lax.integer_pow(lax.add(x, _const(1.0, x)), 2), _const(4.0, x))
    mid = _select(lax.le(x, _const(-1.0, x)), _shape_ops.full_like(x, 0), quad)
    return _select(lax.ge(x, _const(1.0, x)), x, mid)


def sparse_sigmoid(x: ArrayLike) -> Any:
    """The derivative of `sparse_plus`: `clip((x + 1) / 2, 0, 1)`."""
    x = _inexact("sparse_sigmoid", x)
    return lax.min(
        lax.max(lax.div(lax.add(x, _const(1.0, x)), _const(2.0, x)), _const(0.0, x)),
        _const(1.0, x),
    )


def tanh(x: ArrayLike) -> Any:
    """Hyperbolic tangent."""
    return lax.tanh(_inexact("tanh", x))


def identity(x: ArrayLike) -> Any:
    """`x` itself (as an array)."""
    _u.check_arraylike("identity", x)
    return _u.as_array(x)


def glu(x: ArrayLike, axis: int = -1) -> Any:
    """Gated linear unit: the first half of `axis` times the sigmoid of the second half.

    Raises:
      ValueError: the size of `axis` is odd.
    """
    x = _inexact("glu", x)
    shape = _u.shape(x)
    axis = _u.canonicalize_axis(axis, len(shape))
    size = shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of shape {shape} must have an even size")
    half = size // 2
    start = [0] * len(shape)
    first = _shape_ops.slice(x, start, [*shape[:axis], half, *shape[axis + 1 :]])
    start[axis] = half
    second = _shape_ops.slice(x, start, list(shape))
    return lax.mul(first, lax.logistic(second))
