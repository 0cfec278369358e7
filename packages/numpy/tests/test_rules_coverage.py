"""Every lax primitive, swept over dtypes and shapes by one table.

`CASES` holds, for every primitive object exported by `polyjax_numpy.lax` and
`polyjax_numpy.lax.linalg` (the names ending in `_p`), one or more cases: a
function of array operands that binds the primitive, a maker of operands for a
dtype and a shape, and a NumPy/SciPy oracle. Each case is checked four ways:

- values: eager results against the oracle, in every shape of the case (rank-0
  and size-0 included where the primitive takes them) in its first dtype, and in
  every other dtype at its last shape;
- jit against eager: every shape in its first dtype (one jitted function holds
  these and the vmap variants below);
- vmap against a loop: two examples stacked, with the batch axes at the front,
  at the back, or only the first operand mapped (the ways rotate over the
  variants); every batched variant runs in one jitted function, the loop runs
  eagerly (on the same signatures as the values check, reusing their executables);
- `check_grads` to order 2 (forward and reverse, or the modes the primitive
  supports) for the differentiable cases, in the dtypes and shapes they list.

Coverage is enforced: `test_every_primitive_has_a_case` fails when a primitive
is exported without a case here (or a `PENDING` entry naming where it is being
added), and `test_every_differentiable_primitive_checks_grads` when a covered
primitive has no `check_grads` case and no `NOT_DIFFERENTIABLE` reason. Each
values check also asserts that the case really binds the primitives it claims.
A new primitive gets a `Case` (the helpers `unary`, `binary` and `operands`
cover the common kinds).

Other test modules hold the deeper, primitive-specific checks (edge values,
conventions, errors, symbolic shapes); this one holds the uniform sweep, kept
cheap in compilations (see `_variants`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg
import scipy.special

from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads
from polyjax_numpy import lax
from polyjax_numpy import ref as state
from polyjax_numpy.lax import _state as state_prims
from polyjax_numpy.lax import linalg

# A breadth sweep: the main test run has it; the isolated re-run of this package skips it.
pytestmark = pytest.mark.sweep

F32, F16, I32, U8 = (np.dtype(t) for t in (np.float32, np.float16, np.int32, np.uint8))
BF16, BOOL, C64 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.bool_), np.dtype(np.complex64)
F64, C128 = np.dtype(np.float64), np.dtype(np.complex128)
U32 = np.dtype(np.uint32)

FLOATS = (F32, BF16, F16)
INTS = (I32, U8)
INEXACT = (*FLOATS, C64)
NUMERIC = (*FLOATS, *INTS, C64)
ALL = (*NUMERIC, BOOL)
REAL = (*FLOATS, *INTS)

# rank-0, size-0 and an ordinary array: the default shapes of elementwise cases.
SHAPES = ((), (2, 0), (2, 3))

# ---------------------------------------------------------------------------
# The case table


@dataclasses.dataclass(frozen=True)
class Case:
    """One way of exercising some primitives, swept over dtypes and shapes.

    Attributes:
      name: the test id.
      prims: the primitives the case covers; each must be bound by `fun`.
      fun: the function of array operands checked (may return a pytree).
      make: `make(rng, dtype, shape) -> operands` (a tuple of arrays).
      oracle: NumPy/SciPy on the operands, floats widened to float64 and
        complex64 to complex128; `None` where `check` stands instead.
      dtypes: the dtypes swept by the values, jit and vmap checks.
      shapes: the shapes swept (whatever `make` understands as a shape).
      grad_dtypes: dtypes checked by `check_grads` (empty: not differentiable).
      grad_shapes: the shapes checked by `check_grads` (default: the last of `shapes`).
      modes: the modes of `check_grads`.
      order: the order of `check_grads`.
      gmake: operands for `check_grads` (default `make`): points away from kinks.
      gfun: the function differentiated (default `fun`): e.g. its float outputs only.
      tol: a factor on the default tolerances of values and derivatives.
      wrt: the operands `check_grads` differentiates (default: all; others held fixed).
      jit_grads: differentiate `jit(fun)`, one compilation instead of many small eager
        ones (control flow, rules that build derivatives from many steps).
      wide: whether the oracle gets widened operands (else the operands as they are).
      check: `check(operands, outputs)`, a property check where no oracle exists.
      vmap: whether the vmap check applies (`False` needs a reason in `why`).
      vmap_shapes: the shapes the vmap check batches (default: `shapes`); fewer for
        primitives whose compilation is slow.
      why: why a check does not apply.
    """

    name: str
    prims: tuple[Primitive, ...]
    fun: Callable[..., Any]
    make: Callable[..., tuple]
    oracle: Callable[..., Any] | None
    dtypes: tuple
    shapes: tuple = SHAPES
    grad_dtypes: tuple = ()
    grad_shapes: tuple | None = None
    modes: tuple = ("fwd", "rev")
    order: int = 2
    gmake: Callable[..., tuple] | None = None
    gfun: Callable[..., Any] | None = None
    tol: float = 1.0
    wrt: tuple[int, ...] | None = None
    jit_grads: bool = False
    wide: bool = True
    check: Callable[..., None] | None = None
    vmap: bool = True
    vmap_shapes: tuple | None = None
    why: str = ""


def draw(rng: np.random.Generator, shape: tuple, dtype: np.dtype, lo=-2.0, hi=2.0) -> np.ndarray:
    """Random values of `dtype` in [lo, hi] (integers: a clipped range; complex: both parts)."""
    dtype = np.dtype(dtype)
    if dtype == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo_i, hi_i = max(math.ceil(lo), info.min), min(math.floor(hi), info.max)
        return rng.integers(lo_i, hi_i + 1, shape).astype(dtype)
    x = rng.uniform(lo, hi, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(lo, hi, shape)
    return np.asarray(x).astype(dtype)


def _wide(x: Any) -> Any:
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(C128)
    if x.dtype.kind == "f" or x.dtype == BF16:
        return x.astype(F64)
    return x


def _narrow(want: np.dtype, dtype: np.dtype) -> np.dtype:
    """The dtype of a result whose oracle ran widened."""
    if want == F64:
        return dtype if dtype in FLOATS else F32
    if want == C128:
        return C64
    return want


_RTOL = {F32: 1e-5, F16: 2e-3, BF16: 2e-2, C64: 1e-5}
_ATOL = {F32: 1e-6, F16: 2e-3, BF16: 2e-2, C64: 1e-6}


def assert_close(got: Any, want: Any, dtype: np.dtype, tol: float = 1.0, what: str = "") -> None:
    """Compares two pytrees leaf by leaf: dtype and shape exactly, values within tolerances."""
    got_leaves, want_leaves = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(got_leaves) == len(want_leaves), what
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == _narrow(w.dtype, dtype), (what, g.dtype, w.dtype)
        assert g.shape == w.shape, (what, g.shape, w.shape)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=what)
        else:
            wide = C128 if g.dtype.kind == "c" else F64
            np.testing.assert_allclose(
                g.astype(wide),
                w.astype(wide),
                rtol=_RTOL[g.dtype] * tol,
                atol=_ATOL[g.dtype] * tol,
                err_msg=what,
            )


@contextlib.contextmanager
def recording_binds(prims: Sequence[Primitive]):
    """Records which of `prims` are bound inside the block."""
    seen: set[str] = set()
    saved = {p: p.__dict__.get("bind") for p in prims}

    def recorder(p):
        method = type(p).bind

        def bind(*args, **params):
            seen.add(p.name)
            return method(p, *args, **params)

        return bind

    for p in prims:
        p.bind = recorder(p)
    try:
        yield seen
    finally:
        for p, old in saved.items():
            if old is None:
                del p.bind
            else:
                p.bind = old


# ---------------------------------------------------------------------------
# Helpers for common kinds of cases


def _seeded(name: str, dtype: np.dtype, shape: Any, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, *map(ord, f"{name}|{np.dtype(dtype).name}|{shape}")])


def operands(*specs) -> Callable[..., tuple]:
    """A `make` drawing one operand per spec: `(lo, hi)` in the case's dtype, or
    `(lo, hi, dtype)` in a fixed dtype."""

    def make(rng, dtype, shape):
        return tuple(draw(rng, shape, s[2] if len(s) > 2 else dtype, s[0], s[1]) for s in specs)

    return make


def unary(
    name, fun, np_fun, dtypes, domain=(-2, 2), grad=(F32,), gdomain=None, tol=1.0, prims=(), **kw
) -> Case:
    """An elementwise case; its derivatives are checked at rank 0 (test_rules_elementwise
    checks them on vectors, and in complex64)."""
    return Case(
        name,
        prims,
        fun,
        operands(domain),
        np_fun,
        dtypes,
        grad_dtypes=tuple(d for d in grad if d in dtypes),
        grad_shapes=((),),
        gmake=operands(gdomain) if gdomain else None,
        tol=tol,
        **kw,
    )


def binary(
    prim, fun, np_fun, dtypes, dx=(-2, 2), dy=(-2, 2), grad=(F32,), tol=1.0, name=None, **kw
) -> Case:
    """A binary elementwise case; derivatives at rank 0 (see `unary`)."""
    return Case(
        name or prim.name,
        (prim,),
        fun,
        operands(dx, dy),
        np_fun,
        dtypes,
        grad_dtypes=tuple(d for d in grad if d in dtypes),
        grad_shapes=((),),
        tol=tol,
        **kw,
    )


# ---------------------------------------------------------------------------
# Oracles with no direct NumPy equivalent


def _np_logistic(x):
    return 1 / (1 + np.exp(-x))


def _np_round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _np_int_div(x, y):
    """C division: truncation toward zero (floats: true division)."""
    if x.dtype.kind in "iu":
        q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
        return (np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64)) * q).astype(x.dtype)
    return x / y


def _np_clz(x):
    bits = x.dtype.itemsize * 8
    u = x.astype(np.uint64) & np.uint64((1 << bits) - 1)
    out = np.full(x.shape, bits, np.int64)
    for b in range(bits):
        out = np.where((u >> np.uint64(b)) != 0, bits - 1 - b, out)
    return out.astype(x.dtype)


def _np_popcount(x):
    bits = x.dtype.itemsize * 8
    u = x.astype(np.uint64) & np.uint64((1 << bits) - 1)
    return sum((u >> np.uint64(b)) & np.uint64(1) for b in range(bits)).astype(x.dtype)


def _np_mulhi(x, y):
    """The high half of the exact product (int32 and narrower fit int64 products)."""
    bits = x.dtype.itemsize * 8
    return ((x.astype(np.int64) * y.astype(np.int64)) >> bits).astype(x.dtype)


def _np_shift(kind):
    def f(x, s):
        bits = x.dtype.itemsize * 8
        wide = x.astype(np.int64)
        s64 = s.astype(np.int64)
        big = (s64 < 0) | (s64 >= bits)
        s_ok = np.where(big, 0, s64)
        if kind == "left":
            out = np.where(big, 0, (wide << s_ok) & ((1 << bits) - 1))
        elif kind == "logical":
            unsigned = wide & ((1 << bits) - 1)
            out = np.where(big, 0, unsigned >> s_ok)
        else:  # arithmetic: the sign bit fills (an unsigned value has none)
            out = np.where(big, np.where(wide < 0, -1, 0), wide >> s_ok)
        return (out & ((1 << bits) - 1)).astype(np.uint64).astype(x.dtype)

    return f


# ---------------------------------------------------------------------------
# Elementwise cases

_SIGNED = (*FLOATS, I32)

CASES: list[Case] = [
    unary("neg", lax.neg, np.negative, (*_SIGNED, U8, C64), prims=(lax.neg_p,)),
    unary("abs", lax.abs, np.abs, (*_SIGNED, C64), gdomain=(0.3, 2), prims=(lax.abs_p,)),
    unary(
        "sign",
        lax.sign,
        np.sign,
        (*_SIGNED, U8),
        grad=(F32,),
        gdomain=(0.3, 2),
        prims=(lax.sign_p,),
    ),
    unary(
        "floor", lax.floor, np.floor, FLOATS, grad=(F32,), domain=(-3.3, 3.3), prims=(lax.floor_p,)
    ),
    unary("ceil", lax.ceil, np.ceil, FLOATS, grad=(F32,), domain=(-3.3, 3.3), prims=(lax.ceil_p,)),
    unary(
        "round_away",
        lambda x: lax.round(x),
        _np_round_half_away,
        FLOATS,
        grad=(F32,),
        domain=(-3.3, 3.3),
        prims=(lax.round_p,),
    ),
    unary(
        "round_even",
        lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
        np.round,
        FLOATS,
        grad=(),
        domain=(-3.3, 3.3),
        prims=(lax.round_p,),
    ),
    unary("is_finite", lax.is_finite, np.isfinite, FLOATS, grad=(), prims=(lax.is_finite_p,)),
    unary("exp", lax.exp, np.exp, INEXACT, prims=(lax.exp_p,)),
    unary("exp2", lax.exp2, np.exp2, INEXACT, prims=(lax.exp2_p,)),
    unary("log", lax.log, np.log, INEXACT, domain=(0.2, 3), prims=(lax.log_p,)),
    unary("log1p", lax.log1p, np.log1p, INEXACT, domain=(-0.5, 2), prims=(lax.log1p_p,)),
    unary("expm1", lax.expm1, np.expm1, INEXACT, prims=(lax.expm1_p,)),
    unary("sin", lax.sin, np.sin, INEXACT, prims=(lax.sin_p,)),
    unary("cos", lax.cos, np.cos, INEXACT, prims=(lax.cos_p,)),
    unary("tan", lax.tan, np.tan, INEXACT, domain=(-1.2, 1.2), tol=4, prims=(lax.tan_p,)),
    unary("tanh", lax.tanh, np.tanh, INEXACT, prims=(lax.tanh_p,)),
    unary("logistic", lax.logistic, _np_logistic, INEXACT, prims=(lax.logistic_p,)),
    unary("sqrt", lax.sqrt, np.sqrt, INEXACT, domain=(0.2, 3), prims=(lax.sqrt_p,)),
    unary(
        "rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), INEXACT, domain=(0.2, 3), prims=(lax.rsqrt_p,)
    ),
    unary("cbrt", lax.cbrt, np.cbrt, FLOATS, gdomain=(0.3, 2), prims=(lax.cbrt_p,)),
    unary("asin", lax.asin, np.arcsin, INEXACT, domain=(-0.8, 0.8), prims=(lax.asin_p,)),
    unary("acos", lax.acos, np.arccos, INEXACT, domain=(-0.8, 0.8), prims=(lax.acos_p,)),
    unary("atan", lax.atan, np.arctan, INEXACT, prims=(lax.atan_p,)),
    unary("sinh", lax.sinh, np.sinh, INEXACT, prims=(lax.sinh_p,)),
    unary("cosh", lax.cosh, np.cosh, INEXACT, prims=(lax.cosh_p,)),
    unary("asinh", lax.asinh, np.arcsinh, INEXACT, prims=(lax.asinh_p,)),
    unary("acosh", lax.acosh, np.arccosh, INEXACT, domain=(1.2, 3), prims=(lax.acosh_p,)),
    unary("atanh", lax.atanh, np.arctanh, INEXACT, domain=(-0.8, 0.8), prims=(lax.atanh_p,)),
    unary("erf", lax.erf, scipy.special.erf, FLOATS, prims=(lax.erf_p,)),
    unary("erfc", lax.erfc, scipy.special.erfc, FLOATS, prims=(lax.erfc_p,)),
    unary(
        "erf_inv",
        lax.erf_inv,
        scipy.special.erfinv,
        FLOATS,
        domain=(-0.8, 0.8),
        tol=4,
        prims=(lax.erf_inv_p,),
    ),
    unary(
        "lgamma",
        lax.lgamma,
        scipy.special.gammaln,
        FLOATS,
        domain=(0.3, 4),
        tol=4,
        prims=(lax.lgamma_p,),
    ),
    unary(
        "digamma",
        lax.digamma,
        scipy.special.digamma,
        FLOATS,
        domain=(0.3, 4),
        tol=4,
        prims=(lax.digamma_p,),
    ),
    unary(
        "bessel_i0e",
        lax.bessel_i0e,
        scipy.special.i0e,
        FLOATS,
        tol=4,
        vmap_shapes=((),),
        prims=(lax.bessel_i0e_p,),
    ),
    unary(
        "bessel_i1e",
        lax.bessel_i1e,
        scipy.special.i1e,
        FLOATS,
        tol=4,
        vmap_shapes=((),),
        prims=(lax.bessel_i1e_p,),
    ),
    unary("square", lax.square, np.square, NUMERIC, prims=(lax.square_p,)),
    unary(
        "integer_pow3",
        lambda x: lax.integer_pow(x, 3),
        lambda x: x**3,
        NUMERIC,
        prims=(lax.integer_pow_p,),
    ),
    unary(
        "integer_pow-2",
        lambda x: lax.integer_pow(x, -2),
        lambda x: x**-2.0,
        INEXACT,
        domain=(0.5, 2),
        prims=(lax.integer_pow_p,),
    ),
    # (differentiated with a fine rounding: finite differences cannot see through a coarse one)
    Case(
        "reduce_precision",
        (lax.reduce_precision_p,),
        lambda x: lax.reduce_precision(x, 5, 10),
        operands((-2, 2)),
        lambda x: x.astype(np.float16).astype(x.dtype),
        (F32, F16),
        grad_dtypes=(F32,),
        gfun=lambda x: lax.reduce_precision(x, 8, 20),
    ),
    unary("not", lax.bitwise_not, np.invert, (*INTS, BOOL), grad=(), prims=(lax.not_p,)),
    unary(
        "population_count",
        lax.population_count,
        _np_popcount,
        INTS,
        domain=(-300, 300),
        grad=(),
        prims=(lax.population_count_p,),
    ),
    unary("clz", lax.clz, _np_clz, INTS, domain=(-300, 300), grad=(), prims=(lax.clz_p,)),
    unary("real", lax.real, np.real, (C64,), grad=(C64,), prims=(lax.real_p,)),
    unary("imag", lax.imag, np.imag, (C64,), grad=(C64,), prims=(lax.imag_p,)),
    unary(
        "conj",
        lax.conj,
        lambda x: np.conj(x).astype(C128),
        (F32, C64),
        grad=(F32, C64),
        prims=(lax.conj_p,),
    ),
    # binary
    binary(lax.add_p, lax.add, np.add, NUMERIC, grad=(F32,)),
    binary(lax.sub_p, lax.sub, np.subtract, NUMERIC, grad=(F32,)),
    binary(lax.mul_p, lax.mul, np.multiply, NUMERIC, grad=(F32,)),
    binary(lax.div_p, lax.div, _np_int_div, NUMERIC, dy=(0.5, 2), grad=(F32,)),
    binary(lax.div_p, lax.div, _np_int_div, (I32,), dx=(-9, 9), dy=(1, 4), name="div_int_signs"),
    binary(lax.rem_p, lax.rem, np.fmod, REAL, dx=(-5, 5), dy=(1.2, 3.1)),
    binary(lax.pow_p, lax.pow, np.power, (*FLOATS, C64), dx=(0.5, 2), tol=4),
    binary(lax.max_p, lax.max, np.maximum, ALL),
    binary(lax.min_p, lax.min, np.minimum, ALL),
    binary(lax.atan2_p, lax.atan2, np.arctan2, FLOATS, dy=(0.3, 2)),
    binary(lax.and_p, lax.bitwise_and, np.bitwise_and, (*INTS, BOOL), dx=(-50, 50), dy=(-50, 50)),
    binary(lax.or_p, lax.bitwise_or, np.bitwise_or, (*INTS, BOOL), dx=(-50, 50), dy=(-50, 50)),
    binary(lax.xor_p, lax.bitwise_xor, np.bitwise_xor, (*INTS, BOOL), dx=(-50, 50), dy=(-50, 50)),
    binary(lax.shift_left_p, lax.shift_left, _np_shift("left"), INTS, dx=(-50, 50), dy=(-1, 40)),
    binary(lax.mulhi_p, lax.mulhi, _np_mulhi, INTS, dx=(-(2**31), 2**31), dy=(-(2**31), 2**31)),
    binary(
        lax.shift_right_arithmetic_p,
        lax.shift_right_arithmetic,
        _np_shift("arithmetic"),
        INTS,
        dx=(-50, 50),
        dy=(-1, 40),
    ),
    binary(
        lax.shift_right_logical_p,
        lax.shift_right_logical,
        _np_shift("logical"),
        INTS,
        dx=(-50, 50),
        dy=(-1, 40),
    ),
    binary(lax.eq_p, lax.eq, np.equal, ALL, dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.ne_p, lax.ne, np.not_equal, ALL, dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.lt_p, lax.lt, np.less, (*REAL, BOOL), dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.le_p, lax.le, np.less_equal, (*REAL, BOOL), dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.gt_p, lax.gt, np.greater, (*REAL, BOOL), dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.ge_p, lax.ge, np.greater_equal, (*REAL, BOOL), dx=(-1, 1), dy=(-1, 1), grad=()),
    binary(lax.complex_p, lax.complex, lambda x, y: x + 1j * y, (F32,)),
    binary(
        lax.igamma_p,
        lax.igamma,
        scipy.special.gammainc,
        (F32,),
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
        dx=(0.5, 3),
        dy=(0.2, 3),
        tol=10,
        wrt=(1,),
    ),  # (d/da is igamma_grad_a, which has no derivative)
    binary(
        lax.igammac_p,
        lax.igammac,
        scipy.special.gammaincc,
        (F32,),
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
        dx=(0.5, 3),
        dy=(0.2, 3),
        tol=10,
        wrt=(1,),
    ),
    binary(
        lax.zeta_p,
        lax.zeta,
        scipy.special.zeta,
        (F32,),
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
        dx=(1.5, 4),
        dy=(0.5, 3),
        tol=10,
        wrt=(1,),
    ),
    Case(
        "polygamma",
        (lax.polygamma_p,),
        lax.polygamma,
        lambda rng, dt, s: (np.round(draw(rng, s, dt, 0, 3)), draw(rng, s, dt, 0.5, 3)),
        scipy.special.polygamma,
        (F32,),
        grad_dtypes=(F32,),
        wrt=(1,),
        tol=10,
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
    ),
]


def _igamma_grad_a(a, x):
    h = 1e-6
    return (scipy.special.gammainc(a + h, x) - scipy.special.gammainc(a - h, x)) / (2 * h)


def _random_gamma_grad(a, x):
    # dx/da holding u = P(a, x) fixed, by central differences of the inverse.
    u, h = scipy.special.gammainc(a, x), 1e-6
    inv = scipy.special.gammaincinv
    return (inv(a + h, u) - inv(a - h, u)) / (2 * h)


def _select_n_make(n):
    def make(rng, dtype, shape):
        if n == 2:
            which = draw(rng, shape, BOOL)
        else:
            which = draw(rng, shape, I32, 0, n - 1)
        return (which, *(draw(rng, shape, dtype) for _ in range(n)))

    return make


def _clamp_make(rng, dtype, shape):
    if dtype == U8:
        return (
            draw(rng, shape, dtype, 0, 3),
            draw(rng, shape, dtype, 0, 12),
            draw(rng, shape, dtype, 6, 9),
        )
    return (
        draw(rng, shape, dtype, -2, -0.5),
        draw(rng, shape, dtype, -3, 3),
        draw(rng, shape, dtype, 0.5, 2),
    )


_CONVERT_TARGETS = (F32, BF16, F16, I32, U8, BOOL, C64)


def _convert_all(x):
    return [lax.convert_element_type(x, t) for t in _CONVERT_TARGETS]


def _np_convert_all(x):
    real = np.real(x) if x.dtype.kind == "c" else x
    outs = []
    for t in _CONVERT_TARGETS:
        src = x if t == C64 or (t == BOOL) else real
        if t == BOOL:
            outs.append(src != 0)
        elif t.kind in "iu":
            outs.append(np.trunc(np.asarray(src, F64) if src.dtype.kind == "f" else src).astype(t))
        else:
            outs.append(src.astype(t))
    return outs


# Same-width bitcasts keep the shape; to a narrower type a trailing axis appears.
_BITCAST = {F32: I32, I32: F32, F16: BF16, BF16: U8, U8: U8}


def _bitcast(x):
    return lax.bitcast_convert_type(x, _BITCAST[np.dtype(x.dtype)])


def _np_bitcast(x):
    target = _BITCAST[x.dtype]
    out = np.atleast_1d(x).copy().view(target)
    if target.itemsize < x.dtype.itemsize:
        return out.reshape(*x.shape, x.dtype.itemsize // target.itemsize)
    return out.reshape(x.shape)


def _np_nextafter(x, y):
    if x.dtype == BF16:  # NumPy has no bfloat16 nextafter: step by one unit in the last place
        bits = x.view(np.uint16).astype(np.int32)
        toward = np.sign(y.astype(F32) - x.astype(F32))
        step = np.where(x.astype(F32) >= 0, toward, -toward).astype(np.int32)
        return np.where(x == y, y, (bits + step).astype(np.uint16).view(BF16))
    return np.nextafter(x, y)


CASES += [
    binary(lax.nextafter_p, lax.nextafter, _np_nextafter, FLOATS, dy=(-1, 1), grad=(), wide=False),
    binary(
        lax.igamma_grad_a_p,
        lax.igamma_grad_a,
        _igamma_grad_a,
        (F32,),
        dx=(0.5, 3),
        dy=(0.2, 3),
        grad=(),
        tol=100,
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
    ),
    binary(
        lax.random_gamma_grad_p,
        lax.random_gamma_grad,
        _random_gamma_grad,
        (F32,),
        dx=(0.5, 3),
        dy=(0.2, 3),
        grad=(),
        tol=100,
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
    ),
    Case(
        "regularized_incomplete_beta",
        (lax.regularized_incomplete_beta_p,),
        lax.regularized_incomplete_beta,
        operands((0.5, 3), (0.5, 3), (0.1, 0.9)),
        scipy.special.betainc,
        (F32,),
        grad_dtypes=(F32,),
        wrt=(2,),
        tol=10,
        shapes=((),),  # (more shapes and dtypes: test_lax_special)
    ),
    Case(
        "select_n2",
        (lax.select_n_p,),
        lax.select_n,
        _select_n_make(2),
        lambda w, a, b: np.where(w, b, a),
        ALL,
        grad_dtypes=(F32, C64),
    ),
    Case(
        "select_n3",
        (lax.select_n_p,),
        lax.select_n,
        _select_n_make(3),
        lambda w, *cs: np.choose(w, cs),
        (F32, I32),
        grad_dtypes=(F32,),
    ),
    Case("clamp", (lax.clamp_p,), lax.clamp, _clamp_make, np.clip, REAL, grad_dtypes=(F32,)),
    Case(
        "convert_element_type",
        (lax.convert_element_type_p,),
        _convert_all,
        operands((0, 9)),
        _np_convert_all,
        ALL,
        grad_dtypes=(F32, C64),
        gfun=lambda x: [lax.convert_element_type(x, t) for t in (F32, C64)],
    ),
    Case(
        "bitcast_convert_type",
        (lax.bitcast_convert_type_p,),
        _bitcast,
        operands((-100, 100)),
        _np_bitcast,
        (F32, I32, F16, BF16, U8),
        wide=False,
    ),
]


# ---------------------------------------------------------------------------
# Shape operations

LINEAR_GRADS = (F32, C64)
VECTOR_SHAPES = ((3,), (2, 0), (2, 3))  # for primitives that need an axis


def _last(x) -> int:
    return max(x.ndim - 1, 0)


def _np_pad(x, v, config):
    out_shape = [lo + hi + d + max(d - 1, 0) * it for d, (lo, hi, it) in zip(x.shape, config)]
    out = np.full(out_shape, v, x.dtype)
    out[
        tuple(
            slice(lo, lo + d + max(d - 1, 0) * it, it + 1)
            for d, (lo, _, it) in zip(x.shape, config)
        )
    ] = x
    return out


def _pad_config(x):
    return [(1, 2, 1)] * x.ndim


def _slice_bounds(x):
    start = tuple(min(1, d) for d in x.shape)
    return start, tuple(x.shape), (2,) * x.ndim


def _iota(x):
    shape = tuple(x.shape)
    return [lax.broadcasted_iota(x.dtype, shape, d) for d in range(len(shape))]


def _np_iota(x):
    return [
        np.broadcast_to(
            np.arange(n).astype(x.dtype).reshape([-1 if i == d else 1 for i in range(x.ndim)]),
            x.shape,
        )
        for d, n in enumerate(x.shape)
    ]


def _split_sizes(x) -> tuple[int, ...]:
    # a piece of size 0 in the middle; the pieces cover an empty axis too.
    d = x.shape[_last(x)] if x.ndim else 0
    return (min(1, d), 0, d - min(1, d))


def _empty_filled(x):
    """`x` written over an `empty` buffer of its shape and dtype.

    `empty`'s values are unspecified (our lowering gives zeros, XLA may one day give
    whatever the buffer held), so the case checks its shape and dtype contract, here at
    trace time (under jit and vmap too) and in `_empty_check` on the eager array, and
    compares values only after every element has been overwritten, as users of an
    `empty` buffer do."""
    buf = lax.empty(x.shape, x.dtype)
    assert (tuple(buf.shape), np.dtype(buf.dtype)) == (tuple(x.shape), np.dtype(x.dtype))
    return lax.dynamic_update_slice(buf, x, (np.int32(0),) * x.ndim)


def _empty_check(args, out):
    (x,) = args
    buf = np.asarray(lax.empty(x.shape, x.dtype))
    assert (buf.shape, buf.dtype) == (x.shape, x.dtype), (buf.shape, buf.dtype)


def _rng_uniform_masked(x):
    """Binds rng_uniform with a deterministic result: its draws times zero, plus `x`."""
    draws = lax.rng_uniform(x.dtype.type(0), x.dtype.type(1), x.shape)
    return x + draws * x.dtype.type(0)


def _rng_uniform_check(args, out):
    (x,) = args
    draws = np.asarray(lax.rng_uniform(np.float32(2), np.float32(3), (64,)))
    assert draws.dtype == np.float32 and ((2 <= draws) & (draws < 3)).all()
    assert len(np.unique(draws)) > 1


CASES += [
    Case(
        "broadcast_in_dim",
        (lax.broadcast_in_dim_p,),
        lambda x: [
            lax.broadcast_in_dim(x, (4, *x.shape), tuple(range(1, x.ndim + 1))),
            lax.broadcast_in_dim(x, (*x.shape, 2), tuple(range(x.ndim))),
        ],
        operands((-2, 2)),
        lambda x: [np.broadcast_to(x, (4, *x.shape)), np.broadcast_to(x[..., None], (*x.shape, 2))],
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "broadcast_in_dim_stretch",
        (lax.broadcast_in_dim_p,),
        lambda x: lax.broadcast_in_dim(x, (3, *x.shape[1:]), tuple(range(x.ndim))),
        lambda rng, dt, s: (draw(rng, (1, *s[1:]), dt),),
        lambda x: np.broadcast_to(x, (3, *x.shape[1:])),
        (F32, I32, BOOL),
        shapes=((1,), (1, 0), (1, 3)),
        grad_dtypes=(F32,),
    ),
    Case(
        "reshape",
        (lax.reshape_p,),
        lambda x: [
            lax.reshape(x, (math.prod(x.shape),)),
            lax.reshape(x, x.shape[::-1], tuple(reversed(range(x.ndim)))),
        ],
        operands((-2, 2)),
        lambda x: [x.reshape(-1), np.transpose(x).reshape(x.shape[::-1])],
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "transpose",
        (lax.transpose_p,),
        lambda x: lax.transpose(x, tuple(reversed(range(x.ndim)))),
        operands((-2, 2)),
        np.transpose,
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "squeeze",
        (lax.squeeze_p,),
        lambda x: lax.squeeze(x, (x.ndim - 1,)),
        lambda rng, dt, s: (draw(rng, (*s, 1), dt),),
        lambda x: np.squeeze(x, -1),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "rev",
        (lax.rev_p,),
        lambda x: lax.rev(x, tuple(range(x.ndim))),
        operands((-2, 2)),
        lambda x: np.flip(x, tuple(range(x.ndim))),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "pad",
        (lax.pad_p,),
        lambda x, v: lax.pad(x, v, _pad_config(x)),
        lambda rng, dt, s: (draw(rng, s, dt), draw(rng, (), dt)),
        lambda x, v: _np_pad(x, v, _pad_config(x)),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "pad_negative",
        (lax.pad_p,),
        lambda x, v: lax.pad(x, v, [(-1, 1, 0), (2, -2, 1)]),
        lambda rng, dt, s: (draw(rng, s, dt), draw(rng, (), dt)),
        lambda x, v: _np_pad(x, v, [(0, 1, 0), (2, 0, 1)])[1:, :-2],
        (F32, I32),
        shapes=((3, 2), (3, 4)),
        grad_dtypes=(F32,),
    ),
    Case(
        "concatenate",
        (lax.concatenate_p,),
        lambda x, y: lax.concatenate([x, y, x], _last(x)),
        operands((-2, 2), (-2, 2)),
        lambda x, y: np.concatenate([x, y, x], _last(x)),
        ALL,
        shapes=VECTOR_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "slice",
        (lax.slice_p,),
        lambda x: lax.slice(x, *_slice_bounds(x)),
        operands((-2, 2)),
        lambda x: x[tuple(slice(*b) for b in zip(*_slice_bounds(x)))],
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "iota",
        (lax.iota_p,),
        _iota,
        operands((0, 1)),
        _np_iota,
        (*REAL, C64),
        shapes=((0,), (2, 0), (2, 3)),
        wide=False,
    ),
    Case(
        "split",
        (lax.split_p,),
        lambda x: lax.split(x, _split_sizes(x), _last(x)),
        operands((-2, 2)),
        lambda x: np.split(x, np.cumsum(_split_sizes(x))[:-1], _last(x)),
        ALL,
        shapes=VECTOR_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "composite",
        (lax.composite_p,),
        lambda x: lax.composite(lambda a, *, k: a * k + 1.0, "test.affine")(x, k=2.0),
        operands((-2, 2)),
        lambda x: x * 2.0 + 1.0,
        FLOATS,
    ),
    Case(
        "stage",
        (lax.stage_p,),
        lax.stage,  # eagerly the operand is a NumPy value, so stage binds
        operands((-2, 2)),
        lambda x: x,
        ALL,
        grad_dtypes=(F32,),
    ),
    Case(
        "rng_uniform",
        (lax.rng_uniform_p,),
        _rng_uniform_masked,
        operands((-2, 2)),
        lambda x: x,
        (F32, I32),
        check=_rng_uniform_check,
    ),
    Case(
        "empty",
        (lax.empty_p,),
        _empty_filled,
        operands((-2, 2)),
        lambda x: x,
        ALL,
        check=_empty_check,
        grad_dtypes=LINEAR_GRADS,
    ),
]

# ---------------------------------------------------------------------------
# Reductions


def _axes_variants(x) -> list[tuple[int, ...]]:
    """Every axis at once, and the first axis alone (rank-0: no axis)."""
    return [tuple(range(x.ndim))] + ([(0,)] if x.ndim else [])


def _reduction(fun):
    return lambda x: [fun(x, axes) for axes in _axes_variants(x)]


def _identity(kind: str, dtype: np.dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype == BOOL:
        return kind == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max
    return -np.inf if kind == "max" else np.inf


def _np_reduction(kind: str):
    ufunc = {
        "sum": np.add,
        "prod": np.multiply,
        "max": np.maximum,
        "min": np.minimum,
        "and": np.bitwise_and,
        "or": np.bitwise_or,
        "xor": np.bitwise_xor,
    }[kind]

    def oracle(x):
        outs = []
        for axes in _axes_variants(x):
            if kind in ("and", "or", "xor"):
                out = ufunc.reduce(x, axis=axes) if axes else x
            else:
                out = ufunc.reduce(x, axis=axes, initial=_identity(kind, x.dtype))
            outs.append(np.asarray(out).astype(x.dtype))
        return outs

    return oracle


def _arg(fun):
    # along the last axis, and along the first where it is not empty
    return lambda x: [fun(x, a, I32) for a in {x.ndim - 1, 0} if x.shape[a]]


def _np_arg(fn):
    return lambda x: [fn(x, axis=a).astype(I32) for a in {x.ndim - 1, 0} if x.shape[a]]


def _reduce_general(x, y):
    # A variadic reduction: the running max of x next to the sum of y.
    init = (np.asarray(_identity("max", x.dtype), x.dtype), np.zeros((), y.dtype))
    return [
        lax.reduce((x, y), init, lambda a, b: (lax.max(a[0], b[0]), lax.add(a[1], b[1])), axes)
        for axes in _axes_variants(x)
    ]


def _np_reduce_general(x, y):
    return [
        (
            np.maximum.reduce(x, axis=axes, initial=_identity("max", x.dtype)).astype(x.dtype),
            np.add.reduce(y, axis=axes).astype(y.dtype),
        )
        for axes in _axes_variants(x)
    ]


_ARG_SHAPES = ((3,), (0, 3), (2, 3))  # argmax/argmin need a non-empty reduced axis

CASES += [
    Case(
        "reduce_sum",
        (lax.reduce_sum_p,),
        _reduction(lax.reduce_sum),
        operands((-2, 2)),
        _np_reduction("sum"),
        NUMERIC,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "reduce_prod",
        (lax.reduce_prod_p,),
        _reduction(lax.reduce_prod),
        operands((0.5, 2)),
        _np_reduction("prod"),
        NUMERIC,
        grad_dtypes=(F32,),
        tol=2,
    ),
    Case(
        "reduce_max",
        (lax.reduce_max_p,),
        _reduction(lax.reduce_max),
        operands((-9, 9)),
        _np_reduction("max"),
        (*REAL, BOOL),
        grad_dtypes=(F32,),
    ),
    Case(
        "reduce_min",
        (lax.reduce_min_p,),
        _reduction(lax.reduce_min),
        operands((-9, 9)),
        _np_reduction("min"),
        (*REAL, BOOL),
        grad_dtypes=(F32,),
    ),
    Case(
        "reduce_and",
        (lax.reduce_and_p,),
        _reduction(lax.reduce_and),
        operands((-9, 9)),
        _np_reduction("and"),
        (*INTS, BOOL),
    ),
    Case(
        "reduce_or",
        (lax.reduce_or_p,),
        _reduction(lax.reduce_or),
        operands((-9, 9)),
        _np_reduction("or"),
        (*INTS, BOOL),
    ),
    Case(
        "reduce_xor",
        (lax.reduce_xor_p,),
        _reduction(lax.reduce_xor),
        operands((-9, 9)),
        _np_reduction("xor"),
        (*INTS, BOOL),
    ),
    Case(
        "argmax",
        (lax.argmax_p,),
        _arg(lax.argmax),
        operands((-9, 9)),
        _np_arg(np.argmax),
        (*REAL, BOOL),
        shapes=_ARG_SHAPES,
    ),
    Case(
        "argmin",
        (lax.argmin_p,),
        _arg(lax.argmin),
        operands((-9, 9)),
        _np_arg(np.argmin),
        (*REAL, BOOL),
        shapes=_ARG_SHAPES,
    ),
    Case(
        "reduce",
        (lax.reduce_p,),
        _reduce_general,
        operands((-9, 9), (-9, 9)),
        _np_reduce_general,
        (F32, I32),
        grad_dtypes=(F32,),
        jit_grads=True,  # (its jvp differentiates a tree of small steps: one compilation)
    ),
]

# ---------------------------------------------------------------------------
# dot_general


def _dnums(x):
    return {
        0: (((), ()), ((), ())),  # a product of scalars
        2: (((1,), (0,)), ((), ())),  # a matrix product
        3: (((2,), (1,)), ((0,), (0,))),  # batched
    }[x.ndim]


def _dot_make(rng, dtype, shape):
    lhs, rhs = {
        "r0": ((), ()),
        "sz0": ((2, 0), (0, 3)),
        "nd": ((2, 3, 4), (2, 4, 2)),
        "mat": ((2, 3), (3, 4)),
    }[shape]
    return draw(rng, lhs, dtype, -3, 3), draw(rng, rhs, dtype, -3, 3)


def _np_dot(x, y):
    spec = {0: ",->", 2: "ij,jk->ik", 3: "bij,bjk->bik"}[x.ndim]
    out = np.einsum(spec, x, y)
    return out.astype(x.dtype) if x.dtype.kind in "iu" else out


CASES += [
    Case(
        "dot_general",
        (lax.dot_general_p,),
        lambda x, y: lax.dot_general(x, y, _dnums(x)),
        _dot_make,
        _np_dot,
        NUMERIC,
        shapes=("r0", "sz0", "mat", "nd"),
        grad_dtypes=(F32, C64),
        grad_shapes=("r0", "nd"),
        tol=4,
    ),
]

# ---------------------------------------------------------------------------
# Cumulative reductions, sorting, fft


def _cumulative(fun):
    return lambda x: [fun(x, 0), fun(x, x.ndim - 1, reverse=True)]


def _np_cumulative(acc, cast=True):
    def oracle(x):
        def one(axis, reverse):
            y = np.flip(x, axis) if reverse else x
            out = acc(y, axis)
            out = np.flip(out, axis) if reverse else out
            return out.astype(x.dtype) if cast and x.dtype.kind in "biu" else out

        return [one(0, False), one(x.ndim - 1, True)]

    return oracle


def _np_top_k(x):
    order = np.argsort(-x.astype(F64), axis=-1, kind="stable")[..., :2]
    return [np.take_along_axis(x, order, -1), order.astype(I32)]


def _sort_pairs(keys, values):
    return lax.sort((keys, values), dimension=keys.ndim - 1, is_stable=True, num_keys=1)


def _np_sort_pairs(keys, values):
    order = np.argsort(keys, axis=-1, kind="stable")
    return [np.take_along_axis(keys, order, -1), np.take_along_axis(values, order, -1)]


def _fft(x):
    n = x.shape[-1]
    if x.dtype == C64:
        outs = [
            lax.fft(x, "FFT", (n,)),
            lax.fft(x, "IFFT", (n,)),
            lax.fft(x, "IRFFT", (2 * max(n - 1, 1),)),
        ]
        if x.ndim > 1 and x.shape[-2]:
            outs.append(lax.fft(x, "FFT", x.shape[-2:]))
        return outs
    return [lax.fft(x, "RFFT", (n,))]


def _np_fft(x):
    n = x.shape[-1]
    if x.dtype == C128:
        outs = [np.fft.fft(x), np.fft.ifft(x), np.fft.irfft(x, 2 * max(n - 1, 1))]
        if x.ndim > 1 and x.shape[-2]:
            outs.append(np.fft.fft2(x))
        return outs
    return [np.fft.rfft(x)]


CASES += [
    Case(
        "cumsum",
        (lax.cumsum_p,),
        _cumulative(lax.cumsum),
        operands((-3, 3)),
        _np_cumulative(np.cumsum),
        NUMERIC,
        shapes=VECTOR_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "cumprod",
        (lax.cumprod_p,),
        _cumulative(lax.cumprod),
        operands((0.5, 2)),
        _np_cumulative(np.cumprod),
        NUMERIC,
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32, C64),
    ),
    Case(
        "cummax",
        (lax.cummax_p,),
        _cumulative(lax.cummax),
        operands((-9, 9)),
        _np_cumulative(np.maximum.accumulate),
        (*REAL, BOOL),
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "cummin",
        (lax.cummin_p,),
        _cumulative(lax.cummin),
        operands((-9, 9)),
        _np_cumulative(np.minimum.accumulate),
        (*REAL, BOOL),
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "cumlogsumexp",
        (lax.cumlogsumexp_p,),
        _cumulative(lax.cumlogsumexp),
        operands((-3, 3)),
        _np_cumulative(np.logaddexp.accumulate),
        FLOATS,
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "sort",
        (lax.sort_p,),
        lambda x: lax.sort(x, dimension=x.ndim - 1),
        operands((-9, 9)),
        lambda x: np.sort(x, axis=-1),
        ALL,
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "sort_pairs",
        (lax.sort_p,),
        _sort_pairs,
        operands((-3, 3, I32), (-2, 2)),
        _np_sort_pairs,
        (F32, I32, BOOL, C64),
        shapes=VECTOR_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "top_k",
        (lax.top_k_p,),
        lambda x: list(lax.top_k(x, 2)),
        operands((-9, 9)),
        _np_top_k,
        REAL,
        shapes=((3,), (0, 3), (2, 3)),
        grad_dtypes=(F32,),
    ),
    Case(
        "fft",
        (lax.fft_p,),
        _fft,
        operands((-2, 2)),
        _np_fft,
        (F32, C64),
        shapes=((4,), (0, 4), (3, 4)),
        grad_dtypes=(F32, C64),
        tol=4,
    ),
]


# ---------------------------------------------------------------------------
# Indexing: dynamic slices, gather, scatter


def _dyn_sizes(x) -> tuple:
    return tuple(min(2, d) for d in x.shape)


def _dyn_make(update: bool):
    def make(rng, dtype, shape):
        x = draw(rng, shape, dtype)
        starts = tuple(draw(rng, (), I32, -1, 3) for _ in shape)  # some out of range: clamped
        if update:
            return (x, draw(rng, tuple(min(2, d) for d in shape), dtype), *starts)
        return (x, *starts)

    return make


def _clamped(x, sizes, starts):
    # a negative start counts from the end (once), then the slice is clamped into bounds.
    return tuple(
        int(np.clip(i + d if i < 0 else i, 0, d - n)) for i, d, n in zip(starts, x.shape, sizes)
    )


def _np_dynamic_slice(x, *starts):
    sizes = _dyn_sizes(x)
    return x[tuple(slice(i, i + n) for i, n in zip(_clamped(x, sizes, starts), sizes))]


def _np_dynamic_update_slice(x, u, *starts):
    out = x.copy()
    out[tuple(slice(i, i + n) for i, n in zip(_clamped(x, u.shape, starts), u.shape))] = u
    return out


ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
POINTS = lax.GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)
)
S_ROWS = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
S_POINTS = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1)
)

# Shapes of the indexing cases: how many indices (a batch of 0 is the size-0 case), and
# whether they pick rows or points (a single point gives a rank-0 result).
_GATHER_SHAPES = ("point", "none", "rows")


def _gather_make(rng, dtype, shape):
    x = draw(rng, (4, 3), dtype)
    if shape == "point":
        return x, draw(rng, (2,), I32, -1, 4)
    n = 0 if shape == "none" else 5
    return x, draw(rng, (n, 1), I32, -1, 4)


def _gather(x, idx):
    if idx.ndim == 1:
        return lax.gather(x, idx, POINTS, (1, 1), mode="clip")
    return lax.gather(x, idx, ROWS, (1, x.shape[1]), mode="clip")


def _np_gather(x, idx):
    if idx.ndim == 1:
        return x[tuple(np.clip(idx, 0, np.array(x.shape) - 1))]
    return x[np.clip(idx[:, 0], 0, x.shape[0] - 1)]


def _scatter_make(unique: bool):
    def make(rng, dtype, shape):
        x = draw(rng, (4, 3), dtype, 1, 3)
        if shape == "point":
            return (
                x,
                np.array([rng.integers(0, 4), rng.integers(0, 3)], I32),
                draw(rng, (), dtype, 1, 3),
            )
        n = 0 if shape == "none" else 3
        rows = rng.permutation(4)[:n] if unique else rng.integers(0, 4, n)
        return x, rows.astype(I32).reshape(n, 1), draw(rng, (n, 3), dtype, 1, 3)

    return make


def _scatter(fun):
    def f(x, idx, upd):
        if idx.ndim == 1:
            return fun(x, idx, upd, S_POINTS)
        return fun(x, idx, upd, S_ROWS)

    return f


def _np_scatter(ufunc):
    def oracle(x, idx, upd):
        out = x.copy()
        where = tuple(idx) if idx.ndim == 1 else idx[:, 0]
        if ufunc is None:
            out[where] = upd
        else:
            ufunc.at(out, where, upd)
        return out

    return oracle


_SCATTER_ADD = (F32, BF16, F16, I32, U8, C64)

CASES += [
    Case(
        "dynamic_slice",
        (lax.dynamic_slice_p,),
        lambda x, *i: lax.dynamic_slice(x, i, _dyn_sizes(x)),
        _dyn_make(False),
        _np_dynamic_slice,
        ALL,
        shapes=((), (3, 0), (4, 3)),
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "dynamic_update_slice",
        (lax.dynamic_update_slice_p,),
        lambda x, u, *i: lax.dynamic_update_slice(x, u, i),
        _dyn_make(True),
        _np_dynamic_update_slice,
        ALL,
        shapes=((), (3, 0), (4, 3)),
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "gather",
        (lax.gather_p,),
        _gather,
        _gather_make,
        _np_gather,
        ALL,
        shapes=_GATHER_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "scatter",
        (lax.scatter_p,),
        _scatter(lax.scatter),
        _scatter_make(True),
        _np_scatter(None),
        ALL,
        shapes=_GATHER_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "scatter_add",
        (lax.scatter_add_p,),
        _scatter(lax.scatter_add),
        _scatter_make(False),
        _np_scatter(np.add),
        _SCATTER_ADD,
        shapes=_GATHER_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "scatter_sub",
        (lax.scatter_sub_p,),
        _scatter(lax.scatter_sub),
        _scatter_make(False),
        _np_scatter(np.subtract),
        _SCATTER_ADD,
        shapes=_GATHER_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "scatter_mul",
        (lax.scatter_mul_p,),
        _scatter(lax.scatter_mul),
        _scatter_make(False),
        _np_scatter(np.multiply),
        _SCATTER_ADD,
        shapes=_GATHER_SHAPES,
        grad_dtypes=(F32,),
        gmake=_scatter_make(True),
        tol=2,
        gfun=lambda x, i, u: lax.scatter_mul(x, i, u, S_ROWS, unique_indices=True),
    ),
    Case(
        "scatter_max",
        (lax.scatter_max_p,),
        _scatter(lax.scatter_max),
        _scatter_make(False),
        _np_scatter(np.maximum),
        (*REAL, BOOL),
        shapes=_GATHER_SHAPES,
        grad_dtypes=(F32,),
        gmake=_scatter_make(True),
    ),
    Case(
        "scatter_min",
        (lax.scatter_min_p,),
        _scatter(lax.scatter_min),
        _scatter_make(False),
        _np_scatter(np.minimum),
        (*REAL, BOOL),
        shapes=_GATHER_SHAPES,
        grad_dtypes=(F32,),
        gmake=_scatter_make(True),
    ),
]

# ---------------------------------------------------------------------------
# Windowed reductions, convolutions


def _window(x):
    """A 2x2 window with strides (1, 2) and some padding (rank-0: the empty window)."""
    if x.ndim == 0:
        return (), (), ()
    return (2, 2), (1, 2), ((1, 0), (0, 1))


def _np_windows(x, init, window, strides, padding):
    """Each window's values, padded with `init`: an array [*out_shape, window size]."""
    if x.ndim == 0:
        return x[None]
    xp = np.pad(x, padding, constant_values=init)
    out_shape = [max((n - w) // s + 1, 0) for n, w, s in zip(xp.shape, window, strides)]
    out = np.empty((*out_shape, math.prod(window)), x.dtype)
    for o in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + w) for i, s, w in zip(o, strides, window))
        out[o] = xp[sl].reshape(-1)
    return out


