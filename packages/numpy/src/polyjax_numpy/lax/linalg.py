"""`lax.linalg`: linear-algebra primitives, run on CPU by jaxlib's LAPACK kernels.

JAX's `jax.lax.linalg` names. Each primitive takes matrices in its trailing two
dimensions; leading dimensions are batch dimensions, which the LAPACK kernels
loop over (so `vmap` just moves the mapped axis to the front).

- `cholesky(x, symmetrize_input=True)`: the lower Cholesky factor (``potrf``);
  where a factorization fails (the matrix is not positive definite) the whole
  factor is NaN, as in JAX.
- `triangular_solve(a, b, ...)`: ``op(a) @ x = b`` or ``x @ op(a) = b`` for a
  triangular `a` (``trsm``); only `a`'s `lower` triangle is read.

    >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
    Array([[2., 0.],
           [1., 2.]], dtype=float32)
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_numpy.lax import _lapack
from polyjax_numpy.lax._complex import conj
from polyjax_numpy.lax._dot import batch_matmul
from polyjax_numpy.lax._elementwise import add, div, mul, neg
from polyjax_numpy.lax._shape_ops import transpose

__all__ = [
    "cholesky",
    "cholesky_p",
    "triangular_solve",
    "triangular_solve_p",
]

_INEXACT = (np.float32, np.float64, np.complex64, np.complex128)


def _check_matrix_dtype(name: str, aval: ShapedArray) -> None:
    if np.dtype(aval.dtype) not in {np.dtype(t) for t in _INEXACT}:
        raise TypeError(
            f"{name} needs a float32, float64, complex64 or complex128 operand, "
            f"got {np.dtype(aval.dtype).name}"
        )


def _is_complex(dtype: Any) -> bool:
    return dtypes.issubdtype(dtype, np.complexfloating)


def _mT(x: Any) -> Any:
    nd = get_aval(x).ndim
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x: Any) -> Any:
    """Conjugate transpose of the trailing two dimensions."""
    x = _mT(x)
    return conj(x) if _is_complex(get_aval(x).dtype) else x


def _tri_mask(aval: ShapedArray, lower: bool, diag: float = 1.0) -> np.ndarray:
    n = aval.shape[-1]
    m = aval.shape[-2]
    mask = np.tri(m, n, -1) if lower else np.tri(n, m, -1).T
    mask = mask + diag * np.eye(m, n)
    return mask.astype(aval.dtype).reshape((1,) * (aval.ndim - 2) + (m, n))


def _triangle(x: Any, lower: bool, diag: float = 1.0) -> Any:
    """The `lower` (or upper) triangle of `x`, with the diagonal scaled by `diag`."""
    return mul(x, _tri_mask(get_aval(x), lower, diag))


def _primitive(name: str, abstract_eval: Any, lowering: Any, multiple_results=False) -> Primitive:
    prim = Primitive(name)
    prim.multiple_results = multiple_results
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(functools.partial(dispatch.apply_primitive, prim))
    mlir.register_lowering(prim, lowering, platform="cpu")
    return prim


def _batch_iota_mask(ctx: Any, aval: ShapedArray, lower: bool) -> ir.Value:
    """A bool tensor of `aval`'s shape: True on the lower (upper) triangle."""
    i32 = ShapedArray(aval.shape, np.dtype(np.int32))
    rows = mlir.iota(ctx, i32, aval.ndim - 2)
    cols = mlir.iota(ctx, i32, aval.ndim - 1)
    return mlir.compare_hlo(rows, cols, "GE" if lower else "LE")


# ---------------------------------------------------------------------------
# cholesky


