"""`lax.linalg`: linear-algebra primitives, run on CPU by jaxlib's LAPACK kernels.

JAX's `jax.lax.linalg` names. Each primitive takes matrices in its trailing two
dimensions; leading dimensions are batch dimensions, which the LAPACK kernels
loop over (so `vmap` just moves the mapped axis to the front).

- `cholesky(x, symmetrize_input=True)`: the lower Cholesky factor (``potrf``);
  where a factorization fails (the matrix is not positive definite) the factor
  is NaN on and below the diagonal and zero above, as in JAX. Every failed
  factorization (``info != 0``) is NaN, ``nan+nanj`` for complex types.
- `triangular_solve(a, b, ...)`: ``op(a) @ x = b`` or ``x @ op(a) = b`` for a
  triangular `a` (``trsm``); only `a`'s `lower` triangle is read.
- `eig(x, ...)`: eigenvalues and left/right eigenvectors of a general matrix
  (``geev``), always complex, unsorted, vectors of unit norm. Derivatives follow
  JAX: the eigenvalues' jvp is ``diag(V^{-1} dA V)``; the eigenvectors' jvp exists
  only with ``enable_eigvec_derivs=True`` (it assumes distinct eigenvalues and keeps
  ``geev``'s normalization), otherwise it raises `NotImplementedError`. Unlike JAX,
  the eigenvalues' second derivative works without that flag: the eigenvalue jvp
  does not depend on how the eigenvectors are scaled, so it differentiates through
  them with the flag set internally.
- `EigImplementation`, `EighImplementation`, `SvdAlgorithm`: JAX's enums; only the
  CPU LAPACK choice (``LAPACK``, ``QR``, ``DEFAULT``) is accepted.
- `tridiagonal` (``sytrd``/``hetrd``) and `ormqr` (``ormqr``/``unmqr``): the
  reduction to tridiagonal form and the product with a packed `Q` (module
  `_reflectors`); `cholesky_update` and `symmetric_product` (``syrk``), primitives
  lowered as compositions (`_rank_updates`); none has a jvp, as in JAX.
- `qdwh`: the polar decomposition by QDWH iterations, a composition of `qr`,
  `cholesky` and `triangular_solve` (`_qdwh`).
- `lu_pivots_to_permutation` binds its own primitive, as in JAX.

    >>> from polyjax_numpy.lax import linalg
    >>> linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]], np.float32))
    Array([[2., 0.],
           [1., 2.]], dtype=float32)
"""

from __future__ import annotations

import enum
import warnings
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core import dtypes
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, mlir
from polyjax_numpy.lax import _lapack, _qdwh
from polyjax_numpy.lax._complex import complex as _complex
from polyjax_numpy.lax._complex import conj, imag, real
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._dot import batch_matmul
from polyjax_numpy.lax._elementwise import (
    add,
    convert_element_type,
    div,
    eq,
    mul,
    neg,
    select_n,
    sub,
)
from polyjax_numpy.lax._rank_updates import (
    cholesky_update,
    cholesky_update_p,
    symmetric_product,
    symmetric_product_p,
)
from polyjax_numpy.lax._reductions import argmax, reduce_sum
from polyjax_numpy.lax._reflectors import ormqr, ormqr_p, tridiagonal, tridiagonal_p
from polyjax_numpy.lax._schur import hessenberg, hessenberg_p, schur, schur_p
from polyjax_numpy.lax._shape_ops import (
    broadcast_in_dim,
    broadcasted_iota,
    expand_dims,
    pad,
    transpose,
)
from polyjax_numpy.lax._shape_ops import slice as _slice

__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "cholesky",
    "cholesky_p",
    "cholesky_update",
    "cholesky_update_p",
    "eig",
    "eig_p",
    "eigh",
    "eigh_p",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "ormqr",
    "ormqr_p",
    "qdwh",
    "qr",
    "qr_p",
    "schur",
    "schur_p",
    "svd",
    "svd_p",
    "symmetric_product",
    "symmetric_product_p",
    "tridiagonal",
    "tridiagonal_p",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
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


def _triangle(x: Any, lower: bool, diag: float = 1.0) -> Any:
    """The `lower` (or upper) triangle of `x`, with the diagonal scaled by `diag`.

    The other triangle is selected away, not multiplied by zero, so that it is an
    exact ``+0`` even where `x` holds negatives, infinities or NaNs there.
    """
    aval = get_aval(x)
    m, n = aval.shape[-2:]
    strict = np.tri(m, n, -1, dtype=bool) if lower else np.tri(n, m, -1, dtype=bool).T
    dims = (aval.ndim - 2, aval.ndim - 1)
    zeros = broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
    if diag == 1.0:
        on_diag = x
    elif diag == 0.0:
        on_diag = zeros
    else:
        on_diag = mul(x, np.asarray(diag, aval.dtype))
    eye = broadcast_in_dim(np.eye(m, n, dtype=bool), aval.shape, dims)
    return select_n(broadcast_in_dim(strict, aval.shape, dims), select_n(eye, zeros, on_diag), x)


def _nans(ctx: Any, aval: ShapedArray) -> ir.Value:
    """What a failed factorization returns: NaN (``nan+nanj`` when complex), as in JAX."""
    nan = complex(np.nan, np.nan) if _is_complex(aval.dtype) else np.nan
    return mlir.full_like_aval(ctx, nan, aval)


def _primitive(
    name: str, abstract_eval: Any, lowering: Any, multiple_results: bool = False, **rules: Any
) -> Primitive:
    # jaxlib's LAPACK kernels run on CPU only: no lowering for other platforms.
    return standard_primitive(
        name,
        abstract_eval,
        lowering,
        multiple_results=multiple_results,
        lowering_platform="cpu",
        **rules,
    )


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
        ctx,
        _lapack.target_name("potrf", aval.dtype),
        [x],
        [aval],
        [aval, info_aval],
        {"uplo": "L"},
        aliases={0: 0},
        vectors=(1,),
    )
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    ok = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    lower = _batch_iota_mask(ctx, aval, lower=True)
    zeros = mlir.full_like_aval(ctx, 0, aval)
    # As in JAX, a failed factorization is NaN on and below the diagonal, zero above.
    out = hlo.select(lower, hlo.select(ok, factor, _nans(ctx, aval)), zeros)
    return [out]


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