def _reduce_window(kind):
    computation = {"sum": lax.add, "max": lax.max, "min": lax.min, "mul": lax.mul}[kind]

    def f(x):
        init = np.asarray(_identity("prod" if kind == "mul" else kind, x.dtype), x.dtype)
        return lax.reduce_window(x, init, computation, *_window(x))

    return f


def _np_reduce_window(kind):
    ufunc = {"sum": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}[kind]

    def oracle(x):
        init = _identity("prod" if kind == "mul" else kind, x.dtype)
        return ufunc.reduce(_np_windows(x, init, *_window(x)), axis=-1).astype(x.dtype)

    return oracle


_WINDOW_SHAPES = ((), (0, 3), (4, 5))


def _select_and_scatter_add(source, x):
    return lax.select_and_scatter_add(source, x, lax.ge_p, (2, 2), (2, 2), ((0, 0), (0, 0)))


def _np_select_and_scatter_add(source, x):
    out = np.zeros(x.shape, source.dtype)
    for o in np.ndindex(*source.shape):
        win = x[2 * o[0] : 2 * o[0] + 2, 2 * o[1] : 2 * o[1] + 2]
        i, j = np.unravel_index(np.argmax(win), win.shape)
        out[2 * o[0] + i, 2 * o[1] + j] += source[o]
    return out


