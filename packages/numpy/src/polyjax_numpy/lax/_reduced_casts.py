"""Casts between varying, unreduced and reduced manual axes (inside `shard_map`).

In a checked `shard_map` body a value is, over each manual axis, *invarying*
(the same on every device along it), *varying* (``{V:b}``), *unreduced*
(``{U:b}``: each device holds a partial sum, the value is their sum) or
*reduced* (``{R:b}``: the same everywhere, its cotangent unreduced). Four
primitives move a value between these states without moving data (psum aside),
as JAX 0.10.2's do, each the transpose of another:

  ``vary_unreduced_cast``  varying -> unreduced   (`pcast(x, b, to="unreduced")`)
  ``reduced_vary_cast``    reduced -> varying     (`pcast(x, b, to="varying")`)
  ``preduced``             invarying -> reduced   (`pcast(x, b, to="reduced")`)
  ``unreduced_psum``       unreduced -> invarying (`psum` of an unreduced value)

The unreduced/reduced axes live in the type's `AvalSharding` (over the body's
abstract mesh, whose axes are Manual); docs/explicit-sharding.md.
"""

from __future__ import annotations

from typing import Any

from polyjax_core import aval_sharding, mesh_context
from polyjax_core.abstract_values import ShapedArray
from polyjax_core.aval_sharding import AvalSharding, entries_of, reductions
from polyjax_core.primitive import Primitive
from polyjax_interpreters import ad
from polyjax_numpy.lax._declare import define_rules

__all__ = [
    "cast",
    "pcast_state",
    "preduced_p",
    "reduced_vary_cast_p",
    "unreduced_psum_p",
    "vary_unreduced_cast_p",
]

vary_unreduced_cast_p = Primitive("vary_unreduced_cast")
reduced_vary_cast_p = Primitive("reduced_vary_cast")
preduced_p = Primitive("preduced")
unreduced_psum_p = Primitive("unreduced_psum")

# primitive -> (state over its axes it takes, state it gives).
_MOVES = {
    vary_unreduced_cast_p: ("varying", "unreduced"),
    reduced_vary_cast_p: ("reduced", "varying"),
    preduced_p: ("invarying", "reduced"),
    unreduced_psum_p: ("unreduced", "invarying"),
}


def pcast_state(aval: Any, axes: tuple) -> str:
    """``aval``'s state over ``axes``: 'varying', 'unreduced', 'reduced' or 'invarying'
    (a mix of them is a ValueError naming the states)."""
    u, r = reductions(aval)
    states = set()
    for a in axes:
        if a in aval.vma:
            states.add("varying")
        elif a in u:
            states.add("unreduced")
        elif a in r:
            states.add("reduced")
        else:
            states.add("invarying")
    if len(states) != 1:
        raise ValueError(
            "jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
            "unreduced, reduced or invarying state of the input. Got input type: "
            f"{aval}, axes: {axes} and input state: {states}"
        )
    return states.pop()


def _moved(prim: Primitive, aval: ShapedArray, axes: tuple) -> ShapedArray:
    src, dst = _MOVES[prim]
    got = pcast_state(aval, axes)
    if got != src:
        raise ValueError(f"{prim.name}: the operand must be {src} over {axes}; it is {got}")
    s = frozenset(axes)
    u, r = reductions(aval)
    vma = aval.vma - s if src == "varying" else aval.vma | s if dst == "varying" else aval.vma
    u = u | s if dst == "unreduced" else u - s
    r = r | s if dst == "reduced" else r - s
    typed = aval.aval_sharding
    if typed is not None:
        sharding = typed.with_reductions(u, r)
    else:
        sharding = AvalSharding.make(mesh_context.get_abstract_mesh(), (), aval.ndim, u, r)
    return aval.update(vma=vma, sharding=sharding)


def _abstract_eval(prim: Primitive):
    def rule(x: ShapedArray, *, axes: tuple) -> ShapedArray:
        return _moved(prim, x, axes)

    return rule


def _sharding(outs, avals, **params):
    return entries_of(avals[0])


def _reduction_rule(prim: Primitive):
    def rule(outs, avals, *, axes):
        return [reductions(_moved(prim, avals[0], axes))]

    return rule


def _identity_lowering(ctx: Any, x: Any, *, axes: tuple) -> list:
    return [x]


def _impl(prim: Primitive):
    def impl(x: Any, *, axes: tuple) -> Any:
        raise NotImplementedError(f"{prim.name} over {axes} only runs inside shard_map")

    return impl


_TRANSPOSE = {
    vary_unreduced_cast_p: reduced_vary_cast_p,
    reduced_vary_cast_p: vary_unreduced_cast_p,
    preduced_p: unreduced_psum_p,
    unreduced_psum_p: preduced_p,
}

for _p in _MOVES:
    define_rules(
        _p,
        _abstract_eval(_p),
        # (unreduced_psum lowers as psum: `_parallel` registers it)
        None if _p is unreduced_psum_p else _identity_lowering,
        impl=_impl(_p),
        batching="vectorized",
        sharding=_sharding,
    )
    aval_sharding.register_reduction_rule(_p, _reduction_rule(_p))
    ad.deflinear2(_p, lambda ct, x, *, axes, _t=_TRANSPOSE[_p]: [_t.bind(ct, axes=axes)])
    _p.own_vma = True


# (state now, state asked for) -> the cast.
_CASTS = {(src, dst): p for p, (src, dst) in _MOVES.items() if p is not unreduced_psum_p}


def cast(x: Any, aval: Any, names: tuple, to: str) -> Any:
    """`pcast` of one leaf to ``to`` over manual axes ``names``, from any state but
    invarying -> varying (`pvary`, the caller's).

    Raises:
      ValueError: no cast goes from ``aval``'s state to ``to`` (JAX's message).
    """
    state = pcast_state(aval, names)
    prim = _CASTS.get((state, to))
    if prim is None:
        raise ValueError(f"Unsupported pcast from={state}, to={to!r}")
    return prim.bind(x, axes=names)


def psum_unreduced(x: Any, aval: Any, names: tuple) -> Any | None:
    """``psum`` of a value unreduced over all of ``names``: `unreduced_psum` (None
    for any other value)."""
    if reductions(aval)[0] >= frozenset(names) and names:
        return unreduced_psum_p.bind(x, axes=names)
    return None
