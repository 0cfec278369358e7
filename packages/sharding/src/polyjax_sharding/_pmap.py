"""`pmap`: map a function over a leading axis, one position per device.

`pmap(f)(x)` runs ``f(x[i])`` on device ``i`` for every position ``i`` of the
mapped axis. It is `shard_map` over a 1-D mesh of the first ``n`` devices
(``n`` the mapped size), as JAX itself now builds it: mapped arguments are
split over the mesh axis (`PartitionSpec(axis)`), each device sees its block
with the mapped dimension of size one removed, and the results are stacked
back along ``out_axes``. The whole call is one `jit`, so a call on arrays
that a previous call produced (sharded over the same devices) dispatches
through jit's fast path without moving data.

A `pmap` called directly inside another `pmap`'s function runs on a 2-D mesh
(outer x inner positions) when there are devices enough and Shardy is on: the
outer call first traces its function abstractly to find the inner pmap's axis
and size, then maps its own axis with `shard_map` over the first mesh axis
(the second left to the partitioner) and the inner one with a nested
`shard_map` over the second. Otherwise (or deeper) the inner axis is mapped
with `vmap` on the outer call's devices (same values, same collectives).

In a run of several processes the mapped axis spans the devices of every
process, each passing its own part (`_pmap_global`).
"""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from polyjax_core import axis_env
from polyjax_core.abstract_values import ShapeDtypeStruct, get_aval, shaped_abstractify
from polyjax_core.config import use_shardy_partitioner as shardy
from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tracing import Tracer
from polyjax_core.tree_util import tree_flatten, tree_unflatten
from polyjax_interpreters import backends
from polyjax_interpreters.array import Array
from polyjax_interpreters.batching import vmap
from polyjax_interpreters.jit import eval_shape, jit
from polyjax_numpy.lax import expand_dims, squeeze
from polyjax_sharding import _pmap_global
from polyjax_sharding._mesh import Mesh
from polyjax_sharding._shard_map import shard_map

__all__ = ["pmap"]

_INTERNAL_AXIS = "_internal_pmap_axis_name"


class _State(threading.local):
    n: int = 0  # how many pmap bodies are being traced, one inside the other
    probe: list | None = None  # (name, size) of the inner pmaps met while probing
    enclosing: tuple | None = None  # (2-D mesh, inner name, inner size) of the outer call


_depth = _State()


def _argnums(x: int | Iterable[int]) -> tuple[int, ...]:
    return (operator.index(x),) if isinstance(x, int) else tuple(map(operator.index, x))


def _flat_axes(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One axis (int or None) per leaf of ``tree`` from a pytree prefix of axes."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, list):
        prefix = tuple(prefix)
    axes, axes_tree = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = axes_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"pmap {what} specification must be a tree prefix of the corresponding value, got "
            f"specification {prefix} for value tree {tree_flatten(tree)[1]}: {e}"
        ) from None
    out: list[Any] = []
    for a, sub in zip(axes, subtrees):
        out += [a] * len(tree_flatten(sub)[0])
    return out


def _mapped_size(
    leaves: Sequence[Any], axes: Sequence[Any], names_of: Callable[[], Sequence[str]]
) -> int | None:
    sizes: dict[int, list] = {}
    for i, (x, ax) in enumerate(zip(leaves, axes)):
        if ax is None:
            continue
        aval = get_aval(x)
        if not -len(aval.shape) <= ax < len(aval.shape):
            raise ValueError(
                f"pmap was requested to map its argument along axis {ax}, which implies that "
                f"its rank should be at least {max(ax, -ax - 1) + 1}, but is only "
                f"{len(aval.shape)} (its shape is {aval.shape})"
            )
        sizes.setdefault(aval.shape[ax], []).append((i, ax % len(aval.shape), aval))
    if len(sizes) > 1:
        names = names_of()
        lines = [
            f"  * one axis had size {n}: axis {ax} of argument {names[i]} of type {a.str_short()}"
            for n, items in sizes.items()
            for i, ax, a in items[:1]
        ]
        raise ValueError(
            "pmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)
        )
    return next(iter(sizes), None)


def _devices_for(n: int, devices: Any, backend: str | None) -> list[Any]:
    if devices is not None:
        devices = list(devices)
        if len(devices) != n:
            raise ValueError(
                "Leading axis size of input to pmapped function must equal the number of "
                f"local devices passed to pmap. Got axis_size={n}, "
                f"num_local_devices={len(devices)}."
            )
        return devices
    available = backends.local_devices(backend=backend)
    if n > len(available):
        raise ValueError(
            f"compiling computation that requires {n} logical devices, but only "
            f"{len(available)} XLA devices are available (num_replicas={n})"
        )
    return available[:n]


