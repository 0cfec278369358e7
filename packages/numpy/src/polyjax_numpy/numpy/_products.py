"""Products of `jnp`: `matmul` (the `@` operator) and, in time, `dot`, `einsum` and friends.

All of them end in `lax.dot_general`, whose dimension numbers say which axes are
contracted and which are batch axes; the functions here translate NumPy's
conventions (vectors as 1-D operands, broadcast batch axes) into them.
"""

from __future__ import annotations

from typing import Any

from polyjax_core import symbolic_dims as sd
from polyjax_numpy.lax import _dot, _shape_ops
from polyjax_numpy.numpy import _util as _u


def matmul(a: Any, b: Any) -> Any:
    """`a @ b` as `jnp.matmul`: 1-D operands are vectors, leading axes broadcast as batches."""
    a, b = _u.promote_dtypes(a, b)
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
    out = _dot.dot_general(
        a, b, (((nb + 1,), (nb,)), (dims, dims)), preferred_element_type=_u.dtype(a)
    )
    squeeze = ([nb] if a_vec else []) + ([len(_u.shape(out)) - 1] if b_vec else [])
    return _shape_ops.squeeze(out, squeeze) if squeeze else out


def _broadcast_batch(x: Any, batch: tuple) -> Any:
    shape = _u.shape(x)
    target = batch + shape[-2:]
    if sd.definitely_equal_shape(shape, target):
        return x
    dims = tuple(range(len(target) - len(shape), len(target)))
    return _shape_ops.broadcast_in_dim(x, target, dims)
