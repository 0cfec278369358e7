"""`pmap` in a run of several processes: one mapped axis over every process's devices.

Each process calls the pmapped function with its own data, whose mapped axis
has one position per local device. The mapped axis of the computation spans
the devices of every process, in process order, so ``axis_index`` is global
and the collectives cross processes. Each process's blocks become one global
Array per argument (sharded over a 1-D mesh of all those devices), pmap's
usual `shard_map` runs on them as one cross-process `jit`, and each process
gets back its own blocks of the results: Arrays over its local devices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from polyjax_core.partition_spec import PartitionSpec
from polyjax_core.tree_util import tree_flatten, tree_map, tree_unflatten
from polyjax_interpreters import backends
from polyjax_interpreters.array import (
    Array,
    device_put,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from polyjax_sharding._mesh import Mesh
from polyjax_sharding._named_sharding import NamedSharding

__all__ = ["call", "global_devices"]


def global_devices(devices: Sequence[Any] | None, backend: str | None) -> list[Any] | None:
    """The devices of the mapped axis, or None when they are all this process's.

    By default every device of every process, process by process; with
    ``devices`` given, those (a pmap over this process's devices alone stays
    local, its collectives too).

    Raises:
      ValueError: ``devices`` has none of this process's devices.
    """
    if devices is None:
        return sorted(backends.devices(backend), key=lambda d: d.process_index)
    devices = list(devices)
    here = backends.process_index(backend)
    mine = [d.process_index == here for d in devices]
    if not any(mine):
        raise ValueError(
            f"pmap's devices include none of process {here}'s devices, so it has no part of "
            "the mapped axis: call it only in the processes whose devices it names."
        )
    return None if all(mine) else devices


def call(
    compiled: Callable[..., Any],
    name: Any,
    args: tuple,
    static: tuple[int, ...],
    axes: Sequence[int | None],
    n: int,
    devices: list[Any],
) -> Any:
    """Runs pmap's ``compiled`` jit on global Arrays built from this process's ``args``.

    Arguments that are global Arrays already (not fully addressable) are taken
    whole, as JAX does: their mapped axis is the global one.

    Args:
      compiled: pmap's jit over the mesh of ``devices``, taking global Arrays.
      name: the mapped axis name.
      args: the positional arguments as passed (static ones included).
      static: the positions of the static arguments.
      axes: the mapped axis (or None) of each leaf of the dynamic arguments.
      n: the mapped size of this process's arguments.
      devices: the devices of the mapped axis, over several processes.

    Returns:
      The results, each the block of the global result on this process's devices.

    Raises:
      ValueError: ``n`` is not the number of this process's devices in
        ``devices`` (of all of them, for global Arrays), or the mapped
        arguments mix global Arrays and process parts.
    """
    mesh, local = _meshes(tuple(devices), name)
    dyn_pos = [i for i in range(len(args)) if i not in static]
    leaves, tree = tree_flatten(tuple(args[i] for i in dyn_pos))
    # Global Arrays (over several processes) are taken whole, as JAX does.
    mapped = [_is_global(x) for x, a in zip(leaves, axes) if a is not None]
    whole = all(mapped)
    if any(mapped) and not whole:
        raise ValueError(
            "pmap across processes takes for its mapped arguments either each process's "
            "parts or global Arrays (spanning the processes), not both."
        )
    if n != (mesh.size if whole else local.size):
        needs = (
            f"global Arrays, whose mapped axis needs one position per device ({mesh.size})"
            if whole
            else "its own part, whose mapped axis needs one position per local device "
            f"({local.size} in process {backends.process_index()})"
        )
        raise ValueError(
            f"pmap across {backends.process_count()} processes maps over the devices of every "
            f"process: each process passes {needs}, but the mapped axis has size {n}."
        )
    glob = [_to_global(x, a, mesh, name) for x, a in zip(leaves, axes)]
    full = list(args)
    for i, v in zip(dyn_pos, tree_unflatten(tree, glob)):
        full[i] = v
    return tree_map(lambda y: _to_local(y, local), compiled(*full))


@functools.lru_cache(maxsize=64)
def _meshes(devices: tuple, name: Any) -> tuple[Mesh, Mesh]:
    """The 1-D mesh of the mapped axis and this process's block of it."""
    mesh = Mesh(np.array(devices), (name,))
    return mesh, mesh.local_mesh


def _to_global(x: Any, axis: int | None, mesh: Mesh, name: Any) -> Any:
    """The global Array whose block on this process's devices is ``x``.

    Processes may hold different numbers of the devices (``devices=``), so the
    global shape comes from the mesh, not from scaling the local one.
    """
    if axis is None and type(x) in (bool, int, float, complex):
        return x  # jit keeps its weak type; each process's devices get its value
    shape = list(np.shape(x))
    if axis is None:
        spec = PartitionSpec()
    else:
        axis %= len(shape)
        shape[axis] = mesh.size
        spec = PartitionSpec(*(name if k == axis else None for k in range(len(shape))))
    sharding = NamedSharding(mesh, spec)
    if _is_global(x):  # already the whole argument: laid out over the mapped axis
        return x if x.sharding == sharding else device_put(x, sharding)
    blocks = _device_blocks(x, axis, mesh.local_mesh)
    if blocks is not None:  # already in place (an earlier pmap's result): no copy
        return make_array_from_single_device_arrays(tuple(shape), sharding, blocks)
    return make_array_from_process_local_data(sharding, x, tuple(shape))


def _is_global(x: Any) -> bool:
    return isinstance(x, Array) and not x.is_fully_addressable


def _device_blocks(x: Any, axis: int | None, local: Mesh) -> list[Array] | None:
    """The shards of ``x`` if each local device already holds its block, else None."""
    if not isinstance(x, Array) or not x.is_fully_addressable:
        return None
    shards = {s.device: s for s in x.addressable_shards}
    blocks = []
    for j, device in enumerate(local.devices.flat):
        shard = shards.get(device)
        if shard is None:
            return None
        want = [(j, j + 1) if k == axis else (0, n) for k, n in enumerate(x.shape)]
        got = [sl.indices(n)[:2] for sl, n in zip(shard.index, x.shape)]
        if got != want:
            return None
        blocks.append(shard.data)
    return blocks


def _to_local(y: Array, local: Mesh) -> Array:
    """This process's block of the global result ``y``, an Array over its devices."""
    spec = tuple(y.sharding.spec)
    while spec and spec[-1] is None:  # printed as JAX's: P('i',), not P('i', None)
        spec = spec[:-1]
    shape = tuple(
        local.size if k < len(spec) and spec[k] is not None else d for k, d in enumerate(y.shape)
    )
    shards = [s.data for s in y.addressable_shards]
    return make_array_from_single_device_arrays(
        shape, NamedSharding(local, PartitionSpec(*spec)), shards
    )