def pmap(
    fun: Callable[..., Any],
    axis_name: Any = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[Any] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> Callable[..., Any]:
    """Maps ``fun`` over an axis of its arguments, one position per device.

    Args:
      fun: the per-position function; collectives may name ``axis_name``.
      axis_name: the name of the mapped axis, for collectives.
      in_axes: per argument (a pytree prefix of the positional arguments),
        the mapped axis, or None for an argument passed whole to every device.
      out_axes: per output (a pytree prefix), where the mapped axis goes, or
        None for an output that is the same on every device.
      static_broadcasted_argnums: positional arguments passed as Python
        values (hashable), the same for every device.
      devices: the devices to run on (as many as the mapped size); default
        the first devices of the backend. In a run of several processes, by
        default every device of every process: each process passes its own
        part, one position per local device (docs/distributed.md).
      backend: the platform name, when ``devices`` is not given.
      axis_size: the mapped size when no argument is mapped.
      donate_argnums: arguments whose buffers may be reused for the outputs.

    Returns:
      The mapped function. Its results are `Array`s sharded over the devices
      (over several processes: this process's blocks, on its devices).

    Raises:
      ValueError: mapped sizes differ (naming the arguments), the mapped size
        exceeds the number of devices, or ``devices`` has another length; over
        several processes, the mapped size is not the local device count.

    Example:
      >>> import numpy as np
      >>> from polyjax_numpy.lax import psum
      >>> pmap(lambda x: psum(x, "i"), axis_name="i")(np.arange(1.0) + 1)   # one device
      Array([1.], dtype=float32)
    """
    static = _argnums(static_broadcasted_argnums)
    donate = _argnums(donate_argnums)
    name = axis_name if axis_name is not None else _INTERNAL_AXIS

    @functools.lru_cache(maxsize=64)
    def compiled(n: int, devs: tuple, n_args: int) -> Any:
        mesh = Mesh(np.array(devs), (name,))
        dyn_donate = tuple(i for i in donate if i not in static)
        return jit(
            functools.partial(_run, fun, mesh, name, in_axes, out_axes, static),
            static_argnums=tuple(i for i in static if i < n_args),
            donate_argnums=dyn_donate,
        )

    @functools.lru_cache(maxsize=64)
    def compiled2(n: int, inner_name: Any, m: int, devs: tuple, n_args: int) -> Any:
        mesh = Mesh(np.array(devs).reshape(n, m), (name, inner_name))
        run = functools.partial(
            _run, fun, mesh, name, in_axes, out_axes, static, manual=name,
            enclosing=(mesh, inner_name, m),
        )  # fmt: skip
        return jit(
            run,
            static_argnums=tuple(i for i in static if i < n_args),
            donate_argnums=tuple(i for i in donate if i not in static),
        )

    # Calls with the same argument shapes (all arrays, outside other pmaps) go
    # straight to the jit that an earlier call chose: pmap adds one dict lookup.
    fast: dict[Any, Any] = {}

    @functools.wraps(fun)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and not _depth.n:
            try:
                key = tuple(a.shape for a in args) if not static else None
            except AttributeError:
                key = None
            f = fast.get(key) if key is not None else None
            if f is not None:
                return f(*args)
        else:
            key = None
        if kwargs:
            raise NotImplementedError("pmap does not support keyword arguments")
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        axes = _flat_axes(in_axes, dyn, "in_axes")
        leaves = tree_flatten(dyn)[0]
        n = _mapped_size(leaves, axes, lambda: _arg_names(fun, args, static))
        unmapped = n is None
        if n is None:
            if axis_size is None:
                raise ValueError("pmap requires at least one argument with a mapped axis.")
            n = axis_size
        if _depth.n:  # inside another pmap's function
            if _depth.probe is not None:
                _depth.probe.append((name, n))
            elif _depth.n == 1 and _depth.enclosing is not None:
                mesh2, inner_name, inner_size = _depth.enclosing
                if (inner_name, inner_size) == (name, n):
                    return _run(fun, mesh2, name, in_axes, out_axes, static, *args, manual=name)
            return _nested(fun, name, in_axes, out_axes, static, args, n)
        if backends.process_count(backend) > 1 and not _traced(leaves):
            gdevs = _pmap_global.global_devices(devices, backend)
            if gdevs is not None:
                if unmapped:
                    raise ValueError("pmap requires at least one argument with a mapped axis.")
                f = compiled(len(gdevs), tuple(gdevs), len(args))
                return _pmap_global.call(f, name, args, static, axes, n, gdevs)
        inner = _probe(fun, args, static, in_axes, name, n) if devices is None else None
        available = backends.local_devices(backend=backend)
        if inner is not None and n * inner[1] <= len(available) and shardy.value:
            devs = tuple(available[: n * inner[1]])
            f = compiled2(n, inner[0], inner[1], devs, len(args))
        else:
            devs = tuple(_devices_for(n, devices, backend))
            f = compiled(n, devs, len(args))
        if key is not None and all(type(a) is Array for a in args) and len(fast) < 64:
            fast[key] = f
        return f(*args)

    return mapped


def _traced(leaves: Sequence[Any]) -> bool:
    """Whether some argument is a tracer: inside jit, grad... pmap stays process-local, as JAX's."""
    return any(isinstance(x, Tracer) for x in leaves)


def _arg_names(fun: Any, args: tuple, static: tuple) -> list[str]:
    """A name per flat leaf of the dynamic arguments, for messages."""
    import inspect  # noqa: PLC0415

    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        if i in static:
            continue
        base = params[i] if i < len(params) else f"args[{i}]"
        names += [base] * len(tree_flatten(a)[0])
    return names


def _nested(fun, name, in_axes, out_axes, static, args, n) -> Any:
    dyn_pos = [i for i in range(len(args)) if i not in static]

    def f(*dyn: Any) -> Any:
        full = list(args)
        for i, v in zip(dyn_pos, dyn):
            full[i] = v
        return fun(*full)

    in_ax = in_axes if isinstance(in_axes, int) or in_axes is None else tuple(in_axes)
    dyn = [args[i] for i in dyn_pos]
    return vmap(f, in_axes=in_ax, out_axes=out_axes, axis_name=name, axis_size=n)(*dyn)


def _probe(fun, args, static, in_axes, name, n) -> tuple[Any, int] | None:
    """(name, size) of the one pmap that ``fun`` calls directly, found by an abstract trace."""
    dyn_pos = [i for i in range(len(args)) if i not in static]
    dyn = tuple(args[i] for i in dyn_pos)
    leaves, tree = tree_flatten(dyn)
    axes = _flat_axes(in_axes, dyn, "in_axes")
    per = []
    for x, a in zip(leaves, axes):
        aval = shaped_abstractify(x)
        shape = aval.shape if a is None else tuple(np.delete(np.array(aval.shape), a % aval.ndim))
        per.append(ShapeDtypeStruct(tuple(int(d) for d in shape), aval.dtype))

    def per_position(*flat: Any) -> Any:
        full = list(args)
        for i, v in zip(dyn_pos, tree_unflatten(tree, flat)):
            full[i] = v
        return fun(*full)

    saved = (_depth.probe, _depth.n)
    _depth.probe, _depth.n = [], 1
    try:
        with axis_env.extend_axis_env([(name, n)]):
            eval_shape(per_position, *per)
        found = set(_depth.probe)
    except Exception:  # the real call reports it
        found = set()
    finally:
        _depth.probe, _depth.n = saved
    return found.pop() if len(found) == 1 else None


def _run(fun, mesh, name, in_axes, out_axes, static, *args, manual=None, enclosing=None) -> Any:
    """The body of pmap's jit: move mapped axes to the front, shard_map, move them back.

    ``manual``: the one mesh axis made manual when the mesh has others (nested
    pmaps); ``enclosing``: what a pmap called inside may run on.
    """
    dyn_pos = [i for i in range(len(args)) if i not in static]
    dyn = tuple(args[i] for i in dyn_pos)
    leaves, tree = tree_flatten(dyn)
    axes = _flat_axes(in_axes, dyn, "in_axes")
    front = [x if a is None else _moveaxis(x, a, 0) for x, a in zip(leaves, axes)]
    specs = [PartitionSpec() if a is None else PartitionSpec(name) for a in axes]
    out_box: list[Any] = []

    def body(*flat: Any) -> list[Any]:
        blocks = [x if a is None else squeeze(x, (0,)) for x, a in zip(flat, axes)]
        full = list(args)
        for i, v in zip(dyn_pos, tree_unflatten(tree, blocks)):
            full[i] = v
        saved = _depth.enclosing
        _depth.n += 1
        _depth.enclosing = enclosing
        try:
            out = fun(*full)
        finally:
            _depth.n -= 1
            _depth.enclosing = saved
        out_leaves, out_tree = tree_flatten(out)
        o_axes = _flat_axes(out_axes, out, "out_axes")
        out_box.append((out_tree, o_axes))
        return [y if a is None else expand_dims(y, (0,)) for y, a in zip(out_leaves, o_axes)]

    # The output specs depend on the output structure, known once the body is traced.
    mapped = shard_map(
        body,
        mesh=mesh,
        in_specs=tuple(specs),
        out_specs=_LazySpecs(out_box, name),
        check_vma=False,
        axis_names=frozenset() if manual is None else frozenset({manual}),
    )
    outs = mapped(*front)
    out_tree, o_axes = out_box[0]
    outs = [y if a is None else _moveaxis(y, 0, a) for y, a in zip(outs, o_axes)]
    return tree_unflatten(out_tree, outs)


class _LazySpecs:
    """Output specs known only once the body is traced (shard_map asks after tracing)."""

    def __init__(self, box: list, name: Any):
        self.box, self.name = box, name

    def resolve(self) -> list[PartitionSpec]:
        _, axes = self.box[0]
        return [PartitionSpec() if a is None else PartitionSpec(self.name) for a in axes]


def _moveaxis(x: Any, src: int, dst: int) -> Any:
    from polyjax_interpreters import batching  # noqa: PLC0415

    nd = len(get_aval(x).shape)
    return batching.moveaxis(x, src % nd, dst % nd)