cholesky_p = _primitive(
    "cholesky",
    _cholesky_abstract_eval,
    _cholesky_lowering,
    jvp=_cholesky_jvp,
    batching=_cholesky_batch,
)


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor `L` of Hermitian positive-definite matrices: ``x = L @ L^H``.

    Args:
      x: an array of shape ``[..., n, n]`` (float32, float64, complex64 or complex128).
      symmetrize_input: if True, factor ``(x + x^H) / 2``, so that the derivative is
        that of a symmetric function; otherwise only the lower triangle of `x` is read.

    Returns:
      `L`, lower triangular, upper triangle zero; for a matrix whose factorization
      fails (not positive definite) NaN on and below the diagonal, as in JAX.
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
        ctx,
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


triangular_solve_p = _primitive(
    "triangular_solve",
    _triangular_solve_abstract_eval,
    _triangular_solve_lowering,
    jvp_terms=(_triangular_solve_jvp_a, _triangular_solve_jvp_b),
    transpose=_triangular_solve_transpose,
    batching=_triangular_solve_batch,
)


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


# ---------------------------------------------------------------------------
# lu


def _diag_mask(aval: ShapedArray) -> np.ndarray:
    m, n = aval.shape[-2:]
    return np.eye(m, n).astype(aval.dtype).reshape((1,) * (aval.ndim - 2) + (m, n))


def _lu_pivots_abstract_eval(pivots: ShapedArray, *, permutation_size: int) -> ShapedArray:
    if np.dtype(pivots.dtype) != np.dtype(np.int32) or pivots.ndim < 1:
        raise TypeError(
            "lu_pivots_to_permutation needs int32 pivots of shape [..., k], got "
            f"{pivots.str_short()}"
        )
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"lu_pivots_to_permutation: permutation_size={permutation_size} is less than the "
            f"number of pivots, {pivots.shape[-1]}"
        )
    return ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))


def _lu_pivots_composed(pivots: Any, *, permutation_size: int) -> Any:
    """The swaps applied to ``iota``, unrolled (one step per pivot)."""
    aval = get_aval(pivots)
    batch, k = tuple(aval.shape[:-1]), aval.shape[-1]
    shape = (*batch, permutation_size)
    iota = broadcasted_iota(np.int32, shape, len(batch))
    perm = iota
    for i in range(k):
        j = _slice(pivots, (0,) * len(batch) + (i,), (*batch, i + 1))  # [..., 1]
        onehot_j = convert_element_type(eq(iota, j), np.int32)
        onehot_i = convert_element_type(eq(iota, np.int32(i)), np.int32)
        p_j = reduce_sum(mul(perm, onehot_j), (len(batch),))
        p_i = reduce_sum(mul(perm, onehot_i), (len(batch),))
        delta = expand_dims(sub(p_j, p_i), (len(batch),))
        perm = add(perm, mul(sub(onehot_i, onehot_j), delta))
    return perm


def _lu_pivots_batch(args: list, dims: list, **params: Any) -> tuple:
    return lu_pivots_to_permutation_p.bind(batching.moveaxis(args[0], dims[0], 0), **params), 0


lu_pivots_to_permutation_p = standard_primitive(
    "lu_pivots_to_permutation",
    _lu_pivots_abstract_eval,
    mlir.lower_fun(_lu_pivots_composed, multiple_results=False),
    batching=_lu_pivots_batch,
    jvp="zero",
)


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that LAPACK-style row swaps `pivots` (0-based) describe.

    Row ``i`` was swapped with row ``pivots[..., i]``, in order; the result `perm`
    satisfies ``a[..., perm, :] == l @ u``.

    Args:
      pivots: ``[..., k]`` int32.
      permutation_size: the permutation's length, at least `k`.

    Returns:
      ``[..., permutation_size]`` int32.

    Example:
      >>> lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 4)
      Array([2, 0, 3, 1], dtype=int32)
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def _lu_abstract_eval(x: ShapedArray) -> list:
    _check_matrix_dtype("lu", x)
    if x.ndim < 2:
        raise ValueError(f"Argument to LU decomposition must have ndims >= 2, got {x.ndim}")
    batch, (m, n) = tuple(x.shape[:-2]), x.shape[-2:]
    k = min(m, n)
    i32 = np.dtype(np.int32)
    return [
        ShapedArray(x.shape, x.dtype, x.weak_type),
        ShapedArray((*batch, k), i32),
        ShapedArray((*batch, m), i32),
    ]


def _lu_lowering(ctx: Any, x: ir.Value) -> list:
    (aval,) = ctx.avals_in
    lu_aval, piv_aval, perm_aval = ctx.avals_out
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    factor, ipiv, info = _lapack.custom_call(
        ctx,
        _lapack.target_name("getrf", aval.dtype),
        [x],
        [aval],
        [aval, piv_aval, info_aval],
        {},
        aliases={0: 0},
        vectors=(1, 2),
    )
    pivots = hlo.subtract(ipiv, mlir.full_like_aval(ctx, 1, piv_aval))  # 1-based -> 0-based
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "GE")
    ok = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    factor = hlo.select(ok, factor, _nans(ctx, aval))
    perm_rule = mlir.lower_fun(
        lambda p: _lu_pivots_composed(p, permutation_size=aval.shape[-2]), multiple_results=False
    )
    (perm,) = perm_rule(ctx.replace(avals_in=[piv_aval], avals_out=[perm_aval]), pivots)
    return [factor, pivots, perm]


def _permutation_matrix(perm: Any, dtype: Any) -> Any:
    """``P`` with ``(P @ a) == a[..., perm, :]``: ``P[i, j] = (perm[i] == j)``."""
    aval = get_aval(perm)
    m = aval.shape[-1]
    shape = (*aval.shape, m)
    cols = broadcasted_iota(np.int32, shape, aval.ndim)
    return convert_element_type(eq(expand_dims(perm, (aval.ndim,)), cols), dtype)


