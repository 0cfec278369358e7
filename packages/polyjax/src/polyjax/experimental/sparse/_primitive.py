"""Declaring a sparse primitive from its implementation in `polyjax.numpy` terms.

A sparse primitive (``bcoo_todense_p``, ``csr_matvec_p``, ...) is a function of
the buffers of sparse arrays and of dense arrays, written once with
`polyjax.numpy`. `sparse_primitive` makes it a primitive of the jaxpr language
whose abstract evaluation traces that function, whose lowering inlines it, and
whose rules follow from which inputs it is linear in:

- jvp: the function is multilinear in the inputs named `linear` (each term
  binds the primitive again with one tangent in place of its primal); the
  others (index buffers) have no tangent; outputs that are not inexact
  (indices) get zero tangents;
- transpose: of the one undefined linear input, by `linear_transpose` of the
  implementation (a primitive can give its own);
- batching: the implementation mapped by `vmap` (a primitive whose operands
  carry batch dimensions of their own gives a rule that adds one instead).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import polyjax
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad, batching, dispatch, mlir

__all__ = ["sparse_primitive"]


def _inexact(dtype: Any) -> bool:
    return np.issubdtype(np.dtype(dtype), np.inexact)


def sparse_primitive(
    name: str,
    fun: Callable[..., Any],
    *,
    linear: Sequence[int] = (),
    multiple_results: bool = False,
    transpose: Callable[..., Any] | None = None,
    batching_rule: Callable[..., Any] | None = None,
    jvp: Callable[..., Any] | None = None,
) -> Primitive:
    """A primitive computing `fun(*args, **params)`, with rules derived as the module says."""
    prim = Primitive(name)
    prim.multiple_results = multiple_results

    @functools.lru_cache(maxsize=256)
    def out_types(types: tuple[Any, ...], params: tuple[tuple[str, Any], ...]) -> Any:
        structs = [polyjax.ShapeDtypeStruct(shape, dtype) for shape, dtype in types]
        out = polyjax.eval_shape(functools.partial(fun, **dict(params)), *structs)
        outs = out if multiple_results else [out]
        return tuple((tuple(o.shape), np.dtype(o.dtype)) for o in outs)

    def abstract_eval(*avals: Any, **params: Any) -> Any:
        # Tracing the implementation costs more than the equations it stands for: cached.
        types = tuple((tuple(a.shape), np.dtype(a.dtype)) for a in avals)
        key = tuple(sorted(params.items()))
        try:
            found = out_types(types, key)
        except TypeError:  # an unhashable param
            found = out_types.__wrapped__(types, key)
        outs = [ShapedArray(shape, dtype) for shape, dtype in found]
        return outs if multiple_results else outs[0]

    def multilinear_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        outs = list(out) if multiple_results else [out]
        terms: list[Any] = [None] * len(outs)
        for i in linear:
            if type(tangents[i]) is ad.Zero:
                continue
            args = list(primals)
            args[i] = tangents[i]
            term = prim.bind(*args, **params)
            term = list(term) if multiple_results else [term]
            terms = [t if acc is None else acc + t for acc, t in zip(terms, term)]
        tans = [
            ad.Zero.from_primal_value(o) if t is None or not _inexact(o.dtype) else t
            for o, t in zip(outs, terms)
        ]
        return out, (tans if multiple_results else tans[0])

    def generic_transpose(cts: Any, *args: Any, **params: Any) -> list[Any]:
        undefined = [i for i, a in enumerate(args) if ad.is_undefined_primal(a)]
        if len(undefined) != 1:
            raise NotImplementedError(f"{name}: transpose of more than one linear input")
        (i,) = undefined
        cts = list(cts) if multiple_results else [cts]
        outs_used = [k for k, c in enumerate(cts) if type(c) is not ad.Zero and _inexact(c.dtype)]
        if not outs_used:
            return [None] * len(args)

        def f(x: Any) -> Any:
            full = list(args)
            full[i] = x
            out = fun(*full, **params)
            out = list(out) if multiple_results else [out]
            return [out[k] for k in outs_used]

        aval = args[i].aval
        (ct,) = polyjax.linear_transpose(f, polyjax.ShapeDtypeStruct(aval.shape, aval.dtype))(
            [cts[k] for k in outs_used]
        )
        return [ct if k == i else None for k in range(len(args))]

    def vmapped(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> Any:
        out = polyjax.vmap(functools.partial(fun, **params), in_axes=tuple(dims))(*args)
        return out, ([0] * len(out) if multiple_results else 0)

    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(functools.partial(dispatch.apply_primitive, prim))
    mlir.register_lowering(prim, mlir.lower_fun(fun, multiple_results=multiple_results))
    if jvp is not None:
        ad.primitive_jvps[prim] = jvp
    elif linear:
        ad.primitive_jvps[prim] = multilinear_jvp
    else:
        ad.defjvp_zero(prim)
    if transpose is not None or linear:
        ad.primitive_transposes[prim] = transpose or generic_transpose
    batching.primitive_batchers[prim] = batching_rule or vmapped
    return prim
