"""`shard_map`: a function written for one device's block, run on every device.

``shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(a)`` splits `a`
into blocks along the mesh axis ``"x"`` (as `PartitionSpec` says), calls `f`
on each device with its own block, and assembles the results as `out_specs`
says. Inside `f` the mesh axes are *manual*: named axes that collectives
(`psum`, `all_gather`, `ppermute`, ...) communicate over.

With `check_vma=True` (the default) `f` is traced with typed arguments: each
varies over the manual axes its `in_specs` entry names (`ShapedArray.vma`),
and `_vma.check_outputs` reads the outputs' types against `out_specs`.

`shard_map` traces `f` once, for the block shapes, and binds the `shard_map`
primitive (`shard_map_p`) with the traced jaxpr (an initial-style primitive).
Every rule of that primitive is declared in this module, together:

  abstract eval   the global shapes: each output block times its spec's axes.
  lowering        `sdy.manual_computation` (Shardy), or GSPMD's manual
                  sharding (`SPMDFullToShardShape`/`SPMDShardToFullShape`)
                  when `jax_use_shardy_partitioner` is off. The body is
                  lowered with an `SPMDAxisContext` on the module context, from
                  which the collectives compute their replica groups.
  impl            an SPMD executable of the single equation over the mesh.
  jvp             a shard_map of the body's jvp (tangents split like primals).
  transpose       a shard_map of the body's transpose. With `check_vma` the
                  body is typed (each value's `vma`, see `polyjax_core.vma`):
                  `pvary` transposes to `psum` and `psum` to the identity, as
                  in JAX. Without it every value may differ between devices:
                  the cotangent of an output that its spec says is the same
                  across some axes is shared among those devices (divided by
                  their number), `psum` transposes to `psum`, and the
                  cotangent of an input replicated across axes is summed
                  over them. Both give the same derivatives of the shard_map.
  partial eval    known and unknown shard_maps; residuals leave the known one
                  split over every manual axis (each device keeps its own).
  DCE             drops unused outputs and what the body no longer needs.
  batching        a shard_map of the batched body; the batch dimension is
                  replicated, or split over `vmap`'s `spmd_axis_name`.

Sub-jaxpr visitors (DCE, printing, `jit`'s search for shardings) find the
body in the ``jaxpr`` param. A hidden ``devices`` param (a replicated
`NamedSharding` over the mesh) tells `jit` which devices run the program.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from polyjax_core import axis_env, config
from polyjax_core import vma as core_vma
from polyjax_core.abstract_values import (
    ShapedArray,
    get_aval,
    note_axis_order,
    shaped_abstractify,
)
from polyjax_core.aval_sharding import AvalSharding
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jaxpr import ClosedJaxpr, JaxprEqn, Var
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.mesh import AxisType
from polyjax_core.mesh_context import get_concrete_mesh, use_abstract_mesh
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from polyjax_core.wrapped_fun import debug_info
from polyjax_interpreters import ad, batching, dispatch, mlir
from polyjax_interpreters import partial_eval as pe
from polyjax_interpreters.axis_context import SPMDAxisContext, transposing_manual
from polyjax_numpy.lax import div, psum, reshape
from polyjax_sharding import _vma
from polyjax_sharding._mesh import Mesh
from polyjax_sharding._named_sharding import NamedSharding

__all__ = ["shard_map", "shard_map_p"]

P = PartitionSpec


# ---------------------------------------------------------------------------
# Specs, block shapes, the axis environment


def _entry_axes(entry: Any) -> tuple[Any, ...]:
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _spec_axes(spec: PartitionSpec) -> list[Any]:
    return [a for entry in spec for a in _entry_axes(entry)]


def _block_factors(spec: PartitionSpec, ndim: int, mesh: Mesh) -> list[int]:
    factors = [1] * ndim
    for d, entry in enumerate(spec):
        for a in _entry_axes(entry):
            factors[d] *= mesh.shape[a]
    return factors


def _local_aval(
    aval: ShapedArray, spec: PartitionSpec, mesh: Mesh, manual: frozenset
) -> ShapedArray:
    f = _block_factors(spec, len(aval.shape), mesh)
    # Inside the body the mesh axes are manual: a block's type carries no explicit
    # sharding, only the unreduced/reduced manual axes its spec names.
    typed = None
    if spec.unreduced or spec.reduced:
        body_mesh = mesh.abstract_mesh.update_axis_types(dict.fromkeys(manual, AxisType.Manual))
        typed = AvalSharding.make(body_mesh, (), len(aval.shape), spec.unreduced, spec.reduced)
    return aval.update(shape=tuple(s // k for s, k in zip(aval.shape, f)), sharding=typed)


def _global_aval(aval: ShapedArray, spec: PartitionSpec, mesh: Mesh) -> ShapedArray:
    f = _block_factors(spec, len(aval.shape), mesh)
    # Outside the body a value is one global array: no manual axes to vary over; over
    # Explicit axes its type is sharded as `out_specs` says (docs/explicit-sharding.md).
    shape = tuple(s * k for s, k in zip(aval.shape, f))
    typed = AvalSharding.make(mesh, spec, len(shape))
    return aval.update(shape=shape, vma=frozenset(), sharding=typed)


def _unmentioned(spec: PartitionSpec, mesh: Mesh, manual: frozenset) -> tuple[Any, ...]:
    """The manual axes ``spec`` does not split over (mesh order)."""
    named = set(_spec_axes(spec))
    return tuple(a for a in mesh.axis_names if a in manual and a not in named)


def _all_manual(mesh: Mesh, manual: frozenset) -> tuple[Any, ...]:
    return tuple(a for a in mesh.axis_names if a in manual)


@contextmanager
def _manual_env(mesh: Mesh, manual: frozenset, check_vma: bool = False) -> Iterator[None]:
    """Binds the manual axes (for the collectives' shape rules) while a body is processed.

    With ``check_vma`` the values' types also record which manual axes they vary
    over (`polyjax_core.vma`), printed in the mesh's axis order.
    """
    checked = frozenset(_all_manual(mesh, manual)) if check_vma else frozenset()
    note_axis_order(mesh.axis_names)
    inner = mesh.abstract_mesh.update_axis_types(dict.fromkeys(manual, AxisType.Manual))
    with (
        axis_env.extend_axis_env([(a, mesh.shape[a]) for a in _all_manual(mesh, manual)]),
        core_vma.checking_axes(checked),
        _body_mesh(inner),
    ):
        yield


@contextmanager
def _body_mesh(inner: Any) -> Iterator[None]:
    """Inside the body, `get_abstract_mesh` reports the manual axes as Manual (as JAX)."""
    with use_abstract_mesh(inner):
        yield


def _varying_aval(aval: ShapedArray, spec: PartitionSpec, manual: frozenset) -> ShapedArray:
    """The type of a body argument under `check_vma`: varying over its spec's manual axes."""
    return aval.update(vma=frozenset(_spec_axes(spec)) & manual)


# ---------------------------------------------------------------------------
# The primitive

shard_map_p = Primitive("shard_map")
shard_map_p.multiple_results = True
_SHOWN = ("check_vma", "in_specs", "jaxpr", "manual_axes", "mesh", "out_specs")
shard_map_p.print_params = lambda params: {k: params[k] for k in _SHOWN if k in params}


def _bind(args: Sequence[Any], closed: ClosedJaxpr, in_specs: tuple, **params: Any) -> list[Any]:
    """Binds shard_map; the body's consts become leading replicated arguments."""
    if closed.consts:
        args = [*closed.consts, *args]
        in_specs = (P(),) * len(closed.consts) + tuple(in_specs)
        closed = ClosedJaxpr(pe.convert_constvars_jaxpr(closed.jaxpr), [])
    mesh = params["mesh"]
    return shard_map_p.bind(
        *args, jaxpr=closed, in_specs=tuple(in_specs), devices=NamedSharding(mesh, P()), **params
    )


@shard_map_p.def_effectful_abstract_eval
def _abstract_eval(
    *avals: Any, jaxpr: ClosedJaxpr, mesh: Mesh, out_specs: tuple, **_: Any
) -> tuple[list, frozenset]:
    outs = [_global_aval(a, s, mesh) for a, s in zip(jaxpr.out_avals, out_specs)]
    return outs, jaxpr.effects


# -- impl: one SPMD executable of the equation


@weakref_lru_cache(maxsize=1024)
def _single_eqn(jaxpr: ClosedJaxpr, in_avals: tuple, params: tuple) -> ClosedJaxpr:
    kw = dict(params)
    return trace_to_jaxpr(lambda *a: shard_map_p.bind(*a, jaxpr=jaxpr, **kw), list(in_avals))


@weakref_lru_cache(maxsize=1024)
def _executable(closed: ClosedJaxpr, placement: Any, shardy: bool) -> Any:
    lowered = dispatch.lower_jaxpr(
        closed,
        name="shard_map",
        device=placement.devices[0],
        out_committed=True,
        placement=placement,
    )
    return dispatch.compile_lowered(lowered)


@shard_map_p.def_impl
def _impl(*args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    mesh, out_specs = params["mesh"], params["out_specs"]
    in_avals = tuple(shaped_abstractify(x) for x in args)
    closed = _single_eqn(jaxpr, in_avals, tuple(sorted(params.items())))
    out_avals = closed.out_avals
    outs = [NamedSharding(mesh, s) for s in out_specs]
    placement = dispatch.spmd_placement(
        args,
        None,
        "shard_map",
        None,
        outs,
        [len(a.shape) for a in out_avals],
        (params["devices"],),
    )
    if placement is None:  # a mesh of one device
        placement = dispatch.Placement(
            tuple(mesh._flat_devices_tuple),
            tuple(NamedSharding(mesh, P()) for _ in args),
            tuple(outs),
            True,
        )
    return _executable(closed, placement, config.use_shardy_partitioner.value).call(args)


# -- lowering


def _axis_context(mctx: Any, mesh: Mesh, manual: frozenset) -> SPMDAxisContext:
    position = {d.id: i for i, d in enumerate(mctx.device_assignment)}
    flat = mesh._flat_devices_tuple
    if not position:  # a single-device module: a mesh of one device
        return SPMDAxisContext(tuple(mesh.axis_names), tuple(mesh.axis_sizes), (0,), manual)
    missing = [d.id for d in flat if d.id not in position]
    if missing or len(position) != len(flat):
        raise ValueError(
            f"shard_map over the mesh {mesh} (device ids {[d.id for d in flat]}) is part of a "
            "computation that runs on device ids "
            f"{[d.id for d in mctx.device_assignment]}: they must be the same devices"
        )
    logical = tuple(position[d.id] for d in flat)
    return SPMDAxisContext(tuple(mesh.axis_names), tuple(mesh.axis_sizes), logical, manual)


def _lower_body(ctx: Any, jaxpr: ClosedJaxpr, axis_ctx: SPMDAxisContext, args: list) -> list:
    mctx = ctx.module_context
    saved = mctx.axis_context
    mctx.axis_context = axis_ctx
    try:
        with mlir.isolated_token(mctx, jaxpr):
            return mlir.jaxpr_subcomp(mctx, jaxpr.jaxpr, jaxpr.consts, args, ctx.dim_var_values)
    finally:
        mctx.axis_context = saved


def _sdy_dims(spec: PartitionSpec, ndim: int, manual: frozenset, partial: bool) -> str:
    entries = list(spec) + [None] * (ndim - len(spec))
    dims = []
    for entry in entries:
        axes = [f'"{a}"' for a in _entry_axes(entry) if a in manual]
        if partial:
            axes.append("?")
        dims.append("{" + ", ".join(axes) + "}")
    return "[" + ", ".join(dims) + "]"


def _sdy_unreduced(spec: PartitionSpec, mesh: Mesh) -> str:
    """Shardy's ``, unreduced={...}`` for a spec's unreduced axes (the blocks are
    partial sums over them: docs/explicit-sharding.md)."""
    if not spec.unreduced:
        return ""
    names = [a for a in mesh.axis_names if a in spec.unreduced]
    return ", unreduced={" + ", ".join(f'"{a}"' for a in names) + "}"


def _lowering(
    ctx: Any,
    *args: Any,
    jaxpr: ClosedJaxpr,
    mesh: Mesh,
    in_specs: tuple,
    out_specs: tuple,
    manual_axes: frozenset,
    **_: Any,
) -> list[Any]:
    mctx = ctx.module_context
    if not mctx.device_assignment and mesh.size > 1:
        raise ValueError(
            f"shard_map over the {mesh.size} devices of {mesh} is part of a computation placed "
            "on a single device (e.g. by jit's device= or backend=)"
        )
    axis_ctx = _axis_context(mctx, mesh, manual_axes)
    outer = mctx.axis_context
    if isinstance(outer, SPMDAxisContext):
        # Nested in another shard_map: its manual axes stay manual in here.
        if outer.axis_names != axis_ctx.axis_names or outer.logical_ids != axis_ctx.logical_ids:
            raise ValueError(
                f"a shard_map over {mesh} is nested in a shard_map over another mesh (axes "
                f"{outer.axis_names}); nested shard_maps must use the same mesh"
            )
        axis_ctx = dataclasses.replace(axis_ctx, manual_axes=outer.manual_axes | manual_axes)
    if not mctx.device_assignment or mesh.size == 1:
        return _lower_body(ctx, jaxpr, axis_ctx, list(args))
    if mctx.shardy:
        return _lower_shardy(ctx, args, jaxpr, mesh, in_specs, out_specs, manual_axes, axis_ctx)
    if any(s.unreduced for s in (*in_specs, *out_specs)):
        raise NotImplementedError(
            "shard_map with unreduced in_specs/out_specs needs the Shardy partitioner "
            "(jax_use_shardy_partitioner); GSPMD has no unreduced shardings"
        )
    return _lower_gspmd(ctx, args, jaxpr, mesh, in_specs, out_specs, manual_axes, axis_ctx)


def _lower_shardy(ctx, args, jaxpr, mesh, in_specs, out_specs, manual, axis_ctx) -> list:
    mctx = ctx.module_context
    sym = mctx.mesh_symbol([(a, mesh.shape[a]) for a in mesh.axis_names], axis_ctx.logical_ids)
    partial = len(manual) < len(mesh.axis_names)

    def per_value(specs: Sequence[Any], avals: Sequence[Any]) -> ir.Attribute:
        items = [
            f"<@{sym}, {_sdy_dims(s, len(a.shape), manual, partial)}{_sdy_unreduced(s, mesh)}>"
            for s, a in zip(specs, avals)
        ]
        return ir.Attribute.parse("#sdy.sharding_per_value<[" + ", ".join(items) + "]>")

    manual_attr = ir.Attribute.parse(
        "#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in _all_manual(mesh, manual)) + "}>"
    )
    op = sdy.ManualComputationOp(
        [mlir.aval_to_ir_type(a) for a in ctx.avals_out],
        list(args),
        per_value(in_specs, ctx.avals_in),
        per_value(out_specs, ctx.avals_out),
        manual_attr,
    )
    block = op.regions[0].blocks.append(*[mlir.aval_to_ir_type(a) for a in jaxpr.in_avals])
    with ir.InsertionPoint(block):
        outs = _lower_body(ctx, jaxpr, axis_ctx, list(block.arguments))
        sdy.ReturnOp(outs)
    return list(op.results)


def _lower_gspmd(ctx, args, jaxpr, mesh, in_specs, out_specs, manual, axis_ctx) -> list:
    if len(manual) < len(mesh.axis_names):
        raise NotImplementedError(
            "shard_map with some mesh axes left automatic (axis_names) needs the Shardy "
            "partitioner (jax_use_shardy_partitioner=True)"
        )
    mctx = ctx.module_context
    manual_str = ir.StringAttr.get("{manual}")

    def hlo_str(spec: Any, ndim: int) -> ir.Attribute:
        hs = mlir.hlo_sharding_in(NamedSharding(mesh, spec), ndim, mctx.device_assignment)
        return ir.StringAttr.get(str(hs))

    def call(target: str, x: Any, aval: Any, sharding: ir.Attribute) -> Any:
        attrs = {"mhlo.sharding": sharding, "backend_config": ir.StringAttr.get("")}
        return mlir.hlo_custom_call(target, [x], [mlir.aval_to_ir_type(aval)], attrs)

    local = []
    for x, spec, g, lo in zip(args, in_specs, ctx.avals_in, jaxpr.in_avals):
        x = call("Sharding", x, g, hlo_str(spec, len(g.shape)))
        local.append(call("SPMDFullToShardShape", x, lo, manual_str))
    outs = _lower_body(ctx, jaxpr, axis_ctx, local)
    results = []
    for y, spec, g, lo in zip(outs, out_specs, ctx.avals_out, jaxpr.out_avals):
        y = call("Sharding", y, lo, manual_str)
        results.append(call("SPMDShardToFullShape", y, g, hlo_str(spec, len(g.shape))))
    return results


mlir.register_lowering(shard_map_p, _lowering)


# -- jvp


def _jvp(primals: list, tangents: list, *, jaxpr: ClosedJaxpr, **params: Any) -> tuple:
    mesh, manual = params["mesh"], params["manual_axes"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    with _manual_env(mesh, manual, params["check_vma"]):
        body, out_nz = ad.jvp_jaxpr(jaxpr, nonzeros, False)
    nz_t = [t for t in tangents if type(t) is not ad.Zero]
    in_specs = params["in_specs"]
    out_specs = params["out_specs"]
    new = dict(
        params,
        in_specs=(*in_specs, *(s for s, nz in zip(in_specs, nonzeros) if nz)),
        out_specs=(*out_specs, *(s for s, nz in zip(out_specs, out_nz) if nz)),
        jaxpr=body,
    )
    outs = shard_map_p.bind(*primals, *nz_t, **new)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    avals = _abstract_eval(jaxpr=jaxpr, **params)[0]
    t_out = [next(it) if nz else ad.Zero(ad.tangent_aval(a)) for a, nz in zip(avals, out_nz)]
    return outs[:n], t_out


ad.primitive_jvps[shard_map_p] = _jvp


# -- transpose


def _transpose(cts: list, *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list:
    mesh, manual = params["mesh"], params["manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    linear = [ad.is_undefined_primal(x) for x in args]
    known = [x for x, lin in zip(args, linear) if not lin]
    ct_nz = [type(ct) is not ad.Zero for ct in cts]
    nz_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    known_specs = [s for s, lin in zip(in_specs, linear) if not lin]
    # A cotangent is reduced where its primal is unreduced and vice versa.
    ct_specs = [_swapped(s) for s, nz in zip(out_specs, ct_nz) if nz]
    lin_specs = [s for s, lin in zip(in_specs, linear) if lin]
    in_nz: list[bool] = []
    # Typed (check_vma): the body's `pvary`s and `psum`s transpose to JAX's sums, so
    # the cotangents need no sharing out nor summing at the boundary beyond what
    # their types still vary over. Untyped: every value may differ per device.
    typed = params["check_vma"]

    def body(*flat: Any) -> list[Any]:
        k_it, c_it = iter(flat[: len(known)]), iter(flat[len(known) :])
        primals = [
            ad.UndefinedPrimal(a) if lin else next(k_it) for a, lin in zip(jaxpr.in_avals, linear)
        ]
        cts_out = []
        for a, s, nz in zip(jaxpr.out_avals, out_specs, ct_nz):
            if not nz:
                cts_out.append(ad.Zero(ad.tangent_aval(a)))
                continue
            ct = next(c_it)
            shared = math.prod(mesh.shape[n] for n in _unmentioned(s, mesh, manual))
            if typed or shared == 1:
                cts_out.append(ct)
            else:
                cts_out.append(div(ct, _scalar_like(shared, ct)))
        with transposing_manual(manual):
            cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, primals, cts_out)
        outs = []
        for ct, s in zip((c for c, lin in zip(cts_in, linear) if lin), lin_specs):
            in_nz.append(type(ct) is not ad.Zero)
            if type(ct) is ad.Zero:
                continue
            rest = _unmentioned(s, mesh, manual)
            if typed:
                vma = getattr(get_aval(ct), "vma", frozenset())
                rest = tuple(a for a in rest if a in vma)
            ct = psum(ct, rest) if rest else ct
            outs.append(core_vma.cast_to(ct, frozenset(_spec_axes(s)) & manual) if typed else ct)
        return outs

    in_avals = [
        *(_local_aval(get_aval(x), s, mesh, manual) for x, s in zip(known, known_specs)),
        *(_local_aval(get_aval(c), s, mesh, manual) for c, s in zip(nz_cts, ct_specs)),
    ]
    if typed:
        # Each input keeps the type it has in the body: a residual's spec may split
        # it over more axes than its value varies over.
        known_body = [a for a, lin in zip(jaxpr.in_avals, linear) if not lin]
        ct_body = [a for a, nz in zip(jaxpr.out_avals, ct_nz) if nz]
        in_avals = [
            a.update(vma=getattr(b, "vma", frozenset()))
            for a, b in zip(in_avals, (*known_body, *ct_body))
        ]
    with _manual_env(mesh, manual, typed):
        t_closed = trace_to_jaxpr(body, in_avals, jaxpr.jaxpr.debug_info)
    t_out_specs = tuple(_swapped(s) for s, nz in zip(lin_specs, in_nz) if nz)
    outs = iter(
        _bind(
            [*known, *nz_cts],
            t_closed,
            (*known_specs, *ct_specs),
            **dict(_rest(params), out_specs=t_out_specs),
        )
    )
    nz_it = iter(in_nz)
    return [
        (next(outs) if next(nz_it) else ad.Zero(ad.tangent_aval(x.aval))) if lin else None
        for x, lin in zip(args, linear)
    ]


def _lead(lead: Any, spec: PartitionSpec) -> PartitionSpec:
    """``spec`` with a leading (batch) entry; its unreduced/reduced axes kept."""
    return spec.update(partitions=(lead, *spec))


def _swapped(spec: PartitionSpec) -> PartitionSpec:
    """``spec`` with its unreduced and reduced axes exchanged (a cotangent's spec)."""
    if not (spec.unreduced or spec.reduced):
        return spec
    return spec.update(unreduced=spec.reduced, reduced=spec.unreduced)


def _scalar_like(k: int, ct: Any) -> Any:
    return np.asarray(k, get_aval(ct).dtype)


def _rest(params: dict) -> dict:
    """Params other than the body, its specs and the devices (which `_bind` fills in)."""
    return {k: v for k, v in params.items() if k not in ("jaxpr", "in_specs", "devices")}


ad.primitive_transposes[shard_map_p] = _transpose


# -- partial evaluation and DCE


def _partial_eval(
    unknowns: list[bool], instantiate: list[bool], eqn: JaxprEqn
) -> tuple[Any, Any, list[bool], list[Var]]:
    params = eqn.params
    mesh, manual = params["mesh"], params["manual_axes"]
    in_specs, out_specs = params["in_specs"], params["out_specs"]
    with _manual_env(mesh, manual, params["check_vma"]):
        known, unknown, out_unks, res_avals = pe.partial_eval_jaxpr_nounits(
            params["jaxpr"], unknowns, instantiate
        )
        # Each device keeps its own residuals: split over every manual axis, on a
        # leading dimension (scalars get one).
        known, unknown = _lift_scalar_residuals(known, unknown, len(res_avals))
    everything = P(_all_manual(mesh, manual))
    res_local = known.out_avals[len(known.out_avals) - len(res_avals) :]
    residuals = [Var(_global_aval(a, everything, mesh)) for a in res_local]
    known_outs = [s for s, u in zip(out_specs, out_unks) if not u]
    known_eqn = None
    if known.jaxpr.outvars or known.effects:
        known_eqn = eqn.replace(
            invars=[x for x, u in zip(eqn.invars, unknowns) if not u],
            outvars=[*(v for v, u in zip(eqn.outvars, out_unks) if not u), *residuals],
            params=dict(
                params,
                jaxpr=known,
                in_specs=tuple(s for s, u in zip(in_specs, unknowns) if not u),
                out_specs=(*known_outs, *(everything,) * len(residuals)),
            ),
            effects=known.effects,
        )
    unknown_eqn = eqn.replace(
        invars=[*residuals, *(x for x, u in zip(eqn.invars, unknowns) if u)],
        outvars=[v for v, u in zip(eqn.outvars, out_unks) if u],
        params=dict(
            params,
            jaxpr=unknown,
            in_specs=(
                *(everything,) * len(residuals),
                *(s for s, u in zip(in_specs, unknowns) if u),
            ),
            out_specs=tuple(s for s, u in zip(out_specs, out_unks) if u),
        ),
        effects=unknown.effects,
    )
    return known_eqn, unknown_eqn, out_unks, residuals


def _lift_scalar_residuals(
    known: ClosedJaxpr, unknown: ClosedJaxpr, n_res: int
) -> tuple[ClosedJaxpr, ClosedJaxpr]:
    res_avals = known.out_avals[len(known.out_avals) - n_res :]
    scalars = [len(a.shape) == 0 for a in res_avals]
    if not any(scalars):
        return known, unknown
    n_known_out = len(known.out_avals) - n_res

    def known_fun(*args: Any) -> list[Any]:
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        res = [reshape(r, (1,)) if s else r for r, s in zip(outs[n_known_out:], scalars)]
        return [*outs[:n_known_out], *res]

    def unknown_fun(*args: Any) -> list[Any]:
        res = [reshape(r, ()) if s else r for r, s in zip(args[:n_res], scalars)]
        return eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *args[n_res:])

    lifted = [a.update(shape=(1,)) if s else a for a, s in zip(res_avals, scalars)]
    new_known = trace_to_jaxpr(known_fun, known.in_avals, known.jaxpr.debug_info)
    new_unknown = trace_to_jaxpr(
        unknown_fun, [*lifted, *unknown.in_avals[n_res:]], unknown.jaxpr.debug_info
    )
    return new_known, new_unknown


pe.partial_eval_jaxpr_custom_rules[shard_map_p] = _partial_eval


def _dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], Any]:
    params = eqn.params
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    body, used_inputs = pe.dce_closed_jaxpr(params["jaxpr"], used_outputs)
    if body is params["jaxpr"] and all(used_outputs):
        return used_inputs, eqn
    new_eqn = eqn.replace(
        invars=[x for x, u in zip(eqn.invars, used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(
            params,
            jaxpr=body,
            in_specs=tuple(s for s, u in zip(params["in_specs"], used_inputs) if u),
            out_specs=tuple(s for s, u in zip(params["out_specs"], used_outputs) if u),
        ),
        effects=body.effects,
    )
    return used_inputs, new_eqn


pe.dce_rules[shard_map_p] = _dce


# -- batching


def _batcher(
    axis_data: Any, args: list, dims: list, *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list, list]:
    mesh, manual = params["mesh"], params["manual_axes"]
    if all(d is batching.not_mapped for d in dims) and axis_data.name is None:
        return shard_map_p.bind(*args, jaxpr=jaxpr, **params), [batching.not_mapped] * len(
            jaxpr.out_avals
        )
    spmd = axis_data.spmd_name
    spmd = None if spmd is None else (tuple(spmd) if isinstance(spmd, tuple | list) else (spmd,))
    lead = None
    if spmd is not None:
        for a in spmd:
            if a not in mesh.shape:
                raise ValueError(
                    f"spmd_axis_name {a!r} is not an axis of the shard_map mesh "
                    f"{tuple(mesh.axis_names)}"
                )
        lead = spmd if len(spmd) > 1 else spmd[0]
    split = math.prod(mesh.shape[a] for a in spmd) if spmd else 1
    if axis_data.size % split:
        raise ValueError(
            f"vmap of shard_map: the batch size {axis_data.size} is not divisible by the size "
            f"{split} of spmd_axis_name {spmd}"
        )
    moved = [
        x if d is batching.not_mapped else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)
    ]
    in_dims = [batching.not_mapped if d is batching.not_mapped else 0 for d in dims]
    local = axis_data._replace(size=axis_data.size // split, spmd_name=None)
    with _manual_env(mesh, manual, params["check_vma"]):
        body, out_dims = batching.batch_jaxpr(jaxpr, local, in_dims, True)
    in_specs = tuple(
        s if d is batching.not_mapped else _lead(lead, s) for s, d in zip(params["in_specs"], dims)
    )
    out_specs = tuple(_lead(lead, s) for s in params["out_specs"])
    outs = shard_map_p.bind(
        *moved, jaxpr=body, **dict(params, in_specs=in_specs, out_specs=out_specs)
    )
    return outs, [0] * len(outs)


batching.axis_primitive_batchers[shard_map_p] = _batcher


# ---------------------------------------------------------------------------
# The API


class _Infer:
    def __repr__(self) -> str:
        return "<infer from arguments>"


_INFER = _Infer()


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _broadcast_specs(prefix: Any, tree: Any, what: str) -> list[PartitionSpec]:
    """One spec per leaf of ``tree`` from a pytree prefix of specs (None: replicated)."""
    if _is_spec_leaf(prefix):
        return [prefix if prefix is not None else P()] * len(tree_flatten(tree)[0])
    specs, spec_tree = tree_flatten(prefix, is_leaf=_is_spec_leaf)
    if isinstance(prefix, list) and isinstance(tree, tuple):
        spec_tree = tree_flatten(tuple(prefix), is_leaf=_is_spec_leaf)[1]
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"shard_map {what} must be a PartitionSpec or a pytree prefix of the "
            f"{'arguments' if what == 'in_specs' else 'outputs'}; got {prefix!r}, whose "
            f"structure does not match {tree_flatten(tree)[1]}: {e}"
        ) from None
    out: list[PartitionSpec] = []
    for s, sub in zip(specs, subtrees):
        out += [s if s is not None else P()] * len(tree_flatten(sub)[0])
    return out


def _check_spec(spec: Any, mesh: Mesh, manual: frozenset, what: str) -> None:
    if not isinstance(spec, PartitionSpec):
        raise TypeError(f"shard_map {what} entries must be PartitionSpecs, got {spec!r}")
    seen: set = set()
    for a in _spec_axes(spec):
        if a not in mesh.shape:
            raise ValueError(
                f"shard_map {what} {spec} refers to {a!r}, which is not an axis of the mesh "
                f"{tuple(mesh.axis_names)}"
            )
        if a not in manual:
            raise ValueError(
                f"shard_map {what} {spec} refers to {a!r}, which is not one of the manual "
                f"axes {sorted(map(str, manual))} (axis_names)"
            )
        if a in seen:
            raise ValueError(f"shard_map {what} {spec} uses the mesh axis {a!r} twice")
        seen.add(a)


def _resolve_mesh(mesh: Any) -> Mesh:
    if mesh is None:
        mesh = get_concrete_mesh()
        if mesh is None or getattr(mesh, "empty", True):
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a "
                "mesh context, or pass `mesh=` to shard_map"
            )
    if not isinstance(mesh, Mesh):
        raise TypeError(
            f"shard_map requires mesh to be a Mesh (or the mesh in context), got {type(mesh)}"
        )
    return mesh


