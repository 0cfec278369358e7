"""Varying manual axes: how a per-device program's types say what differs between devices.

Inside a `shard_map` body traced with `check_vma=True`, every value's
`ShapedArray.vma` is the set of manual mesh axes along which it may differ
from device to device. An argument varies over the axes its `in_specs`
entry names; a constant varies over none. The rules:

* an ordinary primitive's outputs vary over the union of its operands'
  axes (applied once, here, for every primitive: `output_avals`);
* when its operands disagree, the ones varying over fewer axes are first
  cast with `pvary` (an identity that only changes the type), so that every
  equation of the jaxpr sees operands of one vma, as JAX's jaxprs show:
  `c:f32[4]{V:i} = pvary[axes=('i',)] b`  (`match_operands`);
* primitives with their own rule (the collectives, `pvary`) set
  `Primitive.own_vma` and compute their outputs' vma themselves; so do
  higher-order primitives (those with jaxprs in their params), whose
  outputs' types come from their bodies. The collectives that communicate
  (`psum`, `all_gather`, `psum_scatter`, `all_to_all`, `ppermute`) first cast
  their operands to vary over their axes (`Primitive.vma_operand_axes`).

Under `grad` the casts carry the meaning: `pvary` transposes to `psum` (a
value every device holds got a cotangent from each device) and `psum` to the
identity (see `polyjax_numpy.lax`'s parallel primitives).

Collectives add the axes they name only while those axes are *checked*
(`checked_axes`, bound by `shard_map` around its body with `check_vma=True`):
outside it (vmap's named axes, `check_vma=False`) every vma stays empty.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from polyjax_core import config
from polyjax_core.abstract_values import ordered_axes
from polyjax_core.jaxpr import jaxprs_in_params

__all__ = [
    "cast_to",
    "checked_axes",
    "checking_axes",
    "match_operands",
    "output_avals",
    "register_pvary",
    "union",
]

_EMPTY: frozenset = frozenset()


class _State(threading.local):
    checked: frozenset = _EMPTY


_state = _State()
_pvary_hook: list[Any] = []


@contextmanager
def checking_axes(axes: frozenset) -> Iterator[None]:
    """Makes `axes` checked manual axes for the extent of the block (shard_map's body)."""
    saved = _state.checked
    _state.checked = frozenset(axes)
    try:
        yield
    finally:
        _state.checked = saved


def checked_axes() -> frozenset:
    """The manual axes whose variation values' types record now."""
    return _state.checked


def union(vmas: Sequence[frozenset]) -> frozenset:
    """The union of some vmas (empty for none)."""
    out = _EMPTY
    for m in vmas:
        if m:
            out = out | m
    return out


def _vma(x: Any) -> frozenset:
    return getattr(x, "vma", _EMPTY)


def _any_varying(avals: Sequence[Any]) -> bool:
    for a in avals:
        if getattr(a, "vma", None):
            return True
    return False


def _has_jaxprs(params: dict) -> bool:
    return any(True for _ in jaxprs_in_params(params))


def output_avals(prim: Any, in_avals: Sequence[Any], outs: Any, params: dict) -> Any:
    """`outs` (the shape rule's result) varying over the union of `in_avals`' axes."""
    if not _any_varying(in_avals):  # the common case, outside shard_map: nothing to do
        return outs
    if prim.own_vma or _has_jaxprs(params):  # these type their outputs themselves
        return outs
    vma = union([_vma(a) for a in in_avals])
    if prim.multiple_results:
        return [_with(o, vma) for o in outs]
    return _with(outs, vma)


def _with(aval: Any, vma: frozenset) -> Any:
    old = getattr(aval, "vma", None)
    if old is None or old >= vma:
        return aval
    return aval.update(vma=old | vma)


def register_pvary(fn: Any) -> None:
    """Installs `fn(x, axes) -> x'`, the cast `match_operands` applies (lax's `pvary`)."""
    _pvary_hook[:] = [fn]


def match_operands(prim: Any, args: Sequence[Any], params: dict) -> Sequence[Any]:
    """`args`, with those varying over fewer axes than the others cast by `pvary`.

    Only tracers carry a vma; constants vary over nothing and are cast too, as
    in JAX (`pvary[axes=('i',)] 1.0:f32[]`). A collective whose
    `Primitive.vma_operand_axes(params)` names axes gets each operand cast to
    vary over those of them that are checked (JAX's `psum` of an invariant
    value is `psum` of its `pvary`): transposing the cast is what sums the
    cotangents of a value every device holds.
    """
    if prim.own_vma:
        axes_of = prim.vma_operand_axes
        want = frozenset(axes_of(params)) & _state.checked if axes_of is not None else _EMPTY
        return [cast_to(x, want) if _castable(x) else x for x in args] if want else args
    for x in args:
        if getattr(getattr(x, "aval", None), "vma", None):
            break
    else:  # the common case, outside shard_map: nothing to do
        return args
    if not _pvary_hook:
        return args
    vmas = [_vma(getattr(x, "aval", None)) for x in args]
    full = union(vmas)
    if all(m == full for m in vmas) or _has_jaxprs(params):
        return args
    if not config.auto_pcast.value:
        raise ValueError(
            f"Primitive {prim.name} requires varying manual axes to match, but got "
            f"{[frozenset(m) for m in vmas]}. Cast with `lax.pcast(x, axes, to='varying')`, "
            "turn `auto_pcast` on, or pass check_vma=False to `shard_map`."
        )
    return [x if m == full or not _castable(x) else cast_to(x, full) for x, m in zip(args, vmas)]


def _castable(x: Any) -> bool:
    """An array (or a constant becoming one), not a token or another kind of value."""
    aval = getattr(x, "aval", None)
    return aval is None or hasattr(aval, "vma")


def cast_to(x: Any, vma: frozenset) -> Any:
    """`x`, cast with `pvary` to vary over `vma` too (unchanged when it already does).

    Example: `lax.full_like(x, 0)` is typed like `x`, varying axes included.
    """
    missing = vma - _vma(getattr(x, "aval", None))
    if not missing or not _pvary_hook:
        return x
    return _pvary_hook[0](x, ordered_axes(missing))
