"""Polynomials as coefficient vectors, highest power first: `poly`, `polyadd`, `polysub`,
`polymul`, `polydiv`, `polyder`, `polyint`, `polyval`, `polyfit`, `roots`.

Shapes stay static, so unlike NumPy (whose `poly1d` drops leading zeros) the
results keep them: `polymul` has `len(a1) + len(a2) - 1` coefficients and
`polydiv`'s remainder has `len(u)`, unless `trim_leading_zeros=True` asks for
NumPy's shapes (which needs concrete values: coefficients within
`sqrt(eps) * max|c|` of zero are dropped). `roots` finds the eigenvalues of the
companion matrix (`lax.linalg.eig`, so CPU only) and always returns complex
roots; with `strip_zeros=False` it works under `jit`, leading zero coefficients
giving NaN roots at the end. `polyfit` solves its least-squares problem with
`jnp.linalg.lstsq` (differentiable), cutting singular values below `rcond` times
the largest.

Dtypes: `polyadd`, `polysub` and `polyval` promote their operands as `jnp.add`
does; the others always return inexact coefficients (`poly` complex for
complex roots or a matrix, whose eigenvalues are complex).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core.tracing import concrete_or_error
from polyjax_interpreters.jit import jit
from polyjax_numpy.lax import _complex, _cumulative, _scan, _shape_ops
from polyjax_numpy.lax import _elementwise as lax
from polyjax_numpy.lax import _sorting as lax_sorting
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.lax._reductions import reduce_sum
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy import linalg
from polyjax_numpy.numpy._creation import asarray, concrete_int
from polyjax_numpy.numpy._manipulation import matrix_transpose, take_axis
from polyjax_numpy.numpy._matrices import vander
from polyjax_numpy.numpy._products import matmul
from polyjax_numpy.numpy._signal import convolve

_I32 = np.dtype(np.int32)


def _vector(name: str, arg: str, p: Any) -> Any:
    """A coefficient vector: rank 0 becomes rank 1; other ranks are refused."""
    p = asarray(p)
    if _u.ndim(p) == 0:
        return _shape_ops.reshape(p, (1,))
    if _u.ndim(p) != 1:
        raise ValueError(f"jnp.{name}: {arg} must be a 1-D array, got shape {_u.shape(p)}")
    return p


def _inexact_vectors(name: str, **args: Any) -> list[Any]:
    _u.check_arraylike(name, *args.values())
    promoted = _u.promote_dtypes_inexact(*(asarray(a) for a in args.values()))
    return [_vector(name, arg, p) for arg, p in zip(args, promoted)]


def _pad_front(p: Any, n: int) -> Any:
    """`p` with leading zeros up to length `n`."""
    extra = n - _u.shape(p)[0]
    return _shape_ops.pad(p, _u.scalar_like(0, p), [(extra, 0, 0)]) if extra > 0 else p


def _trim_leading(c: Any, name: str) -> Any:
    """`c` without its (numerically) zero leading coefficients; keeps at least one."""
    host = concrete_or_error(
        np.asarray,
        c,
        f"The error occurred because jnp.{name} was called with trim_leading_zeros=True, "
        "which needs concrete values; pass trim_leading_zeros=False under jit.",
    )
    magnitude = np.abs(host.astype(np.complex128 if host.dtype.kind == "c" else np.float64))
    tol = np.sqrt(float(dtypes.finfo(_u.dtype(c)).eps)) * (magnitude.max(initial=0.0))
    big = np.flatnonzero(magnitude > tol)
    start = min(int(big[0]) if big.size else host.shape[0] - 1, host.shape[0] - 1)
    return _shape_ops.slice(c, (max(start, 0),), (host.shape[0],))


# ---------------------------------------------------------------------------
# Arithmetic


def _add_aligned(name: str, a1: Any, a2: Any, sub: bool) -> Any:
    _u.check_arraylike(name, a1, a2)
    a1, a2 = (_vector(name, arg, p) for arg, p in zip(("a1", "a2"), _u.promote_dtypes(a1, a2)))
    n = max(_u.shape(a1)[0], _u.shape(a2)[0])
    a1, a2 = _pad_front(a1, n), _pad_front(a2, n)
    if _u.is_bool(a1):
        return lax.bitwise_xor(a1, a2) if sub else lax.bitwise_or(a1, a2)
    return lax.sub(a1, a2) if sub else lax.add(a1, a2)


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter one aligned at the end).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polyadd(jnp.array([1, 2, 3]), jnp.array([10, 20]))
      Array([ 1, 12, 23], dtype=int32)
    """
    return _add_aligned("polyadd", a1, a2, sub=False)