def _fun_name(f: Callable[..., Any]) -> str:
    return getattr(f, "__name__", type(f).__name__)


def shard_map(
    f: Callable[..., Any] | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = _INFER,
    mesh: Any = None,
    axis_names: Any = frozenset(),
    check_vma: bool = True,
) -> Any:
    """Maps a function over the blocks of its arguments, one block per device.

    Args:
      f: the per-device function. Inside it each argument has its block's
        shape, and the manual mesh axes are named axes for collectives
        (`psum`, `all_gather`, `ppermute`, ...). May be omitted to use
        `shard_map(...)` as a decorator factory.
      out_specs: a `PartitionSpec` (or a pytree prefix of them) for the
        outputs: how the per-device blocks are assembled. An axis a spec
        omits says that the value is the same on every device along it.
      in_specs: a `PartitionSpec` (or a pytree prefix) per argument: which
        mesh axes split each dimension. Omitted: each argument's own
        `NamedSharding` spec, or replicated.
      mesh: a `Mesh`; by default the one in context (`set_mesh`, `with mesh:`).
      axis_names: the mesh axes the function is written per device over
        (default: all); the others are left to the partitioner.
      check_vma: check that an output does not vary over an axis its
        `out_specs` omits (a `ValueError` at trace time).

    Returns:
      The mapped function, taking and returning global arrays.

    Raises:
      ValueError: a spec names an axis not in the mesh, an argument's
        dimension is not divisible by its axes' sizes, or an output may vary
        over an axis its spec omits (with ``check_vma``).

    Example:
      >>> import numpy as np
      >>> from polyjax_core import PartitionSpec as P
      >>> from polyjax_numpy.lax import psum
      >>> from polyjax_sharding import AxisType, make_mesh
      >>> mesh = make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
      >>> f = shard_map(lambda a: psum(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
      >>> f(np.arange(4.0)).shape   # each device's block, summed over the devices
      (4,)
    """
    if f is None:
        return functools.partial(
            shard_map,
            out_specs=out_specs,
            in_specs=in_specs,
            mesh=mesh,
            axis_names=axis_names,
            check_vma=check_vma,
        )
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")

    @functools.wraps(f)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(
                f"shard_map-wrapped function {_fun_name(f)!r} got keyword arguments "
                f"{sorted(kwargs)}; pass its arguments positionally"
            )
        m = _resolve_mesh(mesh)
        manual = frozenset(axis_names) if axis_names else frozenset(m.axis_names)
        for a in manual:
            if a not in m.shape:
                raise ValueError(f"shard_map axis_names {a!r} is not an axis of the mesh {m}")
        return _call(f, m, manual, in_specs, out_specs, bool(check_vma), args, cache)

    cache: dict[Any, Any] = {}
    return mapped


