"""Sharding rules of the lax primitives (explicit mode; docs/explicit-sharding.md).

A rule computes the shardings of a primitive's outputs from its operands' at
trace time: ``rule(out_avals, in_avals, **params) -> spec(s)``, a spec being
one entry per output dimension (a tuple of mesh axes, ``()`` for unsplit).
Rules raise `ShardingTypeError` where no sharding follows without
communication the program did not ask for; the message names the operands'
types and says what to add (``reshard``, ``out_sharding=``).

`define_rules(..., sharding=...)` registers a primitive's rule; a primitive
declared without one gets the one `DEFAULT_RULES` names for it (by primitive
name), so that most primitives need no per-primitive code: a new elementwise
primitive only adds its name to `ELEMENTWISE`.

`REDUCTION_RULES` names the primitives that accept unreduced operands (or make
unreduced results) and their rules (``rule(out_avals, in_avals, **params) ->
[(unreduced, reduced), ...]``, `polyjax_core.aval_sharding.register_reduction_rule`);
every other primitive rejects an unreduced operand and keeps reduced axes its
operands share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from polyjax_core.aval_sharding import (
    ShardingTypeError,
    entries_of,
    reductions,
    requested,
    same_reduced,
    spec_str,
)

__all__ = ["DEFAULT_RULES", "ELEMENTWISE", "REDUCTION_RULES", "default_rule"]

Spec = tuple[tuple, ...]


def _types(avals: Sequence[Any]) -> str:
    return ", ".join(a.str_short(short_dtypes=True) for a in avals)


def _axes_size(aval: Any, entry: tuple) -> int:
    s = aval.aval_sharding
    if s is None or not entry:
        return 1
    sizes = s.mesh.shape
    return math.prod(sizes[a] for a in entry)


# ---------------------------------------------------------------------------
# Elementwise and shape-preserving


def elementwise(outs, avals, **params):
    """Operands of one shape: per dimension, the axes of the operands that split it.

    Rank-0 operands (scalars) take no part. Two operands split one dimension
    differently: `ShardingTypeError`.
    """
    ranked = [a for a in avals if a.shape]
    specs = [entries_of(a) for a in ranked]
    if not specs:
        return [() for _ in outs] if len(outs) > 1 else ()
    out = list(specs[0])
    for spec in specs[1:]:
        if len(spec) != len(out):
            continue
        for i, (e, f) in enumerate(zip(out, spec)):
            if not e:
                out[i] = f
            elif f and e != f:
                name = params.get("_prim_name", "elementwise operation")
                padded = [spec_str(s) for s in specs]
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {', '.join(padded)}."
                )
    out_t = tuple(out)
    return [out_t for _ in outs] if len(outs) > 1 else out_t


def _same(outs, avals, **params):
    """Outputs (all) shaped and split as the first operand."""
    spec = entries_of(avals[0])
    return [spec for _ in outs] if len(outs) > 1 else spec


def _unsharded(outs, avals, **params):
    return [() for _ in outs] if len(outs) > 1 else ()


def _keep(outs, avals, **params):
    """Outputs typed by the primitive itself (a body's jaxpr): left as they are."""
    got = [o.aval_sharding for o in outs]
    return got if len(outs) > 1 else got[0]


def _ref_read(outs, avals, *, indexer, **params):
    """A read of a reference (`get`, `swap`): split as the reference, sliced only."""
    spec = entries_of(avals[0])
    if any(e[0] != "slice" for e in indexer) and any(spec):
        raise TypeError("sharded ref (array reference) can only be indexed by slices, not integers")
    return spec


def _per_operand(outs, avals, **params):
    """Output ``i`` split as operand ``i`` (optimization_barrier, collectives on lists)."""
    got = [entries_of(a) for a in avals[: len(outs)]]
    return got if len(outs) > 1 else got[0]


def _select_n(outs, avals, **params):
    """The sharded cases must be equally sharded (unsharded ones, e.g. a broadcast
    scalar, take part as JAX's broadcast to the cases' sharding does); the
    predicate is a scalar, unsharded, or sharded as the cases."""
    cases = avals[1:]
    sharded = [c for c in cases if c.aval_sharding is not None]
    first = entries_of(sharded[0]) if sharded else entries_of(cases[0])
    for c in sharded[1:]:
        if entries_of(c) != first:
            raise ShardingTypeError(
                f"select cases must have the same shardings, got {[c.sharding for c in cases]}"
            )
    pred = avals[0]
    if pred.shape and pred.aval_sharding is not None and entries_of(pred) != first:
        raise ShardingTypeError(
            "select `which` must be scalar or have the same sharding as cases, got `which` "
            f"sharding {pred.sharding} but case sharding {cases[0].sharding}"
        )
    return first


def _unsplit_dims(prim: str, aval: Any, dims: Sequence[int], why: str) -> None:
    spec = entries_of(aval)
    for d in dims:
        if spec[d]:
            raise ShardingTypeError(
                f"{prim}: {why}. Got input type={aval.str_short()} and axis={d}; "
                "reshard it first (reshard(x, spec))."
            )


def _along_axis(param: str, message: str):
    """Operations along one dimension (scans, sort, split): it must be unsplit."""

    def rule(outs, avals, **params):
        axis = params[param]
        if entries_of(avals[0])[axis]:
            x = avals[0]
            raise ShardingTypeError(
                message.format(type=x.str_short(), sharding=x.sharding, axis=axis)
            )
        return _same(outs, avals)

    return rule


_CUMULATIVE = _along_axis(
    "axis",
    "Input should be unsharded over the axis being reduced. Got input type={type} and axis={axis}",
)


def _last_dims(prim: str, count: int):
    """Batched matrix (or vector) operations: the trailing dimensions must be unsplit."""

    def rule(outs, avals, **params):
        for a in avals:
            if a.shape:
                _unsplit_dims(prim, a, range(max(0, a.ndim - count), a.ndim), "unsplit matrix dims")
        spec = entries_of(avals[0])
        got = []
        for o in outs:
            nb = min(len(o.shape) - min(count, len(o.shape)), avals[0].ndim - count)
            got.append(tuple(spec[:nb]) + ((),) * (len(o.shape) - nb))
        return got if len(outs) > 1 else got[0]

    return rule


def _batched(prim: str, core: int):
    """Operations on batches, the first operand's core its last `core` dimensions: every
    operand's dimensions after the batch must be unsplit, and every output keeps the
    first operand's batch sharding (the vectors among the outputs included)."""

    def rule(outs, avals, **params):
        nb = avals[0].ndim - core
        for a in avals:
            _unsplit_dims(prim, a, range(nb, a.ndim), "unsplit matrix dims")
        batch = tuple(entries_of(avals[0])[:nb])
        got = [batch + ((),) * (len(o.shape) - nb) for o in outs]
        return got if len(outs) > 1 else got[0]

    return rule


def _tile(outs, avals, *, reps, **params):
    """Repeated dimensions must be unsplit; the others keep their sharding."""
    _unsplit_dims("tile", avals[0], [d for d, r in enumerate(reps) if r != 1], "unsplit tiled dims")
    return entries_of(avals[0])


def _stack(outs, avals, *, axis, **params):
    """The new axis is unsplit; the operands must agree on the others."""
    specs = {tuple(entries_of(a)) for a in avals}
    if len(specs) > 1:
        raise ShardingTypeError(f"stack got incompatible shardings: {_types(avals)}")
    spec = list(specs.pop())
    spec.insert(axis, ())
    return tuple(spec)


def _unstack(outs, avals, *, axis, **params):
    _unsplit_dims("unstack", avals[0], [axis], "the unstacked dim must be unsplit")
    spec = [e for d, e in enumerate(entries_of(avals[0])) if d != axis]
    return [tuple(spec)] * len(outs)


def _fft(outs, avals, *, fft_lengths, **params):
    """The transformed (trailing) dimensions must be unsplit; the others keep theirs."""
    x = avals[0]
    n = len(fft_lengths)
    _unsplit_dims("fft", x, range(x.ndim - n, x.ndim), "unsplit transformed dims")
    return entries_of(x)


# ---------------------------------------------------------------------------
# Shape operations


def _broadcast_in_dim(outs, avals, *, shape, broadcast_dimensions, sharding=None, **params):
    if sharding is not None:
        return requested(sharding, len(shape))
    x = avals[0]
    spec = entries_of(x)
    out: list[tuple] = [()] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if x.shape[i] == shape[d]:
            out[d] = spec[i]
    return tuple(out)


def _transpose(outs, avals, *, permutation, **params):
    spec = entries_of(avals[0])
    return tuple(spec[p] for p in permutation)


def _drop_axes(outs, avals, **params):
    axes = params.get("axes", params.get("dimensions", ()))
    spec = entries_of(avals[0])
    kept = tuple(e for i, e in enumerate(spec) if i not in axes)
    return [kept for _ in outs] if len(outs) > 1 else kept


def _size_kept(prim: str):
    """Dimensions whose size is unchanged keep their split; a split one that
    changes (slice, pad, window) is refused."""

    def rule(outs, avals, **params):
        x = avals[0]
        spec = entries_of(x)
        got = []
        for o in outs:
            out = []
            for d, (e, n, m) in enumerate(zip(spec, x.shape, o.shape)):
                if e and n != m:
                    raise ShardingTypeError(
                        f"{prim} changes the size of dimension {d} ({n} -> {m}), which is "
                        f"sharded: got input type={x.str_short()}. Reshard that dimension "
                        "to be unsharded first."
                    )
                out.append(e)
            got.append(tuple(out))
        return got if len(outs) > 1 else got[0]

    return rule


def _concatenate(outs, avals, *, dimension, **params):
    specs = [entries_of(a) for a in avals]
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(
            "All operands should have the same sharding. Got shardings "
            + ", ".join(str(a.sharding) for a in avals)
        )
    return specs[0]


def _reshape(outs, avals, *, new_sizes, dimensions=None, sharding=None, **params):
    if sharding is not None:
        return requested(sharding, len(new_sizes))
    x = avals[0]
    spec = entries_of(x)
    if dimensions is not None and any(spec):
        raise ShardingTypeError(f"reshape with dimensions of a sharded {x.str_short()}")
    old, new = list(x.shape), list(new_sizes)
    out: list[tuple] = [()] * len(new)
    i = j = 0
    while i < len(old) or j < len(new):
        # The smallest groups of old and new dimensions with equal products.
        i0, j0 = i, j
        p_old = old[i] if i < len(old) else 1
        p_new = new[j] if j < len(new) else 1
        i, j = i + 1, j + 1
        while p_old != p_new:
            if p_old < p_new:
                p_old *= old[i]
                i += 1
            else:
                p_new *= new[j]
                j += 1
        group = spec[i0:i]
        if not any(group):
            continue
        # Merged dimensions: the new one is split by their axes, major to minor.
        # A split one: its major new dimension takes the axes if its size divides.
        axes = tuple(a for e in group for a in e)
        if j0 >= len(new):
            raise _reshape_error(x, new)
        major = next((k for k in range(j0, j) if new[k] != 1), j0)
        if new[major] % _axes_size(x, axes):
            raise _reshape_error(x, new)
        out[major] = axes
    return tuple(out)


def _reshape_error(x: Any, new: Sequence[int]) -> ShardingTypeError:
    return ShardingTypeError(
        f"reshape of {x.str_short()} to {tuple(new)} would move its sharded dimensions' data "
        "between devices: pass out_sharding= to reshape, or reshard the operand first."
    )


def _iota(outs, avals, *, shape, sharding=None, **params):
    return () if sharding is None else requested(sharding, len(shape))


def _rng_bit_generator(outs, avals, *, shape, out_sharding=None, **params):
    """The new key is unsplit; the bits are split as ``out_sharding`` asks (else unsplit)."""
    return [(), () if out_sharding is None else requested(out_sharding, len(shape))]


# ---------------------------------------------------------------------------
# Contractions, indexing, convolution


def _dot_general(outs, avals, *, dimension_numbers, **params):
    lhs, rhs = avals
    (lc, rc), (lb, rb) = dimension_numbers
    ls, rs = entries_of(lhs), entries_of(rhs)
    for a, b in zip(lc, rc):
        if ls[a] and ls[a] == rs[b]:
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output should "
                "be sharded. Please specify the output sharding via the `out_sharding` "
                f"parameter. Got lhs_contracting_spec={tuple(e for c in lc for e in ls[c])} "
                f"and rhs_contracting_spec={tuple(e for c in rc for e in rs[c])}"
            )
    batch = []
    for a, b in zip(lb, rb):
        if ls[a] and rs[b] and ls[a] != rs[b]:
            raise ShardingTypeError(
                f"dot_general batch dimensions are sharded differently: {_types(avals)}"
            )
        batch.append(ls[a] or rs[b])
    lfree = [ls[i] for i in range(lhs.ndim) if i not in lc and i not in lb]
    rfree = [rs[i] for i in range(rhs.ndim) if i not in rc and i not in rb]
    out = tuple(batch + lfree + rfree)
    used = [a for e in out for a in e]
    if len(used) != len(set(used)):
        out_type = _typed_str(outs[0], lhs if lhs.aval_sharding else rhs, out)
        raise ShardingTypeError(
            f"dot_general operation with inputs: {_types(avals)} produces an illegally "
            f"sharded result: {out_type}"
        )
    return out


