"""`jit`: trace a function once per input signature, compile it with XLA, reuse it.

A call of a jitted function goes through three layers, fastest first:

1. **The call cache** of the jitted function (one per `jit(f)` object): its key
   is everything that decides which executable runs — the argument pytree
   structure, static arguments, each flat argument's aval (shape, dtype, weak
   type), placement and commitment, and the thread's config context. A hit
   runs the executable directly; this is the per-call overhead that
   `tools/bench` measures.
2. **The trace cache** (module-wide): a function, its static arguments and the
   input avals give a `ClosedJaxpr`. It holds the function weakly, so a second
   `jit(f)` of the same `f` reuses the trace, and dropping `f` drops it.
3. **The compile cache** (module-wide): a jaxpr (held weakly) plus placement,
   donation and pruning options give an `Executable`.

Under a transformation (`make_jaxpr`, an outer `jit`, later `grad`/`vmap`) a
jitted function does not run: it binds the `jit` primitive, whose params carry
the traced jaxpr (ARCHITECTURE decision 2: higher-order primitives are
initial-style). The `jit` primitive's impl is what runs a `jit` equation met in
an evaluated jaxpr, and its lowering emits a call to a private function.
"""

from __future__ import annotations

import functools
import inspect
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

from polyjax_core import config, tracing
from polyjax_core import source_info as si
from polyjax_core import symbolic_dims as sd
from polyjax_core.abstract_values import AbstractToken, ShapeDtypeStruct, shaped_abstractify
from polyjax_core.caching import weakref_lru_cache
from polyjax_core.jaxpr import CalleeJaxpr, ClosedJaxpr, Var
from polyjax_core.jaxpr_eval import jaxpr_as_fun
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.lists import partition_list
from polyjax_core.mesh_context import get_concrete_mesh, spec_to_sharding
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_core.state import Ref
from polyjax_core.tree_util import PyTreeDef, prefix_subtrees, tree_flatten, tree_unflatten
from polyjax_core.wrapped_fun import DebugInfo, WrappedFun, debug_info, wrap_init
from polyjax_interpreters import (
    _cpp_jit,
    _debug_nans,
    _guards,
    ad,
    batching,
    discharge,
    dispatch,
    mlir,
)
from polyjax_interpreters import partial_eval as pe
from polyjax_interpreters.array import Array
from polyjax_interpreters.dispatch import Executable, arg_signature
from polyjax_interpreters.sharding import Sharding
from polyjax_interpreters.stages import Traced, TracedCall

__all__ = ["JitWrapped", "clear_jit_caches", "eval_shape", "jit", "jit_p"]

logger = logging.getLogger("polyjax")


# ---------------------------------------------------------------------------
# The jit primitive

jit_p = Primitive("jit")
jit_p.multiple_results = True
# JAX prints only the name and the jaxpr of a jit equation.
jit_p.print_params = lambda params: {"name": params["name"], "jaxpr": CalleeJaxpr(params["jaxpr"])}


@jit_p.def_effectful_abstract_eval
def _jit_abstract_eval(*avals: Any, jaxpr: ClosedJaxpr, **_: Any) -> tuple[list, frozenset]:
    return list(jaxpr.out_avals), jaxpr.effects


@jit_p.def_impl
def _jit_impl(
    *args: Any,
    jaxpr: ClosedJaxpr,
    name: str,
    donated_invars: tuple[bool, ...],
    keep_unused: bool,
    device: Any,
    backend: str | None,
    inline: bool,
    in_shardings: tuple[Any, ...] = (),
    out_shardings: tuple[Any, ...] = (),
) -> list[Array]:
    placement = None
    if device is None:
        placement = dispatch.spmd_placement(
            args,
            None,
            name,
            in_shardings or None,
            out_shardings if any(s is not None for s in out_shardings) else None,
            _ranks(jaxpr.out_avals),
            body_shardings(jaxpr),
        )
    if placement is None:
        dev, committed = dispatch.arg_placement(args, None, name, device, backend)
    else:
        dev, committed = placement.devices[0], True
    exe = _compile(jaxpr, name, dev, committed, donated_invars, keep_unused, placement)
    return exe.call(args)


def _jit_lowering(
    ctx: Any,
    *args: Any,
    jaxpr: ClosedJaxpr,
    name: str,
    inline: bool,
    in_shardings: tuple[Any, ...] = (),
    out_shardings: tuple[Any, ...] = (),
    **_: Any,
):
    # Inside a program over several devices, an inner jit's shardings constrain
    # its inputs and outputs there.
    spmd = bool(ctx.module_context.device_assignment)
    if spmd and in_shardings:
        args = tuple(
            a if s is None else mlir.sharding_constraint(ctx, a, s, aval)
            for a, s, aval in zip(args, in_shardings, ctx.avals_in)
        )
    # The body's ops are named after the call site's scopes and this function.
    with mlir.extend_name_stack(ctx, f"jit({name})"):
        if inline:
            outs = mlir.jaxpr_subcomp(
                ctx.module_context, jaxpr.jaxpr, jaxpr.consts, args, ctx.dim_var_values
            )
        else:
            outs = mlir.call_jaxpr(ctx, name, jaxpr, args)
    if spmd and out_shardings:
        outs = [
            o if s is None else mlir.sharding_constraint(ctx, o, s, aval)
            for o, s, aval in zip(outs, out_shardings, ctx.avals_out)
        ]
    return outs


mlir.register_lowering(jit_p, _jit_lowering)


def _jit_discharge_params(params: dict, n_written: int) -> dict:
    # The body's written references come back as extra (unconstrained) outputs.
    if params.get("out_shardings"):
        params["out_shardings"] = tuple(params["out_shardings"]) + (None,) * n_written
    return params