def _inferred_spec(x: Any) -> PartitionSpec:
    spec = getattr(getattr(x, "sharding", None), "spec", None)
    return spec if isinstance(spec, PartitionSpec) else P()


def _call(
    f: Callable[..., Any],
    mesh: Mesh,
    manual: frozenset,
    in_specs: Any,
    out_specs: Any,
    check_vma: bool,
    args: tuple,
    cache: dict | None = None,
) -> Any:
    leaves, in_tree = tree_flatten(args)
    if in_specs is _INFER:
        specs = [_inferred_spec(x) for x in leaves]
    else:
        specs = _broadcast_specs(in_specs, args, "in_specs")
    avals = [shaped_abstractify(x) for x in leaves]
    paths = [keystr(p) for p, _ in tree_flatten_with_path(args)[0]]
    for spec, aval, path in zip(specs, avals, paths):
        _check_spec(spec, mesh, manual, "in_specs")
        _check_divisible(f, spec, aval, mesh, path)
        _check_explicit_type(spec, aval, mesh, manual)
    # Calls outside any transformation reuse their trace (and so the executable).
    key = None
    if cache is not None and not any(isinstance(x, Tracer) for x in leaves):
        key = (in_tree, tuple(avals), tuple(specs), mesh, manual, config.trace_context())
        hit = cache.get(key)
        if hit is not None:
            closed, out_tree, o_specs = hit
            return tree_unflatten(
                out_tree, _bind_call(leaves, closed, specs, mesh, o_specs, manual, check_vma)
            )
    local = [_local_aval(a, s, mesh, manual) for a, s in zip(avals, specs)]
    if check_vma:
        local = [_varying_aval(a, s, manual) for a, s in zip(local, specs)]
    out_box: list[Any] = []

    def flat_fun(*flat: Any) -> list[Any]:
        out = f(*tree_unflatten(in_tree, flat))
        out_flat, out_tree = tree_flatten(out)
        out_box.append((out, out_tree))
        if check_vma:
            # As in JAX, an output is cast to vary over every axis its spec splits it
            # over: the transpose of that cast sums the cotangents of a value that was
            # the same on those devices. Axes beyond the spec are left for the check.
            if hasattr(out_specs, "resolve"):
                specs = list(out_specs.resolve())
            else:
                specs = _broadcast_specs(out_specs, out, "out_specs")
            out_flat = [
                core_vma.cast_to(x, frozenset(_spec_axes(sp)) & manual)
                for x, sp in zip(out_flat, specs)
            ]
        return out_flat

    debug = debug_info("shard_map", f, args, {})
    with _manual_env(mesh, manual, check_vma):
        closed = trace_to_jaxpr(flat_fun, local, debug)
    out_value, out_tree = out_box[0]
    if hasattr(out_specs, "resolve"):  # specs that depend on the traced outputs (pmap)
        o_specs = list(out_specs.resolve())
    else:
        o_specs = _broadcast_specs(out_specs, out_value, "out_specs")
    for spec, aval in zip(o_specs, closed.out_avals):
        _check_spec(spec, mesh, manual, "out_specs")
        if len(spec) > len(aval.shape):
            raise ValueError(
                f"shard_map out_specs {spec} has {len(spec)} entries but the output "
                f"{aval.str_short()} has rank {len(aval.shape)}"
            )
    for spec, aval in zip(o_specs, closed.out_avals):
        _check_out_reductions(spec, aval, f)
    if check_vma:
        _vma.check_outputs(closed.out_avals, o_specs, mesh, manual, _fun_name(f))
    if key is not None and not any(isinstance(c, Tracer) for c in closed.consts):
        if len(cache) >= 64:
            cache.pop(next(iter(cache)))
        cache[key] = (closed, out_tree, o_specs)
    return tree_unflatten(
        out_tree, _bind_call(leaves, closed, specs, mesh, o_specs, manual, check_vma)
    )


