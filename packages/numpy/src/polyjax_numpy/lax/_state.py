"""Mutable array references: `new_ref`, reading and writing them, `freeze`.

    b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a
    c:f32[2] <- b[1:]                 get
    b[0] <- 5.0:f32[]                 swap (its old value unused)
    d:f32[], b[i] <- b[i], e          swap
    b[...] += f                       addupdate
    g:f32[3] = freeze b

Each primitive carries the reference effect (`polyjax_core.state`) and has its
abstract evaluation, eager impl, *discharge* rule (what it is on the array a
reference holds, `polyjax_interpreters.discharge`), jvp (a tangent reference
beside each reference: reads and writes act on both) and batching rule (a
batched reference is batched at its leading axis). XLA never sees a reference:
jit, eager calls and loops discharge them first (docs/refs.md).

An index is static ints and slices (positive steps), traced integer scalars
and `...`; it is kept as the `indexer` param, one entry per axis, with traced
indices as extra operands:

    ("slice", start, size)   a static slice (("slice", start, size, step) strided)
    ("int", k)               a static integer (the axis is dropped)
    ("dyn",)                 a traced integer scalar, the next operand (dropped)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from polyjax_core import dtypes, tracing
from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.state import AbstractRef, Ref, is_ref_aval, ref_effect, register_ref_indexing
from polyjax_core.tracing import Tracer
from polyjax_interpreters import ad, batching
from polyjax_interpreters.array import Array, put_value
from polyjax_numpy.lax import _elementwise as _ew
from polyjax_numpy.lax._declare import standard_primitive
from polyjax_numpy.lax._shape_ops import full, pad, reshape
from polyjax_numpy.lax._shape_ops import slice as lax_slice
from polyjax_numpy.lax._slicing import dynamic_slice, dynamic_update_slice

__all__ = [
    "addupdate",
    "addupdate_p",
    "empty_ref",
    "free_ref",
    "freeze",
    "freeze_p",
    "get",
    "get_p",
    "new_ref",
    "new_ref_p",
    "set",
    "swap",
    "swap_p",
]

_EFFECTS = frozenset({ref_effect})
Indexer = tuple[tuple[Any, ...], ...]


# ---------------------------------------------------------------------------
# Indexers


def _is_int_scalar(x: Any) -> bool:
    aval = get_aval(x)
    return aval.shape == () and dtypes.issubdtype(aval.dtype, np.integer)


def _make_indexer(shape: Sequence[int], index: Any) -> tuple[Indexer, list[Any]]:
    """(the indexer, the traced indices) of ``ref[index]`` for a reference of `shape`."""
    if index is None:
        index = ()
    items = list(index) if isinstance(index, tuple) else [index]
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        k = items.index(Ellipsis)
        fill = len(shape) - (len(items) - 1)
        items[k : k + 1] = [slice(None)] * max(fill, 0)
    if len(items) > len(shape):
        raise IndexError(
            f"Too many indices for a reference of shape {tuple(shape)}: got {len(items)}."
        )
    items += [slice(None)] * (len(shape) - len(items))
    entries: list[tuple[Any, ...]] = []
    dynamic: list[Any] = []
    for dim, item in zip(shape, items):
        if isinstance(item, slice):
            start, stop, step = item.indices(dim)
            if step < 1:
                raise NotImplementedError(
                    f"Reference indexing supports slices with a positive step, got {item}."
                )
            size = len(range(start, stop, step))
            entries.append(("slice", start, size) if step == 1 else ("slice", start, size, step))
        elif isinstance(item, Tracer) and _is_int_scalar(item):
            entries.append(("dyn",))
            dynamic.append(item)
        elif (isinstance(item, int | np.integer) and not isinstance(item, bool)) or (
            hasattr(item, "aval") and _is_int_scalar(item)
        ):  # (a concrete integer array)
            k = operator.index(item)
            if not -dim <= k < dim:
                raise IndexError(f"index {k} is out of bounds for axis of size {dim}")
            entries.append(("int", k % dim))
        else:
            raise NotImplementedError(
                "Reference indexing supports integers, slices with positive steps, integer scalars "
                f"and '...'; got {item!r}."
            )
    return tuple(entries), dynamic


def _indexed_shape(shape: Sequence[int], indexer: Indexer) -> tuple[int, ...]:
    return tuple(e[2] for e in indexer if e[0] == "slice")


def _index_str(indexer: Indexer, shape: Sequence[int], dyn: list[str]) -> str:
    """JAX's printed index: ``...``, ``0,:``, ``:1,1:``, ``e``."""
    if all(e[0] == "slice" and e[1] == 0 and e[2] == d for e, d in zip(indexer, shape)):
        return "..."
    it = iter(dyn)
    parts = []
    for e, d in zip(indexer, shape):
        if e[0] == "int":
            parts.append(str(e[1]))
        elif e[0] == "dyn":
            parts.append(next(it))
        else:
            start, stop = e[1], e[1] + e[2]
            parts.append(f"{start or ''}:{stop if stop != d else ''}")
    return ",".join(parts)


