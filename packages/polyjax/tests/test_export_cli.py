"""`python -m polyjax.export show FILE [--module]` and the `polyjax.export` namespace."""

import pathlib

import pytest

import polyjax
from polyjax.export.__main__ import main

_GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "export" / "tests" / "golden"


def test_namespace():
    assert polyjax.export.deserialize is not None
    assert polyjax.export.maximum_supported_calling_convention_version == 10
    assert "__version__" not in polyjax.export.__all__
    assert "export" in polyjax.__all__


def test_show(capsys):
    assert main(["show", str(_GOLDEN / "poly_batch.bin")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("function f1\n")
    assert "args[0]: float32[b, 16]" in out and "@main" not in out
    assert main(["show", str(_GOLDEN / "poly_batch.bin"), "--module"]) == 0
    assert "func.func public @main" in capsys.readouterr().out


def test_show_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 40)
    assert main(["show", str(bad)]) == 1
    assert "Cannot deserialize an Exported" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "missing.bin")]) == 1
    with pytest.raises(SystemExit):
        main(["frobnicate"])
