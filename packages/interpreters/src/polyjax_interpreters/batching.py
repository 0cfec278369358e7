"""Vectorizing map (`vmap`): the batching interpreter.

`vmap(f)` runs `f` once on *batch tracers*. A `BatchTracer` stands for a whole
batch of per-example values: it holds one array `val` in which the examples
are stacked along `batch_dim` (or `not_mapped`, None, when every example sees
the same value). Code inside `f` sees only the per-example type, so

    x: BatchTracer(val=f32[5, 3], batch_dim=0)   looks like   f32[3]

Each primitive bound on batch tracers is handed to its *batching rule*, which
computes the whole batch at once from the stacked values:

    rule(batched_args, batch_dims, **params) -> (out, out_dim)

e.g. `sin` is applied to the stacked array as it is, and `reduce_sum` over
per-example axis 0 of an input batched at dim 0 sums over axis 1 instead. The
rule runs under the trace that was current when `vmap` started (the
*parent*), so what it binds is evaluated, recorded into an enclosing jaxpr, or
transformed by an enclosing transformation.

Named axes. `vmap(f, axis_name="i")` binds the name `i` (with its size) in
core's axis environment for the extent of the call, so collectives such as
`psum(x, "i")` see it. Primitives whose batching needs to know the mapped
axis (collectives, and higher-order primitives such as `jit` that batch a
sub-jaxpr) register `rule(axis_data, batched_args, batch_dims, **params)` in
`axis_primitive_batchers`; such rules run even when no argument is batched
(`axis_index("i")` has no argument at all).

Array operations. Moving a batch dimension needs `transpose`,
`broadcast_in_dim` and `reshape`, which are lax's primitives; this package may
not import the array library, so polyjax-numpy hands them over with
`register_array_ops`.
"""

from __future__ import annotations