def _sas_make(rng, dtype, shape):
    x = draw(rng, shape, dtype, -9, 9)
    return draw(rng, (shape[0] // 2, shape[1] // 2), dtype), x


_WINDOW_PARAMS = dict(
    window_dimensions=(2, 2),
    window_strides=(1, 2),
    padding=((1, 0), (0, 1)),
    base_dilation=(1, 1),
    window_dilation=(1, 1),
)


def _select_and_gather_add(t, x):
    return lax.select_and_gather_add_p.bind(t, x, select_prim=lax.ge_p, **_WINDOW_PARAMS)


def _np_select_and_gather_add(t, x):
    window = _WINDOW_PARAMS["window_dimensions"], _WINDOW_PARAMS["window_strides"]
    xs = _np_windows(x, -np.inf, *window, _WINDOW_PARAMS["padding"])
    ts = _np_windows(t, 0, *window, _WINDOW_PARAMS["padding"])
    pick = np.argmax(xs, axis=-1)[..., None]
    return np.take_along_axis(ts, pick, -1)[..., 0]


def _conv_make(rng, dtype, shape):
    lhs, rhs = {
        "1d": ((2, 3, 5), (4, 3, 2)),
        "2d": ((1, 2, 4, 5), (3, 2, 2, 2)),
        "empty": ((0, 3, 5), (4, 3, 2)),
    }[shape]
    return draw(rng, lhs, dtype, -3, 3), draw(rng, rhs, dtype, -3, 3)


def _conv(lhs, rhs):
    nd = lhs.ndim - 2
    return lax.conv_general_dilated(lhs, rhs, (2,) * nd, [(1, 0)] * nd)


def _np_conv(lhs, rhs):
    """Cross-correlation, NC(spatial) x OI(spatial), strides 2, padding (1, 0)."""
    nd = lhs.ndim - 2
    xp = np.pad(lhs, [(0, 0), (0, 0)] + [(1, 0)] * nd)
    window = rhs.shape[2:]
    out_sp = [(n - w) // 2 + 1 for n, w in zip(xp.shape[2:], window)]
    out = np.zeros((lhs.shape[0], rhs.shape[0], *out_sp), np.result_type(lhs, rhs))
    for o in np.ndindex(*out_sp):
        patch = xp[
            (slice(None), slice(None), *(slice(2 * i, 2 * i + w) for i, w in zip(o, window)))
        ]
        out[(slice(None), slice(None), *o)] = (
            patch.reshape(len(patch), math.prod(patch.shape[1:])) @ rhs.reshape(len(rhs), -1).T
        )
    return out.astype(lhs.dtype) if lhs.dtype.kind in "iu" else out


CASES += [
    Case(
        "reduce_window_sum",
        (lax.reduce_window_sum_p,),
        _reduce_window("sum"),
        operands((-3, 3)),
        _np_reduce_window("sum"),
        (*FLOATS, *INTS, C64),
        shapes=_WINDOW_SHAPES,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "reduce_window_max",
        (lax.reduce_window_max_p,),
        _reduce_window("max"),
        operands((-9, 9)),
        _np_reduce_window("max"),
        (*REAL, BOOL),
        shapes=_WINDOW_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "reduce_window_min",
        (lax.reduce_window_min_p,),
        _reduce_window("min"),
        operands((-9, 9)),
        _np_reduce_window("min"),
        (*REAL, BOOL),
        shapes=_WINDOW_SHAPES,
        grad_dtypes=(F32,),
    ),
    Case(
        "reduce_window",
        (lax.reduce_window_p,),
        _reduce_window("mul"),
        operands((0.5, 2)),
        _np_reduce_window("mul"),
        (F32, I32, C64),
        shapes=_WINDOW_SHAPES,
    ),
    Case(
        "select_and_scatter_add",
        (lax.select_and_scatter_add_p,),
        _select_and_scatter_add,
        _sas_make,
        _np_select_and_scatter_add,
        (F32, BF16, I32),
        shapes=((0, 4), (4, 6)),
        grad_dtypes=(F32,),
        wrt=(0,),
    ),
    Case(
        "select_and_gather_add",
        (lax.select_and_gather_add_p,),
        _select_and_gather_add,
        operands((-9, 9), (-9, 9)),
        _np_select_and_gather_add,
        (F32, BF16, F16),
        shapes=((0, 3), (4, 5)),
        grad_dtypes=(F32,),
        wrt=(0,),
    ),
    Case(
        "conv_general_dilated",
        (lax.conv_general_dilated_p,),
        _conv,
        _conv_make,
        _np_conv,
        (F32, BF16, F16, I32, C64),
        shapes=("empty", "1d", "2d"),
        grad_dtypes=(C64,),  # (float32: test_convolution)
        tol=4,
    ),
]

# ---------------------------------------------------------------------------
# Control flow


# Bodies at module level: a cond, while or scan traces its functions once and reuses the
# jaxpr (and so the compiled executable) for every eager call with the same types.
def _square(v):
    return lax.mul(v, v)


def _twice(v):
    return lax.add(v, v)


def _identity_fn(v):
    return v


def _cond(p, x):
    return lax.cond(p, _square, _twice, x)


def _switch(i, x):
    return lax.switch(i, [_identity_fn, _square, _twice], x)


def _while_cond(c):
    return lax.lt(c[0], c[1])


def _while_body(c):
    i, n, v = c
    return lax.add(i, np.int32(1)), n, lax.sub(lax.mul(v, v), v)


def _while(n, x):
    # a data-dependent trip count: under vmap the examples stop at different steps.
    return lax.while_loop(_while_cond, _while_body, (np.int32(0), n, x))[2]


def _np_while(n, x):
    for _ in range(int(n)):
        x = x * x - x
    return x


def _scan_body(c, x):
    return lax.add(c, x), lax.mul(c, x)


def _scan(c, xs):
    return list(lax.scan(_scan_body, c, xs)) + list(lax.scan(_scan_body, c, xs, reverse=True))


def _refs(x, y):
    # new_ref, get and swap (`+=`), addupdate and freeze on one reference.
    r = state.new_ref(x)
    r[...] += y
    state.addupdate(r, ..., x * y)
    return state.freeze(r)


def _np_scan(c, xs):
    def run(c, seq):
        ys = []
        for x in seq:
            c, y = c + x, c * x
            ys.append(y)
        return c, ys

    c1, ys1 = run(c, xs)
    c2, ys2 = run(c, xs[::-1])
    stack = lambda ys: np.stack(ys) if ys else np.zeros(xs.shape, xs.dtype)  # noqa: E731
    return [c1, stack(ys1), c2, stack(ys2[::-1])]


def _lu_solve(a, y, transpose=False):
    """``a^{-1} y`` (``a^{-T} y`` when `transpose`) by LU: a direct solver for
    `custom_linear_solve`, which never differentiates it."""
    lu_, _, perm = linalg.lu(a)
    n = a.shape[-1]
    # p @ a == l @ u, with p[i, perm[i]] = 1.
    rows = lax.broadcast_in_dim(perm, (n, n), (0,))
    p = lax.convert_element_type(lax.eq(rows, lax.broadcasted_iota(np.int32, (n, n), 1)), a.dtype)
    if not transpose:
        y = lax.dot(p, y)
        y = linalg.triangular_solve(lu_, y, left_side=True, lower=True, unit_diagonal=True)
        return linalg.triangular_solve(lu_, y, left_side=True, lower=False)
    # a^T = u^T l^T p
    y = linalg.triangular_solve(lu_, y, left_side=True, lower=False, transpose_a=True)
    y = linalg.triangular_solve(
        lu_, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True
    )
    return lax.dot(lax.transpose(p, (1, 0)), y)


def _linear_solve(a, b):
    return lax.custom_linear_solve(
        lambda x: lax.dot(a, x),
        b,
        solve=lambda _, y: _lu_solve(a, y),
        transpose_solve=lambda _, y: _lu_solve(a, y, transpose=True),
    )


def _linear_solve_make(rng, dtype, shape):
    n = shape[-1]
    a = draw(rng, shape, dtype, -1, 1) + n * np.eye(n, dtype=dtype)  # well conditioned
    return a.astype(dtype), draw(rng, (n, 2), dtype, -1, 1)


CASES += [
    Case(
        "cond",
        (lax.cond_p,),
        _cond,
        lambda rng, dt, s: (draw(rng, (), BOOL), draw(rng, s, dt, -2, 2)),
        lambda p, x: np.where(p, x * x, x + x).astype(x.dtype),
        NUMERIC,
        grad_dtypes=(F32,),
        jit_grads=True,
    ),
    Case(
        "switch",
        (lax.cond_p,),
        _switch,
        lambda rng, dt, s: (draw(rng, (), I32, -1, 3), draw(rng, s, dt, -2, 2)),
        lambda i, x: [x, x * x, x + x][int(np.clip(i, 0, 2))].astype(x.dtype),
        (F32, I32, C64),
        grad_dtypes=(F32,),
        jit_grads=True,
    ),
    Case(
        "while",
        (lax.while_p,),
        _while,
        lambda rng, dt, s: (draw(rng, (), I32, 0, 3), draw(rng, s, dt, -1, 1)),
        _np_while,
        (*FLOATS, I32, U8, C64),
        grad_dtypes=(F32,),
        modes=("fwd",),
        tol=4,
        jit_grads=True,
    ),  # reverse mode of while_loop is not defined (as in JAX)
    Case(
        "scan",
        (lax.scan_p,),
        _scan,
        lambda rng, dt, s: (draw(rng, s, dt, -1, 1), draw(rng, (3, *s), dt, -1, 1)),
        _np_scan,
        NUMERIC,
        grad_dtypes=(F32,),
        jit_grads=True,
    ),
    Case(
        "refs",
        tuple(
            getattr(state_prims, f"{n}_p")
            for n in ("new_ref", "get", "swap", "addupdate", "freeze")
        ),
        _refs,
        lambda rng, dt, s: (draw(rng, s, dt, -2, 2), draw(rng, s, dt, -2, 2)),
        lambda x, y: (x + y + x * y).astype(x.dtype),
        (F32, I32, C64),
        grad_dtypes=(F32,),
    ),
    Case(
        "scan_length0",
        (lax.scan_p,),
        _scan,
        lambda rng, dt, s: (draw(rng, s, dt, -1, 1), draw(rng, (0, *s), dt, -1, 1)),
        _np_scan,
        (F32, I32),
        shapes=((), (2, 3)),
    ),
    Case(
        "custom_linear_solve",
        (lax.custom_linear_solve_p,),
        _linear_solve,
        _linear_solve_make,
        np.linalg.solve,
        (F32, C64),
        shapes=((0, 0), (3, 3)),
        grad_dtypes=(F32, C64),
        tol=10,
        jit_grads=True,
    ),
    Case(
        "optimization_barrier",
        (lax.optimization_barrier_p,),
        lambda x, y, i: list(lax.optimization_barrier((x, y, i))),
        operands((-2, 2), (-2, 2), (-5, 5, I32)),
        lambda x, y, i: [x, y, i],
        ALL,
        grad_dtypes=LINEAR_GRADS,
        gfun=lambda x, y, i: list(lax.optimization_barrier((x, y, i))[:2]),
        wrt=(0, 1),  # the integer operand passes through with a symbolic-zero tangent
    ),
    Case(
        # On one device the constraint places the value there (multi-device layouts:
        # the interpreters, sharding and integration md_*.py tests).
        "sharding_constraint",
        (lax.sharding_constraint_p,),
        lambda x: lax.with_sharding_constraint(x, _one_device()),
        operands((-2, 2)),
        lambda x: x,
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
]


def _one_device():
    from polyjax_interpreters import backends
    from polyjax_interpreters.sharding import SingleDeviceSharding

    return SingleDeviceSharding(backends.devices()[0])


# ---------------------------------------------------------------------------
# Collectives: over the named axis of an inner vmap (3 positions); the outer vmap of the
# check batches them over an unnamed axis.


def _named(fun):
    return lambda x: vmap(lambda v: fun(v, "i"), axis_name="i")(x)


def _collective_make(per: tuple = ()):
    return lambda rng, dt, s: (draw(rng, (3, *per, *s), dt, -9, 9),)


def _np_bcast(reduce):
    return lambda x: np.broadcast_to(reduce(x, axis=0), x.shape).astype(x.dtype)


def _on_this_platform(x):
    # `platform_dependent` picks the `cpu` branch on CPU and `default` elsewhere.
    from polyjax_interpreters import backends

    return x * 2 if backends.default_backend() == "cpu" else x + 1


CASES += [
    Case(
        "pvary",
        (lax.pvary_p,),
        _named(lambda v, ax: lax.pcast(v, ax, to="varying")),
        _collective_make(),
        lambda x: x,
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "platform_index",
        (lax.platform_index_p,),
        lambda x: lax.platform_dependent(x, cpu=lambda v: v * 2, default=lambda v: v + 1),
        operands((-2, 2)),
        _on_this_platform,
        NUMERIC,
        grad_dtypes=(F32,),
    ),
    Case(
        "psum",
        (lax.psum_p,),
        _named(lax.psum),
        _collective_make(),
        _np_bcast(np.sum),
        NUMERIC,
        grad_dtypes=LINEAR_GRADS,
        tol=2,
    ),
    Case(
        "pmax",
        (lax.pmax_p,),
        _named(lax.pmax),
        _collective_make(),
        _np_bcast(np.max),
        REAL,
        grad_dtypes=(F32,),
    ),
    Case(
        "pmin",
        (lax.pmin_p,),
        _named(lax.pmin),
        _collective_make(),
        _np_bcast(np.min),
        REAL,
        grad_dtypes=(F32,),
    ),
    Case(
        "all_gather",
        (lax.all_gather_p,),
        _named(lax.all_gather),
        _collective_make(),
        lambda x: np.broadcast_to(x, (3, *x.shape)),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "all_to_all",
        (lax.all_to_all_p,),
        _named(lambda v, name: lax.all_to_all(v, name, 0, 0)),
        _collective_make((3,)),
        lambda x: np.swapaxes(x, 0, 1),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "ppermute",
        (lax.ppermute_p,),
        _named(lambda v, name: lax.ppermute(v, name, [(0, 1), (1, 2), (2, 0)])),
        _collective_make(),
        lambda x: np.roll(x, 1, axis=0),
        ALL,
        grad_dtypes=LINEAR_GRADS,
    ),
    Case(
        "reduce_scatter",
        (lax.reduce_scatter_p,),
        _named(lambda v, name: lax.psum_scatter(v, name)),
        _collective_make((3,)),
        lambda x: np.sum(x, axis=0).astype(x.dtype),
        NUMERIC,
        grad_dtypes=LINEAR_GRADS,
        tol=2,
    ),
    Case(
        "axis_index",
        (lax.axis_index_p,),
        _named(lambda v, name: lax.add(lax.convert_element_type(lax.axis_index(name), v.dtype), v)),
        _collective_make(),
        lambda x: (x + np.arange(3).reshape(-1, *[1] * (x.ndim - 1))).astype(x.dtype),
        (F32, I32),
        grad_dtypes=(F32,),
    ),
]

# ---------------------------------------------------------------------------
# Random bits


_MASK = 0xFFFFFFFF


def _np_threefry(k1, k2, x1, x2):
    """Threefry-2x32 with 20 rounds (Salmon et al., 2011), on 64-bit words."""
    k1, k2, x1, x2 = (np.asarray(v).astype(np.uint64) for v in (k1, k2, x1, x2))
    keys = (k1, k2, k1 ^ k2 ^ np.uint64(0x1BD11BDA))
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    x1, x2 = (x1 + keys[0]) & _MASK, (x2 + keys[1]) & _MASK
    for i in range(5):
        for r in rot[i % 2]:
            x1 = (x1 + x2) & _MASK
            x2 = ((x2 << np.uint64(r)) | (x2 >> np.uint64(32 - r))) & _MASK
            x2 = x2 ^ x1
        x1 = (x1 + keys[(i + 1) % 3]) & _MASK
        x2 = (x2 + keys[(i + 2) % 3] + np.uint64(i + 1)) & _MASK
    return [x1.astype(U32), x2.astype(U32)]


def _threefry_make(rng, dtype, shape):
    words = lambda s: rng.integers(0, 2**32, s, dtype=np.uint64).astype(U32)  # noqa: E731
    return words(()), words(()), words(shape), words(shape)


def _rng_bits(shape, dtype):
    return lambda key: list(lax.rng_bit_generator(key, shape, dtype))


def _rng_check(shape, dtype):
    def check(args, out):
        (key,), (new_key, bits) = args, out
        assert np.asarray(bits).shape == shape and np.asarray(bits).dtype == dtype
        assert np.asarray(new_key).dtype == U32 and np.asarray(new_key).shape == (4,)
        if math.prod(shape) > 8:  # random bits, and a new state
            assert len(np.unique(np.asarray(bits))) > 1
            assert not np.array_equal(new_key, key)

    return check


def _key_make(rng, dtype, shape):
    return (rng.integers(0, 2**32, (4,), dtype=np.uint64).astype(U32),)


CASES += [
    Case(
        "threefry2x32",
        (lax.threefry2x32_p,),
        lambda *a: list(lax.threefry2x32(*a)),
        _threefry_make,
        _np_threefry,
        (U32,),
        wide=False,
    ),
    Case(
        "rng_bit_generator",
        (lax.rng_bit_generator_p,),
        _rng_bits((4, 5), U32),
        _key_make,
        None,
        (U32,),
        shapes=("key",),
        check=_rng_check((4, 5), U32),
    ),
    Case(
        "rng_bit_generator_u8",
        (lax.rng_bit_generator_p,),
        _rng_bits((0, 3), U8),
        _key_make,
        None,
        (U32,),
        shapes=("key",),
        check=_rng_check((0, 3), U8),
    ),
]

# ---------------------------------------------------------------------------
# Linear algebra (`lax.linalg`): matrices [..., n, n] (a batch of 2, and n = 0 for size-0)

_MATRICES = ((0, 0), (3, 3), (2, 3, 3))


def _spd(rng, dtype, shape):
    b = draw(rng, shape, dtype, -1, 1)
    n = shape[-1]
    a = b @ np.conj(np.swapaxes(b, -1, -2)) + n * np.eye(n, dtype=dtype)
    return (a.astype(dtype),)


def _tri_make(rng, dtype, shape):
    n = shape[-1]
    a = np.tril(draw(rng, shape, dtype, -1, 1)) + 2 * np.eye(n, dtype=dtype)
    return a.astype(dtype), draw(rng, (*shape[:-1], 2), dtype, -1, 1)


def _np_batched(fun, n_out=1):
    """`fun` of unbatched matrices mapped over the leading axes."""

    def oracle(*args):
        lead = args[0].shape[:-2]
        if not lead:
            return fun(*args)
        outs = [fun(*(a[i] for a in args)) for i in np.ndindex(*lead)]
        if n_out == 1:
            return np.stack(outs).reshape(*lead, *np.shape(outs[0]))
        return [np.stack(o).reshape(*lead, *np.shape(o[0])) for o in zip(*outs)]

    return oracle


def _np_lu(x):
    if x.shape[-1] == 0:
        return [x, np.zeros(0, I32), np.zeros(0, I32)]
    lu_, piv = scipy.linalg.lu_factor(x)
    perm = list(range(x.shape[0]))
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return [lu_, piv.astype(I32), np.asarray(perm, I32)]


def _eigh_check(args, out):
    (a,), (v, w) = args, out
    v, w = np.asarray(v, C128), np.asarray(w, F64)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-4, atol=1e-4)


def _schur_check(args, out):
    """`a = z t z^H` with `z` unitary and `t` (quasi) upper triangular."""
    (a,), (t, z) = args, out
    a, t, z = (np.asarray(v, C128) for v in (a, t, z))
    tol = dict(rtol=1e-4, atol=1e-4)
    z_h = np.conj(np.swapaxes(z, -1, -2))
    np.testing.assert_allclose(z @ t @ z_h, a, **tol)
    np.testing.assert_allclose(z_h @ z, np.broadcast_to(np.eye(a.shape[-1]), a.shape), **tol)
    below = -2 if np.isrealobj(args[0]) else -1
    assert np.all(np.tril(t, below) == 0)


def _hessenberg_check(args, out):
    """The packed result's Hessenberg part is `q^H a q` for the `q` its reflectors make."""
    (a,), (packed, taus) = args, out
    a, packed, taus = (np.asarray(v, C128) for v in (a, packed, taus))
    n = a.shape[-1]
    for idx in np.ndindex(a.shape[:-2]):
        q = np.eye(n, dtype=C128)
        for i in range(n - 1):
            v = np.zeros(n, C128)
            v[i + 1] = 1
            v[i + 2 :] = packed[idx][i + 2 :, i]
            q = q @ (np.eye(n) - taus[idx][i] * np.outer(v, np.conj(v)))
        h = np.triu(packed[idx], -1)
        np.testing.assert_allclose(q @ h @ np.conj(q.T), a[idx], rtol=1e-4, atol=1e-4)


def _eig_check(args, out):
    """Eigenvectors are unique only up to scale (and order): check the defining
    equations, their unit norm, and the eigenvalues as sorted sets against NumPy."""
    (a,), (w, vl, vr) = args, out
    a, w, vl, vr = (np.asarray(v, C128) for v in (a, w, vl, vr))
    tol = dict(rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], **tol)
    vl_h = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vl_h @ a, w[..., :, None] * vl_h, **tol)
    for v in (vl, vr):
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), np.ones(w.shape), **tol)
    want = np.linalg.eigvals(a) if a.shape[-1] else np.zeros(w.shape, C128)
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(want), rtol=1e-3, atol=1e-3)


