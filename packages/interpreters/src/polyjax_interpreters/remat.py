"""Gradient checkpointing (`checkpoint` / `remat`): recompute instead of saving.

Reverse-mode differentiation runs a function forward, keeps the values its
derivative needs (the *residuals*), and reads them in the backward pass. For
deep programs those residuals dominate memory. `checkpoint(f)` makes `f`'s
residuals cheap: only `f`'s inputs are kept, and the backward pass recomputes
the rest of `f` before differentiating it.

`checkpoint(f)` traces `f` to a jaxpr and binds the `checkpoint` primitive
(`remat_p`) with it. Outside of differentiation it is just `f`. Under `jvp`,
its body is differentiated and it stays a `checkpoint`. When partial
evaluation splits it (in `linearize`/`vjp`), the known part computes only the
values the *policy* allows to save, and the unknown part recomputes the rest:

    policy                              saved for the backward pass
    nothing_saveable (the default)      nothing but the inputs
    everything_saveable                 everything (as without checkpoint)
    dots_saveable / checkpoint_dots     outputs of dot_general
    dots_with_no_batch_dims_saveable    outputs of dot_general without batch dims
    save_only_these_names(*names)       values marked with checkpoint_name(x, name)
    save_any_names_but_these(*names)    named values, except these names
    save_anything_except_these_names    everything, except values with these names

A policy is `policy(prim, *in_avals, **params) -> bool`, asked for each
equation whose inputs are all known. Recomputed equations are lowered behind
a `stablehlo.optimization_barrier` (with `prevent_cse`), so XLA cannot merge
them with the forward computation and undo the saving.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, NamedTuple

from jaxlib.mlir.dialects import stablehlo as hlo

from polyjax_core.abstract_values import shaped_abstractify
from polyjax_core.jaxpr import ClosedJaxpr, JaxprEqn, Var
from polyjax_core.jaxpr_eval import eval_jaxpr
from polyjax_core.jaxpr_tracing import trace_to_jaxpr
from polyjax_core.lists import partition_list
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import tree_flatten, tree_map, tree_unflatten
from polyjax_core.wrapped_fun import debug_info
from polyjax_interpreters import ad, batching, discharge, mlir
from polyjax_interpreters import partial_eval as pe

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "name_p",
    "remat",
    "remat_p",
]


# ---------------------------------------------------------------------------
# checkpoint_name and the `name` primitive

name_p = Primitive("name")
name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
mlir.register_lowering(name_p, lambda ctx, x, *, name: [x])
batching.defvectorized(name_p)


def _name_jvp(primals: list, tangents: list, *, name: Any) -> tuple[Any, Any]:
    # The primal keeps its name (a policy may save it); the tangent is not named.
    return name_p.bind(primals[0], name=name), tangents[0]


ad.primitive_jvps[name_p] = _name_jvp
ad.primitive_transposes[name_p] = lambda ct, x, *, name: [ct]


def checkpoint_name(x: Any, name: Any) -> Any:
    """Names the arrays of `x` for checkpoint policies (an identity otherwise).

    Args:
      x: a pytree of arrays.
      name: a hashable name, matched by `save_only_these_names` and friends.

    Returns:
      `x`, each leaf passed through the `name` primitive.

    Example:
      >>> def f(x):
      ...     h = checkpoint_name(jnp.sin(x), "h")
      ...     return jnp.sin(h)
      >>> g = checkpoint(f, policy=checkpoint_policies.save_only_these_names("h"))
    """
    return tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


# ---------------------------------------------------------------------------
# Policies


def everything_saveable(*_: Any, **__: Any) -> bool:
    """Saves every value (as if there were no checkpoint)."""
    return True


def nothing_saveable(*_: Any, **__: Any) -> bool:
    """Saves nothing but the inputs: everything is recomputed (the default)."""
    return False


def dots_saveable(prim: Any, *_: Any, **__: Any) -> bool:
    """Saves the results of matrix products (`dot_general`), recomputes the rest."""
    return getattr(prim, "name", None) == "dot_general"


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim: Any, *_: Any, **params: Any) -> bool:
    """Saves the results of `dot_general`s that have no batch dimensions."""
    if getattr(prim, "name", None) != "dot_general":
        return False
    _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: Any) -> Callable[..., bool]:
    """Saves only the values named (with `checkpoint_name`) by one of `names`."""
    names_set = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] in names_set

    return policy


def save_any_names_but_these(*names: Any) -> Callable[..., bool]:
    """Saves the named values whose names are not in `names`; recomputes the rest."""
    names_set = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return prim is name_p and params["name"] not in names_set

    return policy


def save_anything_except_these_names(*names: Any) -> Callable[..., bool]:
    """Saves every value except the ones named by one of `names`."""
    names_set = frozenset(names)

    def policy(prim: Any, *_: Any, **params: Any) -> bool:
        return not (prim is name_p and params["name"] in names_set)

    return policy


def save_from_both_policies(
    left: Callable[..., bool], right: Callable[..., bool]
) -> Callable[..., bool]:
    """Saves what either policy saves."""

    def policy(prim: Any, *avals: Any, **params: Any) -> bool:
        return _saves(left(prim, *avals, **params)) or _saves(right(prim, *avals, **params))

    return policy


class _Decision:
    """A policy's answer: save the value (`Saveable`) or recompute it (`Recompute`)."""

    def __init__(self, name: str, save: bool):
        self._name, self.save = name, save

    def __repr__(self) -> str:
        return self._name