import collections
import functools
import inspect
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from polyjax_core import axis_env, tracing
from polyjax_core import source_info as si
from polyjax_core.abstract_values import AbstractToken, get_aval
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jax_tree_util import trailing_ndims
from polyjax_core.jaxpr import ClosedJaxpr
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.rules import RuleTable
from polyjax_core.tracing import Trace, Tracer, current_trace
from polyjax_core.tree_util import (
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from polyjax_interpreters import discharge

_trace_state = tracing._state  # the thread-local current trace (read on every bind)

__all__ = [
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "axis_primitive_batchers",
    "batch_jaxpr",
    "bdim_at_front",
    "broadcast",
    "defbroadcasting",
    "defvectorized",
    "matchaxis",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
    "register_array_ops",
    "vmap",
]

not_mapped = None
"""The batch dimension of a value that is the same for every example."""


class AxisData(NamedTuple):
    """The axis a `BatchTrace` maps over.

    Attributes:
      name: the axis name given to `vmap` (`axis_name`), or None.
      size: the number of examples (an int or a symbolic dimension).
      spmd_name: `vmap`'s `spmd_axis_name` (a mesh axis name or a tuple of
        them) or None; recorded for sharding rules.
    """

    name: Any
    size: Any
    spmd_name: Any = None


primitive_batchers = RuleTable("batching (vmap)")
"""`rule(batched_args, batch_dims, **params) -> (out, out_dim)` per primitive.

For primitives with `multiple_results`, `out` and `out_dim` are lists. The rule
runs under the parent trace; it is not called when no argument is batched
(then the primitive is bound to the unbatched arguments as it is)."""

axis_primitive_batchers = RuleTable("batching (vmap) with axis data")
"""`rule(axis_data, batched_args, batch_dims, **params) -> (out, out_dim)`.

For primitives that must know the mapped axis: collectives over named axes
and higher-order primitives batching their sub-jaxprs. Consulted before
`primitive_batchers`, and called even when no argument is batched."""


# ---------------------------------------------------------------------------
# Array operations, provided by the array library


class _ArrayOps:
    transpose: Callable[..., Any] | None = None
    broadcast_in_dim: Callable[..., Any] | None = None
    reshape: Callable[..., Any] | None = None
    reduce_sum: Callable[..., Any] | None = None


_ops = _ArrayOps()


def register_array_ops(
    *,
    transpose: Callable[[Any, Sequence[int]], Any] | None = None,
    broadcast_in_dim: Callable[[Any, Sequence[Any], Sequence[int]], Any] | None = None,
    reshape: Callable[[Any, Sequence[Any]], Any] | None = None,
    reduce_sum: Callable[[Any, Sequence[int]], Any] | None = None,
) -> None:
    """Hands batching the array operations it needs to move batch dimensions.

    Called by polyjax-numpy with lax's functions (this package may not import
    it). Each is bound under whatever trace is current, like any lax call.

    Args:
      transpose: `transpose(x, permutation)`.
      broadcast_in_dim: `broadcast_in_dim(x, shape, broadcast_dimensions)`.
      reshape: `reshape(x, new_sizes)`.
      reduce_sum: `reduce_sum(x, axes)` (used by `matchaxis(..., sum_match=True)`).
    """
    for name, fn in (
        ("transpose", transpose),
        ("broadcast_in_dim", broadcast_in_dim),
        ("reshape", reshape),
        ("reduce_sum", reduce_sum),
    ):
        if fn is not None:
            setattr(_ops, name, fn)


def _op(name: str) -> Callable[..., Any]:
    fn = getattr(_ops, name)
    if fn is None:
        raise RuntimeError(
            f"vmap needs the array operation {name!r} to move batch dimensions, and no array "
            "library registered it (import polyjax.numpy, or call "
            "polyjax_interpreters.batching.register_array_ops)"
        )
    return fn


def _shape(x: Any) -> tuple[Any, ...]:
    return get_aval(x).shape


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """`x` with its axis `src` moved to position `dst` (negative axes allowed)."""
    ndim = len(_shape(x))
    src, dst = _canonical_axis(src, ndim), _canonical_axis(dst, ndim)
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return _op("transpose")(x, tuple(perm))


def broadcast(x: Any, size: Any, axis: int | None) -> Any:
    """`x` with a new axis of length `size` inserted at `axis` (None: `x` itself)."""
    if axis is None:
        return x
    shape = _shape(x)
    ndim = len(shape) + 1
    axis = _canonical_axis(axis, ndim)
    out_shape = (*shape[:axis], size, *shape[axis:])
    dims = tuple(i for i in range(ndim) if i != axis)
    return _op("broadcast_in_dim")(x, out_shape, dims)


def bdim_at_front(x: Any, bdim: int | None, size: Any) -> Any:
    """`x` batched at dimension 0: moved there, or broadcast if `bdim` is `not_mapped`."""
    if bdim is not_mapped:
        return broadcast(x, size, 0)
    return moveaxis(x, bdim, 0)


def matchaxis(
    axis_name: Any, sz: Any, src: int | None, dst: int | None, x: Any, sum_match: bool = False
) -> Any:
    """`x`, batched at `src`, rearranged to be batched at `dst`.

    Args:
      axis_name: the mapped axis' name, for the error message.
      sz: the batch size (for broadcasting an unmapped `x`).
      src: the current batch dimension of `x` (or `not_mapped`).
      dst: the wanted batch dimension (or `not_mapped`).
      x: the value.
      sum_match: when `dst` is `not_mapped` and `x` is mapped, sum over the
        batch (used for cotangents) instead of raising.

    Raises:
      ValueError: `x` is mapped and `dst` is `not_mapped` (without `sum_match`).
    """
    if src == dst:
        return x
    if src is not_mapped:
        return broadcast(x, sz, dst)
    if dst is not_mapped:
        if sum_match:
            return _op("reduce_sum")(x, (src,))
        raise ValueError(f"vmap has mapped output ({axis_name=}) but out_axes is {dst}")
    return moveaxis(x, src, dst)


# ---------------------------------------------------------------------------
# The trace


class BatchTracer(Tracer):
    """A batch of per-example values, stacked in `val` along `batch_dim`.

    Attributes:
      val: the stacked value (an array or a tracer of the parent trace).
      batch_dim: the dimension of `val` holding the examples (non-negative).
    """

    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace: BatchTrace, val: Any, batch_dim: int | None):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval: Any = None  # computed on first use

    @property
    def aval(self) -> Any:
        aval = self._aval
        if aval is None:
            aval = get_aval(self.val)
            d = self.batch_dim
            if d is not not_mapped:
                shape = aval.shape
                typed = getattr(aval, "aval_sharding", None)
                if typed is None:
                    aval = aval.update(shape=shape[:d] + shape[d + 1 :])
                else:  # explicit mode: the other dimensions keep their split
                    e = typed.entries
                    kept = typed.with_entries(e[:d] + e[d + 1 :])
                    aval = aval.update(shape=shape[:d] + shape[d + 1 :], sharding=kept)
            self._aval = aval
        return aval

    def _source_info(self) -> Any:
        val = self.val
        return val._source_info() if isinstance(val, Tracer) else None

    def __repr__(self) -> str:
        # JAX's form: the per-example type, then the type of the stacked value.
        return f"VmapTracer(aval={self.aval}, batched={get_aval(self.val)})"