def _lu_jvp(primals: list, tangents: list) -> tuple:
    (x,), (dx,) = primals, tangents
    lu_, pivots, perm = lu_p.bind(x)
    aval = get_aval(x)
    int_zeros = [ad.Zero.from_primal_value(pivots), ad.Zero.from_primal_value(perm)]
    if type(dx) is ad.Zero:
        return [lu_, pivots, perm], [ad.Zero(get_aval(lu_)), *int_zeros]
    m, n = aval.shape[-2:]
    if m != n:
        raise NotImplementedError("lu: derivatives of non-square matrices are not supported yet")
    eye = _diag_mask(aval)
    l_ = add(_triangle(lu_, lower=True, diag=0.0), eye)
    u_ = _triangle(lu_, lower=False)
    pdx = batch_matmul(_permutation_matrix(perm, aval.dtype), dx)
    la = triangular_solve(l_, pdx, left_side=True, lower=True, unit_diagonal=True)
    la = triangular_solve(u_, la, left_side=False, lower=False)
    dl = batch_matmul(l_, _triangle(la, lower=True, diag=0.0))
    du = batch_matmul(_triangle(la, lower=False), u_)
    return [lu_, pivots, perm], [add(dl, du), *int_zeros]


def _lu_batch(args: list, dims: list) -> tuple:
    (x,), (bd,) = args, dims
    return lu_p.bind(batching.moveaxis(x, bd, 0)), [0, 0, 0]


lu_p = _primitive(
    "lu", _lu_abstract_eval, _lu_lowering, multiple_results=True, jvp=_lu_jvp, batching=_lu_batch
)


def lu(x: Any) -> tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting: ``x[..., perm, :] == l @ u`` (``getrf``).

    Returns:
      ``(lu, pivots, permutation)``: `lu` holds ``l`` below the diagonal (its unit
      diagonal is implicit) and ``u`` on and above it; `pivots` (int32, ``[..., min(m, n)]``,
      0-based) are LAPACK's row swaps; `permutation` (int32, ``[..., m]``) applies them all.
      A factorization that fails (bad input) gives NaN in `lu`; a singular matrix does not
      fail (``u`` has a zero on its diagonal).
    """
    return tuple(lu_p.bind(x))


# ---------------------------------------------------------------------------
# eigh


def _eigh_abstract_eval(x: ShapedArray, *, lower: bool, sort_eigenvalues: bool) -> list:
    _check_matrix_dtype("eigh", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"Argument to symmetric eigendecomposition must have shape [..., n, n], got "
            f"shape {tuple(x.shape)}"
        )
    real_dtype = np.finfo(x.dtype).dtype
    return [
        ShapedArray(x.shape, x.dtype, x.weak_type),
        ShapedArray(tuple(x.shape[:-1]), real_dtype, x.weak_type),
    ]


def _eigh_lowering(ctx: Any, x: ir.Value, *, lower: bool, sort_eigenvalues: bool) -> list:
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    fn = "heevd" if _is_complex(aval.dtype) else "syevd"
    v, w, info = _lapack.custom_call(
        ctx,
        _lapack.target_name(fn, aval.dtype),
        [x],
        [aval],
        [v_aval, w_aval, info_aval],
        {"mode": "V", "uplo": "L" if lower else "U"},
        aliases={0: 0},
        vectors=(1, 2),
    )
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    ok_v = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    ok_w = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(w_aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    v = hlo.select(ok_v, v, _nans(ctx, v_aval))
    w = hlo.select(ok_w, w, _nans(ctx, w_aval))
    return [v, w]  # LAPACK sorts the eigenvalues in ascending order


def _eigh_jvp(primals: list, tangents: list, *, lower: bool, sort_eigenvalues: bool) -> tuple:
    # w_dot = Re diag(V^H dA V); V_dot = V (F * (V^H dA V)), F_ij = 1 / (w_j - w_i) off
    # the diagonal and 0 on it.
    (x,), (dx,) = primals, tangents
    v, w = eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues)
    if type(dx) is ad.Zero:
        return [v, w], [ad.Zero(get_aval(v)), ad.Zero(get_aval(w))]
    aval = get_aval(x)
    dx = symmetrize(dx)  # the decomposition reads one triangle of a Hermitian matrix
    vdv = batch_matmul(_H(v), batch_matmul(dx, v))
    eye = _diag_mask(aval)
    diag = reduce_sum(mul(vdv, eye), (aval.ndim - 1,))
    w_dot = _real_part(diag)
    w_row = expand_dims(w, (aval.ndim - 2,))  # [..., 1, n]: w_j
    w_col = expand_dims(w, (aval.ndim - 1,))  # [..., n, 1]: w_i
    diff = sub(w_row, w_col)
    eye_r = eye.real.astype(get_aval(w).dtype)
    f = div(1 - eye_r, add(diff, eye_r))  # the diagonal divides 0 by 1
    f = convert_element_type(f, aval.dtype)
    v_dot = batch_matmul(v, mul(f, vdv))
    return [v, w], [v_dot, w_dot]


def _real_part(x: Any) -> Any:
    return real(x) if _is_complex(get_aval(x).dtype) else x


def _eigh_batch(args: list, dims: list, **params: Any) -> tuple:
    (x,), (bd,) = args, dims
    return eigh_p.bind(batching.moveaxis(x, bd, 0), **params), [0, 0]


eigh_p = _primitive(
    "eigh",
    _eigh_abstract_eval,
    _eigh_lowering,
    multiple_results=True,
    jvp=_eigh_jvp,
    batching=_eigh_batch,
)


class EighImplementation(enum.Enum):
    """Which algorithm computes `eigh` (JAX's names; polyjax runs LAPACK's QR-based
    ``syevd``/``heevd`` on CPU)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def eigh(
    x: Any,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: Any = None,
    implementation: EighImplementation | None = None,
) -> tuple[Any, Any]:
    """Eigendecomposition of Hermitian matrices: ``x @ v == v * w`` (``syevd``/``heevd``).

    Args:
      x: ``[..., n, n]`` Hermitian (real symmetric) matrices.
      lower: read the lower (else upper) triangle of `x` (without `symmetrize_input`).
      symmetrize_input: decompose ``(x + x^H) / 2``.
      sort_eigenvalues: LAPACK already returns them in ascending order.
      subset_by_index: not supported (must be None or cover all eigenvalues).
      implementation: ``None`` or ``EighImplementation.QR`` (LAPACK on CPU).

    Returns:
      ``(v, w)``: eigenvectors in the columns of `v`, real eigenvalues `w` ascending.
    """
    if subset_by_index is not None and tuple(subset_by_index) != (0, get_aval(x).shape[-1]):
        raise NotImplementedError("eigh: subset_by_index is not supported yet")
    if implementation is not None and EighImplementation(implementation) is not (
        EighImplementation.QR
    ):
        raise NotImplementedError(
            f"eigh: implementation={implementation} is not supported (only QR, on CPU)"
        )
    if symmetrize_input:
        _eigh_abstract_eval(get_aval(x), lower=lower, sort_eigenvalues=sort_eigenvalues)
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


