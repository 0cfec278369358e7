"""Fixtures and helpers shared by the polyjax-sharding tests.

Tests that need several devices are ``multidevice/md_*.py``; `test_multidevice.py`
runs each of those files in a pytest process of its own with 8 host devices
(`polyjax_interpreters.multidevice` says how).
"""

import sys
from pathlib import Path

# With --import-mode=importlib no test directory is on sys.path: the facade names
# shared with the 8-device files import by name (`from _sharding_facade import pj`).
sys.path.insert(0, str(Path(__file__).parent / "multidevice"))
