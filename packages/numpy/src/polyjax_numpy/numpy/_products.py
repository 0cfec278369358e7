"""Products of `jnp`: `matmul` (`@`), `dot`, `vdot`, `vecdot`, `inner`, `outer`, `tensordot`, ...

All contractions end in `lax.dot_general`, whose dimension numbers say which
axes are contracted and which are batch axes; the functions here translate
NumPy's conventions (vectors as 1-D operands, broadcast batch axes, `axes`
pairs) into them. `einsum` (in `_einsum`) is built the same way.

Dtypes: the operands are promoted together (JAX's lattice, weak Python
scalars), and the product has the promoted dtype, or `preferred_element_type`
when given (the accumulation and result type, e.g. `int8 x int8 -> int32`).
`precision` (None, a `lax.Precision` or its name, or a pair) goes to
`dot_general`. The vector forms `vdot`, `vecdot` and `vecmat` conjugate their
first operand, as NumPy does.

`kron`, `outer` and `cross` are elementwise products of broadcast operands, and
`trace` sums `jnp.diagonal` (a strided slice, no gather).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes
from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _complex, _dot, _shape_ops
from polyjax_numpy.numpy import _manipulation, _ufuncs
from polyjax_numpy.numpy import _out_sharding as _os
from polyjax_numpy.numpy import _reductions as _r
from polyjax_numpy.numpy import _util as _u
from polyjax_numpy.numpy._matrices import diagonal


def _operands(name: str, a: Any, b: Any, preferred_element_type: Any) -> tuple[Any, Any, Any, bool]:
    """`a`, `b` promoted to their common dtype; the result dtype and weak type."""
    _u.check_arraylike(name, a, b)
    if preferred_element_type is None:
        out_dtype, weak = dtypes.result_type(a, b, return_weak_type_flag=True)
        out_dtype = dtypes.canonicalize_dtype(out_dtype)
    else:
        dtypes.check_user_dtype_supported(preferred_element_type, name)
        out_dtype, weak = dtypes.canonicalize_dtype(preferred_element_type), False
    a, b = (_u.as_operand(v) for v in _u.promote_dtypes(a, b))
    return a, b, out_dtype, weak


def _contract(
    a: Any, b: Any, dimension_numbers: Any, precision: Any, out_dtype: Any, weak: bool
) -> Any:
    out = _dot.dot_general(
        a,
        b,
        dimension_numbers,
        precision=precision,
        preferred_element_type=out_dtype,
        out_sharding=_os.inner(),
    )
    return _u.convert(out, out_dtype, weak)


def _scalar_product(a: Any, b: Any, out_dtype: Any, weak: bool) -> Any:
    return _u.convert(_ufuncs.multiply(a, b), out_dtype, weak)


def matmul(
    a: Any,
    b: Any,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The matrix product `a @ b`, batched over leading axes.

    Args:
      a: an array of rank >= 1; a 1-D `a` is a row vector (its axis is dropped after).
      b: an array of rank >= 1; a 1-D `b` is a column vector.
      precision: None, a `lax.Precision` (or name), or a pair of them.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Returns:
      The product; leading (batch) axes broadcast together.

    Raises:
      ValueError: a scalar operand, or mismatched contracted sizes.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.matmul(jnp.ones((2, 3)), jnp.ones(3))
      Array([3., 3.], dtype=float32)
    """
    with _os.requesting(out_sharding):
        out = _matmul(a, b, precision, preferred_element_type)
    return _os.finish(out, out_sharding)


