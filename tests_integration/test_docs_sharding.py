"""docs/sharding.md's examples, run on 8 host devices in a pytest process of their own.

The mechanism is polyjax-sharding's (packages/sharding/tests/_multidevice.py);
the inner tests are `multidevice/md_*.py` beside this file.
"""

import importlib.util
import pathlib
import sys

import pytest

_HERE = pathlib.Path(__file__).resolve().parent
_HELPER = _HERE.parent / "packages" / "sharding" / "tests" / "_multidevice.py"


def _multidevice():
    if "_multidevice" not in sys.modules:
        spec = importlib.util.spec_from_file_location("_multidevice", _HELPER)
        module = importlib.util.module_from_spec(spec)
        sys.modules["_multidevice"] = module
        spec.loader.exec_module(module)
    return sys.modules["_multidevice"]


_md = _multidevice()


@pytest.mark.parametrize("path", _md.md_files(_HERE / "multidevice"), ids=lambda p: p.stem)
def test_on_8_host_devices(path, pytestconfig):
    _md.run_file(path, num_devices=8, pytestconfig=pytestconfig).assert_passed()