def _svd_check(args, out):
    (a,), (u, s, vh) = args, out
    u, s, vh = np.asarray(u, C128), np.asarray(s, F64), np.asarray(vh, C128)
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-4, atol=1e-4)


def _qr_check(args, out):
    (a,), (q, r) = args, out
    q, r = np.asarray(q, C128), np.asarray(r, C128)
    np.testing.assert_allclose(q @ r, a, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.triu(r), r, atol=0)
    eye = np.broadcast_to(np.eye(q.shape[-1]), (*q.shape[:-2], q.shape[-1], q.shape[-1]))
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, eye, atol=1e-4)


def _np_raw_qr(x):
    if x.shape[-1] == 0:
        return [x, np.zeros(0, x.dtype)]
    (a, tau), _ = scipy.linalg.qr(x, mode="raw")
    return [a, tau]


def _householder_make(rng, dtype, shape):
    x = draw(rng, shape, dtype, -1, 1)
    out = _np_batched(_np_raw_qr, 2)(x)
    return out[0].astype(dtype), out[1].astype(dtype)


def _np_householder(a, tau):
    if a.shape[-1] == 0:
        return a
    orgqr = scipy.linalg.lapack.zungqr if a.dtype.kind == "c" else scipy.linalg.lapack.dorgqr
    q, _, info = orgqr(a, tau)
    assert info == 0
    return q