# ---------------------------------------------------------------------------
# eig


class EigImplementation(enum.Enum):
    """Which library computes `eig` (JAX's names; polyjax runs LAPACK on CPU)."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _eig_abstract_eval(
    x: ShapedArray,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: Any,
) -> list:
    _check_matrix_dtype("eig", x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"Argument to nonsymmetric eigendecomposition must have shape [..., n, n], got "
            f"shape {tuple(x.shape)}"
        )
    dtype = np.result_type(x.dtype, np.complex64)
    vectors = ShapedArray(x.shape, dtype)
    return [
        ShapedArray(tuple(x.shape[:-1]), dtype),
        *[vectors] * (bool(compute_left_eigenvectors) + bool(compute_right_eigenvectors)),
    ]


def _eig_lowering(
    ctx: Any,
    x: ir.Value,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: Any,
) -> list:
    (aval,) = ctx.avals_in
    batch, n = tuple(aval.shape[:-2]), aval.shape[-1]
    w_aval, *v_avals = ctx.avals_out
    if n == 0 or 0 in batch:  # nothing to compute; geev rejects n == 0 (lda < 1)
        return [mlir.full_like_aval(ctx, 0, a) for a in ctx.avals_out]
    v_aval = ShapedArray(aval.shape, w_aval.dtype)
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    attrs = {
        "compute_left": "V" if compute_left_eigenvectors else "N",
        "compute_right": "V" if compute_right_eigenvectors else "N",
    }
    target = _lapack.target_name("geev", aval.dtype)
    if _is_complex(aval.dtype):
        w, vl, vr, info = _lapack.custom_call(
            ctx, target, [x], [aval], [w_aval, v_aval, v_aval, info_aval], attrs, vectors=(0, 3)
        )
    else:  # real and imaginary parts of the eigenvalues; complex eigenvectors
        part = ShapedArray(w_aval.shape, aval.dtype)
        wr, wi, vl, vr, info = _lapack.custom_call(
            ctx,
            target,
            [x],
            [aval],
            [part, part, v_aval, v_aval, info_aval],
            attrs,
            vectors=(0, 1, 4),
        )
        w = hlo.complex(wr, wi)
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    outs = [w]
    if compute_left_eigenvectors:
        outs.append(vl)
    if compute_right_eigenvectors:
        outs.append(vr)
    return [_nan_where_failed(ctx, ok, out, a) for out, a in zip(outs, ctx.avals_out)]


def _nan_where_failed(ctx: Any, ok: ir.Value, out: ir.Value, aval: ShapedArray) -> ir.Value:
    """`out` with NaN in every batch element whose `ok` (shape: the batch) is False."""
    batch = tuple(ctx.avals_in[0].shape[:-2])
    ok = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    return hlo.select(ok, out, _nans(ctx, aval))


def _solve(a: Any, b: Any) -> Any:
    """``a^{-1} @ b`` for square `a`, by LU with partial pivoting."""
    lu_, _, perm = lu_p.bind(a)
    pb = batch_matmul(_permutation_matrix(perm, get_aval(b).dtype), b)
    y = triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


def _diagonal(x: Any) -> Any:
    aval = get_aval(x)
    return reduce_sum(mul(x, _diag_mask(aval)), (aval.ndim - 1,))


def _eigvec_tangent(w: Any, v: Any, vinv_dx_v: Any) -> Any:
    """The tangent of ``geev``'s eigenvectors `v` of a matrix ``x`` with eigenvalues `w`.

    With ``dx = v C v^{-1}``-style bookkeeping, ``dv = v C`` where ``C_ij = (v^{-1} dx
    v)_ij / (w_j - w_i)`` off the diagonal. The diagonal of ``C`` (each eigenvector's
    free complex scale) is fixed by ``geev``'s normalization: unit 2-norm (``Re(v_j^H
    dv_j) = 0``) and a real largest-magnitude component ``k`` (``Im(dv_kj) = 0``).
    """
    aval = get_aval(v)
    nd = aval.ndim
    eye = _diag_mask(aval)
    diff = sub(expand_dims(w, (nd - 2,)), expand_dims(w, (nd - 1,)))  # w_j - w_i
    f = div(1 - eye, add(diff, eye))  # the diagonal divides 0 by 1
    du = batch_matmul(v, mul(f, vinv_dx_v))
    norm_re = neg(real(reduce_sum(mul(conj(v), du), (nd - 2,))))  # [..., n]
    # The largest component's index is piecewise constant: no tangent flows through it.
    k = argmax(real(mul(conj(v), v)), nd - 2, np.int32)
    rows = broadcasted_iota(np.int32, aval.shape, nd - 2)
    onehot = convert_element_type(eq(rows, expand_dims(k, (nd - 2,))), aval.dtype)
    v_k = real(reduce_sum(mul(v, onehot), (nd - 2,)))
    du_k = imag(reduce_sum(mul(du, onehot), (nd - 2,)))
    scale = _complex(norm_re, neg(div(du_k, v_k)))
    return add(du, mul(v, expand_dims(scale, (nd - 2,))))


def _eig_jvp(
    primals: list,
    tangents: list,
    *,
    compute_left_eigenvectors: bool,
    compute_right_eigenvectors: bool,
    enable_eigvec_derivs: bool,
    implementation: Any,
) -> tuple:
    # w_dot = diag(V^{-1} dA V) for the right eigenvectors V (A V = V diag(w)).
    (x,), (dx,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "eig: derivatives of eigenvectors are defined only for distinct eigenvalues and "
            "a unique largest component of each eigenvector, which cannot be checked; pass "
            "enable_eigvec_derivs=True to opt in (or differentiate the eigenvalues only)"
        )
    # The eigenvalues' derivative does not depend on how V is scaled, so differentiating
    # it again through V is valid without the user's opt-in.
    outs = eig_p.bind(
        x,
        compute_left_eigenvectors=left,
        compute_right_eigenvectors=True,
        enable_eigvec_derivs=True,
        implementation=implementation,
    )
    w, vr = outs[0], outs[-1]
    primal_out = [w, *([outs[1]] if left else []), *([vr] if right else [])]
    if type(dx) is ad.Zero:
        return primal_out, [ad.Zero(get_aval(o)) for o in primal_out]
    dx = convert_element_type(dx, get_aval(vr).dtype)
    vinv_dx_v = _solve(vr, batch_matmul(dx, vr))
    tangent_out = [_diagonal(vinv_dx_v)]
    if left:  # left eigenvectors are right eigenvectors of x^H, eigenvalues conj(w)
        vl = outs[1]
        tangent_out.append(_eigvec_tangent(conj(w), vl, _solve(vl, batch_matmul(_H(dx), vl))))
    if right:
        tangent_out.append(_eigvec_tangent(w, vr, vinv_dx_v))
    return primal_out, tangent_out


def _eig_batch(args: list, dims: list, **params: Any) -> tuple:
    (x,), (bd,) = args, dims
    out = eig_p.bind(batching.moveaxis(x, bd, 0), **params)
    return out, [0] * len(out)


eig_p = _primitive(
    "eig",
    _eig_abstract_eval,
    _eig_lowering,
    multiple_results=True,
    jvp=_eig_jvp,
    batching=_eig_batch,
)


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: EigImplementation | str | None = None,
    use_magma: bool | None = None,
) -> list:
    """Eigendecomposition of general square matrices (``geev``).

    Args:
      x: ``[..., n, n]`` (float32, float64, complex64 or complex128).
      compute_left_eigenvectors: also return `vl`, with ``vl[..., :, j]^H @ x ==
        w[..., j] * vl[..., :, j]^H``.
      compute_right_eigenvectors: also return `vr`, with ``x @ vr[..., :, j] ==
        w[..., j] * vr[..., :, j]``.
      enable_eigvec_derivs: allow differentiating `vl` and `vr`. Their derivative
        follows ``geev``'s normalization (unit 2-norm, largest-magnitude component
        real) and is valid only for distinct eigenvalues and a unique largest
        component, which cannot be checked; without it, only `w` is differentiable.
      implementation: ``None`` or ``EigImplementation.LAPACK`` (the CPU kernel).
      use_magma: deprecated spelling of `implementation` (GPU only in JAX).

    Returns:
      ``[w, vl, vr]`` without the vectors not asked for: complex eigenvalues `w`
      (``[..., n]``, in LAPACK's order, unsorted) and complex eigenvectors in the
      columns of `vl` and `vr` (``[..., n, n]``), each of unit norm. A batch element
      whose decomposition fails (for instance with non-finite input) is all NaN.

    Raises:
      TypeError: for an integer or low-precision `x`.
      ValueError: for a non-square `x`.
      NotImplementedError: for a GPU implementation (MAGMA, cuSOLVER).

    Example:
      >>> w, vr = eig(np.array([[2.0, 0.0], [0.0, 3.0]], np.float32),
      ...             compute_left_eigenvectors=False)
      >>> w
      Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    if use_magma is not None:
        warnings.warn(
            "use_magma is deprecated, pass implementation=EigImplementation.MAGMA instead",
            DeprecationWarning,
            stacklevel=2,
        )
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    if implementation is not None:
        implementation = EigImplementation(implementation)
        if implementation is not EigImplementation.LAPACK:
            raise NotImplementedError(
                f"eig: implementation={implementation} is not supported (only LAPACK)"
            )
    return eig_p.bind(
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs),
        implementation=implementation,
    )


