"""Derivatives of every unary function at Python scalars, and of activations at their kinks.

`grad(lambda x: x ** 2)(3.0)` once raised a dtype error: a jvp rule put a Python
number beside its primal (`mul(2, x)`), and lax's binary operations give a Python
number the dtype of the *other* operand, which fails when the primal is itself a
Python scalar, as it is when differentiating at one (under `jit` it is a typed
tracer, so the bug hid there). The sweeps here differentiate every public
function of `jnp`, `lax`, `nn` and `scipy.special` that takes one array, at a
Python float, with `grad`, `jvp`, `vjp`, `jacfwd` and `hessian`, eagerly and
under `jit`, against finite differences; and at a Python int, where JAX raises
`TypeError` for `grad`/`jacfwd`/`jacrev`/`hessian` and gives `float0`
cotangents from `vjp`.

The activation sweep differentiates every `nn` function (and the jnp and
scipy.special functions with custom jvps) at Python floats and at float32,
float16 and bfloat16 arrays: against finite differences away from kinks, and
against JAX's choices at them (`relu'(0) = 0`, `hard_tanh'(±1) = 1`, ...).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from polyjax_core import dtypes
from polyjax_core.tree_util import tree_leaves
from polyjax_interpreters.ad import grad, hessian, jacfwd, jacrev, jvp, vjp
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_numpy import lax, nn
from polyjax_numpy import numpy as jnp
from polyjax_numpy.scipy import special

# A breadth sweep: the main test run has it; the isolated re-run of this package skips it.
pytestmark = pytest.mark.sweep

MODULES = {"jnp": jnp, "lax": lax, "nn": nn, "special": special}

# Functions of one required argument that do not take a Python float to an array
# they could be differentiated through. Each group says why.
EXCLUDED = {
    "builds an array from a shape, size or count, not from a value": """
        jnp.arange jnp.bartlett jnp.blackman jnp.diag_indices jnp.empty jnp.eye
        jnp.hamming jnp.hanning jnp.identity jnp.indices jnp.ones jnp.tri
        jnp.tril_indices jnp.triu_indices jnp.zeros lax.shape_as_value
    """,
    "reads or writes files and buffers": """
        jnp.from_dlpack jnp.frombuffer jnp.fromstring jnp.load jnp.savez
    """,
    "returns a Python value or a string": """
        jnp.array_repr jnp.array_str jnp.einsum_path jnp.iscomplexobj jnp.isrealobj
        jnp.isscalar jnp.iterable jnp.ndim jnp.shape jnp.size lax.dtype
    """,
    "takes a sequence of arrays": """
        jnp.column_stack jnp.concat jnp.concatenate jnp.dstack jnp.hstack jnp.lexsort
        jnp.stack jnp.vstack lax.stack
    """,
    "needs an array of rank 1 or more (a Python float has rank 0)": """
        jnp.argsort jnp.cumulative_prod jnp.cumulative_sum jnp.diag jnp.diag_indices_from
        jnp.diagonal jnp.diff jnp.fliplr jnp.flipud jnp.gradient jnp.histogramdd
        jnp.matrix_transpose jnp.nonzero jnp.rot90 jnp.sort jnp.sort_complex jnp.trace
        jnp.trapezoid jnp.tril jnp.tril_indices_from jnp.trim_zeros jnp.triu
        jnp.triu_indices_from jnp.unstack jnp.unwrap jnp.vander jnp.where lax.unstack
        lax.cumlogsumexp lax.cummax lax.cummin lax.cumprod lax.cumsum lax.sort
        nn.glu nn.log_softmax nn.softmax nn.standardize
    """,
    "has an output whose size depends on the values (not traceable)": """
        jnp.argwhere jnp.bincount jnp.flatnonzero jnp.unique jnp.unique_all
        jnp.unique_counts jnp.unique_inverse jnp.unique_values
    """,
    "takes integers or bits only": """
        jnp.bitwise_count jnp.bitwise_invert jnp.bitwise_not jnp.invert jnp.packbits
        jnp.unpackbits lax.bitwise_not lax.clz lax.population_count special.bernoulli
    """,
    "takes something else first (a function, subscripts, a predicate, a name)": """
        jnp.einsum jnp.reshape jnp.vectorize lax.axis_index lax.axis_size lax.select_n
        lax.conv_general_permutations nn.get_scaled_dot_general_config
    """,
    "needs a keyword-only argument too (the order `v`)": """
        special.bessel_jn
    """,
    "returns complex values (grad needs a real output)": """
        special.wofz
    """,
    "takes complex arrays only (a Python float is real)": """
        lax.conj lax.imag lax.real
    """,
    "takes polynomial coefficients, a rank-1 array": """
        jnp.roots
    """,
    "is the Riemann zeta function, whose derivative in x JAX does not define": """
        special.zeta
    """,
    "returns nothing (keeps its argument alive against dead-code elimination)": """
        lax.dce_sink
    """,
}
EXCLUDED_NAMES = {n: why for why, names in EXCLUDED.items() for n in names.split()}

# Functions JAX does not differentiate: `grad` raises NotImplementedError.
NO_DERIVATIVE = {"jnp.spacing"}

# Where 0.3 is outside a function's domain, a point inside it.
POINTS = {"acosh": 1.7, "arccosh": 1.7}
X0 = 0.3


def _is_unary(fn: Callable) -> bool:
    nin = getattr(fn, "nin", None)  # jnp ufunc objects
    if nin is not None:
        return nin == 1
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in params if p.default is p.empty and p.kind in positional]
    return len(required) == 1


def _unary_functions() -> dict[str, Callable]:
    found = {}
    for prefix, module in MODULES.items():
        for name in module.__all__:
            fn = getattr(module, name)
            if inspect.isclass(fn) or inspect.ismodule(fn) or not callable(fn):
                continue
            if _is_unary(fn):
                found[f"{prefix}.{name}"] = fn
    return found


UNARY = _unary_functions()
SWEPT = sorted(set(UNARY) - set(EXCLUDED_NAMES))


def test_exclusions_are_unary_functions() -> None:
    stale = sorted(set(EXCLUDED_NAMES) - set(UNARY))
    assert not stale, f"EXCLUDED names that are not public unary functions: {stale}"
    assert len(SWEPT) > 200  # the enumeration finds the functions at all


def _as_scalar_fn(fn: Callable) -> Callable:
    """`fn` with its inexact outputs summed into one scalar (grad needs one)."""

    def scalar_fn(x: Any) -> Any:
        leaves = [jnp.sum(leaf) for leaf in tree_leaves(fn(x)) if _inexact(leaf)]
        return functools.reduce(lambda a, b: a + b, leaves)

    return scalar_fn


def _inexact(x: Any) -> bool:
    return dtypes.issubdtype(jnp.result_type(x), np.inexact)


def _derivatives(f: Callable) -> Callable[[Any], dict[str, Any]]:
    """A function of `x`: scalar `f`'s value at `x`, its first derivative by every
    transformation, and its second by `hessian`."""

    def at(x: Any) -> dict[str, Any]:
        value, pullback = vjp(f, x)
        return {
            "value": value,
            "grad": grad(f)(x),
            "jvp": jvp(f, (x,), (1.0,))[1],
            "vjp": pullback(1.0)[0],
            "jacfwd": jacfwd(f)(x),
            "hessian": hessian(f)(x),
        }

    return at


def _richardson(f_at: Callable[[float], float], x: float, h: float) -> float:
    """f'(x) from f at x ± h/2 and x ± h: central differences with Richardson
    extrapolation (error O(h**4))."""
    wide = (f_at(x + h) - f_at(x - h)) / (2 * h)
    narrow = (f_at(x + h / 2) - f_at(x - h / 2)) / h
    return (4 * narrow - wide) / 3


def _close(got: Any, want: float, what: str, rtol: float = 2e-3, atol: float = 2e-3) -> None:
    got = float(np.asarray(got, np.float32))
    if math.isnan(want) or math.isinf(want):
        assert math.isnan(got) or got == want, f"{what}: {got}, want {want}"
        return
    assert abs(got - want) <= atol + rtol * abs(want), f"{what}: {got}, want {want}"


# Where the derivative is not what finite differences see, JAX's value.
SPECIAL_DERIVATIVES = {
    # std of one value: the derivative of sqrt at a zero variance (inf), times 0.
    "jnp.std": math.nan,
    "jnp.nanstd": math.nan,
    "lax.stop_gradient": 0.0,  # by definition
}


# The operations of more operands, with the other operands Python constants, and
# the transposes that get grad's Python-float cotangent (real, imag).
COMPOSED = {
    "lax.clamp(0.0, x, 1.0)": lambda x: lax.clamp(0.0, x, 1.0),
    "lax.clamp(x, 0.5, 1.0)": lambda x: lax.clamp(x, 0.5, 1.0),
    "lax.pow(x, 2.0)": lambda x: lax.pow(x, 2.0),
    "lax.pow(x, 2)": lambda x: lax.pow(x, 2),
    "lax.pow(2.0, x)": lambda x: lax.pow(2.0, x),
    "lax.integer_pow(x, -2)": lambda x: lax.integer_pow(x, -2),
    "lax.rem(0.7, x)": lambda x: lax.rem(0.7, x),
    "lax.atan2(x, 0.5)": lambda x: lax.atan2(x, 0.5),
    "lax.atan2(0.5, x)": lambda x: lax.atan2(0.5, x),
    "lax.div(1.0, x)": lambda x: lax.div(1.0, x),
    "lax.max(x, 0.5)": lambda x: lax.max(x, 0.5),
    "lax.select(True, x, 0.5)": lambda x: lax.select(True, x, 0.5),
    "lax.igamma(0.5, x)": lambda x: lax.igamma(0.5, x),
    "lax.betainc(0.5, 0.7, x)": lambda x: lax.betainc(0.5, 0.7, x),
    "lax.polygamma(1.0, x)": lambda x: lax.polygamma(1.0, x),
    "lax.zeta(2.0, x)": lambda x: lax.zeta(2.0, x),
    "lax.real(lax.complex(x, 0.5))": lambda x: lax.real(lax.complex(x, 0.5)),
    "lax.imag(lax.complex(0.5, x))": lambda x: lax.imag(lax.complex(0.5, x)),
    "lax.abs(lax.complex(x, x))": lambda x: lax.abs(lax.complex(x, x)),
    "x ** 2": lambda x: x**2,
    "x ** 2.0": lambda x: x**2.0,
    "2 ** x": lambda x: 2**x,
    "1 / x": lambda x: 1 / x,
    "jnp.where(x > 0, x, 0)": lambda x: jnp.where(x > 0, x, 0),
    "lax.fori_loop(0, 3, c * x, 1.0)": lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0),
    "lax.cond(x > 0, 2 * x, x)": lambda x: lax.cond(x > 0, lambda: 2 * x, lambda: x),
}
CASES = {**{name: UNARY[name] for name in SWEPT}, **COMPOSED}


@pytest.mark.parametrize("name", list(CASES))
def test_derivatives_at_a_python_float(name: str) -> None:
    fn = CASES[name]
    x0 = POINTS.get(name.split(".")[-1], X0)
    out = fn(x0)
    if name in NO_DERIVATIVE:
        with pytest.raises(NotImplementedError):
            grad(_as_scalar_fn(fn))(x0)
        return
    if not any(_inexact(leaf) for leaf in tree_leaves(out)):
        # Boolean and integer results have no derivative: grad says so, as in JAX.
        with pytest.raises(TypeError, match="grad requires real-valued outputs"):
            grad(lambda x: fn(x))(x0)
        return
    derivatives = _derivatives(_as_scalar_fn(fn))
    eager = derivatives(x0)
    # One compiled function gives the staged derivatives at x0 and, at x0 ± h, the
    # values and first derivatives that the finite differences need.
    staged = jit(derivatives)
    at = functools.lru_cache(lambda x: {k: float(v) for k, v in staged(x).items()})
    h = 1e-2
    first = _richardson(lambda x: at(x)["value"], x0, h)
    second = _richardson(lambda x: at(x)["grad"], x0, h)
    first = SPECIAL_DERIVATIVES.get(name, first)
    assert eager["grad"].dtype == np.float32  # a Python float is a (weak) float32
    for how in ("grad", "jvp", "vjp", "jacfwd", "hessian"):
        want = second if how == "hessian" else first
        _close(eager[how], want, f"{name}: eager {how}")
        _close(at(x0)[how], want, f"{name}: jit {how}")


def test_python_int_inputs() -> None:
    # JAX differentiates only inexact inputs: grad, jacfwd, jacrev and hessian of a
    # Python int raise TypeError (before tracing: this costs no compilation).
    for name in SWEPT:
        for transform in (grad, jacfwd, jacrev, hessian):
            with pytest.raises(TypeError, match="requires real"):
                transform(UNARY[name])(2)


@pytest.mark.parametrize("fn", [jnp.square, jnp.abs, jnp.log1p, nn.softplus, lambda x: x**2])
def test_vjp_at_a_python_int(fn: Callable) -> None:
    # vjp takes an int, whose cotangent is float0 (the function itself runs on it).
    out, pullback = vjp(fn, 2)
    np.testing.assert_allclose(out, fn(2.0))
    (ct,) = pullback(jnp.ones_like(out))
    assert ct.dtype == dtypes.float0


# ---------------------------------------------------------------------------
# Activations and custom jvps at their kinks

BF16 = ml_dtypes.bfloat16
ACTIVATIONS = sorted(n for n in SWEPT if n.startswith("nn."))
# The unary jnp ufuncs with custom jvps (the binary logaddexp and logaddexp2 are
# checked at ties below; scipy.special's custom jvps at Python floats above).
CUSTOM_JVP = ["jnp.i0", "jnp.sinc"]

# JAX's derivative at each kink (where the one-sided derivatives differ, or a
# formula has a removable singularity), per function.
KINKS = {
    "nn.relu": {0.0: 0.0},
    "nn.relu6": {0.0: 0.0, 6.0: 0.0},
    "nn.hard_tanh": {-1.0: 1.0, 1.0: 1.0},
    "nn.elu": {0.0: 1.0},
    "nn.selu": {0.0: 1.0507009873554805 * 1.6732632423543772},
    "nn.celu": {0.0: 1.0},
    "nn.leaky_relu": {0.0: 1.0},
    "nn.hard_sigmoid": {-3.0: 0.0, 3.0: 0.0},
    "nn.hard_silu": {-3.0: 0.0, 3.0: 1.0},
    "nn.hard_swish": {-3.0: 0.0, 3.0: 1.0},
    "nn.sparse_plus": {-1.0: 0.0, 1.0: 1.0},
    "nn.sparse_sigmoid": {-1.0: 0.25, 1.0: 0.25},
    "nn.soft_sign": {0.0: 1.0},
    "nn.softplus": {0.0: 0.5},
    "nn.log_sigmoid": {0.0: 0.5},
    "nn.mish": {0.0: 0.6},
    "jnp.i0": {0.0: 0.0},
    "jnp.sinc": {0.0: 0.0},
}
SMOOTH_POINTS = (-2.5, -0.5, 0.7, 2.5)
# Functions defined on part of the line only: smooth points inside their domain.
DOMAIN_POINTS = {"nn.log1mexp": (0.3, 0.7, 1.5, 2.5)}
LOW_PRECISION_TOL = {np.float32: 2e-3, np.float16: 2e-2, BF16: 6e-2}


def _activation_check(fn: Callable, points: list[float], h: float) -> Callable:
    """One compiled function giving `fn` in float32 at `points` ± h and ± h/2 (for
    finite differences) and `fn`'s derivative at `points` in each low-precision dtype."""

    def check(shifted: Any, *at_points: Any) -> Any:
        return vmap(vmap(fn))(shifted), [vmap(grad(fn))(x) for x in at_points]

    steps = np.array([h, -h, h / 2, -h / 2], np.float32)
    shifted = np.asarray(points, np.float32)[:, None] + steps
    at_points = [np.asarray(points, dtype) for dtype in LOW_PRECISION_TOL]
    return jit(check)(shifted, *at_points)