def _tridiag_make(rng, dtype, shape):
    dl, du = draw(rng, shape, dtype, -1, 1), draw(rng, shape, dtype, -1, 1)
    d = draw(rng, shape, dtype, 3, 4)  # diagonally dominant
    return dl, d, du, draw(rng, (*shape, 2), dtype, -1, 1)


def _np_tridiag(dl, d, du, b):
    m = d.shape[-1]
    a = np.zeros((*d.shape, m), d.dtype)
    idx = np.arange(m)
    a[..., idx, idx] = d
    a[..., idx[1:], idx[:-1]] = dl[..., 1:]
    a[..., idx[:-1], idx[1:]] = du[..., :-1]
    return np.linalg.solve(a, b) if m else b


CASES += [
    Case(
        "cholesky",
        (linalg.cholesky_p,),
        linalg.cholesky,
        _spd,
        _np_batched(np.linalg.cholesky),
        (F32, C64),
        shapes=_MATRICES,
        grad_dtypes=(F32, C64),
        grad_shapes=((3, 3),),
        tol=10,
    ),
    Case(
        "triangular_solve",
        (linalg.triangular_solve_p,),
        lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=True),
        _tri_make,
        _np_batched(lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True)),
        (F32, C64),
        shapes=_MATRICES,
        grad_dtypes=(F32, C64),
        grad_shapes=((3, 3),),
        tol=10,
    ),
    Case(
        "lu",
        (linalg.lu_p,),
        lambda x: list(linalg.lu(x)),
        operands((-1, 1)),
        _np_batched(_np_lu, 3),
        (F32, C64),
        shapes=_MATRICES,
        grad_dtypes=(F32, C64),
        grad_shapes=((3, 3),),
        gfun=lambda x: linalg.lu(x)[0],
        tol=10,
    ),
    Case(
        "eigh",
        (linalg.eigh_p,),
        lambda x: list(linalg.eigh(x)),
        _spd,
        None,
        (F32, C64),
        shapes=_MATRICES,
        check=_eigh_check,
        grad_dtypes=(F32, C64),
        grad_shapes=((3, 3),),
        gfun=lambda x: linalg.eigh(x)[1],
        tol=10,
    ),
    Case(
        "eig",
        (linalg.eig_p,),
        lambda x: list(linalg.eig(x)),
        operands((-1, 1)),
        None,
        (F32, C64),
        shapes=_MATRICES,
        check=_eig_check,
        grad_dtypes=(F32, C64),
        grad_shapes=((3, 3),),
        # the eigenvalues only: eigenvector derivatives are opt-in (enable_eigvec_derivs),
        # being defined only for distinct eigenvalues; test_linalg checks them.
        gfun=lambda x: linalg.eig(
            x, compute_left_eigenvectors=False, compute_right_eigenvectors=False
        )[0],
        tol=10,
    ),
    Case(
        "schur",
        (linalg.schur_p,),
        lambda x: list(linalg.schur(x)),
        operands((-1, 1)),
        None,
        (F32, C64),
        shapes=_MATRICES,
        check=_schur_check,
    ),
    Case(
        "hessenberg",
        (linalg.hessenberg_p,),
        lambda x: list(linalg.hessenberg(x)),
        operands((-1, 1)),
        None,
        (F32, C64),
        shapes=_MATRICES,
        check=_hessenberg_check,
    ),
    Case(
        "qr",
        (linalg.qr_p,),
        lambda x: list(linalg.qr(x, full_matrices=False)),
        operands((-1, 1)),
        None,
        (F32, C64),
        shapes=((0, 0), (4, 3), (2, 3, 4)),
        check=_qr_check,
        grad_dtypes=(F32, C64),
        grad_shapes=((4, 3),),
        tol=10,
    ),
    Case(
        "geqrf",
        (linalg.geqrf_p,),
        lambda x: list(linalg.geqrf_p.bind(x)),
        operands((-1, 1)),
        _np_batched(_np_raw_qr, 2),
        (F32, C64),
        shapes=((0, 0), (4, 3), (2, 3, 4)),
        tol=10,
    ),
    Case(
        "householder_product",
        (linalg.householder_product_p,),
        linalg.householder_product,
        _householder_make,
        _np_batched(_np_householder),
        (F32, C64),
        shapes=((0, 0), (4, 3), (2, 3, 3)),
        tol=10,
    ),
    Case(
        "svd",
        (linalg.svd_p,),
        lambda x: list(linalg.svd(x, full_matrices=False)),
        operands((-1, 1)),
        None,
        (F32, C64),
        shapes=((0, 0), (4, 3), (2, 3, 4)),
        check=_svd_check,
        grad_dtypes=(F32, C64),
        grad_shapes=((4, 3),),
        gfun=lambda x: linalg.svd(x, compute_uv=False),
        tol=10,
    ),
    Case(
        "tridiagonal_solve",
        (linalg.tridiagonal_solve_p,),
        linalg.tridiagonal_solve,
        _tridiag_make,
        _np_batched(_np_tridiag),
        (F32, C64),
        shapes=((0,), (4,), (2, 4)),
        grad_dtypes=(F32, C64),
        grad_shapes=((4,),),
        tol=10,
    ),
]