def polysub(a1: Any, a2: Any) -> Any:
    """The difference `a1 - a2` of two polynomials.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polysub(jnp.array([1, 2, 3]), jnp.array([10, 20]))
      Array([  1,  -8, -17], dtype=int32)
    """
    return _add_aligned("polysub", a1, a2, sub=True)


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials: `len(a1) + len(a2) - 1` inexact coefficients.

    Args:
      a1, a2: coefficient vectors (an empty one is the zero polynomial).
      trim_leading_zeros: drop leading zeros as NumPy does (needs concrete values).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polymul(jnp.array([1, 1]), jnp.array([1, -1]))
      Array([ 1.,  0., -1.], dtype=float32)
    """
    a1, a2 = _inexact_vectors("polymul", a1=a1, a2=a2)
    a1, a2 = (_pad_front(p, 1) for p in (a1, a2))  # empty: the zero polynomial
    out = convolve(a1, a2)
    return _trim_leading(out, "polymul") if trim_leading_zeros else out


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """The quotient and remainder of the division of polynomial `u` by `v`.

    Args:
      u: the dividend's coefficients.
      v: the divisor's coefficients (its first one must be nonzero).
      trim_leading_zeros: drop the remainder's leading zeros as NumPy does (needs
        concrete values); otherwise the remainder has `len(u)` coefficients.

    Returns:
      `(q, r)`, inexact, with `u == polyadd(polymul(q, v), r)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> q, r = jnp.polydiv(jnp.array([3.0, 5.0, 2.0]), jnp.array([2.0, 1.0]))
      >>> q, r
      (Array([1.5 , 1.75], dtype=float32), Array([0.  , 0.  , 0.25], dtype=float32))
    """
    u, v = _inexact_vectors("polydiv", u=u, v=v)
    m, n = _u.shape(u)[0], _u.shape(v)[0]
    if n == 0:
        raise ValueError("jnp.polydiv: the divisor v must not be empty")
    if m < n:
        return _shape_ops.full((1,), _u.scalar_like(0, u)), u
    quotient, r = _long_division(u, v)
    return quotient, _trim_leading(r, "polydiv") if trim_leading_zeros else r


@jit
def _long_division(u: Any, v: Any) -> tuple[Any, Any]:
    """Quotient and remainder of `u / v`, one quotient coefficient per step."""
    m, n = _u.shape(u)[0], _u.shape(v)[0]
    scale = lax.div(_u.scalar_like(1, v), _shape_ops.reshape(_shape_ops.slice(v, (0,), (1,)), ()))
    r, q = u, []
    for k in range(m - n + 1):
        d = lax.mul(scale, _shape_ops.reshape(_shape_ops.slice(r, (k,), (k + 1,)), ()))
        q.append(_shape_ops.reshape(d, (1,)))
        shifted = _shape_ops.pad(v, _u.scalar_like(0, v), [(k, m - n - k, 0)])
        r = lax.sub(r, lax.mul(d, shifted))
    return _shape_ops.concatenate(q, 0), r


# ---------------------------------------------------------------------------
# Calculus


def _order(m: Any, name: str) -> int:
    m = concrete_int(m, f"'m' argument of jnp.{name}")
    if m < 0:
        raise ValueError(f"jnp.{name}: the order m must be nonnegative, got {m}")
    return m


def _falling(top: int, bottom: int, m: int, dtype: Any) -> np.ndarray:
    """For each power `j` from `top` down to `bottom`: `j (j - 1) ... (j - m + 1)`, stopping
    at 1 (so `j!` for `j < m`): how `m` derivatives scale `x**j`."""
    powers = np.arange(top, bottom - 1, -1)
    return np.array(
        [math.prod(range(max(j - m + 1, 1), j + 1)) for j in powers], dtype=np.float64
    ).astype(dtype)


def polyder(p: Any, m: int = 1) -> Any:
    """The coefficients of the `m`-th derivative of polynomial `p` (inexact).

    Args:
      p: the coefficients.
      m: the static order (0 returns `p`; `m >= len(p)` gives an empty vector).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polyder(jnp.array([2, -5, 3, -1]))
      Array([  6., -10.,   3.], dtype=float32)
    """
    (p,) = _inexact_vectors("polyder", p=p)
    m = _order(m, "polyder")
    if m == 0:
        return p
    n = _u.shape(p)[0]
    kept = _shape_ops.slice(p, (0,), (max(n - m, 0),))
    return lax.mul(kept, _falling(n - 1, m, m, _u.dtype(p)))


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The coefficients of the `m`-th antiderivative of polynomial `p` (inexact).

    Args:
      p: the coefficients.
      m: the static order.
      k: the integration constants: None (zeros), a scalar (for every order) or `m`
        values, the first for the first integration.

    Raises:
      ValueError: `k` has neither 1 nor `m` values.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polyint(jnp.array([3.0, 2.0, 1.0]), k=5.0)
      Array([1., 1., 1., 5.], dtype=float32)
    """
    m = _order(m, "polyint")
    if k is None:
        k = 0
    _u.check_arraylike("polyint", p, k)
    p, k = _u.promote_dtypes_inexact(asarray(p), asarray(k))
    p = _vector("polyint", "p", p)
    if m == 0:
        return p
    if _u.ndim(k) > 1 or (_u.ndim(k) == 1 and _u.shape(k)[0] not in (1, m)):
        raise ValueError(
            f"jnp.polyint: k must be a scalar or a rank-1 array of length 1 or m={m}, got "
            f"shape {_u.shape(k)}"
        )
    k = _shape_ops.reshape(k, (math.prod(_u.shape(k)),))
    k = _shape_ops.broadcast_in_dim(k, (m,), (0,))
    n = _u.shape(p)[0]
    # Integrated m times, the coefficient of x**j becomes one of x**(j + m), divided by
    # (j + m)...(j + 1); the constant of the i-th integration ends on x**(m - 1 - i),
    # divided by (m - 1 - i)!.
    coeffs = _shape_ops.concatenate([p, k], 0)
    return lax.div(coeffs, _falling(n + m - 1, 0, m, _u.dtype(p)))


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial `p` evaluated at `x` (Horner's scheme in a `lax.scan`).

    Args:
      p: the coefficients along the first axis (other axes broadcast with `x`).
      x: the points.
      unroll: the scan's unroll factor (a static int).

    Returns:
      `p[0] * x**(n-1) + ... + p[n-1]`, of the promoted dtype of `p` and `x`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.polyval(jnp.array([3, 0, 1]), jnp.array([1, 2]))
      Array([ 4, 13], dtype=int32)
    """
    _u.check_arraylike("polyval", p, x)
    unroll = concrete_int(unroll, "'unroll' argument of jnp.polyval")
    p, x = (asarray(a) for a in _u.promote_dtypes(p, x))
    if _u.ndim(p) == 0:
        raise ValueError("jnp.polyval: p must have at least one dimension (the coefficients)")
    shape = tuple(np.broadcast_shapes(_u.shape(p)[1:], _u.shape(x)))
    rank = len(shape)
    x = _shape_ops.broadcast_in_dim(x, shape, tuple(range(rank - _u.ndim(x), rank)))
    y = _shape_ops.full(shape, _u.scalar_like(0, x))

    def horner(y: Any, c: Any) -> tuple[Any, None]:
        c = _shape_ops.broadcast_in_dim(c, shape, tuple(range(rank - _u.ndim(c), rank)))
        return lax.add(lax.mul(y, x), c), None

    if _u.shape(p)[0] == 0:
        return y
    return _scan.scan(horner, y, p, unroll=max(unroll, 1))[0]


# ---------------------------------------------------------------------------
# Roots and fitting


def _eig_dtype(dtype: np.dtype) -> np.dtype:
    """LAPACK's `geev` takes 32- and 64-bit floats: 16-bit ones are computed in float32."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        return dtype
    return dtype if np.dtype(dtype).itemsize >= 4 else np.dtype(np.float32)


def _eigvals(a: Any) -> Any:
    a = _u.convert(a, _eig_dtype(_u.dtype(a)))
    (w,) = lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w


_jit_eigvals = jit(_eigvals)


def _complex_dtype(dtype: Any) -> np.dtype:
    return dtypes.canonicalize_dtype(dtypes.to_complex_dtype(dtype))


def poly(seq_of_zeros: Any) -> Any:
    """The monic polynomial with the given roots (or the characteristic polynomial of a
    square matrix).

    Returns:
      `n + 1` inexact coefficients, complex for complex roots or a matrix input.

    Raises:
      ValueError: the input is neither 1-D nor a non-empty square matrix.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.poly(jnp.array([1, 2, 3]))
      Array([ 1., -6., 11., -6.], dtype=float32)
    """
    _u.check_arraylike("poly", seq_of_zeros)
    (a,) = _u.promote_dtypes_inexact(asarray(seq_of_zeros))
    shape = _u.shape(a)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        a = _jit_eigvals(a)
    elif len(shape) == 0:
        a = _shape_ops.reshape(a, (1,))
    elif len(shape) != 1:
        raise ValueError(f"jnp.poly: input must be 1d or non-empty square 2d array, got {shape}")
    if _u.shape(a)[0] == 0:  # as NumPy: the constant 1, as a scalar
        return _shape_ops.full((), _u.scalar_like(1, a))
    return _from_roots(a)


@jit
def _from_roots(a: Any) -> Any:
    """The monic polynomial whose roots are the entries of the 1-D `a`."""
    coeffs = _shape_ops.full((1,), _u.scalar_like(1, a))
    for i in range(_u.shape(a)[0]):  # multiply by (x - root) for each root
        root = _shape_ops.reshape(_shape_ops.slice(a, (i,), (i + 1,)), ())
        zero = _u.scalar_like(0, coeffs)
        high = _shape_ops.pad(coeffs, zero, [(0, 1, 0)])
        low = _shape_ops.pad(coeffs, zero, [(1, 0, 0)])
        coeffs = lax.sub(high, lax.mul(root, low))
    return coeffs


def _companion_roots(p: Any) -> Any:
    """The eigenvalues of the companion matrix of `p` (whose first coefficient is nonzero)."""
    n = _u.shape(p)[0] - 1
    head = _shape_ops.slice(p, (0,), (1,))
    first_row = lax.neg(lax.div(_shape_ops.slice(p, (1,), (n + 1,)), head))
    ones = np.eye(n, n, -1, dtype=_u.dtype(p))
    row0 = np.zeros((n, n), bool)
    row0[0] = True
    companion = lax.select_n(row0, ones, _shape_ops.broadcast_in_dim(first_row, (n, n), (1,)))
    return _eigvals(companion)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients `p`, as complex numbers.

    Args:
      p: a 1-D coefficient vector.
      strip_zeros: drop leading zero coefficients first, as NumPy does (needs a
        concrete `p`). With False (usable under `jit`), each leading zero gives a NaN
        root at the end instead.

    Raises:
      ValueError: `p` is not 1-D.
      ConcretizationTypeError: `p` is traced and `strip_zeros` is True.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.roots(jnp.array([0.0, 1.0, 2.0]), strip_zeros=False)
      Array([-2. +0.j, nan+nanj], dtype=complex64)
    """
    (p,) = _inexact_vectors("roots", p=p)
    out_dtype = _complex_dtype(_eig_dtype(_u.dtype(p)))
    if strip_zeros:
        host = concrete_or_error(
            np.asarray,
            p,
            "The error occurred in jnp.roots(). To use it under jit, pass strip_zeros=False; "
            "leading zero coefficients then give NaN roots.",
        )
        nonzero = np.flatnonzero(host)
        start = int(nonzero[0]) if nonzero.size else host.shape[0]
        p = _shape_ops.slice(p, (start,), (host.shape[0],))
    n = _u.shape(p)[0]
    if n < 2:
        return _shape_ops.full((0,), np.zeros((), out_dtype)[()])
    return _roots_stripped(p) if strip_zeros else _roots_padded(p)


@jit
def _roots_stripped(p: Any) -> Any:
    """The roots of `p`, whose first coefficient is nonzero."""
    return _u.convert(_companion_roots(p), _complex_dtype(_eig_dtype(_u.dtype(p))))


@jit
def _roots_padded(p: Any) -> Any:
    """The roots of `p`, with NaN for each leading zero coefficient."""
    # Leading zeros, rolled to the end, add as many zero roots, which are then sorted last
    # and replaced by NaN. An all-zero `p` is replaced by ones (no roots are defined).
    n = _u.shape(p)[0]
    out_dtype = _complex_dtype(_eig_dtype(_u.dtype(p)))
    nonzero = _u.convert(lax.ne(p, _u.scalar_like(0, p)), _I32)
    leading = reduce_sum(
        _u.convert(lax.eq(_cumulative.cumsum(nonzero, 0), np.int32(0)), _I32), (0,)
    )
    p = lax.select_n(lax.eq(leading, np.int32(n)), p, _shape_ops.full((n,), _u.scalar_like(1, p)))
    index = lax.rem(lax.add(_shape_ops.iota(_I32, n), leading), np.int32(n))
    found = _u.convert(_companion_roots(take_axis(p, index, 0)), out_dtype)
    zero_root = lax.eq(found, np.zeros((), out_dtype)[()])
    _, found = lax_sorting.sort_key_val(zero_root, found, dimension=0)
    nan = np.array(complex(np.nan, np.nan), out_dtype)[()]
    undefined = lax.ge(_shape_ops.iota(_I32, n - 1), lax.sub(np.int32(n - 1), leading))
    return lax.select_n(undefined, found, _shape_ops.full((n - 1,), nan))


def _conj_t(m: Any) -> Any:
    m = matrix_transpose(m)
    return _complex.conj(m) if _u.issubdtype_of(m, np.complexfloating) else m


def _abs2(x: Any) -> Any:
    if _u.issubdtype_of(x, np.complexfloating):
        re, im = _complex.real(x), _complex.imag(x)
        return lax.add(lax.mul(re, re), lax.mul(im, im))
    return lax.mul(x, x)


def polyfit(
    x: Any,
    y: Any,
    deg: int,
    rcond: float | None = None,
    full: bool = False,
    w: Any = None,
    cov: bool | str = False,
) -> Any:
    """The least-squares polynomial fit of degree `deg` to the points `(x, y)`.

    Args:
      x: the `M` sample points (1-D).
      y: the values, shape `(M,)` or `(M, K)` (one fit per column).
      deg: the static degree.
      rcond: singular values below `rcond` times the largest are ignored (default
        `M * eps`).
      full: also return `(residuals, rank, singular_values, rcond)`.
      w: weights of the unsquared residuals, shape `(M,)`.
      cov: also return the covariance of the coefficients, scaled by
        `residuals / (M - deg - 1)` (or not, with "unscaled").

    Returns:
      The `deg + 1` coefficients (highest power first; `(deg + 1, K)` for 2-D `y`);
      with `full`, `(p, residuals, rank, singular_values, rcond)`; with `cov`, `(p, V)`.

    Raises:
      ValueError: `deg` is negative, or `cov` scaling has too few points.
      TypeError: the shapes of `x`, `y` or `w` do not fit.

    Example:
      >>> import polyjax.numpy as jnp
      >>> x = jnp.arange(5.0)
      >>> jnp.round(jnp.polyfit(x, 2 * x**2 - 1, 2), 3)
      Array([ 2., -0., -1.], dtype=float32)
    """
    _u.check_arraylike("polyfit", x, y)
    deg = concrete_int(deg, "'deg' argument of jnp.polyfit")
    if deg < 0:
        raise ValueError(f"jnp.polyfit: expected deg >= 0, got {deg}")
    x, y = (asarray(a) for a in _u.promote_dtypes_inexact(x, y))
    if _u.ndim(x) != 1:
        raise TypeError(f"jnp.polyfit: expected a 1-D vector for x, got shape {_u.shape(x)}")
    m = _u.shape(x)[0]
    if m == 0:
        raise TypeError("jnp.polyfit: expected a non-empty vector for x")
    if _u.ndim(y) not in (1, 2):
        raise TypeError(f"jnp.polyfit: expected a 1-D or 2-D array for y, got shape {_u.shape(y)}")
    if _u.shape(y)[0] != m:
        raise TypeError(
            f"jnp.polyfit: expected x and y to have the same length, got {m} and {_u.shape(y)[0]}"
        )
    order = deg + 1
    if rcond is None:
        rcond = m * float(dtypes.finfo(_u.dtype(x)).eps)
    rcond = float(rcond)
    if w is not None:
        _u.check_arraylike("polyfit", w)
        (w,) = _u.promote_dtypes_inexact(asarray(w))
        if _u.ndim(w) != 1:
            raise TypeError(f"jnp.polyfit: expected a 1-D array for weights, got {_u.shape(w)}")
        if _u.shape(w)[0] != m:
            raise TypeError(
                f"jnp.polyfit: expected w and y to have the same length, got {_u.shape(w)[0]} "
                f"and {m}"
            )
        w = _u.convert(w, _u.dtype(x))
    if cov and cov != "unscaled" and not full and m <= order:
        raise ValueError(
            "jnp.polyfit: the number of data points must exceed order to scale the "
            "covariance matrix"
        )
    cov = False if full else ("unscaled" if cov == "unscaled" else bool(cov))
    out = _polyfit(x, y, w, order=order, rcond=rcond, full=bool(full), cov=cov)
    return (*out, rcond) if full else out


@functools.partial(jit, static_argnames=("order", "rcond", "full", "cov"))
def _polyfit(x: Any, y: Any, w: Any, *, order: int, rcond: float, full: bool, cov: Any) -> Any:
    m = _u.shape(x)[0]
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        lhs = lax.mul(lhs, _shape_ops.broadcast_in_dim(w, _u.shape(lhs), (0,)))
        rhs = lax.mul(rhs, _shape_ops.broadcast_in_dim(w, _u.shape(rhs), (0,)))
    # Columns scaled to unit norm improve the conditioning of the Vandermonde matrix.
    scale = lax.sqrt(reduce_sum(_abs2(lhs), (0,)))
    ones = _shape_ops.full((order,), _u.scalar_like(1, scale))
    scale = lax.select_n(lax.eq(scale, _u.scalar_like(0, scale)), scale, ones)
    scale_c = _u.convert(scale, _u.dtype(lhs))
    lhs = lax.div(lhs, _shape_ops.broadcast_in_dim(scale_c, _u.shape(lhs), (1,)))
    rhs2 = rhs if _u.ndim(rhs) == 2 else _shape_ops.reshape(rhs, (m, 1))
    c, resids, rank, s = linalg.lstsq(lhs, rhs2, rcond)
    c = lax.div(c, _shape_ops.broadcast_in_dim(scale_c, _u.shape(c), (0,)))
    if _u.ndim(y) == 1:
        c = _shape_ops.reshape(c, (order,))
    if full:
        return c, resids, rank, s
    if not cov:
        return c
    # The coefficients' covariance, unscaled: inv(lhs^H lhs), undoing the column scales.
    base = linalg.inv(matmul(_conj_t(lhs), lhs))
    base = lax.div(base, _u.convert(_outer(scale), _u.dtype(base)))
    if cov == "unscaled":
        factor = None
    else:
        factor = lax.div(resids, _u.scalar_like(m - order, resids))
    if _u.ndim(y) == 1:
        if factor is not None:
            base = lax.mul(base, _u.convert(_shape_ops.reshape(factor, ()), _u.dtype(base)))
        return c, base
    if factor is None:  # as NumPy: one unscaled matrix for all columns
        return c, _shape_ops.reshape(base, (order, order, 1))
    k = _u.shape(y)[1]
    stacked = _shape_ops.broadcast_in_dim(base, (order, order, k), (0, 1))
    factor = _u.convert(factor, _u.dtype(base))
    return c, lax.mul(stacked, _shape_ops.broadcast_in_dim(factor, (order, order, k), (2,)))


def _outer(v: Any) -> Any:
    n = _u.shape(v)[0]
    return lax.mul(
        _shape_ops.broadcast_in_dim(v, (n, n), (0,)), _shape_ops.broadcast_in_dim(v, (n, n), (1,))
    )


__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
]