@pytest.mark.parametrize("name", ACTIVATIONS + CUSTOM_JVP)
def test_activation_derivatives(name: str) -> None:
    fn = UNARY[name]
    kinks = KINKS.get(name, {})
    points = [*DOMAIN_POINTS.get(name, SMOOTH_POINTS), *kinks]
    h = 1e-2
    f, grads = _activation_check(fn, points, h)
    f = np.asarray(f, np.float64)
    fd = (4 * (f[:, 2] - f[:, 3]) / h - (f[:, 0] - f[:, 1]) / (2 * h)) / 3
    want = {x: kinks.get(x, d) for x, d in zip(points, fd, strict=True)}
    for x in points:  # eagerly at Python floats
        tol = 1e-6 if x in kinks else 2e-3
        _close(grad(fn)(x), want[x], f"{name}'({x}) at a Python float", tol, tol)
    for (dtype, tol), got in zip(LOW_PRECISION_TOL.items(), grads, strict=True):
        assert got.dtype == dtype
        for x, g in zip(points, np.asarray(got, np.float32), strict=True):
            rtol = tol if x not in kinks else 1e-6
            _close(g, want[x], f"{name}'({x}) in {np.dtype(dtype).name}", rtol, tol)


def test_every_activation_with_a_kink_is_swept() -> None:
    missing = sorted(set(KINKS) - set(ACTIVATIONS) - set(CUSTOM_JVP))
    assert not missing, f"KINKS entries not swept: {missing}"