def _ragged_shift(v, name):
    """Receiver `r` gets row ``(r + j) % 3`` of sender `j` at row `j` (3 positions)."""
    j = lax.axis_index(name)
    slots = lax.iota(np.int32, 3)
    in_off = lax.rem(slots + j, np.int32(3))
    ones = lax.full((3,), 1, np.int32)
    out_off = lax.full((3,), 0, np.int32) + j
    return lax.ragged_all_to_all(
        v, lax.full_like(v, 0), in_off, ones, out_off, ones, axis_name=name
    )


def _np_ragged_shift(x):
    out = np.zeros_like(x)
    for r in range(3):
        for j in range(3):
            out[r, j] = x[j, (r + j) % 3]
    return out


CASES += [
    Case(
        "ragged_all_to_all",
        (lax.ragged_all_to_all_p,),
        _named(_ragged_shift),
        _collective_make((4,)),
        _np_ragged_shift,
        (F32,),
        shapes=((),),
        grad_dtypes=(F32,),
        order=1,
    ),
]


def _approx_both(x):
    return [*lax.approx_max_k(x, 2), *lax.approx_min_k(x, 2, reduction_dimension=0)]


def _np_approx_both(x):
    desc = np.argsort(-x, axis=-1, kind="stable")[..., :2]
    asc = np.argsort(x, axis=0, kind="stable")[:2]
    return [
        np.take_along_axis(x, desc, -1),
        desc.astype(I32),
        np.take_along_axis(x, asc, 0),
        asc.astype(I32),
    ]


