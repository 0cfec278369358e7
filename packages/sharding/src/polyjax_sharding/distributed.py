"""The multi-process runtime: one process per host over XLA's distributed service.

`initialize` joins this process to a multi-process run before any backend
starts: process 0 starts jaxlib's coordination service at the coordinator
address, every process connects a distributed client to it, and the CPU
client is then created with that client and gloo collectives over TCP, so its
device list holds the devices of every process and compiled programs'
collectives cross processes. `shutdown` leaves the run; `is_initialized` says
whether this process is in one. See docs/distributed.md.

Example:
  >>> from polyjax_sharding import distributed
  >>> distributed.is_initialized()
  False
"""

from __future__ import annotations

import atexit
import logging
import socket
import time
from collections.abc import Sequence
from typing import Any

from polyjax_interpreters import backends
from polyjax_sharding import _cluster

__all__ = ["initialize", "is_initialized", "shutdown"]

logger = logging.getLogger("polyjax")


class _State:
    """This process's membership in a multi-process run."""

    def __init__(self, coordinator_address: str, num_processes: int, process_id: int) -> None:
        self.coordinator_address = coordinator_address
        self.num_processes = num_processes
        self.process_id = process_id
        self.service: Any = None  # only in process 0
        self.client: Any = None
        # jaxlib's preemption sync manager (multihost_utils.reached_preemption_sync_point).
        self.preemption_sync_manager: Any = None
        # Kept for inspection: each CPU process owns its own devices anyway.
        self.local_device_ids: Sequence[int] | None = None


_state: _State | None = None


def is_initialized() -> bool:
    """Whether `initialize` joined this process to a multi-process run (and no `shutdown` since).

    Example:
      >>> from polyjax_sharding import distributed
      >>> distributed.is_initialized()
      False
    """
    return _state is not None


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
) -> None:
    """Joins this process to a multi-process run; call it once, before any device is used.

    Arguments left ``None`` are read from the environment: the
    ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID``
    variables, then SLURM's or Open MPI's (see docs/distributed.md).

    Args:
      coordinator_address: ``"host:port"`` of process 0, where the coordination
        service listens; every process gives the same one.
      num_processes: how many processes take part.
      process_id: this process's index, ``0 <= process_id < num_processes``.
      local_device_ids: the local devices this process owns (kept, not
        used: the CPU backend always gives each process its own devices).
      cluster_detection_method: ``"slurm"`` or ``"ompi"`` to read only that
        cluster's variables, ``"deactivate"`` to read none.
      initialization_timeout: seconds to wait for every process to connect.
      heartbeat_timeout_seconds: seconds without a heartbeat after which a
        process counts as dead and the others stop with an error.
      shutdown_timeout_seconds: seconds `shutdown` waits for the others.
      coordinator_bind_address: the address process 0's service listens on
        (default: all interfaces, at the coordinator address's port).

    Raises:
      RuntimeError: called twice, or after a backend started, or the
        coordinator could not be reached within ``initialization_timeout``.
      ValueError: a parameter is missing (and not in the environment) or out
        of range.

    Example (two processes, each running)::

      polyjax.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=i)
    """
    global _state
    if _state is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    if backends.backends_are_initialized():
        raise RuntimeError(
            "jax.distributed.initialize() must be called before any JAX calls that might "
            "initialise the XLA backend. This includes any computation, but also calls to "
            "jax.devices, jax.device_put, and others."
        )
    if isinstance(local_device_ids, int):
        local_device_ids = [local_device_ids]
    given = _cluster.DetectedParams(
        coordinator_address, num_processes, process_id, local_device_ids
    )
    address, count, pid, local_ids = _cluster.detect(given, cluster_detection_method)
    if address is None:
        raise ValueError("coordinator_address should be defined.")
    if count is None:
        raise ValueError("Number of processes must be defined.")
    if pid is None:
        raise ValueError("The process id of the current process must be defined.")
    if not 0 <= pid < count:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < "
            f"num_processes. Got process_id={pid}, num_processes={count}."
        )
    state = _State(address, count, pid)
    state.local_device_ids = local_ids
    if pid == 0:
        state.service = _start_service(
            address, coordinator_bind_address, count, heartbeat_timeout_seconds,
            shutdown_timeout_seconds,
        )  # fmt: skip
    try:
        state.client = _connect(state, initialization_timeout, heartbeat_timeout_seconds,
                                shutdown_timeout_seconds)  # fmt: skip
    except BaseException:
        if state.service is not None:
            state.service.shutdown()
        raise
    from jaxlib import _jax

    # Preemption notices (SIGTERM by default) reach every process through the
    # coordination service; the manager agrees on the step to checkpoint at.
    state.preemption_sync_manager = _jax.create_preemption_sync_manager()
    state.preemption_sync_manager.initialize(state.client)
    backends.set_cpu_client_options(
        distributed_client=state.client,
        node_id=pid,
        num_nodes=count,
        collectives=_jax.make_gloo_tcp_collectives(state.client),
    )
    _state = state
    logger.info("Connected to the coordinator at %s as process %d of %d", address, pid, count)


