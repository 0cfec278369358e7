"""jnp polynomials against NumPy: arithmetic, calculus, evaluation, roots and fits.

Results keep static shapes (leading zeros stay unless `trim_leading_zeros`), so
they are compared with NumPy's after aligning on the lowest powers. Result
dtypes follow JAX's documented rules (inexact for everything but `polyadd`,
`polysub` and `polyval`; complex for `roots` and matrix `poly`). Roots are
compared as sorted sets; their derivatives (through `eig`), `polyval`'s and
`poly`'s are checked with `check_grads`.
"""

from __future__ import annotations

import inspect

import ml_dtypes
import numpy as np
import pytest

import polyjax_numpy.numpy as jnp
from polyjax_core import make_jaxpr
from polyjax_core.errors import ConcretizationTypeError
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import jit
from polyjax_interpreters.test_util import check_grads

bf16 = np.dtype(ml_dtypes.bfloat16)
f16, f32, c64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
i32, u8, boolean = np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.bool_)


def _close(got, want, tol=2e-5, err=""):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (err, got.shape, want.shape)
    wide = np.complex128 if got.dtype.kind == "c" or np.iscomplexobj(want) else np.float64
    np.testing.assert_allclose(
        got.astype(wide), np.asarray(want, wide), rtol=tol, atol=tol, err_msg=err
    )