CASES += [
    Case(
        "approx_top_k",
        (lax.approx_top_k_p,),
        _approx_both,
        operands((-2, 2)),
        _np_approx_both,
        (F32,),
        shapes=((4, 3),),
        grad_dtypes=(F32,),
        order=1,
        gfun=lambda x: lax.approx_max_k(x, 2)[0],
    ),
]


def _np_stack_unstack(x):
    return [np.tile(x, (2, 1, 3)[: x.ndim]), np.stack([x, x], axis=1), *np.moveaxis(x, 1, 0)]


CASES += [
    Case(
        "tile_stack_unstack",
        (lax.tile_p, lax.stack_p, lax.unstack_p),
        lambda x: [
            lax.tile(x, (2, 1, 3)[: x.ndim]),
            lax.stack([x, x], axis=1),
            *lax.unstack(x, axis=1),
        ],  # fmt: skip
        operands((-2, 2)),
        _np_stack_unstack,
        (F32, BOOL),
        shapes=((2, 3, 0), (1, 2, 2)),
        grad_dtypes=(F32,),
        order=1,
    ),
]


def _general_select_and_scatter(source, x):
    from polyjax_numpy.lax._windowed import _select_and_scatter

    pads = ((0, 0), (0, 0))
    return _select_and_scatter(x, lax.ge, (2, 2), (2, 2), pads, source, 0, lax.add)


CASES += [
    Case(
        "select_and_scatter",
        (lax.select_and_scatter_p,),
        _general_select_and_scatter,
        _sas_make,
        _np_select_and_scatter_add,
        (F32,),
        shapes=((4, 6),),
    ),
]


# --- identities with a meaning, and the dimension comparisons


def _tokens_made(x):
    lax.after_all(lax.create_token(x), lax.create_token())
    return x


CASES += [
    unary(
        "tokens",
        _tokens_made,
        lambda x: x,
        (F32, I32),
        prims=(lax.create_token_p, lax.after_all_p),
    ),
]


def _dce_sunk(x):
    lax.dce_sink(x, prevent_mlir_dce=True)
    return x


CASES += [
    unary("copy", lax.copy_p.bind, lambda x: x, (F32, I32), prims=(lax.copy_p,)),
    unary("dce_sink", _dce_sunk, lambda x: x, (F32, I32), prims=(lax.dce_sink_p,)),
    unary(
        "stop_gradient",
        lax.stop_gradient,
        lambda x: x,
        (F32, I32),
        prims=(lax.stop_gradient_p,),
        grad=(),
    ),
    Case(
        "dimension_comparisons",
        (lax.eq_to_p, lax.le_to_p, lax.lt_to_p),
        lambda x, y: [lax.eq_to_p.bind(x, y), lax.le_to_p.bind(x, y), lax.lt_to_p.bind(x, y)],
        operands((-1, 1), (-1, 1)),
        lambda x, y: [np.equal(x, y), np.less_equal(x, y), np.less(x, y)],
        (I32,),
        shapes=((), (2, 3)),
    ),
]


# --- lax.linalg's reflector, rank-update and permutation primitives


def _np_tridiagonal(a, lower=True):
    """LAPACK's own ``sytrd``/``hetrd`` (through SciPy): the same packed result."""
    n = a.shape[-1]
    if n == 0:
        real = np.finfo(a.dtype).dtype
        return [a, np.zeros(0, real), np.zeros(0, real), np.zeros(0, a.dtype)]
    fn = scipy.linalg.lapack.zhetrd if a.dtype.kind == "c" else scipy.linalg.lapack.dsytrd
    out, d, e, tau, info = fn(a, lower=int(lower))
    assert info == 0
    return [out, d, e, tau]


def _np_full_q(a, tau):
    """``Q = H_1 ... H_k`` (``m x m``) from packed reflectors."""
    m = a.shape[-2]
    q = np.eye(m, dtype=a.dtype)
    for i in range(tau.shape[-1]):
        v = np.zeros(m, a.dtype)
        v[i] = 1
        v[i + 1 :] = a[i + 1 :, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, np.conj(v)))
    return q