Saveable = _Decision("Saveable", True)
Recompute = _Decision("Recompute", False)


class Offloadable(NamedTuple):
    """A policy's answer: keep the value, moved from memory `src` to memory `dst`.

    polyjax's only backend is the CPU, whose device memory is host memory: an
    offloadable value is saved where it is (offloading has no effect).
    """

    src: str
    dst: str


def _saves(decision: Any) -> bool:
    """Whether a policy's answer (a bool, `Saveable`, `Recompute` or `Offloadable`) saves."""
    if isinstance(decision, _Decision):
        return decision.save
    return isinstance(decision, Offloadable) or bool(decision)


def save_and_offload_only_these_names(
    *,
    names_which_can_be_saved: Any,
    names_which_can_be_offloaded: Any,
    offload_src: str,
    offload_dst: str,
) -> Callable[..., Any]:
    """Saves the values named in the first list, offloads those named in the second."""
    saved, offloaded = frozenset(names_which_can_be_saved), frozenset(names_which_can_be_offloaded)

    def policy(prim: Any, *_: Any, **params: Any) -> Any:
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Callable[..., Any]:
    """Offloads the results of `dot_general`s without batch dimensions; recomputes the rest."""

    def policy(prim: Any, *avals: Any, **params: Any) -> Any:
        if dots_with_no_batch_dims_saveable(prim, *avals, **params):
            return Offloadable(offload_src, offload_dst)
        return Recompute

    return policy


checkpoint_policies = SimpleNamespace(
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=checkpoint_dots_with_no_batch_dims,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
)


def _saveable(policy: Callable[..., bool] | None) -> Callable[[JaxprEqn], bool]:
    """The policy as `pe.partial_eval_jaxpr_custom` asks it: per equation."""
    if policy is None:
        return lambda eqn: False

    def saveable(eqn: JaxprEqn) -> bool:
        return _saves(policy(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params))

    return saveable


# ---------------------------------------------------------------------------
# The checkpoint primitive

remat_p = Primitive("checkpoint")
remat_p.multiple_results = True


@remat_p.def_effectful_abstract_eval
def _remat_abstract_eval(*avals: Any, jaxpr: ClosedJaxpr, **_: Any) -> tuple[list, frozenset]:
    return list(jaxpr.out_avals), jaxpr.effects


@remat_p.def_impl
def _remat_impl(*args: Any, jaxpr: ClosedJaxpr, **_: Any) -> list[Any]:
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


# A body using references is discharged like jit's (references in, written ones out).
discharge.discharge_rules[remat_p] = discharge.call_rule(remat_p)
remat_p.has_body = True


def _bind_remat(args: Sequence[Any], closed: ClosedJaxpr, **params: Any) -> list[Any]:
    """Binds `checkpoint`, passing the body's consts as leading arguments.

    Consts may be tracers of an enclosing transformation (values the body closes
    over): as arguments, that transformation sees them.
    """
    if closed.consts:
        args = [*closed.consts, *args]
        closed = ClosedJaxpr(pe.convert_constvars_jaxpr(closed.jaxpr), [])
    return remat_p.bind(*args, jaxpr=closed, **params)


# Lowering: the body inline; a differentiated body behind an optimization
# barrier, so that XLA does not merge the recomputation with the forward pass.