def _typed_str(aval: Any, like: Any, entries: Sequence[tuple]) -> str:
    from polyjax_core.aval_sharding import AvalSharding

    s = like.aval_sharding
    dims = []
    for d, e in zip(aval.shape, entries):
        one = AvalSharding(s.mesh, (tuple(e),))
        dims.append(f"{d}{one.dim_str(0)}")
    from polyjax_core.abstract_values import short_dtype_name

    return f"{short_dtype_name(aval.dtype)}[{','.join(dims)}]"


def _gather(outs, avals, *, dimension_numbers, slice_sizes, **params):
    """Offset dims keep the operand's split (dims taken whole), batch dims the
    indices' (or, for batching dims, the paired operand dim's); indexing into a
    split dimension: JAX's error asking for ``.at[...].get(out_sharding=)``."""
    operand, indices = avals
    ospec, ispec = entries_of(operand), entries_of(indices)
    dn = dimension_numbers
    batching = dict(zip(dn.start_indices_batching_dims, dn.operand_batching_dims))
    indexed = (set(dn.start_index_map) | set(dn.collapsed_slice_dims)) - set(batching.values())
    partial = [d for d in range(operand.ndim) if slice_sizes[d] != operand.shape[d]]
    bad = [d for d in range(operand.ndim) if ospec[d] and (d in indexed or d in partial)]
    if bad and not set(bad) <= set(batching.values()):
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
            "gather indexing as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={operand!r}, indices={indices!r}"
        )
    out: list[tuple] = [()] * len(outs[0].shape)
    kept = [d for d in range(operand.ndim) if d not in dn.collapsed_slice_dims]
    kept = [d for d in kept if d not in dn.operand_batching_dims]
    for od, d in zip(dn.offset_dims, kept):
        out[od] = ospec[d]
    batch_out = [k for k in range(len(out)) if k not in dn.offset_dims]
    for k, i in zip(batch_out, range(indices.ndim - 1)):
        entry = ispec[i]
        paired = ospec[batching[i]] if i in batching else ()
        if entry and paired and entry != paired:
            raise ShardingTypeError(
                f"gather: batching dimensions sharded differently: {_types(avals)}"
            )
        out[k] = entry or paired
    return tuple(out)