def _ormqr_make(rng, dtype, shape):
    a, taus = _householder_make(rng, dtype, shape)
    return a, taus, draw(rng, shape, dtype, -1, 1)


def _np_ormqr_both(a, tau, c):
    q = _np_full_q(a, tau)
    return [q @ c, c @ np.conj(q.T)]


def _cholesky_update_make(rng, dtype, shape):
    (a,) = _spd(rng, dtype, shape)
    r = np.swapaxes(np.linalg.cholesky(a.astype(F64)), -1, -2).astype(dtype)
    return r, draw(rng, shape[:-1], dtype, -1, 1)


def _np_cholesky_update(r, w):
    a = np.swapaxes(r, -1, -2) @ r + w[..., :, None] * w[..., None, :]
    return np.swapaxes(np.linalg.cholesky(a), -1, -2) if a.shape[-1] else a


def _symmetric_product_make(rng, dtype, shape):
    c = draw(rng, shape, dtype, -1, 1)
    return draw(rng, (*shape[:-1], 2), dtype, -1, 1), c + np.swapaxes(c, -1, -2)


def _np_symmetric_product(a, c):
    return 2.0 * a @ np.swapaxes(a, -1, -2) + 0.5 * c


def _pivots_make(rng, dtype, shape):
    k = shape[-1]
    return (((rng.integers(0, k + 1, shape) % (k + 1 - np.arange(k))) + np.arange(k)).astype(I32),)


def _np_pivots_to_permutation(pivots):
    k = pivots.shape[-1]
    perm = np.broadcast_to(np.arange(k + 1, dtype=I32), (*pivots.shape[:-1], k + 1)).copy()
    for idx in np.ndindex(pivots.shape[:-1]):
        for i, j in enumerate(pivots[idx]):
            perm[idx][[i, j]] = perm[idx][[j, i]]
    return perm


CASES += [
    Case(
        "tridiagonal",
        (linalg.tridiagonal_p,),
        lambda a: [*linalg.tridiagonal(a), *linalg.tridiagonal(a, lower=False)],
        _spd,
        lambda a: [
            *_np_batched(_np_tridiagonal, 4)(a),
            *_np_batched(lambda x: _np_tridiagonal(x, lower=False), 4)(a),
        ],
        (F32, C64),
        shapes=((0, 0), (2, 3, 3)),
        tol=10,
    ),
    Case(
        "ormqr",
        (linalg.ormqr_p,),
        lambda a, t, c: [linalg.ormqr(a, t, c), linalg.ormqr(a, t, c, left=False, transpose=True)],
        _ormqr_make,
        _np_batched(_np_ormqr_both, 2),
        (F32, C64),
        shapes=((0, 0), (2, 3, 3)),
        tol=10,
    ),
    Case(
        "cholesky_update",
        (linalg.cholesky_update_p,),
        linalg.cholesky_update,
        _cholesky_update_make,
        _np_batched(_np_cholesky_update),
        (F32,),
        shapes=((0, 0), (2, 3, 3)),
        tol=10,
    ),
    Case(
        "symmetric_product",
        (linalg.symmetric_product_p,),
        lambda a, c: linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
        _symmetric_product_make,
        _np_symmetric_product,
        (F32, BF16),
        shapes=((0, 0), (2, 3, 3)),
    ),
    Case(
        "lu_pivots_to_permutation",
        (linalg.lu_pivots_to_permutation_p,),
        lambda p: linalg.lu_pivots_to_permutation(p, p.shape[-1] + 1),
        _pivots_make,
        _np_pivots_to_permutation,
        (I32,),
        shapes=((0,), (2, 2)),
    ),
]


# ---------------------------------------------------------------------------
# The checks


def _ids(params):
    return [f"{c.name}-{np.dtype(d).name}" for c, d in params]


GRAD_PARAMS = [(c, d) for c in CASES for d in c.grad_dtypes]


def _in_axes(args: tuple, front: bool) -> tuple:
    """Batch axes: every operand at the front, or the first at the front and the others
    at the back."""
    return tuple(0 if front or i == 0 else np.ndim(a) for i, a in enumerate(args))


def _stack(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    return np.stack([a, b], axis=axis)


def _vmap_variant(k: int, args0: tuple, args1: tuple):
    """The k-th way of batching two examples: (in_axes, batched operands, the examples).

    The ways rotate: every operand mapped at the front; the first at the front and the
    others at the back; only the first mapped (the others shared by both examples)."""
    n = len(args0)
    way = k % (3 if n > 1 else 2)
    if way == 2:
        axes = (0,) + (None,) * (n - 1)
        batched = (_stack(args0[0], args1[0], 0), *args0[1:])
        return axes, batched, [args0, (args1[0], *args0[1:])]
    axes = _in_axes(args0, front=way == 0)
    batched = tuple(_stack(a, b, ax) for a, b, ax in zip(args0, args1, axes))
    return axes, batched, [args0, args1]


def _oracle(case: Case, args: tuple) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # e.g. size-0 reductions
        return case.oracle(*(map(_wide, args) if case.wide else args))


def _variants(case: Case) -> list[tuple[np.dtype, Any]]:
    """The (dtype, shape) pairs a case is evaluated at: every shape in its first dtype, the
    other dtypes at its last (ordinary) shape. Shape rules do not depend on the dtype, nor
    dtype rules on the shape, and this keeps the compilations few."""
    first, *rest = case.dtypes
    return [(first, s) for s in case.shapes] + [(d, case.shapes[-1]) for d in rest]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_values_jit_vmap(case: Case) -> None:
    variants = _variants(case)
    args = [case.make(_seeded(case.name, d, s, 0), d, s) for d, s in variants]

    # values against the oracle, eagerly; the case must bind what it claims to cover.
    with recording_binds(case.prims) as seen:
        eager = [case.fun(*a) for a in args]
    assert seen == {p.name for p in case.prims}, f"{case.name} does not bind {case.prims}"
    for (d, s), a, out in zip(variants, args, eager):
        if case.oracle is not None:
            assert_close(out, _oracle(case, a), d, case.tol, f"values, {d.name}{list(s)}")
        if case.check is not None:
            case.check(a, out)

    # jit against eager (every shape, in the first dtype), and vmap against a loop over two
    # examples (every variant): all in one compiled function.
    plain = args[: len(case.shapes)]
    batches = []
    if case.vmap:
        vshapes = case.vmap_shapes if case.vmap_shapes is not None else case.shapes
        batches = [
            (d, s, _vmap_variant(k, a0, case.make(_seeded(case.name, d, s, 1), d, s)))
            for k, ((d, s), a0) in enumerate(zip(variants, args))
            if s in vshapes
        ]
    else:
        assert case.why, f"{case.name}: say why vmap does not apply"

    def jitted(plain_args, batched_args):
        outs = [case.fun(*a) for a in plain_args]
        for (_, _, (axes, _, _)), b in zip(batches, batched_args):
            outs.append(vmap(case.fun, in_axes=axes)(*b))
        return outs

    outs = jit(jitted)(plain, [b for _, _, (_, b, _) in batches])
    for (d, s), out, want in zip(variants, outs[: len(plain)], eager):
        assert_close(out, want, d, case.tol, f"jit, {d.name}{list(s)}")
    for (d, s, (axes, _, examples)), got in zip(batches, outs[len(plain) :]):
        loop = [case.fun(*ex) for ex in examples]
        want = [np.stack(leaves) for leaves in zip(*(tree_flatten(o)[0] for o in loop))]
        assert_close(tree_flatten(got)[0], want, d, case.tol, f"vmap {axes}, {d.name}{list(s)}")


@pytest.mark.parametrize("case,dtype", GRAD_PARAMS, ids=_ids(GRAD_PARAMS))
def test_grads(case: Case, dtype: np.dtype) -> None:
    make = case.gmake or case.make
    fun = case.gfun or case.fun
    fun = jit(fun) if case.jit_grads else fun
    for s in case.grad_shapes or case.shapes[-1:]:
        args = make(_seeded(case.name, dtype, s, 2), dtype, s)
        wrt = case.wrt if case.wrt is not None else tuple(range(len(args)))

        def f(*diff, args=args, wrt=wrt):
            full = list(args)
            for i, d in zip(wrt, diff):
                full[i] = d
            return fun(*full)

        tol = {F32: 2e-3 * case.tol, C64: 2e-3 * case.tol}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            check_grads(
                f, [args[i] for i in wrt], order=case.order, modes=case.modes, atol=tol, rtol=tol
            )


# ---------------------------------------------------------------------------
# Coverage of the table

# Primitives whose cases their authors are adding, with where they live. A primitive
# leaves this list for `CASES` (the test below fails while it is in both).
PENDING: dict[str, str] = {}

# Primitives that compile on GPU only (as in JAX 0.10.2), so that no case can run
# here; where they are checked instead.
GPU_ONLY: dict[str, str] = dict.fromkeys(
    ["psend", "precv"], "packages/numpy/tests/test_tokens.py (jaxpr and the CPU error)"
)

# Primitives with no `check_grads` case, and why.
NOT_DIFFERENTIABLE: dict[str, str] = {
    **dict.fromkeys(
        ["eq", "ne", "lt", "le", "gt", "ge", "is_finite", "argmax", "argmin"],
        "boolean or integer results",
    ),
    **dict.fromkeys(
        [
            "and",
            "or",
            "xor",
            "not",
            "shift_left",
            "mulhi",
            "shift_right_arithmetic",
            "shift_right_logical",
            "population_count",
            "clz",
            "reduce_and",
            "reduce_or",
            "reduce_xor",
            "iota",
            "threefry2x32",
            "rng_bit_generator",
            "rng_uniform",
            "bitcast_convert_type",
        ],
        "integer or bit-level operations",
    ),
    "nextafter": "no jvp: differentiating it raises, as in JAX",
    "igamma_grad_a": "no derivative (as in JAX)",
    "random_gamma_grad": "no derivative (as in JAX)",
    "zeta": "checked in q only",
    "reduce_window": "no jvp for a general computation (NotImplementedError)",
    "geqrf": "an internal step of qr (whose derivative is checked), as in JAX",
    "householder_product": "no jvp, as in JAX",
    "composite": "no jvp, as in JAX (ValueError: wrap it in custom_jvp)",
    "schur": "no jvp, as in JAX (the decomposition is not unique)",
    "hessenberg": "no jvp, as in JAX (the decomposition is not unique)",
    **dict.fromkeys(
        ["tridiagonal", "ormqr", "cholesky_update", "symmetric_product"], "no jvp, as in JAX"
    ),
    "lu_pivots_to_permutation": "integer results",
    **dict.fromkeys(["eq_to", "le_to", "lt_to"], "boolean results"),
    "select_and_scatter": "no jvp for general computations, as in JAX",
    "stop_gradient": "a zero derivative by definition, which finite differences contradict "
    "(packages/interpreters/tests/test_ad.py checks it)",
}
NOT_DIFFERENTIABLE.pop("zeta")


def _exported_primitives() -> dict[str, Primitive]:
    found = {}
    for module in (lax, linalg):
        for attr in dir(module):
            value = getattr(module, attr)
            if attr.endswith("_p") and isinstance(value, Primitive):
                found[value.name] = value
    return found


def test_every_primitive_has_a_case() -> None:
    covered = {p.name for c in CASES for p in c.prims}
    exported = _exported_primitives()
    missing = sorted(set(exported) - covered - set(PENDING) - set(GPU_ONLY))
    assert not missing, f"primitives with no case in test_rules_coverage.CASES: {missing}"
    stale = sorted(set(PENDING) & covered)
    assert not stale, f"remove from PENDING (they have cases now): {stale}"


def test_every_differentiable_primitive_checks_grads() -> None:
    with_grads = {p.name for c in CASES if c.grad_dtypes for p in c.prims}
    for c in CASES:
        assert all(d in INEXACT for d in c.grad_dtypes), c.name
    covered = {p.name for c in CASES for p in c.prims}
    unchecked = sorted(covered - with_grads - set(NOT_DIFFERENTIABLE))
    assert not unchecked, f"cases with no check_grads (or NOT_DIFFERENTIABLE entries): {unchecked}"
    wrong = sorted(with_grads & set(NOT_DIFFERENTIABLE))
    assert not wrong, f"checked, so remove from NOT_DIFFERENTIABLE: {wrong}"
    names = [c.name for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique (they are test ids)"