def _remat_lowering(
    ctx: Any,
    *args: Any,
    jaxpr: ClosedJaxpr,
    prevent_cse: bool,
    differentiated: bool,
    policy: Any,
) -> list[Any]:
    if prevent_cse and differentiated and args:
        barrier = hlo.OptimizationBarrierOp(list(args))
        args = tuple(barrier.results)
    return mlir.jaxpr_subcomp(
        ctx.module_context, jaxpr.jaxpr, jaxpr.consts, list(args), ctx.dim_var_values
    )


mlir.register_lowering(remat_p, _remat_lowering)


# jvp: differentiate the body; the result is still a checkpoint.


def _remat_jvp(
    primals: list, tangents: list, *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list, list]:
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros, False)
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    params = dict(params, differentiated=True)
    outs = _bind_remat([*primals, *nz_tangents], jvp_closed, **params)
    n_out = len(jaxpr.out_avals)
    primals_out, nz_out = outs[:n_out], iter(outs[n_out:])
    tangents_out = [
        next(nz_out) if nz else ad.Zero(ad.tangent_aval(aval))
        for aval, nz in zip(jaxpr.out_avals, out_nonzeros)
    ]
    return primals_out, tangents_out


ad.primitive_jvps[remat_p] = _remat_jvp


# Partial evaluation: the known part saves what the policy allows; the unknown
# part recomputes everything else from the inputs.


def _remat_partial_eval(
    unknowns: list[bool], instantiate: list[bool], eqn: JaxprEqn
) -> tuple[JaxprEqn | None, JaxprEqn | None, list[bool], list[Var]]:
    params = eqn.params
    closed: ClosedJaxpr = params["jaxpr"]
    known, staged, out_unks, body_res, staged_known_ins = pe.partial_eval_jaxpr_custom(
        closed.jaxpr, unknowns, instantiate, _saveable(params["policy"])
    )
    known_closed, _ = pe.dce_closed_jaxpr(
        ClosedJaxpr(known, closed.consts), [True] * len(known.outvars), instantiate=True
    )
    residuals = [Var(v.aval) for v in body_res]
    known_ins = partition_list(unknowns, eqn.invars)[0]
    known_eqn = None
    if known.outvars or known_closed.effects:
        known_eqn = eqn.replace(
            invars=known_ins,
            outvars=[*(v for v, u in zip(eqn.outvars, out_unks) if not u), *residuals],
            params=dict(params, jaxpr=known_closed),
            effects=known_closed.effects,
        )
    staged_eqn = eqn.replace(
        invars=[
            *residuals,
            *(x for x, used in zip(known_ins, staged_known_ins) if used),
            *(x for x, u in zip(eqn.invars, unknowns) if u),
        ],
        outvars=partition_list(out_unks, eqn.outvars)[1],
        params=dict(params, jaxpr=ClosedJaxpr(staged, [])),
        effects=staged.effects,
    )
    return known_eqn, staged_eqn, out_unks, residuals


pe.partial_eval_jaxpr_custom_rules[remat_p] = _remat_partial_eval


# Transpose: transpose the body (recomputing its non-linear part first) into a
# new checkpoint, so the recomputation happens in the backward pass.


def _remat_transpose(cts: list, *args: Any, jaxpr: ClosedJaxpr, **params: Any) -> list[Any]:
    linear = [ad.is_undefined_primal(x) for x in args]
    known_args = partition_list(linear, args)[0]
    nz_cts = [ct for ct in cts if type(ct) is not ad.Zero]
    ct_nonzero = [type(ct) is not ad.Zero for ct in cts]
    in_avals = [shaped_abstractify(x) for x in known_args] + [
        shaped_abstractify(ct) for ct in nz_cts
    ]
    out_nonzero: list[bool] = []

    def transposed(*flat: Any) -> list[Any]:
        known_it, ct_it = iter(flat[: len(known_args)]), iter(flat[len(known_args) :])
        primals_in = [
            ad.UndefinedPrimal(x.aval) if lin else next(known_it) for x, lin in zip(args, linear)
        ]
        cts_out = [
            next(ct_it) if nz else ad.Zero(ad.tangent_aval(aval))
            for aval, nz in zip(jaxpr.out_avals, ct_nonzero)
        ]
        cts_in = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, primals_in, cts_out)
        lin_cts = partition_list(linear, cts_in)[1]
        out_nonzero.extend(type(ct) is not ad.Zero for ct in lin_cts)
        return [ct for ct in lin_cts if type(ct) is not ad.Zero]

    t_closed = trace_to_jaxpr(transposed, in_avals)
    outs = iter(_bind_remat([*known_args, *nz_cts], t_closed, **dict(params, differentiated=True)))
    nz_iter = iter(out_nonzero)
    result: list[Any] = []
    for x, lin in zip(args, linear):
        if not lin:
            result.append(None)
        elif next(nz_iter):
            result.append(next(outs))
        else:
            result.append(ad.Zero(ad.tangent_aval(x.aval)))
    return result