def _cholesky_abstract_eval(x: ShapedArray) -> ShapedArray:
    _check_matrix_dtype("cholesky", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"The input to cholesky must have shape [..., n, n], got shape {tuple(x.shape)}"
        )
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _cholesky_lowering(ctx: Any, x: ir.Value) -> list:
    (aval,) = ctx.avals_in
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    factor, info = _lapack.custom_call(
        _lapack.target_name("potrf", aval.dtype),
        [x],
        [aval],
        [aval, info_aval],
        {"uplo": "L"},
        aliases={0: 0},
    )
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    ok = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    lower = _batch_iota_mask(ctx, aval, lower=True)
    zeros = mlir.full_like_aval(ctx, 0, aval)
    nans = mlir.full_like_aval(ctx, np.nan, aval)
    out = hlo.select(ok, hlo.select(lower, factor, zeros), nans)
    return [out]


cholesky_p = _primitive("cholesky", _cholesky_abstract_eval, _cholesky_lowering)


def _cholesky_jvp(primals: list, tangents: list) -> tuple:
    # L = chol(A); dL = L @ phi(L^{-1} dA L^{-H}), phi: the lower triangle with a
    # halved diagonal.
    (x,), (dx,) = primals, tangents
    L = cholesky_p.bind(x)
    if type(dx) is ad.Zero:
        return L, ad.Zero(get_aval(L))
    tmp = triangular_solve(L, dx, left_side=False, transpose_a=True, conjugate_a=True, lower=True)
    tmp = triangular_solve(L, tmp, left_side=True, lower=True)
    dL = batch_matmul(L, _triangle(tmp, lower=True, diag=0.5))
    return L, dL


def _cholesky_batch(args: list, dims: list) -> tuple:
    (x,), (bd,) = args, dims
    return cholesky_p.bind(batching.moveaxis(x, bd, 0)), 0