# ---------------------------------------------------------------------------
# qr and householder_product


def _householder_product_abstract_eval(a: ShapedArray, taus: ShapedArray) -> ShapedArray:
    _check_matrix_dtype("householder_product", a)
    if a.ndim < 2 or taus.ndim != a.ndim - 1 or tuple(taus.shape[:-1]) != tuple(a.shape[:-2]):
        raise ValueError(
            "householder_product needs a: [..., m, n] and taus: [..., k] with the same batch "
            f"dimensions, got {tuple(a.shape)} and {tuple(taus.shape)}"
        )
    m, n = a.shape[-2:]
    if not (m >= n >= taus.shape[-1]):
        raise ValueError(
            f"householder_product needs m >= n >= k, got a: {tuple(a.shape)}, taus: "
            f"{tuple(taus.shape)}"
        )
    if np.dtype(a.dtype) != np.dtype(taus.dtype):
        raise TypeError("householder_product: a and taus must have the same dtype")
    return ShapedArray(a.shape, a.dtype, a.weak_type)


def _householder_product_lowering(ctx: Any, a: ir.Value, taus: ir.Value) -> list:
    a_aval, t_aval = ctx.avals_in
    fn = "ungqr" if _is_complex(a_aval.dtype) else "orgqr"
    return _lapack.custom_call(
        ctx,
        _lapack.target_name(fn, a_aval.dtype),
        [a, taus],
        [a_aval, t_aval],
        [a_aval],
        {},
        aliases={0: 0},
        operand_vectors=(1,),
    )


def _householder_product_batch(args: list, dims: list) -> tuple:
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not batching.not_mapped)
    a, t = (batching.bdim_at_front(x, d, size) for x, d in zip(args, dims))
    return householder_product_p.bind(a, t), 0


householder_product_p = _primitive(
    "householder_product",
    _householder_product_abstract_eval,
    _householder_product_lowering,
    batching=_householder_product_batch,
)


def householder_product(a: Any, taus: Any) -> Any:
    """The product of the Householder reflectors stored below the diagonal of `a`
    (as ``geqrf`` leaves them) with scales `taus` (``orgqr``/``ungqr``).

    Args:
      a: ``[..., m, n]`` with ``m >= n``.
      taus: ``[..., k]`` with ``k <= n``.

    Returns:
      The ``[..., m, n]`` matrix with orthonormal columns.
    """
    return householder_product_p.bind(a, taus)


def _geqrf_abstract_eval(x: ShapedArray) -> list:
    _check_matrix_dtype("qr", x)
    k = min(x.shape[-2:])
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*x.shape[:-2], k), x.dtype)]