def _bind_call(leaves, closed, specs, mesh, o_specs, manual, check_vma) -> list[Any]:
    return _bind(
        leaves,
        closed,
        tuple(specs),
        mesh=mesh,
        out_specs=tuple(o_specs),
        manual_axes=manual,
        check_vma=check_vma,
    )


def _check_explicit_type(spec: PartitionSpec, aval: Any, mesh: Mesh, manual: frozenset) -> None:
    """Over a mesh of ``Explicit`` axes only, all made manual, an operand's type must
    say what its ``in_specs`` entry says (as JAX 0.10.2 checks; an unsharded or
    NumPy operand is ``P(None, ...)``); shard_map does not reshard it.

    Raises:
      ValueError: they differ (JAX's message).
    """
    if set(manual) != set(mesh.axis_names) or any(
        t is not AxisType.Explicit for t in mesh.axis_types
    ):
        return
    ndim = len(aval.shape)
    typed = getattr(aval, "aval_sharding", None)
    have = P(*(None,) * ndim) if typed is None else typed.spec._normalized_spec_for_aval(ndim)
    want = spec._normalized_spec_for_aval(ndim)
    if _normalized(want) != _normalized(have):
        raise ValueError(
            f"in_specs passed to shard_map: {want} does not match the specs of the input: "
            f"{have} for arg: {aval}. `in_specs` is an optional argument so you can omit "
            "specifying it and shard_map will infer the in_specs from the arguments. If you "
            "want to reshard your inputs, you can use `reshard` on the arguments and then "
            "pass those args to shard_map."
        )