discharge.discharge_rules[jit_p] = discharge.call_rule(jit_p, _jit_discharge_params)
jit_p.has_body = True


def _jit_partial_eval(
    unknowns: list[bool], instantiate: list[bool], eqn: Any
) -> tuple[Any, Any, list[bool], list[Var]]:
    """Splits a jit equation into a known jit and an unknown jit, residuals in between."""
    params = eqn.params
    known_body, unknown_body, out_unks, res_avals = pe.partial_eval_jaxpr_nounits(
        params["jaxpr"], unknowns, instantiate
    )
    residuals = [Var(a) for a in res_avals]
    donated = params["donated_invars"]
    known_eqn = None
    if known_body.jaxpr.outvars or known_body.effects:
        known_eqn = eqn.replace(
            invars=partition_list(unknowns, eqn.invars)[0],
            outvars=[*(v for v, u in zip(eqn.outvars, out_unks) if not u), *residuals],
            params=dict(
                params,
                jaxpr=known_body,
                donated_invars=tuple(d for d, u in zip(donated, unknowns) if not u),
                **_sharding_params(
                    params,
                    [not u for u in unknowns],
                    [not u for u in out_unks],
                    extra_out=len(residuals),
                ),
            ),
            effects=known_body.effects,
        )
    unknown_eqn = eqn.replace(
        invars=[*residuals, *(x for x, u in zip(eqn.invars, unknowns) if u)],
        outvars=partition_list(out_unks, eqn.outvars)[1],
        params=dict(
            params,
            jaxpr=unknown_body,
            donated_invars=(False,) * len(residuals)
            + tuple(d for d, u in zip(donated, unknowns) if u),
            **_sharding_params(params, list(unknowns), list(out_unks), extra_in=len(residuals)),
        ),
        effects=unknown_body.effects,
    )
    return known_eqn, unknown_eqn, out_unks, residuals


def _jit_dce(used_outputs: list[bool], eqn: Any) -> tuple[list[bool], Any]:
    """Drops the unused outputs of a jit, then what its body no longer needs."""
    params = eqn.params
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    body, used_inputs = pe.dce_closed_jaxpr(
        params["jaxpr"], used_outputs, instantiate=params["keep_unused"]
    )
    if body is params["jaxpr"]:
        return used_inputs, eqn
    new_eqn = eqn.replace(
        invars=partition_list(used_inputs, eqn.invars)[1],
        outvars=partition_list(used_outputs, eqn.outvars)[1],
        params=dict(
            params,
            jaxpr=body,
            donated_invars=tuple(d for d, u in zip(params["donated_invars"], used_inputs) if u),
            **_sharding_params(params, list(used_inputs), list(used_outputs)),
        ),
        effects=body.effects,
    )
    return used_inputs, new_eqn


pe.partial_eval_jaxpr_custom_rules[jit_p] = _jit_partial_eval
pe.dce_rules[jit_p] = _jit_dce


