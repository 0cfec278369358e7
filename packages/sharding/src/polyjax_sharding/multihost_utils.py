"""Helpers for programs run as several processes, as ``jax.experimental.multihost_utils``.

Every function here is a collective: each process of the run must call it,
in the same order, with values of the same shapes and dtypes. They move data
with compiled cross-process programs over a mesh of every device, one row per
process (see docs/distributed.md). In a single process they work too, with
one participant.

Example:
  >>> import numpy as np
  >>> process_allgather(np.array([1.0, 2.0]))
  array([[1., 2.]], dtype=float32)
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from polyjax_core import tree_util
from polyjax_core.partition_spec import PartitionSpec
from polyjax_interpreters import backends
from polyjax_interpreters.array import (
    Array,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from polyjax_interpreters.jit import jit
from polyjax_sharding import distributed
from polyjax_sharding._mesh import Mesh
from polyjax_sharding._named_sharding import NamedSharding

__all__ = [
    "ProcessFailureError",
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "live_devices",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]


def _process_mesh() -> Mesh:
    """Every device, one row per process (each process has as many devices)."""
    devices = sorted(backends.devices(), key=lambda d: (d.process_index, d.id))
    return Mesh(np.array(devices).reshape(backends.process_count(), -1), ("processes", "local"))


def _replicated(x: Array, mesh: Mesh) -> np.ndarray:
    """The global value of ``x``, copied to every device and fetched."""
    return np.asarray(jit(lambda a: a, out_shardings=NamedSharding(mesh, PartitionSpec()))(x))


def _gather_host_values(value: Any, tiled: bool) -> np.ndarray:
    """Every process's ``value`` stacked (or, ``tiled``, concatenated) in process order."""
    local = np.asarray(value)
    mesh = _process_mesh()
    count = mesh.devices.shape[0]
    sharding = NamedSharding(mesh, PartitionSpec("processes"))
    stacked = make_array_from_process_local_data(sharding, local[None], (count, *local.shape))
    out = _replicated(stacked, mesh)
    if tiled:
        return out.reshape((count * local.shape[0], *local.shape[1:])) if local.ndim else out
    return out


def _gather_leaf(x: Any, tiled: bool) -> np.ndarray:
    if isinstance(x, Array) and not x.is_fully_addressable:
        if not tiled:
            raise ValueError(
                "Gathering global non-fully-addressable arrays only supports tiled=True"
            )
        return _replicated(x, _process_mesh())
    return _gather_host_values(x, tiled)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Gathers every process's value of each leaf, on every process.

    Args:
      in_tree: a pytree of host-local values (NumPy data, scalars, fully
        addressable Arrays) or of global Arrays that span several processes.
      tiled: concatenate the processes' values along the first axis instead of
        stacking them on a new one. Global Arrays need ``tiled=True``; their
        global value is returned.

    Returns:
      The pytree of NumPy arrays.

    Raises:
      ValueError: a global non-fully-addressable Array with ``tiled=False``.

    Example:
      >>> process_allgather({"k": np.float32(1)}, tiled=True)
      {'k': array([1.], dtype=float32)}
    """
    return tree_util.tree_map(lambda x: _gather_leaf(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Every process gets the source process's value of each leaf.

    Args:
      in_tree: a pytree of host-local values, of the same structure, shapes and
        dtypes in every process.
      is_source: whether this process is the source; by default process 0 is.
        Exactly one process should be (the first that is wins).

    Returns:
      The source's pytree, as NumPy arrays.

    Example:
      >>> broadcast_one_to_all(np.int32(7))
      array(7, dtype=int32)
    """
    if is_source is None:
        is_source = backends.process_index() == 0
    source = int(np.argmax(_gather_host_values(np.bool_(is_source), tiled=False)))
    return tree_util.tree_map(
        lambda x: np.asarray(_gather_host_values(x, tiled=False)[source]), in_tree
    )