def _scatter(outs, avals, *, dimension_numbers, **params):
    operand, indices = avals[0], avals[1]
    spec = entries_of(operand)
    dn = dimension_numbers
    if any(spec[d] for d in dn.scatter_dims_to_operand_dims) or any(entries_of(indices)):
        raise ShardingTypeError(
            "scatter into a dimension that is sharded (or with sharded indices) needs "
            f"communication: got operand={operand!r}, indices={indices!r}; reshard first."
        )
    return spec


def _conv(outs, avals, *, dimension_numbers, **params):
    lhs, rhs = avals
    dn = dimension_numbers
    lspec, rspec = entries_of(lhs), entries_of(rhs)
    lhs_spec, rhs_spec, out_spec = dn.lhs_spec, dn.rhs_spec, dn.out_spec
    if any(lspec[d] for d in lhs_spec[1:]) or any(rspec[d] for d in rhs_spec if d != rhs_spec[0]):
        raise ShardingTypeError(
            "conv_general_dilated supports sharding only along the batch dimension of lhs "
            f"and the output features of rhs: got {_types(avals)}"
        )
    out = [()] * lhs.ndim
    out[out_spec[0]] = lspec[lhs_spec[0]]
    out[out_spec[1]] = rspec[rhs_spec[0]]
    return tuple(out)