def _starts(indexer: Indexer, dyn: Sequence[Any], shape: Sequence[int]) -> list[Any]:
    """The start index of the block along each axis (a traced index wraps once if negative)."""
    it = iter(dyn)
    starts = []
    for e, d in zip(indexer, shape):
        if e[0] == "dyn":
            i = next(it)
            starts.append(_ew.select(_ew.lt(i, _ew._convert_element_type(0, i.dtype)), i + d, i))
        else:
            starts.append(e[1])
    return starts


def _block_sizes(indexer: Indexer) -> list[int]:
    return [e[2] if e[0] == "slice" else 1 for e in indexer]


def _strides(indexer: Indexer) -> list[int]:
    return [e[3] if len(e) > 3 else 1 for e in indexer]


def _spans(indexer: Indexer) -> list[int]:
    """The extent of the block along each axis (a strided slice's first to last element)."""
    return [(n - 1) * k + 1 if n else 0 for n, k in zip(_block_sizes(indexer), _strides(indexer))]


def _is_whole(indexer: Indexer, shape: Sequence[int]) -> bool:
    return all(
        e[0] == "slice" and e[1] == 0 and e[2] == d and len(e) == 3 for e, d in zip(indexer, shape)
    )


def _read(x: Any, indexer: Indexer, dyn: Sequence[Any]) -> Any:
    """``x[index]`` on the array a reference holds."""
    if _is_whole(indexer, x.shape):
        return x
    spans, strides = _spans(indexer), _strides(indexer)
    block = dynamic_slice(x, _starts(indexer, dyn, x.shape), spans)
    if any(k != 1 for k in strides):
        block = lax_slice(block, [0] * len(spans), spans, strides)
    return reshape(block, _indexed_shape(x.shape, indexer))


def _write(x: Any, indexer: Indexer, dyn: Sequence[Any], value: Any) -> Any:
    """``x`` with ``x[index]`` replaced by ``value``."""
    if _is_whole(indexer, x.shape):
        return value
    block = reshape(value, _block_sizes(indexer))
    starts, strides = _starts(indexer, dyn, x.shape), _strides(indexer)
    if any(k != 1 for k in strides):
        # A strided block: spread the values out (interior padding) and keep the
        # old ones in between.
        config = [(0, 0, k - 1) for k in strides]
        region = dynamic_slice(x, starts, _spans(indexer))
        spread = pad(block, _ew._convert_element_type(0, x.dtype), config)
        mask = pad(full(block.shape, True), False, config)
        block = _ew.select(mask, spread, region)
    return dynamic_update_slice(x, block, starts)


# ---------------------------------------------------------------------------
# Printing


def _print_get(eqn: Any, atom: Any, binder: Any, is_used: Any) -> str:
    ref, *dyn = eqn.invars
    idx = _index_str(eqn.params["indexer"], ref.aval.shape, [atom(d) for d in dyn])
    return f"{binder(eqn.outvars[0])} <- {atom(ref)}[{idx}]"


