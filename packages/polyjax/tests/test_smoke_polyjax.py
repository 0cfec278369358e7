import re
import subprocess
import sys

import polyjax


def test_version_is_a_release_number():
    assert re.fullmatch(r"\d+\.\d+\.\d+", polyjax.__version__)
    assert "__version__" in polyjax.__all__


def test_import_is_lazy():
    # A fresh interpreter: this process may have loaded the runtime already.
    code = (
        "import sys, polyjax\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('jaxlib', 'numpy', 'polyjax_core', 'polyjax_interpreters', 'polyjax_numpy')]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
