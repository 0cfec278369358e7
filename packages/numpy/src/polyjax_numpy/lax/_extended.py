"""Arrays of an extended dtype (typed PRNG keys) in the structural primitives.

An `ExtendedArray` stands for an array of shape `S` whose elements are each a
small array of *physical* data: a `key<fry>` array of shape `S` holds
`uint32[*S, 2]`. Structural primitives (reshape, broadcast, concatenate,
transpose, squeeze, rev, slices, dynamic slices and updates, gather, scatter,
select_n) and the comparisons `eq`/`ne` accept such arrays as JAX's key arrays
do, by one mechanism: the primitive's `bind` unwraps the physical data, rewrites
the parameters so that the trailing physical axes ride along untouched
(`_RULES`), binds the primitive on the data and wraps the result again (or, for
a comparison, reduces the physical axes: two keys are equal when all their data
words are, `_FINISH`). Every other primitive sees the extended
dtype in its abstract evaluation and refuses it with a TypeError, so arithmetic
on keys fails as in JAX.

Because the rewrite happens at `bind`, everything built on these primitives
(`jnp.concatenate`, `jnp.where`, `jnp.take`, indexing, `.at[].set`, ...) works on
key arrays without a rule of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import get_aval
from polyjax_core.primitive import Primitive
from polyjax_numpy.lax._bits import reduce_and, reduce_or
from polyjax_numpy.lax._shape_ops import broadcast_in_dim
from polyjax_numpy.lax._slicing import GatherScatterMode

__all__ = ["ExtendedArray", "install"]


class ExtendedArray:
    """Base of arrays whose elements are small arrays of physical data.

    Subclasses provide `_physical` (the data, of shape ``shape + _trailing``),
    `_trailing` (the shape of one element's data) and `_rewrap(data)`.
    """

    __slots__ = ()

    @property
    def _physical(self) -> Any:
        raise NotImplementedError

    @property
    def _trailing(self) -> tuple[int, ...]:
        raise NotImplementedError

    def _rewrap(self, data: Any) -> ExtendedArray:
        raise NotImplementedError


def _rank(x: Any) -> int:
    return np.ndim(x)  # (a Python scalar too: `where(True, k1, k2)`)


def _identity(args: list, params: dict, t: int, like: ExtendedArray) -> tuple[list, dict]:
    return args, params


def _reshape(args, params, t, like):
    new = (*params["new_sizes"], *like._trailing)
    dims = params.get("dimensions")
    if dims is not None:
        dims = (*dims, *range(len(dims), len(dims) + t))
    return args, {**params, "new_sizes": new, "dimensions": dims}


def _broadcast_in_dim(args, params, t, like):
    shape = tuple(params["shape"])
    n = len(shape)
    return args, {
        **params,
        "shape": (*shape, *like._trailing),
        "broadcast_dimensions": (*params["broadcast_dimensions"], *range(n, n + t)),
    }


def _transpose(args, params, t, like):
    perm = tuple(params["permutation"])
    n = len(perm)
    return args, {**params, "permutation": (*perm, *range(n, n + t))}


def _slice(args, params, t, like):
    strides = params.get("strides")
    return args, {
        **params,
        "start_indices": (*params["start_indices"], *(0,) * t),
        "limit_indices": (*params["limit_indices"], *like._trailing),
        "strides": None if strides is None else (*strides, *(1,) * t),
    }


def _zero_index(args: list) -> Any:
    dtype = get_aval(args[-1]).dtype if len(args) > 1 else np.dtype(np.int32)
    return np.zeros((), dtype)


def _dynamic_slice(args, params, t, like):
    return [*args, *[_zero_index(args)] * t], {
        **params,
        "slice_sizes": (*params["slice_sizes"], *like._trailing),
    }


def _dynamic_update_slice(args, params, t, like):
    return [*args, *[_zero_index(args)] * t], params


def _gather(args, params, t, like):
    dn = params["dimension_numbers"]
    n_batch = _rank(args[1]) - 1  # the last axis of the indices holds the index vectors
    out_rank = n_batch + len(params["slice_sizes"]) - len(dn.collapsed_slice_dims)
    out_rank -= len(dn.operand_batching_dims)
    dn = dn._replace(offset_dims=(*dn.offset_dims, *range(out_rank, out_rank + t)))
    # Out-of-bounds keys in "fill" mode get all-zero key data.
    fill = 0 if params.get("mode") is GatherScatterMode.FILL_OR_DROP else None
    return args, {
        **params,
        "dimension_numbers": dn,
        "slice_sizes": (*params["slice_sizes"], *like._trailing),
        "fill_value": fill,
    }


def _scatter(args, params, t, like):
    dn = params["dimension_numbers"]
    n = _rank(args[2]) - t  # the updates' logical rank
    dn = dn._replace(update_window_dims=(*dn.update_window_dims, *range(n, n + t)))
    return args, {**params, "dimension_numbers": dn}


def _select_n(args, params, t, like):
    which, cases = args[0], args[1:]
    if _rank(which):  # a scalar selector needs no physical axes
        which = broadcast_in_dim(which, tuple(cases[0].shape), tuple(range(_rank(which))))
    return [which, *cases], params


def _compare(args, params, t, like):
    """`eq`/`ne`: compare the data words, broadcast together as the keys broadcast
    (NumPy's rules, as `jnp.equal` of keys); `_FINISH` makes whole-key results."""
    shapes = [tuple(a.shape[: _rank(a) - t]) for a in args]
    out = sd.broadcast_shapes(*shapes)
    n = len(out)
    return [
        a
        if s == out
        else broadcast_in_dim(a, (*out, *like._trailing), tuple(range(n - len(s), n + t)))
        for a, s in zip(args, shapes)
    ], params


def _all_words(out: Any, t: int) -> Any:
    """Keys are equal when all their data words are (`eq`)."""
    n = _rank(out)
    return reduce_and(out, tuple(range(n - t, n)))


def _any_word(out: Any, t: int) -> Any:
    """Keys differ when any of their data words does (`ne`)."""
    n = _rank(out)
    return reduce_or(out, tuple(range(n - t, n)))


_RULES: dict[str, Callable[..., tuple[list, dict]]] = {
    "reshape": _reshape,
    "broadcast_in_dim": _broadcast_in_dim,
    "concatenate": _identity,
    "transpose": _transpose,
    "squeeze": _identity,
    "rev": _identity,
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "gather": _gather,
    "scatter": _scatter,
    "select_n": _select_n,
    "eq": _compare,
    "ne": _compare,
}

# How a primitive's result on the data becomes its result on the extended
# arrays: by default the data is wrapped again; comparisons reduce the key axes.
_FINISH: dict[str, Callable[[Any, int], Any]] = {"eq": _all_words, "ne": _any_word}


def _physical_bind(
    prim: Primitive, bind: Callable[..., Any], rule: Callable, finish: Callable | None
) -> Callable:
    def bind_extended(*args: Any, **params: Any) -> Any:
        for like in args:
            if isinstance(like, ExtendedArray):
                break
        else:  # the common case: plain arrays, at the cost of one loop
            return bind(*args, **params)
        for a in args:
            if isinstance(a, ExtendedArray) and a.dtype != like.dtype:
                raise TypeError(
                    f"{prim.name} requires arguments of one dtype, got {like.dtype} and {a.dtype}"
                )
        if finish is not None:  # a comparison: a key against raw data or a number
            for a in args:
                if not isinstance(a, ExtendedArray):
                    raise TypeError(
                        f"{prim.name} does not accept dtypes {like.dtype}, {get_aval(a).dtype}."
                    )
        t = len(like._trailing)
        phys = [a._physical if isinstance(a, ExtendedArray) else a for a in args]
        phys, params = rule(phys, params, t, like)
        out = bind(*phys, **params)
        return like._rewrap(out) if finish is None else finish(out, t)

    return bind_extended


def install(primitives: dict[str, Primitive]) -> None:
    """Makes the structural primitives among ``primitives`` (by name) accept
    extended arrays."""
    for name, prim in primitives.items():
        rule = _RULES.get(name)
        if rule is not None and not getattr(prim, "_extended_bind", False):
            prim.bind = _physical_bind(prim, prim.bind, rule, _FINISH.get(name))  # type: ignore[method-assign]  # wraps bind once
            prim._extended_bind = True  # type: ignore[attr-defined]  # marks the wrap