def _dynamic_update_slice(outs, avals, **params):
    operand, update = avals[0], avals[1]
    spec = entries_of(operand)
    for d, e in enumerate(spec):
        if e and update.shape[d] != operand.shape[d]:
            raise ShardingTypeError(
                f"dynamic_update_slice updates part of sharded dimension {d}: "
                f"{_types(avals[:2])}; reshard the operand first."
            )
    return spec


# ---------------------------------------------------------------------------
# The table

ELEMENTWISE = frozenset(
    """abs acos acosh add and asin asinh atan atan2 atanh bessel_i0e bessel_i1e cbrt ceil
    clamp clz complex conj convert_element_type cos cosh digamma div eq erf erf_inv erfc exp
    exp2 expm1 floor ge gt igamma igamma_grad_a igammac imag integer_pow is_finite le lgamma
    log log1p logistic lt max min mul ne neg nextafter not or polygamma population_count pow
    random_gamma_grad real reduce_precision regularized_incomplete_beta rem round rsqrt
    shift_left shift_right_arithmetic shift_right_logical sign sin sinh sqrt square sub tan
    tanh xor zeta threefry2x32 bitcast_convert_type copy copy_p add_any mul_add
    stop_gradient pvary mulhi eq_to le_to lt_to""".split()
)

DEFAULT_RULES: dict[str, Any] = {
    **{n: elementwise for n in ELEMENTWISE},
    "select_n": _select_n,
    "broadcast_in_dim": _broadcast_in_dim,
    "transpose": _transpose,
    "reshape": _reshape,
    "squeeze": _drop_axes,
    "reduce_sum": _drop_axes,
    "reduce_max": _drop_axes,
    "reduce_min": _drop_axes,
    "reduce_prod": _drop_axes,
    "reduce_and": _drop_axes,
    "reduce_or": _drop_axes,
    "reduce_xor": _drop_axes,
    "argmax": _drop_axes,
    "argmin": _drop_axes,
    "reduce": _drop_axes,
    "cumsum": _CUMULATIVE,
    "cumprod": _CUMULATIVE,
    "cummax": _CUMULATIVE,
    "cummin": _CUMULATIVE,
    "cumlogsumexp": _CUMULATIVE,
    "sort": _along_axis(
        "dimension",
        "Arguments to sort must be unsharded over the sorting dimension. Got arg "
        "sharding={sharding} and sorting dimension={axis}",
    ),
    "split": _along_axis(
        "axis", "split: the split dimension must be unsharded. Got {type} and axis={axis}"
    ),
    "slice": _size_kept("slice"),
    "pad": _size_kept("pad"),
    "rev": _same,
    "dynamic_slice": _size_kept("dynamic_slice"),
    "dynamic_update_slice": _dynamic_update_slice,
    "reduce_window": _size_kept("reduce_window"),
    "reduce_window_sum": _size_kept("reduce_window_sum"),
    "reduce_window_max": _size_kept("reduce_window_max"),
    "reduce_window_min": _size_kept("reduce_window_min"),
    "select_and_gather_add": _size_kept("select_and_gather_add"),
    "select_and_scatter_add": _size_kept("select_and_scatter_add"),
    "select_and_scatter": _size_kept("select_and_scatter"),
    "concatenate": _concatenate,
    "tile": _tile,
    "stack": _stack,
    "unstack": _unstack,
    "iota": _iota,
    "empty": _unsharded,
    "platform_index": _unsharded,
    "axis_index": _unsharded,
    "rng_bit_generator": _rng_bit_generator,
    "rng_uniform": _unsharded,
    "precv": _unsharded,  # (received from another position: no sharding of its own)
    "stage": _same,
    "dot_general": _dot_general,
    "gather": _gather,
    "scatter": _scatter,
    "scatter-add": _scatter,
    "scatter-sub": _scatter,
    "scatter-mul": _scatter,
    "scatter-min": _scatter,
    "scatter-max": _scatter,
    "conv_general_dilated": _conv,
    "top_k": _last_dims("top_k", 1),
    "approx_top_k": _along_axis(
        "reduction_dimension",
        "approx_top_k: the reduction dimension must be unsharded. Got {type} and axis={axis}",
    ),
    "fft": _fft,
    "cholesky": _last_dims("cholesky", 2),
    "eig": _last_dims("eig", 2),
    "eigh": _last_dims("eigh", 2),
    "lu": _last_dims("lu", 2),
    "qr": _last_dims("qr", 2),
    "svd": _last_dims("svd", 2),
    "schur": _last_dims("schur", 2),
    "hessenberg": _last_dims("hessenberg", 2),
    "geqrf": _last_dims("geqrf", 2),
    "householder_product": _last_dims("householder_product", 2),
    "triangular_solve": _last_dims("triangular_solve", 2),
    "tridiagonal_solve": _last_dims("tridiagonal_solve", 2),
    "tridiagonal": _batched("tridiagonal", 2),
    "ormqr": _batched("ormqr", 2),
    "cholesky_update": _batched("cholesky_update", 2),
    "symmetric_product": _batched("symmetric_product", 2),
    "lu_pivots_to_permutation": _batched("lu_pivots_to_permutation", 1),
    "optimization_barrier": _per_operand,
    "dce_sink": lambda outs, avals, **params: [],  # no outputs
    "sharding_constraint": _same,  # the central rule applies its `sharding` param first
    # Collectives act on manual axes (inside shard_map), never on explicit ones.
    "psum": _per_operand,
    "pmax": _per_operand,
    "pmin": _per_operand,
    "ppermute": _per_operand,
    "all_gather": _unsharded,
    "ragged_all_to_all": lambda outs, avals, **params: entries_of(avals[1]),  # `output`'s
    "all_to_all": _unsharded,
    "reduce_scatter": _unsharded,
    # Higher-order primitives: their outputs are typed by their bodies' jaxprs.
    "cond": _keep,
    "composite": _keep,
    "while": _keep,
    "scan": _keep,
    "custom_linear_solve": _keep,
    # Mutable references hold their contents' type; reads of part of one are unsplit.
    "new_ref": _keep,
    "freeze": _keep,
    "get": _ref_read,
    "swap": _ref_read,
    "addupdate": _unsharded,
}


