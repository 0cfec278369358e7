"""`with_sharding_constraint` and `reshard`: telling the partitioner how to lay out a value.

    sharding_constraint[sharding=S]   f32[8,8] -> f32[8,8]   (the same value)

Inside `jit`, the primitive lowers to a Shardy `sdy.sharding_constraint` (or,
with `jax_use_shardy_partitioner` off, GSPMD's `@Sharding` custom call): XLA's
partitioner must lay the value out as `S` there, and propagates from it. On
concrete arrays (outside `jit`) it is `device_put(x, S)`.

Rules: the constraint is the identity, so it is linear; its jvp constrains the
tangent the same way and its transpose the cotangent. Under `vmap` the batched
value gets one more dimension: it is recorded in the `inserted` parameter as
unconstrained (the partitioner chooses), or, with `vmap(...,
spmd_axis_name=a)`, sharded over mesh axis `a`.

A `jit` whose inputs are all on one device but whose body constrains a value
to several devices runs on those devices (the constraint decides the device
assignment).
"""

from __future__ import annotations

from typing import Any

from polyjax_core.abstract_values import ShapedArray, get_aval
from polyjax_core.aval_sharding import AvalSharding, cotangent_type, entries_of
from polyjax_core.mesh_context import get_concrete_mesh, spec_to_sharding
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.primitive import Primitive
from polyjax_core.tree_util import prefix_subtrees, tree_flatten, tree_unflatten
from polyjax_interpreters import ad, array, mlir
from polyjax_interpreters.sharding import Sharding
from polyjax_numpy.lax._declare import define_rules

__all__ = ["batched_out_sharding", "reshard", "sharding_constraint_p", "with_sharding_constraint"]

sharding_constraint_p = Primitive("sharding_constraint")


def _is_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _resolve(s: Any, api: str) -> Sharding:
    if isinstance(s, Sharding):
        return s
    if isinstance(s, PartitionSpec):
        if get_concrete_mesh() is None:
            raise RuntimeError(
                f"{api} requires a non-empty mesh in context if you are passing "
                "`PartitionSpec`s to shardings. You can define a context mesh via "
                "`polyjax.sharding.set_mesh(mesh)`. Alternatively, provide `Sharding`s to "
                "shardings and then the mesh context manager is not required."
            )
        return spec_to_sharding(s)
    raise TypeError(
        f"{api}: shardings must be Shardings or PartitionSpecs (a pytree prefix of the "
        f"operand), got {s!r} of type {type(s).__name__}."
    )


def _apply(x: Any, shardings: Any, api: str) -> Any:
    leaves, tree = tree_flatten(x)
    if _is_leaf(shardings):
        targets = [shardings] * len(leaves)
    else:
        prefix, prefix_tree = tree_flatten(shardings, is_leaf=_is_leaf)
        subtrees = prefix_subtrees(
            prefix_tree,
            x,
            lambda: (
                f"{api}: shardings must be a pytree prefix of the operand; got "
                f"{shardings!r} for an operand of structure {tree}"
            ),
        )
        targets = [t for t, sub in zip(prefix, subtrees) for _ in tree_flatten(sub)[0]]
    out = []
    for leaf, target in zip(leaves, targets):
        sharding = _resolve(target, api)
        out.append(sharding_constraint_p.bind(leaf, sharding=sharding, inserted=()))
    return tree_unflatten(tree, out)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrains how the values of ``x`` are laid out over devices inside `jit`.

    Args:
      x: an array or a pytree of arrays.
      shardings: a `Sharding` (e.g. `NamedSharding`), a `PartitionSpec` (over the
        mesh set by `with mesh:` / `set_mesh`), or a pytree prefix of ``x`` of them.

    Returns:
      ``x``, laid out as asked. Outside `jit` it is moved there (as `device_put`).

    Raises:
      RuntimeError: a `PartitionSpec` is given and no mesh is set.
      TypeError: a leaf of ``shardings`` is not a sharding or spec.

    Example:
      >>> import polyjax, numpy as np
      >>> s = polyjax.sharding.SingleDeviceSharding(polyjax.devices()[0])
      >>> with_sharding_constraint(np.ones(2, np.float32), s)
      Array([1., 1.], dtype=float32)
    """
    return _apply(x, shardings, "with_sharding_constraint")


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Lays out ``xs`` as ``out_shardings`` says: `device_put` outside `jit`, a
    sharding constraint inside.

    In explicit mode the result's type carries the new sharding
    (``reshard(x, P(None, 'a'))`` is ``f32[8,4@a]``). Unlike JAX's ``reshard``
    this also accepts shardings over meshes of other axis types.

    Example:
      >>> import polyjax, numpy as np
      >>> s = polyjax.sharding.SingleDeviceSharding(polyjax.devices()[0])
      >>> reshard(np.zeros(2, np.float32), s).sharding == s
      True
    """
    return _apply(xs, out_shardings, "reshard")


