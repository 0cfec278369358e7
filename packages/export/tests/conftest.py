"""Makes `_golden` (helpers shared by this package's tests) importable by name."""

import importlib.util
import pathlib
import sys

from hypothesis import settings

# Hypothesis's per-example deadline is a timing assertion: on a loaded CI machine
# it fails tests whose results are right. Examples are judged by what they compute.
settings.register_profile("polyjax", deadline=None)
settings.load_profile("polyjax")

_HERE = pathlib.Path(__file__).resolve().parent

if "_golden" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("_golden", _HERE / "_golden.py")
    _mod = importlib.util.module_from_spec(_spec)
    sys.modules["_golden"] = _mod
    _spec.loader.exec_module(_mod)