def default_rule(name: str) -> Any:
    """The rule `DEFAULT_RULES` gives primitive ``name`` (None if none)."""
    rule = DEFAULT_RULES.get(name)
    if rule is elementwise:
        return _named_elementwise(name)
    return rule


def _named_elementwise(name: str):
    def rule(outs, avals, **params):
        return elementwise(outs, avals, _prim_name=name, **params)

    return rule


# ---------------------------------------------------------------------------
# Unreduced and reduced axes (docs/explicit-sharding.md, "Unreduced and reduced")


def _own_reductions(outs, avals, **params):
    """A sharding constraint: the result is unreduced/reduced as the constraint says
    (the one way to reduce an unreduced value, as in JAX)."""
    return [reductions(o) for o in outs]


def _linear_reductions(outs, avals, **params):
    """Linear in its one operand: partial sums stay partial sums."""
    return [reductions(avals[0]) for _ in outs]


def _add_reductions(outs, avals, **params):
    """A sum of partial sums is a partial sum; adding a partial sum to a full value
    would need the reduction first."""
    us = [reductions(a)[0] for a in avals]
    for side, other, u, v in (("lhs", "rhs", us[0], us[-1]), ("rhs", "lhs", us[-1], us[0])):
        if u and u != v:
            raise ShardingTypeError(
                f"{side} is unreduced while {other} is not. `add` operation does not allow "
                "this because there will be implicit communication. Please reduce "
                f"{side} via `reshard` before calling `add`. Got {_types(avals)}"
            )
    return [(us[0], same_reduced("add", avals)) for _ in outs]