def _abstract_eval(x: ShapedArray, *, sharding: Any, inserted: tuple) -> ShapedArray:
    return x


def _impl(x: Any, *, sharding: Any, inserted: tuple) -> Any:
    if inserted:  # a vmapped constraint applied eagerly: the layout is the partitioner's
        return array.device_put(x)
    return array.device_put(x, sharding)


def _lowering(ctx: Any, x: Any, *, sharding: Any, inserted: tuple) -> list:
    if not ctx.module_context.device_assignment:  # a one-device module: nothing to lay out
        return [x]
    return [mlir.sharding_constraint(ctx, x, sharding, ctx.avals_in[0], inserted)]


def _jvp(primals: list, tangents: list, **params: Any) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    out = sharding_constraint_p.bind(x, **params)
    if type(t) is ad.Zero:
        return out, t
    return out, sharding_constraint_p.bind(t, **params)


def _transpose(ct: Any, x: Any, **params: Any) -> list:
    if type(ct) is ad.Zero:
        return [ct]
    back = _cotangent_constraint(x.aval, params["sharding"])
    return [
        sharding_constraint_p.bind(ct, **(params if back is None else {**params, "sharding": back}))
    ]


def _cotangent_constraint(primal: Any, sharding: Any) -> Any:
    """Explicit mode: the cotangent of ``reshard(x, s)`` is resharded back to ``x``'s
    type, its unreduced and reduced axes exchanged (the cotangent of an unreduced
    value is reduced and vice versa, as in JAX). None: elsewhere (the cotangent
    keeps the constraint)."""
    typed = cotangent_type(getattr(primal, "aval_sharding", None))
    mesh = getattr(sharding, "mesh", None)
    if typed is None or mesh is None or mesh.abstract_mesh != typed.mesh:
        return None
    return spec_to_sharding(typed.spec, mesh)


def _batch(
    axis_data: Any, args: list, dims: list, *, sharding: Any, inserted: tuple
) -> tuple[Any, Any]:
    (x,), (d,) = args, dims
    if d is None:
        return sharding_constraint_p.bind(x, sharding=sharding, inserted=inserted), None
    if _explicit(sharding):
        # Explicit mode (as JAX 0.10.2): the batched dimension keeps the split its
        # operand's type gives it, whatever `spmd_axis_name` says, so that the
        # result's type says how the runtime lays it out.
        entry: Any = entries_of(get_aval(x))[d]
    else:
        spmd = axis_data.spmd_name
        entry = None if spmd is None else (tuple(spmd) if isinstance(spmd, tuple) else (spmd,))
    out = sharding_constraint_p.bind(x, sharding=sharding, inserted=(*inserted, (d, entry)))
    return out, d


def _explicit(sharding: Any) -> bool:
    mesh = getattr(sharding, "mesh", None)
    return mesh is not None and bool(mesh.abstract_mesh.explicit_axes)


def _sharding_rule(outs: list, avals: list, *, sharding: Any, inserted: tuple) -> Any:
    """The type takes the constraint's explicit axes (docs/explicit-sharding.md); a
    vmapped one's inserted dimensions are split as they are laid out (in explicit
    mode as the operand's batched dimension, `_batch`)."""
    spec = getattr(sharding, "spec", None)
    mesh = getattr(sharding, "mesh", None)
    if spec is None or mesh is None:
        return None
    entries = list(spec) + [None] * (avals[0].ndim - len(inserted) - len(spec))
    for d, entry in sorted(inserted, key=lambda t: t[0]):
        entries.insert(d, entry)
    return AvalSharding.make(
        mesh,
        entries,
        avals[0].ndim,
        getattr(spec, "unreduced", None),
        getattr(spec, "reduced", None),
    )


define_rules(
    sharding_constraint_p,
    _abstract_eval,
    _lowering,
    impl=_impl,
    jvp=_jvp,
    transpose=_transpose,
    axis_batching=_batch,
    sharding=_sharding_rule,
)


def _traced_put(x: Any, sharding: Any) -> Any:
    return sharding_constraint_p.bind(x, sharding=sharding, inserted=())


# device_put(x, sharding) inside jit constrains x's layout, as in JAX.
array.register_traced_put(_traced_put)


def batched_out_sharding(x: Any, out_sharding: Any, bd: int) -> Any:
    """A batching rule's result ``x`` (batched at ``bd``) laid out as its primitive's
    ``out_sharding`` asked for the unbatched dimensions, ``bd`` unsplit.

    For the rules that bind the primitive without ``out_sharding`` (a spec for
    the unbatched rank does not fit the batched result).
    """
    if out_sharding is None:
        return x
    sharding = _resolve(out_sharding, "out_sharding")
    return sharding_constraint_p.bind(x, sharding=sharding, inserted=((bd, None),))