ad.primitive_jvps[cholesky_p] = _cholesky_jvp
batching.primitive_batchers[cholesky_p] = _cholesky_batch


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor `L` of Hermitian positive-definite matrices: ``x = L @ L^H``.

    Args:
      x: an array of shape ``[..., n, n]`` (float32, float64, complex64 or complex128).
      symmetrize_input: if True, factor ``(x + x^H) / 2``, so that the derivative is
        that of a symmetric function; otherwise only the lower triangle of `x` is read.

    Returns:
      `L`, lower triangular, upper triangle zero; all NaN for a matrix whose
      factorization fails (not positive definite).
    """
    if symmetrize_input:
        _cholesky_abstract_eval(get_aval(x))  # shape errors before symmetrizing
        x = symmetrize(x)
    return cholesky_p.bind(x)


def symmetrize(x: Any) -> Any:
    """``(x + x^H) / 2`` over the trailing two dimensions."""
    return div(add(x, _H(x)), np.asarray(2, get_aval(x).dtype))


# ---------------------------------------------------------------------------
# triangular_solve


def _triangular_solve_abstract_eval(
    a: ShapedArray, b: ShapedArray, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
) -> ShapedArray:
    _check_matrix_dtype("triangular_solve", a)
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise TypeError(
            "triangular_solve requires a and b to have the same dtype, got "
            f"{np.dtype(a.dtype).name} and {np.dtype(b.dtype).name}"
        )
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"triangular_solve requires a to be a batch of square matrices, got {tuple(a.shape)}"
        )
    if a.ndim != b.ndim or tuple(a.shape[:-2]) != tuple(b.shape[:-2]):
        raise ValueError(
            "triangular_solve requires a and b to have the same batch dimensions, got "
            f"{tuple(a.shape)} and {tuple(b.shape)}"
        )
    common = b.shape[-2] if left_side else b.shape[-1]
    if common != a.shape[-1]:
        side = "left" if left_side else "right"
        raise ValueError(
            f"triangular_solve with {side}_side={bool(left_side)} requires b's "
            f"{'second-to-last' if left_side else 'last'} dimension to be {a.shape[-1]}, "
            f"got shape {tuple(b.shape)}"
        )
    return ShapedArray(b.shape, b.dtype, a.weak_type and b.weak_type)


def _triangular_solve_lowering(
    ctx: Any, a: ir.Value, b: ir.Value, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
) -> list:
    a_aval, b_aval = ctx.avals_in
    if conjugate_a and not transpose_a and _is_complex(a_aval.dtype):
        # trsm has op(a) in {a, a^T, a^H}: conjugate a itself for conj(a).
        a = hlo.complex(hlo.real(a), hlo.negate(hlo.imag(a)))
        conjugate_a = False
    trans = "N"
    if transpose_a:
        trans = "C" if conjugate_a and _is_complex(a_aval.dtype) else "T"
    (out,) = _lapack.custom_call(
        _lapack.target_name("trsm", a_aval.dtype),
        [a, b],
        [a_aval, b_aval],
        [b_aval],
        {
            "side": "L" if left_side else "R",
            "uplo": "L" if lower else "U",
            "trans_x": trans,
            "diag": "U" if unit_diagonal else "N",
        },
        aliases={0: 1},
    )
    return [out]


triangular_solve_p = _primitive(
    "triangular_solve", _triangular_solve_abstract_eval, _triangular_solve_lowering
)


def _op(x: Any, transpose_a: bool, conjugate_a: bool) -> Any:
    if conjugate_a and _is_complex(get_aval(x).dtype):
        x = conj(x)
    return _mT(x) if transpose_a else x


def _triangular_solve_jvp_a(
    g_a, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    params = dict(
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    x = triangular_solve_p.bind(a, b, **params)
    g_a = _triangle(g_a, lower, diag=0.0 if unit_diagonal else 1.0)
    g_op = _op(g_a, transpose_a, conjugate_a)
    prod = batch_matmul(g_op, x) if left_side else batch_matmul(x, g_op)
    return neg(triangular_solve_p.bind(a, prod, **params))


def _triangular_solve_jvp_b(g_b, a, b, **params):
    return triangular_solve_p.bind(a, g_b, **params)


def _triangular_solve_transpose(
    ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    if ad.is_undefined_primal(a):
        raise ValueError("triangular_solve is not linear in its first operand")
    if type(ct) is ad.Zero:
        return [None, ad.Zero(b.aval)]
    ct_b = triangular_solve_p.bind(
        a,
        ct,
        left_side=left_side,
        lower=lower,
        transpose_a=not transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return [None, ct_b]


def _triangular_solve_batch(args, dims, **params):
    (a, b), (ad_, bd) = args, dims
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not batching.not_mapped)
    a = batching.bdim_at_front(a, ad_, size)
    b = batching.bdim_at_front(b, bd, size)
    return triangular_solve_p.bind(a, b, **params), 0


ad.defjvp(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
ad.primitive_transposes[triangular_solve_p] = _triangular_solve_transpose
batching.primitive_batchers[triangular_solve_p] = _triangular_solve_batch


def triangular_solve(
    a: Any,
    b: Any,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Any:
    """Solves ``op(a) @ x = b`` (`left_side`) or ``x @ op(a) = b`` for triangular `a`.

    Args:
      a: ``[..., m, m]`` triangular matrices; only the `lower` (or upper) triangle is read.
      b: ``[..., m, n]`` if `left_side` else ``[..., n, m]``, with `a`'s batch dimensions.
      left_side: which side `a` is on.
      lower: whether `a` is lower (else upper) triangular.
      transpose_a: ``op(a) = a^T``; with `conjugate_a`, ``a^H``.
      conjugate_a: conjugate `a` (``conj(a)``, or ``a^H`` with `transpose_a`).
      unit_diagonal: treat `a`'s diagonal as ones (it is not read).

    Returns:
      `x`, of `b`'s shape.
    """
    conjugate_a = bool(conjugate_a) and _is_complex(dtypes.dtype(a, canonicalize=True))
    return triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=conjugate_a,
        unit_diagonal=bool(unit_diagonal),
    )