def _geqrf_lowering(ctx: Any, x: ir.Value) -> list:
    (aval,) = ctx.avals_in
    return _lapack.custom_call(
        ctx,
        _lapack.target_name("geqrf", aval.dtype),
        [x],
        [aval],
        list(ctx.avals_out),
        {},
        aliases={0: 0},
        vectors=(1,),
    )


def _geqrf_batch(args: list, dims: list) -> tuple:
    return geqrf_p.bind(batching.moveaxis(args[0], dims[0], 0)), [0, 0]


geqrf_p = _primitive(
    "geqrf", _geqrf_abstract_eval, _geqrf_lowering, multiple_results=True, batching=_geqrf_batch
)


def _qr_abstract_eval(x: ShapedArray, *, full_matrices: bool) -> list:
    _check_matrix_dtype("qr", x)
    if x.ndim < 2:
        raise ValueError(f"Argument to QR decomposition must have ndims >= 2, got {x.ndim}")
    batch, (m, n) = tuple(x.shape[:-2]), x.shape[-2:]
    k = m if full_matrices else min(m, n)
    return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


def _qr_impl(x: Any, *, full_matrices: bool) -> list:
    aval = get_aval(x)
    batch, (m, n) = tuple(aval.shape[:-2]), aval.shape[-2:]
    a, taus = geqrf_p.bind(x)
    zeros = (0,) * len(batch)
    if m < n:
        q_in = _slice(a, zeros + (0, 0), (*batch, m, m))
    elif full_matrices and m > n:
        config = [(0, 0, 0)] * len(batch) + [(0, 0, 0), (0, m - n, 0)]
        q_in = pad(a, np.zeros((), aval.dtype), config)
    else:
        q_in = a
    q = householder_product(q_in, taus)
    k = m if full_matrices else min(m, n)
    r = _triangle(_slice(a, zeros + (0, 0), (*batch, k, n)), lower=False)
    return [q, r]


def _qr_jvp(primals: list, tangents: list, *, full_matrices: bool) -> tuple:
    # For m >= n (reduced): with C = Q^H dX R^{-1}, dR = (C - B) R and dQ = Q B +
    # (dX - Q Q^H dX) R^{-1}, where B = tril(C, -1) - tril(C, -1)^H (plus, for complex
    # numbers, the imaginary part of C's diagonal that keeps R's diagonal real).
    (x,), (dx,) = primals, tangents
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    if type(dx) is ad.Zero:
        return [q, r], [ad.Zero(get_aval(q)), ad.Zero(get_aval(r))]
    m, n = get_aval(x).shape[-2:]
    if m < n or (full_matrices and m > n):
        raise NotImplementedError(
            "qr: derivatives need m >= n (and full_matrices=False when m > n)"
        )
    qt_dx = batch_matmul(_H(q), dx)
    c = triangular_solve(r, qt_dx, left_side=False, lower=False)
    low = _triangle(c, lower=True, diag=0.0)
    b = sub(low, _H(low))
    if _is_complex(get_aval(c).dtype):
        eye = _diag_mask(get_aval(c))
        diag_im = mul(_complex(np.zeros((), np.finfo(eye.dtype).dtype), imag(c)), eye)
        b = add(b, diag_im)
    dr = batch_matmul(sub(c, b), r)
    rest = sub(dx, batch_matmul(q, qt_dx))
    dq = add(batch_matmul(q, b), triangular_solve(r, rest, left_side=False, lower=False))
    return [q, r], [dq, dr]


def _qr_batch(args: list, dims: list, **params: Any) -> tuple:
    (x,), (bd,) = args, dims
    return qr_p.bind(batching.moveaxis(x, bd, 0), **params), [0, 0]


# QR is geqrf then householder_product, eagerly and in lowering (on every platform
# those two lower to).
qr_p = standard_primitive(
    "qr",
    _qr_abstract_eval,
    mlir.lower_fun(_qr_impl, multiple_results=True),
    multiple_results=True,
    impl=_qr_impl,
    jvp=_qr_jvp,
    batching=_qr_batch,
)


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True) -> tuple[Any, Any]:
    """QR decomposition ``x == q @ r`` (``geqrf`` then ``orgqr``/``ungqr``).

    Args:
      x: ``[..., m, n]``.
      full_matrices: `q` is ``[..., m, m]`` and `r` ``[..., m, n]``; otherwise, with
        ``k = min(m, n)``, `q` is ``[..., m, k]`` and `r` ``[..., k, n]``.

    Returns:
      ``(q, r)``: `q` with orthonormal columns, `r` upper triangular.
    """
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported yet")
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


# ---------------------------------------------------------------------------
# svd


def _svd_abstract_eval(x: ShapedArray, *, full_matrices: bool, compute_uv: bool) -> list:
    _check_matrix_dtype("svd", x)
    if x.ndim < 2:
        raise ValueError(
            f"Argument to singular value decomposition must have ndims >= 2, got {x.ndim}"
        )
    batch, (m, n) = tuple(x.shape[:-2]), x.shape[-2:]
    k = min(m, n)
    s = ShapedArray((*batch, k), np.finfo(x.dtype).dtype)
    if not compute_uv:
        return [s]
    return [
        s,
        ShapedArray((*batch, m, m if full_matrices else k), x.dtype),
        ShapedArray((*batch, n if full_matrices else k, n), x.dtype),
    ]


def _empty_svd(ctx: Any, avals: tuple) -> list:
    """The SVD of matrices with no rows or no columns: no singular values, and identity
    (full) or empty (reduced) singular vectors, as NumPy gives.

    LAPACK's gesdd rejects these shapes (a zero leading dimension), so no call is made.
    """
    outs = []
    for a in avals:
        if a.ndim >= 2 and a.shape[-1] == a.shape[-2] > 0:  # full u or vh; s is empty
            eye = mlir.ir_constant(np.eye(a.shape[-1], dtype=a.dtype))
            outs.append(mlir.broadcast_in_dim(ctx, eye, a, (a.ndim - 2, a.ndim - 1)))
        else:
            outs.append(mlir.full_like_aval(ctx, 0, a))
    return outs


