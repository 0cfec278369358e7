"""optax's own tests, a CI-sized subset, pass on polyjax under ``polyjax.as_jax``.

The subset (``tools/optax_suite.py --subset``: about 440 tests of optax 0.2.8's
transforms, losses, schedules, tree utilities and core pieces) runs in a fresh
process through the same tool that runs the whole suite (docs/ecosystem.md).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "optax_suite.py"


def test_optax_subset_passes():
    proc = subprocess.run(
        [sys.executable, str(TOOL), "--subset", "--causes", "10"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    counts = re.search(
        r"optax suite on polyjax: (\d+) passed, (\d+) failed, (\d+) skipped, (\d+) errors",
        proc.stdout,
    )
    assert proc.returncode == 0 and counts is not None, proc.stdout[-4000:] + proc.stderr[-4000:]
    passed, failed, skipped, errors = map(int, counts.groups())
    assert (failed, errors) == (0, 0), proc.stdout[-4000:]
    # Skips are optax's own ("Optimizer doesn't accept a learning schedule").
    assert passed >= 420 and skipped <= 10, proc.stdout[-2000:]