def _print_swap(eqn: Any, atom: Any, binder: Any, is_used: Any) -> str:
    ref, val, *dyn = eqn.invars
    target = (
        f"{atom(ref)}[{_index_str(eqn.params['indexer'], ref.aval.shape, [atom(d) for d in dyn])}]"
    )
    out = eqn.outvars[0]
    if not is_used(out):
        return f"{target} <- {atom(val)}"
    return f"{binder(out)}, {target} <- {target}, {atom(val)}"


def _print_addupdate(eqn: Any, atom: Any, binder: Any, is_used: Any) -> str:
    ref, val, *dyn = eqn.invars
    idx = _index_str(eqn.params["indexer"], ref.aval.shape, [atom(d) for d in dyn])
    return f"{atom(ref)}[{idx}] += {atom(val)}"


# ---------------------------------------------------------------------------
# Checks


def _check_ref(x: Any, name: str) -> AbstractRef:
    if not is_ref_aval(x):
        raise TypeError(f"`{name}` expects a mutable array reference, got a value of type {x}.")
    return x


def _check_value(prim: str, ref: AbstractRef, value: Any, indexer: Indexer) -> None:
    expected = _indexed_shape(ref.shape, indexer)
    if tuple(value.shape) != expected:
        transforms = "()" if _is_whole(indexer, ref.shape) else f"({indexer},)"
        raise ValueError(
            f"Invalid shape for `{prim}`. Ref shape: {tuple(ref.shape)}. Expected shape: "
            f"{expected}. Value shape: {tuple(value.shape)}. Transforms: {transforms}. "
        )
    if value.dtype != ref.dtype:
        raise ValueError(
            f"Invalid dtype for `{prim}`. Ref dtype: {ref.dtype}. Value dtype: {value.dtype}. "
        )


def _check_indices(dyn_avals: Sequence[Any]) -> None:
    for a in dyn_avals:
        if a.shape != () or not dtypes.issubdtype(a.dtype, np.integer):
            raise TypeError(f"a traced reference index must be an integer scalar, got {a}.")


# ---------------------------------------------------------------------------
# new_ref


def _new_ref_abstract_eval(x: Any, *, kind: Any, memory_space: Any) -> tuple[Any, frozenset]:
    if is_ref_aval(x):
        raise TypeError("`new_ref` expects an array, got a mutable array reference.")
    return AbstractRef(x), _EFFECTS


def _new_ref_impl(x: Any, *, kind: Any, memory_space: Any) -> Ref:
    # A buffer of its own, which writes may update in place (donated).
    if type(x) is not Array:  # (a host value, or a cached device scalar: copied too)
        a = get_aval(x)
        x = _ew._convert_element_type(x, a.dtype, weak_type=a.weak_type)
    return Ref(put_value(x, x.aval, x.sharding, x.committed, may_alias=False), owned=True)


def _freeze_impl(ref: Ref) -> Any:
    ref._owned = False  # the contents are shared from now on
    return ref._value


def _new_ref_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    return [values[0]], [None]


def _new_ref_jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    # Every reference created under differentiation gets a tangent reference
    # (`ad.always_jvp`), so that differentiated values may be written to it.
    (x,), (t,) = primals, tangents
    tangent = ad.bind_unknown(new_ref_p, ad.instantiate_zeros(t), **params)
    return new_ref_p.bind(x, **params), tangent


def _new_ref_batch(axis: Any, args: list, dims: list, **params: Any) -> tuple[Any, Any]:
    # A reference created under vmap is batched (at axis 0) even when its initial
    # contents are not, so that batched values may be written to it.
    (x,), (d,) = args, dims
    return new_ref_p.bind(batching.bdim_at_front(x, d, axis.size), **params), 0


new_ref_p = standard_primitive(
    "new_ref",
    _new_ref_abstract_eval,
    effectful=True,
    impl=_new_ref_impl,
    discharge=_new_ref_discharge,
    jvp=_new_ref_jvp,
    axis_batching=_new_ref_batch,
)
ad.always_jvp.add(new_ref_p)


# ---------------------------------------------------------------------------
# get