def _svd_lowering(ctx: Any, x: ir.Value, *, full_matrices: bool, compute_uv: bool) -> list:
    (aval,) = ctx.avals_in
    batch, (m, n) = tuple(aval.shape[:-2]), aval.shape[-2:]
    k = min(m, n)
    u_aval = ShapedArray((*batch, m, m if full_matrices else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full_matrices else k, n), aval.dtype)
    s_aval = ShapedArray((*batch, k), np.finfo(aval.dtype).dtype)
    if isinstance(k, int) and k == 0:
        return _empty_svd(ctx, (s_aval, u_aval, vt_aval) if compute_uv else (s_aval,))
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    _, s, u, vt, info = _lapack.custom_call(
        ctx,
        _lapack.target_name("gesdd", aval.dtype),
        [x],
        [aval],
        [aval, s_aval, u_aval, vt_aval, info_aval],
        {"mode": "A" if full_matrices else "S"},
        aliases={0: 0},
        vectors=(1, 4),
    )
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    outs = []
    pairs = ((s, s_aval), (u, u_aval), (vt, vt_aval)) if compute_uv else ((s, s_aval),)
    for val, a in pairs:
        ok_b = mlir.broadcast_in_dim(
            ctx, ok, ShapedArray(a.shape, np.dtype(bool)), tuple(range(len(batch)))
        )
        outs.append(hlo.select(ok_b, val, _nans(ctx, a)))
    return outs


def _svd_jvp(primals: list, tangents: list, *, full_matrices: bool, compute_uv: bool) -> tuple:
    # With A = U S V^H (reduced, k = min(m, n)) and dP = U^H dA V:
    #   dS = Re diag(dP),
    #   dU = U (F o (dP S + S dP^H)) + (I - U U^H) dA V S^{-1},
    #   dV = V (F o (S dP + dP^H S)) + (I - V V^H) dA^H U S^{-1},
    # where F_ij = 1 / (s_j^2 - s_i^2) off the diagonal and 0 on it (distinct singular
    # values). For complex A, U^H dU and V^H dV may have imaginary diagonals; only their
    # difference, Im(dP_ii) / s_i, is determined, and it goes to dU.
    (x,), (dx,) = primals, tangents
    aval = get_aval(x)
    m, n = aval.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "svd: derivatives of u and vh with full_matrices=True need a square matrix "
            "(the extra columns are not unique); use full_matrices=False"
        )
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True)
    primal_out = [s, u, vt] if compute_uv else [s]
    if type(dx) is ad.Zero:
        return primal_out, [ad.Zero(get_aval(o)) for o in primal_out]
    v = _H(vt)
    dp = batch_matmul(_H(u), batch_matmul(dx, v))
    s_dot = _real_part(_diagonal(dp))
    if not compute_uv:
        return primal_out, [s_dot]
    nd = aval.ndim
    s_row = convert_element_type(expand_dims(s, (nd - 2,)), aval.dtype)  # [..., 1, k]: s_j
    s_col = convert_element_type(expand_dims(s, (nd - 1,)), aval.dtype)  # [..., k, 1]: s_i
    s2 = mul(s, s)
    eye = _diag_mask(ShapedArray((*aval.shape[:-2], min(m, n), min(m, n)), get_aval(s).dtype))
    diff = sub(expand_dims(s2, (nd - 2,)), expand_dims(s2, (nd - 1,)))
    f = convert_element_type(div(1 - eye, add(diff, eye)), aval.dtype)
    dp_h = _H(dp)
    omega_u = mul(f, add(mul(dp, s_row), mul(s_col, dp_h)))
    omega_v = mul(f, add(mul(s_col, dp), mul(dp_h, s_row)))
    if _is_complex(aval.dtype):
        phase = convert_element_type(div(imag(_diagonal(dp)), s), aval.dtype)
        phase = mul(expand_dims(phase, (nd - 1,)), np.asarray(1j, aval.dtype))
        omega_u = add(omega_u, mul(phase, eye.astype(aval.dtype)))
    du = batch_matmul(u, omega_u)
    dv = batch_matmul(v, omega_v)
    if m > n:  # the part of dA V outside the span of U
        du = add(du, div(sub(batch_matmul(dx, v), batch_matmul(u, dp)), s_row))
    if n > m:
        du_h = batch_matmul(_H(dx), u)
        dv = add(dv, div(sub(du_h, batch_matmul(v, dp_h)), s_row))
    return primal_out, [s_dot, du, _H(dv)]


def _svd_batch(args: list, dims: list, **params: Any) -> tuple:
    (x,), (bd,) = args, dims
    out = svd_p.bind(batching.moveaxis(x, bd, 0), **params)
    return out, [0] * len(out)


svd_p = _primitive(
    "svd",
    _svd_abstract_eval,
    _svd_lowering,
    multiple_results=True,
    jvp=_svd_jvp,
    batching=_svd_batch,
)


