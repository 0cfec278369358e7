"""chex 0.1.92 runs unmodified on polyjax under ``polyjax.as_jax`` (issue 15, point 6).

The checks are a chex test module written as a JAX user writes one
(tests_integration/data/chex_checks.py: asserts, ``chex.dataclass``,
``chex.Array``, the ``with_jit``/``without_jit``/``with_device``/
``without_device``/``with_pmap`` variants). The same file passes on JAX
0.10.2, which is how its expectations were checked. It runs in a fresh
process (the hook and the 4 host devices change the interpreter), and this
test reads absltest's summary.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

CHECKS = Path(__file__).parent / "data" / "chex_checks.py"


def test_chex_checks_pass_under_the_alias():
    proc = subprocess.run(
        [sys.executable, "-m", "polyjax.as_jax", str(CHECKS)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAX_NUM_CPU_DEVICES": "4", "JAX_PLATFORMS": "cpu"},
    )
    ran = re.search(r"^Ran (\d+) tests?", proc.stderr, re.MULTILINE)
    assert proc.returncode == 0 and ran is not None, proc.stderr[-4000:]
    assert int(ran.group(1)) >= 18, proc.stderr[-2000:]
    assert proc.stderr.rstrip().endswith("OK"), proc.stderr[-2000:]
