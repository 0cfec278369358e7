"""Helpers shared by `polyjax.numpy.linalg` and `polyjax.scipy.linalg`.

Operands (arrays of one inexact dtype), shape checks, the conjugate transpose,
and the LU-based solve whose derivatives reuse the factorization: `solve_square`
factors ``a`` once, outside differentiation, and hands the factors to
`lax.custom_linear_solve`, whose tangents and transposes are further solves with
the same factors (``a^T`` for reverse mode).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from polyjax_interpreters.ad import stop_gradient
from polyjax_interpreters.jit import jit
from polyjax_numpy.lax import _sorting
from polyjax_numpy.lax import linalg as lax_linalg
from polyjax_numpy.lax._custom_solvers import custom_linear_solve
from polyjax_numpy.numpy import _creation, _indexing, _manipulation, _matrices, _products
from polyjax_numpy.numpy import _util as _u


def operands(name: str, *args: Any) -> list[Any]:
    """`args` as arrays of their common inexact dtype (lists are refused, as in JAX)."""
    _u.check_arraylike(name, *args)
    return _u.promote_dtypes_inexact(*(_creation.asarray(x) for x in args))


def check_matrix(name: str, a: Any, what: str = "a", square: bool = False) -> None:
    """Raises ValueError unless `a` is a (stack of) matrices, square if asked."""
    shape = _u.shape(a)
    if len(shape) < 2:
        raise ValueError(
            f"{name}: {what} must have at least 2 dimensions (..., M, N), got shape {shape}"
        )
    if square and shape[-1] != shape[-2]:
        raise ValueError(
            f"{name}: {what} must be a (stack of) square matrices of shape (..., N, N), got "
            f"shape {shape}"
        )


def real_dtype(dtype: Any) -> np.dtype:
    return np.finfo(dtype).dtype


def is_complex(x: Any) -> bool:
    return _u.issubdtype_of(x, np.complexfloating)


def mT(x: Any) -> Any:
    """Transpose of the trailing two dimensions."""
    return _manipulation.swapaxes(x, -1, -2)


def mH(x: Any) -> Any:
    """Conjugate transpose of the trailing two dimensions."""
    x = mT(x)
    return _manipulation.conj(x) if is_complex(x) else x


def matrix_diagonal(x: Any) -> Any:
    return _matrices.diagonal(x, axis1=-2, axis2=-1)


def identity_like(a: Any) -> Any:
    """The identity matrix broadcast to the shape (and dtype) of the square `a`."""
    n = _u.shape(a)[-1]
    return _manipulation.broadcast_to(_matrices.eye(n, dtype=_u.dtype(a)), _u.shape(a))


def broadcast_batch(a: Any, b: Any) -> tuple[Any, Any]:
    """`a` and `b` with their leading (batch) dimensions broadcast together.

    The trailing two dimensions of each are kept as they are.
    """
    sa, sb = _u.shape(a), _u.shape(b)
    batch = _manipulation.broadcast_shapes(sa[:-2], sb[:-2])
    return (
        _manipulation.broadcast_to(a, (*batch, *sa[-2:])),
        _manipulation.broadcast_to(b, (*batch, *sb[-2:])),
    )


def _matmul(a: Any, b: Any) -> Any:
    return _products.matmul(a, b, precision="highest")


def permute_rows(b: Any, perm: Any, inverse: bool = False) -> Any:
    """``b[..., perm, :]`` (or, `inverse`, the rows put back: ``out[..., perm, :] = b``)."""
    if inverse:
        iota = _creation.arange(_u.shape(perm)[-1], dtype=_u.dtype(perm))
        iota = _manipulation.broadcast_to(iota, _u.shape(perm))
        _, perm = _sorting.sort((perm, iota), dimension=-1, num_keys=1)
    index = _manipulation.broadcast_to(_manipulation.expand_dims(perm, -1), _u.shape(b))
    return _indexing.take_along_axis(b, index, axis=-2)


def lu_solve_factored(lu_: Any, perm: Any, b: Any, trans: int = 0) -> Any:
    """Solves ``op(a) @ x = b`` from ``a``'s LU factors (``a[perm] == l @ u``).

    `trans`: 0 for ``a``, 1 for ``a^T``, 2 for ``a^H``. `b` is ``[..., N, K]`` with
    the batch dimensions of `lu_`.
    """
    if trans == 0:
        x = permute_rows(b, perm)
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False)
    # a = P^T L U, so op(a) = op(U) op(L) P: solve with op(U), then op(L), then undo P.
    conj = trans == 2
    x = lax_linalg.triangular_solve(
        lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
    )
    x = lax_linalg.triangular_solve(
        lu_, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=conj
    )
    return permute_rows(x, perm, inverse=True)


def _solve_square(a: Any, b: Any) -> Any:
    """``a^{-1} @ b`` for ``a: [..., N, N]`` and ``b: [..., N, K]`` of one batch shape.

    The LU factors of ``a`` are computed once, outside differentiation; the solve's
    derivatives come from `custom_linear_solve` (solves with the same factors).
    """
    lu_, _, perm = lax_linalg.lu(stop_gradient(a))
    return custom_linear_solve(
        lambda x: _matmul(a, x),
        b,
        lambda _, y: lu_solve_factored(lu_, perm, y, 0),
        lambda _, y: lu_solve_factored(lu_, perm, y, 1),
    )


# `custom_linear_solve` traces its functions anew on every call, so an eager call would
# compile every time: under `jit`, it is traced and compiled once per shape.
solve_square = jit(_solve_square)