class BatchTrace(Trace):
    """Applies batching rules to primitives bound on its `BatchTracer`s.

    Attributes:
      axis_data: the mapped axis (`AxisData`).
    """

    def __init__(self, parent: Trace | None, axis_data: AxisData):
        super().__init__(parent)
        self.axis_data = axis_data

    def __repr__(self) -> str:
        name = self.axis_data.name
        return f"BatchTrace(axis_size={self.axis_data.size}" + (
            f", axis_name={name!r})" if name is not None else ")"
        )

    def to_batch_info(self, x: Any) -> tuple[Any, int | None]:
        """`(stacked value, batch dim)` of an argument: unmapped unless it is ours."""
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer):
            self.check_foreign_tracer(x)
        return x, not_mapped

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        if primitive.has_body and discharge.body_has_state(primitive, params):
            return discharge.bind_discharged(primitive, args, params)
        vals, dims = [], []
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.batch_dim)
            else:
                if isinstance(x, Tracer):
                    self.check_foreign_tracer(x)
                vals.append(x)
                dims.append(not_mapped)
        axis_rule = axis_primitive_batchers.get(primitive)
        # The rule runs under the parent trace (switched inline: this is the hot path).
        state = _trace_state
        saved, state.trace = state.trace, self.parent
        try:
            if axis_rule is not None:
                out, out_dim = axis_rule(self.axis_data, vals, dims, **params)
            elif all(d is not_mapped for d in dims):
                return primitive.bind(*vals, **params)
            else:
                out, out_dim = primitive_batchers[primitive](vals, dims, **params)
        finally:
            state.trace = saved
        if primitive.multiple_results:
            return [self._wrap(v, d) for v, d in zip(out, out_dim)]
        return self._wrap(out, out_dim)

    def _wrap(self, val: Any, dim: int | None) -> Any:
        return val if dim is not_mapped else BatchTracer(self, val, dim)


# ---------------------------------------------------------------------------
# Rule helpers


def defvectorized(prim: Any) -> None:
    """Registers the rule of a unary elementwise primitive: apply it to the stack."""

    def rule(batched_args: Sequence[Any], batch_dims: Sequence[Any], **params: Any):
        (x,), (d,) = batched_args, batch_dims
        return prim.bind(x, **params), d

    primitive_batchers[prim] = rule


def defbroadcasting(prim: Any) -> None:
    """Registers the rule of an n-ary elementwise primitive with lax's shape rule.

    lax's n-ary operations take operands of one rank, or of rank 0, whose
    dimensions agree or are 1. When every batched operand is batched at the
    same dimension with the same rank, that dimension is kept (an unbatched
    operand of full rank gets a size-1 dimension there, which broadcasts
    against the batch); otherwise every batch dimension moves to the front,
    and a batched operand whose examples are scalars next to higher-rank
    operands becomes `(size, 1, ..., 1)`.
    """

    def rule(batched_args: Sequence[Any], batch_dims: Sequence[Any], **params: Any):
        args, out_dim = _broadcast_args(batched_args, batch_dims)
        return prim.bind(*args, **params), out_dim

    primitive_batchers[prim] = rule


def _broadcast_args(args: Sequence[Any], dims: Sequence[Any]) -> tuple[list[Any], int]:
    """Operands of an n-ary elementwise op, rearranged as `defbroadcasting` says."""
    shapes = [_shape(x) for x in args]
    mapped = {(d, len(s)) for s, d in zip(shapes, dims) if d is not not_mapped}
    if len(mapped) == 1:
        ((d0, ndim),) = mapped
        rank = ndim - 1  # of the examples
        if all(d is not not_mapped or len(s) in (0, rank) for s, d in zip(shapes, dims)):
            out = list(args)
            if rank:
                reshape = _op("reshape")
                for i, (s, d) in enumerate(zip(shapes, dims)):
                    if d is not_mapped and s:
                        out[i] = reshape(out[i], (*s[:d0], 1, *s[d0:]))
            return out, d0
    rank = max(len(s) - (d is not not_mapped) for s, d in zip(shapes, dims))
    out = []
    for x, s, d in zip(args, shapes, dims):
        if d is not_mapped:
            if s:  # full rank: a leading 1 broadcasts against the batch
                x = _op("reshape")(x, (1, *s))
        else:
            x = moveaxis(x, d, 0)
            if len(s) == 1 and rank > 0:  # scalar examples next to arrays
                x = _op("reshape")(x, (s[d], *([1] * rank)))
        out.append(x)
    return out, 0