def _matmul(a: Any, b: Any, precision: Any, preferred_element_type: Any) -> Any:
    a, b, out_dtype, weak = _operands("matmul", a, b, preferred_element_type)
    a_shape, b_shape = _u.shape(a), _u.shape(b)
    for i, s in enumerate((a_shape, b_shape)):
        if not s:
            raise ValueError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, requires at "
                "least 1)."
            )
    a_vec, b_vec = len(a_shape) == 1, len(b_shape) == 1
    if a_vec:
        a = _shape_ops.expand_dims(a, (0,))
    if b_vec:
        b = _shape_ops.expand_dims(b, (1,))
    a_shape, b_shape = _u.shape(a), _u.shape(b)
    if not sd.definitely_equal(a_shape[-1], b_shape[-2]):
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature (n?,k),(k,m?)->(n?,m?) (size {b_shape[-2]} is different from "
            f"{a_shape[-1]})"
        )
    batch = sd.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    nb = len(batch)
    a = _broadcast_batch(a, batch)
    b = _broadcast_batch(b, batch)
    dims = tuple(range(nb))
    out = _contract(a, b, (((nb + 1,), (nb,)), (dims, dims)), precision, out_dtype, weak)
    squeeze = ([nb] if a_vec else []) + ([len(_u.shape(out)) - 1] if b_vec else [])
    return _shape_ops.squeeze(out, squeeze) if squeeze else out


def _broadcast_batch(x: Any, batch: tuple) -> Any:
    shape = _u.shape(x)
    return _u.broadcast_to(x, batch + shape[-2:])