def _coeffs(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.integers(0 if dtype == u8 else -3, 4, n).astype(np.float64)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.integers(-2, 3, n)
    return x.astype(dtype)


def _out_dtype(fun, *args):
    (aval,) = make_jaxpr(fun)(*args).out_avals
    return aval.dtype


# ---------------------------------------------------------------------------
# Arithmetic


@pytest.mark.parametrize("dtype", [i32, u8, f32, bf16, c64], ids=str)
@pytest.mark.parametrize("n1,n2", [(3, 2), (1, 4), (4, 4)])
def test_polyadd_polysub(dtype, n1, n2):
    a, b = _coeffs(n1, dtype, 1), _coeffs(n2, dtype, 2)
    wa, wb = (x.astype(np.complex128 if dtype == c64 else np.float64) for x in (a, b))
    added, subtracted = jnp.polyadd(a, b), jnp.polysub(a, b)
    assert added.dtype == subtracted.dtype == dtype
    _close(added, np.polyadd(wa, wb), 1e-2)
    if dtype != u8:  # unsigned differences wrap around
        _close(subtracted, np.polysub(wa, wb), 1e-2)


def test_polyadd_promotes_and_checks_rank():
    assert jnp.polyadd(np.array([1, 2], np.int32), np.array([0.5], np.float32)).dtype == f32
    _close(jnp.polyadd(np.float32(2), np.array([1.0, 1.0])), [1.0, 3.0])
    with pytest.raises(ValueError, match="a1 must be a 1-D array"):
        jnp.polyadd(np.ones((2, 2)), np.ones(2))


@pytest.mark.parametrize("dtype", [i32, f32, c64], ids=str)
def test_polymul(dtype):
    a, b = _coeffs(3, dtype, 3), _coeffs(4, dtype, 4)
    got = jnp.polymul(a, b)
    assert got.dtype == (f32 if dtype == i32 else dtype)
    _close(got, np.convolve(a, b))  # every coefficient, leading zeros included
    a0 = np.array([0, 2, 1, 0], dtype)
    b0 = np.array([0, 0, 5, 0, 3], dtype)
    _close(jnp.polymul(a0, b0, trim_leading_zeros=True), np.polymul(a0, b0))
    _close(jnp.polymul(np.zeros(0, dtype), b), np.zeros(4))  # the zero polynomial
    with pytest.raises(ConcretizationTypeError, match="trim_leading_zeros=True"):
        jit(lambda a: jnp.polymul(a, a, trim_leading_zeros=True))(a)


@pytest.mark.parametrize("m,n", [(5, 2), (4, 4), (2, 3), (6, 1)])
def test_polydiv(m, n):
    u = _coeffs(m, f32, 5)
    v = _coeffs(n, f32, 6)
    v[0] = 2.0
    q, r = jnp.polydiv(u, v)
    wq, wr = np.polydiv(u.astype(np.float64), v.astype(np.float64))
    _close(q, wq, 1e-4)
    assert r.shape == (m,)  # static: the remainder keeps len(u) coefficients
    _close(r[m - len(wr) :], wr, 1e-4)
    total = np.asarray(jnp.polyadd(jnp.polymul(q, v), r))
    _close(total[-m:], u, 1e-4)  # u == q * v + r, with leading zeros
    _close(total[:-m], np.zeros(len(total) - m), 1e-4)
    _, trimmed = jnp.polydiv(u, v, trim_leading_zeros=True)
    _close(trimmed, wr, 1e-4)
    assert jnp.polydiv(np.array([5, 7, 9]), np.array([4, 1]))[0].dtype == f32
    with pytest.raises(ValueError, match="divisor v must not be empty"):
        jnp.polydiv(u, np.zeros(0))


# ---------------------------------------------------------------------------
# Calculus


@pytest.mark.parametrize("m", [0, 1, 2, 3, 5])
def test_polyder_polyint(m):
    p = np.array([2, -5, 3, -1], np.int32)
    got = jnp.polyder(p, m)
    assert got.dtype == f32  # JAX: always inexact
    _close(got, np.polyder(p, m) if m else p)
    _close(jnp.polyint(p, m), np.polyint(p.astype(np.float64), m))
    if m:
        k = np.arange(1.0, m + 1)
        _close(jnp.polyint(p, m, k=k), np.polyint(p.astype(np.float64), m, k=k))
        _close(jnp.polyint(p, m, k=2.5), np.polyint(p.astype(np.float64), m, k=2.5))
        _close(jnp.polyder(jnp.polyint(p, m, k=k), m), p)


def test_calculus_errors_and_grads():
    p = np.array([1.0, -2.0, 0.5], np.float32)
    with pytest.raises(ValueError, match="order m must be nonnegative"):
        jnp.polyder(p, -1)
    with pytest.raises(ValueError, match="k must be a scalar or a rank-1 array"):
        jnp.polyint(p, 3, k=np.ones(2))
    with pytest.raises(ConcretizationTypeError, match="'m' argument of jnp.polyder"):
        jit(lambda p, m: jnp.polyder(p, m))(p, 1)
    check_grads(lambda p: jnp.polyint(jnp.polyder(p, 1), 2, k=p[:1]), (p,), order=2)


# ---------------------------------------------------------------------------
# Evaluation


@pytest.mark.parametrize("dtype", [f32, bf16, f16, i32, c64], ids=str)
def test_polyval(dtype):
    p = _coeffs(5, dtype, 7)
    x = (np.linspace(-1.5, 1.5, 6) if dtype != i32 else np.arange(-3, 3)).astype(dtype)
    f = jit(lambda p, x: (jnp.polyval(p, x), jnp.polyval(p, x, unroll=2)))
    got, unrolled = f(p, x)
    assert got.dtype == dtype
    wide = np.complex128 if dtype == c64 else np.float64
    want = np.polyval(p.astype(wide), x.astype(wide))
    tol = {bf16: 0.1, f16: 2e-2}.get(dtype, 1e-4)
    _close(got, want, tol)
    _close(unrolled, want, tol)
    _close(jnp.polyval(p, x), got, tol)  # eager agrees with jit


def test_polyval_shapes_and_broadcasting():
    p = np.array([1.0, 0.0, -2.0], np.float32)
    assert jnp.polyval(p, np.float32(2.0)).shape == ()
    _close(jnp.polyval(p, 2.0), 2.0)
    assert jnp.polyval(p, 2.0).dtype == f32
    assert jnp.polyval(np.array([1, 2]), 0.5).dtype == f32  # weak float promotes int
    _close(jnp.polyval(np.zeros(0, np.float32), np.ones(3)), np.zeros(3))
    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    _close(jnp.polyval(p, x), np.polyval(p, x))
    # Coefficients with trailing axes broadcast against x (one polynomial per column).
    p2 = np.array([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)
    want = np.stack([np.polyval(p2[:, j], x[:, j]) for j in range(3)], axis=1)
    _close(jnp.polyval(p2, x), want)
    with pytest.raises(ValueError, match="p must have at least one dimension"):
        jnp.polyval(np.float32(1), x)


def test_polyval_grads_and_vmap():
    p = np.array([0.5, -1.0, 2.0, 0.3], np.float32)
    x = np.array([-1.2, 0.4, 1.7], np.float32)
    # Second order in forward mode only: reverse mode over the scan's jvp compiles
    # for seconds.
    check_grads(jnp.polyval, (p, x), order=2, modes=("fwd",))
    check_grads(lambda p, x: jnp.polyval(p, x, unroll=1), (p, x), order=1)
    ps = np.stack([p, 2 * p, -p])
    got = vmap(jnp.polyval, in_axes=(0, None))(ps, x)
    _close(got, np.stack([np.polyval(q, x) for q in ps]))


# ---------------------------------------------------------------------------
# poly and roots


def test_poly():
    _close(jnp.poly(np.array([1, 2, 3])), [1.0, -6.0, 11.0, -6.0])
    assert jnp.poly(np.array([1, 2, 3])).dtype == f32
    got = jnp.poly(np.array([2, 1 + 2j, 1 - 2j], np.complex64))
    assert got.dtype == c64
    _close(got, [1, -4, 9, -10])
    _close(jnp.poly(np.float32(3.0)), [1.0, -3.0])
    _close(jnp.poly(np.zeros(0, np.float32)), 1.0)
    m = np.array([[2, 1, 5], [3, 4, 7], [1, 3, 5]], np.float32)
    got = jnp.poly(m)
    assert got.dtype == c64  # eigenvalues are complex
    _close(got, np.poly(m.astype(np.float64)), 1e-4)
    with pytest.raises(ValueError, match="must be 1d or non-empty square 2d"):
        jnp.poly(np.ones((2, 3)))
    check_grads(jnp.poly, (np.array([0.5, -1.0, 2.0], np.float32),), order=2)


def _sorted_roots(r):
    r = np.asarray(r).astype(np.complex128)
    return r[np.lexsort((r.imag, r.real))]


@pytest.mark.parametrize(
    "p",
    [
        [1.0, -6.0, 11.0, -6.0],
        [2.0, 0.0, 3.0, 1.0],
        [1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, -3.0, 2.0],
        [1.0, -3.0, 0.0, 0.0],
        [5.0],
        [0.0, 0.0],
    ],
    ids=str,
)
def test_roots_match_numpy(p):
    p = np.array(p, np.float32)
    got = jnp.roots(p)
    assert got.dtype == c64
    _close(_sorted_roots(got), _sorted_roots(np.roots(p.astype(np.float64))), 1e-3)


def test_roots_without_stripping_under_jit():
    f = jit(lambda p: jnp.roots(p, strip_zeros=False))
    got = np.asarray(f(np.array([0.0, 1.0, 2.0], np.float32)))
    _close(got[:1], [-2.0])
    assert np.isnan(got[1:]).all()
    got = np.asarray(f(np.array([0.0, 0.0, 1.0, -3.0, 0.0], np.float32)))
    _close(_sorted_roots(got[:2]), [0.0, 3.0], 1e-5)  # the genuine zero root is kept
    assert np.isnan(got[2:]).all()
    got = np.asarray(f(np.zeros(3, np.float32)))
    assert np.isnan(got).all() and got.shape == (2,)
    fun = lambda p: jnp.roots(p)  # noqa: E731
    with pytest.raises(ConcretizationTypeError, match="pass strip_zeros=False") as info:
        jit(fun)(np.ones(3, np.float32))
    assert f"test_jnp_polynomial.py:{inspect.getsourcelines(fun)[1]}" in str(info.value)


def test_roots_grads_and_vmap():
    # Distinct real roots 1, 2, 3 (up to the perturbation): eigenvalue derivatives.
    p = np.array([1.0, -6.0, 11.0, -6.0], np.float32)
    check_grads(jnp.roots, (p,), order=1, atol=5e-2, rtol=5e-2)
    batch = np.stack([p, np.array([1.0, 0.0, -1.0, 0.0], np.float32)])
    got = jit(vmap(lambda q: jnp.roots(q, strip_zeros=False)))(batch)
    for g, q in zip(got, batch):
        _close(_sorted_roots(g), _sorted_roots(np.roots(q.astype(np.float64))), 1e-3)


# ---------------------------------------------------------------------------
# polyfit


def _fit_data(k=None):
    x = np.linspace(-1.0, 1.0, 9).astype(np.float32)
    y = 2 * x**3 - x + 0.1 * np.sin(7 * x)
    if k:
        y = np.stack([y * (j + 1) + j for j in range(k)], axis=1)
    return x, y.astype(np.float32)


@pytest.mark.parametrize("deg", [0, 1, 3])
@pytest.mark.parametrize("columns", [None, 2])
def test_polyfit(deg, columns):
    x, y = _fit_data(columns)
    w = np.linspace(0.5, 2.0, x.size).astype(np.float32)

    @jit
    def fits(x, y, w):
        return (
            jnp.polyfit(x, y, deg),
            jnp.polyfit(x, y, deg, w=w),
            jnp.polyfit(x, y, deg, full=True)[:4],
            jnp.polyfit(x, y, deg, cov=True),
            jnp.polyfit(x, y, deg, cov="unscaled"),
        )

    plain, weighted, (c, resids, rank, s), scaled, unscaled = fits(x, y, w)
    wide = (x.astype(np.float64), y.astype(np.float64))
    _close(plain, np.polyfit(*wide, deg), 1e-4)
    _close(weighted, np.polyfit(*wide, deg, w=w), 1e-4)
    wc, wresids, wrank, ws, _ = np.polyfit(*wide, deg, full=True)
    _close(c, wc, 1e-4)
    _close(resids, wresids, 1e-4)
    assert int(rank) == wrank and rank.dtype == i32
    _close(s, ws, 1e-4)
    for (c, v), cov in ((scaled, True), (unscaled, "unscaled")):
        wc, wv = np.polyfit(*wide, deg, cov=cov)
        _close(c, wc, 1e-4)
        _close(v, wv, 1e-3)


def test_polyfit_rank_deficient_and_errors():
    x = np.array([0.0, 1.0, 2.0], np.float32)
    y = np.array([1.0, 3.0, 5.0], np.float32)
    # More coefficients than points: rank 3, and the fit goes through the points.
    rconds = []

    def fit(x, y):
        *out, rcond = jnp.polyfit(x, y, 4, full=True)
        rconds.append(rcond)  # a Python float, the default len(x) * eps
        return out

    c, _, rank, _ = jit(fit)(x, y)
    assert rconds == [pytest.approx(3 * np.finfo(f32).eps)]
    assert int(rank) == 3
    _close(np.polyval(np.asarray(c, np.float64), x), y, 1e-3)
    assert _out_dtype(lambda x: jnp.polyfit(x, x, 1), np.arange(4)) == f32
    with pytest.raises(ValueError, match="expected deg >= 0"):
        jnp.polyfit(x, y, -1)
    with pytest.raises(TypeError, match="1-D vector for x"):
        jnp.polyfit(np.ones((2, 2)), y, 1)
    with pytest.raises(TypeError, match="non-empty vector for x"):
        jnp.polyfit(np.zeros(0), np.zeros(0), 1)
    with pytest.raises(TypeError, match="x and y to have the same length"):
        jnp.polyfit(x, y[:2], 1)
    with pytest.raises(TypeError, match="1-D or 2-D array for y"):
        jnp.polyfit(x, np.ones((3, 1, 1)), 1)
    with pytest.raises(TypeError, match="w and y to have the same length"):
        jnp.polyfit(x, y, 1, w=np.ones(2))
    with pytest.raises(ValueError, match="must exceed order to scale the covariance"):
        jnp.polyfit(x, y, 2, cov=True)
    with pytest.raises(ConcretizationTypeError, match="'deg' argument of jnp.polyfit"):
        jit(lambda x, d: jnp.polyfit(x, x, d))(x, 1)


def test_polyfit_under_jit_vmap_and_grad():
    x, y = _fit_data()
    check_grads(lambda y: jnp.polyfit(x, y, 2), (y,), order=1, modes=("rev",))
    f = jit(lambda x, y: jnp.polyfit(x, y, 3))
    _close(f(x, y), np.polyfit(x.astype(np.float64), y.astype(np.float64), 3), 1e-4)
    ys = np.stack([y, -y, y + 1])
    got = jit(vmap(lambda yy: jnp.polyfit(x, yy, 2)))(ys)
    _close(got, np.stack([np.polyfit(x, yy, 2) for yy in ys.astype(np.float64)]), 1e-4)


def test_result_dtypes():
    i = np.arange(3, dtype=np.int32)
    assert _out_dtype(jnp.polyadd, i, i) == i32
    assert _out_dtype(jnp.polyval, i, i) == i32
    assert _out_dtype(jnp.polymul, i, i) == f32
    assert _out_dtype(jnp.polyder, i) == f32
    assert _out_dtype(jnp.polyint, i) == f32
    assert _out_dtype(lambda p: jnp.roots(p, strip_zeros=False), i) == c64
    b = np.ones(3, bf16)
    assert _out_dtype(jnp.polymul, b, b) == bf16
    assert _out_dtype(lambda p: jnp.roots(p, strip_zeros=False), b) == c64