def _jit_batching(
    axis_data: Any, args: Sequence[Any], dims: Sequence[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    """vmap of a jit: a new jit of the batched body (batched outputs come out at dim 0)."""
    if axis_data.name is None and all(d is None for d in dims):
        # Nothing batched and no axis name the body could refer to: unchanged.
        return jit_p.bind(*args, jaxpr=jaxpr, **params), [None] * len(jaxpr.out_avals)
    body, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims, False)
    # A batched value has one more dimension than its sharding describes: unconstrained.
    ins = params.get("in_shardings") or (None,) * len(args)
    outs = params.get("out_shardings") or (None,) * len(out_dims)
    params = dict(
        params,
        in_shardings=tuple(None if d is not None else s for s, d in zip(ins, dims)),
        out_shardings=tuple(None if d is not None else s for s, d in zip(outs, out_dims)),
    )
    return jit_p.bind(*args, jaxpr=body, **params), out_dims


batching.axis_primitive_batchers[jit_p] = _jit_batching


def _jit_jvp(
    primals: list[Any], tangents: list[Any], *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list[Any], list[Any]]:
    """jvp of a jit: a new jit of the jvp of the body (zero tangents stay symbolic)."""
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    body, out_nz = ad.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    outs = jit_p.bind(
        *primals,
        *nz_tangents,
        **dict(
            params,
            jaxpr=body,
            name=f"jvp({params['name']})",
            donated_invars=(*params["donated_invars"], *(False,) * len(nz_tangents)),
            **_jvp_sharding_params(params, nonzeros, out_nz),
        ),
    )
    n = len(jaxpr.out_avals)
    out_t = iter(outs[n:])
    tangents_out = [
        next(out_t) if nz else ad.Zero(ad.tangent_aval(a)) for a, nz in zip(jaxpr.out_avals, out_nz)
    ]
    return outs[:n], tangents_out


def _jit_transpose(cts: list[Any], *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    """Transpose of a jit: a new jit of the transposed body."""
    linear = [ad.is_undefined_primal(x) for x in args]
    ct_nz = [type(ct) is not ad.Zero for ct in cts]
    body, ct_in_nz = ad.transpose_jaxpr(jaxpr, linear, ct_nz)
    known = partition_list(linear, args)[0]
    nz_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    outs = iter(
        jit_p.bind(
            *known,
            *nz_cts,
            **dict(
                params,
                jaxpr=body,
                name=f"transpose({params['name']})",
                donated_invars=(False,) * (len(known) + len(nz_cts)),
                **_transpose_sharding_params(params, linear, ct_nz, ct_in_nz),
            ),
        )
    )
    nz_iter = iter(ct_in_nz)
    return [
        (next(outs) if next(nz_iter) else ad.Zero(ad.tangent_aval(x.aval))) if lin else None
        for x, lin in zip(args, linear)
    ]


ad.primitive_jvps[jit_p] = _jit_jvp
ad.primitive_transposes[jit_p] = _jit_transpose


def _sharding_params(
    params: dict,
    keep_in: list[bool],
    keep_out: list[bool],
    extra_in: int = 0,
    extra_out: int = 0,
) -> dict[str, tuple[Any, ...]]:
    """The jit's shardings for a new equation keeping some inputs/outputs.

    ``extra_in`` unconstrained inputs come first (residuals), ``extra_out``
    unconstrained outputs last.
    """
    ins = params.get("in_shardings") or (None,) * len(keep_in)
    outs = params.get("out_shardings") or (None,) * len(keep_out)
    return dict(
        in_shardings=(None,) * extra_in + tuple(s for s, k in zip(ins, keep_in) if k),
        out_shardings=tuple(s for s, k in zip(outs, keep_out) if k) + (None,) * extra_out,
    )


def _jvp_sharding_params(params: dict, in_nz: list[bool], out_nz: list[bool]) -> dict:
    """Tangents are laid out as their primals."""
    ins = params.get("in_shardings") or (None,) * len(in_nz)
    outs = params.get("out_shardings") or (None,) * len(out_nz)
    return dict(
        in_shardings=(*ins, *(s for s, nz in zip(ins, in_nz) if nz)),
        out_shardings=(*outs, *(s for s, nz in zip(outs, out_nz) if nz)),
    )


def _transpose_sharding_params(
    params: dict, linear: list[bool], ct_nz: list[bool], ct_in_nz: list[bool]
) -> dict:
    """Cotangents are laid out as the values they are cotangents of."""
    ins = params.get("in_shardings") or (None,) * len(linear)
    outs = params.get("out_shardings") or (None,) * len(ct_nz)
    lin_ins = [s for s, lin in zip(ins, linear) if lin]
    return dict(
        in_shardings=(
            *(s for s, lin in zip(ins, linear) if not lin),
            *(s for s, nz in zip(outs, ct_nz) if nz),
        ),
        out_shardings=tuple(s for s, nz in zip(lin_ins, ct_in_nz) if nz),
    )


@weakref_lru_cache(maxsize=4096)
def _compile(
    jaxpr: ClosedJaxpr,
    name: str,
    device: Any,
    committed: bool,
    donated_invars: tuple[bool, ...],
    keep_unused: bool,
    placement: dispatch.Placement | None = None,
    shardy: bool = True,
) -> Executable:
    # `shardy` is only part of the key: the lowering reads the flag itself.
    if discharge.has_state(jaxpr):
        # References become values passed in and out (docs/refs.md).
        def compile_pure(pure: ClosedJaxpr, donate: tuple[bool, ...]) -> Any:
            n_extra = len(pure.in_avals) - len(jaxpr.in_avals)
            asked = (False,) * n_extra + donated_invars
            donated = tuple(a or b for a, b in zip(asked, donate))
            return _compile(pure, name, device, committed, donated, keep_unused, placement, shardy)

        # A RefCall calls like an Executable (and forwards its other attributes).
        return cast(Executable, discharge.compile_with_refs(jaxpr, compile_pure))
    lowered = dispatch.lower_jaxpr(
        jaxpr,
        name=name,
        device=device,
        out_committed=committed,
        donated_invars=donated_invars,
        keep_unused=keep_unused,
        placement=placement,
    )
    return _debug_nans.maybe_checked(dispatch.compile_lowered(lowered), name, jaxpr)


# ---------------------------------------------------------------------------
# Tracing


@weakref_lru_cache(maxsize=4096)
def _trace(
    fun: WrappedFun,
    in_tree: PyTreeDef,
    in_avals: tuple[Any, ...],
    static: tuple[tuple[int, Any], ...],
    static_kw: tuple[tuple[str, Any], ...],
    n_args: int,
    debug: _Unhashed,
) -> tuple[ClosedJaxpr, PyTreeDef]:
    """Traces ``fun`` for flat inputs of types ``in_avals``: (jaxpr, output structure)."""
    _guards.check_tracing_allowed(debug.value.func_src_info, "for `jit`")
    out_tree_box: list[PyTreeDef] = []
    static_pos = dict(static)

    def flat_fun(*flat: Any) -> list[Any]:
        dyn, kwargs = tree_unflatten(in_tree, flat)
        dyn_iter = iter(dyn)
        args = [static_pos[i] if i in static_pos else next(dyn_iter) for i in range(n_args)]
        out = fun.call_wrapped(*args, **kwargs, **dict(static_kw))
        out_flat, out_tree = tree_flatten(out)
        out_tree_box.append(out_tree)
        discharge.check_no_returned_refs(out_flat, debug.value)
        # A symbolic dimension returned (`return x.shape[0] * 3`) is its value, as in JAX.
        return [sd.dim_as_value(x) if type(x) is sd.DimExpr else x for x in out_flat]

    # Names inside are relative to this function (its lowering adds the caller's).
    with si.reset_name_stack():
        closed = trace_to_jaxpr(flat_fun, in_avals, debug.value)
    return closed, out_tree_box[0]


class _Unhashed:
    """Carries a value through a cache key without being part of it (debug info)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return type(other) is _Unhashed


# ---------------------------------------------------------------------------
# Argument handling


def _resolve_argnums(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] | None,
    argnames: str | Sequence[str] | None,
    what: str,
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Completes positions from names and names from positions, as JAX does.

    Args:
      what: ``"static"`` or ``"donate"``, for messages.
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums or ())
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames or ())
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"{what}_argnums must be ints, got {n!r}")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{what}_argnames must be strings, got {name!r}")
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return nums, names
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    has_varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    for n in nums:
        if n >= len(positional) and not has_varargs or n < -len(positional):
            raise ValueError(
                f"jitted function has {what}_argnums={nums} but only accepts "
                f"{len(positional)} positional arguments."
            )
    if argnums is not None and argnames is None:
        names = tuple(
            positional[n].name
            for n in nums
            if -len(positional) <= n < len(positional)
            and positional[n].kind is not inspect.Parameter.POSITIONAL_ONLY
        )
    elif argnames is not None and argnums is None:
        nums = tuple(i for i, p in enumerate(positional) if p.name in names)
    nums = tuple(sorted({n % len(positional) if n < 0 else n for n in nums}))
    return nums, names


class _Signature:
    """Names of the pieces of a call-cache key, for explaining cache misses."""

    __slots__ = ("arg_names", "leaves", "in_tree", "static")

    def __init__(self, arg_names: Sequence[str], leaves: Sequence[Any], in_tree: Any, static: Any):
        self.arg_names = arg_names
        self.leaves = leaves
        self.in_tree = in_tree
        self.static = static


def _describe_leaf(sig: Any) -> str:
    if isinstance(sig, tuple) and len(sig) == 3 and hasattr(sig[0], "str_short"):
        aval, sharding, committed = sig
        weak = ", weak_type=True" if aval.weak_type else ""
        place = getattr(sharding, "_device", None) if len(sharding.device_set) == 1 else None
        if not committed:
            where = ""
        elif place is not None:
            where = f" committed to {place}"
        else:
            where = f" sharded as {sharding}"
        return f"{aval.str_short(short_dtypes=False)}{weak}{where}"
    if isinstance(sig, tuple) and len(sig) == 3:  # a numpy array
        _, dtype, shape = sig
        return f"{dtype}[{','.join(map(str, shape))}] (a NumPy array)"
    if isinstance(sig, type):
        return f"Python {sig.__name__} (weakly typed)"
    return str(sig)


# Marks the mesh in a call-cache key (bare PartitionSpecs resolve over it).
_MESH_KEY = "<mesh>"


def _is_array_sig(sig: Any) -> bool:
    return isinstance(sig, tuple) and len(sig) == 3 and hasattr(sig[0], "str_short")


def _log_compile(
    fun_name: str, jaxpr: ClosedJaxpr, seen: Sequence[_Signature], sig: _Signature
) -> None:
    """The `jax_log_compiles` line for a call that compiles: the function, its types, why."""
    if not seen:
        reason = "the first call"
    else:
        reason = _explain_miss(fun_name, seen, sig).split(": ", 1)[1]
    dispatch.log_compile(fun_name, jaxpr.in_avals, reason)


def _explain_miss(fun_name: str, seen: Sequence[_Signature], new: _Signature) -> str:
    """Says how ``new`` differs from the closest signature already compiled."""
    lines = [f"TRACING CACHE MISS for {fun_name}: "]

    def mismatches(old: _Signature) -> list[str]:
        out = []
        if old.in_tree != new.in_tree:
            out.append(f"  * the argument structure changed: was {old.in_tree}, now {new.in_tree}")
            return out
        if old.static != new.static:
            for (k, a), (_, b) in zip(old.static, new.static):
                if a != b and k is _MESH_KEY:
                    out.append(f"  * the mesh in context changed: was {a!r}, now {b!r}")
                elif a != b:
                    out.append(f"  * static argument {k}: was {a!r}, now {b!r}")
        for name, a, b in zip(new.arg_names, old.leaves, new.leaves):
            if a == b:
                continue
            if _is_array_sig(a) and _is_array_sig(b) and a[0] == b[0] and a[1] != b[1]:
                out.append(f"  * at {name}: the sharding changed: was {a[1]}, now {b[1]}")
            else:
                out.append(f"  * at {name}: was {_describe_leaf(a)}, now {_describe_leaf(b)}")
        return out

    best = min((mismatches(s) for s in seen), key=len)
    if not best:
        lines[0] += "the configuration context (e.g. jax_enable_x64) differs"
    else:
        lines[0] += f"{len(best)} difference(s) from the closest call seen before:"
        lines.extend(best)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The jitted function


_ONE_LEAF = tree_flatten(0)[1]


def _signatures(leaves: Sequence[Any]) -> list[Any]:
    """`arg_signature` of each leaf, with the Array case inline (it is most leaves)."""
    return [
        (x.aval, x._impl._sharding, x._committed) if type(x) is Array else arg_signature(x)
        for x in leaves
    ]


# Read on every call: bound once here to spare the attribute lookups.
_disable_jit = config.disable_jit
_trace_state = tracing._state
_eval_trace = tracing.eval_trace
_trace_context = config.trace_context


class _Entry:
    """A call-cache entry: the executable and how to rebuild the output pytree."""

    __slots__ = ("exe", "out_tree", "single", "cpp_ok")

    def __init__(self, exe: Executable, out_tree: PyTreeDef, cpp_ok: bool = False):
        self.exe = exe
        self.out_tree = out_tree
        self.single = out_tree.num_leaves == 1 and out_tree == _ONE_LEAF
        # Whether C++ may run it on its own (see `_fast_path_allowed`).
        self.cpp_ok = cpp_ok


class JitWrapped:
    """What :func:`jit` returns: call it, or stage it with ``trace``/``lower``."""

    def __init__(
        self,
        fun: Callable[..., Any],
        *,
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
        donate_argnums: tuple[int, ...],
        donate_argnames: tuple[str, ...],
        keep_unused: bool,
        in_shardings: Any,
        out_shardings: Any,
        device: Any,
        backend: str | None,
        inline: bool,
        cache_size: int = 4096,
    ):
        self._fun = fun
        self._static_argnums = static_argnums
        self._static_argnames = frozenset(static_argnames)
        self._donate_argnums = frozenset(donate_argnums)
        self._donate_argnames = frozenset(donate_argnames)
        self._keep_unused = keep_unused
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._device = device
        self._backend = backend
        self._inline = inline
        self._wrapped = wrap_init(fun)  # the trace cache's key: identity by code and closure
        self._name = getattr(fun, "__name__", type(fun).__name__)
        self._cache: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._max_entries = cache_size
        self._lru_from = cache_size // 2
        self._seen: list[_Signature] = []
        self._lock = threading.RLock()
        self._has_specs = any(
            _is_spec(x) for x in (*_sharding_leaves(in_shardings), *_sharding_leaves(out_shardings))
        )
        self._fast = not (
            static_argnums
            or static_argnames
            or self._donate_argnums
            or self._donate_argnames
            or self._has_specs
        )
        # `updated=()`: copying `fun.__dict__` would overwrite the attributes set
        # above when `fun` is itself a JitWrapped (or wraps one).
        functools.update_wrapper(self, fun, updated=())
        self._cpp: Callable[[], Any] | None = None  # (a weak reference, see `as_function`)
        _live_jitted.add(self)

    def __repr__(self) -> str:
        return f"<jitted function {self._name}>"

    def as_function(self) -> Any:
        """What `jit` returns: jaxlib's C++ function object running this jit, or
        this object itself where the C++ fast path does not apply.

        The C++ object takes every call; on a miss it calls back into this
        object (`_cpp_miss`). It carries this object's public attributes
        (``trace``, ``lower``, ``eval_shape``, ``clear_cache``) and holds it as
        ``_jit``. Donation (the Python path deletes donated inputs) and bare
        `PartitionSpec`s (whose mesh comes from the context, which C++ does not
        see) keep to this object.
        """
        if self._donate_argnums or self._donate_argnames or self._has_specs:
            return self
        this = weakref.ref(self)  # held by the C++ object: no cycle through the handler

        def cache_miss(*args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
            wrapped = this()
            assert wrapped is not None  # the C++ object holds it as `_jit`
            return wrapped._cpp_miss(*args, **kwargs)

        cpp = _cpp_jit.make_pjit(
            self._name,
            self._fun,
            cache_miss,
            self._static_argnums,
            tuple(self._static_argnames),
            _cpp_jit.new_cache(self._max_entries),
        )
        functools.update_wrapper(cpp, self._fun, updated=())
        cpp._jit = self
        for name in ("trace", "lower", "eval_shape", "clear_cache", "_cache_size", "_cache"):
            setattr(cpp, name, getattr(self, name))
        self._cpp = weakref.ref(cpp)
        return cpp

    # -- splitting the call into static and dynamic parts ---------------------

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple, tuple]:
        """(dynamic args, dynamic kwargs, static positional (i, v), static keyword (k, v))."""
        if not self._static_argnums and not self._static_argnames:
            return args, kwargs, (), ()
        static_pos = tuple((i, args[i]) for i in self._static_argnums if i < len(args))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in self._static_argnums)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        for _, value in [*static_pos, *static_kw]:
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    f"Non-hashable static arguments are not supported. An error occurred while "
                    f"trying to hash an object of type {type(value)}, {value!r}. The error was:\n"
                    f"TypeError: unhashable type: {type(value).__name__!r}"
                ) from None
        return dyn_args, dyn_kwargs, static_pos, static_kw

    def _donated(self, dyn_args: tuple, dyn_kwargs: dict) -> tuple[bool, ...]:
        """One bool per flat dynamic input: is it donated?"""
        if not self._donate_argnums and not self._donate_argnames:
            return ()
        flags: list[bool] = []
        # dynamic positions map back to original positions for donate_argnums
        orig_pos = [
            i
            for i in range(len(dyn_args) + len(self._static_argnums))
            if i not in self._static_argnums
        ]
        for pos, a in zip(orig_pos, dyn_args):
            flags += [pos in self._donate_argnums] * len(tree_flatten(a)[0])
        for k in sorted(dyn_kwargs):
            flags += [k in self._donate_argnames] * len(tree_flatten(dyn_kwargs[k])[0])
        return tuple(flags)

    def _debug_info(self, args: tuple, kwargs: dict) -> DebugInfo:
        return debug_info(
            "jit",
            self._fun,
            args,
            kwargs,
            tuple(self._static_argnums),
            tuple(self._static_argnames),
        )

    def _trace_call(self, args: tuple, kwargs: dict) -> TracedCall:
        dyn_args, dyn_kwargs, static_pos, static_kw = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        in_avals = tuple(shaped_abstractify(x) for x in leaves)
        debug = self._debug_info(args, kwargs)
        discharge.check_distinct_refs(leaves, in_avals, debug)
        closed, out_tree = _trace(
            self._wrapped, in_tree, in_avals, static_pos, static_kw, len(args), _Unhashed(debug)
        )
        donated = self._donated(dyn_args, dyn_kwargs) or (False,) * len(leaves)
        return TracedCall(self, leaves, in_tree, closed, out_tree, donated, debug, args, kwargs)

    def _params(self, traced: TracedCall) -> dict[str, Any]:
        params = dict(
            jaxpr=traced.jaxpr,
            name=self._name,
            donated_invars=traced.donated,
            keep_unused=self._keep_unused,
            device=self._device_from_shardings(),
            backend=self._backend,
            inline=self._inline,
        )
        if self._in_shardings is not None or self._out_shardings is not None:
            ins, outs = self._flat_shardings(traced)
            params["in_shardings"] = ins
            params["out_shardings"] = outs or (None,) * len(traced.jaxpr.out_avals)
        return params

    def _device_from_shardings(self) -> Any:
        """The device that single-device shardings name (None if none, or several)."""
        if self._device is not None:
            return self._device
        devices = set()
        for s in (self._in_shardings, self._out_shardings):
            for x in _sharding_leaves(s):
                if isinstance(x, Sharding):
                    devices |= x.device_set
                elif x is not None:  # a PartitionSpec: over the mesh's devices
                    return None
        return devices.pop() if len(devices) == 1 else None

    def _flat_shardings(self, traced: TracedCall) -> tuple[tuple[Any, ...], tuple[Any, ...] | None]:
        """(per flat input, per flat output) explicit shardings, None where unspecified."""
        n_in = len(traced.leaves)
        ins: tuple[Any, ...] = (None,) * n_in
        if self._in_shardings is not None:
            dyn_args, dyn_kwargs = tree_unflatten(traced.in_tree, traced.leaves)
            flat = _broadcast_prefix(
                self._in_shardings, tuple(dyn_args), "in_shardings", "the positional arguments"
            )
            ins = tuple(flat) + (None,) * (n_in - len(flat))
        outs = None
        if self._out_shardings is not None:
            dummy = tree_unflatten(traced.out_tree, [0] * traced.out_tree.num_leaves)
            outs = tuple(
                _broadcast_prefix(self._out_shardings, dummy, "out_shardings", "the outputs")
            )
        return ins, outs

    def _placement(self, traced: TracedCall, leaves: Sequence[Any]) -> dispatch.Placement | None:
        """The SPMD placement of this call, or None (single device)."""
        if self._device is not None:
            return None
        ins, outs = self._flat_shardings(traced)
        return dispatch.spmd_placement(
            leaves,
            traced.debug.safe_arg_names(len(leaves)),
            self._name,
            ins,
            outs,
            _ranks(traced.jaxpr.out_avals),
            body_shardings(traced.jaxpr),
        )

    def _key_extra(self) -> tuple:
        """What a call's cache key needs beyond its arguments: the mesh bare specs refer to."""
        if not self._has_specs:
            return ()
        return ((_MESH_KEY, get_concrete_mesh()),)

    # -- calling -----------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # What `jit` returns is jaxlib's C++ function object (see `as_function`)
        # whenever it applies; this Python call serves the others (donation,
        # bare PartitionSpecs). Its fast path, inline: all arguments arrays, no
        # keywords, outside any trace, and a cache hit; it needs no pytree
        # flattening (the key's first item, a config tuple, never equals the
        # PyTreeDef that starts the general keys). Everything else goes through
        # `_call`, an API boundary for traceback filtering.
        if self._fast and not kwargs and _trace_state.trace is _eval_trace:
            for a in args:
                if type(a) is not Array:
                    break
            else:
                key = (_trace_context(), *[(a.aval, a._impl._sharding, a._committed) for a in args])
                entry = self._cache.get(key)
                if entry is not None and not _disable_jit.value:
                    if len(self._cache) > self._lru_from:
                        self._touch(key)
                    outs = entry.exe.call(args)
                    return outs[0] if entry.single else entry.out_tree.unflatten(outs)
        return self._call(*args, **kwargs)

    def _cpp_miss(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        """What C++ calls on a miss: (outputs, fast-path data or None, False)."""
        if _trace_state.trace is not _eval_trace or _disable_jit.value:
            return self._call(*args, **kwargs), None, False
        out, entry, leaves = self._call_entry(args, kwargs)
        data = None
        if entry.cpp_ok and _cpp_jit.is_plain(leaves):
            data = _cpp_jit.fastpath_data(entry.exe, len(leaves), out)
        return out, data, False

    @si.api_boundary
    def _call(self, *args: Any, **kwargs: Any) -> Any:
        if _disable_jit.value:
            return self._fun(*args, **kwargs)
        if _trace_state.trace is not _eval_trace:
            return self._bind(args, kwargs)
        return self._call_entry(args, kwargs)[0]

    @si.api_boundary
    def _call_entry(self, args: tuple, kwargs: dict) -> tuple[Any, _Entry, Sequence[Any]]:
        """Runs the call outside any trace: (outputs, the cache entry used, flat inputs)."""
        key: tuple[Any, ...]
        if self._fast and not kwargs and all(type(a) is Array for a in args):
            key = (_trace_context(), *[(a.aval, a._impl._sharding, a._committed) for a in args])
            leaves: Sequence[Any] = args
        elif self._fast:
            leaves, in_tree = tree_flatten((args, kwargs))
            key = (in_tree, _trace_context(), *_signatures(leaves))
        else:
            dyn_args, dyn_kwargs, static_pos, static_kw = self._split(args, kwargs)
            leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
            key = (
                in_tree,
                static_pos,
                (*static_kw, *self._key_extra()),
                _trace_context(),
                *_signatures(leaves),
            )
        entry = self._lookup(key, args, kwargs, leaves)
        outs = entry.exe.call(leaves)
        return (outs[0] if entry.single else entry.out_tree.unflatten(outs)), entry, leaves

    def _touch(self, key: Hashable) -> None:
        """Marks ``key`` most recently used (only once the cache is half full: before
        that nothing can be evicted, so the order does not matter)."""
        try:
            self._cache.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile: the entry is still good
            pass

    def _lookup(
        self, key: tuple[Any, ...], args: tuple, kwargs: dict, leaves: Sequence[Any]
    ) -> _Entry:
        """The call-cache entry for ``key``, made on a miss."""
        entry = self._cache.get(key)
        if entry is None:
            return self._miss(key, args, kwargs, list(leaves))
        if len(self._cache) > self._lru_from:
            self._touch(key)
        return entry

    def _bind(self, args: tuple, kwargs: dict) -> Any:
        traced = self._trace_call(args, kwargs)
        if self._inline:
            outs = jaxpr_as_fun(traced.jaxpr)(*traced.leaves)
        else:
            params = self._params(traced)
            leaves = traced.leaves
            if any(isinstance(c, tracing.Tracer | Ref) for c in traced.jaxpr.consts):
                # The body closes over values of an enclosing transformation
                # (e.g. `grad` of a function calling a jitted closure), or over
                # references: they become explicit inputs, so that the outer
                # trace sees them (and a reference's writes reach it).
                body, hoisted_refs = discharge.hoist_ref_consts(traced.jaxpr)
                body, hoisted = pe.hoist_tracer_consts(body)
                hoisted = [*hoisted, *hoisted_refs]  # (the order of the invars now)
                leaves = [*hoisted, *leaves]
                params = dict(
                    params,
                    jaxpr=body,
                    donated_invars=(False,) * len(hoisted) + tuple(params["donated_invars"]),
                )
                if "in_shardings" in params:
                    params["in_shardings"] = (None,) * len(hoisted) + params["in_shardings"]
            outs = jit_p.bind(*leaves, **params)
        return tree_unflatten(traced.out_tree, outs)

    def _miss(self, key: tuple[Any, ...], args: tuple, kwargs: dict, leaves: list) -> _Entry:
        with self._lock:  # one compile per signature, even when threads race
            entry = self._cache.get(key)
            if entry is not None:
                return entry
            _guards.check_execution_allowed(f"jit({self._name})")
            traced = self._trace_call(args, kwargs)
            params = self._params(traced)
            placement = self._placement(traced, leaves)
            if placement is None:
                device, committed = dispatch.arg_placement(
                    leaves,
                    traced.debug.safe_arg_names(len(leaves)),
                    self._name,
                    params["device"],
                    self._backend,
                )
            else:
                device, committed = placement.devices[0], True
            sig = _Signature(
                traced.debug.safe_arg_names(len(leaves)),
                key[-len(leaves) :] if leaves else (),
                traced.in_tree,
                (*key[1], *key[2]) if not self._fast else (),
            )
            if config.log_compiles.value:
                _log_compile(self._name, traced.jaxpr, self._seen, sig)
            exe = _compile(
                traced.jaxpr,
                self._name,
                device,
                committed,
                traced.donated,
                self._keep_unused,
                placement,
                config.use_shardy_partitioner.value,
            )
            entry = _Entry(exe, traced.out_tree, _fast_path_allowed(exe, traced))
            if self._seen and config.explain_cache_misses.value:
                logger.warning(_explain_miss(self._name, self._seen, sig))
            self._seen.append(sig)
            del self._seen[:-64]
            self._cache[key] = entry
            if len(self._cache) > self._max_entries:
                self._cache.popitem(last=False)
            return entry

    # -- ahead-of-time stages ------------------------------------------------------

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        """Traces for these arguments (arrays or `ShapeDtypeStruct`s): a `Traced` stage."""
        return Traced(self._trace_call(args, kwargs))

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """Traces and lowers for these arguments: a `Lowered` stage."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The output's shapes and dtypes (`ShapeDtypeStruct`s), without running."""
        return self.trace(*args, **kwargs).out_info

    # -- cache management ------------------------------------------------------------

    def clear_cache(self) -> None:
        """Forgets the compiled calls of this function (the module caches keep theirs)."""
        with self._lock:
            self._cache.clear()
            self._seen.clear()
            cpp = self._cpp() if self._cpp is not None else None
            if cpp is not None:
                cpp._clear_cache()

    def _cache_size(self) -> int:
        return len(self._cache)


def _ranks(avals: Sequence[Any]) -> list[int]:
    """The rank of each output for the placement rules (a token's: 0, it has no shape)."""
    return [len(getattr(a, "shape", ())) for a in avals]


def _fast_path_allowed(exe: Executable, traced: TracedCall) -> bool:
    """Whether C++ may run ``exe`` on its own: no effects (tokens, ordering, checks
    run by Python), no token inputs or outputs, no host callbacks (their errors
    surface at the call in Python), no pruned inputs, no donation, and no
    debug_nans/debug_infs."""
    return (
        not traced.jaxpr.effects
        and not getattr(exe, "has_host_callbacks", False)
        and not getattr(exe, "token_boundary", False)
        and exe.kept_var_idx == tuple(range(len(exe.in_avals)))
        and not any(traced.donated)
        and not config.debug_nans.value
        and not config.debug_infs.value
    )


# (Defined with the placement rules; eager primitives with bodies use it too.)
body_shardings = dispatch.body_shardings


def _is_sharding_leaf(x: Any) -> bool:
    return x is None or isinstance(x, Sharding) or _is_spec(x)


def _is_spec(x: Any) -> bool:
    return isinstance(x, PartitionSpec)


def _sharding_leaves(tree: Any) -> list[Any]:
    if tree is None:
        return []
    return tree_flatten(tree, is_leaf=_is_sharding_leaf)[0]


def _resolve_sharding(x: Any, what: str) -> Any:
    """A sharding leaf of ``in_shardings``/``out_shardings`` as a Sharding (or None)."""
    if x is None or isinstance(x, Sharding):
        return x
    if _is_spec(x):
        if get_concrete_mesh() is None:
            raise RuntimeError(
                f"jit requires a non-empty mesh in context if you are passing `PartitionSpec`s "
                f"to {what} (got {x}). You can define a context mesh via "
                f"`polyjax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to {what} and "
                "then the mesh context manager is not required."
            )
        return spec_to_sharding(x)
    raise TypeError(
        f"{what} leaves must be Shardings, PartitionSpecs or None; got {x!r} of type "
        f"{type(x).__name__}."
    )


def _broadcast_prefix(prefix: Any, tree: Any, what: str, of: str) -> list[Any]:
    """One resolved sharding per leaf of ``tree``, from a pytree prefix of shardings."""
    if _is_sharding_leaf(prefix):
        one = _resolve_sharding(prefix, what)
        return [one] * len(tree_flatten(tree)[0])
    targets, target_tree = tree_flatten(prefix, is_leaf=_is_sharding_leaf)
    if isinstance(prefix, list):  # JAX accepts a list where the arguments are a tuple
        target_tree = tree_flatten(tuple(prefix), is_leaf=_is_sharding_leaf)[1]
    subtrees = prefix_subtrees(
        target_tree,
        tree,
        lambda: (
            f"{what} must be a Sharding, a PartitionSpec, None, or a pytree prefix of "
            f"{of}; got {prefix!r}, whose structure does not match {tree_flatten(tree)[1]}"
        ),
    )
    out: list[Any] = []
    for t, sub in zip(targets, subtrees):
        out += [_resolve_sharding(t, what)] * len(tree_flatten(sub)[0])
    return out


_live_jitted: weakref.WeakSet[JitWrapped] = weakref.WeakSet()


def clear_jit_caches() -> None:
    """Empties the call cache of every live jitted function and the eager cache."""
    for f in list(_live_jitted):
        f.clear_cache()
    dispatch.clear_eager_cache()


def jit(
    fun: Callable[..., Any],
    /,
    *,
    in_shardings: Any = None,
    out_shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Sequence[str] | None = None,
    keep_unused: bool = False,
    device: Any = None,
    backend: str | None = None,
    inline: bool = False,
) -> Any:
    """Compiles ``fun`` with XLA: traced once per input signature, then reused.

    Args:
      fun: the function to compile. Its arguments and results are pytrees of
        arrays and scalars (static arguments aside).
      in_shardings: shardings of the positional arguments: a pytree prefix of
        them whose leaves are `Sharding` objects, bare `PartitionSpec` objects (over the
        mesh of the `with mesh:` context) or ``None`` (the argument's own
        sharding if it is a committed array, else replicated). A committed
        argument laid out otherwise is an error; other arguments are moved.
      out_shardings: shardings of the outputs, a pytree prefix of them; ``None``
        lets XLA's partitioner choose.
      static_argnums: positions of arguments that are Python values (hashable):
        each distinct value traces and compiles anew.
      static_argnames: names of static keyword arguments.
      donate_argnums: positions of arguments whose buffers the computation may
        reuse; they are deleted by the call.
      donate_argnames: names of donated keyword arguments.
      keep_unused: keep unused arguments in the compiled module (by default
        they are pruned).
      device: the device to run on (committed outputs).
      backend: the platform to run on, e.g. ``"cpu"``.
      inline: under an outer trace, inline the jaxpr instead of a ``jit`` equation.

    Returns:
      A callable with ``.trace``, ``.lower`` and ``.eval_shape``.

    Raises:
      ValueError: conflicting options (``device`` and ``backend``, static and
        donated arguments), bad argnums.

    Example:
      >>> import numpy as np
      >>> import polyjax.numpy as jnp
      >>> f = jit(lambda x, y: x * 2 + y)
      >>> f(np.float32(1.0), np.float32(2.0))
      Array(4., dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if device is not None and backend is not None:
        raise ValueError(
            "can't specify both a device and a backend for jit, "
            f"got device={device} and backend={backend}"
        )
    if device is not None and (in_shardings is not None or out_shardings is not None):
        raise ValueError(
            "If backend or device is specified on jit, then in_shardings and out_shardings "
            "should not be specified."
        )
    s_nums, s_names = _resolve_argnums(fun, static_argnums, static_argnames, "static")
    d_nums, d_names = _resolve_argnums(fun, donate_argnums, donate_argnames, "donate")
    if set(s_nums) & set(d_nums) or set(s_names) & set(d_names):
        raise ValueError(
            f"static_argnums {s_nums} and donate_argnums {d_nums} (or the names "
            f"{s_names}, {d_names}) cannot overlap: a static argument has no buffer to donate."
        )
    return JitWrapped(
        fun,
        static_argnums=s_nums,
        static_argnames=s_names,
        donate_argnums=d_nums,
        donate_argnames=d_names,
        keep_unused=keep_unused,
        in_shardings=in_shardings,
        out_shardings=out_shardings,
        device=device,
        backend=backend,
        inline=inline,
    ).as_function()


def jitted_object(fun: Any) -> JitWrapped | None:
    """The `JitWrapped` behind what `jit` returned (either form), or None."""
    if type(fun) is JitWrapped:
        return fun
    inner = getattr(fun, "_jit", None)
    return inner if type(inner) is JitWrapped else None


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)``, computed without running it.

    Args:
      fun: the function.
      *args: arrays, scalars or `ShapeDtypeStruct`s (pytrees of them).
      **kwargs: the same, by keyword.

    Returns:
      A pytree of `ShapeDtypeStruct` with the structure of ``fun``'s result.

    Example:
      >>> import numpy as np
      >>> import polyjax.numpy as jnp
      >>> eval_shape(lambda x: x.T, ShapeDtypeStruct((2, 3), np.float32))
      ShapeDtypeStruct(shape=(3, 2), dtype=float32)
    """
    traced = jitted_object(jit(fun))._trace_call(args, kwargs)  # type: ignore[union-attr]  # jit's own result
    outs = [
        a  # (a token's type stands for itself, as in JAX)
        if type(a) is AbstractToken
        else ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
        for a in traced.jaxpr.out_avals
    ]
    return tree_unflatten(traced.out_tree, outs)
