"""`sparsify`: running a function written for dense arrays on sparse ones.

`sparsify(f)` traces `f` to a jaxpr with the sparse arguments' dense types and
evaluates it with the sparse values themselves: an equation whose operand is
sparse uses its sparse rule where one exists (products by dense arrays and
scalars, division by dense values, `dot_general`, negation, transposition,
sums, conversion, sums of sparse arrays, slicing, reshaping, broadcasting,
concatenation, `squeeze`, `rev`) and the densified operand otherwise, so the
result is sparse where every step allows.
`BCSR`, `COO`, `CSR` and `CSC` arguments are converted to `BCOO` first.
Unlike JAX, there is no `SparseTracer`: the jaxpr is interpreted, so `f`'s
Python control flow sees the dense types only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import polyjax
from polyjax import lax, tree_util
from polyjax.experimental.sparse import bcoo as _bcoo
from polyjax.experimental.sparse._base import JAXSparse
from polyjax_core.jaxpr import Literal

__all__ = ["sparsify"]


def _todense(x: Any) -> Any:
    return x.todense() if isinstance(x, JAXSparse) else x


def _dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, **params: Any) -> Any:
    preferred = params.get("preferred_element_type")
    if isinstance(lhs, _bcoo.BCOO) and isinstance(rhs, _bcoo.BCOO):
        out = _bcoo.bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers)
        return out if preferred is None else out.astype(preferred)
    out = _bcoo.bcoo_dot_general(
        lhs, rhs, dimension_numbers=dimension_numbers, preferred_element_type=preferred
    )
    return out


def _as_bcoo(x: Any) -> Any:
    if isinstance(x, JAXSparse) and not isinstance(x, _bcoo.BCOO):
        if hasattr(x, "to_bcoo"):
            return x.to_bcoo()
        return _bcoo.bcoo_fromdense(x.todense(), nse=x.nse)
    return x


def _sparse_rule(prim: Any, args: list, params: dict) -> Any:
    """The result of `prim` on arguments some of which are `BCOO`, or None to densify."""
    name = prim.name
    sparse = [isinstance(a, _bcoo.BCOO) for a in args]
    if name == "dot_general":
        return _dot_general(*args, **params)
    if name == "mul":
        return args[0] * args[1]
    if name == "neg":
        return -args[0]
    if name == "transpose":
        return args[0].transpose(params["permutation"])
    if name == "reduce_sum":
        out = _bcoo.bcoo_reduce_sum(args[0], axes=tuple(params["axes"]))
        return out.todense() if out.ndim == 0 else out
    if name == "convert_element_type":
        return args[0].astype(params["new_dtype"])
    if name in ("add", "sub") and all(sparse) and args[0].shape == args[1].shape:
        lhs, rhs = args[0], args[1] if name == "add" else -args[1]
        if lhs.indices is rhs.indices:  # one value's entries (``x + x``): add the stored values
            return _bcoo.BCOO((lhs.data + rhs.data, lhs.indices), shape=lhs.shape)
        return lhs + rhs
    if name == "div" and sparse[0] and not sparse[1]:
        return args[0] / args[1]
    if name == "slice":
        return _bcoo.bcoo_slice(
            args[0],
            start_indices=params["start_indices"],
            limit_indices=params["limit_indices"],
            strides=params.get("strides"),
        )
    if name == "reshape":
        dims = params.get("dimensions")
        return _bcoo.bcoo_reshape(args[0], new_sizes=params["new_sizes"], dimensions=dims)
    if name == "broadcast_in_dim" and "shape" in params:
        return _bcoo.bcoo_broadcast_in_dim(
            args[0], shape=params["shape"], broadcast_dimensions=params["broadcast_dimensions"]
        )
    if name == "concatenate" and all(sparse):
        return _bcoo.bcoo_concatenate(args, dimension=params["dimension"])
    if name == "squeeze":
        return _bcoo.bcoo_squeeze(args[0], dimensions=tuple(params["dimensions"]))
    if name == "rev":
        return _bcoo.bcoo_rev(args[0], tuple(params["dimensions"]))
    return None


def sparsify(f: Callable[..., Any], use_tracer: bool = False) -> Callable[..., Any]:
    """`f` evaluated with its sparse arguments kept sparse where the operations allow.

    Args:
      f: a function of arrays (pytrees of them), written for dense arrays.
      use_tracer: accepted for JAX's signature; polyjax always interprets the jaxpr.

    Returns:
      A function taking sparse arrays where `f` takes dense ones; its results
      are sparse where every step producing them had a sparse rule.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax.experimental import sparse
      >>> m = sparse.BCOO.fromdense(jnp.array([[0.0, 1.0], [2.0, 0.0]]))
      >>> sparse.sparsify(lambda a, v: jnp.sum(2 * a @ v))(m, jnp.ones(2))
      Array(6., dtype=float32)
    """
    del use_tracer
    is_sparse = lambda x: isinstance(x, JAXSparse)  # noqa: E731

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_sparse)
        leaves = [_as_bcoo(x) for x in leaves]
        stand_ins = [
            polyjax.ShapeDtypeStruct(x.shape, x.dtype) if is_sparse(x) else x for x in leaves
        ]

        def dense_f(*xs: Any) -> Any:
            a, k = tree_util.tree_unflatten(tree, xs)
            return f(*a, **k)

        closed, out_shape = polyjax.make_jaxpr(dense_f, return_shape=True)(*stand_ins)
        jaxpr = closed.jaxpr
        env = dict(zip(jaxpr.constvars, closed.consts))
        env.update(zip(jaxpr.invars, leaves))

        def read(v: Any) -> Any:
            return v.val if isinstance(v, Literal) else env[v]

        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            out = None
            if any(is_sparse(a) for a in ins):
                out = _sparse_rule(eqn.primitive, ins, eqn.params)
                if out is None:
                    ins = [_todense(a) for a in ins]
            if out is None:
                out = eqn.primitive.bind(*ins, **eqn.params)
            if eqn.primitive.multiple_results:
                env.update(zip(eqn.outvars, out))
            else:
                env[eqn.outvars[0]] = out
        outs = [read(v) for v in jaxpr.outvars]
        return tree_util.tree_unflatten(tree_util.tree_structure(out_shape), outs)

    return wrapped


del lax
