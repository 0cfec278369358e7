"""The Schur and Hessenberg decompositions, as LAPACK calls (``gees``, ``gehrd``).

`schur_p` returns ``(t, z)`` with ``x = z @ t @ z^H``: `t` is quasi upper
triangular (1x1 and 2x2 blocks on the diagonal) for real `x`, upper triangular
for complex `x`; `z` is orthogonal (unitary). `hessenberg_p` returns
``(a, taus)`` in LAPACK's packed form: the upper Hessenberg matrix on and
above the first subdiagonal, the Householder reflectors below it, their
scales in `taus` (``householder_product`` turns them into `Q`).

Neither has a derivative (as in JAX): the decompositions are not unique. A
batch element whose factorization fails is all NaN. Batches are loops of the kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax import _lapack
from polyjax_numpy.lax._declare import standard_primitive


def _check_square(name: str, x: ShapedArray) -> None:
    if np.dtype(x.dtype) not in _lapack._PREFIX:
        raise TypeError(f"{name} needs float32, float64, complex64 or complex128, got {x.dtype}")
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name} needs square matrices [..., n, n], got shape {tuple(x.shape)}")


def _is_complex(dtype: Any) -> bool:
    return np.issubdtype(dtype, np.complexfloating)


def _nan_where_failed(ctx: Any, info: ir.Value, outs: list, avals: list) -> list:
    """`outs` with the batch elements whose `info` is nonzero set to NaN."""
    info_aval = ShapedArray(avals[0].shape[:-2], np.dtype(np.int32))
    ok = mlir.compare_hlo(info, mlir.full_like_aval(ctx, 0, info_aval), "EQ")
    result = []
    for value, aval in zip(outs, avals):
        mask_aval = ShapedArray(aval.shape, np.dtype(bool))
        mask = mlir.broadcast_in_dim(ctx, ok, mask_aval, tuple(range(info_aval.ndim)))
        nan = complex(np.nan, np.nan) if _is_complex(aval.dtype) else np.nan
        nan = mlir.full_like_aval(ctx, nan, aval)
        result.append(hlo.select(mask, value, nan))
    return result


def _batch_rule(prim: Any) -> Any:
    def rule(args: list, dims: list, **params: Any) -> tuple:
        (x,), (d,) = args, dims
        x = batching.bdim_at_front(x, d, get_aval(x).shape[d])
        return prim.bind(x, **params), (0,) * 2

    return rule


def _lapack_primitive(name: str, abstract_eval: Any, lowering: Any) -> Any:
    """A CPU-only primitive of one matrix and two results, batched as a loop of the kernel."""
    prim = standard_primitive(
        name, abstract_eval, lowering, multiple_results=True, lowering_platform="cpu"
    )
    batching.primitive_batchers[prim] = _batch_rule(prim)
    return prim


# --- schur


def _schur_abstract_eval(x: ShapedArray, *, compute_schur_vectors: bool) -> list:
    _check_square("schur", x)
    return [ShapedArray(x.shape, x.dtype), ShapedArray(x.shape, x.dtype)]


def _schur_lowering(ctx: Any, x: ir.Value, *, compute_schur_vectors: bool) -> list:
    (aval,) = ctx.avals_in
    batch, n = tuple(aval.shape[:-2]), aval.shape[-1]
    if n == 0 or 0 in batch:
        return [mlir.full_like_aval(ctx, 0, a) for a in ctx.avals_out]
    vec = ShapedArray((*batch, n), aval.dtype)
    ints = ShapedArray(batch, np.dtype(np.int32))
    attrs = {"mode": "V" if compute_schur_vectors else "N", "sort": "N"}
    target = _lapack.target_name("gees", aval.dtype)
    if _is_complex(aval.dtype):
        results = [aval, aval, vec, ints, ints]
        t, z, _, _, info = _lapack.custom_call(
            ctx, target, [x], [aval], results, attrs, aliases={0: 0}, vectors=(2, 3, 4)
        )
    else:
        results = [aval, aval, vec, vec, ints, ints]
        t, z, _, _, _, info = _lapack.custom_call(
            ctx, target, [x], [aval], results, attrs, aliases={0: 0}, vectors=(2, 3, 4, 5)
        )
    return _nan_where_failed(ctx, info, [t, z], [aval, aval])


schur_p = _lapack_primitive("schur", _schur_abstract_eval, _schur_lowering)


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> tuple[Any, Any]:
    """The Schur decomposition ``x = z @ t @ z^H`` of square matrices (``gees``).

    Args:
      x: ``[..., n, n]`` (float32, float64, complex64 or complex128).
      compute_schur_vectors: also compute `z` (otherwise its value is unspecified).
      sort_eig_vals, select_callable: eigenvalue reordering, not supported (raises).

    Returns:
      ``(t, z)``: `t` quasi upper triangular for real `x` (2x2 diagonal blocks for
      complex conjugate eigenvalue pairs), upper triangular for complex `x`.

    Raises:
      NotImplementedError: for `sort_eig_vals` or `select_callable`.

    Example:
      >>> t, z = schur(np.array([[1.0, 2.0], [0.0, 3.0]], np.float32))
      >>> t
      Array([[1., 2.],
             [0., 3.]], dtype=float32)
    """
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("schur: sorting the eigenvalues is not supported")
    t, z = schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))
    return t, z


# --- hessenberg


def _hessenberg_abstract_eval(x: ShapedArray) -> list:
    _check_square("hessenberg", x)
    n = x.shape[-1]
    return [ShapedArray(x.shape, x.dtype), ShapedArray((*x.shape[:-2], max(n - 1, 0)), x.dtype)]


def _hessenberg_lowering(ctx: Any, x: ir.Value) -> list:
    (aval,) = ctx.avals_in
    a_aval, tau_aval = ctx.avals_out
    batch, n = tuple(aval.shape[:-2]), aval.shape[-1]
    if n <= 1 or 0 in batch:
        return [x, mlir.full_like_aval(ctx, 0, tau_aval)]
    ints = ShapedArray(batch, np.dtype(np.int32))
    i32 = ir.IntegerType.get_signless(32)
    # LAPACK's 1-based range of rows and columns to reduce: all of them.
    attrs = {"low": ir.IntegerAttr.get(i32, 1), "high": ir.IntegerAttr.get(i32, n)}
    a, taus, info = _lapack.custom_call(
        ctx,
        _lapack.target_name("gehrd", aval.dtype),
        [x],
        [aval],
        [a_aval, tau_aval, ints],
        attrs,
        aliases={0: 0},
        vectors=(1, 2),
    )
    return _nan_where_failed(ctx, info, [a, taus], [a_aval, tau_aval])


hessenberg_p = _lapack_primitive("hessenberg", _hessenberg_abstract_eval, _hessenberg_lowering)


def hessenberg(a: Any) -> tuple[Any, Any]:
    """Reduces square matrices to upper Hessenberg form, in LAPACK's packed form (``gehrd``).

    Returns:
      ``(a, taus)``: the Hessenberg matrix on and above the first subdiagonal and the
      Householder reflectors below it, with their scales `taus` (``[..., n - 1]``).

    Example:
      >>> h, taus = hessenberg(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
      >>> h
      Array([[1., 2.],
             [3., 4.]], dtype=float32)
    """
    out, taus = hessenberg_p.bind(a)
    return out, taus