# ---------------------------------------------------------------------------
# Batching a jaxpr, for higher-order primitives


def batch_jaxpr(
    closed: ClosedJaxpr,
    axis_data: AxisData,
    in_dims: Sequence[int | None],
    out_dims_or_instantiate: bool | Sequence[bool] | Sequence[int | None],
) -> tuple[ClosedJaxpr, list[int | None]]:
    """The batched version of a jaxpr, for batching rules of higher-order primitives.

    Args:
      closed: the jaxpr of the per-example computation.
      axis_data: the mapped axis.
      in_dims: the batch dimension of each input of the new jaxpr
        (`not_mapped`: the input keeps its per-example type).
      out_dims_or_instantiate: either booleans (one, or one per output):
        batched outputs come out batched at 0, and an unbatched output is
        broadcast to a batch at 0 when its boolean is True; or one int or
        `not_mapped` per output: the batch dimension each output must have
        (`not_mapped` requires the output to be unbatched).

    Returns:
      `(batched jaxpr, out_dims)`: its inputs have the batched types, and
      `out_dims` says where each output is batched.
    """
    spec = out_dims_or_instantiate
    if isinstance(spec, bool):
        spec = (spec,) * len(closed.out_avals)
    spec = tuple(spec)
    if len(spec) != len(closed.out_avals):
        raise ValueError(
            f"batch_jaxpr: {len(spec)} output specs for {len(closed.out_avals)} outputs"
        )
    env_frames = tuple(axis_env._env.frames)
    return _batch_jaxpr(closed, axis_data, tuple(in_dims), spec, env_frames)


@weakref_lru_cache(maxsize=4096)
def _batch_jaxpr(
    closed: ClosedJaxpr,
    axis_data: AxisData,
    in_dims: tuple[int | None, ...],
    spec: tuple[Any, ...],
    env_frames: tuple,
) -> tuple[ClosedJaxpr, list[int | None]]:
    size = axis_data.size
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims):
        if d is not_mapped:
            in_avals.append(aval)
        else:
            shape = aval.shape
            typed = getattr(aval, "aval_sharding", None)
            if typed is None:
                in_avals.append(aval.update(shape=(*shape[:d], size, *shape[d:])))
            else:  # explicit mode: the batched dimension is unsplit
                e = typed.entries
                grown = typed.with_entries((*e[:d], (), *e[d:]))
                in_avals.append(aval.update(shape=(*shape[:d], size, *shape[d:]), sharding=grown))
    out_dims: list[int | None] = []

    def fun(*args: Any) -> list[Any]:
        with BatchTrace(current_trace(), axis_data) as trace:
            tracers = [trace._wrap(x, d) for x, d in zip(args, in_dims)]
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
            outs = [trace.to_batch_info(x) for x in outs]
        result = []
        for (x, d), want in zip(outs, spec):
            if isinstance(want, bool):
                want = 0 if (want or d is not not_mapped) else not_mapped
            result.append(matchaxis(axis_data.name, size, d, want, x))
            out_dims.append(want)
        return result

    name = axis_data.name
    with axis_env.extend_axis_env([(name, size)] if name is not None else ()):
        batched = trace_to_jaxpr(fun, in_avals, closed.jaxpr.debug_info)
    return batched, out_dims


# ---------------------------------------------------------------------------
# vmap


_AXES_TYPE_MSG = (
    "vmap {what} must be an int, None, or (nested) container with those types as leaves, "
    "but got {axes}."
)


def _is_axis_leaf(x: Any) -> bool:
    return x is None


def _check_axes(axes: Any, what: str) -> None:
    leaves = tree_flatten(axes, is_leaf=_is_axis_leaf)[0]
    for leaf in leaves:
        if leaf is not None and (isinstance(leaf, bool) or not isinstance(leaf, int)):
            try:
                operator.index(leaf)
            except TypeError:
                raise TypeError(_AXES_TYPE_MSG.format(what=what, axes=axes)) from None
            if isinstance(leaf, bool):
                raise TypeError(_AXES_TYPE_MSG.format(what=what, axes=axes))


