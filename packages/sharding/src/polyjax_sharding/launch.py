"""Starting a multi-process run on this machine: N copies of a script on loopback.

`launch` picks a free port on 127.0.0.1, starts ``n`` Python processes running
the same script with ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and
``JAX_PROCESS_ID`` set (so a bare ``polyjax.distributed.initialize()`` joins
them), waits for all of them up to a deadline, and always kills every child
still running when it returns or fails. Run it as::

    python -m polyjax.distributed.launch -n 2 script.py [ARGS ...]

Example:
  >>> import sys
  >>> [r.returncode for r in launch(2, [sys.executable, "-c", "pass"], timeout=60)]
  [0, 0]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import IO, NamedTuple

__all__ = ["ProcessResult", "free_port", "launch", "main"]


class ProcessResult(NamedTuple):
    """How one process of a run ended: its exit status (None: killed at the deadline), output."""

    process_id: int
    returncode: int | None
    stdout: str
    stderr: str


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(
    num_processes: int,
    command: Sequence[str],
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
) -> list[ProcessResult]:
    """Runs ``command`` as ``num_processes`` processes of one multi-process run.

    Args:
      num_processes: how many processes to start.
      command: the program and its arguments, the same for every process.
      timeout: seconds to wait for all of them; those still running then are
        killed (their ``returncode`` is ``None``).
      env: extra environment variables for every process.

    Returns:
      One `ProcessResult` per process, by process id.
    """
    if num_processes < 1:
        raise ValueError(f"num_processes must be at least 1, got {num_processes}.")
    address = f"127.0.0.1:{free_port()}"
    procs: list[tuple[subprocess.Popen, IO[str], IO[str]]] = []
    try:
        for i in range(num_processes):
            child_env = {
                **os.environ,
                **(env or {}),
                "JAX_COORDINATOR_ADDRESS": address,
                "JAX_NUM_PROCESSES": str(num_processes),
                "JAX_PROCESS_ID": str(i),
            }
            # Files, not pipes: a child that writes much must not block on a full pipe.
            out = tempfile.TemporaryFile(mode="w+")
            err = tempfile.TemporaryFile(mode="w+")
            proc = subprocess.Popen(list(command), env=child_env, stdout=out, stderr=err)
            procs.append((proc, out, err))
        deadline = time.monotonic() + timeout
        codes: list[int | None] = []
        for proc, _, _ in procs:
            try:
                codes.append(proc.wait(timeout=max(0.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                codes.append(None)
        return [
            ProcessResult(i, code, _read(out), _read(err))
            for i, (code, (_, out, err)) in enumerate(zip(codes, procs, strict=True))
        ]
    finally:
        for proc, stdout, stderr in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            stdout.close()
            stderr.close()


def _read(f: IO[str]) -> str:
    f.seek(0)
    return f.read()


def main(argv: Sequence[str] | None = None) -> int:
    """The command line ``-n N [--timeout S] script.py [ARGS ...]``; prints every output."""
    parser = argparse.ArgumentParser(
        prog="python -m polyjax.distributed.launch",
        description="Run a script as N processes of one multi-process run on 127.0.0.1.",
    )
    parser.add_argument("-n", "--num-processes", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    results = launch(ns.num_processes, [sys.executable, ns.script, *ns.args], ns.timeout)
    for r in results:
        status = "killed at the deadline" if r.returncode is None else f"exit {r.returncode}"
        print(f"--- process {r.process_id} ({status}) ---")
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