def _normalized(spec: PartitionSpec) -> tuple:
    return (tuple(_entry_axes(e) for e in spec), spec.unreduced, spec.reduced)


def _check_out_reductions(spec: PartitionSpec, aval: Any, f: Any) -> None:
    """A body output's unreduced/reduced axes are those of its ``out_specs`` entry
    (an output unreduced over axes its spec does not say would be taken as whole).

    Raises:
      ValueError: they differ.
    """
    typed = getattr(aval, "aval_sharding", None)
    u, r = (typed.unreduced, typed.reduced) if typed is not None else (frozenset(), frozenset())
    # (an output varying over a spec's unreduced axes is its partial sums, as in JAX)
    if u != (spec.unreduced - aval.vma) or r != spec.reduced:
        raise ValueError(
            f"shard_map applied to the function {_fun_name(f)!r}: out_specs {spec} does not "
            f"match the unreduced/reduced axes of the output {aval}; use "
            "`pcast(x, axes, to='unreduced'/'reduced')` in the body or change out_specs"
        )


def _check_divisible(f: Any, spec: PartitionSpec, aval: Any, mesh: Mesh, path: str) -> None:
    if len(spec) > len(aval.shape):
        raise ValueError(
            f"shard_map applied to the function '{_fun_name(f)}' was given an in_specs entry "
            f"{spec} of length {len(spec)} for the argument args{path} of rank "
            f"{len(aval.shape)} ({aval.str_short()})"
        )
    for d, k in enumerate(_block_factors(spec, len(aval.shape), mesh)):
        if aval.shape[d] % k:
            raise ValueError(
                f"shard_map applied to the function '{_fun_name(f)}' was given argument arrays "
                "with axis sizes that are not evenly divisible by the corresponding mesh axis "
                f"sizes: args{path} of shape {aval.str_short()} has dimension {d} of size "
                f"{aval.shape[d]}, split by {spec[d]!r} into {k} blocks"
            )