def _get_abstract_eval(ref: Any, *dyn: Any, indexer: Indexer) -> tuple[Any, frozenset]:
    _check_ref(ref, "get")
    _check_indices(dyn)
    inner = ref.inner_aval
    return ShapedArray(_indexed_shape(ref.shape, indexer), inner.dtype, inner.weak_type), _EFFECTS


def _get_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    x, *dyn = values
    return [_read(x, eqn.params["indexer"], dyn)], [None] * len(values)


def _get_jvp(primals: list, tangents: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, *dyn = primals
    out = get_p.bind(ref, *dyn, indexer=indexer)
    tref = tangents[0]
    if type(tref) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, get_p.bind(tref, *dyn, indexer=indexer)


def _batched_indexer(indexer: Indexer, size: int) -> Indexer:
    return (("slice", 0, size), *indexer)


def _ref_batch_args(prim: str, args: list, dims: list, n_vals: int) -> tuple[Any, list, list, Any]:
    """(ref, values, traced indices, batch size) checked for a batched reference operation."""
    ref, vals, dyn = args[0], args[1 : 1 + n_vals], args[1 + n_vals :]
    if any(d is not batching.not_mapped for d in dims[1 + n_vals :]):
        raise NotImplementedError(f"vmap of `{prim}` with batched reference indices")
    if dims[0] not in (0, batching.not_mapped):
        raise NotImplementedError(
            f"vmap of `{prim}` on a reference batched along axis {dims[0]} (only axis 0)"
        )
    return ref, vals, dyn, dims[0]


def _get_batch(args: list, dims: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, _, dyn, d = _ref_batch_args("get", args, dims, 0)
    if d is batching.not_mapped:
        return get_p.bind(ref, *dyn, indexer=indexer), d
    return get_p.bind(ref, *dyn, indexer=_batched_indexer(indexer, ref.shape[0])), 0


get_p = standard_primitive(
    "get",
    _get_abstract_eval,
    effectful=True,
    discharge=_get_discharge,
    jvp=_get_jvp,
    batching=_get_batch,
)
get_p.print_eqn = _print_get


# ---------------------------------------------------------------------------
# swap and addupdate


def _swap_abstract_eval(ref: Any, val: Any, *dyn: Any, indexer: Indexer) -> tuple[Any, frozenset]:
    _check_ref(ref, "swap")
    _check_indices(dyn)
    _check_value("swap", ref, val, indexer)
    inner = ref.inner_aval
    return ShapedArray(_indexed_shape(ref.shape, indexer), inner.dtype, inner.weak_type), _EFFECTS


def _swap_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    x, val, *dyn = values
    indexer = eqn.params["indexer"]
    return [_read(x, indexer, dyn)], [_write(x, indexer, dyn, val)] + [None] * (len(values) - 1)


def _differentiated_write_error(ref_aval: Any) -> Exception:
    return Exception(
        "performing a set/swap operation with a differentiated value on a non-differentiated "
        f"array reference of type {ref_aval}. Move the array reference to be an argument of "
        "the differentiated function?"
    )


def _swap_jvp(primals: list, tangents: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, val, *dyn = primals
    tref, tval = tangents[0], tangents[1]
    out = swap_p.bind(ref, val, *dyn, indexer=indexer)
    if type(tref) is ad.Zero:
        if type(tval) is not ad.Zero:
            raise _differentiated_write_error(get_aval(ref))
        return out, ad.Zero.from_primal_value(out)
    return out, swap_p.bind(tref, ad.instantiate_zeros(tval), *dyn, indexer=indexer)


def _vmapped_write_error(prim: str, ref: Any) -> Exception:
    return Exception(
        f"performing a set/swap operation with vmapped value on an unbatched array reference "
        f"of type {get_aval(ref)}. Move the array reference to be an argument to the vmapped "
        "function?"
    )


def _batched_value(prim: str, ref: Any, d: Any, val: Any, vd: Any) -> tuple[Any, Indexer | None]:
    """The value to write, batched at 0 when the reference is (None: unbatched write)."""
    if d is batching.not_mapped:
        if vd is not batching.not_mapped:
            raise _vmapped_write_error(prim, ref)
        return val, None
    return batching.bdim_at_front(val, vd, ref.shape[0]), ()


def _swap_batch(args: list, dims: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, (val,), dyn, d = _ref_batch_args("swap", args, dims, 1)
    val, batched = _batched_value("swap", ref, d, val, dims[1])
    if batched is None:
        return swap_p.bind(ref, val, *dyn, indexer=indexer), batching.not_mapped
    return swap_p.bind(ref, val, *dyn, indexer=_batched_indexer(indexer, ref.shape[0])), 0


swap_p = standard_primitive(
    "swap",
    _swap_abstract_eval,
    effectful=True,
    discharge=_swap_discharge,
    jvp=_swap_jvp,
    batching=_swap_batch,
)
swap_p.print_eqn = _print_swap


def _addupdate_abstract_eval(ref: Any, val: Any, *dyn: Any, indexer: Indexer):
    _check_ref(ref, "addupdate")
    _check_indices(dyn)
    _check_value("addupdate", ref, val, indexer)
    return [], _EFFECTS


def _addupdate_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    x, val, *dyn = values
    indexer = eqn.params["indexer"]
    new = _write(x, indexer, dyn, _ew.add(_read(x, indexer, dyn), val))
    return [], [new] + [None] * (len(values) - 1)


def _addupdate_jvp(primals: list, tangents: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, val, *dyn = primals
    tref, tval = tangents[0], tangents[1]
    addupdate_p.bind(ref, val, *dyn, indexer=indexer)
    if type(tref) is ad.Zero:
        if type(tval) is not ad.Zero:
            raise _differentiated_write_error(get_aval(ref))
    elif type(tval) is not ad.Zero:
        addupdate_p.bind(tref, tval, *dyn, indexer=indexer)
    return [], []


def _addupdate_batch(args: list, dims: list, *, indexer: Indexer) -> tuple[Any, Any]:
    ref, (val,), dyn, d = _ref_batch_args("addupdate", args, dims, 1)
    val, batched = _batched_value("addupdate", ref, d, val, dims[1])
    if batched is not None:
        indexer = _batched_indexer(indexer, ref.shape[0])
    return addupdate_p.bind(ref, val, *dyn, indexer=indexer), []


addupdate_p = standard_primitive(
    "addupdate",
    _addupdate_abstract_eval,
    multiple_results=True,
    effectful=True,
    discharge=_addupdate_discharge,
    jvp=_addupdate_jvp,
    batching=_addupdate_batch,
)
addupdate_p.print_eqn = _print_addupdate


# ---------------------------------------------------------------------------
# freeze


def _freeze_abstract_eval(ref: Any) -> tuple[Any, frozenset]:
    return _check_ref(ref, "freeze").inner_aval, _EFFECTS


def _freeze_discharge(eqn: Any, values: list, is_ref: list) -> tuple[list, list]:
    return [values[0]], [None]


def _freeze_jvp(primals: list, tangents: list) -> tuple[Any, Any]:
    out = freeze_p.bind(primals[0])
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero.from_primal_value(out)
    return out, freeze_p.bind(tangents[0])


def _freeze_batch(args: list, dims: list) -> tuple[Any, Any]:
    return freeze_p.bind(args[0]), dims[0]


freeze_p = standard_primitive(
    "freeze",
    _freeze_abstract_eval,
    effectful=True,
    impl=_freeze_impl,
    discharge=_freeze_discharge,
    jvp=_freeze_jvp,
    batching=_freeze_batch,
)


# ---------------------------------------------------------------------------
# The API


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Any:
    """A new mutable array reference holding ``init_val``.

    Args:
      init_val: the initial contents (an array or scalar).
      memory_space: where the reference lives (only None is supported).
      kind: JAX's kind of reference (only None is supported).

    Returns:
      A `Ref` (a traced reference under a transformation).

    Example:
      >>> r = new_ref(np.zeros(3, np.float32))
      >>> r[1] = 2.0
      >>> r[...]
      Array([0., 2., 0.], dtype=float32)
    """
    if memory_space is not None or kind is not None:
        raise NotImplementedError("new_ref: only memory_space=None and kind=None are supported")
    if is_ref_aval(get_aval(init_val)):
        raise TypeError("`new_ref` expects an array, got a mutable array reference.")
    return new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def empty_ref(ty: Any, memory_space: Any = None) -> Any:
    """A new reference of type ``ty`` (anything with ``shape`` and ``dtype``), zero-filled.

    Example:
      >>> empty_ref(ShapedArray((2,), np.int32))[...]
      Array([0, 0], dtype=int32)
    """
    return new_ref(full(ty.shape, 0, ty.dtype), memory_space=memory_space)


def free_ref(ref: Any) -> None:
    """Marks ``ref`` as no longer used (a no-op: its memory goes with its last use).

    Example:
      >>> free_ref(new_ref(1.0))
    """
    _check_ref(get_aval(ref), "free_ref")


def freeze(ref: Any) -> Any:
    """The contents of ``ref`` as an (immutable) array.

    Example:
      >>> r = new_ref(np.ones(2, np.float32))
      >>> r[...] += 1.0
      >>> freeze(r)
      Array([2., 2.], dtype=float32)
    """
    _check_ref(get_aval(ref), "freeze")
    return freeze_p.bind(ref)


def _bind_indexed(ref: Any, index: Any) -> tuple[Indexer, list[Any]]:
    aval = _check_ref(get_aval(ref), "ref indexing")
    indexer, dyn = _make_indexer(aval.shape, index)
    if type(ref) is Ref and tracing.current_trace() is tracing.eval_trace:
        # Eagerly, integer indices are operands: `r[i]` in a Python loop compiles
        # one executable, not one per `i` (they were bounds-checked above).
        it = iter(dyn)
        dyn = [next(it) if e[0] == "dyn" else np.int32(e[1]) for e in indexer if e[0] != "slice"]
        indexer = tuple(("dyn",) if e[0] == "int" else e for e in indexer)
    return indexer, dyn


def get(ref: Any, idx: Any = None) -> Any:
    """``ref[idx]``: reads part of a reference (the whole when ``idx`` is None).

    Example:
      >>> get(new_ref(np.arange(3.0, dtype=np.float32)), 1)
      Array(1., dtype=float32)
    """
    indexer, dyn = _bind_indexed(ref, idx)
    return get_p.bind(ref, *dyn, indexer=indexer)


def swap(ref: Any, idx: Any, value: Any, _function_name: str = "ref_swap") -> Any:
    """Writes ``value`` at ``ref[idx]`` and returns what was there.

    Raises:
      ValueError: ``value``'s shape is not that of ``ref[idx]``, or its dtype
        not the reference's (values are not broadcast or converted).

    Example:
      >>> r = new_ref(np.zeros(2, np.float32))
      >>> swap(r, 0, np.float32(3.0)), r[...]
      (Array(0., dtype=float32), Array([3., 0.], dtype=float32))
    """
    indexer, dyn = _bind_indexed(ref, idx)
    return swap_p.bind(ref, value, *dyn, indexer=indexer)


def set(ref: Any, idx: Any, value: Any) -> None:  # noqa: A001 (JAX's name)
    """``ref[idx] = value``.

    Example:
      >>> r = new_ref(np.zeros(2, np.float32))
      >>> set(r, ..., np.ones(2, np.float32)); r[...]
      Array([1., 1.], dtype=float32)
    """
    swap(ref, idx, value)


def addupdate(ref: Any, idx: Any, x: Any) -> None:
    """``ref[idx] += x``, as one operation (no read of the old value is staged).

    Example:
      >>> r = new_ref(np.ones(2, np.float32))
      >>> addupdate(r, 1, np.float32(5.0)); r[...]
      Array([1., 6.], dtype=float32)
    """
    indexer, dyn = _bind_indexed(ref, idx)
    addupdate_p.bind(ref, x, *dyn, indexer=indexer)


register_ref_indexing(get, set)
