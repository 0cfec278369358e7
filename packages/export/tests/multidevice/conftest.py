"""The 8-device tests' setup (run by ../test_multidevice.py in their own process)."""

import importlib.util
import pathlib
import sys

# The inner pytest does not load ../conftest.py: load the shared helpers by path.
if "_golden" not in sys.modules:
    _spec = importlib.util.spec_from_file_location(
        "_golden", pathlib.Path(__file__).resolve().parent.parent / "_golden.py"
    )
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["_golden"] = _mod
    _spec.loader.exec_module(_mod)
