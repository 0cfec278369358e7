"""`python -m polyjax.export show FILE [--module]` and the `polyjax.export` namespace."""

import pathlib
import subprocess
import sys

import polyjax

_GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "export" / "tests" / "golden"


def test_namespace():
    assert polyjax.export.deserialize is not None
    assert polyjax.export.maximum_supported_calling_convention_version == 10
    assert "__version__" not in polyjax.export.__all__
    assert "export" in polyjax.__all__


def test_python_m_polyjax_export_show():
    proc = subprocess.run(
        [sys.executable, "-m", "polyjax.export", "show", str(_GOLDEN / "poly_batch.bin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("function f1\n")
    assert "args[0]: float32[b, 16]" in proc.stdout