# Binary functions with custom jvps or selects, at ties of their operands: JAX's
# derivatives with respect to (x1, x2) there.
TIES = {
    "logaddexp": (jnp.logaddexp, (0.5, 0.5)),
    "logaddexp2": (jnp.logaddexp2, (0.5, 0.5)),
    "maximum": (jnp.maximum, (0.5, 0.5)),
    "minimum": (jnp.minimum, (0.5, 0.5)),
    "fmax": (jnp.fmax, (0.0, 1.0)),
    "fmin": (jnp.fmin, (0.0, 1.0)),
}


@pytest.mark.parametrize("name", sorted(TIES))
@pytest.mark.parametrize("x", [-1.0, 0.0, 1.0])
def test_binary_derivatives_at_ties(name: str, x: float) -> None:
    fn, want = TIES[name]
    for args in ((x, x), (np.float32(x), np.float32(x)), (np.asarray(x, BF16),) * 2):
        got = grad(fn, argnums=(0, 1))(*args)
        rtol = 1e-2 if np.result_type(args[0]) == BF16 else 1e-6  # 1 + log 2 rounds in bf16
        np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_x_log_at_python_scalars(name: str) -> None:
    # The custom jvp once did Python arithmetic on Python-scalar primals:
    # grad(xlogy)(0.0, 0.0) raised ZeroDivisionError.
    fn = getattr(special, name)
    shift = 0.0 if name == "xlogy" else 1.0
    dx, dy = grad(fn, argnums=(0, 1))(0.0, 0.0 - shift)
    assert float(dx) == -np.inf and float(dy) == 0.0  # log(0) dx; 0 dy by convention
    # Away from 0 / 0, the derivatives match finite differences.
    for x, y in ((0.0, 0.5), (0.7, 1.5)):
        want_dx = _richardson(lambda a, y=y: float(fn(a, y)), x, 1e-2)
        want_dy = _richardson(lambda b, x=x: float(fn(x, b)), y, 1e-2)
        _close(grad(fn)(x, y), want_dx, f"d{name}/dx")
        _close(grad(fn, 1)(x, y), want_dy, f"d{name}/dy")
    # x log(x) and x log1p(x): second derivatives 1/x and (2 + x) / (1 + x)**2.
    x = 0.7 if name == "xlogy" else 0.0
    want = 1 / x if name == "xlogy" else (2 + x) / (1 + x) ** 2
    _close(hessian(lambda a: fn(a, a))(x), want, f"d2 {name}(x, x) at {x}")