ad.primitive_transposes[remat_p] = _remat_transpose


# Batching: batch the body.


def _remat_batcher(
    axis_data: Any, args: list, dims: list, *, jaxpr: ClosedJaxpr, **params: Any
) -> tuple[list, list]:
    if all(d is batching.not_mapped for d in dims):
        return remat_p.bind(*args, jaxpr=jaxpr, **params), [batching.not_mapped] * len(
            jaxpr.out_avals
        )
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims, False)
    return _bind_remat(args, batched, **params), out_dims


batching.axis_primitive_batchers[remat_p] = _remat_batcher


# DCE: drop unused outputs, then what the body no longer needs.


def _remat_dce(used_outputs: list[bool], eqn: JaxprEqn) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    body, used_inputs = pe.dce_closed_jaxpr(eqn.params["jaxpr"], used_outputs)
    if body is eqn.params["jaxpr"]:
        return used_inputs, eqn
    new_eqn = eqn.replace(
        invars=partition_list(used_inputs, eqn.invars)[1],
        outvars=partition_list(used_outputs, eqn.outvars)[1],
        params=dict(eqn.params, jaxpr=body),
        effects=body.effects,
    )
    return used_inputs, new_eqn


pe.dce_rules[remat_p] = _remat_dce


# ---------------------------------------------------------------------------
# checkpoint / remat


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Callable[..., Any]:
    """Makes `fun` recompute its intermediate values in the backward pass.

    Args:
      fun: the function to checkpoint; pytrees of arrays in and out.
      prevent_cse: keep XLA from merging the recomputation with the forward
        computation (which would undo the memory saving). Under `scan`-like
        loops this is unnecessary and may be turned off.
      policy: which intermediate values may be saved rather than recomputed:
        one of `checkpoint_policies`, or `policy(prim, *avals, **params) ->
        bool`. None saves nothing but the inputs.
      static_argnums: positions of arguments passed as Python values (not
        traced); they must be hashable.
      static_argnames: names of keyword arguments passed as Python values.

    Returns:
      A function with the same signature and results as `fun`.

    Example:
      >>> import polyjax.numpy as jnp
      >>> from polyjax_interpreters.ad import grad
      >>> g = checkpoint(lambda x: jnp.sin(jnp.sin(x)))
      >>> grad(g)(1.0)   # sin(x) is recomputed in the backward pass
      Array(0.36003947, dtype=float32, weak_type=True)
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    names_set = frozenset(names)

    @functools.wraps(fun)
    def fun_remat(*args: Any, **kwargs: Any) -> Any:
        static_pos = {i % len(args) if -len(args) <= i < 0 else i for i in nums}
        for i in static_pos:
            if i >= len(args):
                raise ValueError(
                    f"checkpoint: static_argnums={nums} but the function was called with "
                    f"{len(args)} positional arguments"
                )
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names_set}
        leaves, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        in_avals = [shaped_abstractify(x) for x in leaves]
        out_tree_box: list[Any] = []

        def flat_fun(*flat: Any) -> list[Any]:
            d_args, d_kwargs = tree_unflatten(in_tree, flat)
            it = iter(d_args)
            full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
            full_kwargs = {**{k: v for k, v in kwargs.items() if k in names_set}, **d_kwargs}
            out_flat, out_tree = tree_flatten(fun(*full, **full_kwargs))
            out_tree_box.append(out_tree)
            return out_flat

        debug = debug_info("checkpoint", fun, args, kwargs, tuple(static_pos), names)
        closed = trace_to_jaxpr(flat_fun, in_avals, debug)
        outs = _bind_remat(
            leaves, closed, prevent_cse=prevent_cse, differentiated=False, policy=policy
        )
        return tree_unflatten(out_tree_box[0], outs)

    return fun_remat


remat = checkpoint