def _flatten_axes(what: str, treedef: Any, axes: Any) -> list[int | None]:
    """One axis per leaf of `treedef`, from `axes`, a tree prefix of it."""
    proxy = tree_unflatten(treedef, list(range(treedef.num_leaves)))
    axes_leaves, axes_tree = tree_flatten(axes, is_leaf=_is_axis_leaf)
    try:
        subtrees = axes_tree.flatten_up_to(proxy)
    except ValueError as e:
        raise ValueError(
            f"{what} specification must be a tree prefix of the corresponding value, got "
            f"specification {axes} for value tree {treedef}."
        ) from e
    flat: list[int | None] = [None] * treedef.num_leaves
    for axis, sub in zip(axes_leaves, subtrees):
        axis = None if axis is None else operator.index(axis)
        for i in tree_flatten(sub)[0]:
            flat[i] = axis
    return flat


def _from_array_ends(axes: list[int | None], treedef: Any) -> list[int | None]:
    """``axes`` with negative ones counted from the end of the arrays the leaves stand
    for: a key array's data has trailing axes of its own (`jax_tree_util.trailing_ndims`)."""
    if not any(a is not None and a < 0 for a in axes):
        return axes
    trailing = trailing_ndims(treedef)
    return [a - t if a is not None and a < 0 else a for a, t in zip(axes, trailing)]


def _type_str(x: Any) -> str:
    try:
        return get_aval(x).str_short(short_dtypes=False)
    except Exception:
        return "unknown"


def _safe_shape(x: Any) -> tuple[Any, ...]:
    try:
        return tuple(_shape(x))
    except Exception:
        if hasattr(x, "__jax_array__"):
            raise  # JAX's error for the protocol, not a guessed shape

        try:
            import numpy as np

            return tuple(np.shape(x))
        except Exception:
            return ()


def _arg_descriptions(fun: Callable[..., Any], args: tuple, kwargs: dict) -> list[str]:
    """`argument x['a'] of type float32[3]` for each leaf of `(args, kwargs)`."""
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None
    out = []
    for path, leaf in tree_flatten_with_path((args, kwargs))[0]:
        which, key, rest = path[0].idx, path[1], path[2:]
        if which == 0:
            i = key.idx
            if params is not None and i < len(params):
                p = inspect.signature(fun).parameters[params[i]]
                if p.kind is inspect.Parameter.VAR_POSITIONAL:
                    name = f"argument {params[i]}[{i - params.index(params[i])}]"
                else:
                    name = f"argument {params[i]}"
            else:
                name = f"args[{i}]"
        else:
            name = f"argument {key.key}" if params is not None else f"kwargs[{key.key!r}]"
        out.append(f"{name}{keystr(rest)} of type {_type_str(leaf)}")
    return out