def sync_global_devices(name: str) -> None:
    """Waits until every process reaches the call with the same ``name``.

    Raises:
      AssertionError: the processes passed different names.

    Example:
      >>> sync_global_devices("checkpoint saved")
    """
    digest = np.frombuffer(hashlib.sha256(name.encode()).digest()[:8], np.uint8)
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Checks that every process passed the same values.

    Raises:
      AssertionError: some process's values differ; the message gives the
        values of all processes (concatenated) and this one's.

    Example:
      >>> assert_equal({"step": np.int32(3)})
    """
    gathered = process_allgather(in_tree, tiled=False)
    leaves = tree_util.tree_leaves(in_tree)
    same = all(
        np.array_equal(row, np.asarray(leaf))
        for leaf, rows in zip(leaves, tree_util.tree_leaves(gathered), strict=True)
        for row in rows
    )
    if not same:
        expected = process_allgather(in_tree, tiled=True)
        raise AssertionError(f"{fail_message}. Expected: {expected}; got: {in_tree}.")


def _specs(pspecs: Any, tree: Any) -> list[PartitionSpec]:
    leaves, treedef = tree_util.tree_flatten(tree)
    if isinstance(pspecs, PartitionSpec):
        return [pspecs] * len(leaves)
    specs = treedef.flatten_up_to(pspecs)
    return [s if isinstance(s, PartitionSpec) else PartitionSpec(*s) for s in specs]


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Makes global Arrays from each process's block of them.

    Args:
      local_inputs: a pytree of this process's blocks (NumPy data or Arrays).
      global_mesh: the mesh over the devices of every process.
      pspecs: one `PartitionSpec` for the whole tree, or a tree of them.

    Returns:
      The pytree of global Arrays, sharded by ``NamedSharding(global_mesh, spec)``.

    Example:
      >>> mesh = Mesh(np.array(backends.devices()[:1]), ("x",))
      >>> host_local_array_to_global_array(np.arange(2.0), mesh, PartitionSpec("x")).shape
      (2,)
    """
    leaves, treedef = tree_util.tree_flatten(local_inputs)
    out = []
    for leaf, spec in zip(leaves, _specs(pspecs, local_inputs), strict=True):
        local = np.asarray(leaf)
        sharding = NamedSharding(global_mesh, spec)
        shape = _scale_shape(local.shape, spec, global_mesh, global_mesh.local_mesh, up=True)
        out.append(make_array_from_process_local_data(sharding, local, shape))
    return tree_util.tree_unflatten(treedef, out)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """This process's blocks of global Arrays, as Arrays over the local mesh.

    Args:
      global_inputs: a pytree of global Arrays.
      global_mesh: the mesh they are sharded over.
      pspecs: one `PartitionSpec` for the whole tree, or a tree of them.

    Returns:
      The pytree of Arrays sharded by ``NamedSharding(global_mesh.local_mesh, spec)``.

    Example:
      >>> mesh = Mesh(np.array(backends.devices()[:1]), ("x",))
      >>> g = host_local_array_to_global_array(np.arange(2.0), mesh, PartitionSpec("x"))
      >>> global_array_to_host_local_array(g, mesh, PartitionSpec("x")).shape
      (2,)
    """
    leaves, treedef = tree_util.tree_flatten(global_inputs)
    local_mesh = global_mesh.local_mesh
    out = []
    for leaf, spec in zip(leaves, _specs(pspecs, global_inputs), strict=True):
        sharding = NamedSharding(local_mesh, spec)
        shape = _scale_shape(leaf.shape, spec, global_mesh, local_mesh, up=False)
        shards = [s.data for s in leaf.addressable_shards]
        out.append(make_array_from_single_device_arrays(shape, sharding, shards))
    return tree_util.tree_unflatten(treedef, out)


def _scale_shape(
    shape: tuple[int, ...], spec: PartitionSpec, global_mesh: Mesh, local_mesh: Mesh, up: bool
) -> tuple[int, ...]:
    """A local shape scaled to the global one (``up``), or the other way."""
    out = []
    for k, size in enumerate(shape):
        axes = spec[k] if k < len(spec) else None
        axes = () if axes is None else (axes,) if isinstance(axes, str) else tuple(axes)
        ratio = 1
        for axis in axes:
            ratio *= global_mesh.shape[axis] // local_mesh.shape[axis]
        out.append(size * ratio if up else size // ratio)
    return tuple(out)


# ---------------------------------------------------------------------------
# Preemption and process failures


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the step at which to checkpoint before preemption.

    When a process receives a preemption notice (SIGTERM by default), the
    coordination service tells the others, and the processes agree on a step
    (one past the largest step any has reported). Call this at every step with
    the step number (all processes starting from the same one): it returns True
    at that step, where each process should save its checkpoint.

    Args:
      step_id: the current step.

    Returns:
      True at the agreed step after a preemption notice; False otherwise, and
      always False outside a multi-process run (there is no coordination service
      to deliver notices).

    Example:
      >>> reached_preemption_sync_point(0)
      False
    """
    state = distributed._state
    if state is None or state.preemption_sync_manager is None:
        return False
    return bool(state.preemption_sync_manager.reached_sync_point(step_id))


class ProcessFailureError(Exception):
    """Raised by `live_devices` when processes of the run failed during its block.

    Attributes:
      failed_devices: the devices of the processes that failed.
    """

    def __init__(self, failed_devices: set[Any]):
        super().__init__(f"processes failed; their devices: {sorted(d.id for d in failed_devices)}")
        self.failed_devices = failed_devices


def _live_processes(client: Any, process_ids: Sequence[int]) -> set[int]:
    # The coordination service answers once every live process among them has asked.
    return set(client.get_live_nodes(sorted(process_ids)))


@contextlib.contextmanager
def live_devices(devices: Sequence[Any]) -> Iterator[list[Any]]:
    """The devices of `devices` whose processes are alive, agreed on by all of them.

    Entering waits for every live process owning one of `devices` to enter too
    (a barrier that skips failed processes) and yields the same list of live
    devices to each. Leaving checks again: if a process that was live failed
    meanwhile, the block raises `ProcessFailureError` naming its devices. (An
    exception raised in one process's block is that process's own: the others
    are not told.)

    Args:
      devices: devices of the run; at least one must be local.

    Yields:
      The live ones, in the given order.

    Raises:
      RuntimeError: not in a multi-process run (`distributed.initialize`).
      ValueError: no device of `devices` is local.
      ProcessFailureError: a process failed during the block.

    Example (in every process of a run)::

      with live_devices(polyjax.devices()) as devices:
          mesh = Mesh(np.array(devices), ("x",))
    """
    state = distributed._state
    if state is None or state.client is None:
        raise RuntimeError("Distributed JAX not initialized.")
    devices = list(devices)
    if not any(d.process_index == state.process_id for d in devices):
        raise ValueError("live_devices: the devices must include at least one local device")
    alive = _live_processes(state.client, {d.process_index for d in devices})
    live = [d for d in devices if d.process_index in alive]
    yield live
    still = _live_processes(state.client, alive)
    failed = {d for d in live if d.process_index not in still}
    if failed:
        raise ProcessFailureError(failed)