def _start_service(
    address: str, bind_address: str | None, count: int, heartbeat: int, shutdown_timeout: int
) -> Any:
    from jaxlib import _jax

    if bind_address is None:
        bind_address = "[::]:" + address.rsplit(":", 1)[1]
    return _jax.get_distributed_runtime_service(
        bind_address, count, heartbeat_timeout=heartbeat, shutdown_timeout=shutdown_timeout
    )


def _connect(state: _State, init_timeout: int, heartbeat: int, shutdown_timeout: int) -> Any:
    from jaxlib import _jax

    deadline = time.monotonic() + init_timeout
    _wait_for_coordinator(state, init_timeout, deadline)
    # No missed-heartbeat callback: jaxlib cannot hand the error's status to
    # Python (the call dies in the conversion), so its own handler is kept. It
    # ends this process with a message saying that another process died: the
    # main thread may be blocked in a collective waiting for the dead one.
    client = _jax.get_distributed_runtime_client(
        state.coordinator_address,
        state.process_id,
        init_timeout=max(1, int(deadline - time.monotonic())),
        heartbeat_timeout=heartbeat,
        shutdown_timeout=shutdown_timeout,
        use_compression=True,
    )
    client.connect()
    return client


def _wait_for_coordinator(state: _State, init_timeout: int, deadline: float) -> None:
    """Waits until the coordinator's port accepts connections; raises after the deadline.

    jaxlib's own connect ends the process when it times out, so this process
    first checks that someone listens at the address, and fails with a Python
    error naming it if nobody does.
    """
    host, _, port = state.coordinator_address.rpartition(":")
    host = host.strip("[]")
    last: OSError | None = None
    while True:
        left = deadline - time.monotonic()
        try:
            with socket.create_connection((host, int(port)), timeout=max(0.1, min(1.0, left))):
                return
        except OSError as e:
            last = e
        if time.monotonic() >= deadline:
            break
        time.sleep(min(0.2, max(0.0, deadline - time.monotonic())))
    raise RuntimeError(
        f"Process {state.process_id} of {state.num_processes} could not connect to the "
        f"coordinator at {state.coordinator_address!r} within {init_timeout} s "
        f"(initialization_timeout): is process 0 running and listening there? ({last})"
    )


def shutdown() -> None:
    """Leaves the multi-process run (a no-op when not in one).

    Waits, up to the shutdown timeout, for the other processes to shut down
    too; then stops process 0's coordination service.

    Example:
      >>> from polyjax_sharding import distributed
      >>> distributed.shutdown()
    """
    global _state
    state, _state = _state, None
    if state is None:
        return
    if state.preemption_sync_manager is not None:
        state.preemption_sync_manager.shutdown()
    if state.client is not None:
        state.client.shutdown()
    if state.service is not None:
        state.service.shutdown()


atexit.register(shutdown)