def _mapped_axis_size(
    fun: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    flat: Sequence[Any],
    dims: Sequence[int | None],
    axis_size: Any,
) -> Any:
    """The batch size, from the mapped arguments (and `axis_size`), with JAX's errors."""
    sizes: list[Any] = []
    for x, d in zip(flat, dims):
        if d is None:
            sizes.append(None)
            continue
        shape = _safe_shape(x)
        if not -len(shape) <= d < len(shape):
            min_rank = d + 1 if d >= 0 else -d
            raise ValueError(
                f"vmap was requested to map its argument along axis {d}, which implies that "
                f"its rank should be at least {min_rank}, but is only {len(shape)} (its shape "
                f"is {shape})"
            )
        sizes.append(shape[d])
    distinct = list(dict.fromkeys(s for s in sizes if s is not None))
    if axis_size is not None:
        if all(s == axis_size for s in distinct):
            return axis_size
    elif len(distinct) == 1:
        return distinct[0]
    elif not distinct:
        if not flat:
            raise ValueError(
                "vmap wrapped function must be passed at least one argument containing an "
                f"array, got empty *args={args} and **kwargs={kwargs}"
            )
        raise ValueError("vmap must have at least one non-None value in in_axes")
    # Inconsistent sizes: describe each group of sizes, the commonest first.
    descriptions = _arg_descriptions(fun, args, kwargs)
    counts = collections.Counter(s for s in sizes if s is not None)
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the axis_size argument is {axis_size};")
    ordered = counts.most_common()
    for rank, (size, count) in enumerate(ordered):
        first = sizes.index(size)
        where = f"axis {dims[first]} of {descriptions[first]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {where};")
        else:
            kind = "most" if rank == 0 and axis_size is None else "some"
            lines.append(f"  * {kind} axes ({count} of them) had size {size}, e.g. {where};")
    msg = "\n".join(lines)
    raise ValueError(msg[:-1])


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
) -> Callable[..., Any]:
    """Vectorizing map: `fun` mapped over an axis of its inputs, as one batched computation.

    Args:
      fun: the function to map. Its arguments and results are pytrees of arrays.
      in_axes: the axis of each positional argument to map over: an int, None
        (not mapped), or a pytree prefix of the positional-argument tuple
        with ints/None leaves. Negative axes count from the end. A list at the
        top level is taken as a tuple. Keyword arguments are mapped over axis 0.
      out_axes: where the mapped axis goes in each output: an int, None (the
        output must not depend on the mapped axis), or a pytree prefix of the
        output. Negative axes count from the end of the output.
      axis_name: a hashable name binding the mapped axis for collectives
        (`psum(x, axis_name)`...).
      axis_size: the size of the mapped axis; required when no input is mapped.
      spmd_axis_name: mesh axis name(s) that the mapped axis is partitioned
        over (recorded in `AxisData.spmd_name`).

    Returns:
      The batched function, taking the same arguments as `fun`.

    Raises:
      ValueError: inconsistent sizes of the mapped axes, an axis out of range
        of its argument's rank, axes that are not a tree prefix, no mapped
        input and no `axis_size`.
      TypeError: `in_axes`/`out_axes` leaves that are not ints or None.

    Example:
      >>> import polyjax.numpy as jnp
      >>> vmap(lambda x, y: x * y, in_axes=(0, None))(jnp.ones((5, 3)), jnp.ones(3)).shape
      (5, 3)
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")

    # `updated=()`: copying `fun.__dict__` would hand e.g. a jitted function's state to ours.
    @functools.wraps(fun, updated=())
    @si.api_boundary
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        flat, in_tree = tree_flatten((args, kwargs))
        dims = _from_array_ends(_flatten_axes("vmap in_axes", in_tree, (in_axes, 0)), in_tree)
        size = _mapped_axis_size(fun, args, kwargs, flat, dims, axis_size)
        dims = [
            None if d is None else _canonical_axis(d, len(_safe_shape(x)))
            for x, d in zip(flat, dims)
        ]
        axis_data = AxisData(axis_name, size, spmd_axis_name)
        out_flat, out_tree, out_dims = _batch_call(fun, in_tree, flat, dims, axis_data)
        out_axes_flat = _flatten_axes("vmap out_axes", out_tree, out_axes)
        out_axes_flat = _from_array_ends(out_axes_flat, out_tree)
        outs = []
        for x, d, want in zip(out_flat, out_dims, out_axes_flat):
            if want is not None and type(get_aval(x)) is AbstractToken:
                raise TypeError(
                    "vmap: a token cannot be an output mapped over the batch axis (tokens "
                    "are never batched); give it out_axes None"
                )
            if want is not None:
                rank = len(_shape(x)) + (d is None)
                if not -rank <= want < rank:
                    raise ValueError(
                        f"vmap out_axes specification {want} is out of bounds for an output "
                        f"of rank {rank - 1} (with the mapped axis, {rank})"
                    )
                want %= rank
            outs.append(matchaxis(axis_name, size, d, want, x))
        return tree_unflatten(out_tree, outs)

    return vmap_f


def _batch_call(
    fun: Callable[..., Any],
    in_tree: Any,
    flat: Sequence[Any],
    dims: Sequence[int | None],
    axis_data: AxisData,
) -> tuple[list[Any], Any, list[int | None]]:
    """Runs `fun` on batch tracers; returns the flat stacked outputs and their dims."""
    name = axis_data.name
    with axis_env.extend_axis_env([(name, axis_data.size)] if name is not None else ()):
        with BatchTrace(current_trace(), axis_data) as trace:
            args, kwargs = tree_unflatten(in_tree, [trace._wrap(x, d) for x, d in zip(flat, dims)])
            out = fun(*args, **kwargs)
            out_flat, out_tree = tree_flatten(out)
            infos = [trace.to_batch_info(x) for x in out_flat]
    return [v for v, _ in infos], out_tree, [d for _, d in infos]