class SvdAlgorithm(enum.Enum):
    """Which algorithm computes `svd` (JAX's names; polyjax runs LAPACK's divide and
    conquer ``gesdd`` on CPU, the ``DEFAULT``)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"


def svd(
    x: Any,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: Any = None,
    algorithm: SvdAlgorithm | None = None,
) -> Any:
    """Singular value decomposition ``x == u @ diag(s) @ vh`` (``gesdd``).

    Returns:
      ``(u, s, vh)`` with `s` descending (real), or just `s` when not `compute_uv`.
      All three are differentiable (`u` and `vh` for distinct singular values, and
      not with ``full_matrices=True`` for a non-square `x`).
    """
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported yet")
    if algorithm is not None and SvdAlgorithm(algorithm) is not SvdAlgorithm.DEFAULT:
        raise NotImplementedError(f"svd: algorithm={algorithm} is not supported (only DEFAULT)")
    out = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if not compute_uv:
        return out[0]
    s, u, vh = out
    return u, s, vh


# ---------------------------------------------------------------------------
# tridiagonal_solve


def _tridiagonal_solve_abstract_eval(dl, d, du, b) -> ShapedArray:
    _check_matrix_dtype("tridiagonal_solve", b)
    if len({np.dtype(a.dtype) for a in (dl, d, du, b)}) != 1:
        raise TypeError("tridiagonal_solve: dl, d, du and b must have the same dtype")
    if b.ndim < 2 or any(tuple(a.shape) != tuple(b.shape[:-1]) for a in (dl, d, du)):
        raise ValueError(
            "tridiagonal_solve needs dl, d, du of shape [..., m] and b of shape [..., m, n], "
            f"got {tuple(dl.shape)}, {tuple(d.shape)}, {tuple(du.shape)}, {tuple(b.shape)}"
        )
    return ShapedArray(b.shape, b.dtype, b.weak_type)


def _tridiagonal_solve_lowering(ctx: Any, dl, d, du, b) -> list:
    dl_aval, d_aval, du_aval, b_aval = ctx.avals_in
    batch = b_aval.shape[:-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    outs = _lapack.custom_call(
        ctx,
        _lapack.target_name("gtsv", b_aval.dtype),
        [dl, d, du, b],
        list(ctx.avals_in),
        [dl_aval, d_aval, du_aval, b_aval, info_aval],
        {},
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
        vectors=(0, 1, 2, 4),
        operand_vectors=(0, 1, 2),
    )
    x, info = outs[3], outs[4]
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    ok = mlir.broadcast_in_dim(
        ctx, ok, ShapedArray(b_aval.shape, np.dtype(bool)), tuple(range(len(batch)))
    )
    return [hlo.select(ok, x, _nans(ctx, b_aval))]


def _shift(x: Any, axis: int, by: int) -> Any:
    """`x` moved `by` places along `axis` (1: y[i] = x[i-1]), zero-filled."""
    nd = get_aval(x).ndim
    config = [(0, 0, 0)] * nd
    config[axis % nd] = (by, -by, 0)
    return pad(x, np.zeros((), get_aval(x).dtype), config)


def _tridiagonal_matvec(dl, d, du, x):
    """A @ x for the tridiagonal A (dl[i] = A[i, i-1], du[i] = A[i, i+1])."""
    col = lambda v: expand_dims(v, (get_aval(v).ndim,))  # noqa: E731
    out = mul(col(d), x)
    out = add(out, mul(col(dl), _shift(x, -2, 1)))
    return add(out, mul(col(du), _shift(x, -2, -1)))


def _tridiagonal_jvp_diag(which: int):
    def rule(g, dl, d, du, b):
        x = tridiagonal_solve_p.bind(dl, d, du, b)
        parts = [np.zeros((), get_aval(g).dtype)] * 3
        parts[which] = g
        z = [p if p is g else mul(p, mul(g, np.zeros((), get_aval(g).dtype))) for p in parts]
        return neg(tridiagonal_solve_p.bind(dl, d, du, _tridiagonal_matvec(*z, x)))

    return rule


def _tridiagonal_solve_transpose(ct, dl, d, du, b):
    if any(ad.is_undefined_primal(a) for a in (dl, d, du)):
        raise ValueError("tridiagonal_solve is linear in b only")
    if type(ct) is ad.Zero:
        return [None, None, None, ad.Zero(b.aval)]
    dl_t = _shift(du, -1, 1)  # (A^T)[i, i-1] = A[i-1, i]
    du_t = _shift(dl, -1, -1)  # (A^T)[i, i+1] = A[i+1, i]
    return [None, None, None, tridiagonal_solve_p.bind(dl_t, d, du_t, ct)]


def _tridiagonal_solve_batch(args, dims):
    size = next(get_aval(x).shape[d] for x, d in zip(args, dims) if d is not batching.not_mapped)
    args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    return tridiagonal_solve_p.bind(*args), 0


tridiagonal_solve_p = _primitive(
    "tridiagonal_solve",
    _tridiagonal_solve_abstract_eval,
    _tridiagonal_solve_lowering,
    jvp_terms=(
        _tridiagonal_jvp_diag(0),
        _tridiagonal_jvp_diag(1),
        _tridiagonal_jvp_diag(2),
        lambda g, dl, d, du, b: tridiagonal_solve_p.bind(dl, d, du, g),
    ),
    transpose=_tridiagonal_solve_transpose,
    batching=_tridiagonal_solve_batch,
)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any) -> Any:
    """Solves ``A @ x = b`` for tridiagonal `A` (``gtsv``, partial pivoting).

    Args:
      dl: ``[..., m]`` sub-diagonal, ``dl[i] = A[i, i-1]`` (``dl[0]`` is ignored).
      d: ``[..., m]`` diagonal.
      du: ``[..., m]`` super-diagonal, ``du[i] = A[i, i+1]`` (``du[-1]`` is ignored).
      b: ``[..., m, n]`` right-hand sides.

    Returns:
      `x`, of `b`'s shape (NaN where `A` is singular).
    """
    return tridiagonal_solve_p.bind(dl, d, du, b)


_FACTORIZATIONS = _qdwh.Factorizations(qr, cholesky, triangular_solve)


def qdwh(
    x: Any,
    *,
    is_hermitian: bool = False,
    max_iterations: int | None = None,
    eps: float | None = None,
    dynamic_shape: tuple[int, int] | None = None,
) -> tuple[Any, Any, Any, Any]:
    """The polar decomposition ``x = u @ h`` by QDWH iterations (QR-based dynamically
    weighted Halley; the iteration is described in `_qdwh`).

    Args:
      x: ``[m, n]`` with ``m >= n``, float32/64 or complex64/128.
      is_hermitian: whether `x` is Hermitian (accepted; the iteration is the same).
      max_iterations: the most iterations to run (default 10).
      eps: the precision the iteration aims at (default: the dtype's machine epsilon).
      dynamic_shape: not supported (a padded sub-matrix).

    Returns:
      ``(u, h, num_iters, is_converged)``: `u` ``[m, n]`` with orthonormal columns,
      `h` ``[n, n]`` Hermitian positive semidefinite, the number of iterations run
      (int32) and whether the stopping test passed (bool).

    Raises:
      ValueError: ``m < n``, `x` is not a matrix, or its dtype is not inexact (as JAX).
      NotImplementedError: for `dynamic_shape`.

    Example:
      >>> u, h, _, ok = qdwh(np.array([[2.0, 0.0], [0.0, -3.0]], np.float32))
      >>> np.round(np.asarray(u), 4), np.round(np.asarray(h), 4), bool(ok)
      (array([[ 1.,  0.],
             [ 0., -1.]], dtype=float32), array([[2., 0.],
             [0., 3.]], dtype=float32), True)
    """
    return _qdwh.qdwh(
        x,
        _FACTORIZATIONS,
        is_hermitian=is_hermitian,
        max_iterations=max_iterations,
        eps=eps,
        dynamic_shape=dynamic_shape,
    )
