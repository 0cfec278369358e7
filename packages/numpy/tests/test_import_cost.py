"""`import polyjax.numpy` (that is, `polyjax_numpy.numpy`: the facade is not a
dependency of this package) loads only what a first `jnp` operation needs.

SciPy (which jaxlib's LAPACK kernels use, bound at the first lowering of a
linear-algebra call) and NumPy's test and Fortran helpers cost a fresh process
most of a second: they must not be imported until needed.
"""

from __future__ import annotations

import subprocess
import sys

DEFERRED = ("scipy", "numpy.testing", "numpy.f2py", "unittest")

CHILD = f"""
import sys
import polyjax_numpy.numpy as jnp  # what `import polyjax.numpy` loads
print(jnp.ones(3) + 1)
loaded = sorted(m for m in {DEFERRED!r} if m in sys.modules)
print("loaded:", loaded)
"""


def test_import_and_first_op_load_no_scipy_or_test_helpers():
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "[2. 2. 2.]"
    assert lines[1] == "loaded: []"
