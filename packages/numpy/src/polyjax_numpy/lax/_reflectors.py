"""Householder reflectors in LAPACK's packed form: applying them (``ormqr``) and
reducing a Hermitian matrix to tridiagonal form with them (``sytrd``/``hetrd``).

`ormqr_p` multiplies a matrix by the orthogonal (unitary) `Q` that `geqrf`'s
packed reflectors and scales describe, without forming `Q`: ``Q @ c``,
``Q^H @ c``, ``c @ Q`` or ``c @ Q^H``.

`tridiagonal_p` returns ``(a, d, e, taus)``: `d` the diagonal and `e` the
off-diagonal of the tridiagonal matrix ``T = Q^H A Q``; `a` holds the
reflectors that make `Q` below the first subdiagonal (`lower`) or above the
first superdiagonal, with their scales in `taus` (the other triangle of the
input is returned unchanged, as LAPACK leaves it).

Neither has a derivative, as in JAX. Batches are loops of the kernels.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from jaxlib.mlir import ir

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_interpreters import batching, mlir
from polyjax_numpy.lax import _lapack
from polyjax_numpy.lax._declare import standard_primitive

__all__ = ["batch_at_front", "ormqr", "ormqr_p", "tridiagonal", "tridiagonal_p"]


def _is_complex(dtype: Any) -> bool:
    return np.issubdtype(dtype, np.complexfloating)


def _check_dtype(name: str, *avals: ShapedArray) -> None:
    dtype = np.dtype(avals[0].dtype)
    if dtype not in _lapack._PREFIX:
        raise TypeError(f"{name} needs float32, float64, complex64 or complex128, got {dtype}")
    for a in avals[1:]:
        if np.dtype(a.dtype) != dtype:
            raise TypeError(
                f"{name}: all operands must have one dtype, got {[str(a.dtype) for a in avals]}"
            )


def batch_at_front(prim: Any, multiple_results: bool) -> Any:
    """A batching rule: every operand batched at the front (the kernels loop over batches)."""

    def rule(args: list, dims: list, **params: Any) -> tuple:
        size = next(
            get_aval(x).shape[d] for x, d in zip(args, dims) if d is not batching.not_mapped
        )
        out = prim.bind(*(batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)), **params)
        return out, ([0] * len(out) if multiple_results else 0)

    return rule


def _zero_size(aval: ShapedArray) -> bool:
    return 0 in tuple(aval.shape)


# --- ormqr


def _ormqr_abstract_eval(
    a: ShapedArray, taus: ShapedArray, c: ShapedArray, *, left: bool, transpose: bool
) -> ShapedArray:
    _check_dtype("ormqr", a, taus, c)
    if a.ndim < 2 or taus.ndim != a.ndim - 1 or c.ndim != a.ndim:
        raise ValueError(
            "ormqr needs a: [..., m, n], taus: [..., k] and c of a's rank, got shapes "
            f"{tuple(a.shape)}, {tuple(taus.shape)} and {tuple(c.shape)}"
        )
    batch = tuple(a.shape[:-2])
    if tuple(taus.shape[:-1]) != batch or tuple(c.shape[:-2]) != batch:
        raise ValueError(
            f"ormqr: a, taus and c must have the same batch dimensions, got {tuple(a.shape)}, "
            f"{tuple(taus.shape)} and {tuple(c.shape)}"
        )
    m, n = a.shape[-2:]
    if taus.shape[-1] > min(m, n):
        raise ValueError(f"ormqr: taus has {taus.shape[-1]} scales, more than min(m, n) of a")
    side = c.shape[-2] if left else c.shape[-1]
    if side != m:
        which = "rows" if left else "columns"
        raise ValueError(
            f"ormqr: with left={left}, c must have {m} {which} (a's rows), got {tuple(c.shape)}"
        )
    return ShapedArray(c.shape, c.dtype)


def _ormqr_lowering(
    ctx: Any, a: ir.Value, taus: ir.Value, c: ir.Value, *, left: bool, transpose: bool
) -> list:
    a_aval, t_aval, c_aval = ctx.avals_in
    if _zero_size(c_aval) or t_aval.shape[-1] == 0:
        return [c]  # no reflectors (or nothing to multiply): Q is the identity
    fn = "unmqr" if _is_complex(a_aval.dtype) else "ormqr"
    return _lapack.custom_call(
        ctx,
        _lapack.target_name(fn, a_aval.dtype),
        [a, taus, c],
        [a_aval, t_aval, c_aval],
        [c_aval],
        {"left": bool(left), "transpose": bool(transpose)},
        aliases={0: 2},
        operand_vectors=(1,),
    )


ormqr_p = standard_primitive(
    "ormqr", _ormqr_abstract_eval, _ormqr_lowering, lowering_platform="cpu"
)
batching.primitive_batchers[ormqr_p] = batch_at_front(ormqr_p, False)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """Multiplies `c` by the `Q` of a QR decomposition in packed form (``ormqr``/``unmqr``).

    Args:
      a: ``[..., m, n]``, Householder reflectors below the diagonal (as `geqrf`
        leaves them).
      taus: ``[..., k]`` (``k <= min(m, n)``), the reflectors' scales.
      c: ``[..., m, p]`` when `left`, ``[..., p, m]`` otherwise.
      left: multiply from the left (``Q @ c``) or the right (``c @ Q``).
      transpose: use ``Q^H`` (the conjugate transpose) instead of `Q`.

    Returns:
      ``op(Q) @ c`` or ``c @ op(Q)``, of `c`'s shape.

    Raises:
      TypeError: the dtypes differ or are not float32/64 or complex64/128.
      ValueError: the shapes do not fit together.

    Example:
      >>> import numpy as np
      >>> a = np.array([[1.0, 0.0], [1.0, 0.0]], np.float32)  # one reflector: v = [1, 1]
      >>> ormqr(a, np.array([1.0], np.float32), np.eye(2, dtype=np.float32))
      Array([[ 0., -1.],
             [-1.,  0.]], dtype=float32)
    """
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# --- tridiagonal


def _tridiagonal_abstract_eval(a: ShapedArray, *, lower: bool) -> list:
    _check_dtype("tridiagonal", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"tridiagonal needs square matrices [..., n, n], got {tuple(a.shape)}")
    batch, n = tuple(a.shape[:-2]), a.shape[-1]
    real = np.finfo(a.dtype).dtype
    return [
        ShapedArray(a.shape, a.dtype),
        ShapedArray((*batch, n), real),
        ShapedArray((*batch, max(n - 1, 0)), real),
        ShapedArray((*batch, max(n - 1, 0)), a.dtype),
    ]


def _tridiagonal_lowering(ctx: Any, a: ir.Value, *, lower: bool) -> list:
    (aval,) = ctx.avals_in
    if _zero_size(aval):
        return [a, *(mlir.full_like_aval(ctx, 0, o) for o in ctx.avals_out[1:])]
    fn = "hetrd" if _is_complex(aval.dtype) else "sytrd"
    info = ShapedArray(aval.shape[:-2], np.dtype(np.int32))
    # `info` reports only malformed arguments, which the abstract evaluation excludes.
    *outs, _ = _lapack.custom_call(
        ctx,
        _lapack.target_name(fn, aval.dtype),
        [a],
        [aval],
        [*ctx.avals_out, info],
        {"uplo": "L" if lower else "U"},
        aliases={0: 0},
        vectors=(1, 2, 3, 4),
    )
    return outs


tridiagonal_p = standard_primitive(
    "tridiagonal",
    _tridiagonal_abstract_eval,
    _tridiagonal_lowering,
    multiple_results=True,
    lowering_platform="cpu",
)
batching.primitive_batchers[tridiagonal_p] = batch_at_front(tridiagonal_p, True)


def tridiagonal(a: Any, *, lower: bool = True) -> tuple[Any, Any, Any, Any]:
    """Reduces Hermitian matrices to real symmetric tridiagonal form (``sytrd``/``hetrd``).

    Computes ``T = Q^H A Q`` with `Q` a product of Householder reflectors.

    Args:
      a: ``[..., n, n]`` Hermitian (float32/64, complex64/128); only its `lower`
        (or upper) triangle is read.
      lower: which triangle to read, and where the reflectors are stored.

    Returns:
      ``(a, d, e, taus)``: the reflectors in packed form (below the first
      subdiagonal when `lower`, above the first superdiagonal otherwise), the
      diagonal `d` (``[..., n]``) and off-diagonal `e` (``[..., n - 1]``) of `T`
      (real), and the reflectors' scales `taus` (``[..., n - 1]``).

    Raises:
      TypeError: for another dtype.
      ValueError: `a` is not a batch of square matrices.

    Example:
      >>> import numpy as np
      >>> _, d, e, _ = tridiagonal(np.array([[2.0, 1.0], [1.0, 3.0]], np.float32))
      >>> d, e
      (Array([2., 3.], dtype=float32), Array([1.], dtype=float32))
    """
    out, d, e, taus = tridiagonal_p.bind(a, lower=bool(lower))
    return out, d, e, taus
