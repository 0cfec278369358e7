"""Running test checks on several host devices, from a process that has one.

A process's CPU device count is fixed when its backend starts, and a test run
(README's `pytest -n 2`) starts it with one device per worker. Checks that need
8 devices therefore run in a child process started with
``JAX_NUM_CPU_DEVICES=8``. Starting one costs seconds, so one child serves
many checks: a test file defines plain ``check_*`` functions, and one
parametrized test runs each by name in the child::

    CHECKS = check_names(globals())

    @pytest.mark.parametrize("check", CHECKS)
    def test_on_8_devices(devices8, check):  # devices8: a DeviceWorkers fixture
        devices8.run(__file__, check)

The child imports the test file (by path; ``paths`` are put on its
``sys.path`` first, e.g. for a ``conftest`` it imports) and calls the check. A
failure comes back as the child's traceback, raised in the test, so each
failing check is reported under its own name; a check that crashes the child
fails alone, and the next check starts a new child.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence

__all__ = ["DeviceWorker", "DeviceWorkers", "check_names"]

_CHILD = r"""
import importlib.util, json, os, sys, traceback
sys.path[:0] = json.loads(os.environ["POLYJAX_CHECK_PATHS"])
modules = {}
print("READY", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    try:
        module = modules.get(request["file"])
        if module is None:
            name = "checks_" + os.path.basename(request["file"])[:-3]
            spec = importlib.util.spec_from_file_location(name, request["file"])
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
            modules[request["file"]] = module
        getattr(module, request["check"])()
        reply = {"ok": True}
    except BaseException:
        reply = {"ok": False, "error": traceback.format_exc()}
    print("\x1eREPLY " + json.dumps(reply), flush=True)
"""

_REPLY = "\x1eREPLY "


class DeviceWorker:
    """A child Python process with ``n`` host CPU devices, running checks on request.

    Args:
      n: the number of CPU devices.
      paths: directories to put first on the child's ``sys.path``.
    """

    def __init__(self, n: int, paths: Sequence[str] = ()):
        env = dict(
            os.environ,
            JAX_NUM_CPU_DEVICES=str(n),
            JAX_PLATFORMS="cpu",
            POLYJAX_CHECK_PATHS=json.dumps(list(paths)),
        )
        self.n = n
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=env,
        )
        self._read_until("READY")

    def alive(self) -> bool:
        return self._proc.poll() is None

    def _read_until(self, prefix: str) -> str:
        for line in self._proc.stdout:
            if line.startswith(prefix):
                return line[len(prefix) :]
        self._stderr.seek(0)
        raise RuntimeError(
            f"the {self.n}-device worker process died:\n" + self._stderr.read()[-5000:]
        )

    def run(self, file: str, check: str) -> None:
        """Runs function ``check`` of test file ``file`` in the child.

        Raises:
          AssertionError: the check failed (the message holds its traceback).
          RuntimeError: the child died.
        """
        self._proc.stdin.write(json.dumps({"file": file, "check": check}) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._read_until(_REPLY))
        if not reply["ok"]:
            raise AssertionError(f"{check} failed on {self.n} devices:\n{reply['error']}")

    def close(self) -> None:
        if self.alive():
            self._proc.stdin.close()
            self._proc.wait(timeout=60)
        self._stderr.close()


class DeviceWorkers:
    """Starts a :class:`DeviceWorker` on first use, and a new one after one died."""

    def __init__(self, n: int, paths: Sequence[str] = ()):
        self.n = n
        self.paths = list(paths)
        self._worker: DeviceWorker | None = None

    def run(self, file: str, check: str) -> None:
        """Runs function ``check`` of test file ``file`` on ``n`` devices."""
        if self._worker is None or not self._worker.alive():
            if self._worker is not None:
                self._worker.close()
            self._worker = DeviceWorker(self.n, self.paths)
        self._worker.run(file, check)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()


def check_names(namespace: dict) -> list[str]:
    """The names of the ``check_*`` functions a module defines (not imports), sorted."""
    module = namespace.get("__name__")
    return sorted(
        k
        for k, v in namespace.items()
        if k.startswith("check_") and callable(v) and getattr(v, "__module__", None) == module
    )