def _mul_reductions(outs, avals, **params):
    """Bilinear: a partial sum times a value reduced over the same axes is a
    partial sum; two partial sums cannot be multiplied."""
    lhs, rhs = avals
    (lu, lr), (ru, rr) = reductions(lhs), reductions(rhs)
    if lu and ru:
        raise ShardingTypeError(
            "lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got "
            f"lhs={set(lu)}, rhs={set(ru)}"
        )
    for big, small, u, r, a, b in (
        ("LHS", "RHS", lu, rr, lhs, rhs),
        ("RHS", "LHS", ru, lr, rhs, lhs),
    ):
        if u:
            if not u <= r:
                raise ShardingTypeError(
                    f"{small} should be reduced along the same axes {big} is unreduced on. "
                    f"Got {big.lower()}={a.str_short()} and {small.lower()}={b.str_short()}"
                )
            return [(u, frozenset()) for _ in outs]
    return [(frozenset(), same_reduced("mul", avals)) for _ in outs]


def _dot_general_reductions(outs, avals, *, dimension_numbers, **params):
    """No unreduced operand; an unreduced result (asked for by ``out_sharding``) over
    exactly the axes splitting the contracted dimensions; reduced operands are
    replicated ones (the result is not reduced unless asked)."""
    lhs, rhs = avals
    if reductions(lhs)[0] or reductions(rhs)[0]:
        raise ShardingTypeError(
            f"lhs or rhs passed to dot_general cannot be unreduced. Got lhs={lhs!r} and rhs={rhs!r}"
        )
    u, r = reductions(outs[0])
    if u:
        (lc, rc), _ = dimension_numbers
        for aval, dims in ((lhs, lc), (rhs, rc)):
            spec = entries_of(aval)
            axes = {a for d in dims for a in spec[d]}
            if axes != u:
                got = tuple(_one_entry(spec[d]) for d in dims)
                raise ShardingTypeError(
                    "out_sharding's unreduced axes should be equal to the contracting "
                    f"specs. Got unreduced axes={set(u)} and contracting spec={got}"
                )
    return [(u, r)]


def _one_entry(e: tuple) -> Any:
    return None if not e else e[0] if len(e) == 1 else e


REDUCTION_RULES: dict[str, Any] = {
    "sharding_constraint": _own_reductions,
    "add": _add_reductions,
    "add_any": _add_reductions,
    "mul": _mul_reductions,
    "dot_general": _dot_general_reductions,
    "transpose": _linear_reductions,
    "reduce_sum": _linear_reductions,
    "convert_element_type": _linear_reductions,
    "copy": _linear_reductions,
    "copy_p": _linear_reductions,
}
