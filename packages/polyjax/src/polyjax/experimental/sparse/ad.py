"""Sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev` and `jacobian`.

They take the same arguments as the dense transformations. A sparse argument
among `argnums` is differentiated with respect to its stored values (``data``;
its indices are constants), and its derivative is returned as a sparse array
of the same format and indices whose ``data`` holds the derivative: for
`grad`, the gradient of each stored value; for the Jacobians, the output's
dimensions come first, as batch dimensions of the result (JAX's layout).

Example:
  >>> import numpy as np
  >>> from polyjax.experimental import sparse
  >>> m = sparse.BCOO.fromdense(np.array([[0.0, 1.0], [2.0, 0.0]]))
  >>> g = sparse.grad(lambda a: (a @ np.array([3.0, 4.0])).sum())(m)
  >>> g, g.data
  (BCOO(float32[2, 2], nse=2), Array([4., 3.], dtype=float32))
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import polyjax
from polyjax import tree_util
from polyjax.experimental.sparse._base import JAXSparse

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]


def _argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _with_data(mat: JAXSparse, data: Any) -> JAXSparse:
    """`mat` with `data` in place of its values (leading extra dimensions become batch ones)."""
    leaves, tree = tree_util.tree_flatten(mat)
    extra = data.ndim - mat.data.ndim
    if extra:
        lead = data.shape[:extra]
        leaves = [data] + [polyjax.numpy.broadcast_to(x, lead + x.shape) for x in leaves[1:]]
    else:
        leaves = [data] + leaves[1:]
    return tree_util.tree_unflatten(tree, leaves)


def _sparse_transform(
    transform: Callable[..., Any], with_value: bool, name: str
) -> Callable[..., Callable[..., Any]]:
    def make(
        fun: Callable[..., Any],
        argnums: int | Sequence[int] = 0,
        has_aux: bool = False,
        **kwargs: Any,
    ) -> Callable[..., Any]:
        nums = _argnums(argnums)

        @functools.wraps(fun)
        def wrapped(*args: Any) -> Any:
            sparse_at = {i: args[i] for i in nums if isinstance(args[i], JAXSparse)}

            def on_data(*xs: Any) -> Any:
                full = [
                    _with_data(sparse_at[i], x) if i in sparse_at else x for i, x in enumerate(xs)
                ]
                return fun(*full)

            plain = [a.data if i in sparse_at else a for i, a in enumerate(args)]
            out = transform(on_data, argnums=argnums, has_aux=has_aux, **kwargs)(*plain)
            if with_value:
                value, rest = out
            else:
                value, rest = None, out
            if has_aux:
                rest, aux = rest
            derivs = (rest,) if isinstance(argnums, int) else tuple(rest)
            derivs = tuple(
                _with_data(sparse_at[i], d) if i in sparse_at else d for i, d in zip(nums, derivs)
            )
            result = derivs[0] if isinstance(argnums, int) else derivs
            if has_aux:
                result = (result, aux)
            return (value, result) if with_value else result

        return wrapped

    make.__name__ = make.__qualname__ = name
    return make


grad = _sparse_transform(polyjax.grad, with_value=False, name="grad")
grad.__doc__ = """`polyjax.grad` that differentiates sparse arguments with respect to their data.

Args:
  fun: the function to differentiate.
  argnums: the argument(s) to differentiate with respect to.
  has_aux: whether `fun` returns ``(value, aux)``.
  **kwargs: passed on to `polyjax.grad`.

Returns:
  A function returning the gradient: a sparse argument's gradient is a sparse
  array of its format and indices.
"""


def _value_and_grad(f: Callable[..., Any], *, argnums: Any, has_aux: bool, **kwargs: Any) -> Any:
    vg = polyjax.value_and_grad(f, argnums=argnums, has_aux=has_aux, **kwargs)

    def run(*args: Any) -> Any:
        value, g = vg(*args)
        if has_aux:
            value, aux = value
            return value, (g, aux)
        return value, g

    return run


value_and_grad = _sparse_transform(_value_and_grad, with_value=True, name="value_and_grad")
value_and_grad.__doc__ = "`polyjax.value_and_grad` with `grad`'s treatment of sparse arguments."
jacfwd = _sparse_transform(polyjax.jacfwd, with_value=False, name="jacfwd")
jacfwd.__doc__ = "`polyjax.jacfwd` with sparse arguments differentiated with respect to their data."
jacrev = _sparse_transform(polyjax.jacrev, with_value=False, name="jacrev")
jacrev.__doc__ = "`polyjax.jacrev` with sparse arguments differentiated with respect to their data."
jacobian = jacrev