def dot(
    a: Any,
    b: Any,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """NumPy's `dot`: the sum product over the last axis of `a` and the second-to-last of `b`.

    Scalars multiply; 1-D and 2-D operands give inner, matrix-vector and matrix
    products; for N-D operands the result's axes are `a`'s remaining axes, then `b`'s.

    Args:
      a: an array or scalar.
      b: an array or scalar.
      precision: None, a `lax.Precision` (or name), or a pair of them.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.dot(jnp.array([1, 2]), jnp.array([[3, 4], [5, 6]]))
      Array([13, 16], dtype=int32)
    """
    with _os.requesting(out_sharding):
        out = _dot_product(a, b, precision, preferred_element_type)
    return _os.finish(out, out_sharding)


def _dot_product(a: Any, b: Any, precision: Any, preferred_element_type: Any) -> Any:
    a, b, out_dtype, weak = _operands("dot", a, b, preferred_element_type)
    a_nd, b_nd = _u.ndim(a), _u.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return _scalar_product(a, b, out_dtype, weak)
    b_axis = 0 if b_nd == 1 else b_nd - 2
    _check_sizes("dot", a, b, (a_nd - 1,), (b_axis,))
    return _contract(a, b, (((a_nd - 1,), (b_axis,)), ((), ())), precision, out_dtype, weak)


def _check_sizes(name: str, a: Any, b: Any, a_axes: Sequence[int], b_axes: Sequence[int]) -> None:
    a_shape, b_shape = _u.shape(a), _u.shape(b)
    for i, j in zip(a_axes, b_axes, strict=True):
        if not sd.definitely_equal(a_shape[i], b_shape[j]):
            raise ValueError(
                f"{name}: shapes {a_shape} and {b_shape} are not aligned: axis {i} of the first "
                f"(size {a_shape[i]}) does not match axis {j} of the second (size {b_shape[j]})."
            )


def _conj_if_complex(x: Any) -> Any:
    return _complex.conj(x) if _u.is_complex(x) else x


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The dot product of the flattened `a` (conjugated if complex) and `b`.

    Raises:
      ValueError: `a` and `b` have different sizes.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.vdot(jnp.array([1j, 2.]), jnp.array([1j, 3.]))
      Array(7.+0.j, dtype=complex64)
    """
    a, b, out_dtype, weak = _operands("vdot", a, b, preferred_element_type)
    a = _conj_if_complex(_manipulation.ravel(a))
    b = _manipulation.ravel(b)
    _check_sizes("vdot", a, b, (0,), (0,))
    return _contract(a, b, (((0,), (0,)), ((), ())), precision, out_dtype, weak)


def vecdot(
    x1: Any,
    x2: Any,
    /,
    *,
    axis: int = -1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """The batched vector dot product `sum(conj(x1) * x2, axis)`.

    The other axes broadcast together, as in NumPy's `vecdot` ufunc.

    Raises:
      ValueError: the sizes along `axis` differ.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.vecdot(jnp.array([[1., 2.], [3., 4.]]), jnp.array([1., 1.]))
      Array([3., 7.], dtype=float32)
    """
    x1, x2, out_dtype, weak = _operands("vecdot", x1, x2, preferred_element_type)
    x1 = _move_to_end(x1, axis, "vecdot")
    x2 = _move_to_end(x2, axis, "vecdot")
    n1, n2 = _u.shape(x1)[-1], _u.shape(x2)[-1]
    if not sd.definitely_equal(n1, n2):
        raise ValueError(
            f"vecdot: axes must match; got shapes {_u.shape(x1)} and {_u.shape(x2)} "
            f"(axis={axis} moved last)"
        )
    batch = sd.broadcast_shapes(_u.shape(x1)[:-1], _u.shape(x2)[:-1])
    x1 = _u.broadcast_to(_conj_if_complex(x1), batch + (n1,))
    x2 = _u.broadcast_to(x2, batch + (n2,))
    nb = len(batch)
    dims = tuple(range(nb))
    return _contract(x1, x2, (((nb,), (nb,)), (dims, dims)), precision, out_dtype, weak)


def _move_to_end(x: Any, axis: int, name: str) -> Any:
    nd = _u.ndim(x)
    if nd == 0:
        raise ValueError(f"{name} requires arrays of rank >= 1, got a scalar")
    axis = _u.canonicalize_axis(axis, nd)
    if axis == nd - 1:
        return x
    return _shape_ops.transpose(x, tuple(i for i in range(nd) if i != axis) + (axis,))


def matvec(x1: Any, x2: Any, /) -> Any:
    """The batched matrix-vector product: `x1` of shape `(..., M, N)`, `x2` of `(..., N)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.matvec(jnp.array([[1, 2, 3], [4, 5, 6]]), jnp.array([7, 8, 9]))
      Array([ 50, 122], dtype=int32)
    """
    _u.check_arraylike("matvec", x1, x2)
    if _u.ndim(x1) < 2 or _u.ndim(x2) < 1:
        raise ValueError(
            f"matvec requires x1 of rank >= 2 and x2 of rank >= 1, got shapes {_u.shape(x1)} "
            f"and {_u.shape(x2)}"
        )
    x2 = _shape_ops.expand_dims(_u.as_operand(x2), (_u.ndim(x2),))
    out = matmul(x1, x2)
    return _shape_ops.squeeze(out, (_u.ndim(out) - 1,))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """The batched vector-matrix product `conj(x1) @ x2`: `x1` of shape `(..., N)`, `x2` of
    `(..., N, M)`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.vecmat(jnp.array([1, 2, 3]), jnp.array([[4, 5], [6, 7], [8, 9]]))
      Array([40, 46], dtype=int32)
    """
    _u.check_arraylike("vecmat", x1, x2)
    if _u.ndim(x1) < 1 or _u.ndim(x2) < 2:
        raise ValueError(
            f"vecmat requires x1 of rank >= 1 and x2 of rank >= 2, got shapes {_u.shape(x1)} "
            f"and {_u.shape(x2)}"
        )
    x1 = _conj_if_complex(_u.as_operand(x1))
    x1 = _shape_ops.expand_dims(x1, (_u.ndim(x1) - 1,))
    out = matmul(x1, x2)
    return _shape_ops.squeeze(out, (_u.ndim(out) - 2,))


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """The sum product over the last axes of `a` and `b` (scalars multiply).

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.inner(jnp.array([[1, 2], [3, 4]]), jnp.array([1, 1]))
      Array([3, 7], dtype=int32)
    """
    a, b, out_dtype, weak = _operands("inner", a, b, preferred_element_type)
    a_nd, b_nd = _u.ndim(a), _u.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return _scalar_product(a, b, out_dtype, weak)
    _check_sizes("inner", a, b, (a_nd - 1,), (b_nd - 1,))
    return _contract(a, b, (((a_nd - 1,), (b_nd - 1,)), ((), ())), precision, out_dtype, weak)


def outer(a: Any, b: Any, out: Any = None) -> Any:
    """The outer product of the flattened `a` and `b`: `result[i, j] = a[i] * b[j]`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.outer(jnp.array([1, 2]), jnp.array([1, 10, 100]))
      Array([[  1,  10, 100],
             [  2,  20, 200]], dtype=int32)
    """
    _r._check_out(out, "outer")
    _u.check_arraylike("outer", a, b)
    a = _manipulation.ravel(_u.as_operand(a))
    b = _manipulation.ravel(_u.as_operand(b))
    return _ufuncs.multiply(_shape_ops.expand_dims(a, (1,)), _shape_ops.expand_dims(b, (0,)))


def _axes_list(axes: Any, name: str) -> tuple[int, ...]:
    if isinstance(axes, int | np.integer):
        return (operator.index(axes),)
    try:
        return tuple(operator.index(ax) for ax in axes)
    except TypeError:
        raise TypeError(
            f"{name} axes argument must be an int, a pair of ints, or a pair of lists/tuples of "
            f"ints; got {axes!r}"
        ) from None


def tensordot(
    a: Any,
    b: Any,
    axes: Any = 2,
    *,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Any:
    """The sum product over the given axes of `a` and `b`.

    Args:
      a: an array.
      b: an array.
      axes: an int `n` (the last `n` axes of `a` with the first `n` of `b`), or a pair
        `(axes_a, axes_b)` of ints or equal-length sequences of ints.
      precision: None, a `lax.Precision` (or name), or a pair of them.
      preferred_element_type: the accumulation and result dtype.
      out_sharding: the result's sharding (explicit mode; docs/explicit-sharding.md).

    Returns:
      An array with `a`'s free axes, then `b`'s.

    Raises:
      ValueError: `n` out of range, axes lists of different lengths, or sizes that differ.
      TypeError: `axes` of another form.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.tensordot(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5))).shape
      (2, 5)
    """
    a, b, out_dtype, weak = _operands("tensordot", a, b, preferred_element_type)
    a_nd, b_nd = _u.ndim(a), _u.ndim(b)
    if isinstance(axes, int | np.integer):
        n = operator.index(axes)
        if not 0 <= n <= min(a_nd, b_nd):
            raise ValueError(
                f"tensordot: number of axes {n} must be between 0 and the ranks of the "
                f"operands ({a_nd} and {b_nd})"
            )
        a_axes, b_axes = tuple(range(a_nd - n, a_nd)), tuple(range(n))
    elif isinstance(axes, tuple | list) and len(axes) == 2:
        a_axes, b_axes = _axes_list(axes[0], "tensordot"), _axes_list(axes[1], "tensordot")
        if len(a_axes) != len(b_axes):
            raise ValueError(
                f"tensordot requires axes lists to have equal length, got {a_axes} and {b_axes}."
            )
        a_axes = tuple(_u.canonicalize_axis(ax, a_nd) for ax in a_axes)
        b_axes = tuple(_u.canonicalize_axis(ax, b_nd) for ax in b_axes)
    else:
        raise TypeError(
            "tensordot axes argument must be an int, a pair of ints, or a pair of lists/tuples "
            f"of ints; got {axes!r}"
        )
    _check_sizes("tensordot", a, b, a_axes, b_axes)
    with _os.requesting(out_sharding):
        out = _contract(a, b, ((a_axes, b_axes), ((), ())), precision, out_dtype, weak)
    return _os.finish(out, out_sharding)


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks `a[i, j] * b`, tiled as `a` is laid out.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.kron(jnp.array([1, 10]), jnp.array([1, 2, 3]))
      Array([ 1,  2,  3, 10, 20, 30], dtype=int32)
    """
    _u.check_arraylike("kron", a, b)
    a, b = (_u.as_operand(v) for v in _u.promote_dtypes(a, b))
    nd = max(_u.ndim(a), _u.ndim(b))
    a = _shape_ops.broadcast_to_rank(a, nd) if _u.ndim(a) < nd else a
    b = _shape_ops.broadcast_to_rank(b, nd) if _u.ndim(b) < nd else b
    a_shape, b_shape = _u.shape(a), _u.shape(b)
    # a's axes at even positions, b's at odd ones: their product tiles as blocks.
    a = _shape_ops.reshape(a, tuple(d for s in a_shape for d in (s, 1)))
    b = _shape_ops.reshape(b, tuple(d for s in b_shape for d in (1, s)))
    product = _ufuncs.multiply(a, b)
    return _shape_ops.reshape(product, tuple(x * y for x, y in zip(a_shape, b_shape, strict=True)))


def cross(
    a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None
) -> Any:
    """The cross product of 3-vectors (or 2-vectors, taken with a zero third component).

    Args:
      a: an array whose `axisa` holds the vectors' components (2 or 3 of them).
      b: an array whose `axisb` holds the vectors' components (2 or 3 of them).
      axisa: the component axis of `a`.
      axisb: the component axis of `b`.
      axisc: the component axis of the result (for 3-vector results).
      axis: if given, overrides `axisa`, `axisb` and `axisc`.

    Returns:
      The cross products, batched over the other (broadcast) axes; the scalar
      z-component when both are 2-vectors.

    Raises:
      ValueError: a component axis of length other than 2 or 3.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.cross(jnp.array([1, 0, 0]), jnp.array([0, 1, 0]))
      Array([0, 0, 1], dtype=int32)
    """
    _u.check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = (_u.as_operand(v) for v in _u.promote_dtypes(a, b))
    a = _move_to_end(a, axisa, "cross")
    b = _move_to_end(b, axisb, "cross")
    na, nb = _u.shape(a)[-1], _u.shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError(
            "Dimension must be either 2 or 3 for cross product, got "
            f"{na} (axisa={axisa}) and {nb} (axisb={axisb})"
        )

    def part(x: Any, i: int) -> Any:
        piece = _shape_ops.slice_in_dim(x, i, i + 1, axis=_u.ndim(x) - 1)
        return _shape_ops.squeeze(piece, (_u.ndim(x) - 1,))

    def sub_mul(x0: Any, y0: Any, x1: Any, y1: Any) -> Any:
        return _ufuncs.subtract(_ufuncs.multiply(x0, y0), _ufuncs.multiply(x1, y1))

    a0, a1, b0, b1 = part(a, 0), part(a, 1), part(b, 0), part(b, 1)
    z = sub_mul(a0, b1, a1, b0)
    if na == 2 and nb == 2:
        return z
    if na == 3 and nb == 3:
        a2, b2 = part(a, 2), part(b, 2)
        x, y = sub_mul(a1, b2, a2, b1), sub_mul(a2, b0, a0, b2)
    elif na == 3:  # b's third component is zero
        a2 = part(a, 2)
        x, y = _ufuncs.negative(_ufuncs.multiply(a2, b1)), _ufuncs.multiply(a2, b0)
    else:  # a's third component is zero
        b2 = part(b, 2)
        x, y = _ufuncs.multiply(a1, b2), _ufuncs.negative(_ufuncs.multiply(a0, b2))
    shape = sd.broadcast_shapes(_u.shape(x), _u.shape(y), _u.shape(z))
    parts = [_shape_ops.expand_dims(_u.broadcast_to(c, shape), (len(shape),)) for c in (x, y, z)]
    c = _shape_ops.concatenate(parts, len(shape))
    axisc = _u.canonicalize_axis(axisc, len(shape) + 1)
    perm = list(range(len(shape)))
    perm.insert(axisc, len(shape))
    return _shape_ops.transpose(c, tuple(perm))


def trace(
    a: Any,
    offset: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    dtype: Any = None,
    out: Any = None,
) -> Any:
    """The sum along a diagonal of `a`.

    Args:
      a: an array of rank >= 2.
      offset: the diagonal: 0 the main one, > 0 above it, < 0 below it.
      axis1: the first axis of the 2-D slices.
      axis2: the second axis of the 2-D slices.
      dtype: the accumulation and result dtype (default: as `jnp.sum`).
      out: not supported.

    Returns:
      The traces, over the remaining axes.

    Example:
      >>> import polyjax.numpy as jnp
      >>> jnp.trace(jnp.arange(9).reshape(3, 3), offset=1)
      Array(6, dtype=int32)
    """
    _r._check_out(out, "trace")
    _u.check_arraylike("trace", a)
    diag = diagonal(_u.as_operand(a), offset, axis1, axis2)
    return _r.sum(diag, axis=-1, dtype=dtype)


__all__ = [
    "cross",
    "dot",
    "inner",
    "kron",
    "matmul",
    "matvec",
    "outer",
    "tensordot",
    "trace",
    "vdot",
    "vecdot",
    "vecmat",
]
