"""Reading a process's place in a multi-process run from its environment.

Each supported cluster environment says how to find the coordinator's
address, the number of processes, this process's id and the devices it owns
(``local_device_ids``) from environment variables that its launcher sets:

* ``JAX_COORDINATOR_ADDRESS`` / ``JAX_NUM_PROCESSES`` / ``JAX_PROCESS_ID``
  fill whichever arguments of ``initialize`` were left out (any launcher);
* SLURM (``SLURM_JOB_ID`` set): ``SLURM_NTASKS`` processes, rank
  ``SLURM_PROCID``, the coordinator on the first host of ``SLURM_STEP_NODELIST``;
* Open MPI (``OMPI_MCA_orte_hnp_uri`` set): ``OMPI_COMM_WORLD_SIZE`` processes,
  rank ``OMPI_COMM_WORLD_RANK``, the coordinator on the launcher's first address.

The coordinator's port is derived from the job id, so every process of a job
computes the same one without talking to the others.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

__all__ = ["DetectedParams", "detect", "slurm_first_host"]

# Ports 61440..65535: a job id picks one, the same in every process of the job.
_PORT_BASE = 65536 - 2**12


def _job_port(job_id: int) -> int:
    return job_id % 2**12 + _PORT_BASE


class DetectedParams(NamedTuple):
    coordinator_address: str | None
    num_processes: int | None
    process_id: int | None
    local_device_ids: Sequence[int] | None


def slurm_first_host(nodelist: str) -> str:
    """The first host of a SLURM host list: ``"node[007-010],gpu2"`` -> ``"node007"``."""
    match = re.match(r"([^,\[]+)(?:\[([^\]]*)\])?", nodelist.strip())
    if match is None:
        raise ValueError(f"Cannot read the SLURM host list {nodelist!r}.")
    prefix, ranges = match.groups()
    if ranges is None:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def _slurm(env: Mapping[str, str]) -> DetectedParams:
    host = slurm_first_host(env["SLURM_STEP_NODELIST"])
    return DetectedParams(
        f"{host}:{_job_port(int(env['SLURM_JOB_ID']))}",
        int(env["SLURM_NTASKS"]),
        int(env["SLURM_PROCID"]),
        [int(env["SLURM_LOCALID"])],
    )


def _ompi(env: Mapping[str, str]) -> DetectedParams:
    # "<jobfamily>.<vpid>;tcp://<ip>[,<ip>...]:<port>": the job family's high
    # bits name the job.
    uri = env["OMPI_MCA_orte_hnp_uri"]
    job = int(uri.split(".", 1)[0]) >> 12
    match = re.search(r"tcp://([^,:;]+)", uri)
    if match is None:
        raise ValueError(f"Cannot find the launcher's address in OMPI_MCA_orte_hnp_uri={uri!r}.")
    return DetectedParams(
        f"{match.group(1)}:{_job_port(job)}",
        int(env["OMPI_COMM_WORLD_SIZE"]),
        int(env["OMPI_COMM_WORLD_RANK"]),
        [int(env["OMPI_COMM_WORLD_LOCAL_RANK"])],
    )


# Name -> (whether the environment is present, how to read it), in detection order.
_CLUSTERS = {
    "slurm": (lambda env: "SLURM_JOB_ID" in env, _slurm),
    "ompi": (lambda env: "OMPI_MCA_orte_hnp_uri" in env, _ompi),
}


def _from_jax_variables(env: Mapping[str, str]) -> DetectedParams:
    def number(name: str) -> int | None:
        text = env.get(name)
        return None if text is None or not text.strip() else int(text)

    return DetectedParams(
        env.get("JAX_COORDINATOR_ADDRESS") or None,
        number("JAX_NUM_PROCESSES"),
        number("JAX_PROCESS_ID"),
        None,
    )


def detect(
    given: DetectedParams,
    cluster_detection_method: str | None = None,
    env: Mapping[str, str] | None = None,
) -> DetectedParams:
    """Fills the parameters left ``None`` in ``given`` from the environment.

    The ``JAX_*`` variables come first, then a cluster's: the one named by
    ``cluster_detection_method`` (``"slurm"``, ``"ompi"``), or else the first
    whose variables are present. ``"deactivate"`` turns cluster detection off.

    Raises:
      ValueError: ``cluster_detection_method`` names an unknown cluster, or one
        whose variables are absent.
    """
    env = os.environ if env is None else env
    params = _merge(given, _from_jax_variables(env))
    if cluster_detection_method == "deactivate" or None not in params[:3]:
        return params
    if cluster_detection_method is not None:
        found = _CLUSTERS.get(cluster_detection_method)
        if found is None:
            raise ValueError(
                "Automatic Distributed initialization can not proceed: "
                f"{cluster_detection_method} is not supported."
            )
        if not found[0](env):
            raise ValueError(
                "Automatic Distributed initialization can not proceed: "
                f"{cluster_detection_method} is supported but not functional in this environment."
            )
        return _merge(params, found[1](env))
    for present, read in _CLUSTERS.values():
        if present(env):
            return _merge(params, read(env))
    return params


def _merge(given: DetectedParams, found: DetectedParams) -> DetectedParams:
    return DetectedParams(*(g if g is not None else f for g, f in zip(given, found, strict=True)))
